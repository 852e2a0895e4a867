"""`cryptobench import`: results files from other machines, added to the local history.

FILE [...]: each file checked and added whole (`app.core.store.importing`). A file
already stored is skipped and said so (exit 0: importing a folder twice is harmless);
a run the store holds only in part (its store failed mid-run, and kept it in
`unstored/RUN_ID.json`) is completed; a bad file or an id taken by another run is named,
the other files still imported, exit 2.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from app.cli.common import EXIT_OK, EXIT_USAGE, add_store_option, open_store
from app.cli.common import console as _console
from app.cli.terminal.console import escape
from app.cli.terminal.lines import say
from app.core.escaping import escape_control

NAME = "import"
HELP = "add results JSON files from other machines to the local history"
GUIDES = ("docs/comparing.md",)
#: What it prints is an account of the work, whose result is the store and the files it
#: writes: standard output lost to a full disk is said, and does not fail it (`app.cli.main`).
PRINTS_RESULT = False


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "files", metavar="RESULTS_JSON", nargs="+", type=Path, help="results files written by run --json or Export"
    )
    add_store_option(p, "add the runs to")


def run(args: argparse.Namespace) -> int:
    from app.core.errors import CryptoBenchError
    from app.core.store.importing import import_results

    store = open_store(args.store)
    code = EXIT_OK
    console = _console()
    with store:
        for path in args.files:
            try:
                outcome = import_results(store, path)
            except CryptoBenchError as exc:  # a bad file, an id taken, the store failing: the next file goes on
                say(f"cryptobench: error: {escape_control(str(exc))}", err=True)
                code = EXIT_USAGE
                continue
            run = outcome.run
            if outcome.completed is not None:
                console.print(
                    escape(
                        f"completed {run.id} · {run.name or 'unnamed'} · the store held {len(outcome.completed.jobs)} "
                        f"of its {len(run.jobs)} job(s), now all · machine {outcome.machine or 'not recorded'} from {path}"
                    )
                )
            elif outcome.added:
                console.print(
                    escape(
                        f"imported {run.id} · {run.name or 'unnamed'} · {len(run.jobs)} job(s) · "
                        f"machine {outcome.machine or 'not recorded'} from {path}"
                    )
                )
            else:
                console.print(
                    escape(f"{path}: already stored as {outcome.existing_id} ({outcome.duplicate}); not added again")
                )
    return code

"""`cryptobench history`: the stored runs."""

from __future__ import annotations

import argparse
import json

from app.cli.common import EXIT_OK, UsageError, add_store_option, open_store
from app.cli.common import console as _console
from app.cli.terminal.lines import say
from app.cli.terminal.lists import print_history

NAME = "history"
HELP = "list stored runs"
GUIDES = ("docs/command-line.md",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_store_option(p, "list")
    p.add_argument(
        "--json",
        action="store_true",
        help="print every stored run to stdout as a JSON array (id, name, started, finished, status, host, jobs, ok_jobs) instead of the table",
    )


def run(args: argparse.Namespace) -> int:
    from app.core.store.store import StoreError

    store = open_store(args.store)
    with store:
        try:
            runs = store.list_runs()
        except StoreError as exc:
            raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps([r.__dict__ for r in runs], indent=2, allow_nan=False))
        return EXIT_OK
    if not runs:
        say(f"no runs in {store.where}")
        return EXIT_OK
    print_history(_console(), runs, store.where)
    return EXIT_OK

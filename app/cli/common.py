"""What the command line's commands share: exit codes, the usage error, the console, the
store and the runs a command names (a stored run's id, or a results file)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from app.cli.terminal.console import make_console

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

MOVE_ASIDE_HINT = "; `cryptobench store --move-aside` renames it (nothing is deleted) so a new store can start"


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2."""


def console() -> Any:
    return make_console()


def open_store(path: Path | None) -> Any:
    from app.core.results.store import BrokenStoreError, Store, StoreError

    try:
        return Store(path)
    except BrokenStoreError as exc:
        raise UsageError(f"{exc}{MOVE_ASIDE_HINT}" + (f" (with --store {path})" if path else "")) from None
    except StoreError as exc:
        raise UsageError(str(exc)) from None


def load_run_source(text: str, store_path: Path | None) -> Any:
    """A run from a results JSON file (when `text` names one) or from the store."""
    from app.core.results.model import ResultsFileError, load_results_file
    from app.core.results.store import RunNotFound, StoreError

    path = Path(text)
    if path.suffix.lower() == ".json" or path.is_file():
        try:
            return load_results_file(path)
        except ResultsFileError as exc:
            raise UsageError(str(exc)) from None
    store = open_store(store_path)
    with store:
        try:
            run = store.load_run(text)
        except RunNotFound as exc:
            raise UsageError(f"{exc} (and no results file named {text!r})") from None
        except StoreError as exc:
            raise UsageError(str(exc)) from None
    warn_damaged(run)
    return run


def warn_damaged(run: Any) -> None:
    """Name the rows of a stored run that did not read back (a damaged job shows as a failed one)."""
    for line in run.damaged:
        print(f"cryptobench: warning: run {run.id}: damaged in the store: {line}", file=sys.stderr)

"""What the command line's commands share: exit codes, the usage error, the console, the
store and the runs a command names (a stored run's id, or a results file)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

from app.cli.terminal.console import make_console
from app.cli.terminal.lines import say

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

MOVE_ASIDE_HINT = "; `cryptobench store --move-aside` renames it (nothing is deleted) so a new store can start"


def add_store_option(p: Any, use: str) -> None:
    """`--store PATH_OR_URL`, with one help text for every command: which store, what the command
    does with it, and where the default is (`history --help` used to say only "results store")."""
    from app.core.store.paths import STORE_FILENAME

    p.add_argument(
        "--store",
        metavar="PATH_OR_URL",
        help=f"the results store to {use}: an SQLite file, or postgresql://USER@HOST/DB for a shared "
        "PostgreSQL store (its password from PGPASSWORD, ~/.pgpass or a service file; docs/shared-store.md); "
        f"default: $CRYPTOBENCH_STORE when set, else {STORE_FILENAME} in $CRYPTOBENCH_HOME when set, else in "
        "this user's data folder (`cryptobench store` prints which)",
    )


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit code 2; several problems at once
    (a profile with three bad fields) as one line each, each naming its file and field."""

    def __init__(self, message: str, *more: str) -> None:
        super().__init__(message)
        self.lines = (message, *more)


def console() -> Any:
    return make_console()


def open_store(path: str | None, *, unreachable: list[str] | None = None) -> Any:
    """The store `--store` names (None: `$CRYPTOBENCH_STORE`, else the local file); a store that
    cannot be opened is one line (a URL shown without its password). With `unreachable`, a
    PostgreSQL server that cannot be reached gives None and its line appended there (`run`
    goes on without it) instead of the usage error."""
    from app.core.store.store import BrokenStoreError, Store, StoreError, StoreUnreachable
    from app.core.store.target import store_target

    target = store_target(path)
    try:
        return Store(target)
    except StoreUnreachable as exc:
        if unreachable is None:
            raise UsageError(str(exc)) from None
        unreachable.append(str(exc))
        return None
    except BrokenStoreError as exc:
        if target.is_postgres:
            raise UsageError(str(exc)) from None
        raise UsageError(f"{exc}{MOVE_ASIDE_HINT}" + (f" (with --store {target.shown})" if path else "")) from None
    except StoreError as exc:
        raise UsageError(str(exc)) from None


def stored_movement(store_path: str | None, base_runs: Any, new_runs: Any) -> Any:
    """How much runs of the base side's jobs move on its machine, from the store's runs
    (app/core/analysis/spread.py), for a comparison of one run a side; None where no store
    can be read (none there yet, or it cannot be opened): no movement is measured then,
    and such a comparison gives ratios without a verdict."""
    from app.core.analysis.spread import store_movement
    from app.core.store.store import Store, StoreError
    from app.core.store.target import store_target

    target = store_target(store_path)
    if target.path is not None and not target.path.is_file():
        return None  # never a store created only to look for runs in it
    try:
        with Store(target, read_only=True) as store:
            return store_movement(store, base_runs, new_runs)
    except (StoreError, OSError):
        return None


def shown_argument(text: str) -> str:
    """A command-line value for a one-line message: whole, unless very long (an `A+B+...`
    of many ids, a path past the system's limit), then its start and its length."""
    return repr(text) if len(text) <= 120 else f"{text[:80]!r}... ({len(text)} characters)"


def os_error_line(exc: OSError) -> str:
    """An OSError that reached the command line's top as one line: the cause and the file."""
    from app.core.escaping import escape_control

    name = exc.filename if isinstance(exc.filename, str) else None
    where = f"{name if len(name) <= 120 else name[:80] + f'... ({len(name)} characters)'}: " if name else ""
    return escape_control(f"cryptobench: error: {where}{exc.strerror or exc}")


def path_status(text: str) -> os.stat_result | OSError | None:
    """What is at the path `text`: its stat, None when nothing is, or the OSError that
    says why it cannot be looked at (a name too long, a loop of links, a file used as a
    folder, no permission). Never raises: `Path.is_file()` raised ENAMETOOLONG, a
    traceback for any argument longer than 255 characters."""
    try:
        return os.stat(text)
    except FileNotFoundError:
        return None
    except OSError as exc:  # ENAMETOOLONG, ELOOP, ENOTDIR, EACCES, ...
        if exc.errno == errno.ENOTDIR and not _looks_like_a_path(text):
            return None
        return exc
    except ValueError:  # an embedded NUL: nothing can be there
        return None


def is_regular_file(text: str) -> bool:
    found = path_status(text)
    return isinstance(found, os.stat_result) and stat.S_ISREG(found.st_mode)


def _looks_like_a_path(text: str) -> bool:
    return "/" in text or os.sep in text or text.lower().endswith(".json")


def _names_a_file(text: str) -> bool:
    """Whether a RUN argument names a results file rather than a stored run: something is
    there (a FIFO or a device too, refused by name when read), or it looks like a path
    (a .json name, a folder in it) and the reason it cannot be looked at is for the user
    to read. A bare folder name (`compare abc`, a folder abc here) is still a run id."""
    found = path_status(text)
    if isinstance(found, os.stat_result):
        return not stat.S_ISDIR(found.st_mode) or _looks_like_a_path(text)
    if isinstance(found, OSError) and found.errno != errno.ENAMETOOLONG:
        return True  # a loop of links, no permission: something is there
    return _looks_like_a_path(text)


def load_run_source(text: str, store_path: str | None) -> Any:
    """A run from a results JSON file (when `text` names one) or from the store."""
    from app.core.results.model import ResultsFileError, load_results_file
    from app.core.store.store import RunNotFound, StoreError

    if _names_a_file(text):
        try:
            return load_results_file(Path(text))
        except ResultsFileError as exc:
            raise UsageError(str(exc)) from None
    store = open_store(store_path)
    with store:
        try:
            run = store.load_run(text)
        except RunNotFound as exc:
            if len(text) > 120:
                raise UsageError(
                    f"no run with id {shown_argument(text)} in {store.where} (and no results file of that name)"
                ) from None
            raise UsageError(f"{exc} (and no results file named {text!r})") from None
        except StoreError as exc:
            raise UsageError(str(exc)) from None
    warn_damaged(run)
    return run


def warn_damaged(run: Any) -> None:
    """Name the rows of a stored run that did not read back (a damaged job shows as a failed one)."""
    for line in run.damaged:
        say(f"cryptobench: warning: run {run.id}: damaged in the store: {line}", err=True)

"""A run its store could not keep, kept in a results file instead (docs/shared-store.md).

When the store fails mid-run (a shared server gone away, a full disk), the run goes on
in memory (`Runner.store_error`); at its end the whole run is written here, so nothing is
lost even when no export was asked for. The store usually holds the run's start and the
jobs stored before the failure: `cryptobench import FILE` (`import_command` prints it
whole, with the `--store` it needs) completes that part (`importing.look_up`), and finds
a run already there, so nothing is added twice. The window's History lists the files
still waiting here (`waiting`) and stores them in one click, removing each one stored.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from app.core.fileio import atomic_write_text
from app.core.results.model import RunResult, to_json
from app.core.store.paths import data_dir
from app.core.store.target import StoreLike, default_store, store_target

FOLDER = "unstored"


def folder() -> Path:
    """Where runs wait for their store: `$CRYPTOBENCH_HOME/unstored`, else the data folder's."""
    return data_dir() / FOLDER


def keep_unstored(run: RunResult) -> Path:
    """Write the run's results JSON to `$CRYPTOBENCH_HOME/unstored/RUN_ID.json`; its path.
    OSError when even that cannot be written (the caller says so)."""
    where = folder()
    where.mkdir(parents=True, exist_ok=True)
    path = where / f"{run.id}.json"
    atomic_write_text(path, to_json(run))
    return path


def import_command(path: Path, store: StoreLike | None) -> str:
    """The command that stores the kept run: `cryptobench import PATH`, with `--store` when
    the store is not the default one (shown without its password, which libpq then takes
    from PGPASSWORD, ~/.pgpass or a service file)."""
    words = ["cryptobench", "import", str(path)]
    if store is not None:
        target = store_target(store)
        if target != default_store():
            words += ["--store", target.shown]
    return shlex.join(words)


def waiting() -> list[Path]:
    """The runs kept here that are still to be stored, oldest first (never raises)."""
    try:
        found = [path for path in folder().glob("*.json") if path.is_file()]
    except OSError:
        return []
    return sorted(found, key=lambda path: path.name)


def forget(path: Path) -> None:
    """Remove a kept run once its store holds it (checked by the caller: imported, or found
    there already)."""
    try:
        path.unlink()
    except FileNotFoundError:
        pass

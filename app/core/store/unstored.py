"""A run its store could not keep, kept in a results file instead (docs/shared-store.md).

When the store fails mid-run (a shared server gone away, a full disk), the run goes on
in memory (`Runner.store_error`); at its end the whole run is written here, so nothing is
lost even when no export was asked for. `cryptobench import FILE --store ...` adds it to
the store once it is back: import finds runs already there, so nothing is added twice.
"""

from __future__ import annotations

from pathlib import Path

from app.core.fileio import atomic_write_text
from app.core.results.model import RunResult, to_json
from app.core.store.paths import data_dir

FOLDER = "unstored"


def keep_unstored(run: RunResult) -> Path:
    """Write the run's results JSON to `$CRYPTOBENCH_HOME/unstored/RUN_ID.json`; its path.
    OSError when even that cannot be written (the caller says so)."""
    folder = data_dir() / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{run.id}.json"
    atomic_write_text(path, to_json(run))
    return path

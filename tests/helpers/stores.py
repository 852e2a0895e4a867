"""Store files for tests of the faces' error paths: one with a run, one SQLite cannot fully read."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from app.core.store.store import Store
from tests.helpers import records

RUN_ID = "20260101-000000-aaaaaa"


def stored_run(path: Path) -> Path:
    """A store holding one finished run of one job."""
    with Store(path) as store:
        store.begin_run(records.run(RUN_ID, status="running"))
        store.add_job(RUN_ID, records.job(RUN_ID, 0, 64, scheme="sha256", params={}, label="SHA-256", family="hash"))
        store.finish_run(RUN_ID, "finished", "2026-01-01T00:00:01+00:00")
    return path


def damage_jobs_table(path: Path) -> None:
    """Overwrite the root page of the jobs table and of each of its indexes: the store still
    opens (its schema and runs are intact), but SQLite cannot read any job, nor count them
    from an index ("database disk image is malformed")."""
    db = sqlite3.connect(path)
    page_size = db.execute("PRAGMA page_size").fetchone()[0]
    roots = [row[0] for row in db.execute("SELECT rootpage FROM sqlite_master WHERE tbl_name = 'jobs' AND rootpage")]
    db.close()
    with path.open("r+b") as file:
        for root in roots:
            file.seek((root - 1) * page_size)
            file.write(b"\xff" * page_size)

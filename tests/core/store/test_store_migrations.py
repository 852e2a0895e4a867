"""Schema migrations: a store of every schema CryptoBench has shipped opens, upgrades in place
(an SQLite file is copied first) and reads back as it was written; a newer one is refused."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from app.core.results.model import to_json
from app.core.store.columns import job_identity
from app.core.store.rows import packed_job
from app.core.store.schema import SCHEMA_1
from app.core.store.store import SCHEMA_VERSION, BrokenStoreError, Store, StoreError
from tests.helpers import records

RUN = "20260101-000000-aaaaaa"


def _old_run() -> Any:
    run = records.run(RUN, status="finished", environment={"hostname": "oldbox"})
    run.finished = "2026-01-01T00:01:00+00:00"
    run.jobs = [records.job(RUN, i, 64, {"encrypt": records.metric([1e-6, 2e-6, 1.5e-6], batch=10)}) for i in range(2)]
    return run


def _write_schema_1(execute: Any) -> None:
    """Schema 1 as CryptoBench 0.1.0 and 0.2.0 wrote it, with one run of two jobs and a damaged row."""
    for statement in SCHEMA_1:
        execute(statement, ())
    execute("INSERT INTO meta(key, value) VALUES ('schema_version', '1')", ())
    run = _old_run()
    execute(
        "INSERT INTO runs(id, name, started, finished, status, pid, host, environment, profile) "
        "VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?)",
        (run.id, run.profile_view.marked_name, run.started, run.finished, run.status, "oldbox",
         json.dumps(run.environment), json.dumps(run.profile)),
    )  # fmt: skip
    for job in run.jobs:
        execute(
            "INSERT INTO jobs(id, run_id, idx, status, result) VALUES (?, ?, ?, ?, ?)",
            (job.id, RUN, job.index, job.status, json.dumps(packed_job(job))),
        )
    execute(
        "INSERT INTO jobs(id, run_id, idx, status, result) VALUES (?, ?, ?, ?, ?)",
        (f"{RUN}/2", RUN, 2, "ok", '{"id": "cut'),
    )


def _sqlite_v1(path: Path) -> Path:
    db = sqlite3.connect(path)
    _write_schema_1(db.execute)
    db.commit()
    db.close()
    return path


def _check_upgraded(store: Store) -> None:
    assert store.migrated_from == 1
    loaded = store.load_run(RUN)
    expected = _old_run()
    assert [job.to_dict() for job in loaded.jobs[:2]] == [job.to_dict() for job in expected.jobs]
    assert loaded.damaged and "job #2" in loaded.damaged[0]  # still named after the upgrade
    job = expected.jobs[0]
    trend = store.jobs_matching(job_identity(job))
    assert [(found.run_id, found.job_index) for found in trend] == [(RUN, 0), (RUN, 1)]


def test_a_schema_1_sqlite_store_upgrades_in_place_with_a_copy(tmp_path: Path) -> None:
    path = _sqlite_v1(tmp_path / "results.sqlite3")
    before = path.read_bytes()
    with Store(path) as store:
        _check_upgraded(store)
        assert store.backup == tmp_path / "results.sqlite3.schema1-backup"
        text = to_json(store.load_run(RUN))
    assert store.backup.read_bytes()[:16] == before[:16]
    copy = sqlite3.connect(store.backup)
    assert copy.execute("SELECT value FROM meta").fetchone() == ("1",)  # the copy is the old store
    assert copy.execute("SELECT count(*) FROM jobs").fetchone() == (3,)
    copy.close()
    with Store(path) as again:  # upgraded once: no second copy
        assert again.migrated_from is None and again.backup is None
        assert to_json(again.load_run(RUN)) == text
    db = sqlite3.connect(path)
    assert db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)
    db.close()


def test_a_read_only_schema_1_store_is_read_without_being_changed(tmp_path: Path) -> None:
    path = _sqlite_v1(tmp_path / "results.sqlite3")
    before = path.read_bytes()
    with Store(path, read_only=True) as store:
        _check_upgraded(store)
    assert path.read_bytes() == before
    assert list(tmp_path.iterdir()) == [path]


def test_a_newer_sqlite_store_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite3"
    with Store(path):
        pass
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    db.commit()
    db.close()
    before = path.read_bytes()
    with pytest.raises(BrokenStoreError, match=rf"newer CryptoBench \(store schema {SCHEMA_VERSION + 1}, "):
        Store(path)
    assert path.read_bytes() == before


@pytest.mark.xdist_group("postgres")
def test_a_schema_1_postgres_store_upgrades_in_one_transaction(pg_url: str) -> None:
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        _write_schema_1(lambda sql, args: conn.execute(sql.replace("?", "%s"), args))
    with Store(pg_url) as store:
        _check_upgraded(store)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        assert row == (str(SCHEMA_VERSION),)
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match=r"newer CryptoBench \(store schema 99, .* left as it is"):
        Store(pg_url)


def test_a_store_written_by_the_schema_1_app_itself_upgrades_and_reads_back(tmp_path: Path) -> None:
    """tests/golden/store-schema1.sqlite3 was written by CryptoBench's own schema-1 store code
    (the main branch of 2026-11-26, as 0.2.0 shipped it): one run of two jobs."""
    import shutil

    from tests.helpers.paths import GOLDEN

    path = tmp_path / "results.sqlite3"
    shutil.copyfile(GOLDEN / "store-schema1.sqlite3", path)
    run_id = "20250101-000000-aaaaaa"
    expected = records.run(run_id, status="finished", environment={"hostname": "oldbox"})
    expected.finished = "2026-01-01T00:01:00+00:00"
    expected.jobs = [
        records.job(run_id, i, 64, {"encrypt": records.metric([1e-6, 2e-6, 1.5e-6], batch=10)}) for i in range(2)
    ]
    with Store(path) as store:
        assert store.migrated_from == 1 and store.backup is not None
        assert to_json(store.load_run(run_id)) == to_json(expected)
        job = expected.jobs[1]
        found = store.jobs_matching(job_identity(job))
        assert [(f.run_id, f.job_index) for f in found] == [(run_id, 0), (run_id, 1)]
    copy, golden = sqlite3.connect(store.backup), sqlite3.connect(GOLDEN / "store-schema1.sqlite3")
    assert list(copy.iterdump()) == list(golden.iterdump())  # the old store, row for row
    copy.close()
    golden.close()


@pytest.mark.xdist_group("postgres")
def test_a_writer_of_rows_is_told_the_owner_must_upgrade(pg_url: str) -> None:
    import psycopg

    from tests.helpers.postgres import ADMIN

    with psycopg.connect(pg_url, autocommit=True) as conn:
        _write_schema_1(lambda sql, args: conn.execute(sql.replace("?", "%s"), args))
        conn.execute("GRANT USAGE ON SCHEMA public TO reader")
        conn.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON runs, jobs, meta TO reader")
    as_writer = pg_url.replace(f"{ADMIN}@", "reader@")
    with pytest.raises(
        StoreError,
        match=rf"must be upgraded to {SCHEMA_VERSION} once by the owner of its tables .* may only write rows",
    ):
        Store(as_writer)
    with Store(pg_url) as store:  # the owner upgrades it; then the writer writes
        assert store.migrated_from == 1
    with Store(as_writer) as store:
        assert not store.read_only and store.load_run(RUN).jobs[0].status == "ok"


# --- schema 2 -> 3: instants, briefs, identities and figures beside each row ----------------

#: tests/golden/store-schema2.sqlite3 was written by CryptoBench's own schema-2 store code (the
#: main branch of 2026-11-28): two runs of two jobs, the first stamped 10:30+02:00 (08:30 UTC),
#: the second 09:00+00:00, which schema 2 listed in the wrong order (by the text).
SCHEMA_2_RUNS = (
    ("20250101-083000-aaaaaa", "2025-01-01T10:30:00+02:00"),
    ("20250101-090000-bbbbbb", "2025-01-01T09:00:00+00:00"),
)


def _schema_2_expected() -> list[Any]:
    runs = []
    for run_id, started in SCHEMA_2_RUNS:
        run = records.run(
            run_id, status="finished", started=started, finished=started, environment={"hostname": "oldbox"}
        )
        run.jobs = [
            records.job(run_id, i, 64, {"encrypt": records.metric([1e-6, 2e-6, 1.5e-6], batch=10)}) for i in range(2)
        ]
        runs.append(run)
    return runs


def _check_schema_2_upgraded(store: Store) -> None:
    assert store.migrated_from == 2
    expected = _schema_2_expected()
    assert [r.id for r in store.list_runs()] == [SCHEMA_2_RUNS[1][0], SCHEMA_2_RUNS[0][0]]  # by the instant
    for run in expected:
        assert to_json(store.load_run(run.id)) == to_json(run)  # the times as written, byte for byte
    found = store.jobs_matching(job_identity(expected[0].jobs[1]))
    assert [(f.run_id, f.job_index, f.metrics["encrypt"].median) for f in found] == [
        (SCHEMA_2_RUNS[0][0], 0, 1.5e-6),
        (SCHEMA_2_RUNS[0][0], 1, 1.5e-6),
        (SCHEMA_2_RUNS[1][0], 0, 1.5e-6),
        (SCHEMA_2_RUNS[1][0], 1, 1.5e-6),
    ]
    assert [f.environment.get("hostname") for f in found] == ["oldbox"] * 4
    assert store.damaged_rows() == []


def test_a_store_written_by_the_schema_2_app_itself_upgrades_and_reads_back(tmp_path: Path) -> None:
    import shutil

    from tests.helpers.paths import GOLDEN

    path = tmp_path / "results.sqlite3"
    shutil.copyfile(GOLDEN / "store-schema2.sqlite3", path)
    with Store(path) as store:
        _check_schema_2_upgraded(store)
        assert store.backup == tmp_path / "results.sqlite3.schema2-backup"
    assert store.backup is not None
    copy, golden = sqlite3.connect(store.backup), sqlite3.connect(GOLDEN / "store-schema2.sqlite3")
    assert list(copy.iterdump()) == list(golden.iterdump())  # the old store, row for row
    copy.close()
    golden.close()
    db = sqlite3.connect(path)
    assert db.execute("SELECT started_at FROM runs ORDER BY id").fetchall() == [
        ("2025-01-01T08:30:00.000000Z",),
        ("2025-01-01T09:00:00.000000Z",),
    ]
    # Rebuilt with the large JSON last (what the listing and a trend read comes first).
    assert [row[1] for row in db.execute("PRAGMA table_info(runs)")][-2:] == ["environment", "profile"]
    assert [row[1] for row in db.execute("PRAGMA table_info(jobs)")][-1] == "result"
    db.close()
    with Store(path) as store, pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY"):  # still a job's run
        assert store._sqlite is not None
        store._sqlite.execute("INSERT INTO jobs(id, run_id, idx, status, result) VALUES ('x/0', 'x', 0, 'ok', '{}')")


@pytest.mark.xdist_group("postgres")
def test_a_schema_2_postgres_store_upgrades_to_utc_instants(pg_url: str) -> None:
    """The golden schema-2 rows put in a PostgreSQL database as schema 2 made it, then opened."""
    import psycopg

    from app.core.store.schema import SCHEMA_2
    from tests.helpers.paths import GOLDEN

    golden = sqlite3.connect(GOLDEN / "store-schema2.sqlite3")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for statement in SCHEMA_2:
            conn.execute(statement)
        for table in ("meta", "runs", "jobs"):
            cursor = golden.execute(f"SELECT * FROM {table}")
            columns = [d[0] for d in cursor.description]
            for row in cursor:
                conn.execute(
                    f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))})", row
                )
    golden.close()
    with Store(pg_url) as store:
        _check_schema_2_upgraded(store)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        kind = conn.execute(
            "SELECT data_type FROM information_schema.columns WHERE table_name = 'runs' AND column_name = 'started_at'"
        ).fetchone()
        assert kind == ("timestamp with time zone",)
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (str(SCHEMA_VERSION),)


def test_times_written_with_other_offsets_list_by_their_instant(tmp_path: Path) -> None:
    """An imported run stamped 10:30+02:00 (08:30 UTC) lists below a later 09:00+00:00 one."""
    with Store(tmp_path / "s.sqlite3") as store:
        for run_id, started in SCHEMA_2_RUNS:
            store.add_run(records.run(run_id, started=started, finished=started))
        assert [r.id for r in store.list_runs()] == [SCHEMA_2_RUNS[1][0], SCHEMA_2_RUNS[0][0]]

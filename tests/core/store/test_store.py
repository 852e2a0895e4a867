"""The SQLite results store: location, round trip, interrupted runs, foreign files."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.results.model import JobResult, RunResult
from app.core.store.store import AmbiguousRunId, RunNotFound, Store, StoreError, default_store_path
from tests.helpers import records
from tests.helpers.paths import ROOT


def _run(run_id: str = "20260101-000000-aaaaaa", status: str = "running") -> RunResult:
    return records.run(run_id, status=status, environment={"hostname": "testhost"})


def _job(index: int, run_id: str = "20260101-000000-aaaaaa") -> JobResult:
    samples = [1e-6, 1.1e-6, 0.9e-6, 1e-6, 1.05e-6, 0.95e-6]
    return records.job(run_id, index, 18, {"encrypt": records.metric(samples, batch=100)})


def test_default_location_follows_cryptobench_home(isolated_home: Path) -> None:
    assert default_store_path() == isolated_home / "results.sqlite3"
    with Store() as store:
        assert store.path == isolated_home / "results.sqlite3"
    assert (isolated_home / "results.sqlite3").exists()


def test_jobs_are_readable_as_soon_as_added(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    with Store(path) as writer:
        writer.begin_run(_run())
        writer.add_job("20260101-000000-aaaaaa", _job(0))
        with Store(path) as reader:  # another connection sees it before the run ends
            loaded = reader.load_run("20260101")
        assert loaded.jobs[0].to_dict() == _job(0).to_dict()
        writer.finish_run("20260101-000000-aaaaaa", "finished", "2026-01-01T00:01:00+00:00")
        summary = writer.list_runs()[0]
    assert (summary.status, summary.jobs, summary.ok_jobs, summary.host) == ("finished", 1, 1, "testhost")


def test_running_run_of_dead_process_becomes_interrupted(tmp_path: Path) -> None:
    """The run's process ends without finishing it; its PID is then "reused" by a live
    process (ours), as with a run killed as PID 1 in a container: still interrupted."""
    path = tmp_path / "s.sqlite3"
    code = (
        "import sys; from tests.core.store.test_store import _job, _run; from app.core.store.store import Store\n"
        "store = Store(sys.argv[1]); store.begin_run(_run()); store.add_job('20260101-000000-aaaaaa', _job(0))"
    )
    subprocess.run([sys.executable, "-c", code, str(path)], check=True, timeout=60, cwd=ROOT)
    db = sqlite3.connect(path)
    db.execute("UPDATE runs SET pid = ?", (os.getpid(),))
    db.commit()
    db.close()
    with Store(path) as store:
        summary = store.list_runs()[0]
        assert summary.status == "interrupted"
        assert store.load_run(summary.id).jobs[0].status == "ok"


def test_running_run_of_live_process_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    with Store(path) as store:
        store.begin_run(_run())
    with Store(path) as store:
        assert store.list_runs()[0].status == "running"


def test_prefix_lookup_and_delete(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite3") as store:
        store.begin_run(_run("20260101-000000-aaaaaa"))
        store.begin_run(_run("20260101-000000-aaaabb"))
        with pytest.raises(AmbiguousRunId, match="ambiguous"):
            store.resolve_run_id("20260101")
        with pytest.raises(RunNotFound, match="no run"):
            store.resolve_run_id("1999")
        assert store.resolve_run_id("20260101-000000-aaaab") == "20260101-000000-aaaabb"
        with pytest.raises(StoreError, match="is still running"):  # its process holds the run's lock
            store.delete_run("20260101-000000-aaaabb")
        store.finish_run("20260101-000000-aaaabb", "finished", "2026-01-01T00:01:00+00:00")
        assert store.delete_run("20260101-000000-aaaabb")
        assert [r.id for r in store.list_runs()] == ["20260101-000000-aaaaaa"]


def test_prefix_is_matched_literally_not_as_a_like_pattern(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite3") as store:
        store.begin_run(_run("20260101-000000-aaaaaa"))
        for pattern in ("%", "2026010_", "20260101-%", "_0260101"):
            with pytest.raises(RunNotFound, match="no run"):
                store.resolve_run_id(pattern)
        with pytest.raises(RunNotFound, match="no run"):
            store.resolve_run_id("20260101-000000-AAAAAA")  # ids are matched with their case
        assert store.resolve_run_id("2026") == "20260101-000000-aaaaaa"


def test_garbage_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="not a usable CryptoBench results store"):
        Store(path)
    assert path.read_bytes().startswith(b"this is not")  # left untouched


def test_foreign_sqlite_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE customers (id INTEGER)")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match=r"not a CryptoBench results store.*customers"):
        Store(path)


def test_unwritable_location_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot open the results store"):
        Store(blocker / "sub" / "s.sqlite3")


def test_wal_mode(tmp_path: Path) -> None:
    with Store(tmp_path / "s.sqlite3") as store:
        mode = store._sqlite.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    assert os.path.exists(tmp_path / "s.sqlite3")


def test_samples_and_outlier_indices_are_stored_packed_and_read_back_exactly(tmp_path: Path) -> None:
    from array import array

    samples = array("d", [1e-6 + k * 1e-12 for k in range(2000)])
    for k in (5, 700, 1999):
        samples[k] = 1e-3  # outliers, whose indices must survive the round trip
    job = _job(0)
    job.metrics["encrypt"] = records.metric(samples)
    assert job.metrics["encrypt"].stats.outlier_indices == (5, 700, 1999)
    path = tmp_path / "s.sqlite3"
    with Store(path) as store:
        store.begin_run(_run())
        store.add_job("20260101-000000-aaaaaa", job)
        loaded = store.load_run("20260101").jobs[0]
    assert loaded.to_dict() == job.to_dict()
    assert loaded.metrics["encrypt"].samples == list(samples)
    raw = sqlite3.connect(path).execute("SELECT result FROM jobs").fetchone()[0]
    stored = json.loads(raw)["metrics"]["encrypt"]
    assert "samples" not in stored and "outlier_indices" not in stored
    assert {"samples_f64", "outlier_indices_u32"} <= set(stored)


def test_a_writer_renews_its_lease_while_it_writes(tmp_path: Path) -> None:
    """The writer's heartbeat (store/liveness.py) touches its lock file, which a reader that may
    not open it reads the age of; done, the file is gone and the heartbeat stops."""
    import os

    from app.core.store import liveness, runlock

    path = tmp_path / "s.sqlite3"
    with Store(path) as store:
        store.begin_run(_run())
        lock = runlock.lock_path(path, "20260101-000000-aaaaaa")
        os.utime(lock, (1_000_000_000, 1_000_000_000))  # as if not touched for years
        liveness.renew_all()  # what the heartbeat thread does every HEARTBEAT_SECONDS
        age = runlock.age(path, "20260101-000000-aaaaaa")
        assert age is not None and age < liveness.LEASE_SECONDS
        store.finish_run("20260101-000000-aaaaaa", "finished", "2026-01-01T00:01:00+00:00")
    assert not lock.exists() and (path, "20260101-000000-aaaaaa") not in liveness._sqlite


def test_identities_kept_before_jobs_named_their_exchange_still_find_them(tmp_path: Path) -> None:
    """A store kept each job's identity without an exchange part: a job of its family's
    earlier pattern (a key agreement per session, a hybrid per message) keys as it did, so
    its row is found and not read as damaged; the other pattern is another identity."""
    from app.core.store.columns import job_identity

    def kem(index: int, scheme: str, family: str, exchange: str | None) -> JobResult:
        return records.job("20260101-000000-aaaaaa", index, scheme=scheme, family=family, exchange=exchange)

    jobs = [kem(0, "x25519", "key-agreement", None), kem(1, "x25519", "key-agreement", "session")]
    jobs += [kem(2, "x25519", "key-agreement", "per-message"), kem(3, "ml-kem", "hybrid", None)]
    jobs += [kem(4, "ml-kem", "hybrid", "per-message"), kem(5, "ml-kem", "hybrid", "session")]

    def before(job: JobResult) -> str:  # the identity as a store wrote it before exchange
        return json.dumps(
            [job.scheme, job.backend, json.dumps(job.params, sort_keys=True), job.mode, 1024, None, None],
            separators=(",", ":"),
        )

    path = tmp_path / "s.sqlite3"
    with Store(path) as store:
        store.begin_run(records.run("20260101-000000-aaaaaa", []))
        for job in jobs:
            store.add_job("20260101-000000-aaaaaa", job)
    with sqlite3.connect(path) as db:  # the rows of jobs 0 and 3 as that store kept them
        db.executemany("UPDATE jobs SET identity = ? WHERE id = ?", [(before(jobs[i]), jobs[i].id) for i in (0, 3)])
    with Store(path) as store:
        assert store.damaged_rows() == []
        assert [row.job_index for row in store.jobs_matching(before(jobs[0]))] == [0, 1]
        assert [row.job_index for row in store.jobs_matching(before(jobs[3]))] == [3, 4]
        assert [row.job_index for row in store.jobs_matching(job_identity(jobs[2]))] == [2]
        assert [row.job_index for row in store.jobs_matching(job_identity(jobs[5]))] == [5]
    assert job_identity(jobs[2]).endswith(',"per-message"]') and job_identity(jobs[5]).endswith(',"session"]')

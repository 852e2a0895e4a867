"""The store on a real PostgreSQL server (tests/helpers/postgres.py): the same behaviour as SQLite."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.results.model import JobResult, RunResult
from app.core.store.columns import job_identity
from app.core.store.store import Store
from tests.helpers import records

pytestmark = pytest.mark.xdist_group("postgres")

RUN = "20260101-000000-aaaaaa"


def _run(run_id: str = RUN, status: str = "running") -> RunResult:
    return records.run(run_id, status=status, environment={"hostname": "testhost"})


def _job(index: int, run_id: str = RUN) -> JobResult:
    samples = [1e-6, 1.1e-6, 0.9e-6, 1e-6, 1.05e-6, 0.95e-6]
    return records.job(run_id, index, 18, {"encrypt": records.metric(samples, batch=100)})


def test_round_trip_on_postgres(pg_url: str) -> None:
    with Store(pg_url) as writer:
        assert not writer.read_only
        writer.begin_run(_run())
        writer.add_job(RUN, _job(0))
        with Store(pg_url) as reader:
            assert reader.list_runs()[0].status == "running"  # its lock is held
            loaded = reader.load_run("20260101")
        assert loaded.jobs[0].to_dict() == _job(0).to_dict()
        writer.finish_run(RUN, "finished", "2026-01-01T00:01:00+00:00")
        summary = writer.list_runs()[0]
        assert (summary.status, summary.jobs, summary.ok_jobs, summary.host) == ("finished", 1, 1, "testhost")
        job = _job(0)
        found = writer.jobs_matching(job_identity(job))
        assert [(f.run_id, f.job_index) for f in found] == [(RUN, 0)]
        assert writer.security is not None and "sslmode" in writer.security


def test_same_results_json_as_sqlite(pg_url: str, tmp_path: Path) -> None:
    """The same run written to both stores reads back as byte-identical results JSON."""
    from app.core.results.model import to_json

    texts = []
    for where in (tmp_path / "s.sqlite3", pg_url):
        with Store(where) as store:
            store.begin_run(_run())
            for index in range(3):
                store.add_job(RUN, _job(index))
            store.finish_run(RUN, "finished", "2026-01-01T00:01:00+00:00")
            texts.append(to_json(store.load_run(RUN)))
    assert texts[0] == texts[1]
    assert '"samples"' in texts[0]


_WRITER = """
import sys
from app.core.store.store import Store
from app.core.run.runner import new_run_id
from tests.core.store.test_store_postgres import _job, _run

store = Store(sys.argv[1])
for _ in range(int(sys.argv[2])):
    run_id = new_run_id()
    store.begin_run(_run(run_id))
    store.add_job(run_id, _job(0, run_id))
    store.add_job(run_id, _job(1, run_id))
    store.finish_run(run_id, "finished", "2026-01-01T00:01:00+00:00")
store.close()
"""


def test_two_processes_writing_20_runs_each_at_once_lose_nothing(pg_url: str) -> None:
    import subprocess
    import sys

    from tests.helpers.paths import ROOT

    with Store(pg_url):  # the schema first, so both writers race on runs, not on creating tables
        pass
    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, pg_url, "20"], cwd=ROOT, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
    with Store(pg_url) as store:
        runs = store.list_runs()
        assert len(runs) == 40 and len({run.id for run in runs}) == 40
        assert all((run.status, run.jobs, run.ok_jobs) == ("finished", 2, 2) for run in runs)
        assert store.damaged_rows() == []


def test_two_processes_creating_a_new_shared_store_at_once_both_succeed(pg_url: str) -> None:
    import subprocess
    import sys

    from tests.helpers.paths import ROOT

    writers = [
        subprocess.Popen([sys.executable, "-c", _WRITER, pg_url, "2"], cwd=ROOT, stderr=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
    with Store(pg_url) as store:
        assert len(store.list_runs()) == 4


_KILLED = """
import sys
from sqlalchemy import text
from app.core.store.store import Store
from tests.core.store.test_store_postgres import RUN, _job, _run

store = Store(sys.argv[1])
store.begin_run(_run())
store.add_job(RUN, _job(0))
with store._write("storing a job") as db:  # killed inside this transaction
    row = store._job_row(RUN, _job(1))
    db.execute(text(store._INSERT_JOB), row)
    print("in the transaction", flush=True)
    sys.stdin.readline()  # never answered: the test kills this process here
"""


def test_a_writer_killed_mid_transaction_leaves_no_half_run(pg_url: str) -> None:
    import signal
    import subprocess
    import sys
    import time

    from tests.helpers.paths import ROOT

    writer = subprocess.Popen(
        [sys.executable, "-c", _KILLED, pg_url], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout is not None
        assert writer.stdout.readline() == "in the transaction\n"
        with Store(pg_url) as store:  # alive: its run is still being written, job 1 not yet visible
            assert [(r.status, r.jobs) for r in store.list_runs()] == [("running", 1)]
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)
    # The server ends the dead writer's sessions (rolling back job 1, dropping the run's lock)
    # once it reads the closed socket: bounded, not a fixed sleep.
    deadline = time.monotonic() + 20
    while True:
        with Store(pg_url) as store:
            summary = store.list_runs()[0]
            if summary.status != "running" or time.monotonic() > deadline:
                break
    assert (summary.status, summary.jobs) == ("interrupted", 1)
    with Store(pg_url) as store:
        loaded = store.load_run(RUN)
    assert [job.index for job in loaded.jobs] == [0] and loaded.damaged == []


def test_a_damaged_row_is_found_and_named_as_in_sqlite(pg_url: str, tmp_path: Path) -> None:
    from sqlalchemy import text

    found = []
    for where in (tmp_path / "s.sqlite3", pg_url):
        with Store(where) as store:
            store.begin_run(_run())
            for index in range(3):
                store.add_job(RUN, _job(index))
            store.finish_run(RUN, "finished", "2026-01-01T00:01:00+00:00")
            with store._write("damaging") as db:  # cut one job's JSON, edit another's type
                db.execute(text("UPDATE jobs SET result = substr(result, 1, 120) WHERE idx = 1"))
                db.execute(text('UPDATE jobs SET result = replace(result, \'"n": 6\', \'"n": "6"\') WHERE idx = 2'))
            loaded = store.load_run(RUN)
            found.append((store.damaged_rows(), loaded.damaged, [job.status for job in loaded.jobs]))
    assert found[0] == found[1]
    rows, damaged, statuses = found[1]
    assert len(damaged) == 2 and damaged[0].startswith("job #1")
    assert len(rows) == 2 and "job #1" in rows[0] and "cut short" in rows[0] and "job #2" in rows[1]
    assert statuses == ["ok", "failed", "failed"]


def test_the_live_path_keeps_its_connections(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run written as the window writes it (a store opened for the run, and for each job)
    logs in a handful of times in all, not once per write: a login cost the live path 19 runs a second."""
    from app.core.store import backends, liveness

    with Store(pg_url):  # the schema first
        pass
    backends.dispose_engines()
    liveness.close_idle()
    made: list[str] = []
    real = backends._psycopg_connect
    monkeypatch.setattr(backends, "_psycopg_connect", lambda url: made.append(url) or real(url))
    for r in range(5):
        run_id = f"20260101-00000{r}-aaaaaa"
        with Store(pg_url) as store:
            store.begin_run(_run(run_id))
            for i in range(3):
                with Store(pg_url) as writer:  # a job worker's own store (app/gui/run_controller.py)
                    writer.add_job(run_id, _job(i, run_id))
            store.finish_run(run_id, "finished", "2026-01-01T00:01:00+00:00")
    assert 1 < len(made) <= backends.POOL_SIZE + 1  # the pool's, and one for the runs' locks
    with Store(pg_url) as store:
        assert [(r.status, r.jobs) for r in store.list_runs()] == [("finished", 3)] * 5


def test_times_list_by_their_instant_on_postgres(pg_url: str) -> None:
    with Store(pg_url) as store:
        store.add_run(records.run("20250101-083000-aaaaaa", started="2025-01-01T10:30:00+02:00"))
        store.add_run(records.run("20250101-090000-bbbbbb", started="2025-01-01T09:00:00+00:00"))
        store.add_run(records.run("20250101-080000-cccccc", started="2025-01-01T03:00:00-05:00"))  # 08:00 UTC
        assert [r.id for r in store.list_runs()] == [
            "20250101-090000-bbbbbb",
            "20250101-083000-aaaaaa",
            "20250101-080000-cccccc",
        ]
        assert [r.started for r in store.list_runs()][1] == "2025-01-01T10:30:00+02:00"  # as written

"""The store on a real PostgreSQL server (tests/helpers/postgres.py): the same behaviour as SQLite."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.results.model import JobResult, RunResult
from app.core.results.store import Store
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
        found = writer.jobs_like(job.scheme, job.backend, job.mode, job.message_size)
        assert [(f.run_id, f.job.index) for f in found] == [(RUN, 0)]
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

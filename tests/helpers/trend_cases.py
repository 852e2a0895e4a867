"""A small stored history for the trend tests (tests/core/analysis/test_trend.py, tests/gui/history/test_trend_view.py):
one AES-128-GCM job over five runs on two machines, with a cryptography/OpenSSL upgrade
between the second and third run and a failed job in the last; known medians."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from app.core.analysis.compare import MatchKey, match_key
from app.core.results.model import JobResult, RunResult
from app.core.store.store import Store
from tests.helpers import records

#: (run id, started, host, cryptography version, OpenSSL text, encrypt median or None for a failed job)
RUNS: list[tuple[str, str, str, str, str, float | None]] = [
    ("20260101-100000-aaaaaa", "2026-01-01T10:00:00+00:00", "alpha", "41.0.7", "OpenSSL 3.0.13 30 Jan 2024", 10e-6),
    ("20260102-100000-bbbbbb", "2026-01-02T10:00:00+00:00", "alpha", "41.0.7", "OpenSSL 3.0.13 30 Jan 2024", 11e-6),
    ("20260103-100000-cccccc", "2026-01-03T10:00:00+00:00", "alpha", "42.0.1", "OpenSSL 3.2.1 30 Jan 2024", 13e-6),
    ("20260104-100000-dddddd", "2026-01-04T10:00:00+00:00", "beta", "42.0.1", "OpenSSL 3.2.1 30 Jan 2024", 7e-6),
    ("20260105-100000-eeeeee", "2026-01-05T10:00:00+00:00", "beta", "42.0.1", "OpenSSL 3.2.1 30 Jan 2024", None),
]
#: The medians drawn, in time order (the failed job of the last run gives no point).
MEDIANS = [10e-6, 11e-6, 13e-6, 7e-6]


def samples(median: float, n: int = 31) -> list[float]:
    """n (odd) values spread ±1 % symmetrically around `median`: their median is `median`."""
    half = n // 2
    return [median * (1 + 0.01 * (k - half) / half) for k in range(n)]


def job(run_id: str, index: int, median: float | None, **fields: Any) -> JobResult:
    """AES-128-GCM at 1 KiB, its encrypt samples around `median`; failed ("boom") without one."""
    if median is None:
        return records.job(run_id, index, status="failed", error="boom", **fields)
    return records.job(run_id, index, metrics={"encrypt": samples(median)}, **fields)


def environment(host: str, cryptography: str, openssl: str) -> dict[str, Any]:
    return {
        "hostname": host,
        "cpu": {"model": f"CPU of {host}"},
        "python": {"version": "3.11.7"},
        "libraries": {
            "cryptography": {"version": cryptography, "openssl": openssl},
            "pycryptodome": {"version": "3.20.0"},
        },
    }


def write(path: Path, run: RunResult) -> None:
    with Store(path) as store:
        store.begin_run(run)
        for each in run.jobs:
            store.add_job(run.id, each)
        store.finish_run(run.id, "finished", run.started)


def build(path: Path) -> MatchKey:
    """Write the history to the store at `path` (newest run first, so order comes from the
    start times) and return the followed job's key. Each run also has the job with another
    key size and a pycryptodome one, which must not join the trend."""
    with Store(path) as store:  # whole runs, one transaction each: the tests' store in ~20 ms
        for run_id, started, host, cryptography, openssl, median in reversed(RUNS):
            jobs = [
                job(run_id, 0, median),
                job(run_id, 1, 20e-6, params={"key_bits": 256}),
                job(run_id, 2, 30e-6, backend="pycryptodome"),
            ]
            env = environment(host, cryptography, openssl)
            store.add_run(records.run(run_id, jobs, started=started, finished=started, environment=env, name="trend"))
    return match_key(job(RUNS[0][0], 0, 1.0))

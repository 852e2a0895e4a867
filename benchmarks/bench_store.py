"""The results store on SQLite and on PostgreSQL: runs written per second, and a job's trend
over 200 runs (what the window's Trend waits for).

Writes: WRITE_RUNS runs (default 50) of 10 jobs, two metrics of 1,000 samples a job, as the
runner writes them: `begin_run`, then each job in its own transaction, then `finish_run`.
Trend: a store of 200 runs of 40 jobs (100 samples a metric, two machines), then
`trend.job_trend` for one job, best and median of five.

SQLite: a file in a temporary folder (WAL, synchronous=NORMAL: a commit is not fsynced).
PostgreSQL: `--pg URL` (an empty database), else a throwaway server started for the run in a
temporary folder (tests/helpers/postgres.py) with PostgreSQL's default durability
(synchronous_commit=on: each commit waits for its WAL flush), and again with
synchronous_commit=off, the setting closest to SQLite's.

Run: .venv/bin/python benchmarks/bench_store.py [--pg URL] [--write-runs N] [--trend-runs N]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_trend import _job

from app.core.analysis.compare import match_key
from app.core.analysis.trend import job_trend
from app.core.results.model import RunResult
from app.core.store.store import Store
from app.core.store.target import StoreLike


def _run(run_id: str, r: int) -> RunResult:
    return RunResult(
        id=run_id,
        started=f"2026-{1 + r // 28 % 12:02d}-{1 + r % 28:02d}T10:00:00+00:00",
        status="running",
        environment={"hostname": "alpha" if r % 2 else "beta"},
        profile={"name": "bench", "jobs": []},
    )


def write_rate(where: StoreLike, runs: int, jobs: int = 10, samples: int = 1000) -> float:
    """Runs written per second, each job its own transaction (as the runner writes them)."""
    rng = random.Random(2)
    made = [[_job(f"w{r:06d}", i, samples, rng) for i in range(jobs)] for r in range(runs)]
    with Store(where) as store:
        began = time.perf_counter()
        for r, run_jobs in enumerate(made):
            run_id = f"w{r:06d}"
            store.begin_run(_run(run_id, r))
            for job in run_jobs:
                store.add_job(run_id, job)
            store.finish_run(run_id, "finished", "2026-01-01T10:00:00+00:00")
        return runs / (time.perf_counter() - began)


def build_trend(where: StoreLike, runs: int, jobs: int = 40, samples: int = 100) -> None:
    rng = random.Random(1)
    with Store(where) as store:
        for r in range(runs):
            run = _run(f"t{r:06d}", r)
            run.jobs = [_job(run.id, i, samples, rng) for i in range(jobs)]
            run.status = "finished"
            store.add_run(run)


def best_median(action: Callable[[], object], times: int = 5) -> tuple[float, float]:
    seconds = []
    for _ in range(times):
        began = time.perf_counter()
        action()
        seconds.append(time.perf_counter() - began)
    return min(seconds), statistics.median(seconds)


def trend_time(where: StoreLike) -> tuple[float, float, int]:
    """What the Trend dialog does when a job is picked: open the store, pick the job's rows, points."""
    key = match_key(_job("x", 1, 1, random.Random(0)))
    points: list[object] = []

    def trend() -> None:
        with Store(where) as store:
            points[:] = job_trend(store, key, "encrypt")

    best, median = best_median(trend)
    return best, median, len(points)


def measure(name: str, make: Callable[[str], StoreLike], write_runs: int, trend_runs: int) -> None:
    rate = write_rate(make("write"), write_runs)
    trend = make("trend")
    build_trend(trend, trend_runs)
    best, median, points = trend_time(trend)
    print(f"| {name} | {rate:.1f} | {best * 1000:.0f} ms, {median * 1000:.0f} ms ({points} points) |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pg", help="an empty PostgreSQL database to use instead of a throwaway server")
    parser.add_argument("--write-runs", type=int, default=50)
    parser.add_argument("--trend-runs", type=int, default=200)
    args = parser.parse_args()
    print("| store | runs written a second (10 jobs each) | 200-run trend of one job: best, median |")
    print("|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        measure("SQLite (WAL)", lambda what: Path(folder) / f"{what}.sqlite3", args.write_runs, args.trend_runs)
    if args.pg:
        measure("PostgreSQL (--pg)", lambda what: args.pg, args.write_runs, args.trend_runs)
        return
    from tests.helpers.postgres import find_problem, start_cluster

    problem = find_problem()
    if problem:
        print(f"PostgreSQL skipped: {problem}")
        return
    cluster = start_cluster(durable=True)
    try:
        with cluster.admin() as conn:
            print(f"(PostgreSQL {conn.info.server_version // 10000}.{conn.info.server_version % 10000})")
        measure("PostgreSQL, unix socket, default durability", cluster.new_database, args.write_runs, args.trend_runs)
        with cluster.admin() as conn:
            conn.execute("ALTER SYSTEM SET synchronous_commit = off")
            conn.execute("SELECT pg_reload_conf()")
        measure("PostgreSQL, unix socket, synchronous_commit=off", lambda what: cluster.new_database(what + "2"),
                args.write_runs, args.trend_runs)  # fmt: skip
    finally:
        cluster.stop()


if __name__ == "__main__":
    main()

"""A job's trend over a store of 200 runs: how long does the window wait for it?

Builds a store in a temporary folder: RUNS runs (default 200) of JOBS jobs each (default
40: one scheme, two backends, 20 message sizes), each job with two metrics of SAMPLES
samples (default 1,000), two machines alternating and a cryptography upgrade half way.
Then times, best and median of five, `trend.job_trend` for one job (what the Trend
dialog does when a job is picked: open the store, `Store.jobs_like`, decode the matched
rows, compute the points) against loading every run with `Store.load_run` (what reading
the history without the SQL filter would cost).

Run: .venv/bin/python benchmarks/bench_trend.py [--runs N] [--jobs N] [--samples N]
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

from app.core.analysis.compare import match_key
from app.core.analysis.trend import job_trend
from app.core.results.model import JobResult, MetricResult, RunResult
from app.core.statistics.stats import summarize
from app.core.store.store import Store


def _job(run_id: str, index: int, samples: int, rng: random.Random) -> JobResult:
    metrics = {}
    for name in ("encrypt", "decrypt"):
        values = [1e-5 * (1 + 0.05 * rng.random()) for _ in range(samples)]
        metrics[name] = MetricResult(summarize(values), values)
    return JobResult(
        id=f"{run_id}/{index}",
        index=index,
        scheme="aes-gcm",
        backend="cryptography" if index % 2 else "pycryptodome",
        params={"key_bits": 128},
        label="AES-128-GCM",
        family="aead",
        mode="operations",
        message_size=64 << (index // 2),
        status="ok",
        metrics=metrics,
    )


def build(path: Path, runs: int, jobs: int, samples: int) -> JobResult:
    rng = random.Random(1)
    with Store(path) as store:
        for r in range(runs):
            run_id = f"2026{1 + r // 28:02d}{1 + r % 28:02d}-100000-{r:06x}"
            environment = {
                "hostname": "alpha" if r % 2 else "beta",
                "libraries": {
                    "cryptography": {
                        "version": "41.0.7" if r < runs // 2 else "42.0.1",
                        "openssl": "OpenSSL 3.0.13 30 Jan 2024",
                    }
                },
            }
            run = RunResult(
                id=run_id,
                started=f"2026-{1 + r // 28:02d}-{1 + r % 28:02d}T10:00:00+00:00",
                status="running",
                environment=environment,
                profile={"name": "bench", "jobs": []},
            )
            store.begin_run(run)
            for index in range(jobs):
                store.add_job(run_id, _job(run_id, index, samples, rng))
            store.finish_run(run_id, "finished", run.started)
    return _job("x", 1, 1, rng)  # the followed job: cryptography, 64 B


def _time(fn: Callable[[], object]) -> tuple[float, float]:
    times = []
    for _ in range(5):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=40)
    parser.add_argument("--samples", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "results.sqlite3"
        start = time.perf_counter()
        followed = build(path, args.runs, args.jobs, args.samples)
        size = sum(f.stat().st_size for f in Path(folder).iterdir()) / (1 << 20)
        print(
            f"store: {args.runs} runs x {args.jobs} jobs x 2 metrics x {args.samples} samples, "
            f"{size:.0f} MiB, built in {time.perf_counter() - start:.1f} s"
        )
        key = match_key(followed)
        points: list[object] = []

        def trend() -> None:
            with Store(path) as store:
                points[:] = job_trend(store, key, "encrypt")

        def load_all() -> None:
            with Store(path) as store:
                for run in store.list_runs():
                    store.load_run(run.id)

        best, median = _time(trend)
        print(
            f"job_trend (open, jobs_like, points): best {best * 1e3:.0f} ms, median {median * 1e3:.0f} ms, "
            f"{len(points)} points"
        )
        best, median = _time(load_all)
        print(f"load_run of every run: best {best * 1e3:.0f} ms, median {median * 1e3:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

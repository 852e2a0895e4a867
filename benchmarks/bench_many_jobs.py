"""1,000 profile jobs, one process each: does anything grow with the number of jobs?

tests/reliability/test_load.py checks 1,000 results from 100 processes inside
`make test`; this runs the literal case, 1,000 single-size profile jobs and so 1,000
spawned worker processes, which takes minutes (a tiny job's process spends ~0.25 s
starting the interpreter and importing the crypto libraries). It prints the
supervising process's open file descriptors, threads, live children and RSS every
100 jobs, and the per-job wall time.

Run: .venv/bin/python benchmarks/bench_many_jobs.py [--jobs N]
Pass: descriptors, threads and children equal after job 100 and after the last one;
RSS within 10 % between them.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil

from app.core.contracts.events import JobFinished
from app.core.processes.jobstart import job_processes
from app.core.profile.files import parse_profile
from app.core.run.runner import Runner
from app.core.store.store import Store
from app.core.vocab import JobStatus


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=1000)
    args = parser.parse_args()
    me = psutil.Process()
    readings: dict[int, tuple[int, int, int, float]] = {}
    started = time.perf_counter()

    def on_event(event: Any) -> None:
        if isinstance(event, JobFinished):
            children = job_processes(me)  # not the resource tracker or the fork server
            readings[event.job_index] = (
                me.num_fds(),
                threading.active_count(),
                len(children),
                me.memory_info().rss / 2**20,
            )
            if (event.job_index + 1) % 100 == 0:
                fds, threads, kids, rss = readings[event.job_index]
                print(
                    f"job {event.job_index + 1:5d}: {fds} fds, {threads} threads, {kids} children, "
                    f"{rss:.1f} MiB RSS, {time.perf_counter() - started:.0f} s",
                    flush=True,
                )

    jobs = [
        {"scheme": "sha256", "message_sizes": [1 + k], "samples": 3, "warmup": 0, "tamper": 1} for k in range(args.jobs)
    ]
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "r.sqlite3") as store:
        run = Runner(parse_profile({"name": "many", "jobs": jobs}), store=store, on_event=on_event).run()
    elapsed = time.perf_counter() - started
    ok = sum(job.status == JobStatus.OK for job in run.jobs)
    ref, last = readings[min(99, args.jobs - 1)], readings[args.jobs - 1]
    growth = (last[3] - ref[3]) / ref[3]
    print(
        f"{ok}/{len(run.jobs)} ok in {elapsed:.0f} s ({elapsed / args.jobs * 1000:.0f} ms a job); "
        f"from job 100 to the last: fds {ref[0]} -> {last[0]}, threads {ref[1]} -> {last[1]}, "
        f"children {ref[2]} -> {last[2]}, RSS {ref[3]:.1f} -> {last[3]:.1f} MiB ({growth:+.1%})"
    )
    passed = ok == len(run.jobs) and last[0] <= ref[0] and last[1] <= ref[1] and last[2] == 0 and growth < 0.10
    print("PASS" if passed else "FAIL")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())

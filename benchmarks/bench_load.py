"""Soak runs kept out of `make test`: the literal sizes behind RELIABILITY.md's load rows.

tests/reliability/test_load.py runs the same checks at a size that finds a leak in
seconds (200 results from 20 processes, 20,000 messages). This runs them at the sizes
the reliability table quotes, which take minutes:

  leak     1,000 results from 100 worker processes: descriptors, threads and children
           back to their level after every job; RSS growth per job (retained results
           only, ~6 KiB a job)
  session  one loopback job of 100,000 messages: every message validated, statistics over
           all of them, the supervisor's memory growth and each process's peak RSS

Run: .venv/bin/python benchmarks/bench_load.py [leak|session|all] [--processes N] [--messages N]
Exit 1 when a check fails (the same bounds as the tests, scaled to the size).
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
from app.core.vocab import JobStatus, Mode, Role

MIB = 2**20
SIZES_PER_PROCESS = 10


def _own_children(me: psutil.Process) -> list[psutil.Process]:
    return job_processes(me)  # not the resource tracker or the fork server


def leak(processes: int) -> list[str]:
    """Consecutive jobs: nothing but the results may grow."""
    total = processes * SIZES_PER_PROCESS
    jobs = [
        {
            "scheme": "sha256",
            "message_sizes": [1 + SIZES_PER_PROCESS * k + i for i in range(SIZES_PER_PROCESS)],
            "samples": 3,
            "warmup": 0,
            "tamper": 1,
        }
        for k in range(processes)
    ]
    me = psutil.Process()
    readings: dict[int, tuple[int, int, int, int]] = {}

    def on_event(event: Any) -> None:
        if isinstance(event, JobFinished):
            readings[event.job_index] = (
                me.num_fds(),
                threading.active_count(),
                len(_own_children(me)),
                me.memory_info().rss,
            )

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "r.sqlite3") as store:
        run = Runner(parse_profile({"name": "leak", "jobs": jobs}), store=store, on_event=on_event).run()
        stored = len(store.load_run(run.id).jobs)
    elapsed = time.perf_counter() - started
    reference, last = min(100, total - 1), total - 1
    fds0, threads0, _, rss0 = readings[reference]
    per_job = (readings[last][3] - rss0) / max(1, last - reference)
    print(
        f"leak: {total} results from {processes} processes in {elapsed:.0f} s; "
        f"fds {fds0} -> {readings[last][0]}, threads {threads0} -> {readings[last][1]}, "
        f"RSS {rss0 / MIB:.1f} -> {readings[last][3] / MIB:.1f} MiB ({per_job / 1024:.1f} KiB a job)"
    )
    failures = []
    if len(run.jobs) != total or {job.status for job in run.jobs} != {JobStatus.OK} or stored != total:
        failures.append(f"leak: {sum(j.status == JobStatus.OK for j in run.jobs)}/{total} ok, {stored} stored")
    if max(r[0] for r in readings.values()) > fds0 + 2 or readings[last][0] > fds0:
        failures.append("leak: file descriptors grow with jobs")
    if max(r[1] for i, r in readings.items() if i >= reference) > threads0:
        failures.append("leak: threads grow with jobs")
    if max(r[2] for r in readings.values()) != 0:
        failures.append("leak: a job's processes outlived it")
    if per_job >= 16 * 1024:
        failures.append(f"leak: RSS grew {per_job / 1024:.1f} KiB a job")
    return failures


def session(messages: int) -> list[str]:
    """One loopback job of many messages: all validated, memory flat."""
    me = psutil.Process()
    before = me.memory_info().rss
    profile = parse_profile(
        {
            "name": "long",
            "jobs": [
                {
                    "scheme": "x25519",
                    "mode": Mode.LOOPBACK,
                    "message_sizes": [64],
                    "samples": messages,
                    "warmup": 0,
                    "tamper": 1,
                }
            ],
        }
    )
    started = time.perf_counter()
    (job,) = Runner(profile).run().jobs
    elapsed = time.perf_counter() - started
    growth = me.memory_info().rss - before
    if job.status != JobStatus.OK:
        return [f"session: {job.status}: {job.error}"]
    peaks = job.memory.rss_peak_bytes
    print(
        f"session: {messages} messages in {elapsed:.0f} s; supervisor grew {growth / MIB:.1f} MiB; "
        f"peak RSS sender {peaks[Role.SENDER] / MIB:.0f} MiB, receiver {peaks[Role.RECEIVER] / MIB:.0f} MiB"
    )
    failures = []
    if any(job.metrics[name].stats.n != messages for name in ("compute", "rtt", "receiver", "network")):
        failures.append("session: a metric lost samples")
    if job.validation.failed or job.validation.checked < messages:
        failures.append(f"session: validation {job.validation}")
    if growth >= 64 * MIB:
        failures.append(f"session: the supervisor grew {growth / MIB:.0f} MiB")
    if max(peaks[Role.SENDER], peaks[Role.RECEIVER]) >= 200 * MIB:
        failures.append("session: a process peaked above 200 MiB")
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("which", nargs="?", choices=("leak", "session", "all"), default="all")
    parser.add_argument("--processes", type=int, default=100)
    parser.add_argument("--messages", type=int, default=100_000)
    args = parser.parse_args()
    failures = []
    if args.which in ("leak", "all"):
        failures += leak(args.processes)
    if args.which in ("session", "all"):
        failures += session(args.messages)
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""Load held: 1,000 consecutive jobs without leaking descriptors, threads, processes or
memory; a 100,000-message loopback job; 128 MiB loopback messages within the documented
memory bound; four parallel workers on a small machine, recorded as such."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import psutil
import pytest

from app.core.events import JobFinished
from app.core.profile import parse_profile
from app.core.runner import Runner
from app.core.stats import WarningCode
from app.core.store import Store

MIB = 2**20


def _own_children() -> list[psutil.Process]:
    return [p for p in psutil.Process().children(recursive=True)
            if not any("resource_tracker" in part for part in p.cmdline())]


@pytest.mark.slow
def test_a_thousand_consecutive_jobs_leak_nothing(tmp_path: Path) -> None:
    """Descriptors, threads and child processes are back to their level after every job,
    and the memory of the process running them stays flat: the results themselves (three
    samples a job) are the only growth allowed.

    A job is one result (scheme x message size), as the app counts them ("1000/1000 jobs
    ok"): 100 profile jobs of 10 sizes each, so 100 worker processes are spawned and
    reaped. 1,000 single-size profile jobs would take 4-5 minutes here, nearly all of it
    interpreter start-up; benchmarks/bench_many_jobs.py runs that on demand and its
    figures are in RELIABILITY.md."""
    jobs = [{"scheme": "sha256", "message_sizes": [1 + 10 * k + i for i in range(10)], "samples": 3,
             "warmup": 0, "tamper": 1} for k in range(100)]
    me = psutil.Process()
    readings: dict[int, tuple[int, int, int, int]] = {}

    def on_event(event: Any) -> None:
        if isinstance(event, JobFinished):
            # After the job's processes were reaped and its result stored.
            readings[event.job_index] = (me.num_fds(), threading.active_count(), len(_own_children()),
                                         me.memory_info().rss)

    with Store(tmp_path / "r.sqlite3") as store:
        run = Runner(parse_profile({"name": "thousand", "jobs": jobs}), store=store, on_event=on_event).run()
        stored = store.load_run(run.id)
    assert len(run.jobs) == 1000 and {job.status for job in run.jobs} == {"ok"}
    assert len(stored.jobs) == 1000
    # Job 100 (the 11th process) is the reference: by then every lazy import and cache is
    # in place. Readings are taken as each result is recorded, after its process is gone.
    fds0, threads0, _, rss0 = readings[100]
    assert max(r[0] for r in readings.values()) <= fds0 + 2, "file descriptors grow with jobs"
    assert readings[999][0] <= fds0
    assert max(r[1] for i, r in readings.items() if i >= 100) <= threads0, "threads grow with jobs"
    assert max(r[2] for r in readings.values()) == 0, "a job's processes outlived it"
    growth = (readings[999][3] - rss0) / rss0
    assert growth < 0.10, f"RSS grew {growth:.1%} over 900 jobs ({rss0 / MIB:.0f} -> {readings[999][3] / MIB:.0f} MiB)"
    # Relative growth depends on how big the process already is (pytest's is large), so
    # bound the absolute growth too: the retained results take ~6 KiB a job (measured
    # with benchmarks/bench_many_jobs.py); a leaked buffer per job would show here.
    per_job = (readings[999][3] - rss0) / 900
    assert per_job < 16 * 1024, f"RSS grew {per_job / 1024:.1f} KiB a job"


def test_a_hundred_thousand_message_loopback_job() -> None:
    me = psutil.Process()
    before = me.memory_info().rss
    profile = parse_profile({"name": "100k", "jobs": [
        {"scheme": "x25519", "mode": "loopback", "message_sizes": [64], "samples": 100_000, "warmup": 0,
         "tamper": 1}]})
    (job,) = Runner(profile).run().jobs
    assert job.status == "ok", job.error
    assert all(job.metrics[name].stats.n == 100_000 for name in ("compute", "rtt", "receiver", "network"))
    assert job.validation["failed"] == 0 and job.validation["checked"] >= 100_000
    # 400,000 float samples are 3 MiB as arrays; the supervisor keeps them and little else.
    assert me.memory_info().rss - before < 64 * MIB
    assert job.memory["rss_peak_bytes"]["sender"] < 200 * MIB
    assert job.memory["rss_peak_bytes"]["receiver"] < 200 * MIB


def test_128_mib_loopback_messages_stay_within_the_documented_copies() -> None:
    """README: the receiver and the sender each hold about three copies of the message
    beside the interpreter. Measured against the same job at 64 B in the same run."""
    size = 128 * MIB
    profile = parse_profile({"name": "128M", "jobs": [
        {"scheme": "aes-gcm", "mode": "loopback", "message_sizes": [64, size], "samples": 2, "warmup": 0,
         "tamper": 1}]})
    small, large = Runner(profile).run().jobs
    assert small.status == large.status == "ok", large.error
    assert large.validation["failed"] == 0 and large.validation["tamper_rejected"] == large.validation["tamper_tried"]
    for role in ("receiver", "sender"):
        base = small.memory["rss_peak_bytes"][role]
        peak = large.memory["rss_peak_bytes"][role]
        copies = (peak - base) / size
        assert copies <= 3.5, f"{role}: {copies:.2f} copies of a 128 MiB message"


def test_four_parallel_workers_on_a_small_machine_are_correct_and_recorded(qtbot: Any, tmp_path: Path) -> None:
    from app.gui.run_controller import RunController

    store_path = tmp_path / "r.sqlite3"
    controller = RunController(workers=4, store_factory=lambda: Store(store_path))
    jobs = [{"scheme": scheme, "message_sizes": [64, 1024], "samples": 5, "warmup": 1}
            for scheme in ("sha256", "aes-gcm", "chacha20-poly1305", "sha3-256", "blake2b", "ed25519")]
    jobs.append({"scheme": "x25519", "mode": "loopback", "message_sizes": [64], "samples": 20, "warmup": 1})
    logs: list[str] = []
    controller.events.connect(lambda events: logs.extend(getattr(e, "text", "") for e in events))
    try:
        with qtbot.waitSignal(controller.run_finished, timeout=120_000) as finished:
            controller.start(parse_profile({"name": "parallel", "jobs": jobs}))
    finally:
        controller.shutdown()
    run = finished.args[0]
    assert run.status == "finished" and {job.status for job in run.jobs} == {"ok"}
    assert [job.index for job in run.jobs] == list(range(len(run.jobs)))
    for job in run.jobs:
        assert job.validation["failed"] == 0
        assert WarningCode.PARALLEL_JOBS in {w.code for w in job.warnings}
    assert any("4 jobs ran in parallel" in line for line in logs)
    with Store(store_path) as store:
        stored = store.load_run(run.id)
    assert stored.environment["parallel_workers"] == 4
    assert all(WarningCode.PARALLEL_JOBS in {w.code for w in job.warnings} for job in stored.jobs)

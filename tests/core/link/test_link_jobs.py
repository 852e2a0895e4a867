"""Loopback jobs over an emulated link, through the runner: timings, the link's CPU, stop, death, refusal."""

from __future__ import annotations

import os
import signal
import threading
from dataclasses import replace
from typing import Any

import psutil

from app.core.contracts.events import JobProcesses, LogMessage, SampleBatch
from app.core.profile.files import parse_profile
from app.core.records.job_conditions import Link
from app.core.run.runner import Runner
from app.core.vocab import LinkEmulation, Role

#: A bound that only catches a hang (seconds over the model), never a measure of speed.
HANG_SECONDS = 5.0


def _link(delay_ms: float, up: float | None = None, down: float | None = None, loss: float = 0.0) -> Link:
    return Link(
        name=None,
        delay_ms=delay_ms,
        jitter_ms=0.0,
        rate_kbit_up=up,
        rate_kbit_down=down,
        loss_percent=loss,
        emulation=LinkEmulation.DELAY_LINE,
    )


def _runner(link: Link | None, jobs: list[dict[str, Any]], **kwargs: Any) -> Runner:
    """A loopback run whose first job goes over `link` (set on the resolved job, as the
    profile layer resolves a job's "link")."""
    common = {"mode": "loopback", "samples": 5, "warmup": 1, "keygen_samples": 1, "tamper": 2}
    profile = parse_profile({"name": "link-test", "jobs": [{**common, **job} for job in jobs]})
    runner = Runner(profile, **kwargs)
    runner.jobs[0] = replace(runner.jobs[0], link=link)
    return runner


def test_a_loopback_job_over_a_link_measures_the_link() -> None:
    delay_ms, up, down = 3.0, 8000.0, 2000.0
    run = _runner(_link(delay_ms, up, down), [{"scheme": "aes-gcm", "message_sizes": [18, 4096]}]).run()
    assert run.status == "finished"
    for job in run.jobs:
        assert job.status == "ok", job.error
        frame, ack = job.wire_bytes["frame"], job.wire_bytes["ack_frame"]
        model = 2 * delay_ms / 1000 + 8 * frame / (up * 1000) + 8 * ack / (down * 1000)
        network = job.metrics["network"]
        # Every sample: the bytes never arrive early (the link is late only by wake-ups).
        assert min(network.samples) >= model
        assert network.stats.median < model + HANG_SECONDS
        assert min(job.metrics["floor_rtt"].samples) >= 2 * delay_ms / 1000  # the floor crosses the link too
        assert job.cpu.role(Role.LINK) is not None and Role.LINK in job.memory.rss_peak_bytes
        assert job.validation.checked >= 5 and job.validation.tamper_rejected == 2


def test_stop_mid_delay_cancels_the_job_and_leaves_no_process() -> None:
    cancel = threading.Event()
    pids: dict[str, int] = {}

    def on_event(event: Any) -> None:
        if isinstance(event, JobProcesses):
            pids.update(event.pids)
        if isinstance(event, SampleBatch):  # the sender's next request is on the line by now
            cancel.set()

    runner = _runner(
        _link(50.0),
        [{"scheme": "aes-gcm", "message_sizes": [18], "samples": 1000}, {"scheme": "sha256", "message_sizes": [64]}],
        on_event=on_event,
        cancel=cancel,
    )
    run = runner.run()
    assert cancel.is_set()
    assert run.status == "cancelled"
    assert [job.status for job in run.jobs] == ["cancelled", "cancelled"]
    assert set(pids) == {Role.SENDER, Role.RECEIVER, Role.LINK}
    for pid in pids.values():
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_a_link_that_dies_fails_its_job_naming_the_link_and_the_run_goes_on() -> None:
    state: dict[str, Any] = {"pids": {}, "killed": False}

    def on_event(event: Any) -> None:
        if isinstance(event, JobProcesses) and event.job_index == 0:
            state["pids"] = dict(event.pids)
        elif isinstance(event, SampleBatch) and event.job_index == 0 and not state["killed"]:
            state["killed"] = True
            os.kill(state["pids"][Role.LINK], signal.SIGKILL)

    runner = _runner(
        _link(2.0),
        [{"scheme": "aes-gcm", "message_sizes": [18], "samples": 1000}, {"scheme": "sha256", "message_sizes": [64]}],
        on_event=on_event,
    )
    first, second = runner.run().jobs
    assert state["killed"]
    assert first.status == "failed"
    assert (first.error or "").startswith("link process was killed by SIGKILL"), first.error
    assert second.status == "ok" and second.cpu.role(Role.LINK) is None  # a plain loopback job has no link


def test_a_link_with_loss_is_refused_before_any_process_starts() -> None:
    events: list[Any] = []
    runner = _runner(_link(10.0, loss=1.0), [{"scheme": "aes-gcm", "message_sizes": [18]}], on_event=events.append)
    (job,) = runner.run().jobs
    assert job.status == "failed"
    assert (job.error or "").startswith("packet loss (1 %) cannot be emulated by the delay line")
    assert not [e for e in events if isinstance(e, JobProcesses)]
    assert any(isinstance(e, LogMessage) and "packet loss" in e.text for e in events)

"""Which sizes a stop of the job's processes fails, from the count of continues the job's
processes share (app.core.processes.continued) as the measuring process stamped it on each
size's start and end."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from app.core.contracts.events import SizeMeasured
from app.core.processes import continued
from app.core.profile.files import parse_profile
from app.core.profile.resolve import resolve_jobs
from app.core.run.supervisor import ChildSupervisor


def _supervisor(**job: Any) -> ChildSupervisor:
    (resolved,) = resolve_jobs(parse_profile({"name": "stops", "jobs": [job]}))
    return ChildSupervisor(
        resolved, 0, emit=lambda event: None, cancel=threading.Event(), remote=None, on_measured=lambda *a: None
    )


LOOPBACK = {"scheme": "aes-gcm", "mode": "loopback", "message_sizes": [64, 128]}
LOAD = {"scheme": "x25519", "mode": "load", "message_sizes": [32], "rates": [10], "duration_s": 1}


def test_a_size_across_which_the_count_moved_fails_and_the_others_do_not() -> None:
    supervisor = _supervisor(**LOOPBACK)
    supervisor._continues_at_start = {0: 0, 1: 3}
    assert supervisor._stop_in(SizeMeasured(0, 64, {}, continues=3)) is not None  # stopped during size 0
    assert supervisor._stop_in(SizeMeasured(1, 128, {}, continues=3)) is None  # not during size 1


@pytest.mark.parametrize(("job", "fails"), [(LOOPBACK, True), (LOAD, False)], ids=["session", "load"])
def test_a_stop_before_the_first_size_fails_every_size_that_carries_its_timings(
    job: dict[str, Any], fails: bool
) -> None:
    """A session's (and an operations job's) key generations and handshakes are timed
    before its first size and carried by every size; a load job times nothing before."""
    supervisor = _supervisor(**job)
    supervisor._continues_at_start = {0: 1, 1: 1}
    said = supervisor._stop_in(SizeMeasured(1, 128, {}, continues=1))
    assert (said is not None) == fails
    if fails:
        assert said is not None and "while it timed the key generations and handshakes every size carries" in said


def test_the_slots_name_the_process_or_the_group_that_was_stopped() -> None:
    supervisor = _supervisor(**LOOPBACK)
    supervisor.continues = [0] * continued.SLOTS
    supervisor._continue_slots = {"receiver": 0, "sender": 1}  # type: ignore[dict-item]
    supervisor._continues_at_start, supervisor._slots_at_start = {0: 0}, {0: [0] * continued.SLOTS}
    supervisor.continues[0] = 1
    said = supervisor._stop_in(SizeMeasured(0, 64, {}, continues=1))
    assert said == "the receiver process was stopped (SIGSTOP or a debugger) while it measured"
    supervisor.continues[1] = 1
    said = supervisor._stop_in(SizeMeasured(0, 64, {}, continues=2))
    assert said == (
        "the job's processes (receiver, sender) were stopped together (Ctrl-Z of their process group) while it measured"
    )


def test_a_process_counts_its_continues_into_its_slot() -> None:
    counts = [0] * continued.SLOTS
    continued._counts, continued._slot = counts, 2
    try:
        continued._continued(0, None)
        assert counts[2] == 1 and continued.continues() == 1
    finally:
        continued._counts, continued._slot = None, 0
    assert continued.continues() == 0

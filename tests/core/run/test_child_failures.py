"""Which ends of a job's processes count as a stop signal's (app.core.run.child_failures)."""

from __future__ import annotations

import signal

import pytest

from app.core.run.child_failures import died_of_a_stop_signal
from app.core.vocab import Role


@pytest.mark.parametrize("code", [-signal.SIGTERM, -signal.SIGINT, -signal.SIGHUP, 255])
def test_a_death_by_a_stop_signal_not_ours_counts(code: int) -> None:
    # 255: multiprocessing's code for a fork-server child whose fork server the same signal killed
    assert died_of_a_stop_signal({Role.WORKER: code}, set())
    assert died_of_a_stop_signal({Role.RECEIVER: 0, Role.SENDER: code}, {Role.RECEIVER})


@pytest.mark.parametrize("code", [None, 0, 1, -signal.SIGKILL, -signal.SIGSEGV])
def test_other_ends_do_not(code: int | None) -> None:
    assert not died_of_a_stop_signal({Role.WORKER: code}, set())


def test_a_process_we_stopped_ourselves_does_not() -> None:
    assert not died_of_a_stop_signal({Role.LINK: -signal.SIGTERM}, {Role.LINK})

"""app.core.processes.signal_raise: an exception a signal handler raises is not lost in a
callback that Python cannot raise from (the CLI's abort has its own tests in
tests/cli/test_stop_signal_handlers.py; here the helper and the cluster job's stop)."""

from __future__ import annotations

import signal
import sys
from typing import Any

import pytest

from app.core.load.cluster.coordinator import Stopped, _stop_on_sigterm
from app.core.processes.signal_raise import Redelivery
from tests.helpers.signal_callbacks import raised_in_a_weakref_callback, record_unraisable, some_bytecodes


class _Halt(Exception):
    pass


@pytest.fixture
def earlier_hook(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    return record_unraisable(monkeypatch)


def test_an_exception_raised_in_a_weakref_callback_comes_after_it(earlier_hook: list[Any]) -> None:
    with Redelivery(_Halt) as redelivery:

        def handler(signum: int, frame: Any) -> None:
            redelivery.raise_from_handler(signum, frame, _Halt())

        previous = signal.signal(signal.SIGUSR1, handler)
        try:
            with pytest.raises(_Halt):
                ref = raised_in_a_weakref_callback(signal.SIGUSR1)
                redelivery.wait_for_marks()
                some_bytecodes()
        finally:
            signal.signal(signal.SIGUSR1, previous)
    assert ref() is None
    assert earlier_hook == []


def test_without_it_python_swallows_the_exception(earlier_hook: list[Any]) -> None:
    """The control: the same handler raising directly loses the exception in the callback."""

    def handler(signum: int, frame: Any) -> None:
        raise _Halt()

    previous = signal.signal(signal.SIGUSR1, handler)
    try:
        raised_in_a_weakref_callback(signal.SIGUSR1)
        some_bytecodes()  # nothing raised here: it was lost
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert earlier_hook == [_Halt]


def test_a_cluster_job_stopped_in_a_callback_stops(earlier_hook: list[Any]) -> None:
    """The supervisor's SIGTERM to a cluster load job, landing in a weakref callback (Dask's
    client has them): the job still stops its generators; before, it ran on until killed."""
    hook, handler = sys.unraisablehook, signal.getsignal(signal.SIGTERM)
    with pytest.raises(Stopped), _stop_on_sigterm() as redelivery:
        raised_in_a_weakref_callback(signal.SIGTERM)
        redelivery.wait_for_marks()
        some_bytecodes()
    assert earlier_hook == []
    assert sys.unraisablehook is hook and signal.getsignal(signal.SIGTERM) is handler

"""The CLI's stop handlers on their own (app.cli.terminal.signals), in this process: the
second stop signal's abort must arrive even where Python cannot raise it."""

from __future__ import annotations

import signal
import sys
import threading
import weakref
from typing import Any

import pytest

from app.cli.terminal.signals import StopSignals


class _Thing:
    pass


def _some_bytecodes() -> int:
    total = 0
    for i in range(10_000):  # a pending signal's handler runs between two of these
        total += i
    return total


@pytest.fixture
def earlier_hook(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What reaches the unraisable hook that was there before the handlers."""
    if threading.current_thread() is not threading.main_thread():
        pytest.fail("signal handlers are the main thread's: this test must run there")
    seen: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: seen.append(unraisable.exc_type))
    return seen


def test_an_abort_that_lands_in_a_weakref_callback_is_delivered_after_it(earlier_hook: list[Any]) -> None:
    """Python cannot raise out of a weakref callback: it printed "Exception ignored in ..."
    with a traceback and went on, the abort lost (a second SIGTERM to a CLI run, measured)."""
    cancel = threading.Event()
    thing = _Thing()

    def callback(_ref: object) -> None:
        signal.raise_signal(signal.SIGINT)  # the second stop signal, handled in here
        _some_bytecodes()

    with StopSignals(cancel, announce=lambda _line: None) as stop:
        signal.raise_signal(signal.SIGINT)  # the first: the run is asked to stop
        _some_bytecodes()
        assert cancel.is_set()
        ref = weakref.ref(thing, callback)
        with pytest.raises(KeyboardInterrupt):
            del thing  # the callback runs here, and the abort is raised inside it
            stop.redelivery.wait_for_marks()  # the main thread lets the mark's thread run
            _some_bytecodes()
    assert ref() is None
    assert earlier_hook == []  # nothing printed for it
    assert sys.unraisablehook is not None and signal.getsignal(signal.SIGINT) is not None


def test_other_unraisable_errors_still_reach_the_earlier_hook(earlier_hook: list[Any]) -> None:
    thing = _Thing()

    def callback(_ref: object) -> None:
        raise ValueError("a defect in a callback")

    with StopSignals(threading.Event(), announce=lambda _line: None):
        ref = weakref.ref(thing, callback)
        del thing
    assert ref() is None
    assert earlier_hook == [ValueError]


def test_the_handlers_and_the_hook_are_put_back() -> None:
    hook, handler = sys.unraisablehook, signal.getsignal(signal.SIGTERM)
    with StopSignals(threading.Event(), announce=lambda _line: None):
        assert sys.unraisablehook is not hook and signal.getsignal(signal.SIGTERM) is not handler
    assert sys.unraisablehook is hook and signal.getsignal(signal.SIGTERM) is handler

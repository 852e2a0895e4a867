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
from tests.helpers.signal_callbacks import raised_in_a_weakref_callback, record_unraisable, some_bytecodes


class _Thing:
    pass


@pytest.fixture
def earlier_hook(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    return record_unraisable(monkeypatch)


def test_an_abort_that_lands_in_a_weakref_callback_is_delivered_after_it(earlier_hook: list[Any]) -> None:
    """Python cannot raise out of a weakref callback: it printed "Exception ignored in ..."
    with a traceback and went on, the abort lost (a second SIGTERM to a CLI run, measured)."""
    cancel = threading.Event()
    with StopSignals(cancel, announce=lambda _line: None) as stop:
        signal.raise_signal(signal.SIGINT)  # the first: the run is asked to stop
        some_bytecodes()
        assert cancel.is_set()
        with pytest.raises(KeyboardInterrupt):
            ref = raised_in_a_weakref_callback(signal.SIGINT)  # the second, handled in the callback
            stop.redelivery.wait_for_marks()  # the main thread lets the mark's thread run
            some_bytecodes()
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

"""A signal that arrives inside a weakref callback, where Python cannot raise: what the tests
of app.core.processes.signal_raise and of the CLI's stop handlers set up."""

from __future__ import annotations

import signal
import sys
import threading
import weakref
from typing import Any

import pytest


class _Thing:
    pass


def some_bytecodes() -> int:
    """A loop a pending signal's handler runs in (between two of its bytecodes)."""
    total = 0
    for i in range(10_000):
        total += i
    return total


def raised_in_a_weakref_callback(signum: int) -> weakref.ref[Any]:
    """A weakref whose callback receives `signum` and runs on, so the handler raises in
    there; the callback has run when this returns (the weakref is dead)."""
    thing = _Thing()

    def callback(_ref: object) -> None:
        signal.raise_signal(signum)
        some_bytecodes()

    ref = weakref.ref(thing, callback)
    del thing  # the callback runs here
    return ref


def record_unraisable(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Replace the unraisable hook with one that records each exception's type (nothing is
    recorded when all is well); the test must run on the main thread, as handlers do."""
    if threading.current_thread() is not threading.main_thread():
        pytest.fail("signal handlers are the main thread's: this test must run there")
    seen: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: seen.append(unraisable.exc_type))
    return seen

"""Ctrl-C, SIGTERM and SIGHUP all stop a CLI run the same way: like the window's Stop.

`timeout`, a CI cancellation, `docker stop` and a closed terminal send SIGTERM or
SIGHUP, not Ctrl-C. Before, those killed the CLI on the spot: exit 143/129, no
export written, and the run's row left "running". Now the first stop signal sets
the run's cancel flag (the running job's processes are stopped, the remaining jobs
marked cancelled, the run finished as "cancelled" and the exports written); the
exit code is still 128 + the signal's number (130, 143, 129), as callers expect of
a process stopped by a signal. A second signal while jobs are still running aborts
at once (KeyboardInterrupt), as a second Ctrl-C always did; the exports are still
written from what finished.

A signal the process was started with ignored is left ignored (`nohup` ignores
SIGHUP on purpose), except SIGINT: shells start background jobs with SIGINT
ignored as a side effect, and Ctrl-C handling here has always been unconditional.

The abort is an exception raised between two bytecodes of the main thread, and some
bytecodes run where Python cannot raise: a weakref callback or a finalizer, where Python
printed "Exception ignored in ..." with a traceback and went on, the abort lost. While the
handlers are installed, such a swallowed abort is raised again once the callback is done,
and nothing is printed for it (app.core.processes.signal_raise).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any

from app.core.processes.signal_raise import Redelivery

STOP_SIGNAL_NAMES = ("SIGINT", "SIGTERM", "SIGHUP")  # SIGHUP does not exist on Windows


def describe(signum: int) -> str:
    """How a message names the signal: what the user did, where that is known."""
    return "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name


class StopSignals:
    """Installs the stop handlers for the length of a `with` block (main thread only)."""

    def __init__(self, cancel: threading.Event, announce: Callable[[str], None]) -> None:
        self.cancel = cancel
        self.announce = announce
        #: The first stop signal received (None: none yet).
        self.signum: int | None = None
        #: While True a second signal aborts at once; after the run only the exports are
        #: left, a few milliseconds' work that a second signal must not cut in half.
        self.running = True
        self._previous: dict[int, Any] = {}
        #: The abort swallowed in a callback, raised again after it (module doc).
        self.redelivery = Redelivery(KeyboardInterrupt)

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is not threading.main_thread():
            return self  # only the main thread may set handlers (a test calling main() in a thread)
        for name in STOP_SIGNAL_NAMES:
            signum = getattr(signal, name, None)
            if signum is None:
                continue
            if signum != signal.SIGINT and signal.getsignal(signum) == signal.SIG_IGN:
                continue  # nohup, or a parent that wants us to ignore it
            self._previous[signum] = signal.signal(signum, self._handle)
        self.redelivery.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if not self._previous:
            return  # not installed (not the main thread)
        self.redelivery.wait_for_marks()  # an abort marked again lands on these handlers
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()
        self.redelivery.__exit__(kind, exc, traceback)

    def _handle(self, signum: int, frame: FrameType | None) -> None:
        # Runs between two bytecodes of the main thread: it must not raise in the middle
        # of spawning a child (the child then died reading half of its start-up data),
        # so the first signal only sets the flag the runner polls.
        if self.signum is None:
            self.signum = signum
            self.cancel.set()
            again = "press it again" if signum == signal.SIGINT else "send it again"
            self.announce(f"cryptobench: stopping after {describe(signum)} ({again} to abort at once)")
        elif self.running:
            self.redelivery.raise_from_handler(signum, frame, KeyboardInterrupt())

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
bytecodes run where Python cannot raise: a weakref callback or a `__del__` that the
collector runs, where Python prints "Exception ignored in ..." with a traceback and goes
on. The abort was then lost, and the user read a traceback. While the handlers are
installed, such a swallowed abort is delivered again once the callback is done (the
same signal marked anew), and nothing is printed for it.
"""

from __future__ import annotations

import _thread
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any

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
        #: The signal that asked for the abort (None: no abort asked).
        self._abort_signum: int | None = None
        self._previous_hook: Callable[[Any], Any] | None = None
        #: Held while a swallowed abort is being marked again (`_mark_again`).
        self._marking = _thread.allocate_lock()

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
        self._previous_hook, sys.unraisablehook = sys.unraisablehook, self._unraisable
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.wait_for_marks()  # an abort marked again lands on these handlers, not the earlier ones
        for signum, previous in self._previous.items():
            signal.signal(signum, previous)
        self._previous.clear()
        if self._previous_hook is not None:
            sys.unraisablehook, self._previous_hook = self._previous_hook, None

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
            self._abort_signum = signum
            if _inside_the_hook(frame):  # where it would be swallowed too
                self._mark_again(signum)
                return
            raise KeyboardInterrupt

    def _unraisable(self, unraisable: Any) -> None:
        """sys.unraisablehook while installed: the abort that Python swallowed (raised inside
        a callback it cannot raise from) is asked for again, quietly; anything else goes to
        the hook that was there before."""
        kind = unraisable.exc_type
        if self._abort_signum is not None and kind is not None and issubclass(kind, KeyboardInterrupt):
            self._mark_again(self._abort_signum)
            return
        assert self._previous_hook is not None
        self._previous_hook(unraisable)

    def _mark_again(self, signum: int) -> None:
        """Mark `signum` as received, from another thread: its handler then runs in the main
        thread at a bytecode that checks for signals after this one. Not signal.raise_signal,
        which runs the handler before it returns, here, where the abort would be swallowed
        again. A new thread, not a call: the main thread holds the interpreter lock, so the
        mark comes after the hook has returned (one that still lands in it is marked again)."""
        if not self._marking.acquire(blocking=False):
            return  # a mark is on its way already

        def mark() -> None:
            try:
                _thread.interrupt_main(signal.Signals(signum))
            finally:
                self._marking.release()

        _thread.start_new_thread(mark, ())

    def wait_for_marks(self) -> None:
        """Return once no swallowed abort is still being marked again (at once, mostly)."""
        if self._marking.acquire(timeout=MARK_WAIT_SECONDS):
            self._marking.release()


#: How long leaving the handlers waits for an abort being marked again: a thread's start
#: and one call, microseconds; the bound only keeps a wedged machine from hanging the exit.
MARK_WAIT_SECONDS = 2.0


def _inside_the_hook(frame: FrameType | None) -> bool:
    """Whether `frame` runs in StopSignals._unraisable (or below it)."""
    while frame is not None:
        if frame.f_code is StopSignals._unraisable.__code__:
            return True
        frame = frame.f_back
    return False

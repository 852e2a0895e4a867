"""An exception raised from a signal handler, delivered even where Python cannot raise it.

A handler that raises (the CLI's abort on a second stop signal, a cluster job's stop on
SIGTERM) raises between two bytecodes of the main thread, wherever they are. Some run where
Python cannot raise: a weakref callback or a finalizer that a dying object runs (a WeakSet's
`_remove` as a multiprocessing or Dask object goes). Python then prints "Exception ignored
in ..." with a traceback and goes on, and the stop was lost: the CLI ran on after its abort,
a cluster job kept its generators until the supervisor killed it.

`Redelivery` keeps such an exception: while it is installed, a handler raises through
`raise_from_handler`, and when Python swallows the exception the unraisable hook marks the
same signal again, from a short-lived thread, so the handler raises once the callback is
done. Nothing is printed for it. Main thread only, as signal handlers are.
"""

from __future__ import annotations

import _thread
import signal
import sys
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any

#: How long leaving waits for a swallowed exception being marked again: a thread's start and
#: one call, microseconds; the bound only keeps a wedged machine from hanging the exit.
MARK_WAIT_SECONDS = 2.0


class Redelivery:
    """While installed (a `with` block), exceptions of `kind` raised through
    `raise_from_handler` and swallowed by Python are raised again after the callback."""

    def __init__(self, kind: type[BaseException]) -> None:
        self.kind = kind
        #: The signal whose handler raised last (None: none yet).
        self._signum: int | None = None
        self._previous_hook: Callable[[Any], Any] | None = None
        #: Held while a swallowed exception is being marked again (`_mark_again`).
        self._marking = _thread.allocate_lock()

    def __enter__(self) -> Redelivery:
        self._previous_hook, sys.unraisablehook = sys.unraisablehook, self._unraisable
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._previous_hook is not None:
            sys.unraisablehook, self._previous_hook = self._previous_hook, None

    def raise_from_handler(self, signum: int, frame: FrameType | None, exception: BaseException) -> None:
        """What a signal handler calls to raise `exception` (of `kind`) for `signum`."""
        self._signum = signum
        if _inside(frame, Redelivery._unraisable.__code__):
            self._mark_again(signum)  # in the hook itself, where it would be swallowed too
            return
        raise exception

    def wait_for_marks(self) -> None:
        """Return once no swallowed exception is still being marked again (at once, mostly):
        call it before the handlers are put back, so that a mark lands on them."""
        if self._marking.acquire(timeout=MARK_WAIT_SECONDS):
            self._marking.release()

    def _unraisable(self, unraisable: Any) -> None:
        """sys.unraisablehook while installed: a swallowed exception of `kind` is asked for
        again, quietly; anything else goes to the hook that was there before."""
        kind = unraisable.exc_type
        if self._signum is not None and kind is not None and issubclass(kind, self.kind):
            self._mark_again(self._signum)
            return
        assert self._previous_hook is not None
        self._previous_hook(unraisable)

    def _mark_again(self, signum: int) -> None:
        """Mark `signum` as received, from another thread: its handler then runs in the main
        thread at a bytecode that checks for signals after this one. Not signal.raise_signal,
        which runs the handler before it returns, here, where the exception would be swallowed
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


def _inside(frame: FrameType | None, code: object) -> bool:
    """Whether `frame` runs `code` (or is called from it)."""
    while frame is not None:
        if frame.f_code is code:
            return True
        frame = frame.f_back
    return False

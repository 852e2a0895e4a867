"""Processes and signals for tests that stop the app with a signal, in any shell.

The app keeps a signal it was started with ignored (nohup ignores SIGHUP on purpose), and
a child inherits its parent's ignored signals and signal mask. So a test that signals the
app must not depend on how the shell running the suite left them: under `nohup make test`
SIGHUP arrives ignored, in a background job SIGINT does. These helpers start children,
and run in-process checks, with the stop signals at their defaults and none blocked.
"""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

#: The signals the app treats as "stop" (SIGHUP does not exist on Windows).
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


def default_signals() -> None:
    """In a new child, before it runs the program: the stop signals at their defaults and
    nothing blocked. Only signal calls, which take no lock, so it is safe after fork."""
    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_SETMASK, ())


def popen(args: Sequence[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """`subprocess.Popen` for a child the test will signal (see the module's docstring)."""
    return subprocess.Popen(args, preexec_fn=default_signals, **kwargs)  # noqa: PLW1509 (signal calls only)


@contextmanager
def signals_at_default(*signums: int) -> Iterator[None]:
    """This process with `signums` at their default disposition for a block, as a fresh
    shell starts a program; what the shell set is restored after."""
    previous = {signum: signal.signal(signum, signal.SIG_DFL) for signum in signums}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)

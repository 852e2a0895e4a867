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
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psutil

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


def _still_running(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def wait_exited(processes: Iterable[psutil.Process | int], timeout: float) -> list[psutil.Process]:
    """Wait (bounded) until each of `processes` has exited; return those still running.

    A zombie has exited: it runs no code and holds no file, socket or lock, it only waits
    for its parent to collect its status. The app's helpers outlive the app only as
    zombies of init, and some inits collect orphans every second or two (a microVM's init
    did it about every 2 s): psutil.wait_procs counts a zombie as alive, so each test that
    used it waited that long for nothing it checks. `is_running` also tells a reused pid
    from the process the test knew.
    """
    pending: list[psutil.Process] = []
    for process in processes:
        try:
            pending.append(process if isinstance(process, psutil.Process) else psutil.Process(process))
        except psutil.NoSuchProcess:
            continue
    deadline = time.monotonic() + timeout
    while True:
        pending = [process for process in pending if _still_running(process)]
        if not pending or time.monotonic() >= deadline:
            return pending
        time.sleep(0.01)  # a condition polled, not a guess at a duration

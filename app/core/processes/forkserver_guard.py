"""Imported by the fork server only (it is the first of `jobstart.CHILD_PRELOAD`): keeps the
server serving, and quiet, when a client vanishes.

With the app's open files exhausted mid-run, a start got as far as connecting to the
fork server and then failed to make its pipes: the client's socket closed before any
descriptor was sent, the stdlib server's `recvfds` raised EOFError, which its loop does
not catch (only ECONNABORTED), and the server died printing a raw traceback onto the
user's terminal; the next job's start then met "Connection refused". A client that
goes away before sending its descriptors is the client's failure (the job already
reports it): here it becomes the ECONNABORTED the loop skips, and the server goes on.

Anything else that still ends the server (a fork the system refuses) is told in one
line, not a traceback: the job whose start it was fails naming it.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any


def in_fork_server() -> bool:
    """Whether this is multiprocessing's fork server importing its preload modules."""
    from multiprocessing import forkserver

    frame = sys._getframe()
    while frame is not None:
        if frame.f_code is forkserver.main.__code__:
            return True
        frame = frame.f_back  # type: ignore[assignment]
    return False


def install() -> None:
    """Wrap the server's `recvfds` and quiet its exit on an error (see the module doc)."""
    import errno
    from multiprocessing import reduction

    receive = reduction.recvfds

    def recvfds(sock: Any, size: int) -> list[int]:
        try:
            fds: list[int] = receive(sock, size)
        except (EOFError, RuntimeError) as exc:  # EOF, or a message without its descriptors
            raise ConnectionAbortedError(
                errno.ECONNABORTED, f"fork request abandoned by its client ({exc!r})"
            ) from None
        return fds

    reduction.recvfds = recvfds
    sys.excepthook = _one_line


def _one_line(kind: type[BaseException], exc: BaseException, traceback: TracebackType | None) -> None:
    try:
        sys.stderr.write(f"cryptobench: the job-start helper (fork server) stopped: {kind.__name__}: {exc}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # no terminal left to tell


if in_fork_server():
    install()

"""Console output that can never stop a run.

What the CLI prints is a courtesy; what it measures, stores and exports is the
work. Before this module, `cryptobench run P --json o.json | head -1` died with
exit 1 once `head` closed the pipe (the next print raised BrokenPipeError), the
later jobs never ran and no export was written; `serve | head -2` ended the
server at the next connection; a legacy encoding (`PYTHONIOENCODING=cp1252`, a
Windows console redirected to a file) stopped a run on a character such as "≥".

`tolerant_console()` wraps `sys.stdout` and `sys.stderr` for the length of a
command, so that every writer (rich consoles, `print`, `warnings`, rich's
progress thread) goes through one layer that:

- writes characters the encoding lacks as backslash escapes instead of raising;
- on any OS error (EPIPE from a closed pipe, EIO from a closed terminal, ENOSPC
  from a full disk behind a redirect) drops the stream for the rest of the
  process: the file descriptor is pointed at the null device, so data still in
  the buffer and the interpreter's final flush go nowhere instead of raising
  ("Exception ignored ... BrokenPipeError", exit code 120).

Losing standard output to a full disk or an I/O error is still a failure where the
output is the command's result: `main` flushes it after the command and exits 1 when it
was lost, so `compare --json > /dev/full` no longer exits 0 with nothing written (`run`,
`report` and `import`, whose results are files and the store, get a warning). Only a closed pipe (`| head`) is
quiet and not an error: the reader chose to stop reading.

SIGPIPE needs no handling: the interpreter ignores it at start-up, which is what
turns a closed pipe into the EPIPE handled here rather than a silent death.
It also makes sure file descriptors 0-2 are open: started with stdout closed
(`>&-`), the next file opened (an export, the store) would otherwise get
descriptor 1 and receive every later print. What is then printed there is lost, not
declined: the first write fails the stream as a full disk does (before, `history >&-`
exited 0 with its output gone).
"""

from __future__ import annotations

import errno
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO


class TolerantStream:
    """A text stream that never raises on write or flush (see the module docstring)."""

    def __init__(self, stream: TextIO, label: str) -> None:
        self._stream = stream
        self.label = label
        #: Why the stream was dropped (None while it works).
        self.lost: str | None = None
        #: Called once with a one-line reason when the stream is dropped for a cause other
        #: than a closed pipe (the reader chose to stop reading; that is not news).
        self.on_lost: Any = None
        #: Dropped for a cause other than a closed pipe (a full disk, an I/O error): what
        #: was printed is lost, not declined, and a command whose result is its output fails.
        self.failed = False
        #: Whether losing this stream fails the command (its output is the command's
        #: result): the message says "error" then, else "warning" (`app.cli.main`).
        self.fails_command = True
        #: Why the stream was unusable from the start (None: it was not). Started with the
        #: descriptor closed (`>&-`), Python has no stream at all (sys.stdout is None): the
        #: first write is then lost as to a broken disk, not silently dropped.
        self.closed_at_start: OSError | None = None
        try:
            self._fd: int | None = stream.fileno()
        except (AttributeError, OSError, ValueError):  # pytest's capture, StringIO
            self._fd = None
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="backslashreplace")
            except (OSError, ValueError):
                pass

    def write(self, text: str) -> int:
        if self.closed_at_start is not None and text:
            self._lose(self.closed_at_start)
        if self.lost is None:
            try:
                self._stream.write(text)
            except UnicodeEncodeError:  # a stream that could not be reconfigured
                encoding = getattr(self._stream, "encoding", None) or "ascii"
                self._guarded(
                    lambda: self._stream.write(text.encode(encoding, "backslashreplace").decode(encoding, "replace"))
                )
            except (OSError, ValueError) as exc:
                self._lose(exc)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self.lost is None:
            self._guarded(self._stream.flush)

    def isatty(self) -> bool:
        if self.lost is not None:
            return False
        try:
            return bool(self._stream.isatty())
        except (OSError, ValueError):
            return False

    def __getattr__(self, name: str) -> Any:  # encoding, errors, fileno, buffer, ...
        return getattr(self._stream, name)

    def _guarded(self, action: Any) -> None:
        try:
            action()
        except (OSError, ValueError) as exc:
            self._lose(exc)

    def _lose(self, exc: BaseException) -> None:
        if self.lost is not None:
            return
        self.lost = (exc.strerror or str(exc)) if isinstance(exc, OSError) else str(exc)
        if self._fd is not None:
            try:
                null = os.open(os.devnull, os.O_WRONLY)
                try:
                    os.dup2(null, self._fd)
                finally:
                    os.close(null)
            except OSError:
                pass
            try:
                self._stream.flush()  # what was buffered goes to the null device now
            except (OSError, ValueError):
                pass
        broken_pipe = isinstance(exc, OSError) and exc.errno in (errno.EPIPE, errno.ECONNRESET)
        self.failed = not broken_pipe
        if self.on_lost is not None and not broken_pipe:
            level = "error" if self.fails_command else "warning"
            self.on_lost(f"cryptobench: {level}: {self.label}: cannot write ({self.lost}); the output is lost")


def _ensure_std_fds() -> set[int]:
    """Open the null device on any of descriptors 0-2 that is closed; return those."""
    closed = set()
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.add(fd)
            try:
                null = os.open(os.devnull, os.O_RDWR)
            except OSError:
                return closed
            if null != fd:  # the lowest free descriptor is `fd` itself, normally
                os.dup2(null, fd)
                os.close(null)
    return closed


def _null_text() -> TextIO:
    return open(os.devnull, "w", encoding="utf-8")


@contextmanager
def tolerant_console() -> Iterator[tuple[TolerantStream, TolerantStream]]:
    """Wrap stdout and stderr for one command (restored after it). Nested or concurrent
    commands (tests run `serve` in a thread beside `run`) share the first one's wrappers,
    so restoring can never put back a wrapper of a command that has ended."""
    if isinstance(sys.stdout, TolerantStream) and isinstance(sys.stderr, TolerantStream):
        yield sys.stdout, sys.stderr
        return
    closed = _ensure_std_fds()
    saved = sys.stdout, sys.stderr
    out = TolerantStream(sys.stdout or _null_text(), "standard output")
    err = TolerantStream(sys.stderr or _null_text(), "standard error")
    for stream, fd, original in ((out, 1, saved[0]), (err, 2, saved[1])):
        if original is None or fd in closed:  # `>&-`: what is printed there is lost, and said so
            stream.closed_at_start = OSError(errno.EBADF, f"{os.strerror(errno.EBADF)}: closed at start")
    out.on_lost = lambda line: err.write(line + "\n")
    err.on_lost = lambda line: None  # nowhere left to say it
    sys.stdout, sys.stderr = out, err
    try:
        yield out, err
    finally:
        # Flush through the wrappers while they are in place: a pipe closed with data
        # still buffered must fail here, where it is handled, and not in the
        # interpreter's final flush.
        out.flush()
        err.flush()
        if sys.stdout is out and sys.stderr is err:
            sys.stdout, sys.stderr = saved

"""What runs on each Dask worker: an actor that starts one generator subprocess and passes
it the coordinator's commands.

An actor, not one plain task per step: a job's client connections must stay open from its
first step to its last (the server under test admits them once, then stops listening), so
the generator lives as long as the job. The actor is placed like a task, pinned to its
worker (`workers=[address]`, no other allowed); its blocking calls run in the worker's
actor thread, and `clock` and `stop` are coroutines on the worker's event loop, so a
stop reaches a generator that is in the middle of a step.
"""

from __future__ import annotations

import ctypes
import os
import platform
import signal
import socket
import subprocess
import sys
import time
import weakref
from typing import Any

from app import __version__
from app.core.load.cluster.pipe_frames import PipeClosed, read_frame, write_frame

#: How long a stopped generator gets to close its connections before it is killed.
STOP_GRACE_S = 2.0
#: The generator exits when its lease is not renewed for this long: the coordinator renews
#: it every second, so a coordinator killed outright (SIGKILL, a lost machine, a cut
#: network) leaves no generator running longer than this.
LEASE_S = 10.0
_PR_SET_PDEATHSIG = 1


class GeneratorFailed(RuntimeError):
    """The generator subprocess answered a command with an error, or died."""


def _die_with_parent() -> None:
    """In the subprocess, before exec: SIGKILL when the worker process that started it dies
    (Linux), so a worker killed outright leaves no generator behind it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def _kill(process: subprocess.Popen[bytes], lease: int | None = None) -> None:
    if process.poll() is None:
        process.kill()
        process.wait(5)
    if lease is not None:
        try:
            os.close(lease)
        except OSError:
            pass


class GeneratorActor:
    """One generator on this worker for one load job (a Dask actor)."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._lease: int | None = None

    async def clock(self) -> float:
        """This machine's wall clock, for the coordinator's offset exchanges (answered on
        the event loop at once, not behind a running step)."""
        return time.time()

    def identity(self) -> dict[str, Any]:
        return {
            "host": socket.gethostname(),
            "version": __version__,
            "python": platform.python_version(),
            "cpus": os.cpu_count() or 0,
        }

    async def start(self) -> int:
        """Start the generator subprocess (from the event loop's thread: the parent-death
        signal follows the thread that forked, and this one lives as long as the worker)."""
        if self.process is not None:
            raise GeneratorFailed("this actor's generator is already started")
        lease_read, self._lease = os.pipe()
        try:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "app.core.load.cluster.remote_generator",
                    "--lease-fd",
                    str(lease_read),
                    "--lease-s",
                    str(LEASE_S),
                ],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                pass_fds=(lease_read,),
                preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,  # noqa: PLW1509 - one prctl call
            )
        finally:
            os.close(lease_read)
        # Released by Dask (the coordinator's client went away) or collected: no generator stays.
        self._finalizer = weakref.finalize(self, _kill, self.process, self._lease)
        return self.process.pid

    def call(self, command: str, *args: Any) -> Any:
        """Send one command and wait for its answer (a step's: its warm-up, window and drain)."""
        process = self.process
        if process is None or process.stdin is None or process.stdout is None:
            raise GeneratorFailed("the generator was not started")
        try:
            write_frame(process.stdin, (command, *args))
            status, value = read_frame(process.stdout)
        except (PipeClosed, BrokenPipeError, OSError) as exc:
            code = process.poll()
            raise GeneratorFailed(
                f"the generator process on {socket.gethostname()} ended"
                + (f" (exit code {code})" if code is not None else f" ({exc})")
            ) from None
        if status != "ok":
            raise GeneratorFailed(str(value))
        return value

    async def renew(self) -> None:
        """Renew the generator's lease (a coroutine: answered beside a step in progress)."""
        if self._lease is not None:
            try:
                os.write(self._lease, b".")
            except OSError:
                pass  # the generator has gone: the next command says so

    async def stop(self) -> bool:
        """End the generator at once, wherever it is (a coroutine: it runs beside a step in
        progress, whose `call` then fails). True when there was one running."""
        process = self.process
        if process is None:
            return False
        running = process.poll() is None
        # SIGKILL: nothing of a cancelled step is kept, and the server sees its connections
        # close; a polite stop would wait on the event loop.
        self._end()
        return running

    def _end(self) -> None:
        if self._finalizer is not None:
            self._finalizer()  # kills the generator (if it still runs) and closes the lease, once
            self._finalizer = None
            self._lease = None

    def close(self) -> None:
        """End the generator politely after a job: its clients say goodbye to the server."""
        process = self.process
        if process is None:
            return
        try:
            self.call("close")
            process.wait(STOP_GRACE_S)
        except (GeneratorFailed, subprocess.TimeoutExpired):
            pass
        self._end()

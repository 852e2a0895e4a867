"""What runs on each Dask worker: an actor that starts one generator subprocess and passes
it the coordinator's commands.

An actor, not one plain task per step: a job's client connections must stay open from its
first step to its last (the server under test admits them once, then stops listening), so
the generator lives as long as the job. The actor is placed like a task, pinned to its
worker (`workers=[address]`, no other allowed); its blocking calls run in the worker's
actor thread, and `clock`, `renew` and `stop` are coroutines on the worker's event loop,
so a stop reaches a generator that is in the middle of a step.

The generator leaves the worker's process tree as it starts (`remote_generator --detach`:
it forks, and the process the actor started exits at once), so init reaps it when it
ends. As the worker's own child, a generator whose lease ran out while the worker was
stopped (SIGSTOP, a frozen VM) stayed a zombie until the worker resumed. It still ends with
the worker: its lease's pipe closes when the worker dies, and it exits when its lease is
not renewed. The actor holds it by a pidfd where Linux has one, so a kill never reaches
another process that reused its pid.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import platform
import select
import signal
import socket
import subprocess
import sys
import time
import weakref
from dataclasses import dataclass
from typing import IO, Any

from app import __version__
from app.core.load.cluster.pipe_frames import PipeClosed, read_frame, write_frame

#: How long a stopped generator gets to close its connections before it is killed.
STOP_GRACE_S = 2.0
#: How long the generator may take to start (an interpreter, the measuring code) and say
#: its pid.
START_S = 60.0


class GeneratorFailed(RuntimeError):
    """The generator subprocess answered a command with an error, or died."""


@dataclass
class _Process:
    """The generator as the actor holds it: its pid (a pidfd too, on Linux), its pipes and
    the write end of its lease."""

    pid: int
    pidfd: int | None
    commands: IO[bytes]
    replies: IO[bytes]
    lease: int

    def ended(self, wait_s: float = 0.0) -> bool:
        """Whether the generator has exited (waiting up to `wait_s` for it)."""
        if self.pidfd is not None:
            ready, _, _ = select.select([self.pidfd], [], [], wait_s)  # readable once it has exited
            return bool(ready)
        deadline = time.monotonic() + wait_s
        while True:
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)


def _kill(process: _Process) -> None:
    """Kill the generator if it still runs and release what the actor held of it."""
    with contextlib.suppress(OSError):
        if process.pidfd is not None:
            signal.pidfd_send_signal(process.pidfd, signal.SIGKILL)
        elif not process.ended():
            os.kill(process.pid, signal.SIGKILL)
    process.ended(5.0)
    for stream in (process.commands, process.replies):
        with contextlib.suppress(OSError):
            stream.close()
    for fd in (process.lease, process.pidfd):
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


def _launch(lease_s: float) -> tuple[subprocess.Popen[bytes], int]:
    """Start `remote_generator --detach` with a lease pipe: the process started, and the
    lease's write end."""
    lease_read, lease_write = os.pipe()
    try:
        launcher = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "app.core.load.cluster.remote_generator",
                "--detach",
                "--worker-pid",
                str(os.getpid()),
                "--lease-fd",
                str(lease_read),
                "--lease-s",
                str(lease_s),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            pass_fds=(lease_read,),
        )
    except BaseException:
        os.close(lease_write)
        raise
    finally:
        os.close(lease_read)
    return launcher, lease_write


def _hello(launcher: subprocess.Popen[bytes], lease: int) -> _Process:
    """The detached generator's first frame, its pid; the launcher it left is reaped."""
    assert launcher.stdin is not None and launcher.stdout is not None
    try:
        kind, pid = read_frame(launcher.stdout)
    except (PipeClosed, OSError, ValueError) as exc:
        launcher.kill()
        launcher.wait(5)
        os.close(lease)
        raise GeneratorFailed(f"the generator process on {socket.gethostname()} did not start ({exc})") from None
    launcher.wait(START_S)  # it exits as soon as it has forked the generator
    if kind != "pid" or not isinstance(pid, int):
        raise GeneratorFailed(f"the generator process said {kind!r} first, not its pid")
    pidfd = None
    if hasattr(os, "pidfd_open"):
        with contextlib.suppress(OSError):
            pidfd = os.pidfd_open(pid)
    return _Process(pid, pidfd, launcher.stdin, launcher.stdout, lease)


class GeneratorActor:
    """One generator on this worker for one load job (a Dask actor)."""

    def __init__(self) -> None:
        self.process: _Process | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None

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

    async def start(self, lease_s: float) -> int:
        """Start the generator subprocess, detached from this worker's process tree, with a
        lease of `lease_s` (waiting for its pid off the event loop, which must keep answering
        the scheduler's heartbeats meanwhile)."""
        if self.process is not None:
            raise GeneratorFailed("this actor's generator is already started")
        launcher, lease = _launch(lease_s)
        self.process = await asyncio.get_running_loop().run_in_executor(None, _hello, launcher, lease)
        # Released by Dask (the coordinator's client went away) or collected: no generator stays.
        self._finalizer = weakref.finalize(self, _kill, self.process)
        return self.process.pid

    def call(self, command: str, *args: Any) -> Any:
        """Send one command and wait for its answer (a step's: its warm-up, window and drain)."""
        process = self.process
        if process is None:
            raise GeneratorFailed("the generator was not started")
        try:
            write_frame(process.commands, (command, *args))
            status, value = read_frame(process.replies)
        except (PipeClosed, BrokenPipeError, OSError, ValueError) as exc:
            ended = "ended" if process.ended(1.0) else f"stopped answering ({exc})"
            raise GeneratorFailed(f"the generator process on {socket.gethostname()} {ended}") from None
        if status != "ok":
            raise GeneratorFailed(str(value))
        return value

    async def renew(self) -> None:
        """Renew the generator's lease (a coroutine: answered beside a step in progress)."""
        if self.process is not None:
            try:
                os.write(self.process.lease, b".")
            except OSError:
                pass  # the generator has gone: the next command says so

    async def stop(self) -> bool:
        """End the generator at once, wherever it is (a coroutine: it runs beside a step in
        progress, whose `call` then fails). True when there was one running."""
        process = self.process
        if process is None:
            return False
        running = not process.ended()
        # SIGKILL: nothing of a cancelled step is kept, and the server sees its connections
        # close; a polite stop would wait on the event loop.
        self._end()
        return running

    def _end(self) -> None:
        if self._finalizer is not None:
            self._finalizer()  # kills the generator (if it still runs) and releases its pipes, once
            self._finalizer = None

    def close(self) -> None:
        """End the generator politely after a job: its clients say goodbye to the server."""
        process = self.process
        if process is None:
            return
        try:
            self.call("close")
            process.ended(STOP_GRACE_S)
        except GeneratorFailed:
            pass
        self._end()

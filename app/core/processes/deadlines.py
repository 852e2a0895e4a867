"""Every wait on a helper process has a deadline.

A job's processes, multiprocessing's fork server and its resource tracker are helpers:
any of them can be frozen (SIGSTOP, a debugger, a cgroup freezer) or wedged, and the
stdlib waits on each of them without end. Found from outside: with the fork server
stopped, the next job's `Process.start()` blocked forever in the read of the new pid;
the first SIGTERM only set the cancel flag nobody was polling; the second wrote the
exports and then hung in multiprocessing's exit-time `join()` of a child whose exit
status only the frozen server could report; only SIGKILL ended it, and the stopped
server was left behind for good.

So here every such wait is bounded and answers to cancel:

- `start_process` starts a child on a thread of its own and waits for it in short
  slices: cancel, a fork server stopped for `FROZEN_SECONDS`, or no answer within
  `START_TIMEOUT_SECONDS` kill the fork server (the only way to free a start blocked in
  it), and the start fails naming what stalled. The next start forks a fresh server
  (multiprocessing restarts one it finds dead).
- `stop_process` judges a child gone by its pid (psutil) as well as by the exit status
  the fork server reports, so a frozen server cannot make a dead child look alive (or a
  killed server a live one dead), and hands multiprocessing no child it would wait for
  at exit without end.
- At exit, before multiprocessing's own exit handler joins its children,
  `_exit_without_hanging` stops each one with those bounds and kills a stopped fork
  server or resource tracker, which would otherwise outlive the app, stopped, for good.
"""

from __future__ import annotations

import atexit
import multiprocessing
import multiprocessing.process
import multiprocessing.util  # imported first: its exit handler is then registered before ours, so ours runs first
import os
import signal
import threading
import time
import weakref
from collections.abc import Callable
from multiprocessing.process import BaseProcess

import psutil

from app.core.processes.jobstart import start_method, stop_signals_blocked

#: How long starting one job process may take: the fork server's answer (its first
#: start waits for its preload imports, seconds on a loaded 2-core machine), or a fresh
#: interpreter taking its start-up data.
START_TIMEOUT_SECONDS = 30.0
#: How long a helper may stay stopped (SIGSTOP, a debugger's breakpoint, Ctrl-Z of a
#: process group that is not continued together) before it counts as frozen.
FROZEN_SECONDS = 3.0
#: After cancel, how long a start under way may still finish by itself (a normal start
#: takes milliseconds) before the fork server is killed to free it.
CANCEL_START_GRACE_SECONDS = 0.5
#: A child asked to stop gets this long to exit before it is killed.
TERMINATE_GRACE_SECONDS = 1.0
#: How long a process sent SIGKILL may take to be gone (the kernel frees its memory first).
KILL_WAIT_SECONDS = 5.0
#: The slice every wait here is cut into, between checks of cancel and of the helpers.
POLL_SECONDS = 0.05

#: When each started child was created, by psutil: with its pid, its identity (a pid can be reused).
_created: weakref.WeakKeyDictionary[BaseProcess, float] = weakref.WeakKeyDictionary()


class StartStalled(Exception):
    """A helper did not answer while a job process was starting; str() names which and how long."""


class StartCancelled(Exception):
    """The run was cancelled while a job process was starting; the start was abandoned."""


def is_stopped(pid: int) -> bool:
    """Whether the process is stopped (SIGSTOP, SIGTSTP, a tracer's stop)."""
    try:
        return psutil.Process(pid).status() in (psutil.STATUS_STOPPED, psutil.STATUS_TRACING_STOP)
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False


class StoppedClock:
    """How long each watched pid has been stopped without a break, from repeated looks."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._since: dict[int, float] = {}
        self._clock = clock

    def seconds(self, pid: int) -> float | None:
        """Seconds the process has been seen stopped in a row (None: running now)."""
        now = self._clock()
        if not is_stopped(pid):
            self._since.pop(pid, None)
            return None
        return now - self._since.setdefault(pid, now)

    def frozen(self, pid: int, bound: float) -> bool:
        """Whether the process has now been stopped for `bound` seconds or more."""
        seconds = self.seconds(pid)
        return seconds is not None and seconds >= bound


def stopped_words(seconds: float) -> str:
    return f"was stopped (SIGSTOP or a debugger) for {seconds:g} s"


# --- the fork server ------------------------------------------------------------------------


def fork_server_pid() -> int | None:
    """The pid of this process's fork server (None: none running, or not the start method)."""
    if start_method() != "forkserver":
        return None
    from multiprocessing import forkserver

    pid = getattr(forkserver._forkserver, "_forkserver_pid", None)
    return pid if isinstance(pid, int) else None


def kill_fork_server() -> int | None:
    """Kill the fork server (it runs no job: only later starts need it) and wait until it
    is dead, without reaping it: multiprocessing's next start then finds it dead and forks
    a fresh one. Returns the pid killed (None: there was none)."""
    pid = fork_server_pid()
    if pid is None:
        return None
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return pid
    deadline = time.monotonic() + KILL_WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                break
        except ChildProcessError:
            break  # reaped already: not ours to wait for
        time.sleep(POLL_SECONDS / 5)  # the kernel's own teardown, a few milliseconds
    return pid


def _resource_tracker_pid() -> int | None:
    from multiprocessing import resource_tracker

    pid = getattr(resource_tracker._resource_tracker, "_pid", None)
    return pid if isinstance(pid, int) else None


# --- starting and stopping one child ------------------------------------------------------


def start_process(process: BaseProcess, cancel: threading.Event) -> None:
    """`process.start()` within bounds; StartStalled or StartCancelled when it could not be.

    The stdlib's start has no timeout and cannot be interrupted (it blocks in a read of
    the new pid from the fork server, or a write of the start-up data to a fresh
    interpreter), so it runs on a thread of its own while this one watches. The system
    refusing (OSError, MemoryError, an EOFError from a fork server that died) is raised
    as is, for the caller to name."""
    outcome: list[BaseException | None] = []

    def start() -> None:
        try:
            with stop_signals_blocked():  # the mask a spawned child inherits is this thread's
                process.start()
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread, which raises it
            outcome.append(exc)
        else:
            outcome.append(None)

    thread = threading.Thread(target=start, name=f"start-{process.name}", daemon=True)
    thread.start()
    try:
        problem = _watch_start(thread, cancel)
    except BaseException:  # a second stop signal (KeyboardInterrupt) while the start waits
        _free_start(thread, process)
        raise
    if problem is not None:
        _free_start(thread, process)
        if problem == "":
            raise StartCancelled("cancelled while the process was starting")
        raise StartStalled(problem)
    error = outcome[0] if outcome else None
    if error is not None:
        raise error
    if process.pid is not None:
        try:
            _created[process] = psutil.Process(process.pid).create_time()
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass  # gone already: the pipe's EOF says so


def _watch_start(thread: threading.Thread, cancel: threading.Event) -> str | None:
    """Wait for the start; None when it ended, "" when cancelled, else what stalled."""
    server = fork_server_pid()
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    cancelled_at: float | None = None
    stopped = StoppedClock()
    while True:
        thread.join(POLL_SECONDS)
        if not thread.is_alive():
            return None
        now = time.monotonic()
        if cancel.is_set():
            cancelled_at = cancelled_at or now
            if now - cancelled_at >= CANCEL_START_GRACE_SECONDS:
                return ""
            continue
        server = fork_server_pid() or server
        if server is not None and stopped.frozen(server, FROZEN_SECONDS):
            return f"the fork server (pid {server}) {stopped_words(FROZEN_SECONDS)}; it was killed"
        if now >= deadline:
            what = "the fork server" if server is not None else "the new process"
            return f"{what} did not answer within {START_TIMEOUT_SECONDS:g} s"


def _free_start(thread: threading.Thread, process: BaseProcess) -> None:
    """End a start that is still blocked: killing the fork server closes every pipe and
    socket the start waits on. A process that got started meanwhile is stopped again."""
    if thread.is_alive():
        kill_fork_server()
        thread.join(KILL_WAIT_SECONDS)
    if getattr(process, "_popen", None) is not None and process.pid is not None:
        stop_process(process)


def is_running(process: BaseProcess) -> bool:
    """Whether the child still runs, by its pid: a frozen fork server never reports a
    child's exit (it looks alive for ever), a killed one reports every child as ended."""
    if process.pid is None:
        return False
    created = _created.get(process)
    if created is None:
        return process.is_alive()
    try:
        found = psutil.Process(process.pid)
        return found.status() != psutil.STATUS_ZOMBIE and abs(found.create_time() - created) < 0.01
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return False
    except psutil.AccessDenied:
        return process.is_alive()


def _wait_gone(process: BaseProcess, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while is_running(process) and time.monotonic() < deadline:
        if process.exitcode is None:
            process.join(POLL_SECONDS)  # returns at once when the exit is reported
        else:
            time.sleep(POLL_SECONDS)  # reported ended (its fork server died) but its pid lives on


def _signal(process: BaseProcess, signum: int) -> None:
    if process.pid is not None and is_running(process):
        try:
            os.kill(process.pid, signum)
        except ProcessLookupError:
            pass


#: How long a child gone by its pid may take to have its exit reported by its fork server.
EXIT_REPORT_SECONDS = 1.0


def stop_process(process: BaseProcess) -> int | None:
    """Make sure a child is gone: SIGTERM, a moment's grace, then SIGKILL, each wait
    bounded. Returns its exit code (None: unknown, its fork server frozen or killed)."""
    if process.pid is None:
        return None
    if is_running(process):
        _signal(process, signal.SIGTERM)
        _wait_gone(process, TERMINATE_GRACE_SECONDS)
    if is_running(process):
        _signal(process, signal.SIGKILL)
        _wait_gone(process, KILL_WAIT_SECONDS)
    if process.exitcode is None:
        # Gone by its pid, but its fork server (which reaps it) may not have reported the
        # exit yet: a bounded wait for it, so that a death from outside (SIGKILL) is named
        # by its signal rather than lost behind the peer's "connection closed".
        process.join(EXIT_REPORT_SECONDS)
    exitcode: int | None = process.exitcode
    if exitcode is not None:
        process.close()
    else:
        forget(process)
    return exitcode


def forget(process: BaseProcess) -> None:
    """Take a child multiprocessing cannot see end (its exit status lies with a frozen or
    dead fork server) off the list its exit handler joins without a timeout."""
    children = getattr(multiprocessing.process, "_children", None)
    if isinstance(children, set):
        children.discard(process)


# --- the exit path ----------------------------------------------------------------------------


def _exit_without_hanging() -> None:
    """Runs at exit before multiprocessing's own handler (atexit runs handlers last-in,
    first-out): every child left is stopped within the bounds above, and a stopped fork
    server or resource tracker is killed (a running one ends by itself when this process's
    end closes its pipe; a stopped one would stay, stopped, for good)."""
    for process in multiprocessing.active_children():
        if process.daemon or (process.pid is not None and is_stopped(process.pid)):
            stop_process(process)
    for pid in (fork_server_pid(), _resource_tracker_pid()):
        if pid is not None and is_stopped(pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


atexit.register(_exit_without_hanging)

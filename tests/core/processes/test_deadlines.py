"""The bounds on every wait on a helper process (app.core.processes.deadlines, app.core.processes.watchdog)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from app.core.processes import deadlines, watchdog
from app.core.processes.deadlines import StoppedClock, is_stopped, start_process, stop_process
from app.core.processes.jobstart import child_context
from app.core.processes.watchdog import FrozenWatch

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGSTOP is POSIX")


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
    yield proc
    for signum in (signal.SIGCONT, signal.SIGKILL):
        try:
            os.kill(proc.pid, signum)
        except ProcessLookupError:
            break
    proc.wait()


def test_a_stopped_process_is_seen_stopped_and_a_continued_one_running(sleeper: subprocess.Popen[bytes]) -> None:
    assert not is_stopped(sleeper.pid)
    sleeper.send_signal(signal.SIGSTOP)
    os.waitid(os.P_PID, sleeper.pid, os.WSTOPPED | os.WNOWAIT)  # until the kernel has stopped it
    assert is_stopped(sleeper.pid)
    sleeper.send_signal(signal.SIGCONT)
    os.waitid(os.P_PID, sleeper.pid, os.WCONTINUED | os.WNOWAIT)
    assert not is_stopped(sleeper.pid)


def test_the_stopped_clock_counts_from_the_first_look_and_resets_on_continue(
    sleeper: subprocess.Popen[bytes],
) -> None:
    now = [100.0]
    clock = StoppedClock(clock=lambda: now[0])
    assert clock.seconds(sleeper.pid) is None
    sleeper.send_signal(signal.SIGSTOP)
    os.waitid(os.P_PID, sleeper.pid, os.WSTOPPED | os.WNOWAIT)
    assert clock.seconds(sleeper.pid) == 0.0  # first seen now
    now[0] = 102.5
    assert clock.seconds(sleeper.pid) == 2.5
    sleeper.send_signal(signal.SIGCONT)
    os.waitid(os.P_PID, sleeper.pid, os.WCONTINUED | os.WNOWAIT)
    assert clock.seconds(sleeper.pid) is None
    now[0] = 110.0
    assert not clock.frozen(sleeper.pid, 0.0)  # a new stop would count afresh


def test_the_watch_kills_a_process_stopped_past_the_bound(
    sleeper: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(watchdog, "FROZEN_SECONDS", 0.0)
    watch = FrozenWatch({"worker": sleeper.pid})
    watch.look()
    assert watch.frozen is None  # running: nothing to say
    sleeper.send_signal(signal.SIGSTOP)
    os.waitid(os.P_PID, sleeper.pid, os.WSTOPPED | os.WNOWAIT)
    watch.look()
    assert (
        watch.frozen
        == f"the worker process (pid {sleeper.pid}) was stopped (SIGSTOP or a debugger) for 0 s; it was killed"
    )
    assert sleeper.wait(5) == -signal.SIGKILL
    assert watch.processes == {}


def test_a_start_that_cannot_make_its_thread_fails_like_a_refused_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_thread(self: threading.Thread) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", no_thread)
    process = child_context().Process(target=int, daemon=True)
    with pytest.raises(RuntimeError, match="can't start new thread"):
        start_process(process, threading.Event())
    assert process.pid is None


def test_an_error_inside_the_start_reaches_the_caller(monkeypatch: pytest.MonkeyPatch) -> None:
    from multiprocessing.process import BaseProcess

    def refuse(self: BaseProcess) -> None:
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(BaseProcess, "start", refuse)
    with pytest.raises(OSError, match="Too many open files"):
        start_process(child_context().Process(target=int, daemon=True), threading.Event())


def test_stop_process_stops_a_live_child_and_reports_its_exit() -> None:
    import time

    process = child_context().Process(target=time.sleep, args=(600,), daemon=True)
    start_process(process, threading.Event())
    assert deadlines.is_running(process)
    assert stop_process(process) == -signal.SIGTERM

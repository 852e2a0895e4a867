"""SIGINT, SIGTERM and SIGHUP stop the window's run and close it as Quit does.

End to end: the real window (`python -m app gui --profile FILE --run`, offscreen) runs a
job that would take minutes; the signal arrives mid-job; the app exits with 128 + the
signal's number, the store records the run as cancelled, and no job process is left.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from app.core.processes.jobstart import job_processes
from app.core.store.store import Store
from app.gui.stop_signals import SignalStop
from tests.helpers.processes import popen, signals_at_default, wait_exited

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

LONG_JOB = {
    "name": "long",
    "jobs": [{"scheme": "sha256", "message_sizes": [64], "samples": 1_000_000, "warmup": 0, "pause_ms": 1}],
}


def test_the_stopper_calls_back_on_the_gui_thread_and_gives_the_signals_back(qtbot: Any) -> None:
    with signals_at_default(signal.SIGTERM):  # as a fresh shell starts the app, whatever ran the suite
        before = signal.getsignal(signal.SIGTERM)
        seen: list[int] = []
        stopper = SignalStop(seen.append)
        try:
            assert signal.SIGTERM in stopper.handled
            os.kill(os.getpid(), signal.SIGTERM)
            qtbot.waitUntil(lambda: seen == [signal.SIGTERM], timeout=5000)
            os.kill(os.getpid(), signal.SIGTERM)  # a second signal while stopping changes nothing
            qtbot.wait(50)
            assert seen == [signal.SIGTERM]
        finally:
            stopper.uninstall()
        assert signal.getsignal(signal.SIGTERM) == before


def test_a_signal_ignored_at_start_stays_ignored(qtbot: Any) -> None:
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as under nohup
    try:
        stopper = SignalStop(lambda signum: None)
        try:
            assert signal.SIGHUP not in stopper.handled
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        finally:
            stopper.uninstall()
    finally:
        signal.signal(signal.SIGHUP, previous)


@pytest.mark.parametrize(
    "signum",
    # SIGTERM stands for the three in make test: the same handler takes each (the other two: test-all).
    [
        signal.SIGTERM,
        pytest.param(signal.SIGHUP, marks=pytest.mark.exhaustive),
        pytest.param(signal.SIGINT, marks=pytest.mark.exhaustive),
    ],
    ids=["TERM", "HUP", "INT"],
)
def test_the_window_stops_its_run_and_exits(qtbot: Any, tmp_path: Path, isolated_home: Path, signum: int) -> None:
    profile = tmp_path / "long.json"
    profile.write_text(json.dumps(LONG_JOB))
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    proc = popen(
        [sys.executable, "-m", "app", "gui", "--profile", str(profile), "--run"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    app = psutil.Process(proc.pid)
    try:
        qtbot.waitUntil(lambda: proc.poll() is not None or bool(job_processes(app)), timeout=60_000)
        assert proc.poll() is None, proc.communicate()
        workers = job_processes(app)
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signum, stderr
    assert "Traceback" not in stderr
    assert wait_exited(workers, timeout=10) == []
    with Store(isolated_home / "results.sqlite3") as store:
        (summary,) = store.list_runs()
        assert summary.status == "cancelled"

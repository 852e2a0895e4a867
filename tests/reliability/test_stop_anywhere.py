"""Stop pressed at any moment: before spawn, with only the receiver up, during the
handshake, mid-stream, during the store write. Each time: no process left, the job
marked cancelled (or whole, if it had finished), the store consistent with the run,
and no half-written file."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import psutil
import pytest

from app.core.contracts.events import JobProcesses, JobStarted, Progress, SampleBatch
from app.core.profile.files import parse_profile
from app.core.run.runner import Runner
from app.core.store.store import Store
from tests.helpers.paths import ROOT
from tests.helpers.processes import popen

FIRST = {"scheme": "sha256", "message_sizes": [64], "samples": 3, "warmup": 0}
LOOPBACK = {"scheme": "x25519", "mode": "loopback", "message_sizes": [1024, 2048], "samples": 1_000_000, "warmup": 0}
LAST = {"scheme": "sha256", "message_sizes": [128], "samples": 3, "warmup": 0}


def _moment(name: str, cancel: threading.Event, pids: set[int]) -> Any:
    """An event handler that presses Stop at the named moment of the loopback job (job 1)."""

    def on_event(event: Any) -> None:
        if isinstance(event, JobProcesses):
            pids.update(event.pids.values())
        if getattr(event, "job_index", None) != 1 or cancel.is_set():
            return
        if (
            name == "receiver up, sender not spawned"
            and isinstance(event, JobProcesses)
            and set(event.pids) == {"receiver"}
        ):
            cancel.set()
        elif name == "handshake" and isinstance(event, JobStarted):
            cancel.set()  # the sender was just spawned: it is connecting and authenticating
        elif name == "mid-stream" and isinstance(event, (SampleBatch, Progress)):
            cancel.set()

    return on_event


@pytest.mark.parametrize("moment", ["receiver up, sender not spawned", "handshake", "mid-stream"])
def test_stop_during_a_loopback_job(tmp_path: Path, moment: str) -> None:
    cancel, pids = threading.Event(), set[int]()
    profile = parse_profile({"name": "stop", "jobs": [FIRST, LOOPBACK, LAST]})
    with Store(tmp_path / "r.sqlite3") as store:
        run = Runner(profile, store=store, on_event=_moment(moment, cancel, pids), cancel=cancel).run()
        stored = store.load_run(run.id)
        assert store.integrity_problems() == []
    assert cancel.is_set(), f"the moment {moment!r} never came"
    assert [job.status for job in run.jobs] == ["ok", "cancelled", "cancelled", "cancelled"]
    assert run.jobs[1].error == "cancelled by the user"
    assert run.jobs[3].error == "cancelled before start"
    assert run.status == stored.status == "cancelled"
    assert [(j.index, j.status) for j in stored.jobs] == [(j.index, j.status) for j in run.jobs]
    assert pids and not any(
        psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE for pid in pids
    )


def test_stop_before_anything_is_spawned(tmp_path: Path) -> None:
    cancel = threading.Event()
    cancel.set()
    spawned: list[Any] = []
    profile = parse_profile({"name": "stop", "jobs": [FIRST, LOOPBACK]})
    with Store(tmp_path / "r.sqlite3") as store:
        run = Runner(
            profile,
            store=store,
            cancel=cancel,
            on_event=lambda e: spawned.append(e) if isinstance(e, JobProcesses) else None,
        ).run()
        stored = store.load_run(run.id)
    assert spawned == []
    assert {job.status for job in run.jobs} == {"cancelled"} and stored.status == "cancelled"
    assert len(stored.jobs) == 3


def test_stop_during_the_store_write_keeps_that_job_whole(tmp_path: Path) -> None:
    """Stop arriving while a finished job is being written: the write completes (one
    transaction), that job stays ok, the rest are cancelled."""
    cancel = threading.Event()
    profile = parse_profile({"name": "stop", "jobs": [FIRST, LAST]})
    with Store(tmp_path / "r.sqlite3") as store:
        original = store.add_job

        def add_job_then_stop(run_id: str, job: Any) -> None:
            cancel.set()  # pressed while this job's row is written
            original(run_id, job)

        store.add_job = add_job_then_stop  # type: ignore[method-assign]
        run = Runner(profile, store=store, cancel=cancel).run()
        stored = store.load_run(run.id)
    assert [job.status for job in run.jobs] == ["ok", "cancelled"]
    assert [job.status for job in stored.jobs] == ["ok", "cancelled"]
    assert stored.jobs[0].metrics.keys() == run.jobs[0].metrics.keys()
    assert stored.status == "cancelled"


@pytest.mark.parametrize(
    "target", [pytest.param("the CLI", marks=pytest.mark.exhaustive), "its process group (a terminal's Ctrl-C)"]
)
def test_ctrl_c_keeps_finished_jobs_in_the_exports(tmp_path: Path, target: str) -> None:
    """The CLI's Stop is Ctrl-C: exit 130, and the JSON and CSV exports are complete files
    holding the finished job, never half of one. A terminal sends SIGINT to every process
    in the group: the job's children must not print tracebacks of their own."""
    profile_file = tmp_path / "p.json"
    profile_file.write_text(json.dumps({"name": "ctrl-c", "jobs": [FIRST, LOOPBACK]}))
    export_json, export_csv = tmp_path / "out.json", tmp_path / "out.csv"
    proc = popen(
        [
            sys.executable,
            "-m",
            "app",
            "run",
            str(profile_file),
            "--no-store",
            "--json",
            str(export_json),
            "--csv",
            str(export_csv),
            "--quiet",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("ok "):
                break
        if target == "the CLI":
            proc.send_signal(signal.SIGINT)
        else:
            os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "stopped by Ctrl-C after 1 of 3 jobs" in err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    jobs = json.loads(export_json.read_text())["jobs"]
    assert [job["status"] for job in jobs] == ["ok", "cancelled", "cancelled"]
    assert export_csv.read_text().count("\n") >= 2
    assert not list(tmp_path.glob(".out.*"))  # no temporary file left by an interrupted write


@pytest.mark.parametrize("moment", ["right after Run", "first sample"])
def test_window_stop_at_any_moment_leaves_no_process(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, moment: str
) -> None:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMessageBox

    from app.gui.main_window import MainWindow

    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    window = MainWindow(
        settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat), store_path=tmp_path / "r.sqlite3"
    )
    qtbot.addWidget(window)
    window.show()
    try:
        window.panel.set_checked("x25519")
        window.panel.mode.setCurrentIndex(window.panel.mode.findData("loopback"))
        window.panel.samples.setValue(1_000_000)
        pids: set[int] = set()
        streamed: list[Any] = []

        def watch(events: list[Any]) -> None:
            for event in events:
                if isinstance(event, JobProcesses):
                    pids.update(event.pids.values())
                if isinstance(event, SampleBatch):
                    streamed.append(event)

        window.controller.events.connect(watch)
        window.ask = lambda title, text: True  # type: ignore[method-assign]  # a million samples asks first
        assert window.start_run()
        if moment == "first sample":
            qtbot.waitUntil(lambda: bool(streamed), timeout=60_000)
        with qtbot.waitSignal(window.controller.run_finished, timeout=60_000) as finished:
            window.stop_run()
        run = finished.args[0]
        assert run.status == "cancelled" and {job.status for job in run.jobs} == {"cancelled"}
        with Store(tmp_path / "r.sqlite3") as store:
            assert store.load_run(run.id).status == "cancelled"
        for pid in pids:
            assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
        assert window.run_action.isEnabled()
    finally:
        window.controller.shutdown()

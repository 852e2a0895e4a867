"""A full disk or a read-only folder when saving a profile, exporting or writing the
store: a clear error naming the file and the cause, the previous file untouched, no
temporary file left behind, and a run that goes on when its store fails.

Two kinds of fault: simulated (the write raises ENOSPC, EROFS or EACCES where the OS
would) for every writer, and real (a file-size limit set with RLIMIT_FSIZE, which the
kernel enforces even for root) for the command line and the SQLite store.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import app.core.fileio as fileio
from app.core.fileio import FileWriteError
from app.core.profile.files import parse_profile, save_profile
from app.core.run.runner import Runner
from app.core.store.store import Store
from app.report.exporters import export
from tests.helpers.paths import ROOT
from tests.helpers.report_runs import build_run


def hand_run() -> Any:
    return build_run("20260101-000000-abcdef", "2026-01-01T00:00:00+00:00")


OLD = "the previous, complete file\n"

FAULTS = {
    "disk full": (errno.ENOSPC, "write"),
    "read-only file system": (errno.EROFS, "create"),
    "permission denied": (errno.EACCES, "create"),
}


def _inject(monkeypatch: pytest.MonkeyPatch, fault: str) -> None:
    """Make the next atomic write fail as the OS would: at create time for a read-only
    or forbidden folder, at flush time for a full disk (after the temporary file exists)."""
    code, where = FAULTS[fault]
    error = OSError(code, os.strerror(code))

    if where == "create":

        def refuse(*args: Any, **kwargs: Any) -> Any:
            raise error

        monkeypatch.setattr(fileio, "_open_new", refuse)
    else:

        def full(fd: int) -> None:
            raise error

        monkeypatch.setattr(fileio.os, "fsync", full)


def _writers() -> dict[str, Callable[[Path], None]]:
    run = hand_run()
    profile = parse_profile({"name": "p", "jobs": [{"scheme": "sha256", "message_sizes": [64]}]})
    return {
        "profile": lambda path: save_profile(profile, path),
        "JSON export": lambda path: export("json", run, path),
        "CSV export": lambda path: export("csv", run, path),
        "Markdown report": lambda path: export("markdown", run, path),
        "PDF report": lambda path: export("pdf", run, path),
    }


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("writer", sorted(_writers()))
def test_failed_write_names_the_file_and_keeps_the_previous_one(
    qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, writer: str, fault: str
) -> None:
    target = tmp_path / "target.out"
    target.write_text(OLD)
    _inject(monkeypatch, fault)
    with pytest.raises(OSError, match=r"target\.out") as info:
        _writers()[writer](target)
    message = str(info.value)
    assert str(target) in message
    assert os.strerror(FAULTS[fault][0]) in message
    assert target.read_text() == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["target.out"]  # no temporary file left


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_window_save_and_export_show_the_error_and_keep_the_file(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMessageBox

    from app.gui.main_window import MainWindow

    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    window = MainWindow(
        settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat), store_path=tmp_path / "r.sqlite3"
    )
    qtbot.addWidget(window)
    window.panel.set_checked("sha256")
    profile_file, export_file = tmp_path / "p.json", tmp_path / "out.csv"
    profile_file.write_text(OLD)
    export_file.write_text(OLD)
    _inject(monkeypatch, fault)
    try:
        assert window._write_profile(profile_file) is False
        assert window.last_error is not None and str(profile_file) in window.last_error[1]
        assert "previous file is untouched" in window.last_error[2]
        assert window.is_modified()  # still unsaved: the title keeps its asterisk
        assert window.write_export(hand_run(), export_file, "csv") is False
        assert window.last_error is not None and str(export_file) in window.last_error[1]
        assert profile_file.read_text() == OLD and export_file.read_text() == OLD
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []
    finally:
        window.controller.shutdown()


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() == 0,
    reason="root writes into read-only folders; the simulated EACCES/EROFS cases cover it",
)
def test_real_read_only_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    target = folder / "p.json"
    target.write_text(OLD)
    folder.chmod(0o555)
    try:
        with pytest.raises(FileWriteError) as info:
            save_profile(parse_profile({"name": "p", "jobs": [{"scheme": "sha256"}]}), target)
        assert str(target) in str(info.value) and "ermission" in str(info.value)
        assert target.read_text() == OLD
    finally:
        folder.chmod(0o755)


# --- real limits: RLIMIT_FSIZE makes the kernel refuse writes past a size (EFBIG) -------

LIMITED = """
import resource, runpy, signal, sys
if __name__ == "__main__":  # spawned children import this file again: only the CLI runs it
    limit = int(sys.argv.pop(1))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of being killed
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    sys.argv[0] = "cryptobench"
    runpy.run_module("app", run_name="__main__")
"""


def _limited_cli(tmp_path: Path, limit: int, *args: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "limited.py"
    script.write_text(LIMITED)
    return subprocess.run(
        [sys.executable, str(script), str(limit), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


SAMPLED_JOBS = [{"scheme": "sha256", "message_sizes": [64 + k], "samples": 300, "warmup": 0} for k in range(8)]
#: 24 stored results of ~3 KB each (statistics and metadata; a few samples): the store
#: passes 64 KiB about halfway, in a few seconds (every sample takes ~2 ms of batching,
#: so filling the store with samples instead took 10 s).
STORE_FILL_JOBS = [
    {"scheme": "sha256", "message_sizes": [64 + k, 128 + k, 256 + k], "samples": 20, "warmup": 0} for k in range(8)
]
STORE_FILL_RESULTS = sum(len(job["message_sizes"]) for job in STORE_FILL_JOBS)


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_cli_export_past_the_size_limit_keeps_the_previous_file(tmp_path: Path) -> None:
    profile = tmp_path / "p.json"
    profile.write_text(json.dumps({"name": "limited", "jobs": SAMPLED_JOBS[:2]}))
    export_file = tmp_path / "out.json"
    export_file.write_text(OLD)
    proc = _limited_cli(tmp_path, 16 * 1024, "run", str(profile), "--no-store", "--quiet", "--json", str(export_file))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"cryptobench: error: {export_file}: cannot write: File too large")
    assert "Traceback" not in proc.stderr
    assert export_file.read_text() == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["limited.py", "out.json", "p.json"]


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_FSIZE is POSIX")
def test_store_full_mid_run_the_run_goes_on_and_nothing_is_lost(tmp_path: Path) -> None:
    """The store hits the limit after a few jobs: the CLI says so, finishes every job,
    exports all of them (the export file is small enough), exits 1; the store stays sound
    and holds the jobs written before it filled."""
    store_path = tmp_path / "r.sqlite3"
    Store(store_path).close()
    profile = tmp_path / "p.json"
    profile.write_text(json.dumps({"name": "store-full", "jobs": STORE_FILL_JOBS}))
    csv_file = tmp_path / "out.csv"  # no samples in CSV: it fits under the limit
    proc = _limited_cli(
        tmp_path, 64 * 1024, "run", str(profile), "--store", str(store_path), "--quiet", "--csv", str(csv_file)
    )
    assert proc.returncode == 1, proc.stderr
    output = " ".join((proc.stdout + proc.stderr).split())  # the console wraps long lines
    assert "cannot write the results store" in output and "NOT all stored" in output
    assert "Traceback" not in output
    exported = csv_file.read_text().splitlines()
    assert sum(1 for line in exported[1:] if ",ok," in line) >= STORE_FILL_RESULTS  # every job, measured
    with Store(store_path) as store:
        assert store.integrity_problems() == []
        (summary,) = store.list_runs()
        stored = store.load_run(summary.id)
    assert 0 < len(stored.jobs) < STORE_FILL_RESULTS, "the limit should cut the store mid-run"
    assert all(job.status == "ok" and job.metrics for job in stored.jobs)


def test_runner_keeps_results_when_the_store_fails(tmp_path: Path, isolated_home: Path) -> None:
    """In-process view of the same: the error is one log line, the run completes."""
    from app.core.contracts.events import LogMessage
    from app.core.results.model import load_results_file
    from app.core.store.store import StoreError

    logs: list[str] = []
    with Store(tmp_path / "r.sqlite3") as store:

        def full(run_id: str, job: Any) -> None:
            raise StoreError(f"{store.path}: cannot write the results store: database or disk is full")

        store.add_job = full  # type: ignore[method-assign]
        profile = parse_profile(
            {"name": "p", "jobs": [{**job, "message_sizes": job["message_sizes"][:1]} for job in STORE_FILL_JOBS[:3]]}
        )
        runner = Runner(
            profile, store=store, on_event=lambda e: logs.append(e.text) if isinstance(e, LogMessage) else None
        )
        run = runner.run()
    assert [job.status for job in run.jobs] == ["ok", "ok", "ok"]
    assert runner.store_error and "disk is full" in runner.store_error
    assert sum("disk is full" in line for line in logs) == 1
    # Nothing lost locally: the whole run kept in a results file, and the log says where.
    assert runner.kept_file is not None and runner.kept_file.parent == isolated_home / "unstored"
    assert [job.status for job in load_results_file(runner.kept_file).jobs] == ["ok", "ok", "ok"]
    assert any(f"kept in {runner.kept_file}; `cryptobench import" in line for line in logs)
    with sqlite3.connect(tmp_path / "r.sqlite3") as db:  # the run row exists, marked running→left as is
        assert db.execute("SELECT COUNT(*) FROM jobs").fetchone()[0] == 0

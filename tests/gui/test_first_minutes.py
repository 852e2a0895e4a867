"""What a new user meets first: presets with their durations, a long-run question, an
honest ETA, a log that follows and filters, open errors that name every problem, Save
As that names the profile after its file (pytest-qt, offscreen, no run)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QFileDialog, QMessageBox

from app.core.profile.files import load_profile, read_profile_file
from app.core.results.store import Store
from app.gui.eta import estimate
from app.gui.log_view import LogView
from app.gui.main_window import MainWindow


@pytest.fixture
def window(qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> MainWindow:
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings, store_path=tmp_path / "store.sqlite3")
    qtbot.addWidget(win)
    yield win
    win.controller.shutdown()


def _store_quick_run(path: Path, seconds: int) -> None:
    from tests.helpers.report_runs import build_run

    run = build_run("20261120-090400-abcdef", "2026-11-20T09:04:00+00:00")
    run = replace(run, profile={**run.profile, "name": "quick"}) if isinstance(run.profile, dict) else run
    with Store(path) as store:
        store.begin_run(run)
        store.finish_run(run.id, "finished", f"2026-11-20T09:{4 + seconds // 60:02d}:{seconds % 60:02d}+00:00")


def test_presets_menu_says_what_each_measures_and_how_long_it_took(window: MainWindow) -> None:
    window._fill_presets_menu()
    actions = {action.data(): action for action in window.presets_menu.actions()}
    quick = load_profile("quick")
    assert quick.description in actions["quick"].toolTip()
    assert "not run here yet" in actions["quick"].text()
    _store_quick_run(window.store_path, 14)
    window._fill_presets_menu()
    quick_action = next(a for a in window.presets_menu.actions() if a.data() == "quick")
    assert "took 14 s here last time" in quick_action.text()


def test_a_run_that_took_minutes_asks_first(window: MainWindow) -> None:
    _store_quick_run(window.store_path, 400)
    window.open_preset("quick")
    asked: list[str] = []
    window.ask = lambda title, text: asked.append(text) is not None and False  # type: ignore[method-assign]
    assert window.start_run() is False
    assert "6 min 40 s" in asked[0] and not window.controller.running


def test_eta_counts_the_running_job() -> None:
    # 10 s job, a tenth done after 1 s, nothing after it: about 9 s left, never 0.
    eta = estimate(elapsed=5.0, finished=4, total=5, current_elapsed=1.0, current_fraction=0.1)
    assert eta.seconds == pytest.approx(9.0) and eta.text == "about 9 s left"
    # The last job has no progress and runs longer than the others took: no "0 s".
    eta = estimate(elapsed=14.0, finished=4, total=5, current_elapsed=10.0, current_fraction=0.0)
    assert eta.seconds is None and eta.text == "current job running for 10 s"
    # Jobs still waiting after it are counted at the others' pace.
    eta = estimate(elapsed=4.0, finished=2, total=10, current_elapsed=0.0, current_fraction=0.5)
    assert eta.seconds == pytest.approx(7 * 2.0)


def test_log_follows_new_lines_and_filters_by_level(qtbot: Any) -> None:
    log = LogView()
    qtbot.addWidget(log)
    log.resize(400, 200)
    for k in range(300):
        log.append("error" if k % 50 == 0 else "info", f"line {k}")
    bar = log.text.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()
    log.level.setCurrentIndex(log.level.findData("error"))
    assert len(log.shown_lines()) == 6 and all("ERROR" in line for line in log.shown_lines())
    log.level.setCurrentIndex(log.level.findData("info"))
    assert len(log.shown_lines()) == 300
    bar.setValue(0)  # scrolled up to read: stop following
    assert not log.follow.isChecked()
    log.append("info", "newer")
    assert bar.value() == 0


def test_an_invalid_profile_names_every_problem_and_fitting_advice(window: MainWindow, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            {
                "name": "bad",
                "jobs": [{"scheme": "sha256", "samples": 0}, {"scheme": "aes-gcm"}, {"scheme": "no-such-scheme"}],
            }
        )
    )
    assert not window.open_profile(bad, ask=False)
    _title, message, advice = window.last_error
    assert "jobs[0].samples" in message and "jobs[2]" in message and "2 problems" in message
    assert "Fix the fields named above" in advice
    broken = tmp_path / "broken.json"
    broken.write_text('{"name": "x", "jobs": [')
    assert not window.open_profile(broken, ask=False)
    _, message, advice = window.last_error
    assert "not valid JSON" in message and "field" not in advice


def test_save_as_names_the_profile_after_its_file(
    window: MainWindow, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    window.open_preset("quick")
    target = tmp_path / "my-smoke-test.json"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    assert window.save_profile_as()
    assert read_profile_file(target).name == "my-smoke-test"
    assert window.windowTitle().startswith("my-smoke-test.json")


def test_a_profile_never_run_here_is_estimated_from_the_same_jobs_in_earlier_runs(tmp_path: Path) -> None:
    from app.core.profile.files import parse_profile
    from app.core.profile.resolve import resolve_jobs
    from app.core.results.model import JobResult
    from app.gui.config.presets import PresetEntry, estimate, long_run_warning, measured_jobs
    from tests.helpers import records

    profile = parse_profile(
        {"name": "mine", "jobs": [{"scheme": "sha256", "message_sizes": [1024, 4096], "samples": 40, "warmup": 0}]}
    )
    job = resolve_jobs(profile)[0]
    samples = [1e-6] * 20

    def result(index: int, size: int, finished: str) -> JobResult:
        return records.job(
            "r",
            index,
            size,
            {"hash": samples},
            scheme=job.scheme,
            backend=job.backend,
            params=job.params,
            label="SHA-256",
            family="hash",
            finished=finished,
        )

    run = records.run(
        "20261120-090000-aaaaaa",
        [result(0, 1024, "2026-11-20T09:00:03+00:00")],
        started="2026-11-20T09:00:00+00:00",
        status="running",
        name="other",
    )  # 3 s for 20 samples
    path = tmp_path / "store.sqlite3"
    with Store(path) as store:
        store.begin_run(run)
        store.add_job(run.id, run.jobs[0])
        store.finish_run(run.id, "finished", "2026-11-20T09:00:04+00:00")
    seconds, known = estimate(profile, measured_jobs(path))
    assert known == 1 and seconds == pytest.approx(6.0)  # 40 samples at the 20-sample job's pace
    entry = PresetEntry("mine", "", 2, 80, None, (seconds, known))
    assert entry.expected() == "over 6 s here (1 of 2 jobs measured before)"
    assert long_run_warning(profile, path) is None  # minutes, not seconds, ask first

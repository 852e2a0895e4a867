"""What a new user meets first: presets with their durations, a long-run question, an
honest ETA, a log that follows and filters, open errors that name every problem, Save
As that names the profile after its file (pytest-qt, offscreen, no run)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QFileDialog

from app.core.profile.files import load_profile, read_profile_file
from app.core.run.estimate import LONG_RUN_S, JobEstimate, Refined, RunEstimate
from app.core.store.store import Store
from app.gui.eta import estimate, time_left
from app.gui.log_view import LogView
from app.gui.main_window import MainWindow
from tests.helpers.windows import opened_window


@pytest.fixture
def window(qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MainWindow]:
    with opened_window(qtbot, tmp_path, monkeypatch=monkeypatch) as win:
        yield win


def _store_quick_run(path: Path, seconds: int) -> None:
    from tests.helpers.report_runs import build_run

    run = build_run("20261120-090400-abcdef", "2026-11-20T09:04:00+00:00")
    run = replace(run, profile={**run.profile, "name": "quick"}) if isinstance(run.profile, dict) else run
    with Store(path) as store:
        store.begin_run(run)
        store.finish_run(run.id, "finished", f"2026-11-20T09:{4 + seconds // 60:02d}:{seconds % 60:02d}+00:00")


def test_presets_menu_says_what_each_measures_and_how_long_it_will_take(window: MainWindow) -> None:
    window._fill_presets_menu()
    actions = {action.data(): action for action in window.presets_menu.actions()}
    quick = load_profile("quick")
    assert quick.description in actions["quick"].toolTip()
    for action in actions.values():  # a range or "about N", from the estimate; never "over under 1 s"
        time_said = action.text().split("\t")[1]
        assert time_said.endswith("here (estimated)") and "over" not in time_said, time_said
    # pq-over-links waits out seconds-long round trips: minutes, not "over 31 s".
    assert "min" in actions["pq-over-links"].text().split("\t")[1]
    assert "70 jobs" in actions["pq-over-links"].toolTip()  # 10 jobs, each over 7 links
    _store_quick_run(window.store_path, 14)
    window._fill_presets_menu()
    quick_action = next(a for a in window.presets_menu.actions() if a.data() == "quick")
    assert "took 14 s here last time" in quick_action.toolTip()


def _guess(seconds: float, high: float) -> RunEstimate:
    return RunEstimate((JobEstimate("job", seconds, seconds * 0.75, high),), start_s=0.0)


@pytest.mark.parametrize(("high", "asks"), [(LONG_RUN_S + 1, True), (LONG_RUN_S - 1, False)])
def test_run_asks_first_when_the_estimates_upper_end_passes_five_minutes(
    window: MainWindow, monkeypatch: pytest.MonkeyPatch, high: float, asks: bool
) -> None:
    window.open_preset("quick")
    monkeypatch.setattr("app.gui.main_window.run_estimate", lambda profile: _guess(high / 1.6, high))
    asked: list[str] = []
    started: list[object] = []
    window.ask = lambda title, text: asked.append(text) is not None and False  # type: ignore[method-assign]
    monkeypatch.setattr(window.controller, "start", lambda *a, **k: started.append(a))
    window.start_run()
    assert bool(asked) is asks and bool(started) is not asks
    if asks:
        assert "estimated to take" in asked[0] and "min" in asked[0]


def test_a_long_run_the_command_line_asked_for_starts_without_a_question_and_logs_why(
    window: MainWindow, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`gui --profile X --run` (scripts, screenshots): a modal question there would block
    the run nobody is at the screen to answer; `cryptobench run` never waits either."""
    window.open_preset("quick")
    monkeypatch.setattr("app.gui.main_window.run_estimate", lambda profile: _guess(600.0, 960.0))
    window.ask = lambda title, text: pytest.fail("asked")  # type: ignore[method-assign]
    started: list[object] = []
    monkeypatch.setattr(window.controller, "start", lambda *a, **k: started.append(a))
    logged: list[str] = []
    monkeypatch.setattr(window, "append_log", lambda level, text: logged.append(text))
    assert window.start_run(asked=True) and started
    assert any("estimated" in line and "started without asking" in line for line in logged), logged


def test_eta_without_an_estimate_counts_the_running_job() -> None:
    # 10 s job, a tenth done after 1 s, nothing after it: about 9 s left, never 0.
    eta = estimate(elapsed=5.0, finished=4, total=5, current_elapsed=1.0, current_fraction=0.1)
    assert eta.seconds == pytest.approx(9.0) and eta.text == "about 9 s left"
    # The last job has no progress and runs longer than the others took: no "0 s".
    eta = estimate(elapsed=14.0, finished=4, total=5, current_elapsed=10.0, current_fraction=0.0)
    assert eta.seconds is None and eta.text == "current job running for 10 s"


def test_eta_with_an_estimate_prices_the_jobs_left_by_their_own_size() -> None:
    # Two 1 s jobs, then 68 of 10 s: at 2 of 70, about 11 min 20 s left, not 2 s x 68 = 2 min.
    jobs = tuple(JobEstimate("small", 1.0, 0.8, 1.5) for _ in range(2)) + tuple(
        JobEstimate("big", 10.0, 8.0, 15.0) for _ in range(68)
    )
    refined = Refined(RunEstimate(jobs, start_s=0.0))
    eta = time_left(refined, elapsed=2.0, finished=2, total=70, current_elapsed=None, current_fraction=0.0)
    assert eta.seconds == pytest.approx(680.0) and eta.text == "about 11 min 20 s left"
    # The finished jobs took twice their estimate: the rest is expected to as well.
    eta = time_left(refined, elapsed=4.0, finished=2, total=70, current_elapsed=None, current_fraction=0.0)
    assert eta.seconds == pytest.approx(1360.0)
    # Before anything finished, the estimate itself, said as one.
    eta = time_left(refined, elapsed=0.0, finished=0, total=70, current_elapsed=None, current_fraction=0.0)
    assert eta.text.endswith("(estimated)") and eta.seconds == pytest.approx(682.0)


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

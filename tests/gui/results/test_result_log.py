"""The window's log says a run-wide warning (CPU frequency scaling) once per run, and not at
all when the run's pre-flight already said it (app/gui/results/result_log.py, app/core/analysis/run_wide.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.contracts.events import JobFinished, RunStarted
from app.core.results.model import RunResult
from app.gui.main_window import MainWindow
from tests.core.analysis.test_run_wide import GOVERNOR_FINDING, _run_with_scaling
from tests.helpers.windows import opened_window


@pytest.fixture
def window(qtbot: Any, tmp_path: Path) -> Iterator[MainWindow]:
    with opened_window(qtbot, tmp_path, forget_run=True) as win:
        yield win


def _log_run(window: MainWindow, run: RunResult) -> list[str]:
    """Feed a run's events to the window as its event buffer would; the lines about the governor."""
    window.controller.run = run  # what RunController.start sets before the events are drained
    window._on_events([RunStarted(run.id, len(run.jobs), run.name), *(JobFinished(job.index, job) for job in run.jobs)])
    window.controller.run = None
    return [line for line in window.log.shown_lines() if "governor" in line]


def test_the_log_says_the_governor_once_per_run(window: MainWindow) -> None:
    run = _run_with_scaling()
    lines = _log_run(window, run)
    assert len(lines) == 1 and "Every measured job of this run: CPU frequency governor is powersave" in lines[0]
    assert len(_log_run(window, run)) == 2  # the next run says it again, once


def test_the_log_leaves_it_to_the_pre_flight(window: MainWindow) -> None:
    run = _run_with_scaling()
    run.environment["stability"] = GOVERNOR_FINDING  # the runner logged the finding at the start
    assert _log_run(window, run) == []


def test_a_repeated_warning_is_logged_once_whole_then_counted_at_the_run_s_end(window: MainWindow) -> None:
    """A reduced run logged one line per metric ("Only 3 samples", sixty times here), which
    buried the one job that saw a busy machine."""
    from tests.helpers.warning_runs import reduced_like_run

    run = reduced_like_run()
    window.controller.run = run
    window._on_events([RunStarted(run.id, len(run.jobs), run.name), *(JobFinished(job.index, job) for job in run.jobs)])
    window.controller.run = None
    window._on_run_finished(run)
    lines = window.log.shown_lines()
    few = [line for line in lines if "Only 3 samples" in line]
    assert len(few) == 2 and "#1 AES-128-GCM · keygen: Only 3 samples" in few[0]
    assert "This run, by kind: Only 3 samples (< 10)" in few[1] and "60 metrics in jobs #1-#20" in few[1]
    assert sum("Other processes used 150 %" in line for line in lines) == 1  # once, whole, not buried

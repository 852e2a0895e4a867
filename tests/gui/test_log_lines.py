"""Every log message is rendered as the lines it holds, and a stop says in one line what it
cancelled before it started (app/gui/log_view.py, app/gui/results/result_log.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.contracts.events import JobFinished, LogMessage, RunStarted
from app.core.run.runner import CANCELLED_BY_USER, NOT_STARTED
from app.core.vocab import LogLevel
from app.gui.log_view import LogView
from app.gui.main_window import MainWindow
from app.gui.results.result_log import ResultLog, job_ranges
from tests.helpers.records import job, run
from tests.helpers.windows import opened_window


@pytest.fixture
def window(qtbot: Any, tmp_path: Path) -> Iterator[MainWindow]:
    with opened_window(qtbot, tmp_path, forget_run=True) as win:
        yield win


def test_a_message_of_several_lines_is_shown_as_lines(qtbot: Any) -> None:
    view = LogView()
    qtbot.addWidget(view)
    view.append(LogLevel.ERROR, "job 3 failed:\nTraceback line one\r\nline two\n")
    lines = view.shown_lines()
    assert len(lines) == 3 and "\\n" not in view.toPlainText()
    assert lines[0].endswith("ERROR   job 3 failed:")
    # Continuation lines sit under the text, with no time: they cannot pass for log lines.
    assert lines[1] == " " * lines[0].index("job") + "Traceback line one"
    assert lines[2].strip() == "line two"


def test_control_characters_stay_visible_escapes(qtbot: Any) -> None:
    view = LogView()
    qtbot.addWidget(view)
    view.append(LogLevel.INFO, "peer said \x1b[2J\rdone")
    assert view.shown_lines()[0].endswith("peer said \\x1b[2J\\rdone")


def test_job_ranges_are_runs_of_numbers() -> None:
    assert job_ranges([6, 7, 8, 10, 12, 13]) == "#6–#8, #10, #12–#13"
    assert job_ranges([4]) == "#4"


def test_a_stop_logs_one_line_for_the_jobs_it_kept_from_starting(window: MainWindow) -> None:
    jobs = [job(index=0), job(index=1, status="cancelled", error=CANCELLED_BY_USER)]
    jobs += [job(index=k, status="cancelled", error=NOT_STARTED) for k in range(2, 67)]
    stopped = run("r1", jobs, status="cancelled")
    window.controller.run = stopped  # what RunController.start sets before the events are drained
    window._on_events([RunStarted(stopped.id, len(jobs), stopped.name), *(JobFinished(j.index, j) for j in jobs)])
    window.controller.run = None
    window._on_run_finished(stopped)
    lines = window.log.shown_lines()
    assert not any(NOT_STARTED in line for line in lines), "one line per job not started"
    summary = [line for line in lines if "not started" in line]
    assert len(summary) == 1 and summary[0].endswith("Stopped: 65 jobs not started (#3–#67)")
    assert "WARNING" in summary[0]
    # The job the stop killed while it ran: a warning, not an error of the job's.
    killed = [line for line in lines if CANCELLED_BY_USER in line]
    assert len(killed) == 1 and "WARNING" in killed[0] and "ERROR" not in "".join(lines)


def test_the_window_renders_a_multi_line_log_event(window: MainWindow) -> None:
    window._on_events([LogMessage(LogLevel.WARNING, "first\nsecond")])
    lines = window.log.shown_lines()
    assert lines[-2].endswith("first") and lines[-1].strip() == "second"


def test_the_result_log_has_nothing_to_add_after_a_full_run() -> None:
    log = ResultLog()
    assert log.lines(job(index=0))[0][0] == LogLevel.INFO
    assert log.finish() == []

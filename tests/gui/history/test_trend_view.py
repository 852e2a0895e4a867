"""The trend view (app/gui/history/trend_view.py): a real stored history drawn, and the messages
for a job with fewer than two points."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.core.store.store import Store
from app.gui.history.panel import HistoryPanel
from app.gui.history.trend_view import TrendDialog
from tests.helpers import records
from tests.helpers import trend_cases as cases


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    path = tmp_path / "results.sqlite3"
    cases.build(path)
    return path


def _first_run_jobs() -> list[Any]:
    run_id = cases.RUNS[0][0]
    return [
        cases.job(run_id, 0, 1.0),
        cases.job(run_id, 1, 1.0, params={"key_bits": 256}),
        cases.job(run_id, 2, 1.0, backend="pycryptodome"),
    ]


def test_the_dialog_draws_the_history_with_intervals_and_change_marks(qtbot: Any, store_path: Path) -> None:
    dialog = TrendDialog(store_path, _first_run_jobs())
    qtbot.addWidget(dialog)
    assert dialog.message is None and dialog.metric_combo.currentText() == "encrypt"
    xs, ys = dialog.line.getData()
    assert list(xs) == [0.0, 1.0, 2.0, 3.0]
    assert list(ys) == pytest.approx(cases.MEDIANS, rel=1e-12)
    bars = dialog.error_bars.opts
    assert list(bars["x"]) == [0.0, 1.0, 2.0, 3.0]
    lows = np.asarray(bars["y"]) - np.asarray(bars["bottom"])
    highs = np.asarray(bars["y"]) + np.asarray(bars["top"])
    assert list(lows) == pytest.approx([p.ci95_low for p in dialog.points])
    assert list(highs) == pytest.approx([p.ci95_high for p in dialog.points])
    assert all(np.asarray(bars["top"]) > 0) and all(np.asarray(bars["bottom"]) > 0)
    # one coloured series per machine, named in the legend
    assert {name: list(curve.getData()[0]) for name, curve in dialog.machine_curves.items()} == {
        "alpha": [0.0, 1.0, 2.0],
        "beta": [3.0],
    }
    assert [label.text for _, label in dialog.legend.items] == ["alpha", "beta"]
    # the upgrade between the 2nd and 3rd run, the other machine between the 3rd and 4th
    assert [line.value() for line in dialog.change_lines] == [1.5, 2.5]
    assert dialog.change_lines[0].label.toPlainText() == "cryptography 41.0.7 → 42.0.1\nOpenSSL 3.0.13 → 3.2.1"
    assert dialog.change_lines[1].label.toPlainText() == "machine: alpha → beta"
    assert dialog.axis.labels()[0].startswith("2026-01-0")
    # the table lists the same points with their conditions
    rows = [
        [dialog.table.topLevelItem(i).text(c) for c in range(dialog.table.columnCount())]
        for i in range(dialog.table.topLevelItemCount())
    ]
    assert [row[1] for row in rows] == ["full"] * 4
    assert [row[2] for row in rows] == ["alpha", "alpha", "alpha", "beta"]
    assert rows[2][3] == "cryptography 42.0.1, OpenSSL 3.2.1" and rows[2][7].startswith("cryptography 41.0.7")
    assert "4 runs" in dialog.header.text() and "2 machines" in dialog.header.text()
    assert "Not drawn: 1 run where the job failed" in dialog.header.text()


def test_another_job_of_the_run_is_its_own_trend(qtbot: Any, store_path: Path) -> None:
    dialog = TrendDialog(store_path, _first_run_jobs())
    qtbot.addWidget(dialog)
    dialog.select_job(2)  # pycryptodome: the cryptography upgrade is no change for it
    assert len(dialog.points) == 5
    assert [line.value() for line in dialog.change_lines] == [2.5]


def test_a_job_in_one_run_only_says_so_instead_of_plotting(qtbot: Any, tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite3"
    run_id, started, host, cryptography, openssl, median = cases.RUNS[0]
    env = cases.environment(host, cryptography, openssl)
    run = records.run(
        run_id, [cases.job(run_id, 0, median)], started=started, status="running", environment=env, name="one"
    )
    cases.write(path, run)
    dialog = TrendDialog(path, run.jobs)
    qtbot.addWidget(dialog)
    assert dialog.points == [] and dialog.pages.currentWidget() is dialog.message_label
    assert dialog.message is not None and dialog.message.startswith("Only one stored run has AES-128-GCM")
    assert "on alpha, median 10" in dialog.message and "two runs or more" in dialog.message
    xs, _ = dialog.line.getData()
    assert xs is None or len(xs) == 0


def test_a_job_never_finished_and_a_run_without_jobs(qtbot: Any, tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite3"
    run_id, started, host, cryptography, openssl, _ = cases.RUNS[4]
    env = cases.environment(host, cryptography, openssl)
    run = records.run(
        run_id, [cases.job(run_id, 0, None)], started=started, status="running", environment=env, name="one"
    )
    cases.write(path, run)
    dialog = TrendDialog(path, run.jobs)
    qtbot.addWidget(dialog)
    assert dialog.message is not None and "No stored run has a finished result" in dialog.message
    assert "failed or without figures" in dialog.message
    empty = TrendDialog(path, [])
    qtbot.addWidget(empty)
    assert empty.message is not None and "no jobs" in empty.message


def test_history_opens_the_trend_of_the_selected_run(qtbot: Any, store_path: Path) -> None:
    panel = HistoryPanel(store_path)
    qtbot.addWidget(panel)
    assert not panel.trend_action.isEnabled()
    panel.select_runs([cases.RUNS[3][0]])
    assert panel.trend_action.isEnabled()
    panel.trend_action.trigger()
    dialog = panel.trend_dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.job_combo.count() == 3 and len(dialog.points) == 4
    dialog.close()


def test_stored_text_is_shown_escaped(qtbot: Any, store_path: Path) -> None:
    run_id = "20260106-100000-ffffff"
    env = cases.environment("beta\x1b[2J", "43.0.0\u202e", "OpenSSL 3.2.1 30 Jan 2024")
    cases.write(
        store_path,
        records.run(
            run_id,
            [cases.job(run_id, 0, 8e-6)],
            started="2026-01-06T10:00:00+00:00",
            status="running",
            environment=env,
            name="t",
        ),
    )
    dialog = TrendDialog(store_path, _first_run_jobs())
    qtbot.addWidget(dialog)
    label = dialog.change_lines[-1].label.toPlainText()
    assert label == "machine: beta → beta\\x1b[2J\ncryptography 42.0.1 → 43.0.0\\u202e"
    last = dialog.table.topLevelItem(dialog.table.topLevelItemCount() - 1)
    assert "\x1b" not in "".join(last.text(c) for c in range(dialog.table.columnCount()))
    assert "beta\x1b[2J" in dialog.machine_curves  # keyed by the stored name, shown escaped
    assert [label.text for _, label in dialog.legend.items][-1] == "beta\\x1b[2J"


def test_reduced_and_overridden_runs_are_marked_in_the_plot_table_and_header(qtbot: Any, tmp_path: Path) -> None:
    """Before, Trend mixed reduced and overridden runs with full ones, unmarked."""
    path = tmp_path / "results.sqlite3"
    profiles = [
        {"name": "trend", "jobs": []},
        {"name": "trend (reduced)", "jobs": [], "reduced": True},
        {"name": "trend (--samples 3)", "jobs": [], "overrides": {"--samples": "3"}},
        {"name": "trend", "jobs": []},
    ]
    with Store(path) as store:
        for (run_id, started, _host, _version, openssl, _), profile in zip(cases.RUNS, profiles):
            run = records.run(
                run_id,
                [cases.job(run_id, 0, 10e-6)],
                started=started,
                environment=cases.environment("alpha", "42.0.1", openssl),
                profile=profile,
            )
            store.add_run(run)
    dialog = TrendDialog(path, [cases.job(cases.RUNS[0][0], 0, 1.0)])
    qtbot.addWidget(dialog)
    assert [point.marks for point in dialog.points] == [(), ("reduced",), ("--samples 3",), ()]
    rows = [dialog.table.topLevelItem(i).text(1) for i in range(dialog.table.topLevelItemCount())]
    assert rows == ["full", "reduced", "--samples 3", "full"]
    assert "2 runs reduced or with command-line overrides: drawn as ×" in dialog.header.text()
    (curve,) = dialog.machine_curves.values()
    assert list(curve.data["symbol"]) == ["o", "x", "x", "o"]
    assert curve.opts["symbol"] == "o", "the legend draws the full run's symbol"

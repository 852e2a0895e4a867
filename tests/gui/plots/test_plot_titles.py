"""A plot's title follows its run: "Live" only while the run runs, then what the run did
(app/gui/plots/state.py `_stream_title`, PlotsPanel.end_run)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings

from app.core.vocab import RunStatus
from app.gui.main_window import MainWindow
from app.gui.plots.panel import PlotsPanel
from tests.helpers.records import job, run


@pytest.fixture
def panel(qtbot: Any) -> PlotsPanel:
    widget = PlotsPanel()
    qtbot.addWidget(widget)
    widget.resize(900, 600)
    return widget


def _stream(panel: PlotsPanel, index: int = 4) -> None:
    panel.begin_job(index, "AES-128-GCM · 1024 B")
    panel.add_samples(index, "encrypt", [1e-6] * 10)
    panel.add_resource(index, "worker", 0.1, 50.0, 10 << 20)
    panel.refresh()


@pytest.mark.parametrize(
    ("status", "said"),
    [(RunStatus.FINISHED, "run finished"), (RunStatus.CANCELLED, "run stopped"), (RunStatus.FAILED, "run failed")],
)
def test_titles_stop_saying_live_when_the_run_ends(panel: PlotsPanel, status: RunStatus, said: str) -> None:
    _stream(panel)
    assert "Live: job #5" in panel._samples_header.text()
    panel.tabs.setCurrentIndex(4)
    panel.refresh()
    assert "Live: job #5" in panel._res_header.text()
    panel.end_run(status)
    for header in (panel._samples_header, panel._res_header):
        assert "Live" not in header.text() and "Job #5" in header.text() and said in header.text()
    assert panel._live_button.text() == "Back to the run's last job"


def test_the_next_run_is_live_again(panel: PlotsPanel) -> None:
    _stream(panel)
    panel.end_run(RunStatus.CANCELLED)
    panel.reset()
    _stream(panel, 0)
    assert "Live: job #1" in panel._samples_header.text() and panel._live_button.text() == "Back to live"


def test_a_label_is_shown_as_text_not_markup(panel: PlotsPanel) -> None:
    panel.begin_job(0, "<i>x</i> · 18 B")
    assert "&lt;i&gt;x" in panel._samples_header.text()


def test_the_window_ends_the_plots_live_titles_with_the_run(qtbot: Any, tmp_path: Path) -> None:
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings, store_path=tmp_path / "store.sqlite3")
    qtbot.addWidget(window)
    _stream(window.plots)
    window._on_run_finished(run("r1", [job(index=4)], status=RunStatus.CANCELLED))
    text = window.plots._samples_header.text()
    assert "Live" not in text and "run stopped" in text
    window.controller.shutdown()


def test_a_finished_job_s_header_counts_samples_a_metric_not_their_sum(panel: PlotsPanel) -> None:
    """Job #1 of `quick` read "50 samples": 20 encrypt, 20 decrypt and 10 key generations
    added up, over a plot of 20 rounds."""
    panel.select_result(job(index=0, metrics={"encrypt": [1e-6] * 20, "decrypt": [1e-6] * 20, "keygen": [4e-6] * 10}))
    text = panel._samples_header.text()
    assert "20 samples a metric (keygen 10)" in text and "50" not in text
    panel.select_result(job(index=1, metrics={"sign": [1e-4] * 6, "verify": [2e-5] * 6}))
    assert "6 samples a metric (finished)" in panel._samples_header.text()
    panel.select_result(job(index=2, metrics={"hash": [1e-6] * 7}))
    assert "· 7 samples (finished)" in panel._samples_header.text()


def test_a_live_header_counts_samples_a_metric(panel: PlotsPanel) -> None:
    panel.begin_job(0, "AES-128-GCM · 1024 B")
    assert "· 0 samples" in panel._samples_header.text()
    panel.add_samples(0, "encrypt", [1e-6] * 10)
    panel.add_samples(0, "decrypt", [1e-6] * 8)
    panel.add_samples(0, "keygen", [1e-6] * 2)
    panel.refresh()
    text = panel._samples_header.text()
    assert "10 samples a metric (decrypt 8, keygen 2)" in text, text

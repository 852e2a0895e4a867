"""A saved plot: the SVG renders like the PNG, and both say what they show, from which
run and machine, and which jobs they left out."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PySide6 import QtCore, QtGui
from PySide6.QtSvg import QSvgGenerator, QSvgRenderer

from app.core.results.model import JobResult
from app.gui.plots.export import PNG_SCALE
from app.gui.plots.panel import PlotsPanel
from app.gui.vocab import PlotTab
from tests.helpers import records

#: The two renderers draw text apart by a pixel here and there (hinting, glyph placement):
#: compared over BLOCK x BLOCK pixel means, a block differs when a channel's mean moves more
#: than BLOCK_LEVELS, and at most MOVED_SHARE of the blocks may. Measured on the six tabs:
#: at most 1.2 % of the blocks differ between a PNG and its SVG; with the SVG drawn at
#: QSvgGenerator's default 72 DPI (axes at 0.75 of their size), at least 3.4 %.
BLOCK, BLOCK_LEVELS, MOVED_SHARE = 16, 32, 0.02

ENVIRONMENT = {
    "hostname": "bench-host",
    "cpu": {"model": "Example CPU 9000", "physical_cores": 4, "logical_cores": 8},
    "os": {"pretty_name": "Debian GNU/Linux 12"},
}


def _job(index: int, metrics: dict[str, float], size: int = 1024, **fields: Any) -> JobResult:
    built = {name: records.spread_samples(median, 40) for name, median in metrics.items()}
    return records.job("run", index, size, built, **{"label": "AES-128-GCM [cryptography]", **fields})


def _jobs() -> list[JobResult]:
    return [
        _job(0, {"encrypt": 2e-6, "decrypt": 1.9e-6}, size=64),
        _job(1, {"encrypt": 9e-6, "decrypt": 8e-6}, size=4096),
        _job(2, {"encrypt": 500e-6}, size=190, label="RSA-2048-OAEP [cryptography]", scheme="rsa-oaep"),
        _job(3, {"hash": 1e-6}, label="SHA-256 [cryptography]", scheme="sha256", family="digest"),
        _job(4, {}, status="failed", error="worker killed"),
    ]


@pytest.fixture
def panel(qtbot: Any) -> PlotsPanel:
    widget = PlotsPanel()
    qtbot.addWidget(widget)
    widget.resize(900, 600)
    widget.show()
    qtbot.waitExposed(widget)
    jobs = _jobs()
    widget.show_results(jobs)
    widget.set_run(records.run("20261126-031200", jobs, environment=ENVIRONMENT, name="quick"))
    widget.select_result(jobs[0])
    return widget


def _svg_as_image(path: Path, size: QtCore.QSize) -> QtGui.QImage:
    image = QtGui.QImage(size, QtGui.QImage.Format.Format_ARGB32)
    image.fill(QtGui.QColor("white"))
    renderer = QSvgRenderer(str(path))
    assert renderer.isValid()
    painter = QtGui.QPainter(image)
    renderer.render(painter)
    painter.end()
    return image


def _block_means(image: QtGui.QImage) -> np.ndarray:
    converted = image.convertToFormat(QtGui.QImage.Format.Format_RGBA8888)
    width, height = converted.width(), converted.height()
    raw = np.frombuffer(converted.constBits(), dtype=np.uint8, count=converted.sizeInBytes())
    pixels = raw.reshape(height, converted.bytesPerLine())[:, : width * 4].reshape(height, width, 4).astype(float)
    h, w = height // BLOCK * BLOCK, width // BLOCK * BLOCK
    return pixels[:h, :w].reshape(h // BLOCK, BLOCK, w // BLOCK, BLOCK, 4).mean(axis=(1, 3))


def _moved_share(panel: PlotsPanel, tmp_path: Path, tab: PlotTab) -> float:
    """The share of blocks that differ between the tab's PNG and its SVG rendered to the same size."""
    panel.tabs.setCurrentIndex(list(PlotTab).index(tab))
    png, svg = tmp_path / f"{tab.value}.png", tmp_path / f"{tab.value}.svg"
    panel.export_plot(png)
    panel.export_plot(svg)
    drawn = QtGui.QImage(str(png))
    rendered = _svg_as_image(svg, drawn.size())
    difference = np.abs(_block_means(drawn) - _block_means(rendered)).max(axis=2)
    return float((difference > BLOCK_LEVELS).mean())


@pytest.mark.parametrize("tab", list(PlotTab))
def test_the_svg_of_every_plot_tab_renders_like_its_png(panel: PlotsPanel, tmp_path: Path, tab: PlotTab) -> None:
    assert _moved_share(panel, tmp_path, tab) <= MOVED_SHARE


def test_the_comparison_tells_an_svg_at_72_dpi_from_its_png(
    panel: PlotsPanel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparison can fail: the SVG as it was (QSvgGenerator's default 72 DPI, axes
    and tick labels at 0.75 of the bars' scale) is caught."""
    original = QSvgGenerator.setResolution
    monkeypatch.setattr(QSvgGenerator, "setResolution", lambda generator, _dpi: original(generator, 72))
    assert _moved_share(panel, tmp_path, PlotTab.COMPARISON) > MOVED_SHARE


def test_a_saved_plot_says_what_it_shows_the_run_the_machine_and_what_it_left_out(
    panel: PlotsPanel, tmp_path: Path
) -> None:
    panel.tabs.setCurrentIndex(list(PlotTab).index(PlotTab.COMPARISON))
    assert panel._cmp_combo.currentText() == "encrypt"
    caption = panel.plot_caption()
    assert caption.title.startswith("Median encrypt time per operation (s)")
    assert caption.run == "Run 20261126-031200 of profile quick, started 2026-01-01 00:00 UTC"
    assert caption.machine == "Machine: bench-host, Example CPU 9000, 4 cores (8 logical), Debian GNU/Linux 12"
    assert caption.left_out == (
        "#4 SHA-256 [cryptography] · 1 KiB: no encrypt metric",
        "#5 AES-128-GCM [cryptography] · 1 KiB: failed",
    )
    note = caption.left_out_note()
    assert note is not None and note.startswith("Left out (2 jobs): #4 SHA-256")
    svg = tmp_path / "comparison.svg"
    panel.export_plot(svg)
    text = svg.read_text(encoding="utf-8")
    for words in (caption.title, "bench-host", "20261126-031200", "no encrypt metric", "failed"):
        assert words in text, words
    # The PNG has the caption above the plot: taller than the plot by its lines.
    png = tmp_path / "comparison.png"
    panel.export_plot(png)
    plot_height = panel.current_plot_item().sceneBoundingRect().height() * PNG_SCALE
    line = QtGui.QFontMetricsF(panel.font()).height() * PNG_SCALE
    assert QtGui.QImage(str(png)).height() >= plot_height + 5 * line  # title, whiskers, run, machine, left out


def test_a_job_plot_names_its_job_and_a_reduced_run_says_so(panel: PlotsPanel) -> None:
    jobs = _jobs()
    panel.set_run(records.run("r2", jobs, environment=ENVIRONMENT, name="quick (reduced)"))
    panel.tabs.setCurrentIndex(list(PlotTab).index(PlotTab.HISTOGRAM))
    caption = panel.plot_caption()
    assert caption.title.startswith("Histogram of encrypt") and "(s)" in caption.title
    assert any(line.startswith("#1 AES-128-GCM") for line in caption.details)  # the tab's header: the job
    assert caption.run.startswith("Run r2 of profile quick (reduced run: fewer samples than the full profile)")
    panel.tabs.setCurrentIndex(list(PlotTab).index(PlotTab.SAMPLES))
    assert panel.plot_caption().title.startswith("Samples of encrypt, decrypt: time per operation (s)")


def test_scaling_names_the_jobs_its_log_axes_cannot_place(panel: PlotsPanel) -> None:
    jobs = [*_jobs(), _job(5, {"encrypt": 3e-6}, size=0)]
    panel.show_results(jobs)
    panel.tabs.setCurrentIndex(list(PlotTab).index(PlotTab.SCALING))
    left = panel.plot_caption().left_out
    assert "#6 AES-128-GCM [cryptography] · 0 B: message size 0, which a log axis cannot place" in left
    assert len(left) == 3


def test_a_long_left_out_list_is_cut_with_a_count(panel: PlotsPanel) -> None:
    failed = [_job(k, {}, status="cancelled") for k in range(10)]
    panel.show_results([_job(10, {"encrypt": 1e-6}), *failed])
    panel.tabs.setCurrentIndex(list(PlotTab).index(PlotTab.COMPARISON))
    note = panel.plot_caption().left_out_note()
    assert note is not None and note.startswith("Left out (10 jobs)") and note.endswith("; and 4 more")


def test_the_csv_of_a_plot_holds_what_it_draws_under_the_same_caption(panel: PlotsPanel, tmp_path: Path) -> None:
    panel.tabs.setCurrentIndex(list(PlotTab).index(PlotTab.COMPARISON))
    path = tmp_path / "comparison.csv"
    panel.export_plot(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    caption = panel.plot_caption()
    comments = [line[2:] for line in lines if line.startswith("# ")]
    assert comments == [caption.title, *caption.lines()]
    rows = list(csv.DictReader(line for line in lines if not line.startswith("#")))
    assert [row["label"] for row in rows] == [
        "#1 AES-128-GCM [cryptography] · 64 B",
        "#2 AES-128-GCM [cryptography] · 4 KiB",
        "#3 RSA-2048-OAEP [cryptography] · 190 B",
    ]
    drawn = [median for _job, median, _ci in panel._comparison_rows]
    assert [float(row["median_s"]) for row in rows] == drawn  # full precision, in seconds
    assert all(row["metric"] == "encrypt" and int(row["n"]) == 40 for row in rows)


@pytest.mark.parametrize("tab", list(PlotTab))
def test_every_tab_saves_its_numbers_as_csv(panel: PlotsPanel, tmp_path: Path, tab: PlotTab) -> None:
    panel.tabs.setCurrentIndex(list(PlotTab).index(tab))
    path = tmp_path / f"{tab.value}.csv"
    panel.export_plot(path)
    text = path.read_text(encoding="utf-8")
    assert text.startswith(f"# {panel.plot_caption().title}\n")
    assert "# Machine: bench-host" in text
    header = next(line for line in text.splitlines() if not line.startswith("#"))
    assert header.split(",") == list(panel.plot_table().columns)
    data = [line for line in text.splitlines() if not line.startswith("#")][1:]  # less the header
    assert len(data) == len(panel.plot_table().rows)
    # Job #1's 40 encrypt and 40 decrypt samples; three bars; AES at two sizes and RSA at one.
    expected = {PlotTab.SAMPLES: 80, PlotTab.COMPARISON: 3, PlotTab.SCALING: 3}
    if tab in expected:
        assert len(data) == expected[tab]
    elif tab == PlotTab.HISTOGRAM:
        assert sum(int(line.split(",")[-1]) for line in data) == 40  # every encrypt sample in a bin


def test_a_plots_context_menu_saves_with_the_caption_only(panel: PlotsPanel) -> None:
    """pyqtgraph's own Export... (no caption; its SVG exporter fails on Qt 6.11) is replaced."""
    for view in (panel._samples_plot, panel._cmp_plot, panel._res_view):
        assert [action.text() for action in view.scene().contextMenu] == ["Save plot as PNG, SVG or CSV…"]

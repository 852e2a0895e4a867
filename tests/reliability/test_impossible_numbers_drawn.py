"""Every face draws any positive finite duration, even one the checker would refuse.

Before: the PDF failed with ZeroDivisionError in its log-axis code on samples of 5e-324 s.
Now the PDF's axes and charts, a Markdown and PDF report handed an unchecked run, and the
window's plot tabs (linear and log) all cope with subnormals, 1e18 s beside 1e-300 s and
the largest float.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage, QPainter

from app.report.model import BarChart, Histogram, LineChart, Series, StackedBars
from app.report.pdf.charts import paint_chart
from tests.helpers.extreme_runs import OTHER_ID, POSITIVE, RUN_ID, unchecked_run

EXTREMES = [5e-324, 1e-320, sys.float_info.min, 1e-300, 1e-12, 1e-9, 1.0, 86_400.0, 1e18, 1e300, sys.float_info.max]


# --- the PDF's charts: any positive finite value draws ---------------------------------------------------


def _paint(chart: Any) -> None:
    image = QImage(480, 320, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    try:
        paint_chart(painter, QRectF(10, 10, 460, 300), chart)
    finally:
        painter.end()


def _charts(values: list[float]) -> list[Any]:
    n = len(values)
    labels = [f"job {i}" for i in range(n)]
    sizes = [float(64 << i) for i in range(n)]
    ordered = sorted(values)
    edges = ordered if len(set(ordered)) == n and n > 1 else [ordered[0] * (1 + i) for i in range(2)]
    return [
        BarChart("bars", labels, values, [v / 2 for v in values], [v * 2 for v in values]),
        BarChart("log bars", labels, values, [v / 2 for v in values], [min(v * 2, v) for v in values], log=True),
        LineChart("lines", "size", "B", "time", "s", [Series("a", sizes, values)], log_x=True, log_y=True),
        LineChart("linear", "security", "bits", "time", "s", [Series("a", list(range(n)), values)]),
        LineChart("x log", "time", "s", "time", "s", [Series("a", values, values)], log_x=True, log_y=True),
        Histogram("samples", edges, [1] * (len(edges) - 1), median=ordered[n // 2]),
        StackedBars("round trip", labels, {"compute": values, "network": values[::-1]}),
    ]


@pytest.mark.parametrize("values", [[v] for v in EXTREMES] + [EXTREMES, [5e-324, 1e18], [1e-300, 1e18]])
def test_every_pdf_chart_draws_extreme_values(qapp: Any, values: list[float]) -> None:
    for chart in _charts(values):
        _paint(chart)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(POSITIVE, min_size=1, max_size=6))
def test_every_pdf_chart_draws_any_positive_finite_values(qapp: Any, values: list[float]) -> None:
    for chart in _charts(values):
        _paint(chart)


@settings(max_examples=80, deadline=None)
@given(low=POSITIVE, high=POSITIVE)
def test_the_pdf_log_axis_spans_any_positive_range(qapp: Any, low: float, high: float) -> None:
    from app.report.pdf.charts.axes import make_log_axis
    from app.report.pdf.charts.context import Ctx

    image = QImage(200, 200, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    try:
        ctx = Ctx(painter, None, 8.0)
        for unit in ("s", "B", "bits"):
            axis = make_log_axis(ctx, min(low, high), max(low, high), unit, "x", 300.0, ctx.font(), horizontal=True)
            assert 0 < axis.lo < axis.hi < math.inf
            for value in (low, high, *axis.ticks, *axis.minor):
                assert math.isfinite(axis.frac(value))
            assert len(axis.ticks) <= 40 and len(axis.minor) <= 400
    finally:
        painter.end()


def test_a_report_of_extreme_samples_renders_when_handed_over_unchecked(qapp: Any, tmp_path: Path) -> None:
    """The faces do not rely on the checker: a run holding 5e-324 s and 1e18 s (as a newer
    or another tool's file might) still renders to Markdown and PDF."""
    from app.report.exporters import EXPORTERS, ExportFormat, ExportOptions

    run = unchecked_run(RUN_ID, [1e18 if i % 2 else 5e-324 for i in range(8)])
    baseline = unchecked_run(OTHER_ID, None)
    for kind, name in ((ExportFormat.MARKDOWN, "r.md"), (ExportFormat.PDF, "r.pdf")):
        EXPORTERS[kind].write(run, tmp_path / name, ExportOptions(baseline=baseline))
    assert (tmp_path / "r.pdf").stat().st_size > 0
    text = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "inf" not in text.replace("info", "").replace("Info", "")
    assert "nan" not in text.lower().replace("nanosec", "")


# --- the window's plots (pyqtgraph): any positive finite value draws ------------------------------------


@pytest.mark.parametrize(
    "values",
    [[5e-324] * 6, [1e18, 1e-300, 1e18, 1e-300, 2e-300, 1e17], EXTREMES[:-2], [1e-9, 86_400.0, 1e-9, 86_400.0]],
    ids=["subnormal", "1e18-beside-1e-300", "every-extreme", "the-bounds"],
)
def test_every_plot_of_the_window_draws_extreme_values(qtbot: Any, values: list[float]) -> None:
    from app.gui.plots.panel import PlotsPanel
    from tests.helpers import records

    panel = PlotsPanel()
    qtbot.addWidget(panel)
    panel.resize(700, 450)
    panel.show()
    qtbot.waitExposed(panel)
    jobs = [
        records.job("run", 0, 64, {"encrypt": values, "decrypt": [2e-6] * len(values)}),
        records.job("run", 1, 4096, {"encrypt": [v * 0.5 or v for v in values], "decrypt": values}),
    ]
    panel.begin_job(0, "job")
    panel.add_samples(0, "encrypt", values)
    panel.refresh()
    panel.show_results(jobs)
    panel.select_result(jobs[0])
    for log in (False, True):
        panel._samples_log.setChecked(log)
        panel._cmp_log.setChecked(log)
        for i in range(panel.tabs.count()):
            panel.tabs.setCurrentIndex(i)
            assert not panel.grab().isNull()

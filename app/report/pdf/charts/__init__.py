"""Vector charts for the reports, painted with QPainter from the data in `app.report.model`.

`paint_chart` draws a `ChartData` inside a rectangle of any painter: a QPdfWriter's
(every line, path and glyph stays vector) or a QImage's for previews. Everything is
sized in points: fonts with `QFont.setPointSizeF` (measured against the painter's
device), pens and gaps in points converted with the device's dots per inch. A world
transform on the painter (e.g. one that scales device units to points) is taken into
account, so a chart has the same physical size whatever coordinates the caller uses.

The look follows the app's plots (`app.gui.plots`): the shared `PALETTE`, `MARKED`
for post-quantum entries, a faint opaque grid, SI-prefixed axis units ("median time
(µs)") and, on log axes, ticks that carry their own prefix ("10 µs", "1 ms").

Nothing is clipped and nothing overlaps: row labels are wrapped, tick labels are
thinned until they fit, point labels that would collide are left out, and an empty
chart shows its title and "no data".

The chart kinds live in their own modules (`bar`, `line`, `histogram`), on top of
`axes`, `ticks`, `frame` (title, legends) and `context` (the painter in points).
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QPainter

from app.report.model import BarChart, ChartData, Histogram, LineChart, StackedBars
from app.report.pdf.charts.bar import bar_legend, paint_bars, paint_stacked
from app.report.pdf.charts.context import Ctx
from app.report.pdf.charts.histogram import (
    paint_histogram,
)
from app.report.pdf.charts.line import paint_lines

# ----------------------------------------------------------------------------- API


def paint_chart(
    painter: QPainter, rect: QRectF, chart: ChartData, *, font_family: str | None = None, base_point_size: float = 8.0
) -> None:
    """Paint `chart` inside `rect` (in the painter's current coordinates).

    Fonts are `base_point_size` points (titles a little larger, ticks a little
    smaller) in `font_family` or the application's default font. Nothing is drawn
    outside `rect` and the rect is not filled (the page is the background).
    """
    rect = QRectF(rect)
    if not (rect.width() > 0 and rect.height() > 0):
        return
    painter.save()
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        ctx = Ctx(painter, font_family, base_point_size)
        if isinstance(chart, BarChart):
            paint_bars(ctx, rect, chart)
        elif isinstance(chart, StackedBars):
            paint_stacked(ctx, rect, chart)
        elif isinstance(chart, LineChart):
            paint_lines(ctx, rect, chart)
        elif isinstance(chart, Histogram):
            paint_histogram(ctx, rect, chart)
        else:
            raise TypeError(f"not a chart: {type(chart).__name__}")
    finally:
        painter.restore()


def preferred_aspect(chart: ChartData) -> float:
    """Height / width that reads well for this chart: bar charts grow with their
    number of bars (~0.06 of the width per bar plus room for the title and axis,
    within [0.3, 1.2]); line charts 0.6, histograms 0.45."""
    if isinstance(chart, BarChart):
        n = len(chart.labels)
        extra = 0.03 if bar_legend(chart) else 0.0
        return _clamp(0.16 + extra + 0.06 * n, 0.3, 1.2) if n else 0.3
    if isinstance(chart, StackedBars):
        n = len(chart.labels)
        return _clamp(0.2 + 0.06 * n, 0.3, 1.2) if n else 0.3
    if isinstance(chart, LineChart):
        return 0.6 if any(s.xs for s in chart.series) else 0.3
    if isinstance(chart, Histogram):
        return 0.45 if chart.counts else 0.3
    raise TypeError(f"not a chart: {type(chart).__name__}")


def _clamp(value: float, lo: float, hi: float) -> float:
    return min(max(value, lo), hi)

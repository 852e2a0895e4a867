"""Histograms of one metric's samples, with the median marked."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QPainterPath

from app.report.model import Histogram
from app.report.pdf.charts.axes import (
    Axis,
    draw_grid,
    draw_x_axis,
    draw_y_axis,
    make_linear_axis,
    x_axis_extent,
    y_label_width,
)
from app.report.pdf.charts.context import CENTER, MUTED, RIGHT, TEXT, WHITE, Ctx, all_finite, mix, rgb
from app.report.pdf.charts.frame import draw_title, elide_to_width, no_data
from app.report.pdf.charts.ticks import format_value
from app.report.style import PALETTE

# ------------------------------------------------------------------------- histogram


def paint_histogram(ctx: Ctx, rect: QRectF, chart: Histogram) -> None:
    n = min(len(chart.counts), max(0, len(chart.edges) - 1))
    edges = [float(e) for e in chart.edges[: n + 1]]
    counts = [max(0, int(c)) for c in chart.counts[:n]]
    if n == 0 or not all(all_finite(e) for e in edges) or edges[-1] <= edges[0] or not any(counts):
        no_data(ctx, rect, chart.title)
        return
    top = draw_title(ctx, rect, chart.title)
    tick_font, title_font, small = ctx.font(0.9), ctx.font(1.0), ctx.font(0.9)
    sfm = ctx.fm(small)
    median_ok = all_finite(chart.median) and edges[0] <= chart.median <= edges[-1]
    median_top = top
    if median_ok:  # the median's label gets a row of its own, clear of the top tick label
        top += sfm.height() + ctx.pt(1) + ctx.fm(tick_font).height() / 2
    note = ""
    if chart.clipped_above > 0:
        k = chart.clipped_above
        note = f"{k} sample{'s' if k != 1 else ''} beyond the right edge not shown"
    note_h = sfm.height() + ctx.pt(2) if note else 0.0
    bottom = rect.bottom() - note_h - x_axis_extent(ctx, tick_font, title_font)
    if bottom - top < 2 * ctx.fm(tick_font).height() or rect.width() < ctx.pt(60):
        return  # no room for a plot: the title alone
    plot, x_axis, y_axis = _histogram_axes(ctx, rect, chart, (top, bottom), edges, max(counts))
    draw_grid(ctx, plot, y_axis, vertical_lines=False)
    draw_grid(ctx, plot, x_axis, vertical_lines=True)

    def x_at(v: float) -> float:
        return plot.left() + x_axis.frac(v) * plot.width()

    def y_at(c: float) -> float:
        return plot.bottom() - y_axis.frac(c) * plot.height()

    _draw_bins(ctx, plot, edges, counts, x_at, y_at)
    if median_ok:
        x = x_at(chart.median)
        label = f"median {format_value(chart.median, chart.unit)}"
        w = sfm.horizontalAdvance(label)
        lx = min(max(x - w / 2, rect.left()), rect.right() - w)
        ctx.text(QRectF(lx, median_top, w + 1, sfm.height()), CENTER, label, small)
        ctx.line(x, median_top + sfm.height(), x, plot.bottom(), ctx.pen(TEXT, 1.0, Qt.PenStyle.DashLine))

    draw_y_axis(ctx, plot, y_axis, tick_font, title_font, rect.left(), rect)
    draw_x_axis(ctx, plot, x_axis, tick_font, title_font, rect.bottom() - note_h, rect)
    if note:
        note_font = ctx.font(0.9, italic=True)
        text = elide_to_width(ctx.fm(note_font), note, rect.width())
        ctx.text(
            QRectF(rect.left(), rect.bottom() - sfm.height(), rect.width(), sfm.height()),
            RIGHT,
            text,
            note_font,
            MUTED,
        )


def _histogram_axes(
    ctx: Ctx, rect: QRectF, chart: Histogram, span: tuple[float, float], edges: list[float], most: int
) -> tuple[QRectF, Axis, Axis]:
    """The plot's rect between `span` (its top and bottom) and its axes: x over the bins'
    edges, y in whole samples from zero to `most`, the plot starting after the y labels."""
    tick_font, title_font = ctx.font(0.9), ctx.font(1.0)
    top, bottom = span
    plot_h = bottom - top
    tick_h = ctx.fm(tick_font).height()
    y_axis = make_linear_axis(
        ctx,
        0.0,
        float(most),
        "",
        "samples",
        plot_h,
        tick_font,
        horizontal=False,
        include_zero=True,
        extend=True,
        integer=True,
        slack=(tick_h / 2, min(top - rect.top(), tick_h / 2)),
    )
    y_title_w = ctx.fm(title_font).height()
    plot_left = rect.left() + y_title_w + ctx.pt(3) + y_label_width(ctx, y_axis, tick_font) + ctx.pt(5)
    plot = QRectF(plot_left, top, max(rect.right() - ctx.pt(4) - plot_left, ctx.pt(4)), plot_h)
    x_axis = make_linear_axis(
        ctx,
        edges[0],
        edges[-1],
        chart.unit,
        "time" if chart.unit == "s" else "value",
        plot.width(),
        tick_font,
        horizontal=True,
        include_zero=False,
        extend=False,
        slack=(plot.left() - rect.left(), rect.right() - plot.right()),
    )
    return plot, x_axis, y_axis


def _draw_bins(
    ctx: Ctx,
    plot: QRectF,
    edges: list[float],
    counts: list[int],
    x_at: Callable[[float], float],
    y_at: Callable[[float], float],
) -> None:
    """The bins as one step outline, filled once: no seams between bins, one path however
    many bins."""
    accent = rgb(PALETTE[0])
    fill = mix(accent, WHITE, 0.5)
    p = ctx.painter
    outline = QPainterPath(QPointF(x_at(edges[0]), plot.bottom()))
    for i, c in enumerate(counts):
        y = y_at(c)
        outline.lineTo(x_at(edges[i]), y)
        outline.lineTo(x_at(edges[i + 1]), y)
    outline.lineTo(x_at(edges[-1]), plot.bottom())
    area = QPainterPath(outline)
    area.closeSubpath()
    p.setPen(Qt.PenStyle.NoPen)
    p.fillPath(area, QBrush(fill))
    p.setPen(ctx.pen(accent.darker(125), 0.7))
    p.drawPath(outline)

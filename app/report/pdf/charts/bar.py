"""Horizontal bar charts: medians with their 95 % interval, and stacked bars (a
session's time split into its parts). Row labels are wrapped, never cut."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QBrush, QFont, QPainter

from app.report.model import BarChart, StackedBars
from app.report.pdf.charts.axes import (
    Axis,
    draw_grid,
    draw_x_axis,
    make_linear_axis,
    make_log_axis,
    x_axis_extent,
)
from app.report.pdf.charts.context import AXIS, LEFT, MUTED, RIGHT, WHISKER, WHITE, Ctx, all_finite, rgb
from app.report.pdf.charts.frame import (
    LegendEntry,
    draw_title,
    flow_legend,
    no_data,
    title_height,
    too_small,
    wrap_label,
)
from app.report.pdf.charts.ticks import format_value
from app.report.style import MARKED, PALETTE

# ---------------------------------------------------------------------- bar layouts


@dataclass
class BarLayout:
    """Where a horizontal bar chart (plain or stacked) puts its parts."""

    plot: QRectF
    label_width: float  # the column left of the plot that label texts must fit in
    labels: list[str | None]  # wrapped ("\n" between lines), None where thinned out
    label_font: QFont
    band: float  # height of one row
    bar_height: float
    axis: Axis
    legend_top: float
    axis_bottom: float
    #: Every `stride`-th row is labelled (1: all); value texts are drawn only at 1, where
    #: a text cannot reach into the neighbouring rows.
    stride: int = 1
    #: False when the rect is too small for rows and axis: only the title is drawn.
    fits: bool = True


def _draw_row_label(ctx: Ctx, lay: BarLayout, left: float, cy: float, label: str) -> None:
    height = ctx.fm(lay.label_font).height() * (label.count("\n") + 1)
    ctx.text(QRectF(left, cy - height / 2, lay.label_width + 1, height), RIGHT, label, lay.label_font)


def _bar_rows(
    ctx: Ctx,
    rect: QRectF,
    top: float,
    labels: Sequence[str],
    value_texts: Sequence[str],
    axis_fn: Callable[[float, tuple[float, float], QFont], Axis],
    legend_h: float,
) -> BarLayout:
    tick_font, title_font = ctx.font(0.9), ctx.font(1.0)
    legend_top = top
    top += legend_h + (ctx.pt(3) if legend_h else 0)
    bottom = rect.bottom() - x_axis_extent(ctx, tick_font, title_font)
    plot_h = max(bottom - top, ctx.pt(4))
    n = max(1, len(labels))
    band = plot_h / n
    gap = ctx.pt(4)
    # Labels identify the data: they are wrapped onto as many lines as the row holds, in a
    # font down to 70 % of the base size, and only cut ("…") when even that cannot fit.
    label_font, lfm, label_width, wrapped = ctx.font(1.0), ctx.fm(ctx.font(1.0)), 0.0, []
    for rel in (1.0, 0.9, 0.8, 0.7):
        label_font = ctx.font(rel)
        lfm = ctx.fm(label_font)
        widest_value = max((lfm.horizontalAdvance(t) for t in value_texts), default=0.0)
        right_margin = min(widest_value + ctx.pt(4) if widest_value else ctx.pt(6), rect.width() * 0.3)
        label_limit = max(0.0, min(rect.width() * 0.45, rect.width() - right_margin - gap - ctx.pt(40)))
        widest_label = max((lfm.horizontalAdvance(s) for s in labels), default=0.0)
        label_width = min(widest_label, label_limit)
        wrapped = [wrap_label(lfm, text, label_width) for text in labels]
        lines = max((text.count("\n") + 1 for text in wrapped), default=1)
        if lines * lfm.height() * 1.02 <= band:
            break
    stride = max(1, math.ceil(max((t.count("\n") + 1 for t in wrapped), default=1) * lfm.height() * 1.02 / band - 1e-9))
    widest_value = max((lfm.horizontalAdvance(t) for t in value_texts), default=0.0) if stride == 1 else 0.0
    right_margin = widest_value + ctx.pt(4) if widest_value else ctx.pt(6)
    right_margin = min(right_margin, rect.width() * 0.3)
    shown: list[str | None] = [None if i % stride else text for i, text in enumerate(wrapped)]
    plot_left = rect.left() + label_width + gap
    plot = QRectF(plot_left, top, max(rect.right() - right_margin - plot_left, ctx.pt(4)), plot_h)
    slack = (plot.left() - rect.left(), rect.right() - plot.right())
    axis = axis_fn(plot.width(), slack, tick_font)
    bar_h = min(band * 0.68, lfm.height() * 2.2)
    fits = bottom - top >= lfm.height() and plot.width() >= ctx.pt(24)
    return BarLayout(plot, label_width, shown, label_font, band, bar_h, axis, legend_top, rect.bottom(), stride, fits)


def _bar_axis(ctx: Ctx, chart: BarChart) -> Callable[[float, tuple[float, float], QFont], Axis]:
    ends = [float(v) for v in (*chart.values, *chart.high, *chart.low) if v is not None and math.isfinite(v)]

    def make(length: float, slack: tuple[float, float], font: QFont) -> Axis:
        if chart.log:
            positive = [v for v in ends if v > 0]
            return make_log_axis(
                ctx,
                min(positive, default=1.0),
                max(positive, default=1.0),
                chart.unit,
                chart.value_label,
                length,
                font,
                horizontal=True,
                slack=slack,
            )
        return make_linear_axis(
            ctx,
            min(ends, default=0.0),
            max(ends, default=1.0),
            chart.unit,
            chart.value_label,
            length,
            font,
            horizontal=True,
            include_zero=True,
            extend=True,
            slack=slack,
        )

    return make


def bar_legend(chart: BarChart) -> list[LegendEntry]:
    if chart.marked_label and chart.marked and any(chart.marked[: len(chart.labels)]):
        return [LegendEntry(chart.marked_label, rgb(MARKED))]
    return []


def _bar_value_texts(chart: BarChart) -> list[str]:
    return [format_value(v, chart.unit) if all_finite(v) else "" for v in chart.values]


def _bar_has_data(chart: BarChart) -> bool:
    return bool(chart.labels) and any(all_finite(v) and (v > 0 or not chart.log) for v in chart.values)


def _bar_layout(
    painter: QPainter, rect: QRectF, chart: BarChart, *, font_family: str | None = None, base_point_size: float = 8.0
) -> BarLayout:
    """The layout `paint_chart` uses for a bar chart (exposed for tests)."""
    ctx = Ctx(painter, font_family, base_point_size)
    return _bar_chart_layout(ctx, QRectF(rect), chart)


def _bar_chart_layout(ctx: Ctx, rect: QRectF, chart: BarChart) -> BarLayout:
    top = rect.top() + title_height(ctx, rect, chart.title)
    legend = bar_legend(chart)
    legend_h = flow_legend(ctx, legend, ctx.font(0.9), rect.left(), top, rect.width(), draw=False)
    return _bar_rows(ctx, rect, top, chart.labels, _bar_value_texts(chart), _bar_axis(ctx, chart), legend_h)


def paint_bars(ctx: Ctx, rect: QRectF, chart: BarChart) -> None:
    if not _bar_has_data(chart):
        no_data(ctx, rect, chart.title)
        return
    lay = _bar_chart_layout(ctx, rect, chart)
    if not lay.fits:
        too_small(ctx, rect, chart.title)
        return
    draw_title(ctx, rect, chart.title)
    flow_legend(ctx, bar_legend(chart), ctx.font(0.9), rect.left(), lay.legend_top, rect.width(), draw=True)
    plot, axis = lay.plot, lay.axis
    draw_grid(ctx, plot, axis, vertical_lines=True)
    base_colour, marked_colour = rgb(PALETTE[0]), rgb(MARKED)
    lfm = ctx.fm(lay.label_font)
    p = ctx.painter
    whisker = ctx.pen(WHISKER, 0.8)
    x0 = plot.left() + max(0.0, axis.frac(0.0)) * plot.width() if not axis.log else plot.left()
    texts = _bar_value_texts(chart)
    for i, label in enumerate(lay.labels):
        cy = plot.top() + (i + 0.5) * lay.band
        if label:
            _draw_row_label(ctx, lay, rect.left(), cy, label)
        value = chart.values[i] if i < len(chart.values) else None
        if value is None or not axis.accepts(value):
            continue
        marked = bool(chart.marked and i < len(chart.marked) and chart.marked[i])
        x1 = plot.left() + min(1.0, max(0.0, axis.frac(value))) * plot.width()
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QBrush(marked_colour if marked else base_colour))
        p.drawRect(QRectF(min(x0, x1), cy - lay.bar_height / 2, abs(x1 - x0), lay.bar_height))
        p.setBrush(Qt.BrushStyle.NoBrush)
        end = max(x0, x1)
        low = chart.low[i] if i < len(chart.low) else None
        high = chart.high[i] if i < len(chart.high) else None
        xs = [
            plot.left() + min(1.0, max(0.0, axis.frac(v))) * plot.width()
            for v in (low, high)
            if v is not None and axis.accepts(v)
        ]
        if xs:
            cap = lay.bar_height * 0.25
            xa, xb = min(xs + [x1]), max(xs + [x1])
            ctx.line(xa, cy, xb, cy, whisker)
            for x in xs:
                ctx.line(x, cy - cap, x, cy + cap, whisker)
            end = max(end, xb)
        if lay.stride == 1 and texts[i]:
            w = lfm.horizontalAdvance(texts[i])
            ctx.text(
                QRectF(end + ctx.pt(3), cy - lfm.height() / 2, w + 1, lfm.height()),
                LEFT,
                texts[i],
                lay.label_font,
                MUTED,
            )
    ctx.line(plot.left(), plot.top(), plot.left(), plot.bottom(), ctx.pen(AXIS, 0.6))
    draw_x_axis(ctx, plot, axis, ctx.font(0.9), ctx.font(1.0), lay.axis_bottom, rect)


# ---------------------------------------------------------------------- stacked bars


def _stacked_parts(chart: StackedBars) -> list[tuple[str, list[float]]]:
    n = len(chart.labels)
    parts = []
    for name, values in chart.parts.items():
        clean = [float(v) if all_finite(v) and v > 0 else 0.0 for v in list(values)[:n]]
        parts.append((name, clean + [0.0] * (n - len(clean))))
    return parts


def paint_stacked(ctx: Ctx, rect: QRectF, chart: StackedBars) -> None:
    parts = _stacked_parts(chart)
    totals = [sum(values[i] for _, values in parts) for i in range(len(chart.labels))]
    if not chart.labels or not parts or not any(t > 0 for t in totals):
        no_data(ctx, rect, chart.title)
        return
    top = draw_title(ctx, rect, chart.title)
    colours = [rgb(PALETTE[k % len(PALETTE)]) for k in range(len(parts))]
    legend = [LegendEntry(name, colours[k]) for k, (name, _) in enumerate(parts)]
    legend_h = flow_legend(ctx, legend, ctx.font(0.9), rect.left(), top, rect.width(), draw=False)
    texts = [format_value(t, chart.unit) if t > 0 else "" for t in totals]

    def make(length: float, slack: tuple[float, float], font: QFont) -> Axis:
        label = {"s": "median time", "%": "share of the median total"}.get(chart.unit, "median")
        return make_linear_axis(
            ctx,
            0.0,
            max(totals),
            chart.unit,
            label,
            length,
            font,
            horizontal=True,
            include_zero=True,
            extend=True,
            slack=slack,
        )

    lay = _bar_rows(ctx, rect, top, chart.labels, texts, make, legend_h)
    if not lay.fits:
        return  # the title alone
    flow_legend(ctx, legend, ctx.font(0.9), rect.left(), lay.legend_top, rect.width(), draw=True)
    plot, axis = lay.plot, lay.axis
    draw_grid(ctx, plot, axis, vertical_lines=True)
    lfm = ctx.fm(lay.label_font)
    p = ctx.painter
    separator = ctx.pen(WHITE, 0.4)
    for i, label in enumerate(lay.labels):
        cy = plot.top() + (i + 0.5) * lay.band
        if label:
            _draw_row_label(ctx, lay, rect.left(), cy, label)
        acc = 0.0
        x_prev = plot.left()
        for k, (_, values) in enumerate(parts):
            if values[i] <= 0:
                continue
            acc += values[i]
            x = plot.left() + min(1.0, axis.frac(acc)) * plot.width()
            p.setPen(Qt.PenStyle.NoPen)
            p.setBrush(QBrush(colours[k]))
            p.drawRect(QRectF(x_prev, cy - lay.bar_height / 2, x - x_prev, lay.bar_height))
            if x_prev > plot.left():  # a thin white seam between parts
                ctx.line(x_prev, cy - lay.bar_height / 2, x_prev, cy + lay.bar_height / 2, separator)
            x_prev = x
        p.setBrush(Qt.BrushStyle.NoBrush)
        if lay.stride == 1 and texts[i]:
            w = lfm.horizontalAdvance(texts[i])
            ctx.text(
                QRectF(x_prev + ctx.pt(3), cy - lfm.height() / 2, w + 1, lfm.height()),
                LEFT,
                texts[i],
                lay.label_font,
                MUTED,
            )
    ctx.line(plot.left(), plot.top(), plot.left(), plot.bottom(), ctx.pen(AXIS, 0.6))
    draw_x_axis(ctx, plot, axis, ctx.font(0.9), ctx.font(1.0), lay.axis_bottom, rect)

"""Line charts and scatters: scaling against message size, cost against security
level, per-sample series (integer ticks for sample numbers)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QFont, QPainterPath

from app.report.model import LineChart
from app.report.pdf.charts.axes import (
    Axis,
    draw_grid,
    draw_x_axis,
    draw_y_axis,
    make_linear_axis,
    make_log_axis,
    x_axis_extent,
    y_label_width,
)
from app.report.pdf.charts.context import LEFT, MUTED, Ctx, all_finite, draw_marker, rgb
from app.report.pdf.charts.frame import (
    LegendEntry,
    column_legend,
    column_legend_height,
    column_legend_width,
    draw_title,
    elide_to_width,
    flow_legend,
    no_data,
)
from app.report.style import MARKED, PALETTE

# ------------------------------------------------------------------------ line chart


_SHAPES = ("circle", "square", "triangle")


def _series_styles(chart: LineChart) -> list[tuple[QColor, str]]:
    """Colour and marker per series: marked ones in MARKED with diamonds, the others
    through the palette (without the MARKED colour), changing shape on each cycle."""
    others = [c for c in PALETTE if c != MARKED]
    styles = []
    k = 0
    for series in chart.series:
        if series.marked:
            styles.append((rgb(MARKED), "diamond"))
        else:
            styles.append((rgb(others[k % len(others)]), _SHAPES[(k // len(others)) % len(_SHAPES)]))
            k += 1
    return styles


def _usable_points(chart: LineChart) -> list[list[tuple[float, float] | None]]:
    """Per series, (x, y) per point, None where it cannot be drawn (non-finite, or
    not positive on a log axis)."""
    out = []
    for s in chart.series:
        pts: list[tuple[float, float] | None] = []
        for x, y in zip(s.xs, s.ys):
            ok = all_finite(x, y) and (x > 0 or not chart.log_x) and (y > 0 or not chart.log_y)
            pts.append((float(x), float(y)) if ok else None)
        out.append(pts)
    return out


def paint_lines(ctx: Ctx, rect: QRectF, chart: LineChart) -> None:
    points = _usable_points(chart)
    if not any(p is not None for pts in points for p in pts):
        no_data(ctx, rect, chart.title)
        return
    top = draw_title(ctx, rect, chart.title)
    styles = _series_styles(chart)
    tick_font, title_font = ctx.font(0.9), ctx.font(1.0)
    entries = _legend_entries(chart, points, styles)
    legend = _place_legend(ctx, rect, entries, top, x_axis_extent(ctx, tick_font, title_font))
    top = legend.top + ctx.pt(2)
    bottom = rect.bottom() - x_axis_extent(ctx, tick_font, title_font)
    if bottom - top < 2 * ctx.fm(tick_font).height() or legend.right - rect.left() < ctx.pt(60):
        return  # no room for a plot: the title alone
    plot_h = bottom - top

    xs = [p[0] for pts in points for p in pts if p is not None]
    ys = [p[1] for pts in points for p in pts if p is not None]
    whole_xs = all(float(x).is_integer() for x in xs)
    tick_h = ctx.fm(tick_font).height()
    y_axis = _value_axis(
        ctx,
        tick_font,
        (min(ys), max(ys)),
        chart.y_unit,
        chart.y_label,
        chart.log_y,
        plot_h,
        horizontal=False,
        slack=(tick_h / 2, min(top - rect.top(), tick_h / 2)),
        whole_xs=whole_xs,
    )
    y_title_w = ctx.fm(title_font).height()
    plot_left = rect.left() + y_title_w + ctx.pt(3) + y_label_width(ctx, y_axis, tick_font) + ctx.pt(5)
    plot = QRectF(plot_left, top, max(legend.right - plot_left, ctx.pt(4)), plot_h)
    x_axis = _value_axis(
        ctx,
        tick_font,
        (min(xs), max(xs)),
        chart.x_unit,
        chart.x_label,
        chart.log_x,
        plot.width(),
        horizontal=True,
        slack=(plot.left() - rect.left(), rect.right() - plot.right()),
        whole_xs=whole_xs,
    )

    draw_grid(ctx, plot, x_axis, vertical_lines=True)
    draw_grid(ctx, plot, y_axis, vertical_lines=False)

    def at(pt: tuple[float, float]) -> QPointF:
        return QPointF(
            plot.left() + x_axis.frac(pt[0]) * plot.width(), plot.bottom() - y_axis.frac(pt[1]) * plot.height()
        )

    marker_boxes = _draw_series(ctx, chart, points, styles, at)
    _point_labels(ctx, chart, points, at, plot, marker_boxes)

    draw_y_axis(ctx, plot, y_axis, tick_font, title_font, rect.left(), rect)
    draw_x_axis(ctx, plot, x_axis, tick_font, title_font, rect.bottom(), rect)
    if legend.column:
        column_legend(ctx, entries, legend.font, rect.right() - legend.column, plot.top(), legend.column, plot.height())


def _legend_entries(
    chart: LineChart, points: list[list[tuple[float, float] | None]], styles: list[tuple[QColor, str]]
) -> list[LegendEntry]:
    """One entry per named series with a point to draw, and one for hollow markers if any."""
    entries = [
        LegendEntry(s.name, styles[i][0], "series", styles[i][1], chart.lines)
        for i, s in enumerate(chart.series)
        if s.name and any(p is not None for p in points[i])
    ]
    if chart.hollow_label and any(any(s.hollow or ()) for s in chart.series):
        entries.append(LegendEntry(chart.hollow_label, MUTED, "series", "circle", False, hollow=True))
    return entries


@dataclass(frozen=True)
class _LegendPlace:
    """Where a line chart's legend went: the plot's top and right edge it leaves, its font,
    and the width of its column beside the plot (0: none, or wrapped in rows above)."""

    top: float
    right: float
    font: QFont
    column: float


def _place_legend(ctx: Ctx, rect: QRectF, entries: list[LegendEntry], top: float, x_axis_height: float) -> _LegendPlace:
    """A legend names the series: every entry is shown. Beside the plot while the column
    holds them all (in a smaller font if need be), else wrapped in rows above it (drawn now)."""
    right = rect.right() - ctx.pt(4)
    if not entries:
        return _LegendPlace(top, right, ctx.font(0.9), 0.0)
    room = rect.bottom() - top - ctx.pt(2) - x_axis_height
    for size in (0.9, 0.75):
        font = ctx.font(size)
        width = column_legend_width(ctx, entries, font, rect.width() * 0.3)
        if rect.width() * 0.3 >= ctx.pt(70) and column_legend_height(ctx, entries, font, width) <= room:
            return _LegendPlace(top, rect.right() - width - ctx.pt(8), font, width)
    font = ctx.font(0.75)
    top += flow_legend(ctx, entries, font, rect.left(), top, rect.width(), draw=True) + ctx.pt(3)
    return _LegendPlace(top, right, font, 0.0)


def _value_axis(
    ctx: Ctx,
    tick_font: QFont,
    span: tuple[float, float],
    unit: str,
    label: str,
    log: bool,
    length: float,
    *,
    horizontal: bool,
    slack: tuple[float, float],
    whole_xs: bool,
) -> Axis:
    """One axis of a line chart over `span`: logarithmic, or linear from zero for times and
    sizes; an x axis of counts whose values are all whole (`whole_xs`) is ticked 1, 2, 3."""
    vmin, vmax = span
    if log:
        return make_log_axis(
            ctx, vmin, vmax, unit, label, length, tick_font, horizontal=horizontal, slack=slack, pad=0.03
        )
    zero = unit in ("s", "B") and vmin >= 0
    # Counts (sample numbers, bits) are ticked 1, 2, 3, never 1.5.
    whole = horizontal and unit in ("", "bits", "bit") and whole_xs
    return make_linear_axis(
        ctx,
        vmin,
        vmax,
        unit,
        label,
        length,
        tick_font,
        horizontal=horizontal,
        include_zero=zero,
        extend=zero or not horizontal,
        pad=0.06,
        slack=slack,
        integer=whole,
    )


def _draw_series(
    ctx: Ctx,
    chart: LineChart,
    points: list[list[tuple[float, float] | None]],
    styles: list[tuple[QColor, str]],
    at: Callable[[tuple[float, float]], QPointF],
) -> list[QRectF]:
    """Each series' line (broken where a point cannot be drawn) if the chart has lines, then
    its markers, hollow where the series says; the markers' boxes, for the labels to avoid."""
    r = ctx.pt(2.3)
    if chart.lines:
        for i, pts in enumerate(points):
            path = QPainterPath()
            drawing = False
            for pt in pts:
                if pt is None:
                    drawing = False
                    continue
                if drawing:
                    path.lineTo(at(pt))
                else:
                    path.moveTo(at(pt))
                    drawing = True
            ctx.painter.setPen(ctx.pen(styles[i][0], 1.3))
            ctx.painter.drawPath(path)
    marker_boxes: list[QRectF] = []
    for i, pts in enumerate(points):
        hollow = list(chart.series[i].hollow or []) + [False] * len(pts)  # a short list: the rest filled
        for pt, open_marker in zip(pts, hollow):
            if pt is not None:
                c = at(pt)
                draw_marker(ctx, c, r, styles[i][1], styles[i][0], hollow=open_marker)
                marker_boxes.append(QRectF(c.x() - r, c.y() - r, 2 * r, 2 * r))
    return marker_boxes


def _point_labels(
    ctx: Ctx,
    chart: LineChart,
    points: list[list[tuple[float, float] | None]],
    at: Callable[[tuple[float, float]], QPointF],
    plot: QRectF,
    markers: list[QRectF],
) -> None:
    """Small labels beside their points: the first free spot of a few around each
    marker, inside the plot, clear of markers and of labels placed before; a label
    with no free spot is left out."""
    font = ctx.font(0.75)
    fm = ctx.fm(font)
    placed: list[QRectF] = []
    off = ctx.pt(3.5)
    for s, pts in zip(chart.series, points):
        if not s.point_labels:
            continue
        for text, pt in zip(s.point_labels, pts):
            if pt is None or not text:
                continue
            c = at(pt)
            text = elide_to_width(fm, text, plot.width() * 0.65)
            w, h = fm.horizontalAdvance(text) + 1, fm.height()
            for x, y in (
                (c.x() + off, c.y() - h + ctx.pt(1)),
                (c.x() + off, c.y() - ctx.pt(1)),
                (c.x() - off - w, c.y() - h + ctx.pt(1)),
                (c.x() - off - w, c.y() - ctx.pt(1)),
                (c.x() - w / 2, c.y() - off - h),
                (c.x() - w / 2, c.y() + off),
            ):
                box = QRectF(x, y, w, h)
                if not plot.contains(box):
                    continue
                inner = box.adjusted(ctx.pt(0.5), ctx.pt(1.5), -ctx.pt(0.5), -ctx.pt(1.5))
                if any(inner.intersects(o) for o in placed) or any(inner.intersects(m) for m in markers):
                    continue
                placed.append(box)
                ctx.text(box, LEFT, text, font, MUTED)
                break

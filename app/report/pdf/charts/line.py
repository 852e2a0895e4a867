"""Line charts and scatters: scaling against message size, cost against security
level, per-sample series (integer ticks for sample numbers)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF
from PySide6.QtGui import QColor, QPainterPath

from app.report.model import LineChart
from app.report.pdf.charts.axes import (
    _Axis,
    _draw_grid,
    _draw_x_axis,
    _draw_y_axis,
    _make_linear_axis,
    _make_log_axis,
    _x_axis_height,
    _y_label_width,
)
from app.report.pdf.charts.context import _LEFT, MUTED, _Ctx, _draw_marker, _finite, _rgb
from app.report.pdf.charts.frame import (
    _column_legend,
    _column_legend_height,
    _column_legend_width,
    _elide,
    _flow_legend,
    _LegendEntry,
    _no_data,
    _title,
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
            styles.append((_rgb(MARKED), "diamond"))
        else:
            styles.append((_rgb(others[k % len(others)]), _SHAPES[(k // len(others)) % len(_SHAPES)]))
            k += 1
    return styles


def _usable_points(chart: LineChart) -> list[list[tuple[float, float] | None]]:
    """Per series, (x, y) per point, None where it cannot be drawn (non-finite, or
    not positive on a log axis)."""
    out = []
    for s in chart.series:
        pts: list[tuple[float, float] | None] = []
        for x, y in zip(s.xs, s.ys):
            ok = _finite(x, y) and (x > 0 or not chart.log_x) and (y > 0 or not chart.log_y)
            pts.append((float(x), float(y)) if ok else None)
        out.append(pts)
    return out


def _paint_lines(ctx: _Ctx, rect: QRectF, chart: LineChart) -> None:
    points = _usable_points(chart)
    if not any(p is not None for pts in points for p in pts):
        _no_data(ctx, rect, chart.title)
        return
    top = _title(ctx, rect, chart.title)
    styles = _series_styles(chart)
    legend_font, tick_font, title_font = ctx.font(0.9), ctx.font(0.9), ctx.font(1.0)
    entries = [
        _LegendEntry(s.name, styles[i][0], "series", styles[i][1], chart.lines)
        for i, s in enumerate(chart.series)
        if s.name and any(p is not None for p in points[i])
    ]
    if chart.hollow_label and any(any(s.hollow or ()) for s in chart.series):
        entries.append(_LegendEntry(chart.hollow_label, MUTED, "series", "circle", False, hollow=True))
    right = rect.right() - ctx.pt(4)
    legend_column = 0.0
    if entries:
        # A legend names the series: every entry is shown. Beside the plot while the column
        # holds them all (in a smaller font if need be), else wrapped in rows above it.
        room = rect.bottom() - top - ctx.pt(2) - _x_axis_height(ctx, tick_font, title_font)
        for size in (0.9, 0.75):
            font = ctx.font(size)
            width = _column_legend_width(ctx, entries, font, rect.width() * 0.3)
            if rect.width() * 0.3 >= ctx.pt(70) and _column_legend_height(ctx, entries, font, width) <= room:
                legend_font, legend_column = font, width
                right = rect.right() - width - ctx.pt(8)
                break
        else:
            legend_font = ctx.font(0.75)
            top += _flow_legend(ctx, entries, legend_font, rect.left(), top, rect.width(), draw=True) + ctx.pt(3)
    top += ctx.pt(2)
    bottom = rect.bottom() - _x_axis_height(ctx, tick_font, title_font)
    if bottom - top < 2 * ctx.fm(tick_font).height() or right - rect.left() < ctx.pt(60):
        return  # no room for a plot: the title alone
    plot_h = bottom - top

    xs = [p[0] for pts in points for p in pts if p is not None]
    ys = [p[1] for pts in points for p in pts if p is not None]

    def axis(
        vmin: float,
        vmax: float,
        unit: str,
        label: str,
        log: bool,
        length: float,
        horizontal: bool,
        slack: tuple[float, float],
    ) -> _Axis:
        if log:
            return _make_log_axis(
                ctx, vmin, vmax, unit, label, length, tick_font, horizontal=horizontal, slack=slack, pad=0.03
            )
        zero = unit in ("s", "B") and vmin >= 0
        # Counts (sample numbers, bits) are ticked 1, 2, 3, never 1.5.
        whole = horizontal and unit in ("", "bits", "bit") and all(float(x).is_integer() for x in xs)
        return _make_linear_axis(
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

    tick_h = ctx.fm(tick_font).height()
    y_axis = axis(
        min(ys),
        max(ys),
        chart.y_unit,
        chart.y_label,
        chart.log_y,
        plot_h,
        False,
        (tick_h / 2, min(top - rect.top(), tick_h / 2)),
    )
    y_title_w = ctx.fm(title_font).height()
    plot_left = rect.left() + y_title_w + ctx.pt(3) + _y_label_width(ctx, y_axis, tick_font) + ctx.pt(5)
    plot = QRectF(plot_left, top, max(right - plot_left, ctx.pt(4)), plot_h)
    x_axis = axis(
        min(xs),
        max(xs),
        chart.x_unit,
        chart.x_label,
        chart.log_x,
        plot.width(),
        True,
        (plot.left() - rect.left(), rect.right() - plot.right()),
    )

    _draw_grid(ctx, plot, x_axis, vertical_lines=True)
    _draw_grid(ctx, plot, y_axis, vertical_lines=False)

    def at(pt: tuple[float, float]) -> QPointF:
        return QPointF(
            plot.left() + x_axis.frac(pt[0]) * plot.width(), plot.bottom() - y_axis.frac(pt[1]) * plot.height()
        )

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
                _draw_marker(ctx, c, r, styles[i][1], styles[i][0], hollow=open_marker)
                marker_boxes.append(QRectF(c.x() - r, c.y() - r, 2 * r, 2 * r))
    _point_labels(ctx, chart, points, at, plot, marker_boxes)

    _draw_y_axis(ctx, plot, y_axis, tick_font, title_font, rect.left(), rect)
    _draw_x_axis(ctx, plot, x_axis, tick_font, title_font, rect.bottom(), rect)
    if legend_column:
        _column_legend(
            ctx, entries, legend_font, rect.right() - legend_column, plot.top(), legend_column, plot.height()
        )


def _point_labels(
    ctx: _Ctx,
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
            text = _elide(fm, text, plot.width() * 0.65)
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
                ctx.text(box, _LEFT, text, font, MUTED)
                break

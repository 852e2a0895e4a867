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
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QFont,
    QFontMetricsF,
    QPainter,
    QPainterPath,
    QPen,
    QPolygonF,
)

from app.report.model import BarChart, ChartData, Histogram, LineChart, StackedBars
from app.report.style import MARKED, PALETTE
from app.report.units import format_bytes, format_seconds

__all__ = ["paint_chart", "preferred_aspect"]

# ------------------------------------------------------------------------- constants

TEXT = QColor(34, 34, 34)
MUTED = QColor(96, 96, 96)
AXIS = QColor(85, 85, 85)
GRID = QColor(0xE0, 0xE0, 0xE0)  # opaque: translucent lines are slow and print badly
MINOR_GRID = QColor(0xF0, 0xF0, 0xF0)
WHISKER = QColor(51, 51, 51)
WHITE = QColor(255, 255, 255)

#: Units whose numbers are shown plainly (no SI prefix).
PLAIN_UNITS = frozenset({"", "bits", "bit", "%", "x", "×"})
_TIME_PREFIXES = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))
_BINARY_PREFIXES = ((1024.0**3, "GiB"), (1024.0**2, "MiB"), (1024.0, "KiB"), (1.0, "B"))
_SI_PREFIXES = ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, ""), (1e-3, "m"), (1e-6, "µ"),
                (1e-9, "n"), (1e-12, "p"))
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


# ------------------------------------------------------------------- numbers & units


def nice_step(span: float, target: int = 5, *, integer: bool = False) -> float:
    """The smallest 1-2-5 step (…, 0.1, 0.2, 0.5, 1, 2, 5, 10, …) that cuts `span`
    into at most about `target` intervals. `integer`: never below 1."""
    if not math.isfinite(span) or span <= 0:
        return 1.0
    raw = span / max(1, target)
    magnitude = 10.0 ** math.floor(math.log10(raw))
    step = 10.0 * magnitude
    for m in (1.0, 2.0, 5.0, 10.0):
        if m * magnitude >= raw * (1 - 1e-9):
            step = m * magnitude
            break
    return max(step, 1.0) if integer else step


def nice_ticks(lo: float, hi: float, target: int = 5, *, integer: bool = False) -> list[float]:
    """Ticks at multiples of a 1-2-5 step inside [lo, hi]: `nice_ticks(0, 17.3)` is
    [0, 5, 10, 15]."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return []
    if hi < lo:
        lo, hi = hi, lo
    if hi == lo:
        return [lo]
    return _multiples(lo, hi, nice_step(hi - lo, target, integer=integer))


def log_ticks(lo: float, hi: float, *, base: int = 10, stride: int = 1) -> list[float]:
    """Powers of `base` inside [lo, hi] (both > 0), every `stride`-th exponent:
    `log_ticks(1e-6, 3e-3)` is [1e-6, 1e-5, 1e-4, 1e-3]."""
    if not (lo > 0 and hi > 0 and math.isfinite(lo) and math.isfinite(hi)):
        return []
    if hi < lo:
        lo, hi = hi, lo
    first = math.ceil(math.log(lo, base) - 1e-9)
    last = math.floor(math.log(hi, base) + 1e-9)
    return [_power(base, e) for e in range(first, last + 1) if e % stride == 0]


def _power(base: int, exponent: int) -> float:
    # float("1e-6") is the literal 1e-06, which 10.0 ** -6 need not be
    return float(f"1e{exponent}") if base == 10 else float(base) ** exponent


def _multiples(lo: float, hi: float, step: float) -> list[float]:
    eps = step * 1e-9
    return [_clean(k * step) for k in range(math.ceil((lo - eps) / step), math.floor((hi + eps) / step) + 1)]


def _clean(value: float) -> float:
    """A tick value without binary noise (0.30000000000000004 -> 0.3, -0.0 -> 0.0)."""
    return float(f"{value:.12g}") + 0.0


def axis_prefix(unit: str, magnitude: float) -> tuple[float, str]:
    """The scale and unit text for a linear axis whose largest absolute value is
    `magnitude`: ("s", 2e-5) -> (1e-6, "µs"); ("B", 3e6) -> (1048576, "MiB");
    plain units ("bits", "") keep scale 1."""
    magnitude = abs(magnitude) if math.isfinite(magnitude) else 0.0
    if unit in PLAIN_UNITS:
        return 1.0, unit
    if unit == "s":
        table: Sequence[tuple[float, str]] = _TIME_PREFIXES
    elif unit == "B":
        table = _BINARY_PREFIXES
    else:
        table = tuple((f, p + unit) for f, p in _SI_PREFIXES)
    if magnitude == 0:
        return 1.0, unit
    for factor, text in table:
        if magnitude >= factor * (1 - 1e-9):
            return factor, text
    return table[-1]


def format_value(value: float, unit: str) -> str:
    """One value with its own unit, as the tables show it: "12.3 µs", "1.5 KiB",
    "128 bits", "4.2 MB/s"."""
    if not math.isfinite(value):
        return "-"
    if unit == "s":
        return format_seconds(value)
    if unit == "B":
        return format_bytes(value)
    if unit in PLAIN_UNITS:
        text = _plain(value)
        return f"{text} {unit}" if unit and unit not in ("%",) else text + unit
    factor, text = axis_prefix(unit, value)
    return f"{value / factor:.3g} {text}"


def _plain(value: float) -> str:
    if value == int(value) and abs(value) < 1e6:
        return str(int(value))
    return f"{value:.3g}"


def _log_tick_text(value: float, unit: str) -> str:
    if unit in PLAIN_UNITS:
        exponent = round(math.log10(value)) if value > 0 else 0
        if value > 0 and abs(value - 10.0**exponent) <= 1e-9 * value and abs(exponent) >= 4:
            return "10" + str(exponent).translate(_SUPERSCRIPT)
        return _plain(value)
    return format_value(value, unit)


def _linear_tick_text(value: float, step: float) -> str:
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
    text = f"{value:.{min(decimals, 9)}f}"
    return "0" if float(text) == 0 else text


def axis_title(label: str, unit: str, *, log: bool = False, unit_text: str | None = None) -> str:
    """"median time (µs)", "message size (log scale)", "security (bits)"."""
    if log:
        if unit in PLAIN_UNITS and unit:
            return f"{label} ({unit}, log scale)"
        return f"{label} (log scale)"
    shown = unit if unit_text is None else unit_text
    return f"{label} ({shown})" if shown else label


# ------------------------------------------------------------------------- painting


class _Ctx:
    """A painter with sizes in points: `u` logical units per point."""

    def __init__(self, painter: QPainter, font_family: str | None, base_point_size: float) -> None:
        self.painter = painter
        self.device = painter.device()
        dpi = float(self.device.logicalDpiY()) if self.device is not None else 96.0
        if not dpi > 0:
            dpi = 96.0
        det = painter.worldTransform().determinant()
        scale = math.sqrt(abs(det)) if math.isfinite(det) and det != 0 else 1.0
        self.scale = scale  # device units per logical unit
        self.u = dpi / 72.0 / scale
        self.base = float(base_point_size) if base_point_size > 0 else 8.0
        self._font = QFont(font_family) if font_family else QFont()
        # No "ﬁ"/"ﬂ" ligatures: in a PDF they copy and search as one odd character.
        self._font.setFeature(QFont.Tag("liga"), 0)

    def font(self, rel: float = 1.0, *, bold: bool = False, italic: bool = False) -> QFont:
        font = QFont(self._font)
        font.setPointSizeF(max(self.base * rel / self.scale, 0.1))
        font.setBold(bold)
        font.setItalic(italic)
        return font

    def fm(self, font: QFont) -> QFontMetricsF:
        if self.device is not None:
            return QFontMetricsF(font, self.device)
        return QFontMetricsF(font)

    def pt(self, points: float) -> float:
        return points * self.u

    def pen(self, colour: QColor, width_pt: float, style: Qt.PenStyle = Qt.PenStyle.SolidLine) -> QPen:
        pen = QPen(QColor(colour), width_pt * self.u, style)
        pen.setCapStyle(Qt.PenCapStyle.FlatCap)
        pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        return pen

    def text(self, rect: QRectF, flags: Qt.AlignmentFlag, text: str, font: QFont,
             colour: QColor = TEXT) -> None:
        p = self.painter
        p.setFont(font)
        p.setPen(QPen(colour))
        p.drawText(rect, flags, text)

    def line(self, x1: float, y1: float, x2: float, y2: float, pen: QPen) -> None:
        self.painter.setPen(pen)
        self.painter.drawLine(QPointF(x1, y1), QPointF(x2, y2))


_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
_RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
_CENTER = Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignVCenter


def _rgb(colour: tuple[int, int, int]) -> QColor:
    return QColor(*colour)


def _mix(colour: QColor, other: QColor, t: float) -> QColor:
    """`colour` moved a fraction `t` towards `other` (opaque)."""
    return QColor(round(colour.red() + (other.red() - colour.red()) * t),
                  round(colour.green() + (other.green() - colour.green()) * t),
                  round(colour.blue() + (other.blue() - colour.blue()) * t))


def _finite(*values: float | None) -> bool:
    return all(v is not None and math.isfinite(v) for v in values)


# ------------------------------------------------------------------------------ axes


@dataclass
class _Axis:
    lo: float
    hi: float
    log: bool
    ticks: list[float]
    labels: list[str]
    title: str
    minor: list[float] = field(default_factory=list)
    base: int = 10
    #: Where each tick label is drawn along the axis (its centre, after keeping it in bounds).
    label_pos: list[float] = field(default_factory=list)

    def frac(self, value: float) -> float:
        if self.log:
            if value <= 0:
                return -math.inf
            return (math.log(value) - math.log(self.lo)) / (math.log(self.hi) - math.log(self.lo))
        return (value - self.lo) / (self.hi - self.lo)

    def accepts(self, value: float | None) -> bool:
        return value is not None and math.isfinite(value) and (value > 0 or not self.log)


def _fits(extents: list[float], centres: list[float], gap: float, low: float, high: float) -> list[float] | None:
    """Label centres kept inside [low, high] (shifted inwards at the ends), or None
    when two neighbours (each `extents[i]` long) would come closer than `gap`."""
    placed = []
    for size, c in zip(extents, centres):
        c = min(max(c, low + size / 2), high - size / 2)
        placed.append(c)
    for i in range(1, len(placed)):
        if placed[i] - placed[i - 1] < (extents[i] + extents[i - 1]) / 2 + gap:
            return None
    return placed


def _linear_range(vmin: float, vmax: float, *, include_zero: bool) -> tuple[float, float]:
    if include_zero:
        vmin, vmax = min(vmin, 0.0), max(vmax, 0.0)
    if vmax <= vmin:  # a single value: a range around it
        spread = abs(vmin) * 0.5 or 1.0
        return (vmin if include_zero else vmin - spread), vmax + spread
    return vmin, vmax


def _make_linear_axis(ctx: _Ctx, vmin: float, vmax: float, unit: str, label: str, length: float,
                      font: QFont, *, horizontal: bool, include_zero: bool, extend: bool, pad: float = 0.0,
                      integer: bool = False, slack: tuple[float, float] = (0.0, 0.0)) -> _Axis:
    lo, hi = _linear_range(vmin, vmax, include_zero=include_zero)
    if pad and not extend:
        span = hi - lo
        lo, hi = (lo - span * pad if not (include_zero and lo == 0) else lo), hi + span * pad
    fm = ctx.fm(font)
    spacing = ctx.pt(42 if horizontal else 24)
    start = int(min(10, max(2, length / spacing + 1)))
    fallback: _Axis | None = None
    for target in range(start, 0, -1):
        factor, unit_text = axis_prefix(unit, max(abs(lo), abs(hi)))
        a_lo, a_hi = lo / factor, hi / factor
        step = nice_step(a_hi - a_lo, target, integer=integer and factor == 1)
        if extend:
            a_lo = math.floor(a_lo / step + 1e-9) * step
            a_hi = math.ceil(a_hi / step - 1e-9) * step
            if a_hi <= a_lo:
                a_hi = a_lo + step
        if (unit not in PLAIN_UNITS and unit != "B" and abs(a_hi) >= 1000 * (1 - 1e-9)
                and axis_prefix(unit, a_hi * factor)[0] != factor):
            # the extended end reached the next prefix (1000 µs): label it 1 ms
            factor2, unit_text = axis_prefix(unit, a_hi * factor)
            a_lo, a_hi, step = a_lo * factor / factor2, a_hi * factor / factor2, step * factor / factor2
            factor = factor2
        scaled = _multiples(a_lo, a_hi, step)
        labels = [_linear_tick_text(t, step) for t in scaled]
        axis = _Axis(a_lo * factor, a_hi * factor, False, [t * factor for t in scaled], labels,
                     axis_title(label, unit, unit_text=unit_text))
        placed = _place_labels(axis, fm, length, horizontal, slack, ctx)
        if placed is not None:
            axis.label_pos = placed
            return axis
        if fallback is None or len(scaled) >= 2:
            fallback = axis
    assert fallback is not None
    # even two ticks collide (a very short axis): label the first tick only
    fallback.ticks, fallback.labels = fallback.ticks[:1], fallback.labels[:1]
    fallback.label_pos = _place_labels(fallback, fm, length, horizontal, slack, ctx) or [0.0] * len(fallback.ticks)
    return fallback


def _place_labels(axis: _Axis, fm: QFontMetricsF, length: float, horizontal: bool,
                  slack: tuple[float, float], ctx: _Ctx) -> list[float] | None:
    if horizontal:
        extents = [fm.horizontalAdvance(s) for s in axis.labels]
        gap = ctx.pt(6)
    else:
        extents = [fm.height() for _ in axis.labels]
        gap = ctx.pt(2)
    centres = [axis.frac(t) * length for t in axis.ticks]
    return _fits(extents, centres, gap, -slack[0], length + slack[1])


def _make_log_axis(ctx: _Ctx, vmin: float, vmax: float, unit: str, label: str, length: float, font: QFont,
                   *, horizontal: bool, slack: tuple[float, float] = (0.0, 0.0), pad: float = 0.0) -> _Axis:
    base = 2 if unit == "B" else 10
    if not (vmin > 0 and math.isfinite(vmin)):
        vmin = vmax if vmax > 0 and math.isfinite(vmax) else 1.0
    if not (vmax > 0 and math.isfinite(vmax)):
        vmax = vmin
    e_lo = math.floor(math.log(vmin, base) + 1e-9)
    e_hi = math.ceil(math.log(vmax, base) - 1e-9)
    if e_hi <= e_lo:
        e_hi = e_lo + 1
    lo, hi = _power(base, e_lo), _power(base, e_hi)
    if pad:  # keep points off the very ends: a fraction `pad` of the span beyond the data
        span = math.log(vmax / vmin, base) or 1.0
        lo = min(lo, vmin / base ** (pad * span)) if vmin <= lo * base ** (pad * span) else lo
        hi = max(hi, vmax * base ** (pad * span)) if vmax >= hi / base ** (pad * span) else hi
    fm = ctx.fm(font)
    title = axis_title(label, unit, log=True)
    strides = (1, 2, 5, 10, 20, 50) if base == 2 else (1, 2, 3, 4, 5, 6, 10, 20)
    axis = _Axis(lo, hi, True, [], [], title, base=base)
    for stride in strides:
        ticks = log_ticks(lo, hi, base=base, stride=stride)
        if len(ticks) < 2 and stride > 1:
            continue
        axis.ticks, axis.labels = ticks, [_log_tick_text(t, unit) for t in ticks]
        placed = _place_labels(axis, fm, length, horizontal, slack, ctx)
        if placed is not None:
            axis.label_pos = placed
            break
    else:
        axis.ticks, axis.labels = axis.ticks[:1], axis.labels[:1]
        axis.label_pos = _place_labels(axis, fm, length, horizontal, slack, ctx) or [0.0] * len(axis.ticks)
    majors = set(axis.ticks)
    decades = math.log(hi / lo, base)
    if base == 10 and length / decades >= ctx.pt(28):
        axis.minor = [m for e in range(e_lo - 1, e_hi + 1) for k in range(2, 10)
                      if lo <= (m := k * _power(10, e)) <= hi]
    elif base == 2:
        axis.minor = [t for t in log_ticks(lo, hi, base=2) if t not in majors]
    return axis


# ----------------------------------------------------------------------- axis drawing


def _draw_grid(ctx: _Ctx, plot: QRectF, axis: _Axis, *, vertical_lines: bool) -> None:
    """Grid lines across `plot` at the axis ticks (vertical lines for an x axis)."""
    thin = ctx.pen(MINOR_GRID, 0.35)
    major = ctx.pen(GRID, 0.5)
    for values, pen in ((axis.minor, thin), (axis.ticks, major)):
        for v in values:
            f = axis.frac(v)
            if not 0 <= f <= 1 + 1e-9:
                continue
            if vertical_lines:
                x = plot.left() + f * plot.width()
                ctx.line(x, plot.top(), x, plot.bottom(), pen)
            else:
                y = plot.bottom() - f * plot.height()
                ctx.line(plot.left(), y, plot.right(), y, pen)


def _draw_x_axis(ctx: _Ctx, plot: QRectF, axis: _Axis, font: QFont, title_font: QFont, bottom: float,
                 bounds: QRectF) -> None:
    """Tick marks, labels below `plot` and the title ending at `bottom`."""
    fm = ctx.fm(font)
    tick = ctx.pt(3)
    pen = ctx.pen(AXIS, 0.6)
    ctx.line(plot.left(), plot.bottom(), plot.right(), plot.bottom(), pen)
    top = plot.bottom() + tick + ctx.pt(1.5)
    for value, text, centre in zip(axis.ticks, axis.labels, axis.label_pos):
        x = plot.left() + axis.frac(value) * plot.width()
        ctx.line(x, plot.bottom(), x, plot.bottom() + tick, pen)
        w = fm.horizontalAdvance(text)
        ctx.text(QRectF(plot.left() + centre - w / 2 - 1, top, w + 2, fm.height()), _CENTER, text, font)
    tfm = ctx.fm(title_font)
    half = min(plot.width() / 2 + ctx.pt(10), plot.center().x() - bounds.left(), bounds.right() - plot.center().x())
    title = tfm.elidedText(axis.title, Qt.TextElideMode.ElideRight, 2 * half)
    ctx.text(QRectF(plot.center().x() - half, bottom - tfm.height(), 2 * half, tfm.height()), _CENTER, title,
             title_font)


def _x_axis_height(ctx: _Ctx, font: QFont, title_font: QFont) -> float:
    return ctx.pt(3) + ctx.pt(1.5) + ctx.fm(font).height() + ctx.pt(2) + ctx.fm(title_font).height()


def _y_label_width(ctx: _Ctx, axis: _Axis, font: QFont) -> float:
    fm = ctx.fm(font)
    return max((fm.horizontalAdvance(s) for s in axis.labels), default=0.0)


def _draw_y_axis(ctx: _Ctx, plot: QRectF, axis: _Axis, font: QFont, title_font: QFont, left: float,
                 bounds: QRectF) -> None:
    """Tick marks and labels left of `plot`, the title rotated along `left`."""
    fm = ctx.fm(font)
    tick = ctx.pt(3)
    pen = ctx.pen(AXIS, 0.6)
    ctx.line(plot.left(), plot.top(), plot.left(), plot.bottom(), pen)
    right = plot.left() - tick - ctx.pt(2)
    for value, text, centre in zip(axis.ticks, axis.labels, axis.label_pos):
        y = plot.bottom() - axis.frac(value) * plot.height()
        ctx.line(plot.left() - tick, y, plot.left(), y, pen)
        w = fm.horizontalAdvance(text)
        cy = plot.bottom() - centre
        ctx.text(QRectF(right - w - 1, cy - fm.height() / 2, w + 2, fm.height()), _RIGHT, text, font)
    tfm = ctx.fm(title_font)
    span = plot.height()
    title = tfm.elidedText(axis.title, Qt.TextElideMode.ElideRight, span)
    p = ctx.painter
    p.save()
    centre_y = plot.center().y()
    half = span / 2
    centre_y = min(max(centre_y, bounds.top() + half), bounds.bottom() - half)
    p.translate(left + tfm.height() / 2, centre_y)
    p.rotate(-90)
    ctx.text(QRectF(-half, -tfm.height() / 2, span, tfm.height()), _CENTER, title, title_font)
    p.restore()


# -------------------------------------------------------------------------- markers


def _marker_path(centre: QPointF, r: float, shape: str) -> QPainterPath:
    path = QPainterPath()
    x, y = centre.x(), centre.y()
    if shape == "diamond":
        r *= 1.3
        path.addPolygon(QPolygonF([QPointF(x, y - r), QPointF(x + r, y), QPointF(x, y + r), QPointF(x - r, y)]))
        path.closeSubpath()
    elif shape == "square":
        r *= 0.9
        path.addRect(QRectF(x - r, y - r, 2 * r, 2 * r))
    elif shape == "triangle":
        r *= 1.2
        path.addPolygon(QPolygonF([QPointF(x, y - r), QPointF(x + r, y + r * 0.8), QPointF(x - r, y + r * 0.8)]))
        path.closeSubpath()
    else:
        path.addEllipse(centre, r, r)
    return path


def _draw_marker(ctx: _Ctx, centre: QPointF, r: float, shape: str, colour: QColor) -> None:
    p = ctx.painter
    p.setPen(ctx.pen(WHITE, 0.4))
    p.setBrush(QBrush(colour))
    p.drawPath(_marker_path(centre, r, shape))
    p.setBrush(Qt.BrushStyle.NoBrush)


# --------------------------------------------------------------------------- legend


@dataclass
class _LegendEntry:
    name: str
    colour: QColor
    kind: str = "box"  # "box" (bars) or "series" (line and/or marker)
    marker: str = "circle"
    line: bool = True


def _swatch_width(ctx: _Ctx, entry: _LegendEntry) -> float:
    return ctx.pt(7) if entry.kind == "box" else ctx.pt(14)


def _draw_swatch(ctx: _Ctx, entry: _LegendEntry, x: float, cy: float) -> None:
    if entry.kind == "box":
        s = ctx.pt(7)
        ctx.painter.setPen(Qt.PenStyle.NoPen)
        ctx.painter.setBrush(QBrush(entry.colour))
        ctx.painter.drawRect(QRectF(x, cy - s / 2, s, s))
        ctx.painter.setBrush(Qt.BrushStyle.NoBrush)
        return
    w = ctx.pt(14)
    if entry.line:
        ctx.line(x, cy, x + w, cy, ctx.pen(entry.colour, 1.2))
    _draw_marker(ctx, QPointF(x + w / 2, cy), ctx.pt(2.3), entry.marker, entry.colour)


def _flow_legend(ctx: _Ctx, entries: list[_LegendEntry], font: QFont, left: float, top: float,
                 width: float, *, draw: bool) -> float:
    """Entries left to right, wrapping; returns the height used."""
    if not entries:
        return 0.0
    fm = ctx.fm(font)
    row_h = fm.height() * 1.15
    gap, spacing = ctx.pt(3), ctx.pt(10)
    x, y = left, top
    for entry in entries:
        sw = _swatch_width(ctx, entry)
        text = _elide(fm, entry.name, max(width - sw - gap, ctx.pt(20)))
        w = sw + gap + fm.horizontalAdvance(text)
        if x > left and x + w > left + width:
            x, y = left, y + row_h
        if draw:
            _draw_swatch(ctx, entry, x, y + row_h / 2)
            ctx.text(QRectF(x + sw + gap, y, w - sw - gap + 1, row_h), _LEFT, text, font)
        x += w + spacing
    return y + row_h - top


def _column_legend_width(ctx: _Ctx, entries: list[_LegendEntry], font: QFont, limit: float) -> float:
    fm = ctx.fm(font)
    widest = max((_swatch_width(ctx, e) + ctx.pt(3) + fm.horizontalAdvance(e.name) for e in entries), default=0.0)
    return min(widest, limit)


def _column_legend(ctx: _Ctx, entries: list[_LegendEntry], font: QFont, left: float, top: float, width: float,
                   height: float) -> None:
    """Entries in a column, each name wrapped to the column; the ones beyond `height` are
    summarised as "+N more"."""
    fm = ctx.fm(font)
    row_h = fm.height() * 1.2
    texts = [wrap_label(fm, e.name, width - _swatch_width(ctx, e) - ctx.pt(3)) for e in entries]
    heights = [row_h + fm.height() * t.count("\n") for t in texts]
    shown = len(entries)
    while shown and sum(heights[:shown]) + (row_h if shown < len(entries) else 0) > height:
        shown -= 1
    y = top
    for entry, text, h in zip(entries[:shown], texts, heights):
        sw = _swatch_width(ctx, entry)
        _draw_swatch(ctx, entry, left, y + row_h / 2)
        ctx.text(QRectF(left + sw + ctx.pt(3), y + (row_h - fm.height()) / 2, width - sw - ctx.pt(3) + 1,
                        h - (row_h - fm.height())), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop, text, font)
        y += h
    if shown < len(entries):
        ctx.text(QRectF(left, y, width, row_h), _LEFT, _elide(fm, f"+{len(entries) - shown} more", width), font,
                 MUTED)


# ------------------------------------------------------------------------ title, empty


def _elide(fm: QFontMetricsF, text: str, width: float) -> str:
    """The one place chart text is cut (tests count the calls that cut)."""
    return fm.elidedText(text, Qt.TextElideMode.ElideRight, width)


def _title_lines(ctx: _Ctx, rect: QRectF, title: str) -> str:
    """The title wrapped to the chart's width (a title names the data: it is not cut)."""
    return wrap_label(ctx.fm(ctx.font(1.15, bold=True)), title, rect.width()) if title else ""


def _title_height(ctx: _Ctx, rect: QRectF, title: str) -> float:
    if not title:
        return 0.0
    fm = ctx.fm(ctx.font(1.15, bold=True))
    return fm.height() * (_title_lines(ctx, rect, title).count("\n") + 1) + ctx.pt(4)


def _title(ctx: _Ctx, rect: QRectF, title: str) -> float:
    """Draw the title at the top of `rect`; returns the y below it."""
    font = ctx.font(1.15, bold=True)
    height = _title_height(ctx, rect, title)
    if not title or height > rect.height():
        return rect.top()
    ctx.text(QRectF(rect.left(), rect.top(), rect.width(), height - ctx.pt(4)), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop,
             _title_lines(ctx, rect, title), font)
    return rect.top() + height


def _too_small(ctx: _Ctx, rect: QRectF, title: str) -> None:
    """A rect with no room for the plot: the title alone (where it fits)."""
    _title(ctx, rect, title)


def _no_data(ctx: _Ctx, rect: QRectF, title: str) -> None:
    top = _title(ctx, rect, title)
    font = ctx.font(1.0, italic=True)
    fm = ctx.fm(font)
    area = QRectF(rect.left(), top, rect.width(), max(rect.bottom() - top, 0.0))
    if area.height() >= fm.height():
        ctx.text(area, _CENTER, fm.elidedText("no data", Qt.TextElideMode.ElideRight, rect.width()), font, MUTED)


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
    axis: _Axis
    legend_top: float
    axis_bottom: float
    #: Every `stride`-th row is labelled (1: all); value texts are drawn only at 1, where
    #: a text cannot reach into the neighbouring rows.
    stride: int = 1
    #: False when the rect is too small for rows and axis: only the title is drawn.
    fits: bool = True


def wrap_label(fm: QFontMetricsF, text: str, width: float) -> str:
    """`text` broken at spaces into lines no wider than `width` ("\\n" between them). A
    single word wider than `width` is elided: the only case where a label loses text."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and fm.horizontalAdvance(f"{lines[-1]} {word}") <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return "\n".join(line if fm.horizontalAdvance(line) <= width + 0.5
                     else _elide(fm, line, width) for line in lines)


def _draw_row_label(ctx: _Ctx, lay: BarLayout, left: float, cy: float, label: str) -> None:
    height = ctx.fm(lay.label_font).height() * (label.count("\n") + 1)
    ctx.text(QRectF(left, cy - height / 2, lay.label_width + 1, height), _RIGHT, label, lay.label_font)


def _bar_rows(ctx: _Ctx, rect: QRectF, top: float, labels: Sequence[str], value_texts: Sequence[str],
              axis_fn: Callable[[float, tuple[float, float], QFont], _Axis], legend_h: float) -> BarLayout:
    tick_font, title_font = ctx.font(0.9), ctx.font(1.0)
    legend_top = top
    top += legend_h + (ctx.pt(3) if legend_h else 0)
    bottom = rect.bottom() - _x_axis_height(ctx, tick_font, title_font)
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
    stride = max(1, math.ceil(max((t.count("\n") + 1 for t in wrapped), default=1) * lfm.height() * 1.02 / band
                                - 1e-9))
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


def _bar_axis(ctx: _Ctx, chart: BarChart) -> Callable[[float, tuple[float, float], QFont], _Axis]:
    ends = [float(v) for v in (*chart.values, *chart.high, *chart.low) if v is not None and math.isfinite(v)]

    def make(length: float, slack: tuple[float, float], font: QFont) -> _Axis:
        if chart.log:
            positive = [v for v in ends if v > 0]
            return _make_log_axis(ctx, min(positive, default=1.0), max(positive, default=1.0), chart.unit,
                                  chart.value_label, length, font, horizontal=True, slack=slack)
        return _make_linear_axis(ctx, min(ends, default=0.0), max(ends, default=1.0), chart.unit,
                                 chart.value_label, length, font, horizontal=True, include_zero=True,
                                 extend=True, slack=slack)

    return make


def _bar_legend(chart: BarChart) -> list[_LegendEntry]:
    if chart.marked_label and chart.marked and any(chart.marked[: len(chart.labels)]):
        return [_LegendEntry(chart.marked_label, _rgb(MARKED))]
    return []


def _bar_value_texts(chart: BarChart) -> list[str]:
    return [format_value(v, chart.unit) if _finite(v) else "" for v in chart.values]


def _bar_has_data(chart: BarChart) -> bool:
    return bool(chart.labels) and any(_finite(v) and (v > 0 or not chart.log) for v in chart.values)


def _bar_layout(painter: QPainter, rect: QRectF, chart: BarChart, *, font_family: str | None = None,
                base_point_size: float = 8.0) -> BarLayout:
    """The layout `paint_chart` uses for a bar chart (exposed for tests)."""
    ctx = _Ctx(painter, font_family, base_point_size)
    return _bar_chart_layout(ctx, QRectF(rect), chart)


def _bar_chart_layout(ctx: _Ctx, rect: QRectF, chart: BarChart) -> BarLayout:
    top = rect.top() + _title_height(ctx, rect, chart.title)
    legend = _bar_legend(chart)
    legend_h = _flow_legend(ctx, legend, ctx.font(0.9), rect.left(), top, rect.width(), draw=False)
    return _bar_rows(ctx, rect, top, chart.labels, _bar_value_texts(chart), _bar_axis(ctx, chart), legend_h)


def _paint_bars(ctx: _Ctx, rect: QRectF, chart: BarChart) -> None:
    if not _bar_has_data(chart):
        _no_data(ctx, rect, chart.title)
        return
    lay = _bar_chart_layout(ctx, rect, chart)
    if not lay.fits:
        _too_small(ctx, rect, chart.title)
        return
    _title(ctx, rect, chart.title)
    _flow_legend(ctx, _bar_legend(chart), ctx.font(0.9), rect.left(), lay.legend_top, rect.width(), draw=True)
    plot, axis = lay.plot, lay.axis
    _draw_grid(ctx, plot, axis, vertical_lines=True)
    base_colour, marked_colour = _rgb(PALETTE[0]), _rgb(MARKED)
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
        xs = [plot.left() + min(1.0, max(0.0, axis.frac(v))) * plot.width()
              for v in (low, high) if v is not None and axis.accepts(v)]
        if xs:
            cap = lay.bar_height * 0.25
            xa, xb = min(xs + [x1]), max(xs + [x1])
            ctx.line(xa, cy, xb, cy, whisker)
            for x in xs:
                ctx.line(x, cy - cap, x, cy + cap, whisker)
            end = max(end, xb)
        if lay.stride == 1 and texts[i]:
            w = lfm.horizontalAdvance(texts[i])
            ctx.text(QRectF(end + ctx.pt(3), cy - lfm.height() / 2, w + 1, lfm.height()), _LEFT, texts[i],
                     lay.label_font, MUTED)
    ctx.line(plot.left(), plot.top(), plot.left(), plot.bottom(), ctx.pen(AXIS, 0.6))
    _draw_x_axis(ctx, plot, axis, ctx.font(0.9), ctx.font(1.0), lay.axis_bottom, rect)


# ---------------------------------------------------------------------- stacked bars


def _stacked_parts(chart: StackedBars) -> list[tuple[str, list[float]]]:
    n = len(chart.labels)
    parts = []
    for name, values in chart.parts.items():
        clean = [float(v) if _finite(v) and v > 0 else 0.0 for v in list(values)[:n]]
        parts.append((name, clean + [0.0] * (n - len(clean))))
    return parts


def _paint_stacked(ctx: _Ctx, rect: QRectF, chart: StackedBars) -> None:
    parts = _stacked_parts(chart)
    totals = [sum(values[i] for _, values in parts) for i in range(len(chart.labels))]
    if not chart.labels or not parts or not any(t > 0 for t in totals):
        _no_data(ctx, rect, chart.title)
        return
    top = _title(ctx, rect, chart.title)
    colours = [_rgb(PALETTE[k % len(PALETTE)]) for k in range(len(parts))]
    legend = [_LegendEntry(name, colours[k]) for k, (name, _) in enumerate(parts)]
    legend_h = _flow_legend(ctx, legend, ctx.font(0.9), rect.left(), top, rect.width(), draw=False)
    texts = [format_value(t, chart.unit) if t > 0 else "" for t in totals]

    def make(length: float, slack: tuple[float, float], font: QFont) -> _Axis:
        label = {"s": "median time", "%": "share of the median total"}.get(chart.unit, "median")
        return _make_linear_axis(ctx, 0.0, max(totals), chart.unit, label, length, font, horizontal=True,
                                 include_zero=True, extend=True, slack=slack)

    lay = _bar_rows(ctx, rect, top, chart.labels, texts, make, legend_h)
    if not lay.fits:
        return  # the title alone
    _flow_legend(ctx, legend, ctx.font(0.9), rect.left(), lay.legend_top, rect.width(), draw=True)
    plot, axis = lay.plot, lay.axis
    _draw_grid(ctx, plot, axis, vertical_lines=True)
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
            ctx.text(QRectF(x_prev + ctx.pt(3), cy - lfm.height() / 2, w + 1, lfm.height()), _LEFT, texts[i],
                     lay.label_font, MUTED)
    ctx.line(plot.left(), plot.top(), plot.left(), plot.bottom(), ctx.pen(AXIS, 0.6))
    _draw_x_axis(ctx, plot, axis, ctx.font(0.9), ctx.font(1.0), lay.axis_bottom, rect)


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
    entries = [_LegendEntry(s.name, styles[i][0], "series", styles[i][1], chart.lines)
               for i, s in enumerate(chart.series) if s.name and any(p is not None for p in points[i])]
    right = rect.right() - ctx.pt(4)
    legend_column = 0.0
    if entries:
        width = _column_legend_width(ctx, entries, legend_font, rect.width() * 0.3)
        if rect.width() * 0.3 >= ctx.pt(70):
            legend_column = width
            right = rect.right() - width - ctx.pt(8)
        else:
            top += _flow_legend(ctx, entries, legend_font, rect.left(), top, rect.width(), draw=True) + ctx.pt(3)
    top += ctx.pt(2)
    bottom = rect.bottom() - _x_axis_height(ctx, tick_font, title_font)
    if bottom - top < 2 * ctx.fm(tick_font).height() or right - rect.left() < ctx.pt(60):
        return  # no room for a plot: the title alone
    plot_h = bottom - top

    xs = [p[0] for pts in points for p in pts if p is not None]
    ys = [p[1] for pts in points for p in pts if p is not None]

    def axis(vmin: float, vmax: float, unit: str, label: str, log: bool, length: float, horizontal: bool,
             slack: tuple[float, float]) -> _Axis:
        if log:
            return _make_log_axis(ctx, vmin, vmax, unit, label, length, tick_font, horizontal=horizontal,
                                  slack=slack, pad=0.03)
        zero = unit in ("s", "B") and vmin >= 0
        # Counts (sample numbers, bits) are ticked 1, 2, 3, never 1.5.
        whole = horizontal and unit in ("", "bits", "bit") and all(float(x).is_integer() for x in xs)
        return _make_linear_axis(ctx, vmin, vmax, unit, label, length, tick_font, horizontal=horizontal,
                                 include_zero=zero, extend=zero or not horizontal, pad=0.06, slack=slack,
                                 integer=whole)

    tick_h = ctx.fm(tick_font).height()
    y_axis = axis(min(ys), max(ys), chart.y_unit, chart.y_label, chart.log_y, plot_h, False,
                  (tick_h / 2, min(top - rect.top(), tick_h / 2)))
    y_title_w = ctx.fm(title_font).height()
    plot_left = rect.left() + y_title_w + ctx.pt(3) + _y_label_width(ctx, y_axis, tick_font) + ctx.pt(5)
    plot = QRectF(plot_left, top, max(right - plot_left, ctx.pt(4)), plot_h)
    x_axis = axis(min(xs), max(xs), chart.x_unit, chart.x_label, chart.log_x, plot.width(), True,
                  (plot.left() - rect.left(), rect.right() - plot.right()))

    _draw_grid(ctx, plot, x_axis, vertical_lines=True)
    _draw_grid(ctx, plot, y_axis, vertical_lines=False)

    def at(pt: tuple[float, float]) -> QPointF:
        return QPointF(plot.left() + x_axis.frac(pt[0]) * plot.width(),
                       plot.bottom() - y_axis.frac(pt[1]) * plot.height())

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
        for pt in pts:
            if pt is not None:
                c = at(pt)
                _draw_marker(ctx, c, r, styles[i][1], styles[i][0])
                marker_boxes.append(QRectF(c.x() - r, c.y() - r, 2 * r, 2 * r))
    _point_labels(ctx, chart, points, at, plot, marker_boxes)

    _draw_y_axis(ctx, plot, y_axis, tick_font, title_font, rect.left(), rect)
    _draw_x_axis(ctx, plot, x_axis, tick_font, title_font, rect.bottom(), rect)
    if legend_column:
        _column_legend(ctx, entries, legend_font, rect.right() - legend_column, plot.top(), legend_column,
                       plot.height())


def _point_labels(ctx: _Ctx, chart: LineChart, points: list[list[tuple[float, float] | None]],
                  at: Callable[[tuple[float, float]], QPointF], plot: QRectF, markers: list[QRectF]) -> None:
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
            for x, y in ((c.x() + off, c.y() - h + ctx.pt(1)), (c.x() + off, c.y() - ctx.pt(1)),
                         (c.x() - off - w, c.y() - h + ctx.pt(1)), (c.x() - off - w, c.y() - ctx.pt(1)),
                         (c.x() - w / 2, c.y() - off - h), (c.x() - w / 2, c.y() + off)):
                box = QRectF(x, y, w, h)
                if not plot.contains(box):
                    continue
                inner = box.adjusted(ctx.pt(0.5), ctx.pt(1.5), -ctx.pt(0.5), -ctx.pt(1.5))
                if any(inner.intersects(o) for o in placed) or any(inner.intersects(m) for m in markers):
                    continue
                placed.append(box)
                ctx.text(box, _LEFT, text, font, MUTED)
                break


# ------------------------------------------------------------------------- histogram


def _paint_histogram(ctx: _Ctx, rect: QRectF, chart: Histogram) -> None:
    n = min(len(chart.counts), max(0, len(chart.edges) - 1))
    edges = [float(e) for e in chart.edges[: n + 1]]
    counts = [max(0, int(c)) for c in chart.counts[:n]]
    if n == 0 or not all(_finite(e) for e in edges) or edges[-1] <= edges[0] or not any(counts):
        _no_data(ctx, rect, chart.title)
        return
    top = _title(ctx, rect, chart.title)
    tick_font, title_font, small = ctx.font(0.9), ctx.font(1.0), ctx.font(0.9)
    sfm = ctx.fm(small)
    median_ok = _finite(chart.median) and edges[0] <= chart.median <= edges[-1]
    median_top = top
    if median_ok:  # the median's label gets a row of its own, clear of the top tick label
        top += sfm.height() + ctx.pt(1) + ctx.fm(tick_font).height() / 2
    note = ""
    if chart.clipped_above > 0:
        k = chart.clipped_above
        note = f"{k} sample{'s' if k != 1 else ''} beyond the right edge not shown"
    note_h = sfm.height() + ctx.pt(2) if note else 0.0
    bottom = rect.bottom() - note_h - _x_axis_height(ctx, tick_font, title_font)
    if bottom - top < 2 * ctx.fm(tick_font).height() or rect.width() < ctx.pt(60):
        return  # no room for a plot: the title alone
    plot_h = bottom - top
    tick_h = ctx.fm(tick_font).height()
    y_axis = _make_linear_axis(ctx, 0.0, float(max(counts)), "", "samples", plot_h, tick_font, horizontal=False,
                               include_zero=True, extend=True, integer=True,
                               slack=(tick_h / 2, min(top - rect.top(), tick_h / 2)))
    y_title_w = ctx.fm(title_font).height()
    plot_left = rect.left() + y_title_w + ctx.pt(3) + _y_label_width(ctx, y_axis, tick_font) + ctx.pt(5)
    plot = QRectF(plot_left, top, max(rect.right() - ctx.pt(4) - plot_left, ctx.pt(4)), plot_h)
    x_axis = _make_linear_axis(ctx, edges[0], edges[-1], chart.unit, "time" if chart.unit == "s" else "value",
                               plot.width(), tick_font, horizontal=True, include_zero=False, extend=False,
                               slack=(plot.left() - rect.left(), rect.right() - plot.right()))
    _draw_grid(ctx, plot, y_axis, vertical_lines=False)
    _draw_grid(ctx, plot, x_axis, vertical_lines=True)

    def x_at(v: float) -> float:
        return plot.left() + x_axis.frac(v) * plot.width()

    def y_at(c: float) -> float:
        return plot.bottom() - y_axis.frac(c) * plot.height()

    accent = _rgb(PALETTE[0])
    fill = _mix(accent, WHITE, 0.5)
    p = ctx.painter
    # one step outline, filled once: no seams between bins, one path however many bins
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

    if median_ok:
        x = x_at(chart.median)
        label = f"median {format_value(chart.median, chart.unit)}"
        w = sfm.horizontalAdvance(label)
        lx = min(max(x - w / 2, rect.left()), rect.right() - w)
        ctx.text(QRectF(lx, median_top, w + 1, sfm.height()), _CENTER, label, small)
        ctx.line(x, median_top + sfm.height(), x, plot.bottom(), ctx.pen(TEXT, 1.0, Qt.PenStyle.DashLine))

    _draw_y_axis(ctx, plot, y_axis, tick_font, title_font, rect.left(), rect)
    _draw_x_axis(ctx, plot, x_axis, tick_font, title_font, rect.bottom() - note_h, rect)
    if note:
        note_font = ctx.font(0.9, italic=True)
        text = _elide(ctx.fm(note_font), note, rect.width())
        ctx.text(QRectF(rect.left(), rect.bottom() - sfm.height(), rect.width(), sfm.height()), _RIGHT, text,
                 note_font, MUTED)


# ----------------------------------------------------------------------------- API


def paint_chart(painter: QPainter, rect: QRectF, chart: ChartData, *, font_family: str | None = None,
                base_point_size: float = 8.0) -> None:
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
        ctx = _Ctx(painter, font_family, base_point_size)
        if isinstance(chart, BarChart):
            _paint_bars(ctx, rect, chart)
        elif isinstance(chart, StackedBars):
            _paint_stacked(ctx, rect, chart)
        elif isinstance(chart, LineChart):
            _paint_lines(ctx, rect, chart)
        elif isinstance(chart, Histogram):
            _paint_histogram(ctx, rect, chart)
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
        extra = 0.03 if _bar_legend(chart) else 0.0
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

"""Linear and logarithmic axes: their range, ticks and labels that never overlap, and
their drawing (grid, tick marks, titles)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QFont, QFontMetricsF

from app.report.pdf.charts.context import AXIS, CENTER, GRID, MINOR_GRID, RIGHT, Ctx
from app.report.pdf.charts.ticks import (
    PLAIN_UNITS,
    axis_prefix,
    axis_title,
    linear_tick_text,
    log_tick_text,
    log_ticks,
    multiples_of,
    nice_step,
    tick_power,
)

# ------------------------------------------------------------------------------ axes


@dataclass
class Axis:
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


#: Axes draw values within these magnitudes. Any finite float reaches a chart's code (a
#: results file from elsewhere, before or beside the checker's bounds); beyond them a log
#: axis's powers under- or overflow (10.0 ** -324 is 0: a ZeroDivisionError in `frac`) and
#: a linear axis's span or step does (1e308 - -1e308 is inf). Values beyond are drawn at
#: the axis's end, as values beyond any axis are.
_LARGEST = 1e300
_SMALLEST = 1e-300
#: A linear axis narrower than this fraction of its values' magnitude has no step that
#: tells its ticks apart (and `multiples_of` would count 1e15 of them): widened instead.
_NARROWEST = 1e-9


def _linear_range(vmin: float, vmax: float, *, include_zero: bool) -> tuple[float, float]:
    vmin = min(max(vmin if math.isfinite(vmin) else 0.0, -_LARGEST), _LARGEST)
    vmax = min(max(vmax if math.isfinite(vmax) else vmin, -_LARGEST), _LARGEST)
    if include_zero:
        vmin, vmax = min(vmin, 0.0), max(vmax, 0.0)
    scale = max(abs(vmin), abs(vmax))
    if vmax - vmin <= max(scale * _NARROWEST, _SMALLEST):  # a single value (or a hair apart): a range around it
        spread = abs(vmin) * 0.5 if abs(vmin) >= _SMALLEST else 1.0
        return (vmin if include_zero else vmin - spread), vmax + spread
    return vmin, vmax


def log_range(vmin: float, vmax: float, base: int) -> tuple[float, float]:
    """`vmin`..`vmax` for a log axis: both positive, finite and within _SMALLEST.._LARGEST,
    whatever was given (0, a subnormal 5e-324, inf, NaN)."""
    if not (vmin > 0 and math.isfinite(vmin)):
        vmin = vmax if vmax > 0 and math.isfinite(vmax) else 1.0
    if not (vmax > 0 and math.isfinite(vmax)):
        vmax = vmin
    vmin, vmax = (min(max(v, _SMALLEST), _LARGEST) for v in (min(vmin, vmax), max(vmin, vmax)))
    return vmin, vmax


def make_linear_axis(
    ctx: Ctx,
    vmin: float,
    vmax: float,
    unit: str,
    label: str,
    length: float,
    font: QFont,
    *,
    horizontal: bool,
    include_zero: bool,
    extend: bool,
    pad: float = 0.0,
    integer: bool = False,
    slack: tuple[float, float] = (0.0, 0.0),
) -> Axis:
    lo, hi = _linear_range(vmin, vmax, include_zero=include_zero)
    if pad and not extend:
        span = hi - lo
        lo, hi = (lo - span * pad if not (include_zero and lo == 0) else lo), hi + span * pad
    fm = ctx.fm(font)
    spacing = ctx.pt(42 if horizontal else 24)
    start = int(min(10, max(2, length / spacing + 1)))
    fallback: Axis | None = None
    for target in range(start, 0, -1):
        factor, unit_text = axis_prefix(unit, max(abs(lo), abs(hi)))
        a_lo, a_hi = lo / factor, hi / factor
        step = nice_step(a_hi - a_lo, target, integer=integer and factor == 1)
        if extend:
            a_lo = math.floor(a_lo / step + 1e-9) * step
            a_hi = math.ceil(a_hi / step - 1e-9) * step
            if a_hi <= a_lo:
                a_hi = a_lo + step
        if (
            unit not in PLAIN_UNITS
            and unit != "B"
            and abs(a_hi) >= 1000 * (1 - 1e-9)
            and axis_prefix(unit, a_hi * factor)[0] != factor
        ):
            # the extended end reached the next prefix (1000 µs): label it 1 ms
            factor2, unit_text = axis_prefix(unit, a_hi * factor)
            a_lo, a_hi, step = a_lo * factor / factor2, a_hi * factor / factor2, step * factor / factor2
            factor = factor2
        scaled = multiples_of(a_lo, a_hi, step)
        labels = [linear_tick_text(t, step) for t in scaled]
        axis = Axis(
            a_lo * factor,
            a_hi * factor,
            False,
            [t * factor for t in scaled],
            labels,
            axis_title(label, unit, unit_text=unit_text),
        )
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


def _place_labels(
    axis: Axis, fm: QFontMetricsF, length: float, horizontal: bool, slack: tuple[float, float], ctx: Ctx
) -> list[float] | None:
    if horizontal:
        extents = [fm.horizontalAdvance(s) for s in axis.labels]
        gap = ctx.pt(6)
    else:
        extents = [fm.height() for _ in axis.labels]
        gap = ctx.pt(2)
    centres = [axis.frac(t) * length for t in axis.ticks]
    return _fits(extents, centres, gap, -slack[0], length + slack[1])


def make_log_axis(
    ctx: Ctx,
    vmin: float,
    vmax: float,
    unit: str,
    label: str,
    length: float,
    font: QFont,
    *,
    horizontal: bool,
    slack: tuple[float, float] = (0.0, 0.0),
    pad: float = 0.0,
) -> Axis:
    base = 2 if unit == "B" else 10
    vmin, vmax = log_range(vmin, vmax, base)
    # Exponents of powers that are normal floats (10 ** ±300, 2 ** ±996): none is 0 or inf.
    limit = math.floor(math.log(_LARGEST, base))
    e_lo = max(math.floor(math.log(vmin, base) + 1e-9), -limit)
    e_hi = min(math.ceil(math.log(vmax, base) - 1e-9), limit)
    if e_hi <= e_lo:
        e_lo, e_hi = (e_lo, e_lo + 1) if e_lo < limit else (e_hi - 1, e_hi)
    lo, hi = tick_power(base, e_lo), tick_power(base, e_hi)
    if pad:  # keep points off the very ends: a fraction `pad` of the span beyond the data
        span = (math.log(vmax, base) - math.log(vmin, base)) or 1.0  # never vmax / vmin: it may overflow
        lo = min(lo, vmin / base ** (pad * span)) if vmin <= lo * base ** (pad * span) else lo
        hi = max(hi, vmax * base ** (pad * span)) if vmax >= hi / base ** (pad * span) else hi
        lo, hi = max(lo, _SMALLEST / base), min(hi, _LARGEST * base)
    fm = ctx.fm(font)
    title = axis_title(label, unit, log=True)
    # Wider strides for the widest spans (1e-300 s to 1e18 s: 318 decades): a few labels still fit.
    strides = (1, 2, 5, 10, 20, 50, 100, 200) if base == 2 else (1, 2, 3, 4, 5, 6, 10, 20, 50, 100)
    axis = Axis(lo, hi, True, [], [], title, base=base)
    for stride in strides:
        ticks = log_ticks(lo, hi, base=base, stride=stride)
        if len(ticks) < 2 and stride > 1:
            continue
        axis.ticks, axis.labels = ticks, [log_tick_text(t, unit) for t in ticks]
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
        axis.minor = [
            m for e in range(e_lo - 1, e_hi + 1) for k in range(2, 10) if lo <= (m := k * tick_power(10, e)) <= hi
        ]
    elif base == 2 and decades <= 64:  # every power of two between labelled ones, if they can be told apart
        axis.minor = [t for t in log_ticks(lo, hi, base=2) if t not in majors]
    return axis


# ----------------------------------------------------------------------- axis drawing


def draw_grid(ctx: Ctx, plot: QRectF, axis: Axis, *, vertical_lines: bool) -> None:
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


def draw_x_axis(
    ctx: Ctx, plot: QRectF, axis: Axis, font: QFont, title_font: QFont, bottom: float, bounds: QRectF
) -> None:
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
        ctx.text(QRectF(plot.left() + centre - w / 2 - 1, top, w + 2, fm.height()), CENTER, text, font)
    tfm = ctx.fm(title_font)
    half = min(plot.width() / 2 + ctx.pt(10), plot.center().x() - bounds.left(), bounds.right() - plot.center().x())
    title = tfm.elidedText(axis.title, Qt.TextElideMode.ElideRight, 2 * half)
    ctx.text(QRectF(plot.center().x() - half, bottom - tfm.height(), 2 * half, tfm.height()), CENTER, title, title_font)


def x_axis_extent(ctx: Ctx, font: QFont, title_font: QFont) -> float:
    return ctx.pt(3) + ctx.pt(1.5) + ctx.fm(font).height() + ctx.pt(2) + ctx.fm(title_font).height()


def y_label_width(ctx: Ctx, axis: Axis, font: QFont) -> float:
    fm = ctx.fm(font)
    return max((fm.horizontalAdvance(s) for s in axis.labels), default=0.0)


def draw_y_axis(
    ctx: Ctx, plot: QRectF, axis: Axis, font: QFont, title_font: QFont, left: float, bounds: QRectF
) -> None:
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
        ctx.text(QRectF(right - w - 1, cy - fm.height() / 2, w + 2, fm.height()), RIGHT, text, font)
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
    ctx.text(QRectF(-half, -tfm.height() / 2, span, tfm.height()), CENTER, title, title_font)
    p.restore()

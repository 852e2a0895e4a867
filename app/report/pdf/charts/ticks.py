"""Tick values, unit prefixes and number texts for chart axes (no painting)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from app.report.units import format_bytes, format_seconds

PLAIN_UNITS = frozenset({"", "bits", "bit", "%", "x", "×"})
_TIME_PREFIXES = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))
_BINARY_PREFIXES = ((1024.0**3, "GiB"), (1024.0**2, "MiB"), (1024.0, "KiB"), (1.0, "B"))
_SI_PREFIXES = (
    (1e12, "T"),
    (1e9, "G"),
    (1e6, "M"),
    (1e3, "k"),
    (1.0, ""),
    (1e-3, "m"),
    (1e-6, "µ"),
    (1e-9, "n"),
    (1e-12, "p"),
)
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


# ------------------------------------------------------------------- numbers & units


def nice_step(span: float, target: int = 5, *, integer: bool = False) -> float:
    """The smallest 1-2-5 step (…, 0.1, 0.2, 0.5, 1, 2, 5, 10, …) that cuts `span`
    into at most about `target` intervals. `integer`: never below 1."""
    if not math.isfinite(span) or span <= 0:
        return 1.0
    raw = span / max(1, target)
    if not raw > 0:  # a subnormal span divided to 0
        return 1.0
    magnitude = tick_power(10, math.floor(math.log10(raw)))
    if not magnitude > 0:  # below the smallest float's exponent
        return 1.0
    step = 10.0 * magnitude
    for m in (1.0, 2.0, 5.0, 10.0):
        if m * magnitude >= raw * (1 - 1e-9):
            step = m * magnitude
            break
    return max(step, 1.0) if integer else step


def log_ticks(lo: float, hi: float, *, base: int = 10, stride: int = 1) -> list[float]:
    """Powers of `base` inside [lo, hi] (both > 0), every `stride`-th exponent:
    `log_ticks(1e-6, 3e-3)` is [1e-6, 1e-5, 1e-4, 1e-3]."""
    if not (lo > 0 and hi > 0 and math.isfinite(lo) and math.isfinite(hi)):
        return []
    if hi < lo:
        lo, hi = hi, lo
    first = math.ceil(math.log(lo, base) - 1e-9)
    last = math.floor(math.log(hi, base) + 1e-9)
    return [tick_power(base, e) for e in range(first, last + 1) if e % stride == 0]


def tick_power(base: int, exponent: int) -> float:
    # float("1e-6") is the literal 1e-06, which 10.0 ** -6 need not be
    return float(f"1e{exponent}") if base == 10 else float(base) ** exponent


#: More multiples than this is not an axis (a step far below the range's magnitude): none.
_MAX_MULTIPLES = 10_000


def multiples_of(lo: float, hi: float, step: float) -> list[float]:
    eps = step * 1e-9
    first, last = (lo - eps) / step, (hi + eps) / step
    if not (step > 0 and math.isfinite(first) and math.isfinite(last)) or last - first > _MAX_MULTIPLES:
        return []
    return [_clean(k * step) for k in range(math.ceil(first), math.floor(last) + 1)]


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


def log_tick_text(value: float, unit: str) -> str:
    if unit in PLAIN_UNITS:
        exponent = round(math.log10(value)) if value > 0 else 0
        if value > 0 and abs(value - 10.0**exponent) <= 1e-9 * value and abs(exponent) >= 4:
            return "10" + str(exponent).translate(_SUPERSCRIPT)
        return _plain(value)
    return format_value(value, unit)


def linear_tick_text(value: float, step: float) -> str:
    decimals = max(0, -math.floor(math.log10(step) + 1e-9)) if step > 0 else 0
    text = f"{value:.{min(decimals, 9)}f}"
    return "0" if float(text) == 0 else text


def axis_title(label: str, unit: str, *, log: bool = False, unit_text: str | None = None) -> str:
    """ "median time (µs)", "message size (log scale)", "security (bits)"."""
    if log:
        if unit in PLAIN_UNITS and unit:
            return f"{label} ({unit}, log scale)"
        return f"{label} (log scale)"
    shown = unit if unit_text is None else unit_text
    return f"{label} ({shown})" if shown else label

"""Numbers with units, formatted the same way in the table, the CLI and the reports."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import TypeVar

# One formatting of a duration for the core's own sentences and every face.
from app.core.units import MISSING as MISSING
from app.core.units import format_seconds as format_seconds

T = TypeVar("T")


def span_text(low: T, high: T, text: Callable[[T], str], *, joint: str = " to ") -> str:
    """A range in words, or one value where both ends read the same: "13 to 3,333 calls",
    but "168 µs", never "168 µs to 168 µs" (every range a report writes goes through here)."""
    first, last = text(low), text(high)
    return first if first == last else f"{first}{joint}{last}"


def format_bytes(value: float | None) -> str:
    """A size in binary units: 64 B, 1 KiB, 1.5 KiB, 10 MiB."""
    if value is None:
        return MISSING
    value = float(value)
    if abs(value) < 1024:
        return f"{value:.0f} B"
    for unit, scale in (("GiB", 1024.0**3), ("MiB", 1024.0**2), ("KiB", 1024.0)):
        if abs(value) >= scale:
            return f"{value / scale:.4g} {unit}"
    return f"{value:.0f} B"  # pragma: no cover - unreachable


def format_rate(value: float | None) -> str:
    """A throughput in decimal units, as the CLI prints it: 1.23 GB/s, 456 MB/s."""
    if not value:
        return MISSING
    for unit, scale in (("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.3g} B/s"


# --- one unit per column, no raw seconds in prose --------------------------------------------

#: Time units from the largest down, with their length in seconds.
TIME_UNITS = (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9))
_TIME_CELL = re.compile(r"^\s*(-?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?)\s*(ns|µs|us|ms|s)\s*$")
_SCALE = {"s": 1.0, "ms": 1e-3, "µs": 1e-6, "us": 1e-6, "ns": 1e-9}
# A number in seconds as code prints it, not as a reader writes it: an exponent
# ("1.859e-05 s") or four or more decimals ("0.000484 s").
_RAW_SECONDS = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?e[-+]?\d+|-?\d+\.\d{4,})\s?s\b")


def parse_seconds(text: str) -> float | None:
    """ "42.1 µs" -> 4.21e-05; None for anything that is not one time with its unit."""
    match = _TIME_CELL.match(text)
    if match is None:
        return None
    return float(match.group(1).replace(",", "")) * _SCALE[match.group(2)]


def time_unit_for(values: list[float]) -> tuple[str, float]:
    """The unit for a column of times: the largest in which the smallest non-zero value
    is still at least 0.1 ("955 ns" and "42 ms" share µs: 0.955 and 42,000)."""
    positive = [abs(v) for v in values if v and math.isfinite(v)]
    if not positive:
        return "µs", 1e-6
    smallest = min(positive)
    for unit, scale in TIME_UNITS:
        if smallest / scale >= 0.1:
            return unit, scale
    return "ns", 1e-9


def format_number(value: float) -> str:
    """A number with three significant digits and no exponent: 0.955, 12.3, 42,000."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    magnitude = math.floor(math.log10(abs(value)))
    if magnitude >= 2:
        return f"{value:,.0f}"
    return f"{value:.{2 - magnitude}f}"


def format_seconds_in(value: float | None, unit: str) -> str:
    """A time as a number in the given unit, without the unit (the column header has it)."""
    if value is None:
        return MISSING
    return format_number(value / _SCALE[unit])


def humanize_seconds(text: str) -> str:
    """Raw seconds in prose ("1.859e-05 s", "0.000484 s") written with a prefix ("18.6 µs")."""
    return _RAW_SECONDS.sub(lambda m: format_seconds(float(m.group(1))), text)


# --- where a line may not break ---------------------------------------------------------------

#: A non-breaking space: what joins a number to its unit on a page.
NBSP = "\u00a0"
_UNIT_WORDS = (
    "ns|µs|us|ms|s|B|KiB|MiB|GiB|kB|MB|GB|B/s|kB/s|MB/s|GB/s|kbit/s|Mbit/s|%|×|bits?|calls|samples?|"
    "handshakes/s|requests/s|cores?|CPUs?|bytes?|KB|kbit|Mbit|min|minutes?|seconds?|steps?|messages?"
)
_NUMBER_THEN_UNIT = re.compile(rf"(?<![\w.])([-+−]?\d[\d,]*(?:\.\d+)?) (?=(?:{_UNIT_WORDS})(?![\w/]))")
_KEPT_PAIRS = re.compile(r"\b(n|N) = (?=\d)|(?<=\S) (?=[·=] )")


def keep_together(text: str) -> str:
    """`text` with non-breaking spaces where a line break would part what reads as one: a
    number and its unit ("18 B", "168 µs", "3 samples"), "n = 3", and a separator with the
    word before it ("18 B ·" ends a line, "· loopback" never starts one). Every PDF text and
    chart label goes through here; a NBSP prints and copies as a space."""
    text = _NUMBER_THEN_UNIT.sub(lambda m: m.group(1) + NBSP, text)
    return _KEPT_PAIRS.sub(lambda m: (m.group(1) + NBSP + "=" + NBSP) if m.group(1) else NBSP, text)

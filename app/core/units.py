"""Durations in words, for the sentences the core writes itself (a load step's evidence,
its verdict) and for every face: app/report/units.py re-exports them, so the table, the
CLI, the reports and the core say a time the same way."""

from __future__ import annotations

MISSING = "-"
#: A figure the job should have had but nothing read (a job shorter than the resource
#: sampler's interval): said in words, never as 0 and never as a bare "-".
NOT_MEASURED = "not measured"


def format_seconds(value: float | None) -> str:
    """A duration with a unit: 1.23 s, 45.6 ms, 7.89 µs, 512 ns (3 significant digits)."""
    if value is None:
        return MISSING
    value = float(f"{value:.3g}")  # round first, so 999.96 µs becomes 1 ms, not 1e+03 µs
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value / 1e-9:.3g} ns"

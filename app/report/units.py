"""Numbers with units, formatted the same way in the table, the CLI and the reports."""

from __future__ import annotations

MISSING = "-"


def format_seconds(value: float | None) -> str:
    """A duration with a unit: 1.23 s, 45.6 ms, 7.89 µs, 512 ns (3 significant digits)."""
    if value is None:
        return MISSING
    value = float(f"{value:.3g}")  # round first, so 999.96 µs becomes 1 ms, not 1e+03 µs
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value / 1e-9:.3g} ns"


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

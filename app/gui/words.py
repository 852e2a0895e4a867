"""Small text helpers shared by the window's widgets."""

from __future__ import annotations


def plural(count: int, noun: str, plural_form: str | None = None) -> str:
    """ "1 job", "13 metrics" (never "1 jobs" or "metric(s)")."""
    return f"{count} {noun}" if count == 1 else f"{count} {plural_form or noun + 's'}"


def duration(seconds: float) -> str:
    """ "45 s", "3 min 05 s", "1 h 02 min"; "under 1 s" below a second."""
    if seconds < 1:
        return "under 1 s"
    whole = int(round(seconds))
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"

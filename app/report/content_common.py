"""Small formatting helpers shared by the report's content modules: cells for status,
validation, CPU, memory and wire bytes, UTC stamps and column alignments."""

from __future__ import annotations

from datetime import UTC, datetime

from app.core.results.model import JobResult, RunResult
from app.core.units import NOT_MEASURED
from app.core.vocab import JobStatus
from app.report.job_figures import percent, primary_metric, size_text
from app.report.model import Align
from app.report.units import format_bytes, format_seconds

MISSING = "-"


# --- small formatting helpers ----------------------------------------------------------


def value_text(value: float | None, unit: str) -> str:
    """A statistic in its unit: seconds and bytes get prefixes, anything else 4 digits."""
    if value is None:
        return MISSING
    if unit == "s":
        return format_seconds(value)
    if unit == "B":
        return format_bytes(value)
    return f"{value:.4g} {unit}".strip()


def utc(stamp: str | None, *, seconds: bool = True, unknown: str = "unknown") -> str:
    """A recorded time in UTC ("2026-11-26 03:12:05 UTC"; without `seconds`, to the minute);
    `unknown` for none, the text itself when it is not a time."""
    if not stamp:
        return unknown
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC" if seconds else "%Y-%m-%d %H:%M UTC")


def duration_text(run: RunResult) -> str | None:
    if not run.finished:
        return None
    try:
        seconds = (datetime.fromisoformat(run.finished) - datetime.fromisoformat(run.started)).total_seconds()
    except (TypeError, ValueError):
        return None
    return format_seconds(seconds) if seconds < 60 else f"{int(seconds // 60)} min {seconds % 60:.0f} s"


def job_name(job: JobResult) -> str:
    return f"{job.label} · {size_text(job)}"


def aligns(spec: str) -> list[Align]:
    """Column alignments from a compact spec: "lrl" -> left, right, left."""
    names: dict[str, Align] = {"l": "left", "r": "right", "c": "center"}
    return [names[c] for c in spec]


def validation_text(job: JobResult) -> str:
    if job.status != JobStatus.OK:
        return MISSING
    v = job.validation
    text = f"{v.checked - v.failed:,}/{v.checked:,} ok"
    if v.tamper_tried:
        return f"{text}, tamper {v.tamper_rejected}/{v.tamper_tried} rejected"
    return f"{text}, no tamper check"


def status_text(job: JobResult) -> str:
    return JobStatus.OK.value if job.status == JobStatus.OK else f"{job.status}: {job.error or 'no error recorded'}"


def cpu_text(job: JobResult) -> str:
    """Mean CPU per process (100 % = one core busy); sessions have a sender and a receiver."""
    parts = [
        (role, usage.mean_percent)
        for role, usage in job.cpu.processes.items()
        if usage is not None and usage.mean_percent is not None
    ]
    if not parts:
        return NOT_MEASURED if job.status == JobStatus.OK else MISSING
    if len(parts) == 1:
        return percent(parts[0][1])
    return ", ".join(f"{name} {percent(value)}" for name, value in parts)


def memory_text(job: JobResult) -> str:
    metric = primary_metric(job)
    traced = job.memory.traced_peak_bytes.get(metric) if metric else None
    if traced is None and metric in job.metrics:
        traced = job.metrics[metric].traced_peak_bytes
    rss = [v for v in job.memory.rss_peak_bytes.values() if v is not None]
    parts = []
    if traced is not None:
        parts.append(f"traced {format_bytes(traced)}")
    if rss:
        parts.append(f"RSS {format_bytes(max(rss))}")
    elif job.status == JobStatus.OK:  # the sampler read nothing: never "RSS 0 B"
        parts.append(f"RSS {NOT_MEASURED}")
    return " · ".join(parts) or MISSING


def wire_text(job: JobResult) -> str:
    payload = job.wire_bytes.get("payload")
    if payload is None:
        return MISSING
    overhead = job.wire_bytes.get("overhead")
    return format_bytes(payload) + (f" (+{format_bytes(overhead)})" if overhead else "")

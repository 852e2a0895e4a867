"""The results table's columns and cells: what each column shows for a job result, its
sort key and its tooltip. Qt-free on purpose (plain text and numbers), so the model in
`app.gui.results.table` stays about Qt and these rules can be read on their own.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from app.core.escaping import escape_control
from app.core.load.verdict import shown_notes
from app.core.records.placement_words import anomalies as placement_anomalies
from app.core.records.placement_words import describe as describe_placement
from app.core.records.placement_words import measured_under as placement_measured_under
from app.core.results.model import METRIC_DESCRIPTIONS, JobResult, MetricResult
from app.core.schemes.base import OPEN_METRIC, SEAL_METRIC
from app.core.settings.links import link_title, numbers_text, round_trip_ms
from app.core.units import NOT_MEASURED
from app.core.vocab import SESSION_MODES, Family, JobStatus, LinkEmulation, Role
from app.gui.vocab import Tone
from app.gui.words import plural
from app.report.job_figures import primary_metric  # one rule for the table and the reports
from app.report.tcp_info import kernel_lines
from app.report.tls import tls_lines
from app.report.units import format_bytes, format_rate, format_seconds

_MISSING = "-"
#: The picker's first entry, which the tooltip of a row without the metric shown points to.
HEADLINE_CHOICE = "Headline metric of each job"


class Column(enum.IntEnum):
    SCHEME = 0
    BACKEND = 1
    PARAMETERS = 2
    MODE = 3
    LINK = 4
    SIZE = 5
    METRIC = 6
    MEDIAN = 7
    P95 = 8
    CI95 = 9
    THROUGHPUT = 10
    WIRE = 11
    CPU = 12
    MEMORY = 13
    VALIDATION = 14
    WARNINGS = 15
    STATUS = 16


HEADERS: dict[Column, str] = {
    Column.SCHEME: "Scheme",
    Column.BACKEND: "Backend",
    Column.PARAMETERS: "Parameters",
    Column.MODE: "Mode",
    Column.LINK: "Link",
    Column.SIZE: "Size",
    Column.METRIC: "Metric",
    Column.MEDIAN: "Median",
    Column.P95: "p95",
    Column.CI95: "95 % CI",
    Column.THROUGHPUT: "Throughput",
    Column.WIRE: "Wire bytes",
    Column.CPU: "CPU %",
    Column.MEMORY: "Memory",
    Column.VALIDATION: "Validation",
    Column.WARNINGS: "Warnings",
    Column.STATUS: "Status",
}

HEADER_TIPS: dict[Column, str] = {
    Column.MODE: "operations, loopback or remote, then the CPU placement the figures were measured under: same, "
    "split or free (free in the warning colour when the placement asked for could not be applied); "
    "a row's tooltip gives the CPUs its processes were allowed and seen on; then a key agreement or hybrid job's "
    "exchange: session (one key per session, then AEAD) or per-message (a fresh key in every message)",
    Column.LINK: "The emulated link a loopback session ran over (- for none); sorted by what one round trip "
    "costs on it",
    Column.SIZE: "Plaintext size of one message",
    Column.METRIC: "The metric this row shows (choose above the table): by default the sender sealing one "
    "message (compute) for sessions, the family's main operation for operations jobs",
    Column.MEDIAN: "Median time of one operation of the shown metric; a load job's headline row: its knee in "
    "requests per second (≥ when no step showed server overload), or the rate achieved at one "
    "fixed rate",
    Column.P95: "95th percentile time of one operation of the shown metric; a load job's headline row: the p99 "
    "latency at the highest rate the server kept up with, marked p99",
    Column.CI95: "95 % confidence interval of the median (order statistics; needs at least 6 samples)",
    Column.THROUGHPUT: "Message size / median time of the shown metric; blank for a metric that does not "
    "process the message's bytes (a round trip, a key generation: the cell's tooltip says why)",
    Column.WIRE: "Bytes on the wire for one message: the frame (header + payload) for sessions, "
    "the payload for operations",
    Column.CPU: "Mean CPU in % of one core: the worker or sender, then the receiver when there is one",
    Column.MEMORY: "Peak resident memory (RSS) of the worker or sender; peak Python allocation "
    "(tracemalloc) of the shown metric",
    Column.VALIDATION: "Messages whose opened plaintext matched the original; tampered payloads rejected",
    Column.WARNINGS: "Stability warnings: reasons to distrust the numbers, each with a fix (see the tooltip)",
    Column.STATUS: "ok, failed or cancelled; a failed row's tooltip shows the error",
}

#: Rows of these metrics (the headline "compute" and the transport's) add what each end's
#: kernel saw over the size (TCP_INFO) to their median's tooltip.
_KERNEL_METRICS = frozenset({"compute", "rtt", "network", "floor_rtt", "connect"})

NUMERIC_COLUMNS = frozenset(
    {
        Column.SIZE,
        Column.MEDIAN,
        Column.P95,
        Column.CI95,
        Column.THROUGHPUT,
        Column.WIRE,
        Column.CPU,
        Column.MEMORY,
        Column.WARNINGS,
    }
)

# Tones of text colour: resolved against the palette when shown, so they keep their
# contrast in the light and the dark theme.
_FAILED_TEXT, CANCELLED_TEXT, _WARNING_TEXT = Tone.BAD, Tone.MUTED, Tone.WARN


def html_tip(text: str) -> str:
    """A tooltip's lines with control characters shown as escapes (its own newlines kept)."""
    return "\n".join(escape_control(line) for line in text.split("\n"))


def _exact_bytes(value: float) -> str:
    return f"{int(value):,} bytes".replace(",", "\u202f")  # narrow no-break space as thousands separator


def _companion_metrics(job: JobResult) -> tuple[str, ...]:
    """The per-message metrics worth quoting next to the primary one."""
    if job.family == Family.TLS:  # a tls13 job: its handshake's other figures
        if job.mode in SESSION_MODES:
            return ("connect", "connect_handshake", "first_byte", "handshake_cpu_client", "handshake_cpu_server")
        return ("handshake_server", "encrypt", "decrypt")
    if job.mode in SESSION_MODES:
        return ("receiver", "rtt", "network")
    try:
        opened = OPEN_METRIC[Family(job.family)]
    except (ValueError, KeyError):
        return ()
    return (opened,) if opened else ()


# --- rows -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cell:
    text: str
    key: Any = None
    tip: str | None = None
    foreground: Tone | None = None


#: Roles in the order the tooltips list them (Role's own order: worker, sender, receiver).
_ROLE_ORDER: dict[str, int] = {role: i for i, role in enumerate(Role)}


def _percent(value: float | None) -> str:
    return _MISSING if value is None else f"{value:.0f}"


def _cpu_cell(job: JobResult) -> Cell:
    roles = {role: usage for role, usage in job.cpu.processes.items() if usage is not None}
    if not roles:
        return Cell(_MISSING)
    main = job.cpu.measuring(job.mode)
    main_mean = main.mean_percent if main else None
    if main_mean is None and job.status == JobStatus.OK:
        return Cell(NOT_MEASURED, None, "CPU not measured: the job ended within one sampling interval")
    receiver = roles.get(Role.RECEIVER)
    text = _percent(main_mean)
    if receiver is not None and receiver is not main:
        text = f"{text} / {_percent(receiver.mean_percent)}"
    lines = ["CPU in % of one core"]
    ordered = sorted(roles.items(), key=lambda item: _ROLE_ORDER.get(item[0], len(_ROLE_ORDER)))
    for role, usage in ordered:
        line = f"{role}: mean {_percent(usage.mean_percent)} %"
        if usage.max_percent is not None:
            line += f", max {_percent(usage.max_percent)} %"
        if usage.source is not None:
            line += f" ({usage.source})"
        elif usage.samples == 0:
            line += " (not sampled: the job ended within one sampling interval)"
        elif usage.samples is not None:
            line += f" ({plural(usage.samples, 'sample')})"
        lines.append(line)
        if usage.other_processes_mean_percent is not None:
            lines.append(f"    other processes meanwhile: {usage.other_processes_mean_percent:.0f} %")
    return Cell(text, main_mean, "\n".join(lines))


def _memory_cell(job: JobResult, metric_name: str | None, metric: MetricResult | None) -> Cell:
    rss_by_role = job.memory.rss_peak_bytes
    traced_by_metric = job.memory.traced_peak_bytes
    rss = job.memory.measuring_rss(job.mode)  # the same process the CPU column reads
    traced = metric.traced_peak_bytes if metric is not None else None
    if traced is None and metric_name is not None:
        traced = traced_by_metric.get(metric_name)
    parts = []
    if rss is not None:
        parts.append(f"{rss / 1024**2:.1f} MiB")
    elif job.status == JobStatus.OK:  # the sampler read nothing: never "0.0 MiB"
        parts.append(f"RSS {NOT_MEASURED}")
    if traced is not None:
        parts.append(f"{format_bytes(traced)} traced")
    if not parts:
        return Cell(_MISSING)
    lines = ["Peak resident memory (RSS):"]
    lines += [
        f"    {role}: {format_bytes(value) if value is not None else NOT_MEASURED + ' (not sampled)'}"
        for role, value in rss_by_role.items()
    ]
    if traced_by_metric:
        lines.append("Peak Python allocation during the timed loop (tracemalloc):")
        lines += [f"    {name}: {format_bytes(value)}" for name, value in traced_by_metric.items()]
    key = float(rss) if rss is not None else None
    return Cell("; ".join(parts), key, "\n".join(lines))


def _wire_cell(job: JobResult) -> Cell:
    wire = job.wire_bytes
    value = wire.get("frame", wire.get("payload"))
    if value is None:
        return Cell(_MISSING)
    lines = [f"{name}: {_exact_bytes(count)}" for name, count in wire.items()]
    if job.message_size:
        lines.append(f"×{value / job.message_size:.2f} of the plaintext")
    # Exact, not rounded: the few bytes of overhead are what this column is about.
    return Cell(_exact_bytes(value).replace(" bytes", " B"), float(value), "\n".join(lines))


def _validation_cell(job: JobResult) -> Cell:
    v = job.validation
    checked, failed, tried, rejected = v.checked, v.failed, v.tamper_tried, v.tamper_rejected
    if not checked and not tried:
        return Cell(_MISSING, None, "No messages were validated")
    parts, lines = [], []
    if checked:
        parts.append(f"{checked - failed}/{checked} ok")
        lines.append(f"Opened plaintext equal to the original in {checked - failed} of {checked} messages")
    if tried:
        parts.append(f"tamper {rejected}/{tried}")
        lines.append(f"Tampered payloads rejected: {rejected} of {tried}")
    problems = failed + (tried - rejected)  # the sort key: validation problems
    return Cell(", ".join(parts), float(problems), "\n".join(lines), _FAILED_TEXT if problems else None)


def _warnings_cell(job: JobResult) -> Cell:
    if not job.warnings:
        return Cell("0", 0.0)
    lines = []
    for warning in job.warnings:
        lines.append(f"• {warning.metric or 'job'}: {warning.message}")
        lines.append(f"   Fix: {warning.fix}")
    return Cell(str(len(job.warnings)), float(len(job.warnings)), "\n".join(lines), _WARNING_TEXT)


def _placement_tip(job: JobResult) -> str | None:
    """The Mode column's tooltip: the CPUs the job's processes were allowed and seen on."""
    if job.placement is None:
        return None
    lines = [f"CPU placement: {describe_placement(job.placement)}"]
    lines += [f"• {found}" for found in placement_anomalies(job.placement)]
    return html_tip("\n".join(lines))


def _mode_cell(job: JobResult) -> Cell:
    """ "loopback · same": the mode and the placement the figures were measured under, seen
    without hovering (placement changes a loopback round trip several times over), then a
    key-establishing job's exchange pattern ("operations · same · per-message"). The text is
    the sort key: rows sort by mode, then placement. A placement asked for but not applied
    reads `free`, in the warning colour."""
    exchange = f" · {job.exchange_used}" if job.exchange_used is not None else ""  # never cut, unlike Scheme
    if job.placement is None:  # results from before placement
        return Cell(job.mode + exchange, job.mode + exchange)
    text = f"{job.mode} · {placement_measured_under(job.placement)}{exchange}"
    return Cell(text, text, _placement_tip(job), _WARNING_TEXT if job.placement.unavailable else None)


#: How each kind of emulation works, for the Link column's tooltip.
_EMULATIONS: dict[str, str] = {
    LinkEmulation.DELAY_LINE: "the stream relay: a delay line per direction between sender and receiver "
    "(serialization at the rate, then the delay); no TCP dynamics on the path, no loss",
    LinkEmulation.PACKET: "the packet path: the kernel's TCP between sender and receiver over emulated IP "
    "packets (queue, rate, delay, loss)",
    LinkEmulation.NETEM: "the kernel's netem, at packet level",
}


def _link_cell(job: JobResult) -> Cell:
    link = job.link
    if link is None:
        return Cell(_MISSING)
    emulation = _EMULATIONS.get(link.emulation, "")  # a StrEnum key is found by its string
    lines = [
        f"{link.name or 'custom link'}: {numbers_text(link)}",
        "one-way delay per direction; up = sender → receiver",
        f"emulated by {link.emulation}" + (f": {emulation}" if emulation else ""),
    ]
    return Cell(link_title(link), round_trip_ms(link), "\n".join(lines))


def _scheme_tip(job: JobResult) -> str:
    lines = [job.named]
    if job.family:
        try:
            lines.append(Family(job.family).long_label)
        except ValueError:
            lines.append(job.family)
    sec = job.security
    if sec.known:
        level = []
        if sec.classical_bits is not None:
            level.append(f"{sec.classical_bits}-bit classical security")
        if sec.pq_category is not None:
            level.append(
                f"post-quantum category {sec.pq_category}" if sec.pq_category else "broken by a quantum computer"
            )
        if level:
            lines.append(", ".join(level))
        if sec.insecure:
            lines.append("Insecure parameter size: for comparison only")
    if job.exchange_used is not None and job.exchange is None:
        lines.append(f"exchange {job.exchange_used}: recorded before jobs named it, read as what it measured")
    lines += shown_notes(job)  # never a note the load verdict contradicts
    if job.error:
        lines.append(f"Error: {escape_control(job.error)}")
    return "\n".join(lines)


def scheme_text(job: JobResult) -> str:
    """The label without its " [backend]" and " over LINK" suffixes, which the Backend and
    Link columns already say, ending with a key-establishing job's exchange pattern
    ("X25519 + HKDF-SHA256 + AES-256-GCM (session)"), which no other column says."""
    label = job.label
    exchange = job.exchange_used
    pattern = exchange.suffix if exchange is not None else ""
    for suffix in ([f" over {link_title(job.link)}"] if job.link is not None else []) + [pattern, f" [{job.backend}]"]:
        if suffix and label.endswith(suffix) and len(label) > len(suffix):
            label = label[: -len(suffix)]
    return label + pattern


def _per_message_metrics(job: JobResult) -> tuple[str, ...]:
    """The metrics that process one message's bytes, the only ones with a throughput
    (the runner's rule: sealing and opening for operations, the sender's and the
    receiver's compute for sessions)."""
    if job.mode in SESSION_MODES:
        return ("compute", "receiver")
    try:
        family = Family(job.family)
    except ValueError:
        return ()
    opened = OPEN_METRIC.get(family)
    return (SEAL_METRIC[family], opened) if opened else (SEAL_METRIC[family],)


def _throughput_cell(job: JobResult, name: str, metric: MetricResult) -> Cell:
    """Message size / the median of the metric shown, never another metric's figure: a
    metric that does not process the message's bytes (a round trip, a key generation)
    gets a blank cell that says why."""
    value = metric.throughput_bytes_per_s
    if value is None and name == primary_metric(job) and name in _per_message_metrics(job):
        # Results written before each metric carried its own (a tls13 job's headline, its
        # handshake, processes no message bytes: the job's figure is its record layer's).
        value = job.throughput_bytes_per_s
    if value:
        return Cell(
            format_rate(value),
            float(value),
            f"{format_bytes(job.message_size)} / median {name} ({format_seconds(metric.stats.median)})",
        )
    if not job.message_size:
        return Cell("", None, f"No throughput: {name} handles no message bytes (message size 0)")
    per_message = _per_message_metrics(job)
    if name in per_message:
        return Cell("", None, f"No throughput recorded for {name}")
    which = " and ".join(per_message) if per_message else "the metrics that process a message"
    return Cell(
        "",
        None,
        f"No throughput for {name}: it does not process the message's bytes. Throughput (message size / "
        f"median) is given for {which}",
    )


def absent_reason(job: JobResult, name: str) -> str:
    """Why a job's row has no figure of the metric shown, in words (the row's tooltip)."""
    if job.status != JobStatus.OK and name not in job.metrics:
        why = f": {escape_control(job.error)}" if job.error else ""
        return f"No {name} samples: the job {job.status}{why}"
    has = ", ".join(job.metrics) or "no metric"
    return (
        f"This job has no {name} metric (it measured {has}). Choose “{HEADLINE_CHOICE}” above the "
        "table to see each job's own"
    )


def _absent_cells(job: JobResult, name: str, metric_tip: str | None) -> dict[Column, Cell]:
    """The figure cells of a row whose job lacks the metric shown: said once, in the Median
    column ("no rtt"), with the reason in every figure cell's tooltip, not "-" everywhere."""
    reason = absent_reason(job, name)
    # A failed or cancelled job says so in its Status column: "-" then, as for any figure it lacks.
    blank = _MISSING if job.status != JobStatus.OK else ""
    median = Cell(_MISSING, None, reason) if blank else Cell(f"no {name}", None, reason, CANCELLED_TEXT)
    return {
        Column.METRIC: Cell(name, name, metric_tip),
        Column.MEDIAN: median,
        Column.P95: Cell(blank, None, reason),
        Column.CI95: Cell(blank, None, reason),
        Column.THROUGHPUT: Cell(blank, None, reason),
    }


def build_row(job: JobResult, name: str | None) -> list[Cell]:
    metric = job.metrics.get(name) if name else None
    s = metric.stats if metric is not None else None
    params = ", ".join(f"{k}={v}" for k, v in job.params.items())
    metric_tip = METRIC_DESCRIPTIONS.get(name or "")
    if s is not None and metric is not None:
        spread = f"n = {s.n}"
        if metric.batch > 1:
            spread += f" × batch {metric.batch}"
        if s.cv is not None:
            spread += f", CV {100 * s.cv:.1f} %"
        spread += f", min {format_seconds(s.min)}, max {format_seconds(s.max)}"
        if s.outliers:
            spread += f", {s.outliers} outliers (kept)"
        median_tip = f"{metric_tip}\n{spread}" if metric_tip else spread
        others = [
            f"{other} {format_seconds(job.metrics[other].stats.median)}"
            for other in _companion_metrics(job)
            if other in job.metrics and other != name
        ]
        if others:
            median_tip += "\nMedians of the other per-message metrics: " + ", ".join(others)
        if name in _KERNEL_METRICS:
            median_tip = "\n".join([median_tip, *kernel_lines(job)])
        median_tip = "\n".join([median_tip, *tls_lines(job)])
    else:
        median_tip = f"No {name} samples" if name else "No metrics"
    if s is not None and s.ci95 is not None:
        ci = Cell(
            f"[{format_seconds(s.ci95[0])}, {format_seconds(s.ci95[1])}]",
            s.ci95[0],
            f"95 % confidence interval of the median: {format_seconds(s.ci95[0])} to "
            f"{format_seconds(s.ci95[1])} ({s.n} samples)",
        )
    elif s is not None:
        ci = Cell("n < 6", None, f"Only {s.n} samples: a 95 % interval of the median needs at least 6")
    else:
        ci = Cell(_MISSING)
    status_colours: dict[str, Tone] = {JobStatus.FAILED: _FAILED_TEXT, JobStatus.CANCELLED: CANCELLED_TEXT}
    status_colour = status_colours.get(job.status)
    cells = {
        Column.SCHEME: Cell(scheme_text(job), scheme_text(job), _scheme_tip(job)),
        Column.BACKEND: Cell(job.backend, job.backend),
        Column.PARAMETERS: Cell(params, params, params or None),
        Column.MODE: _mode_cell(job),
        Column.LINK: _link_cell(job),
        Column.SIZE: Cell(format_bytes(job.message_size), float(job.message_size), _exact_bytes(job.message_size)),
        Column.METRIC: Cell(name or _MISSING, name, metric_tip),
        Column.MEDIAN: Cell(format_seconds(s.median), s.median, median_tip) if s else Cell(_MISSING),
        Column.P95: Cell(format_seconds(s.p95), s.p95, f"p99 {format_seconds(s.p99)}") if s else Cell(_MISSING),
        Column.CI95: ci,
        Column.THROUGHPUT: _throughput_cell(job, name, metric) if name and metric else Cell(_MISSING),
        Column.WIRE: _wire_cell(job),
        Column.CPU: _cpu_cell(job),
        Column.MEMORY: _memory_cell(job, name, metric),
        Column.VALIDATION: _validation_cell(job),
        Column.WARNINGS: _warnings_cell(job),
        Column.STATUS: Cell(job.status, job.status, escape_control(job.error) if job.error else None, status_colour),
    }
    if name and metric is None:
        cells.update(_absent_cells(job, name, metric_tip))
    return [cells[column] for column in Column]

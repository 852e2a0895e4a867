"""Turn a run (and an optional baseline) into the report model: the words, tables and chart data.

Everything a reader needs to trust a number is built here once, so the PDF and the
Markdown say the same thing: what was measured and on what (environment, method),
the numbers by family with their spread and validation, where the time goes in a
session, cost against security level, every warning with its fix, the comparison with a
baseline, and the full statistics. Failed jobs appear with their error, never with an
invented number. Charts carry raw seconds and bytes; renderers choose the units. The
Environment and Warnings sections are built in app/report/conditions.py.

Qt-free on purpose: the Markdown exporter and the CLI run without a display.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from app.core.machine import placement
from app.core.results.job_records import SAMPLING_INTERVAL_S
from app.core.results.model import METRIC_DESCRIPTIONS, JobResult, MetricResult, RunResult
from app.core.schemes.base import OPEN_METRIC, Family
from app.core.vocab import SESSION_MODES, JobStatus, Mode
from app.report.appendix import _appendix
from app.report.baseline import BaselineMatch, match_baseline
from app.report.caveats import apply_caveat, is_reduced, missing_notice, sample_caveat, sample_text
from app.report.comparison import _comparison
from app.report.conditions import environment_section, warnings_section
from app.report.content_common import (
    _MISSING,
    _align,
    _cpu,
    _duration,
    _job_name,
    _memory,
    _status,
    _utc,
    _validation,
    _value,
    _wire,
)
from app.report.experiments import experiment_sections
from app.report.findings import summary_findings
from app.report.job_figures import (
    PUBLIC_KEY_FAMILIES,
    family_order,
    family_title,
    is_post_quantum,
    median,
    percent,
    primary_metric,
    size_text,
    value,
)
from app.report.labels import Labels
from app.report.load import load_method, load_sections
from app.report.model import (
    BarChart,
    Block,
    Bullets,
    Chart,
    Histogram,
    LineChart,
    Paragraph,
    Report,
    Section,
    Series,
    StackedBars,
    Table,
)
from app.report.network_links import link_sections
from app.report.tcp_info import KERNEL_TITLE, kernel_blocks
from app.report.tidy import tidy_sections
from app.report.units import format_rate, format_seconds

__all__ = ["SECTION_TITLES", "build_report"]


#: Level-1 section titles in report order (optional ones are left out when empty). A
#: run of an experiment preset gets "Experiment E<n>: <title>" after the summary.
SECTION_TITLES = (
    "Summary of findings",
    "Environment",
    "Method",
    "Results by family",
    "Loopback breakdown",
    "Cost against security level",
    "Warnings",
    "Comparison with baseline",
    "Appendix: full statistics",
)


def build_report(run: RunResult, baseline: RunResult | None = None, *, appendix: bool = True) -> Report:
    """The whole report for `run`; with `baseline`, a comparison section follows the
    summary (the reason to export with one); `appendix=False` leaves out the full statistics."""
    match = match_baseline(run, baseline) if baseline is not None else None
    labels = Labels(run.jobs + (baseline.jobs if baseline is not None else []))
    sections = [_summary(run, match, baseline, labels)]
    if baseline is not None and match is not None:
        sections.append(_comparison(run, match, baseline, labels))
    sections += experiment_sections(run)
    sections += [environment_section(run), _method(run)]
    sections += _results_by_family(run, labels)
    sections += _loopback(run, labels)
    sections += link_sections(run.jobs)
    sections += load_sections(run, labels)
    sections += _cost_vs_security(run, labels)
    sections.append(warnings_section(run, labels))
    if appendix:
        sections.append(_appendix(run, labels))
    apply_caveat(run, sections)
    tidy_sections(sections)
    version = run.environment_view.app_version or "unknown version"
    notice = " ".join(t for t in (sample_caveat(run), missing_notice(run)) if t) or None
    return Report(
        title=f"CryptoBench report: {run.name or 'unnamed profile'}",
        subtitle=f"Run {run.id} · {len(run.jobs)} measured job{'s' if len(run.jobs) != 1 else ''} · {run.status}",
        facts=_facts(run),
        sections=sections,
        footer=f"CryptoBench {version} · run {run.id}",
        notice=notice,
    )


# --- title, summary, environment, method ------------------------------------------------


def _facts(run: RunResult) -> list[tuple[str, str]]:
    env = run.environment_view
    machine = [env.cpu_model or "unknown CPU"]
    if env.physical_cores or env.logical_cores:
        machine.append(f"{env.physical_cores or '?'} cores ({env.logical_cores or '?'} logical)")
    machine.append(env.os_name or "unknown OS")
    counts: dict[str, int] = defaultdict(int)
    for job in run.jobs:
        counts[job.status] += 1
    status = run.status + (f" ({', '.join(f'{n} {s}' for s, n in counts.items())})" if counts else "")
    facts = [
        ("Date", _utc(run.started)),
        ("Machine", ", ".join(machine)),
        ("App version", env.app_version or "unknown"),
        ("Run id", run.id),
        ("Profile", run.name or "unnamed"),
        ("Status", status),
    ]
    duration = _duration(run)
    if duration:
        facts.append(("Duration", duration))
    return facts


def _summary(run: RunResult, match: BaselineMatch | None, baseline: RunResult | None, labels: Labels) -> Section:
    blocks: list[Block] = []
    description = run.profile_view.description
    intro = f"Profile **{run.name or 'unnamed'}**" + (f": {description}" if description else ".")
    if description and is_reduced(run):  # the description counts the full preset's samples and sizes
        intro += (
            f" (That describes the full preset; this reduced run took {sample_text(run)} timed samples per metric.)"
        )
    blocks.append(
        Paragraph(
            intro + " Times are medians per operation unless said otherwise; ratios are only "
            "quoted between jobs of the same family at the same message size, or say so."
        )
    )
    blocks += [Paragraph(labels.in_text(s), style="finding") for s in summary_findings(run, match, baseline)]
    key = labels.key_table()
    if key is not None:
        blocks += [
            Paragraph("Charts and the sentences above name jobs by short labels; the key gives each one's full name."),
            key,
        ]
    return Section("Summary of findings", blocks)


def _method(run: RunResult) -> Section:
    present = {name for job in run.jobs for name in job.metrics}
    ordered = [n for n in METRIC_DESCRIPTIONS if n in present] + sorted(present - set(METRIC_DESCRIPTIONS))
    blocks: list[Block] = [Paragraph("What each metric times (every time is per operation, in seconds):")]
    blocks.append(
        Bullets(
            [f"**{n}**: {METRIC_DESCRIPTIONS.get(n, 'no description recorded')}" for n in ordered]
            or ["No metric was measured."]
        )
    )
    blocks += _sample_counts(run)
    metrics = [m for job in run.jobs for m in job.metrics.values()]
    batched = [m.batch for m in metrics if m.batch > 1]
    batching = (
        "Fast operations are batched: when one call is too short for the clock to time reliably, each "
        "sample times a batch of consecutive calls and reports the time per call."
    )
    if batched:
        batching += (
            f" In this run {len(batched)} of {len(metrics)} metrics were batched ({min(batched):,} to "
            f"{max(batched):,} calls per sample); their samples are per-call averages, so their spread "
            "understates the spread of single calls."
        )
    else:
        batching += " No metric of this run needed batching: every sample is one call."
    blocks.append(Paragraph(batching))
    if any(job.mode in SESSION_MODES for job in run.jobs):
        blocks.append(
            Paragraph(
                "Loopback and remote jobs run the sender and the receiver as separate processes connected by TCP. "
                "**compute** is the sender sealing a message, **receiver** the receiver opening and validating it "
                "(timed in its own process), **rtt** the time from sending a message to receiving its "
                "acknowledgement at the sender, and **network** = rtt − receiver, per sample: the transport's share. "
                "**floor_rtt** is a raw ping-pong of frames of the payload's size on the same connection, without "
                "cryptography: the fastest round trip that connection allows."
            )
        )
    blocks += load_method(run)
    blocks += _placement(run)
    interval = next((job.cpu.interval_s for job in run.jobs if job.cpu.interval_s), SAMPLING_INTERVAL_S)
    blocks.append(
        Paragraph(
            "Time and memory come from separate passes. Python's tracemalloc slows the code it traces several-fold, "
            "so the peak traced memory (allocations through Python's allocator) is measured in an extra, untimed "
            "pass. Resident memory (RSS) and CPU use per process come from a psutil sampler every "
            f"{interval * 1000:.0f} ms; CPU above 100 % means more than one core was busy."
        )
    )
    blocks.append(
        Paragraph(
            "Statistics: the headline is the **median**, because timings are skewed (an interruption costs far more "
            "than it saves). Its 95 % confidence interval comes from order statistics, which needs no assumption "
            "about the distribution. p95 is the 95th percentile, CV the coefficient of variation (standard "
            "deviation / mean). Outliers are samples whose modified z-score (from the median and the median "
            "absolute deviation, MAD) exceeds 3.5: they are counted and flagged, never dropped. Throughput is the "
            "message size divided by the median time."
        )
    )
    return Section("Method", blocks)


#: The placement lines and unusual placements the Method section lists before summarizing.
PLACEMENT_ITEMS = 8


def _placement(run: RunResult) -> list[Block]:
    """The CPU placement policy and, per distinct placement, where the processes were
    allowed (and seen); a sentence for each job whose placement looks wrong or mixed."""
    placed = [job for job in run.jobs if job.placement is not None]
    if not placed:
        return [Paragraph("Which CPUs the processes ran on was not recorded for this run (CPU placement).")]
    policies = sorted({job.placement.policy for job in placed if job.placement is not None})
    text = (
        f"CPU placement: {' and '.join(policies)} (same: all of a job's processes pinned to one CPU; split: "
        "sender and receiver pinned to different CPUs, the link process with the receiver; free: the "
        "scheduler decides). Each process's allowed CPUs were read back after pinning; the CPUs it was seen "
        "on come from the resource sampler's readings."
    )
    if len(placed) < len(run.jobs):
        text += f" {len(run.jobs) - len(placed)} of {len(run.jobs)} jobs have no placement record."
    lines: dict[str, int] = {}
    for job in placed:
        if job.placement is not None:
            line = placement.describe(job.placement)
            lines[line] = lines.get(line, 0) + 1
    items = [f"{line}: {count} job{'s' if count != 1 else ''}" for line, count in list(lines.items())[:PLACEMENT_ITEMS]]
    if len(lines) > PLACEMENT_ITEMS:
        items.append(f"and {len(lines) - PLACEMENT_ITEMS} other placements (each job's is in the results file)")
    blocks: list[Block] = [Paragraph(text), Bullets(items)]
    unusual = [
        f"{job.label} ({job.message_size} B): {found}"
        for job in placed
        if job.placement is not None
        for found in placement.anomalies(job.placement)
    ]
    if unusual:
        shown = unusual[:PLACEMENT_ITEMS]
        if len(unusual) > len(shown):
            shown.append(f"and {len(unusual) - len(shown)} more")
        blocks.append(Paragraph("Worth knowing about the placement:"))
        blocks.append(Bullets(shown))
    return blocks


def _sample_counts(run: RunResult) -> list[Block]:
    specs = run.profile_view.jobs or ()
    if not specs:
        return [Paragraph("The profile's sample counts were not recorded; the appendix gives n per metric.")]
    combos = {(s.get("samples"), s.get("warmup"), s.get("keygen_samples")) for s in specs}

    def counts(samples: Any, warmup: Any, keygen: Any) -> str:
        return f"{samples} samples per metric after {warmup} discarded warm-up samples, {keygen} key generation samples"

    if len(combos) == 1:
        return [Paragraph(f"Every job took {counts(*combos.pop())}.")]
    items = []
    for s in specs:
        params = ", ".join(f"{k}={v}" for k, v in (s.get("params") or {}).items())
        name = f"{s.get('scheme')} [{s.get('backend') or 'default'}]" + (f" {params}" if params else "")
        items.append(
            f"{name}, {s.get('mode', Mode.OPERATIONS)}: "
            f"{counts(s.get('samples'), s.get('warmup'), s.get('keygen_samples'))}"
        )
    return [Paragraph("Sample counts per profile job:"), Bullets(items)]


# --- results by family --------------------------------------------------------------------


def _table_metrics(job: JobResult) -> list[str]:
    """The metrics worth a row in the family table; the appendix has all of them."""
    if job.mode in SESSION_MODES:
        wanted = ["keygen", "compute", "receiver", "rtt", "network"]
    else:
        try:
            opened = OPEN_METRIC[Family(job.family)]
        except (ValueError, KeyError):
            opened = None
        wanted = ["keygen", "exchange", primary_metric(job) or "", opened or ""]
    return [m for m in wanted if m and m in job.metrics]


def _timing_table(jobs: list[JobResult]) -> Table:
    rows: list[list[str]] = []
    fastest: dict[tuple[int, str], tuple[float, int]] = {}
    contenders: dict[tuple[int, str], int] = defaultdict(int)
    for job in jobs:
        metrics = _table_metrics(job)
        if not metrics:
            what = "no metrics" if job.status == JobStatus.OK else job.status
            rows.append([job.label, size_text(job), what] + [_MISSING] * 6)
            continue
        for name in metrics:
            metric = job.metrics[name]
            s = metric.stats
            if name == primary_metric(job):
                key = (job.message_size, name)
                contenders[key] += 1
                if key not in fastest or s.median < fastest[key][0]:
                    fastest[key] = (s.median, len(rows))
            rows.append(
                [
                    job.label,
                    size_text(job),
                    name + (f" (×{metric.batch})" if metric.batch > 1 else ""),
                    _value(s.mean, s.unit),
                    _value(s.median, s.unit),
                    _value(s.p95, s.unit),
                    _value(s.std, s.unit),
                    percent(s.cv * 100) if s.cv is not None else _MISSING,
                    format_rate(metric.throughput_bytes_per_s),
                ]
            )
    emphasis = {row for key, (_, row) in fastest.items() if contenders[key] > 1}
    return Table(
        ["Scheme", "Size", "Metric", "Mean", "Median", "p95", "Std", "CV", "Throughput"],
        rows,
        caption="Times per operation (×N: each sample timed N calls). Bold: the fastest median of the "
        "per-message metric at each size.",
        widths=[3.2, 0.9, 1.3, 0.9, 0.9, 0.9, 0.9, 0.8, 1.1],
        emphasis=emphasis,
        align=_align("lrl" + "r" * 6),
    )


def _resources_table(jobs: list[JobResult]) -> Table:
    rows = [
        [job.label, size_text(job), _status(job), _wire(job), _cpu(job), _memory(job), _validation(job)] for job in jobs
    ]
    return Table(
        ["Scheme", "Size", "Status", "Wire bytes", "CPU %", "Memory", "Validation"],
        rows,
        caption="Wire bytes: payload per message (+ overhead beyond the plaintext). CPU: mean per process, "
        "100 % = one core. Memory: peak traced by tracemalloc for the per-message operation · peak "
        "RSS. Validation: opened messages that matched, tampered payloads rejected.",
        widths=[3.0, 0.9, 1.2, 1.4, 1.3, 2.0, 2.2],
        align=_align("lrlrrrl"),
    )


def _bar_chart(title: str, jobs: list[JobResult], names: Labels) -> Chart | None:
    measured = [j for j in jobs if j.status == JobStatus.OK and primary_metric(j) in j.metrics]
    if not measured:
        return None
    metrics = {primary_metric(j) or "" for j in measured}
    labels, values, low, high, marked = [], [], [], [], []
    for job in measured:
        stats = job.metrics[primary_metric(job) or ""].stats
        labels.append(names.row(job) + (f" · {primary_metric(job)}" if len(metrics) > 1 else ""))
        values.append(stats.median)
        low.append(stats.ci95[0] if stats.ci95 else None)
        high.append(stats.ci95[1] if stats.ci95 else None)
        marked.append(is_post_quantum(job))
    positive = [v for v in values if v > 0]
    spread = max(positive) / min(positive) if positive else 1.0
    metric_words = "/".join(sorted(metrics))
    chart = BarChart(
        f"{title}: median {metric_words} time per message",
        labels,
        values,
        low,
        high,
        value_label=f"median {metric_words} time",
        log=spread > 100 and len(positive) == len(values),
        marked=marked if any(marked) else None,
        marked_label="post-quantum" if any(marked) else None,
    )
    return Chart(
        chart,
        caption="Bars: medians; whiskers: 95 % confidence interval of the median.",
        aspect=min(1.4, 0.2 + 0.07 * len(labels)),
    )


def _scaling_chart(title: str, jobs: list[JobResult], labels: Labels) -> Chart | None:
    curves: dict[tuple[str, str, str, str], list[JobResult]] = defaultdict(list)
    for job in jobs:
        if job.status == JobStatus.OK and primary_metric(job) in job.metrics and job.message_size > 0:
            curves[(job.label, job.mode, primary_metric(job) or "", str(sorted(job.params.items())))].append(job)
    series = []
    for (_label, _mode, metric, _), group in curves.items():
        if len({j.message_size for j in group}) < 2:
            continue
        group = sorted(group, key=lambda j: j.message_size)
        name = labels.row(group[0], size=False)
        series.append(Series(name, [float(j.message_size) for j in group], [value(j, metric) for j in group]))
    if not series:
        return None
    chart = LineChart(
        f"{title}: median time against message size",
        "message size",
        "B",
        "median time",
        "s",
        series,
        log_x=True,
        log_y=True,
    )
    return Chart(
        chart,
        caption="One line per scheme and backend measured at two or more sizes (log-log: a slope "
        "of 1 means time proportional to size).",
    )


#: Fewer samples than this are not drawn as a histogram (a reduced run's 3 make two bars).
MIN_HISTOGRAM_SAMPLES = 10


def histogram_of(metric: MetricResult) -> Histogram | None:
    """Histogram data of one metric's samples up to p99; the tail beyond is counted, not drawn.

    One interruption can be 100× the median: drawn to scale it would squeeze every other
    sample into one bin. The bin count follows numpy's "auto" rule (the larger of
    Freedman-Diaconis and Sturges), kept between 5 and 50 so it reads on a page.
    """
    x = np.asarray(metric.samples, dtype=float)
    if x.size < MIN_HISTOGRAM_SAMPLES:  # a handful of samples has no shape worth a chart
        return None
    s = metric.stats
    # The axis ends at the largest sample drawn, not at an interpolated p99 (with 20
    # samples that lies between the two largest, far past the rest); a far tail (beyond
    # the upper quartile + 3 IQR) is counted in the caption, not drawn.
    q1, q3 = (float(v) for v in np.percentile(x, [25, 75]))
    fence = min(float(np.percentile(x, 99)), q3 + 3 * (q3 - q1)) if q3 > q1 else float(np.percentile(x, 99))
    inside = x[x <= fence]
    if inside.size == 0:
        inside = x
    upper = float(inside.max())
    low = float(inside.min())
    if upper <= low:
        pad = abs(low) * 0.01 or 1e-9
        low, upper = low - pad, upper + pad
    # numpy's "auto" rule, at least 5 bins, and no more than the samples can fill
    bins = int(min(50, max(5, min(inside.size, len(np.histogram_bin_edges(inside, bins="auto")) - 1))))
    counts, edges = np.histogram(inside, bins=bins, range=(low, upper))
    return Histogram(
        "",
        [float(e) for e in edges],
        [int(c) for c in counts],
        s.median,
        unit=s.unit,
        clipped_above=int(np.count_nonzero(x > edges[-1])),
    )


def _histogram_chart(jobs: list[JobResult], labels: Labels) -> Chart | None:
    """The slowest job's per-message samples: where the spread matters most in absolute terms."""
    measured = [j for j in jobs if j.status == JobStatus.OK and primary_metric(j) in j.metrics]
    if not measured:
        return None
    job = max(measured, key=lambda j: value(j, primary_metric(j)))
    metric = primary_metric(job) or ""
    hist = histogram_of(job.metrics[metric])
    if hist is None:
        return None
    hist.title = f"Distribution of {metric} samples: {labels.row(job)}"
    caption = "The slowest job of the family; the line marks the median."
    if hist.clipped_above:
        caption += (
            f" {hist.clipped_above} sample(s) far in the tail (beyond the upper quartile + 3 IQR or p99) "
            "are counted, not drawn."
        )
    return Chart(hist, caption=caption, aspect=0.4)


def _results_by_family(run: RunResult, labels: Labels) -> list[Section]:
    if run.jobs and all(job.mode == Mode.LOAD for job in run.jobs):
        return []  # requests per second, not per-operation times: the Load section has them
    intro = Section(
        "Results by family",
        [
            Paragraph(
                "Each family has a timing table (one row per job and metric), a resources and validation table, a bar "
                "chart of the per-message median with its 95 % interval, a scaling chart where a scheme was measured at "
                "several sizes, and the sample distribution of its slowest job (from 10 samples up)."
            )
        ],
    )
    if not run.jobs:
        intro.blocks.append(Paragraph("The run has no jobs."))
    sections = [intro]
    by_family: dict[str, list[JobResult]] = defaultdict(list)
    for job in run.jobs:
        if job.mode != Mode.LOAD:  # requests per second, not per-operation times: the Load section
            by_family[job.family].append(job)
    for family in family_order(by_family):
        jobs = by_family[family]
        title = family_title(family)
        blocks: list[Block] = [_timing_table(jobs), _resources_table(jobs)]
        for chart in (
            _bar_chart(title, jobs, labels),
            _scaling_chart(title, jobs, labels),
            _histogram_chart(jobs, labels),
        ):
            if chart is not None:
                blocks.append(chart)
        failed = [j for j in jobs if j.status != JobStatus.OK]
        if failed:
            blocks.append(Bullets([f"{_job_name(j)} {j.status}: {j.error or 'no error recorded'}" for j in failed]))
        sections.append(Section(title, blocks, level=2))
    return sections


# --- loopback, cost vs security, warnings, comparison, appendix ----------------------------


def _loopback(run: RunResult, names: Labels) -> list[Section]:
    sessions = [j for j in run.jobs if j.mode in SESSION_MODES]
    if not sessions:
        return []
    measured = [
        j for j in sessions if j.status == JobStatus.OK and {"compute", "receiver", "network"} <= set(j.metrics)
    ]
    blocks: list[Block] = [
        Paragraph(
            "Where a session's time goes, per message: the sender's computation (compute), the receiver's open "
            "(receiver) and the transport (network = rtt − receiver). Medians are stacked; they do not add up to the "
            "median round trip exactly, because the median of a sum is not the sum of medians."
        )
    ]
    if measured:
        parts = {p: [value(j, p) for j in measured] for p in ("compute", "receiver", "network")}
        labels = [names.row(j) for j in measured]
        aspect = min(1.2, 0.2 + 0.08 * len(measured))
        # On one linear axis a 40 ms job flattens a 40 µs one to nothing; a log axis cannot
        # stack. So one chart per order of magnitude: within a chart no total is more than
        # 10× another, and every bar is readable.
        groups = _magnitude_groups([sum(parts[p][k] for p in parts) for k in range(len(measured))])
        for group in groups:
            title = "Median time per message, split into its parts"
            if len(groups) > 1:
                totals = [sum(parts[p][k] for p in parts) for k in group]
                title += f" (jobs of {format_seconds(min(totals))} to {format_seconds(max(totals))})"
            blocks.append(
                Chart(
                    StackedBars(title, [labels[k] for k in group], {p: [parts[p][k] for k in group] for p in parts}),
                    caption=None
                    if len(groups) == 1
                    else "One chart per order of magnitude, so that no bar is too short to read.",
                    aspect=min(1.2, 0.2 + 0.08 * len(group)),
                )
            )
        # In time, one slow job flattens the others to slivers; in shares every job's
        # split is readable, which is what this section is about.
        totals = [sum(parts[p][k] for p in parts) for k in range(len(measured))]
        shares = {p: [100 * v / t if t > 0 else 0.0 for v, t in zip(values, totals)] for p, values in parts.items()}
        blocks.append(
            Chart(
                StackedBars("Share of each part in the time per message", labels, shares, unit="%"),
                caption="Each bar is 100 % of that job's compute + receiver + network medians.",
                aspect=aspect,
            )
        )
    rows = []
    for job in sessions:
        if job.status != JobStatus.OK:
            rows.append([job.label, size_text(job), _status(job)] + [_MISSING] * 6)
            continue

        rtt, network = median(job, "rtt"), median(job, "network")
        share = percent(100 * network / rtt) if rtt and network is not None else _MISSING
        n = job.metrics["compute"].stats.n if "compute" in job.metrics else None
        rows.append(
            [
                job.label,
                size_text(job),
                str(n) if n is not None else _MISSING,
                _mean(job, "compute"),
                _mean(job, "receiver"),
                _mean(job, "network"),
                _mean(job, "rtt"),
                format_seconds(median(job, "floor_rtt")),
                share,
            ]
        )
    blocks.append(
        Table(
            [
                "Job",
                "Size",
                "Samples",
                "Computation delay",
                "Receiver open",
                "Communication delay",
                "Round trip",
                "Loopback floor",
                "Network share",
            ],
            rows,
            caption="Means per message as in experiment E1: computation delay = compute, communication "
            "delay = network (rtt − receiver); loopback floor = median floor_rtt; network share "
            "= median network / median rtt.",
            widths=[3.0, 0.8, 0.8, 1.1, 1.1, 1.2, 1.0, 1.0, 1.0],
        )
    )
    kernel = kernel_blocks(sessions)
    return [Section("Loopback breakdown", blocks)] + ([Section(KERNEL_TITLE, kernel, level=2)] if kernel else [])


def _magnitude_groups(totals: list[float]) -> list[list[int]]:
    """Indexes grouped so that within a group the largest total is at most 10× the
    smallest; groups in ascending order of time, each in the original order."""
    order = sorted(range(len(totals)), key=lambda k: totals[k])
    groups: list[list[int]] = []
    for k in order:
        if groups and totals[k] <= 10 * max(totals[groups[-1][0]], 1e-30):
            groups[-1].append(k)
        else:
            groups.append([k])
    return [sorted(group) for group in groups]


def _mean(job: JobResult, metric: str) -> str:
    return format_seconds(job.metrics[metric].stats.mean) if metric in job.metrics else _MISSING


def _cost_vs_security(run: RunResult, labels: Labels) -> list[Section]:
    points: dict[str, list[JobResult]] = defaultdict(list)
    for job in run.jobs:
        if (
            job.family in PUBLIC_KEY_FAMILIES
            and job.status == JobStatus.OK
            and job.security.classical_bits
            and (median(job, primary_metric(job)) or 0) > 0
        ):
            points["Post-quantum" if is_post_quantum(job) else family_title(job.family)].append(job)
    if sum(len(v) for v in points.values()) < 2:
        return []
    names = [family_title(f) for f in family_order(j.family for v in points.values() for j in v)]
    short = {job.id: labels.name(job) for group in points.values() for job in group}
    series = [
        Series(
            name,
            [float(j.security.classical_bits or 0) for j in points[name]],
            [value(j, primary_metric(j)) for j in points[name]],
            point_labels=[short[j.id] for j in points[name]],
            marked=name == "Post-quantum",
        )
        for name in names + ["Post-quantum"]
        if points.get(name)
    ]
    chart = LineChart(
        "Median per-message time against classical security level",
        "classical security",
        "bits",
        "median time",
        "s",
        series,
        log_y=True,
        lines=False,
    )
    return [
        Section(
            "Cost against security level",
            [
                Paragraph(
                    "Each point is one public-key job: its classical security level in bits (NIST SP 800-57 "
                    "comparable strength) against the median of its per-message metric (encrypt, sign or compute) "
                    "at its own message size. Post-quantum schemes (NIST category > 0) are marked; a classical "
                    "scheme at the same bit level falls to a quantum computer, a post-quantum one is not known to."
                ),
                Chart(chart, caption="Log scale in time; metrics differ by family, so compare points within a family."),
            ],
        )
    ]

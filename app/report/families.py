"""Results by family: per family a timing table, a resources table, the medians as bars with
their 95 % intervals, the scaling curves over message sizes and the histograms."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from app.core.analysis.evidence import MIN_SAMPLES, Estimate, rank
from app.core.results.model import JobResult, MetricResult, RunResult
from app.core.schemes.base import OPEN_METRIC
from app.core.vocab import SESSION_MODES, Family, JobStatus, Mode
from app.report.content_common import (
    MISSING,
    aligns,
    cpu_text,
    job_name,
    memory_text,
    status_text,
    validation_text,
    value_text,
    wire_text,
)
from app.report.job_figures import (
    family_order,
    family_title,
    is_post_quantum,
    percent,
    primary_metric,
    size_text,
    value,
)
from app.report.labels import Labels
from app.report.model import (
    BarChart,
    Block,
    Bullets,
    Chart,
    Histogram,
    LineChart,
    Paragraph,
    Section,
    Series,
    Table,
)
from app.report.units import format_rate


def _table_metrics(job: JobResult) -> list[str]:
    """The metrics worth a row in the family table; the appendix has all of them."""
    if job.mode in SESSION_MODES:
        # A key establishment's handshake is its key exchange: what a session pays once.
        handshake = ["handshake", "handshake_receiver"] if job.exchange_used is not None else []
        wanted = ["keygen", *handshake, "compute", "receiver", "rtt", "network"]
    else:
        try:
            opened = OPEN_METRIC[Family(job.family)]
        except (ValueError, KeyError):
            opened = None
        wanted = ["keygen", "exchange", "exchange_receiver", primary_metric(job) or "", opened or ""]
    return [m for m in wanted if m and m in job.metrics]


def _timing_table(jobs: list[JobResult], title: str) -> Table:
    rows: list[list[str]] = []
    fastest: dict[tuple[int, str], tuple[float, int]] = {}
    contenders: dict[tuple[int, str], list[Estimate]] = defaultdict(list)
    for job in jobs:
        metrics = _table_metrics(job)
        if not metrics:
            what = "no metrics" if job.status == JobStatus.OK else job.status
            rows.append([job.label, size_text(job), what] + [MISSING] * 6)
            continue
        for name in metrics:
            metric = job.metrics[name]
            s = metric.stats
            if name == primary_metric(job):
                key = (job.message_size, name)
                contenders[key].append(Estimate.of(s))
                if key not in fastest or s.median < fastest[key][0]:
                    fastest[key] = (s.median, len(rows))
            rows.append(
                [
                    job.label,
                    size_text(job),
                    name + (f" (×{metric.batch})" if metric.batch > 1 else ""),
                    value_text(s.mean, s.unit),
                    value_text(s.median, s.unit),
                    value_text(s.p95, s.unit),
                    value_text(s.std, s.unit),
                    percent(s.cv * 100) if s.cv is not None else MISSING,
                    format_rate(metric.throughput_bytes_per_s),
                ]
            )
    # Bold only where the evidence rule orders the fastest before every other contender.
    emphasis = {row for key, (_, row) in fastest.items() if _fastest_ordered(contenders[key])}
    return Table(
        ["Scheme", "Size", "Metric", "Mean", "Median", "p95", "Std", "CV", "Throughput"],
        rows,
        caption=f"{title}: times per operation.",
        widths=[3.2, 0.9, 1.3, 0.9, 0.9, 0.9, 0.9, 0.8, 1.1],
        emphasis=emphasis,
        align=aligns("lrl" + "r" * 6),
    )


def _fastest_ordered(estimates: list[Estimate]) -> bool:
    """Whether the lowest median of several is ordered before each other one (app.core.analysis.evidence)."""
    if len(estimates) < 2:
        return False
    best = min(estimates, key=lambda e: e.median)
    return all(rank(best, other).ordered for other in estimates if other is not best)


#: The resources table's key, for a table shown without the Results section's introduction.
RESOURCES_KEY = (
    "Wire bytes: payload per message (+ overhead beyond the plaintext). CPU: mean per process, 100 % = one core. "
    "Memory: peak traced by tracemalloc for the per-message operation · peak RSS. Validation: opened messages "
    "that matched, tampered payloads rejected."
)


def resources_table(jobs: list[JobResult], caption: str = RESOURCES_KEY) -> Table:
    """The resources and validation table; `caption` names it where the key is said above it."""
    rows = [
        [
            job.label,
            size_text(job),
            status_text(job),
            wire_text(job),
            cpu_text(job),
            memory_text(job),
            validation_text(job),
        ]
        for job in jobs
    ]
    return Table(
        ["Scheme", "Size", "Status", "Wire bytes", "CPU %", "Memory", "Validation"],
        rows,
        caption=caption,
        widths=[3.0, 0.9, 1.2, 1.4, 1.3, 2.0, 2.2],
        align=aligns("lrlrrrl"),
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
    return Chart(chart, aspect=min(1.4, 0.2 + 0.07 * len(labels)))  # the section's introduction is its key


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
    return Chart(chart)  # the section's introduction is its key


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
    caption = (
        f"{hist.clipped_above} sample(s) far in the tail (beyond the upper quartile + 3 IQR or p99) are counted, "
        "not drawn."
        if hist.clipped_above
        else None
    )
    return Chart(hist, caption=caption, aspect=0.4)


#: Said where a family's jobs used both exchange patterns, before their charts.
_PATTERNS_APART = (
    "{family} jobs used both exchange patterns, charted apart: with exchange session a message is AEAD alone "
    "(the key exchange is once per session, in the table as exchange or handshake), with exchange per-message "
    "each message holds its own key exchange."
)


def family_sections(run: RunResult, labels: Labels) -> list[Section]:
    if run.jobs and all(job.mode == Mode.LOAD for job in run.jobs):
        return []  # requests per second, not per-operation times: the Load section has them
    intro = Section(
        "Results by family",
        [
            # The key to every family's tables and charts, said once here rather than
            # under each family's (several families share a page).
            Paragraph(
                "Each family has a timing table (one row per job and metric, times per operation; ×N: each sample "
                "timed N calls; bold: the fastest median of the per-message metric at each size, where "
                f"{MIN_SAMPLES} samples a side and 95 % intervals apart order it before every other), a resources and "
                "validation table (wire bytes: payload per message, + overhead beyond the plaintext; CPU: mean per "
                "process, 100 % = one core; memory: peak traced by tracemalloc for the per-message operation · peak "
                "RSS; validation: opened messages that matched, tampered payloads rejected), a bar chart of the "
                "per-message median (whiskers: its 95 % confidence interval), a scaling chart where a scheme was "
                "measured at two or more sizes (one line per scheme and backend, log-log: a slope of 1 means time "
                "proportional to size), and the sample distribution of its slowest job from 10 samples up (the line "
                "marks the median)."
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
        blocks: list[Block] = [_timing_table(jobs, title), resources_table(jobs, f"{title}: resources and validation.")]
        patterns = list(dict.fromkeys(job.exchange_used for job in jobs))
        if len(patterns) > 1:  # a session's message is AEAD alone, a per-message one holds a key exchange
            blocks.append(Paragraph(_PATTERNS_APART.format(family=title)))
        for pattern in patterns:
            alike = [job for job in jobs if job.exchange_used == pattern]
            named = title if len(patterns) == 1 or pattern is None else f"{title}, exchange {pattern}"
            for chart in (_bar_chart(named, alike, labels), _scaling_chart(named, alike, labels)):
                if chart is not None:
                    blocks.append(chart)
        chart = _histogram_chart(jobs, labels)
        if chart is not None:
            blocks.append(chart)
        failed = [j for j in jobs if j.status != JobStatus.OK]
        if failed:
            blocks.append(Bullets([f"{job_name(j)} {j.status}: {j.error or 'no error recorded'}" for j in failed]))
        sections.append(Section(title, blocks, level=2))
    return sections

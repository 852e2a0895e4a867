"""The appendix: every statistic of every metric, laid out densely (one row per job and
metric, each row in one unit)."""

from __future__ import annotations

from app.core.results.model import MetricResult, RunResult
from app.report.content_common import MISSING, aligns, status_text
from app.report.job_figures import percent
from app.report.labels import Labels
from app.report.model import Block, Bullets, Paragraph, Section, Table
from app.report.units import format_bytes, format_number, time_unit_for


def _row_unit(metric: MetricResult) -> tuple[str, float]:
    """The unit for one metric's row: chosen from its median, so min to max read in it."""
    return time_unit_for([metric.stats.median]) if metric.stats.unit == "s" else (metric.stats.unit, 1.0)


def _in(value: float | None, scale: float) -> str:
    return MISSING if value is None else format_number(value / scale)


def appendix_section(run: RunResult, labels: Labels) -> Section:
    """Every statistic of every metric, dense: two tables of one row per job and metric
    (centre and spread), each row in one unit named in its Unit column."""
    central: list[list[str]] = []
    spread: list[list[str]] = []
    missing: list[str] = []
    for job in run.jobs:
        if not job.metrics:
            missing.append(f"**{labels.row(job)}** ({job.mode}): {status_text(job)}; no metrics were recorded.")
            continue
        for k, (name, metric) in enumerate(job.metrics.items()):
            s = metric.stats
            unit, scale = _row_unit(metric)
            who = labels.row(job) if k == 0 else ""  # once per job: the rows below are its metrics
            n = f"{s.n}" + (f"×{metric.batch}" if metric.batch > 1 else "")
            central.append(
                [
                    who,
                    name,
                    unit,
                    n,
                    _in(s.median, scale),
                    _in(s.ci95[0], scale) if s.ci95 else MISSING,
                    _in(s.ci95[1], scale) if s.ci95 else MISSING,
                    _in(s.mean, scale),
                    _in(s.std, scale),
                    percent(s.cv * 100) if s.cv is not None else MISSING,
                    str(s.outliers),
                ]
            )
            spread.append(
                [who, name, unit]
                + [_in(getattr(s, k), scale) for k in ("min", "p5", "p25", "p75", "p95", "p99", "max")]
                + [format_bytes(metric.traced_peak_bytes)]
            )
    blocks: list[Block] = [
        Paragraph(
            "Every metric of every job with all its statistics, one row per job and metric. Each row is in the unit "
            "of its Unit column (chosen for that metric's median). n×N: n samples, each timing a batch of N calls. "
            "CI95 is the 95 % confidence interval of the median; outliers are flagged, not removed."
        )
    ]
    if central:
        blocks.append(
            Table(
                ["Job", "Metric", "Unit", "n", "Median", "CI95 low", "CI95 high", "Mean", "Std", "CV", "Outliers"],
                central,
                caption="Centre: median with its interval, mean and spread.",
                widths=[2.6, 2.2, 0.6, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.8, 0.8],
                align=aligns("llr" + "r" * 8),
            )
        )
        blocks.append(
            Table(
                ["Job", "Metric", "Unit", "Min", "p5", "p25", "p75", "p95", "p99", "Max", "Traced peak"],
                spread,
                caption="Percentiles from the fastest to the slowest sample; "
                "traced peak: memory allocated through Python.",
                widths=[2.6, 2.2, 0.6, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 1.0],
                align=aligns("llr" + "r" * 8),
            )
        )
    if missing:
        blocks.append(Bullets(missing))
    return Section("Appendix: full statistics", blocks, page_break_before=True)

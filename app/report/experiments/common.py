"""Helpers shared by the experiment sections: finding jobs, the published-vs-measured
table, and number formatting."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from app.core.results.model import JobResult, RunResult
from app.core.vocab import JobStatus
from app.report.experiments.published import Experiment, Figure, measure, metric_sum, our_statistic_text, printed
from app.report.job_figures import ratio_text
from app.report.model import Table
from app.report.units import MISSING, format_seconds


def experiment_id(run: RunResult) -> str | None:
    return run.profile_view.experiment


def find_jobs(
    run: RunResult,
    scheme: str,
    *,
    backend: str | None = None,
    params: Mapping[str, Any] | None = None,
    mode: str | None = None,
    message_size: int | None = None,
    tcp_nodelay: bool | None = None,
) -> list[JobResult]:
    """Finished jobs of `run` that match every given field (params: a subset match)."""
    found = []
    for job in run.jobs:
        if job.status != JobStatus.OK or job.scheme != scheme:
            continue
        if backend is not None and job.backend != backend:
            continue
        if mode is not None and job.mode != mode:
            continue
        if message_size is not None and job.message_size != message_size:
            continue
        if tcp_nodelay is not None and job.tcp_nodelay not in (None, tcp_nodelay):
            continue
        if params and any(job.params.get(k) != v for k, v in params.items()):
            continue
        found.append(job)
    return found


def mean(job: JobResult | None, *metrics: str) -> float | None:
    """Sum of the means of `metrics` (None when the job or a metric is missing)."""
    return None if job is None else metric_sum(job, metrics)


def seconds(value: float | None) -> str:
    return format_seconds(value) if value is not None else MISSING


def ratio(measured: float | None, published: float | None) -> str:
    """measured / published as "2.3×" (or "0.41×"), MISSING when either is missing."""
    if measured is None or not published:
        return MISSING
    r = measured / published
    return ratio_text(r) if r >= 1 else f"{r:.2g}×"


def first(jobs: Iterable[JobResult]) -> JobResult | None:
    return next(iter(jobs), None)


def published_cell(figure: Figure) -> str:
    """The published value with what it is ("0.003549 s, one trial") and the source's note."""
    text = f"{figure.published_text()}, {figure.statistic_text()}"
    if figure.statistic == "median" and figure.p95 is not None:
        text += f" (p95 {printed(figure.p95)} {figure.unit})"
    return text + (f"; {figure.note}" if figure.note else "")


def comparison_table(run: RunResult, experiment: Experiment) -> Table:
    """Every published figure, our same statistic for the same case, and the ratio.

    A published mean is set beside our mean, a published single trial beside our first
    timed sample, a published sample k beside our sample k. A figure no job of the run
    measures says so (a reduced or edited profile); a figure several jobs measure gets
    one row per job.
    """
    rows: list[list[str]] = []
    for figure in experiment.figures:
        measured = measure(figure, run.jobs)
        published = published_cell(figure)
        what = figure.ours or " + ".join(figure.metrics)
        if not measured.found:
            rows.append([figure.case, published, MISSING, MISSING, "not measured in this run"])
            continue
        for job, total in measured.found:
            rows.append(
                [
                    figure.case,
                    published,
                    seconds(total),
                    ratio(total, figure.seconds),
                    f"{job.label}; {our_statistic_text(figure)} of {what}",
                ]
            )
    return Table(
        [
            "Case (as published)",
            "Published",
            "Measured (same statistic)",
            "Measured / published",
            "Our job, statistic and metrics",
        ],
        rows,
        caption=f"{experiment.id}: published figures beside this run's. Each published value is "
        "compared with the same statistic of ours: a mean with our mean, a median with our median, a single trial with "
        "our first timed sample, a numbered sample with our sample of that number. Where the "
        "source timed several operations as one, ours is the sum of the matching metrics.",
        widths=[3.0, 2.2, 1.4, 1.2, 3.2],
        align=["left", "left", "right", "right", "left"],
    )

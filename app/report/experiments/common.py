"""Helpers shared by the experiment sections: finding jobs, the published-vs-measured
table, and number formatting."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from app.core.results import JobResult, RunResult
from app.report.findings import ratio_text
from app.report.model import Table
from app.report.published import Experiment, measure, metric_sum
from app.report.units import MISSING, format_seconds


def experiment_id(run: RunResult) -> str | None:
    value = run.profile.get("experiment")
    return value if isinstance(value, str) and value else None


def find_jobs(run: RunResult, scheme: str, *, backend: str | None = None, params: Mapping[str, Any] | None = None,
              mode: str | None = None, message_size: int | None = None,
              tcp_nodelay: bool | None = None) -> list[JobResult]:
    """Finished jobs of `run` that match every given field (params: a subset match)."""
    found = []
    for job in run.jobs:
        if job.status != "ok" or job.scheme != scheme:
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


def comparison_table(run: RunResult, experiment: Experiment) -> Table:
    """Every published figure, our mean for the same case, and the ratio.

    A figure no job of the run measures says so (a reduced or edited profile); a
    figure several jobs measure gets one row per job.
    """
    rows: list[list[str]] = []
    for figure in experiment.figures:
        measured = measure(figure, run.jobs)
        published = figure.published_text() + (f"; {figure.note}" if figure.note else "")
        what = figure.ours or " + ".join(figure.metrics)
        if figure.value_high is not None:
            low, high = measured.low, measured.high
            text = MISSING if low is None or high is None else (
                seconds(low) if low == high else f"{seconds(low)} - {seconds(high)}")
            jobs = f"{len(measured.found)} jobs" if measured.found else "not measured in this run"
            rows.append([figure.case, published, text, MISSING, f"{jobs}; {what}"])
            continue
        if not measured.found:
            rows.append([figure.case, published, MISSING, MISSING, "not measured in this run"])
            continue
        for job, total in measured.found:
            rows.append([figure.case, published, seconds(total), ratio(total, figure.seconds),
                         f"{job.label}; {what}"])
    return Table(["Case (as published)", "Published", "Measured (mean)", "Measured / published", "Our job and metrics"],
                 rows, caption=f"{experiment.id}: published figures beside this run's. Ranges compare the "
                               "spread of our means across the matching jobs.",
                 widths=[3.0, 2.2, 1.4, 1.2, 3.2], align=["left", "left", "right", "right", "left"])

"""Published figures of the reference experiments (resources/experiments/E*.json), and
the measured numbers that answer them.

A figure names the case as the original wrote it, its value and unit as published,
which statistic it is (`statistic`: a mean of several trials, a single trial, one
numbered sample of a series, or a median), which of our jobs measure the same thing
(`match`: scheme, backend, params subset, mode, message size, transport, link) and which
of our metrics add up to what the original timed (`metrics`: e.g. key generation +
encryption; a metric named twice counts twice; a median names one metric, since a sum of
medians is no median). Every other number the source prints for the case (P50, P95,
standard deviation, its "MB/s", CPU %, peak memory, its second run) is kept as printed.
The data is checked against docs/reference-experiments.md (the published experiments, kept in
the repository) cell by cell by the tests, so a typo
cannot turn into a false comparison. Figures derived from published ones (a ratio of two
published times) are never stored here: the report computes them and calls them derived.
An experiment whose source published whole curves (E5: handshake time against packet
loss) keeps them as `curves`, point by point, with the `source` they were read from
(repository, commit, files, and how).

Qt-free: used by the Markdown exporter and the CLI.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from app.core.resources import resource_path
from app.core.results.model import JobResult
from app.core.vocab import JobStatus, Mode

#: Seconds per published unit.
UNIT_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


class PublishedDataError(ValueError):
    """A published-figures file that cannot be used; the message names the file and field."""


class Match(BaseModel):
    """Which jobs measure a figure's case. Absent fields match anything."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scheme: str
    backend: str | None = None
    params: dict[str, int | str | bool] = Field(default_factory=dict)
    mode: Mode | None = None
    message_size: int | None = None
    tcp_nodelay: bool | None = None
    #: The emulated link's one-way delay and loss (E5: the source's round trip halved, its loss).
    link_delay_ms: float | None = Field(default=None, ge=0)
    loss_percent: float | None = Field(default=None, ge=0, le=100)

    def accepts(self, job: JobResult) -> bool:
        if job.status != JobStatus.OK or job.scheme != self.scheme:
            return False
        if self.backend is not None and job.backend != self.backend:
            return False
        if self.mode is not None and job.mode != self.mode:
            return False
        if self.message_size is not None and job.message_size != self.message_size:
            return False
        if self.tcp_nodelay is not None and job.tcp_nodelay not in (None, self.tcp_nodelay):
            return False
        if not self._link_accepts(job):
            return False
        return all(job.params.get(key) == value for key, value in self.params.items())

    def _link_accepts(self, job: JobResult) -> bool:
        if self.link_delay_ms is None and self.loss_percent is None:
            return True
        link = job.link
        if link is None:
            return False
        if self.link_delay_ms is not None and not math.isclose(link.delay_ms, self.link_delay_ms, abs_tol=1e-9):
            return False
        return self.loss_percent is None or math.isclose(link.loss_percent, self.loss_percent, abs_tol=1e-9)


def printed(value: float) -> str:
    """A published number as the source printed it, less trailing zeros: 1.8484887, 0.00102388, 0.612."""
    return f"{value:.10f}".rstrip("0").rstrip(".")


#: What a published value is: the mean of the source's trials, the one trial it printed
#: (a table row labelled "Trial 1"), sample number `sample` of a printed series, or the
#: median of the source's samples (E5).
Statistic = Literal["mean", "single", "sample", "median"]


class SecondRun(BaseModel):
    """The same case in the source's own second run (its screenshots), as printed: the
    source's run-to-run spread, context for ours."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: float = Field(gt=0)
    p50: float | None = Field(default=None, gt=0)
    p95: float | None = Field(default=None, gt=0)
    mbps: float | None = Field(default=None, ge=0)


class Figure(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    case: str = Field(min_length=1)
    value: float = Field(gt=0)
    unit: Literal["s", "ms", "us"]
    statistic: Statistic = "mean"
    #: For statistic "sample": the sample's number in the source's series (1 = the first).
    sample: int | None = Field(default=None, ge=1)
    #: Further statistics the source printed for the case, in `unit`.
    p50: float | None = Field(default=None, gt=0)
    p95: float | None = Field(default=None, gt=0)
    std: float | None = Field(default=None, ge=0)
    #: The source's "MB/s" as printed (its formula is the experiment's to state).
    mbps: float | None = Field(default=None, ge=0)
    cpu_percent: float | None = Field(default=None, ge=0)
    peak_kb: float | None = Field(default=None, ge=0)
    second_run: SecondRun | None = None
    note: str | None = None
    match: Match
    metrics: list[str] = Field(min_length=1)
    #: What our metrics time, when the metric names alone do not say it.
    ours: str | None = None

    @model_validator(mode="after")
    def _sample_numbered(self) -> Figure:
        if (self.statistic == "sample") != (self.sample is not None):
            raise ValueError('a figure has a sample number exactly when its statistic is "sample"')
        if self.statistic == "median" and len(self.metrics) != 1:
            raise ValueError("a published median is set beside the median of one metric (a sum of medians is none)")
        return self

    @property
    def seconds(self) -> float:
        return self.value * UNIT_SECONDS[self.unit]

    def in_seconds(self, value: float | None) -> float | None:
        return None if value is None else value * UNIT_SECONDS[self.unit]

    def published_text(self) -> str:
        """The value with every digit the source printed ("1.8484887 s"), no exponent notation."""
        return f"{printed(self.value)} {self.unit}"

    def statistic_text(self) -> str:
        """What the published value is, in words."""
        if self.statistic == "single":
            return "one trial"
        if self.statistic == "sample":
            return f"sample {self.sample}"
        return self.statistic


class Stated(BaseModel):
    """A ratio or count the source states in its own text (not one derived from its figures)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    case: str = Field(min_length=1)
    value: float = Field(gt=0)


class PublishedTable(BaseModel):
    """A table the source prints, cell by cell (E3: key size, message bits, times in `unit`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    columns: list[str] = Field(min_length=1)
    unit: Literal["s", "ms", "us"]
    rows: list[list[float]] = Field(min_length=1)

    @model_validator(mode="after")
    def _rectangular(self) -> PublishedTable:
        if any(len(row) != len(self.columns) for row in self.rows):
            raise ValueError(f"every row needs {len(self.columns)} cells")
        return self

    def records(self) -> list[dict[str, float]]:
        return [dict(zip(self.columns, row)) for row in self.rows]


class Source(BaseModel):
    """Where published data files were read: a repository at one commit, and how."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    repository: str = Field(min_length=1)
    commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    #: How the stored numbers were read from the files (columns, rounding).
    read: str = Field(min_length=1)


class CurvePoint(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    loss_percent: float = Field(ge=0, le=100)
    median: float = Field(gt=0)
    p95: float = Field(gt=0)


class Curve(BaseModel):
    """One published curve: handshake time (median and p95, in `unit`) against packet loss,
    for one group and certificate at one round trip; `ours` names our nearest job's
    parameters, and `delay_ms` the one-way delay that gives our link the same round trip."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    experiment: Literal["key exchange", "signature"]
    group: str = Field(min_length=1)
    certificate: str = Field(min_length=1)
    #: The round trip the source measured on its emulated link (its file names say it).
    rtt_ms: float = Field(gt=0)
    file: str = Field(min_length=1)
    delay_ms: float = Field(gt=0)
    ours: dict[str, str]
    unit: Literal["s", "ms", "us"]
    points: list[CurvePoint] = Field(min_length=1)

    @model_validator(mode="after")
    def _loss_ascending(self) -> Curve:
        losses = [point.loss_percent for point in self.points]
        if losses != sorted(set(losses)):
            raise ValueError("a curve's points go up in loss, each loss once")
        return self

    def at(self, loss_percent: float) -> CurvePoint | None:
        """The point published at `loss_percent`, None where the source measured none."""
        return next((p for p in self.points if math.isclose(p.loss_percent, loss_percent, abs_tol=1e-9)), None)


class Experiment(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^E[0-9]+$")
    title: str
    question: str
    original: str
    figures: list[Figure] = Field(min_length=1)
    #: E3: the published message lengths in bits (our sizes are the whole bytes that hold them).
    message_bits: list[int] | None = None
    #: Ratios the source states in its text (E1: communication over computation delay).
    stated: list[Stated] = Field(default_factory=list)
    #: E3: the source's full tables.
    table: PublishedTable | None = None
    #: E5: the source's curves, and where they were read.
    curves: list[Curve] = Field(default_factory=list)
    source: Source | None = None


def experiments_dir() -> Path:
    return resource_path("experiments")


def experiment_ids() -> list[str]:
    return sorted(p.stem for p in experiments_dir().glob("E*.json"))


@cache
def load_experiment(experiment_id: str) -> Experiment:
    """The published data of `experiment_id` ("E1"); PublishedDataError when missing or invalid."""
    path = experiments_dir() / f"{experiment_id}.json"
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PublishedDataError(
            f"{path}: no published figures for experiment {experiment_id!r} "
            f"(known: {', '.join(experiment_ids()) or 'none'})"
        ) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PublishedDataError(f"{path}: cannot read: {exc}") from None
    try:
        experiment = Experiment.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise PublishedDataError(f"{path}: {where}: {error['msg']}") from None
    if experiment.id != experiment_id:
        raise PublishedDataError(f"{path}: id is {experiment.id!r}, expected {experiment_id!r}")
    return experiment


@dataclass(frozen=True)
class Measured:
    """Our answer to one published figure, per matching job: the same statistic of the
    sum of the figure's metrics (the sum of means for a published mean, the sum of our
    first samples for a published single trial, of our k-th samples for a published
    sample k)."""

    figure: Figure
    jobs: list[JobResult]
    #: Per matching job, the figure's statistic in seconds; None when a metric or sample is missing.
    values: list[float | None]

    @property
    def found(self) -> list[tuple[JobResult, float]]:
        return [(job, v) for job, v in zip(self.jobs, self.values) if v is not None]

    def ratio(self) -> float | None:
        """Measured / published when exactly one job answers (None otherwise)."""
        if len(self.found) != 1:
            return None
        return self.found[0][1] / self.figure.seconds


def metric_sum(job: JobResult, metrics: Iterable[str]) -> float | None:
    """Sum of the means of `metrics` for `job` (None when one is missing)."""
    total = 0.0
    for name in metrics:
        metric = job.metrics.get(name)
        if metric is None or metric.stats.mean is None:
            return None
        total += float(metric.stats.mean)
    return total


def sample_sum(job: JobResult, metrics: Iterable[str], number: int) -> float | None:
    """Sum of sample `number` (1 = the first timed sample) of `metrics` (None when one is missing)."""
    total = 0.0
    for name in metrics:
        metric = job.metrics.get(name)
        if metric is None or len(metric.samples) < number:
            return None
        total += float(metric.samples[number - 1])
    return total


def statistic_of(figure: Figure, job: JobResult) -> float | None:
    """Our value of the statistic `figure` publishes, for `job`, in seconds."""
    if figure.statistic == "mean":
        return metric_sum(job, figure.metrics)
    if figure.statistic == "median":
        metric = job.metrics.get(figure.metrics[0])
        return None if metric is None else float(metric.stats.median)
    return sample_sum(job, figure.metrics, figure.sample or 1)


def our_statistic_text(figure: Figure) -> str:
    """What our side of a comparison is, in words."""
    if figure.statistic == "single":
        return "our first timed sample"
    if figure.statistic == "sample":
        return f"our sample {figure.sample}"
    if figure.statistic == "median":
        return "our median"
    return "our mean"


def measure(figure: Figure, jobs: Iterable[JobResult]) -> Measured:
    matching = [job for job in jobs if figure.match.accepts(job)]
    return Measured(figure, matching, [statistic_of(figure, job) for job in matching])

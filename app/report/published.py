"""Published figures of the reference experiments (resources/experiments/E*.json), and
the measured numbers that answer them.

A figure names the case as the original wrote it, its value and unit as published,
which of our jobs measure the same thing (`match`: scheme, backend, params subset,
mode, message size, transport) and which of our metrics add up to what the original
timed (`metrics`: e.g. key generation + encryption). Published figures are means, so
the measured side is a sum of means too. The data is checked against
../shared/EXPERIMENTS.md by the tests, so a typo cannot turn into a false comparison.

Qt-free: used by the Markdown exporter and the CLI.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from app.core.resources import resource_path
from app.core.results import JobResult

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
    mode: Literal["operations", "loopback", "remote"] | None = None
    message_size: int | None = None
    tcp_nodelay: bool | None = None

    def accepts(self, job: JobResult) -> bool:
        if job.status != "ok" or job.scheme != self.scheme:
            return False
        if self.backend is not None and job.backend != self.backend:
            return False
        if self.mode is not None and job.mode != self.mode:
            return False
        if self.message_size is not None and job.message_size != self.message_size:
            return False
        if self.tcp_nodelay is not None and job.tcp_nodelay not in (None, self.tcp_nodelay):
            return False
        return all(job.params.get(key) == value for key, value in self.params.items())


class Figure(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    case: str = Field(min_length=1)
    value: float = Field(gt=0)
    #: A published range ("0.000156 - 0.007289 s"): value is its low end.
    value_high: float | None = Field(default=None, gt=0)
    unit: Literal["s", "ms", "us"]
    note: str | None = None
    match: Match
    metrics: list[str] = Field(min_length=1)
    #: What our metrics time, when the metric names alone do not say it.
    ours: str | None = None

    @property
    def seconds(self) -> float:
        return self.value * UNIT_SECONDS[self.unit]

    @property
    def seconds_high(self) -> float | None:
        return None if self.value_high is None else self.value_high * UNIT_SECONDS[self.unit]

    def published_text(self) -> str:
        if self.value_high is not None:
            return f"{self.value:g} - {self.value_high:g} {self.unit}"
        return f"{self.value:g} {self.unit}"


class Experiment(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^E[0-9]+$")
    title: str
    question: str
    original: str
    figures: list[Figure] = Field(min_length=1)
    #: E3: the published message lengths in bits (our sizes are the whole bytes that hold them).
    message_bits: list[int] | None = None
    #: E4: the published performance factor (RSA-KEM over ECIES, key generation included).
    published_factor: float | None = None


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
        raise PublishedDataError(f"{path}: no published figures for experiment {experiment_id!r} "
                                 f"(known: {', '.join(experiment_ids()) or 'none'})") from None
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
    """Our answer to one published figure: the sum of the metrics' means, per matching job."""

    figure: Figure
    jobs: list[JobResult]
    #: Per matching job, the sum of the figure's metric means (seconds); None when a metric is missing.
    values: list[float | None]

    @property
    def found(self) -> list[tuple[JobResult, float]]:
        return [(job, v) for job, v in zip(self.jobs, self.values) if v is not None]

    @property
    def low(self) -> float | None:
        found = [v for _, v in self.found]
        return min(found) if found else None

    @property
    def high(self) -> float | None:
        found = [v for _, v in self.found]
        return max(found) if found else None

    def ratio(self) -> float | None:
        """Measured / published for a single value (None for ranges or nothing measured)."""
        if self.figure.value_high is not None or len(self.found) != 1:
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


def measure(figure: Figure, jobs: Iterable[JobResult]) -> Measured:
    matching = [job for job in jobs if figure.match.accepts(job)]
    return Measured(figure, matching, [metric_sum(job, figure.metrics) for job in matching])

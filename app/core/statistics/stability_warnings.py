"""Stability warnings: why a measurement may not be trustworthy, with the numbers that
triggered it and one fixed, actionable fix per reason.

Stability problems are returned as data (`StabilityWarning`) rather than log lines so
that the GUI, the CLI and the saved report all show the same text and the same fix.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from app.core.statistics.stats import MIN_CI_SAMPLES, MetricStats

__all__ = [
    "FIXES",
    "KINDS",
    "TITLES",
    "StabilityWarning",
    "WarningCode",
    "check_stability",
    "frequency_scaling_warning",
    "machine_busy_warning",
]

_HIGH_CV = 0.10
_MIN_SAMPLES = 10
_SLOW_FIRST_FACTOR = 2.0
_SLOW_WARMUP_FACTOR = 5.0
_OUTLIER_FRACTION = 0.05
_BUSY_PERCENT_OF_ONE_CORE = 25.0


class WarningCode(StrEnum):
    """Why a measurement may not be trustworthy; the value is stored in results."""

    HIGH_CV = "high-cv"
    TOO_FEW_SAMPLES = "too-few-samples"
    SLOW_FIRST_SAMPLES = "slow-first-samples"
    MACHINE_BUSY = "machine-busy"
    FREQUENCY_SCALING = "frequency-scaling"
    OUTLIERS = "outliers"
    PARALLEL_JOBS = "parallel-jobs"
    #: The job's CPU placement could not be applied here: it ran as `free` (app.core.machine.placement).
    PLACEMENT_UNAVAILABLE = "placement-unavailable"
    #: The packet link released packets later than its model allowed (app.core.records.link_path).
    LINK_EMULATOR_LATE = "link-emulator-late"


#: One fixed, actionable fix per code, so the same problem always gets the same advice.
FIXES: dict[WarningCode, str] = {
    WarningCode.HIGH_CV: ("Increase samples, close other programs, or pin the CPU frequency (performance governor)"),
    WarningCode.TOO_FEW_SAMPLES: ("Increase samples to at least 10 (30 or more for a tight confidence interval)"),
    WarningCode.SLOW_FIRST_SAMPLES: "Increase the number of warm-up samples",
    WarningCode.MACHINE_BUSY: ("Close other programs (browsers, builds, indexers, VMs) and run the job again"),
    WarningCode.FREQUENCY_SCALING: (
        "Set the CPU governor to performance (e.g. sudo cpupower frequency-set -g performance) and run the job again"
    ),
    WarningCode.OUTLIERS: (
        "Look at the raw samples; close other programs or increase samples so occasional interruptions weigh less"
    ),
    WarningCode.PARALLEL_JOBS: (
        "Run with one parallel job (Edit > Preferences > Parallel jobs) for figures you compare"
    ),
    WarningCode.PLACEMENT_UNAVAILABLE: (
        "Compare only with runs that also ran as free, or run where CPU affinity can be set (Linux, outside a "
        "container that refuses it; split needs two allowed CPUs)"
    ),
    WarningCode.LINK_EMULATOR_LATE: (
        "Run the link on a CPU of its own (placement split, or fewer other programs), or a lower rate: the "
        "emulator's own delay is in these figures"
    ),
}


#: What each kind is called where warnings are listed by kind (the report, the command line).
TITLES: dict[WarningCode, str] = {
    WarningCode.HIGH_CV: f"High variation (CV ≥ {_HIGH_CV * 100:.0f} %)",
    WarningCode.TOO_FEW_SAMPLES: "Too few samples",
    WarningCode.SLOW_FIRST_SAMPLES: "Slow first samples (warm-up too short)",
    WarningCode.MACHINE_BUSY: "Machine busy",
    WarningCode.FREQUENCY_SCALING: "CPU frequency scaling",
    WarningCode.OUTLIERS: "Many outliers",
    WarningCode.PARALLEL_JOBS: "Jobs ran in parallel",
    WarningCode.PLACEMENT_UNAVAILABLE: "CPU placement not applied",
    WarningCode.LINK_EMULATOR_LATE: "Link emulator late",
}

#: A kind's message for many warnings at once, their first numbers as `{range}` ("1–3"):
#: the messages below, with the number that varies from one metric to the next.
KINDS: dict[WarningCode, str] = {
    WarningCode.HIGH_CV: f"CV {{range}} % ≥ {_HIGH_CV * 100:.0f} %: samples vary too much for the median to be precise",
    WarningCode.TOO_FEW_SAMPLES: (
        f"Only {{range}} samples (< {_MIN_SAMPLES}): no 95 % confidence interval below {MIN_CI_SAMPLES}, "
        "a very wide one above"
    ),
    WarningCode.SLOW_FIRST_SAMPLES: (
        f"First measured sample over {_SLOW_FIRST_FACTOR:g}× the median: start-up cost leaked into the results"
    ),
    WarningCode.MACHINE_BUSY: (
        f"Other processes used {{range}} % of one core on average (> {_BUSY_PERCENT_OF_ONE_CORE:.0f} %) "
        "while the job ran"
    ),
    WarningCode.OUTLIERS: (
        f"{{range}} outlier samples per metric (over {_OUTLIER_FRACTION * 100:.0f} % of its samples; modified "
        "z-score > 3.5); they are kept in the statistics"
    ),
}


@dataclass(frozen=True, slots=True)
class StabilityWarning:
    """A reason to distrust a number, with the numbers that triggered it and a fix.

    `metric` is None for job-wide warnings (machine busy, frequency scaling).
    """

    code: WarningCode
    metric: str | None
    message: str
    fix: str

    @classmethod
    def make(cls, code: WarningCode, metric: str | None, message: str) -> StabilityWarning:
        """Build a warning with the code's standard fix text."""
        return cls(code=code, metric=metric, message=message, fix=FIXES[code])

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict for results files."""
        return {
            "code": self.code.value,
            "metric": self.metric,
            "message": self.message,
            "fix": self.fix,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> StabilityWarning:
        """Rebuild from `to_dict` output; a missing fix falls back to the standard one."""
        code = WarningCode(d["code"])
        metric = d.get("metric")
        return cls(
            code=code,
            metric=str(metric) if metric is not None else None,
            message=str(d["message"]),
            fix=str(d.get("fix") or FIXES[code]),
        )


def _fmt(value: float) -> str:
    """Format a sample value compactly for messages (4 significant digits)."""
    return f"{value:.4g}"


def check_stability(
    metric: str,
    stats: MetricStats,
    samples: Sequence[float] | np.ndarray,
    warmup_samples: Sequence[float] | np.ndarray = (),
) -> list[StabilityWarning]:
    """Return the per-metric warnings for one metric's samples.

    Args:
        metric: Metric name, copied into each warning (e.g. "seal").
        stats: `summarize(samples)`.
        samples: The measured samples in measurement order.
        warmup_samples: The discarded warm-up samples in order, if any were taken.

    Returns:
        Warnings in a stable order: HIGH_CV, TOO_FEW_SAMPLES, SLOW_FIRST_SAMPLES,
        OUTLIERS. Empty when the numbers look trustworthy.

    The slow-first check looks at the *measured* samples only: a first measured
    sample above 2x the median and above p95 means start-up cost (caches, lazy
    initialisation, frequency ramp-up) leaked into the results. A slow first warm-up
    sample on its own is not a warning, since discarding it is exactly what warm-up is
    for; when it is > 5x the median it is quoted in the message as evidence that the
    warm-up was needed but too short.
    """
    measured = np.asarray(samples, dtype=float)
    warmup = np.asarray(warmup_samples, dtype=float)
    found = (
        _high_cv(metric, stats),
        _too_few_samples(metric, stats),
        _slow_first_sample(metric, stats, measured, warmup),
        _outliers(metric, stats),
    )
    return [warning for warning in found if warning is not None]


def _high_cv(metric: str, stats: MetricStats) -> StabilityWarning | None:
    if not (stats.cv is not None and stats.cv >= _HIGH_CV):
        return None
    return StabilityWarning.make(
        WarningCode.HIGH_CV,
        metric,
        f"CV {stats.cv * 100:.1f} % ≥ {_HIGH_CV * 100:.0f} %: samples vary too much for the median to be precise",
    )


def _too_few_samples(metric: str, stats: MetricStats) -> StabilityWarning | None:
    if not stats.n < _MIN_SAMPLES:
        return None
    ci_note = (
        "no 95 % confidence interval was computed (it needs at least 6)"
        if stats.n < MIN_CI_SAMPLES
        else "the 95 % confidence interval is very wide (it cannot be computed below 6)"
    )
    return StabilityWarning.make(
        WarningCode.TOO_FEW_SAMPLES,
        metric,
        f"Only {stats.n} samples (< {_MIN_SAMPLES}); {ci_note}",
    )


def _slow_first_sample(
    metric: str, stats: MetricStats, measured: np.ndarray, warmup: np.ndarray
) -> StabilityWarning | None:
    """A first measured sample over `_SLOW_FIRST_FACTOR` times the median and above p95;
    the first warm-up sample quoted when it shows warm-up was needed but too short."""
    if not (measured.size and stats.median > 0):
        return None
    first = float(measured[0])
    if not (first > _SLOW_FIRST_FACTOR * stats.median and first > stats.p95):
        return None
    message = (
        f"First measured sample {_fmt(first)} {stats.unit} is "
        f"{first / stats.median:.1f}× the median {_fmt(stats.median)} {stats.unit}"
    )
    if warmup.size and float(warmup[0]) > _SLOW_WARMUP_FACTOR * stats.median:
        message += (
            f"; the first warm-up sample was {float(warmup[0]) / stats.median:.1f}× "
            f"the median, so warm-up was needed but {warmup.size} warm-up "
            "samples were not enough"
        )
    elif not warmup.size:
        message += "; no warm-up samples were taken"
    return StabilityWarning.make(WarningCode.SLOW_FIRST_SAMPLES, metric, message)


def _outliers(metric: str, stats: MetricStats) -> StabilityWarning | None:
    if not (stats.n and stats.outliers / stats.n > _OUTLIER_FRACTION):
        return None
    return StabilityWarning.make(
        WarningCode.OUTLIERS,
        metric,
        f"{stats.outliers} of {stats.n} samples "
        f"({stats.outliers / stats.n * 100:.1f} % > {_OUTLIER_FRACTION * 100:.0f} %) "
        "are outliers (modified z-score > 3.5); they are kept in the statistics",
    )


def machine_busy_warning(other_cpu_percent: float, cores: int) -> StabilityWarning | None:
    """Warn when other processes competed for the CPU during the job.

    Args:
        other_cpu_percent: Average CPU used by processes other than the benchmark
            during the job, in percent of ONE core (so 150 means 1.5 cores busy).
        cores: Logical cores of the machine, quoted in the message for scale.

    Returns:
        A MACHINE_BUSY warning above 25 % of one core, else None. The threshold is
        per core rather than per machine because even on a many-core machine a
        competing process steals caches, memory bandwidth and turbo headroom.
    """
    if other_cpu_percent <= _BUSY_PERCENT_OF_ONE_CORE:
        return None
    return StabilityWarning.make(
        WarningCode.MACHINE_BUSY,
        None,
        f"Other processes used {other_cpu_percent:.0f} % of one core on average "
        f"(> {_BUSY_PERCENT_OF_ONE_CORE:.0f} %; {other_cpu_percent / 100:.2f} of "
        f"{cores} cores) while the job ran",
    )


def parallel_jobs_warning(workers: int, cores: int) -> StabilityWarning | None:
    """Warn that jobs ran side by side: each one's timings include the others' load.

    Recorded on every job of such a run (not only in the log), so an export or a
    report made months later still says why its numbers may be inflated.
    """
    if workers <= 1:
        return None
    share = (
        "more jobs than cores: they also take turns on the CPU"
        if workers > cores
        else "they share caches, memory bandwidth and turbo headroom"
    )
    return StabilityWarning.make(
        WarningCode.PARALLEL_JOBS, None, f"{workers} jobs ran in parallel on {cores} logical cores; {share}"
    )


def frequency_scaling_warning(governors: Iterable[str]) -> StabilityWarning | None:
    """Warn when any CPU frequency governor is not "performance".

    Governors such as powersave, ondemand or schedutil change the clock while the
    benchmark runs, so the same code gets faster or slower with load history.

    Args:
        governors: Distinct governors of all CPUs (see `environment.collect_environment`).
            An empty list means the governor is not measurable on this machine
            (macOS, Windows, most VMs and containers): that gives None, because an
            unknown setting is not evidence of a problem.

    Returns:
        A FREQUENCY_SCALING warning, or None.
    """
    names = sorted({g.strip() for g in governors if g.strip()})
    offending = [g for g in names if g != "performance"]
    if not offending:
        return None
    return StabilityWarning.make(
        WarningCode.FREQUENCY_SCALING,
        None,
        f"CPU frequency governor is {', '.join(offending)} (not performance): "
        "the clock speed may change during the measurement",
    )

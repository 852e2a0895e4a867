"""Summary statistics, outlier flags and stability warnings for benchmark samples.

Benchmark timings are skewed and heavy-tailed (a context switch costs far more than it
saves), so the headline number is the median, its uncertainty is a distribution-free
confidence interval built from order statistics, and outliers are found with a robust
(median/MAD) score. Outliers are flagged, never removed: the raw samples are kept and a
reader must be able to see that the machine hiccupped.

Stability problems are returned as data (`StabilityWarning`) rather than log lines so
that the GUI, the CLI and the saved report all show the same text and the same fix.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache
from typing import Any

import numpy as np

from app.core.analysis.order_statistics import exact_medians_needed, order_statistic_medians

__all__ = [
    "FIXES",
    "Comparison",
    "MetricStats",
    "StabilityWarning",
    "WarningCode",
    "check_stability",
    "compare",
    "frequency_scaling_warning",
    "machine_busy_warning",
    "median_ci_ranks",
    "summarize",
]

#: Iglewicz & Hoaglin: 0.6745 = Phi^-1(0.75), so 0.6745 * (x - median) / MAD is a
#: z-score for normal data; |z| > 3.5 is their recommended outlier cut-off.
_MAD_CONSTANT = 0.6745
#: Fallback when more than half the samples are identical (MAD == 0): the mean
#: absolute deviation, scaled by sqrt(2 / pi) = 0.7979 to be a z-score for normal data.
_MEAN_AD_CONSTANT = 0.7979
_OUTLIER_Z = 3.5

#: Exact binomial ranks are cheap up to here; above it the normal approximation is
#: accurate to well under one rank.
_EXACT_CI_MAX_N = 1000
_Z_95 = 1.959963984540054

_HIGH_CV = 0.10
_MIN_SAMPLES = 10
_MIN_CI_SAMPLES = 6
_SLOW_FIRST_FACTOR = 2.0
_SLOW_WARMUP_FACTOR = 5.0
_OUTLIER_FRACTION = 0.05
_BUSY_PERCENT_OF_ONE_CORE = 25.0


def _as_samples(samples: Sequence[float] | np.ndarray, what: str = "samples") -> np.ndarray:
    """Validate and convert samples once, so every statistic sees the same array."""
    arr = np.asarray(samples, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{what} must be one-dimensional, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{what} must not be empty")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} must be finite (no NaN or infinity)")
    return arr


# --------------------------------------------------------------------------- summary


@dataclass(frozen=True, slots=True)
class MetricStats:
    """Summary of one metric's samples (e.g. seal time in seconds).

    `cv` is None when the mean is 0 (a relative spread is meaningless there); `ci95`
    is None when there are too few samples for any pair of order statistics to reach
    95 % coverage (n < 6).
    """

    unit: str
    n: int
    mean: float
    std: float
    min: float
    p5: float
    p25: float
    median: float
    p75: float
    p95: float
    p99: float
    max: float
    cv: float | None
    ci95: tuple[float, float] | None
    outliers: int
    outlier_indices: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict (tuples become lists) for results files."""
        return {
            "unit": self.unit,
            "n": self.n,
            "mean": self.mean,
            "median": self.median,
            "std": self.std,
            "min": self.min,
            "max": self.max,
            "p5": self.p5,
            "p25": self.p25,
            "p75": self.p75,
            "p95": self.p95,
            "p99": self.p99,
            "cv": self.cv,
            "ci95": list(self.ci95) if self.ci95 is not None else None,
            "outliers": self.outliers,
            "outlier_indices": list(self.outlier_indices),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> MetricStats:
        """Rebuild from `to_dict` output; tolerates files without `outlier_indices`."""
        ci = d.get("ci95")
        cv = d.get("cv")
        return cls(
            unit=str(d["unit"]),
            n=int(d["n"]),
            mean=float(d["mean"]),
            std=float(d["std"]),
            min=float(d["min"]),
            p5=float(d["p5"]),
            p25=float(d["p25"]),
            median=float(d["median"]),
            p75=float(d["p75"]),
            p95=float(d["p95"]),
            p99=float(d["p99"]),
            max=float(d["max"]),
            cv=float(cv) if cv is not None else None,
            ci95=(float(ci[0]), float(ci[1])) if ci is not None else None,
            outliers=int(d["outliers"]),
            outlier_indices=tuple(int(i) for i in d.get("outlier_indices") or ()),
        )


@lru_cache(maxsize=256)
def median_ci_ranks(n: int) -> tuple[int, int] | None:
    """Return 0-based ranks (lo, hi) such that [x_(lo), x_(hi)] covers the median >= 95 %.

    Why order statistics: the number of samples below the true median is
    Binomial(n, 1/2) whatever the distribution, so the interval needs no normality
    assumption (timings are anything but normal). We take the narrowest symmetric pair
    whose coverage is still >= 95 %. For n <= 1000 the binomial tail is summed exactly
    with integer arithmetic (math.comb, compared against 2**n, so no rounding at all);
    above that the normal approximation is used.

    Returns None for n < 6: even (min, max) covers only 1 - 2 / 2**n < 95 % there.
    """
    if n < _MIN_CI_SAMPLES:
        return None
    if n <= _EXACT_CI_MAX_N:
        # Interval [x_(k), x_(n-k+1)] (1-based) misses the median with probability
        # 2 * P(X <= k - 1). Grow k while that stays <= 5 %, i.e. 40 * tail <= 2**n.
        total = 1 << n
        term = 1  # comb(n, k), updated incrementally (exact integers)
        tail = 0  # sum of comb(n, i) for i <= k
        k = 0
        while True:
            tail += term
            if 40 * tail > total:  # P(X <= k) > 2.5 %: lower rank k + 1 is too far in
                break
            term = term * (n - k) // (k + 1)
            k += 1
    else:
        # Continuity-corrected: P(X <= k - 1) ~ Phi((k - 0.5 - n/2) / (sqrt(n)/2)).
        k = math.floor(n / 2 - _Z_95 * math.sqrt(n) / 2 + 0.5)
    k = max(k, 1)
    return k - 1, n - k


def _outlier_mask(x: np.ndarray, median: float) -> np.ndarray:
    """Flag samples with a modified z-score above 3.5 (Iglewicz & Hoaglin).

    Median and MAD are barely moved by the outliers they are looking for, unlike
    mean and std, which a single 100x sample drags towards itself.
    """
    # Overflow to inf is harmless here: an infinite score is simply an outlier.
    with np.errstate(over="ignore"):
        dev = np.abs(x - median)
        mad = float(np.median(dev))
        if mad > 0:
            z = _MAD_CONSTANT * dev / mad
        else:
            mean_ad = float(np.mean(dev))
            if mean_ad == 0:
                return np.zeros(x.shape, dtype=bool)
            z = _MEAN_AD_CONSTANT * dev / mean_ad
    return z > _OUTLIER_Z


def summarize(samples: Sequence[float] | np.ndarray, unit: str = "s") -> MetricStats:
    """Summarise samples of one metric.

    Args:
        samples: Raw measurements, in measurement order (the order matters for
            `outlier_indices` and for `check_stability`'s first-sample check).
        unit: Unit of the samples, carried along so reports never guess it.

    Returns:
        The summary. Percentiles use numpy's default linear interpolation so that
        numbers match what anyone re-analysing the raw samples with numpy gets.

    Raises:
        ValueError: If `samples` is empty, contains NaN or infinity, or is so large
            (|x| near 1e308) that float64 statistics overflow; a statistic of
            nothing, or of a broken measurement, must not look valid.
    """
    x = _as_samples(samples)
    n = int(x.size)
    try:
        with np.errstate(over="raise", invalid="raise"):
            p5, p25, median, p75, p95, p99 = (float(v) for v in np.percentile(x, [5, 25, 50, 75, 95, 99]))
            mean = float(np.mean(x))
            std = float(np.std(x, ddof=1)) if n > 1 else 0.0
    except FloatingPointError as exc:
        # Only values near the float64 limit (~1e154 and beyond) get here; returning
        # inf or NaN statistics would look like a result and break JSON.
        raise ValueError("samples are too large in magnitude to summarise") from exc
    # abs(): a relative spread must not change sign with the sign of the data.
    cv = std / abs(mean) if mean != 0 else None
    if cv is not None and not math.isfinite(cv):
        cv = None  # mean is a denormal hair away from 0: as meaningless as at 0

    ranks = median_ci_ranks(n)
    ci95: tuple[float, float] | None = None
    if ranks is not None:
        ordered = np.sort(x)
        ci95 = (float(ordered[ranks[0]]), float(ordered[ranks[1]]))

    flagged = np.flatnonzero(_outlier_mask(x, median))
    return MetricStats(
        unit=unit,
        n=n,
        mean=mean,
        std=std,
        min=float(np.min(x)),
        p5=p5,
        p25=p25,
        median=median,
        p75=p75,
        p95=p95,
        p99=p99,
        max=float(np.max(x)),
        cv=cv,
        ci95=ci95,
        outliers=int(flagged.size),
        outlier_indices=tuple(int(i) for i in flagged),
    )


# ------------------------------------------------------------------------- warnings


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
    #: The packet link released packets later than its model allowed (app.core.results.link_path).
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
    warnings: list[StabilityWarning] = []
    measured = np.asarray(samples, dtype=float)
    warmup = np.asarray(warmup_samples, dtype=float)

    if stats.cv is not None and stats.cv >= _HIGH_CV:
        warnings.append(
            StabilityWarning.make(
                WarningCode.HIGH_CV,
                metric,
                f"CV {stats.cv * 100:.1f} % ≥ {_HIGH_CV * 100:.0f} %: "
                "samples vary too much for the median to be precise",
            )
        )

    if stats.n < _MIN_SAMPLES:
        ci_note = (
            "no 95 % confidence interval was computed (it needs at least 6)"
            if stats.n < _MIN_CI_SAMPLES
            else "the 95 % confidence interval is very wide (it cannot be computed below 6)"
        )
        warnings.append(
            StabilityWarning.make(
                WarningCode.TOO_FEW_SAMPLES,
                metric,
                f"Only {stats.n} samples (< {_MIN_SAMPLES}); {ci_note}",
            )
        )

    if measured.size and stats.median > 0:
        first = float(measured[0])
        if first > _SLOW_FIRST_FACTOR * stats.median and first > stats.p95:
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
            warnings.append(StabilityWarning.make(WarningCode.SLOW_FIRST_SAMPLES, metric, message))

    if stats.n and stats.outliers / stats.n > _OUTLIER_FRACTION:
        warnings.append(
            StabilityWarning.make(
                WarningCode.OUTLIERS,
                metric,
                f"{stats.outliers} of {stats.n} samples "
                f"({stats.outliers / stats.n * 100:.1f} % > {_OUTLIER_FRACTION * 100:.0f} %) "
                "are outliers (modified z-score > 3.5); they are kept in the statistics",
            )
        )
    return warnings


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


# ------------------------------------------------------------------------ comparison


@dataclass(frozen=True, slots=True)
class Comparison:
    """Ratio of medians b / a with a 95 % bootstrap interval (ratio > 1: b is larger)."""

    ratio: float
    ci95_low: float
    ci95_high: float
    significant: bool

    def to_dict(self) -> dict[str, Any]:
        """Return a JSON-ready dict."""
        return {
            "ratio": self.ratio,
            "ci95": [self.ci95_low, self.ci95_high],
            "significant": self.significant,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Comparison:
        """Rebuild from `to_dict` output."""
        low, high = d["ci95"]
        return cls(
            ratio=float(d["ratio"]),
            ci95_low=float(low),
            ci95_high=float(high),
            significant=bool(d["significant"]),
        )


#: Bound on resamples x samples held in memory at once (~32 MB of float64).
_BOOTSTRAP_CHUNK_ELEMENTS = 4_000_000


def _bootstrap_medians(x: np.ndarray, resamples: int, rng: np.random.Generator, *, exact: bool = False) -> np.ndarray:
    """Medians of `resamples` resamples of x, vectorised in memory-bounded chunks; `exact`:
    drawn from the order statistics instead (same distribution, other random numbers)."""
    if exact:
        return order_statistic_medians(np.sort(x), resamples, rng)
    per_chunk = max(1, _BOOTSTRAP_CHUNK_ELEMENTS // x.size)
    out = np.empty(resamples)
    for start in range(0, resamples, per_chunk):
        stop = min(resamples, start + per_chunk)
        idx = rng.integers(0, x.size, size=(stop - start, x.size))
        out[start:stop] = np.median(x[idx], axis=1)
    return out


def compare(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    resamples: int = 2000,
    seed: int = 0,
    exact: bool | None = None,
) -> Comparison:
    """Compare two sets of samples by the ratio of their medians, b / a.

    Why a bootstrap: the ratio of two medians has no convenient closed-form
    distribution, and timings are not normal. Resampling each set independently and
    taking the 2.5th and 97.5th percentiles of the resampled ratios gives a 95 %
    interval without assumptions. It is seeded so that a saved report reproduces.

    Args:
        a: Baseline samples.
        b: Samples compared against the baseline.
        resamples: Bootstrap resamples; 2000 keeps the interval ends stable to ~1 %.
        seed: Seed for `numpy.random.default_rng`.
        exact: Draw each resample's median from the order statistics (`order_statistics`)
            instead of resampling; None: when resampling would pass RESAMPLED_DRAWS_MAX.

    Returns:
        The comparison; `significant` is True when the interval excludes 1.0.

    Raises:
        ValueError: On empty or non-finite input, a baseline median of 0 (the ratio
            is undefined), a ratio or interval end that is not a finite non-zero
            number (`finite_comparison`) or resamples < 1.
    """
    xa = _as_samples(a, "a")
    xb = _as_samples(b, "b")
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    with np.errstate(over="ignore"):  # the median of two values near 1e308 overflows: inf, no verdict below
        median_a, median_b = float(np.median(xa)), float(np.median(xb))
    if median_a == 0:
        raise ValueError("median of a is 0: the ratio b / a is undefined")
    if exact is None:
        exact = exact_medians_needed((xa.size, xb.size), resamples)
    rng = np.random.default_rng(seed)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        ratios = _bootstrap_medians(xb, resamples, rng, exact=exact) / _bootstrap_medians(
            xa, resamples, rng, exact=exact
        )
    return finite_comparison(median_b / median_a, ratios, median_a, median_b)  # float /: inf, never raises


def finite_comparison(ratio: float, ratios: np.ndarray, base: float, new: float) -> Comparison:
    """The comparison of a ratio and its bootstrap `ratios`, or ValueError when any of it is
    not a finite, non-zero number: medians 5e-324 s apart from 1 s overflow the ratio to
    infinity (or underflow it to 0), and an infinite ratio is no verdict: it must never
    read "within noise", pass or fail a gate, or reach JSON as `Infinity`."""
    with np.errstate(over="ignore", invalid="ignore"):
        finite = ratios[np.isfinite(ratios)]
        low, high = (float(v) for v in np.percentile(finite, [2.5, 97.5])) if finite.size else (math.nan, math.nan)
    if not all(math.isfinite(v) and v != 0 for v in (ratio, low, high)) or finite.size < ratios.size:
        raise ValueError(
            f"the ratio of medians {new:.6g} / {base:.6g} (or its interval) is not a finite, "
            "non-zero number: no verdict"
        )
    return Comparison(ratio=ratio, ci95_low=low, ci95_high=high, significant=not (low <= 1.0 <= high))

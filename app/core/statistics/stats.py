"""Summary statistics and outlier flags for benchmark samples.

Benchmark timings are skewed and heavy-tailed (a context switch costs far more than it
saves), so the headline number is the median, its uncertainty is a distribution-free
confidence interval built from order statistics, and outliers are found with a robust
(median/MAD) score. Outliers are flagged, never removed: the raw samples are kept and a
reader must be able to see that the machine hiccupped.

What the figures warn of is in `stability_warnings`; the ratio of two sets' medians with
its bootstrap interval in `median_ratio`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

__all__ = [
    "MetricStats",
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
MIN_CI_SAMPLES = 6


def as_samples(samples: Sequence[float] | np.ndarray, what: str = "samples") -> np.ndarray:
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
    if n < MIN_CI_SAMPLES:
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
    x = as_samples(samples)
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

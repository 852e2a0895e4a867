"""The ratio of two sets of samples' medians, b / a, with its seeded 95 % bootstrap
interval (`compare`), and the rule that a ratio or interval that is not a finite, non-zero
number is no verdict (`finite_comparison`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.core.analysis.order_statistics import exact_medians_needed, order_statistic_medians
from app.core.statistics.stats import as_samples

__all__ = [
    "Comparison",
    "compare",
    "finite_comparison",
]


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


def bootstrap_medians(x: np.ndarray, resamples: int, rng: np.random.Generator, *, exact: bool = False) -> np.ndarray:
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
    xa = as_samples(a, "a")
    xb = as_samples(b, "b")
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
        ratios = bootstrap_medians(xb, resamples, rng, exact=exact) / bootstrap_medians(xa, resamples, rng, exact=exact)
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

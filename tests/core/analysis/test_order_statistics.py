"""The bootstrap's medians drawn from their order statistics have exactly the resampling
bootstrap's distribution (`order_statistics.order_statistic_medians`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.core.analysis import order_statistics
from app.core.analysis.median_ratio import bootstrap_medians, compare
from app.core.analysis.order_statistics import exact_medians_needed

DRAWS = 200_000


def _resampled_median_cdf(n: int, j: int) -> float:
    """P(the median of a resample of n distinct sorted values is <= the j-th, 1-based), odd n:
    at least (n + 1) / 2 of the n draws must fall on the first j values."""
    k = (n + 1) // 2
    p = j / n
    return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))


@pytest.mark.parametrize("n", [1, 3, 5, 11, 31])
def test_odd_n_matches_the_binomial_law(n: int) -> None:
    x = np.arange(1.0, n + 1)
    drawn = bootstrap_medians(x, DRAWS, np.random.default_rng(7), exact=True)
    for j in range(1, n + 1):
        expected = _resampled_median_cdf(n, j)
        assert np.mean(drawn <= j) == pytest.approx(expected, abs=0.005), (n, j)


@pytest.mark.parametrize("n", [2, 4, 6, 10, 30])
def test_even_n_matches_resampling(n: int) -> None:
    """An even n averages two middle values: the law of the pair, compared with plain
    resampling at every value the median can take."""
    x = np.random.default_rng(3).lognormal(size=n)
    exact = bootstrap_medians(x, DRAWS, np.random.default_rng(1), exact=True)
    resampled = bootstrap_medians(x, DRAWS, np.random.default_rng(2))
    values = np.unique(np.concatenate([exact, resampled]))
    for value in values[:: max(1, values.size // 40)]:
        assert np.mean(exact <= value) == pytest.approx(np.mean(resampled <= value), abs=0.006), (n, value)


def test_order_statistics_stay_within_the_samples() -> None:
    x = np.array([5.0, 1.0, 3.0, 2.0])
    drawn = bootstrap_medians(x, 10_000, np.random.default_rng(0), exact=True)
    assert drawn.min() >= 1.0 and drawn.max() <= 5.0


def test_small_comparisons_keep_their_seeded_figures() -> None:
    """Below the budget nothing changes: the same seeded interval as plain resampling."""
    a = np.random.default_rng(1).lognormal(size=50)
    b = a * 1.1
    assert not exact_medians_needed((50, 50), 2000)
    assert compare(a, b) == compare(a, b, exact=False)


def test_past_the_budget_compare_switches_by_the_sizes_alone() -> None:
    n = order_statistics.RESAMPLED_DRAWS_MAX // 2000  # a side each: twice the budget in all
    assert exact_medians_needed((n, n), 2000) and not exact_medians_needed((n // 2, n // 2), 2000)
    a = np.random.default_rng(1).lognormal(size=n)
    result = compare(a, a * 1.5)
    assert result.significant and 1.4 < result.ci95_low <= result.ratio <= result.ci95_high < 1.6

"""Tests for app.core.statistics.stats: known values, CI coverage, outliers, warnings, compare."""

from __future__ import annotations

import dataclasses
import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.analysis.median_ratio import Comparison, compare
from app.core.statistics.stability_warnings import (
    FIXES,
    StabilityWarning,
    WarningCode,
    check_stability,
    frequency_scaling_warning,
    machine_busy_warning,
)
from app.core.statistics.stats import MetricStats, median_ci_ranks, summarize

any_finite = st.floats(allow_nan=False, allow_infinity=False)
# Beyond ~1e154 the squares inside the standard deviation overflow float64 (and
# summarize refuses); no timer, byte count or throughput comes near that.
finite_floats = st.floats(min_value=-1e100, max_value=1e100, allow_nan=False, allow_infinity=False)


def codes(found: list[StabilityWarning]) -> set[WarningCode]:
    return {w.code for w in found}


# ------------------------------------------------------------------ known values


def test_hand_computed_percentiles() -> None:
    # Linear interpolation: position q * (n - 1) into the sorted values.
    s = summarize([50.0, 10.0, 40.0, 20.0, 30.0], unit="ms")
    assert s.unit == "ms"
    assert s.n == 5
    assert s.min == 10.0 and s.max == 50.0
    assert s.median == 30.0
    assert s.p25 == pytest.approx(20.0)
    assert s.p75 == pytest.approx(40.0)
    assert s.p5 == pytest.approx(12.0)  # 10 + 0.2 * 10
    assert s.p95 == pytest.approx(48.0)  # 40 + 0.8 * 10
    assert s.p99 == pytest.approx(49.6)  # 40 + 0.96 * 10
    assert s.mean == pytest.approx(30.0)


def test_sample_std_and_cv() -> None:
    s = summarize([1.0, 2.0, 3.0, 4.0])
    assert s.mean == pytest.approx(2.5)
    assert s.median == pytest.approx(2.5)
    assert s.std == pytest.approx(math.sqrt(5 / 3))  # ddof=1, not sqrt(5/4)
    assert s.cv == pytest.approx(math.sqrt(5 / 3) / 2.5)


def test_single_sample() -> None:
    s = summarize([7.0])
    assert s.n == 1
    assert s.std == 0.0
    assert s.cv == 0.0
    assert s.median == s.p5 == s.p99 == 7.0
    assert s.ci95 is None
    assert s.outliers == 0


def test_cv_none_when_mean_is_zero() -> None:
    assert summarize([-1.0, 1.0]).cv is None
    assert summarize([0.0, 0.0, 0.0]).cv is None


@pytest.mark.parametrize("bad", [[], [1.0, float("nan")], [float("inf"), 1.0], [[1.0, 2.0], [3.0, 4.0]]])
def test_rejects_empty_non_finite_and_nested(bad: list) -> None:
    with pytest.raises(ValueError, match=r"must be one-dimensional|must not be empty|must be finite"):
        summarize(bad)


def test_overflowing_magnitudes_raise_instead_of_returning_inf() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="too large"):
            summarize([-1.7e308, 1.7e308])


def test_accepts_numpy_arrays() -> None:
    s = summarize(np.array([3.0, 1.0, 2.0]))
    assert (s.n, s.median) == (3, 2.0)


# --------------------------------------------------------------------- median CI


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_ci_none_below_six(n: int) -> None:
    assert median_ci_ranks(n) is None
    assert summarize([float(i) for i in range(n)]).ci95 is None


@pytest.mark.parametrize(
    ("n", "ranks"),
    # 1-based ranks from the published binomial tables: (1, 6), (2, 9), (6, 15), (18, 33).
    [(6, (0, 5)), (10, (1, 8)), (20, (5, 14)), (50, (17, 32))],
)
def test_ci_ranks_match_binomial_tables(n: int, ranks: tuple[int, int]) -> None:
    assert median_ci_ranks(n) == ranks


@pytest.mark.parametrize("n", [6, 7, 10, 31, 50, 200, 1000])
def test_ci_ranks_are_the_narrowest_with_95_percent_coverage(n: int) -> None:
    lo, hi = median_ci_ranks(n)  # type: ignore[misc]
    assert hi == n - 1 - lo  # symmetric

    def coverage(lower_rank: int) -> float:  # 1-based lower rank
        miss = sum(math.comb(n, i) for i in range(lower_rank)) / 2**n
        return 1 - 2 * miss

    assert coverage(lo + 1) >= 0.95
    assert coverage(lo + 2) < 0.95


def test_ci_normal_approximation_is_close_to_exact_and_conservative() -> None:
    lo_1000, _ = median_ci_ranks(1000)  # type: ignore[misc]
    lo_1001, hi_1001 = median_ci_ranks(1001)  # type: ignore[misc]
    assert lo_1000 - 1 <= lo_1001 <= lo_1000 + 1
    assert hi_1001 == 1000 - lo_1001
    # Coverage of the approximate ranks, computed exactly, must still reach 95 %.
    miss = sum(math.comb(1001, i) for i in range(lo_1001 + 1)) / 2**1001
    assert 1 - 2 * miss >= 0.95


def test_ci_bounds_are_sample_values_bracketing_the_median() -> None:
    values = [9.0, 2.0, 7.0, 1.0, 10.0, 4.0, 3.0, 8.0, 6.0, 5.0]
    s = summarize(values)
    assert s.ci95 == (2.0, 9.0)  # 2nd and 9th order statistics for n = 10
    assert s.ci95[0] in values and s.ci95[1] in values
    assert s.ci95[0] <= s.median <= s.ci95[1]


def test_ci_covers_true_median_about_95_percent_of_the_time() -> None:
    rng = np.random.default_rng(12345)
    draws = rng.normal(loc=3.0, scale=2.0, size=(400, 50))
    hits = 0
    for row in draws:
        lo, hi = summarize(row).ci95  # type: ignore[misc]
        hits += lo <= 3.0 <= hi
    assert 0.90 <= hits / len(draws) <= 0.99


def test_ci_coverage_with_normal_approximation_and_skewed_data() -> None:
    rng = np.random.default_rng(7)
    true_median = math.log(2)  # exponential(1)
    draws = rng.exponential(1.0, size=(200, 1500))
    hits = 0
    for row in draws:
        lo, hi = summarize(row).ci95  # type: ignore[misc]
        hits += lo <= true_median <= hi
    assert 0.90 <= hits / len(draws) <= 0.99


# ---------------------------------------------------------------------- outliers


def test_obvious_outlier_is_flagged_not_removed() -> None:
    values = [1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 100.0, 1.01]
    s = summarize(values)
    assert s.outlier_indices == (6,)
    assert s.outliers == 1
    assert s.n == len(values)
    assert s.max == 100.0
    assert s.mean == pytest.approx(sum(values) / len(values))


def test_no_outliers_in_well_behaved_data() -> None:
    s = summarize(np.linspace(1.0, 2.0, 50))
    assert s.outliers == 0
    assert s.outlier_indices == ()


def test_mad_zero_falls_back_to_mean_absolute_deviation() -> None:
    # Median 1, MAD 0; mean absolute deviation 4 / 8 = 0.5 -> z = 0.7979 * 4 / 0.5 = 6.4.
    s = summarize([1.0] * 7 + [5.0])
    assert s.outlier_indices == (7,)


def test_mad_zero_fallback_does_not_flag_moderate_values() -> None:
    # Median 2, MAD 0; mean AD 4/9 -> z for the 1.0s = 0.7979 * 1 / 0.444 = 1.8 < 3.5.
    s = summarize([1.0] * 4 + [2.0] * 5)
    assert s.outliers == 0


def test_all_identical_flags_nothing_without_division_warnings() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = summarize([2.5] * 20)
    assert s.outliers == 0
    assert s.std == 0.0
    assert s.ci95 == (2.5, 2.5)


# ------------------------------------------------------------------ serialisation


def test_metric_stats_round_trip_through_json() -> None:
    s = summarize([1.0, 1.1, 0.9, 1.05, 0.95, 1.0, 7.0, 1.02, 0.98, 1.01], unit="s")
    d = json.loads(json.dumps(s.to_dict()))
    assert {
        "unit",
        "n",
        "mean",
        "median",
        "std",
        "min",
        "max",
        "p5",
        "p25",
        "p75",
        "p95",
        "p99",
        "cv",
        "ci95",
        "outliers",
    } <= set(d)
    assert isinstance(d["ci95"], list)
    assert MetricStats.from_dict(d) == s


def test_metric_stats_from_dict_without_indices_and_ci() -> None:
    s = summarize([1.0, 2.0, 50.0])
    d = s.to_dict()
    del d["outlier_indices"]
    back = MetricStats.from_dict(d)
    assert back.outlier_indices == ()
    assert back.ci95 is None
    assert back == dataclasses.replace(s, outlier_indices=())


def test_stability_warning_round_trip() -> None:
    w = machine_busy_warning(80.0, cores=4)
    assert w is not None
    d = json.loads(json.dumps(w.to_dict()))
    assert d["code"] == "machine-busy"
    assert StabilityWarning.from_dict(d) == w
    d.pop("fix")
    assert StabilityWarning.from_dict(d).fix == FIXES[WarningCode.MACHINE_BUSY]


def test_every_code_has_a_fix() -> None:
    assert set(FIXES) == set(WarningCode)
    assert all(text.strip() for text in FIXES.values())
    assert "performance governor" in FIXES[WarningCode.HIGH_CV]


# ---------------------------------------------------------------------- warnings


def _steady(n: int, centre: float = 1.0) -> list[float]:
    """n samples within +-1 % of centre, no outliers, no slow start."""
    return list(np.linspace(centre * 0.99, centre * 1.01, n)[np.argsort(np.arange(n) % 7)])


def test_steady_samples_raise_no_warnings() -> None:
    samples = _steady(40)
    assert check_stability("seal", summarize(samples), samples) == []


def test_high_cv_fires_with_the_numbers() -> None:
    samples = [1.0, 1.3, 0.8, 1.2, 0.7, 1.1, 0.9, 1.25, 0.75, 1.0, 1.15, 0.85]
    s = summarize(samples)
    found = check_stability("seal", s, samples)
    high = [w for w in found if w.code is WarningCode.HIGH_CV]
    assert len(high) == 1
    assert high[0].metric == "seal"
    assert f"CV {s.cv * 100:.1f} %" in high[0].message  # type: ignore[operator]
    assert "10 %" in high[0].message
    assert high[0].fix == FIXES[WarningCode.HIGH_CV]


def test_high_cv_threshold_is_inclusive() -> None:
    samples = _steady(20)
    s = summarize(samples)
    assert WarningCode.HIGH_CV in codes(check_stability("x", dataclasses.replace(s, cv=0.10), samples))
    assert WarningCode.HIGH_CV not in codes(check_stability("x", dataclasses.replace(s, cv=0.0999), samples))


def test_too_few_samples() -> None:
    few = [1.0, 1.01, 0.99, 1.0, 1.02]
    found = [w for w in check_stability("m", summarize(few), few) if w.code is WarningCode.TOO_FEW_SAMPLES]
    assert len(found) == 1
    assert "5 samples" in found[0].message and "6" in found[0].message

    nine = _steady(9)
    assert WarningCode.TOO_FEW_SAMPLES in codes(check_stability("m", summarize(nine), nine))
    ten = _steady(10)
    assert WarningCode.TOO_FEW_SAMPLES not in codes(check_stability("m", summarize(ten), ten))


def test_slow_first_sample_fires() -> None:
    samples = [5.0] + _steady(19)
    found = [
        w for w in check_stability("open", summarize(samples), samples) if w.code is WarningCode.SLOW_FIRST_SAMPLES
    ]
    assert len(found) == 1
    assert "5" in found[0].message and "× the median" in found[0].message


def test_slow_first_sample_needs_more_than_twice_the_median() -> None:
    samples = [1.9] + _steady(19)
    assert WarningCode.SLOW_FIRST_SAMPLES not in codes(check_stability("open", summarize(samples), samples))


def test_slow_first_sample_needs_to_be_above_p95() -> None:
    # First sample is 3x the median but so are two others, so it does not exceed p95.
    samples = [3.0, 3.0, 3.0] + [1.0] * 7
    s = summarize(samples)
    assert samples[0] > 2 * s.median and samples[0] <= s.p95
    assert WarningCode.SLOW_FIRST_SAMPLES not in codes(check_stability("x", s, samples))


def test_slow_warmup_alone_is_not_a_warning() -> None:
    # Warm-up absorbed the slow start: that is what it is for.
    samples = _steady(20)
    found = check_stability("x", summarize(samples), samples, warmup_samples=[10.0, 1.0])
    assert WarningCode.SLOW_FIRST_SAMPLES not in codes(found)


def test_slow_first_measured_sample_after_slow_warmup_mentions_warmup() -> None:
    samples = [4.0] + _steady(19)
    found = [
        w
        for w in check_stability("x", summarize(samples), samples, warmup_samples=[10.0, 6.0])
        if w.code is WarningCode.SLOW_FIRST_SAMPLES
    ]
    assert len(found) == 1
    assert "warm-up" in found[0].message and "2 warm-up samples" in found[0].message


def test_outlier_warning_above_five_percent() -> None:
    samples = _steady(38) + [5.0, 6.0]  # 2 / 40 = 5 %: not above
    assert WarningCode.OUTLIERS not in codes(check_stability("x", summarize(samples), samples))
    samples = _steady(37) + [5.0, 6.0, 7.0]  # 3 / 40 = 7.5 %
    s = summarize(samples)
    assert s.outliers == 3
    found = [w for w in check_stability("x", s, samples) if w.code is WarningCode.OUTLIERS]
    assert len(found) == 1
    assert "3 of 40" in found[0].message and "7.5 %" in found[0].message


@pytest.mark.parametrize(("percent", "fires"), [(0.0, False), (25.0, False), (25.1, True), (180.0, True)])
def test_machine_busy(percent: float, fires: bool) -> None:
    w = machine_busy_warning(percent, cores=8)
    assert (w is not None) is fires
    if w is not None:
        assert w.code is WarningCode.MACHINE_BUSY
        assert w.metric is None
        assert f"{percent:.0f} %" in w.message and "8 cores" in w.message


@pytest.mark.parametrize("governor", ["powersave", "ondemand", "schedutil", "conservative"])
def test_frequency_scaling_fires_for_non_performance(governor: str) -> None:
    w = frequency_scaling_warning(["performance", governor])
    assert w is not None
    assert w.code is WarningCode.FREQUENCY_SCALING
    assert governor in w.message
    assert "performance" in w.fix


@pytest.mark.parametrize("governors", [[], ["performance"], ["performance", "performance"]])
def test_frequency_scaling_silent_when_fine_or_unknown(governors: list[str]) -> None:
    assert frequency_scaling_warning(governors) is None


# ----------------------------------------------------------------------- compare


def test_compare_clearly_different() -> None:
    rng = np.random.default_rng(1)
    a = rng.normal(1.0, 0.05, 100)
    b = rng.normal(1.5, 0.05, 100)
    c = compare(a, b)
    assert c.ratio == pytest.approx(np.median(b) / np.median(a))
    assert c.ci95_low < c.ratio < c.ci95_high
    assert c.ci95_low > 1.3
    assert c.significant


def test_compare_same_distribution_not_significant() -> None:
    rng = np.random.default_rng(2)
    a = rng.lognormal(0.0, 0.2, 200)
    b = rng.lognormal(0.0, 0.2, 200)
    c = compare(a, b)
    assert c.ci95_low < 1.0 < c.ci95_high
    assert not c.significant


def test_compare_is_reproducible_and_seeded() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.normal(1, 0.1, 60), rng.normal(1.05, 0.1, 60)
    assert compare(a, b, seed=5) == compare(a, b, seed=5)
    assert compare(a, b, seed=5) != compare(a, b, seed=6)


def test_compare_exact_ratio_and_round_trip() -> None:
    a = np.linspace(1.0, 2.0, 30)
    c = compare(a, 2 * a, resamples=500)
    assert c.ratio == pytest.approx(2.0)
    assert Comparison.from_dict(json.loads(json.dumps(c.to_dict()))) == c


@pytest.mark.parametrize(("a", "b"), [([], [1.0]), ([1.0], []), ([0.0, 0.0, 1.0], [1.0]), ([1.0, float("nan")], [1.0])])
def test_compare_rejects_bad_input(a: list[float], b: list[float]) -> None:
    with pytest.raises(ValueError, match=r"must not be empty|must be finite|the ratio b / a is undefined"):
        compare(a, b)


# ------------------------------------------------------------------- properties


@settings(max_examples=300, deadline=None)
@given(st.lists(any_finite, min_size=1, max_size=60))
def test_percentiles_are_ordered(values: list[float]) -> None:
    try:
        s = summarize(values)
    except ValueError:
        assert max(abs(v) for v in values) > 1e150  # only overflow may be refused
        return
    assert s.min <= s.p5 <= s.p25 <= s.median <= s.p75 <= s.p95 <= s.p99 <= s.max
    assert s.n == len(values)
    assert s.outliers == len(s.outlier_indices)
    assert all(0 <= i < len(values) for i in s.outlier_indices)
    if s.ci95 is not None:
        assert s.ci95[0] <= s.median <= s.ci95[1]
        assert s.ci95[0] in values and s.ci95[1] in values
    else:
        assert len(values) < 6


@settings(max_examples=50, deadline=None)
@given(st.lists(finite_floats, min_size=1, max_size=30))
def test_to_dict_round_trip_property(values: list[float]) -> None:
    s = summarize(values)
    assert MetricStats.from_dict(json.loads(json.dumps(s.to_dict()))) == s


@given(st.sampled_from([[], (), np.array([])]))
def test_empty_raises(empty: object) -> None:
    with pytest.raises(ValueError, match="must not be empty"):
        summarize(empty)  # type: ignore[arg-type]

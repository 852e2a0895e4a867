"""A run's warnings by kind (app/core/analysis/warning_groups.py)."""

from __future__ import annotations

from app.core.analysis.warning_groups import group_warnings, number_ranges
from app.core.statistics.stability_warnings import StabilityWarning, WarningCode, frequency_scaling_warning


def _few(metric: str, n: int) -> StabilityWarning:
    return StabilityWarning.make(WarningCode.TOO_FEW_SAMPLES, metric, f"Only {n} samples (< 10); whatever")


def test_job_numbers_read_as_ranges() -> None:
    assert number_ranges([1, 2, 3, 5, 7, 8]) == "#1-#3, #5, #7-#8"
    assert number_ranges([4]) == "#4"


def test_one_group_per_kind_the_rarest_first_with_the_range_of_its_numbers() -> None:
    cv = StabilityWarning.make(WarningCode.HIGH_CV, "sign", "CV 40.0 % ≥ 10 %: samples vary")
    governor = frequency_scaling_warning(["powersave"])
    assert governor is not None
    by_job = [(n, [_few("encrypt", 3), _few("keygen", 1), governor]) for n in range(1, 7)]
    by_job[2][1].append(cv)
    few, high = group_warnings(by_job)[::-1]
    assert high.code == WarningCode.HIGH_CV and high.headline() == cv.message and high.where() == "#3 sign"
    assert few.headline() == "Only 1–3 samples (< 10); whatever"  # the message, its number a range
    assert few.where() == "12 metrics in jobs #1-#6"
    assert len(group_warnings(by_job)) == 2  # the run-wide governor warning is said elsewhere, once


def test_a_kind_on_a_few_places_names_each_and_on_whole_jobs_counts_jobs() -> None:
    busy = [
        StabilityWarning.make(WarningCode.MACHINE_BUSY, None, f"Other processes used {p} % of one core")
        for p in (30, 90)
    ]
    (two,) = group_warnings([(1, [busy[0]]), (4, [busy[1]])])
    assert two.where() == "#1 job, #4 job" and two.headline().startswith("Other processes used 30–90 % of one core")
    (many,) = group_warnings([(n, [busy[0]]) for n in range(1, 9)])
    assert many.where() == "8 jobs (#1-#8)" and many.headline() == busy[0].message

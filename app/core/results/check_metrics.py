"""The checks of one metric of a job (`jobs[i].metrics.<name>`): its count, statistics in
order, interval, outliers and samples, and for a time metric durations a timed operation
can take (1 ns to a day), which the store and the runner apply on their own too.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from app.core.results import plausible
from app.core.results.check_fields import (
    MAX_MAGNITUDE,
    all_finite_floats,
    check_int,
    check_list,
    check_str,
    fail,
    is_int,
    is_num,
    join,
    num,
)
from app.core.results.errors import ResultsDataError
from app.core.settings.profile import MAX_SAMPLES

# A bound taken from the limit the producers are held to, not copied, so the two cannot
# drift apart (tests/reliability/test_written_read_back.py writes the largest each allows):
#: Samples per metric: a profile's `samples`, and what a load step keeps (its generator
#: samples 1 in k requests past this, `app.core.load.generator.sample_stride`).
_MAX_SAMPLES = MAX_SAMPLES
#: The only unit the app writes for a metric: every producer (`app.core.run.runner`, the
#: session sender, the load job, `app.core.contracts.events`) summarises durations in seconds
#: (`app.core.statistics.stats.summarize(samples, "s")`); throughput has its own field
#: (`throughput_bytes_per_s`), never a metric. Every face shows a metric as a time, so a
#: metric in any other unit ("ms", "x") would be shown as seconds it never was, and would
#: pass none of the duration checks below: refused.
METRIC_UNIT = "s"


def check_metric(metric: dict[str, Any], path: str) -> None:
    unit = check_str(metric, "unit", path)
    if unit != METRIC_UNIT:
        raise fail(join(path, "unit"), json.dumps(METRIC_UNIT), unit)
    n = check_int(metric, "n", path, low=1, high=_MAX_SAMPLES)
    assert n is not None
    values = {key: num(metric, key, path) for key in ("mean", "median", "min", "max", "p5", "p25", "p75", "p95", "p99")}
    num(metric, "std", path, non_negative=True)
    num(metric, "cv", path, non_negative=True, required=False, nullable=True)
    low, high, median = values["min"], values["max"], values["median"]
    assert low is not None and high is not None and median is not None
    if not low <= median <= high:
        raise ResultsDataError(path, f"min <= median <= max does not hold (got {low!r}, {median!r}, {high!r})")
    ci = check_list(metric, "ci95", path, nullable=True)
    if (
        "ci95" in metric
        and metric["ci95"] is not None
        and (len(ci) != 2 or not all(is_num(v) for v in ci) or ci[0] > ci[1])
    ):
        raise fail(join(path, "ci95"), "null or [low, high] with low <= high", metric["ci95"])
    outliers = check_int(metric, "outliers", path)
    assert outliers is not None
    if outliers > n:
        raise fail(join(path, "outliers"), f"at most n ({n})", outliers)
    indices_path = join(path, "outlier_indices")
    for i, index in enumerate(check_list(metric, "outlier_indices", path, nullable=True)):
        if not is_int(index) or not 0 <= index < n:
            raise fail(f"{indices_path}[{i}]", f"a sample index 0..{n - 1}", index)
    check_int(metric, "batch", path, low=1, required=False)
    check_int(metric, "traced_peak_bytes", path, required=False, nullable=True)
    num(metric, "throughput_bytes_per_s", path, non_negative=True, required=False, nullable=True)
    if "samples" in metric:
        samples = check_list(metric, "samples", path)
        if len(samples) != n:
            raise ResultsDataError(join(path, "samples"), f"expected n = {n} samples, got {len(samples)}")
        for i, sample in enumerate([] if all_finite_floats(samples, MAX_MAGNITUDE) else samples):
            if not is_num(sample):
                raise fail(f"{join(path, 'samples')}[{i}]", "a finite number", sample)
    check_metric_magnitudes(metric, path)
    plausible.check_metric_plausible(metric, path)


# --- physically possible durations ----------------------------------------------------------

#: Every metric is a duration in seconds (unit "s"); these are the durations a timed
#: operation can take on any machine. Below: the clocks tick in nanoseconds
#: (`time.perf_counter_ns`) and the cheapest call the app times, a Python call into a
#: library, costs tens of them, so a sample under 1 ns (5e-324 s, 1e-300 s) was never
#: measured. Batched operations are reported per operation, and still cost more than 1 ns.
MIN_SAMPLE_SECONDS = 1e-9
#: Above: a session waits at most `reply_timeout` (600 s by default) for one answer, a load
#: step lasts at most 600 s, and the slowest single operation the app offers (an
#: RSA-16384 key, a chunked ElGamal-4096 open of a large message) takes minutes; a day
#: is far beyond all of them, and keeps every ratio of two samples (at most 8.64e13)
#: finite and printable.
MAX_SAMPLE_SECONDS = 86_400.0
#: The fields of a metric that are samples or statistics of them (hence durations too).
_DURATION_FIELDS = ("min", "max", "median", "mean", "p5", "p25", "p75", "p95", "p99")


def duration_problem(value: float) -> str | None:
    """Why `value` (seconds) cannot be a timed operation's duration, or None."""
    if not MIN_SAMPLE_SECONDS <= value <= MAX_SAMPLE_SECONDS:
        return (
            f"{value!r} s is not a duration any machine measures "
            f"({MIN_SAMPLE_SECONDS:g} s to {MAX_SAMPLE_SECONDS:g} s, 1 ns to a day)"
        )
    return None


def sample_magnitude_problem(samples: Any) -> tuple[int, str] | None:
    """The index of the first sample that is not a possible duration and why, or None.
    Vectorised: a metric may hold 1,000,000 samples. Non-finite samples are found here too."""
    array = np.asarray(samples, dtype=np.float64)
    if not array.size:
        return None
    with np.errstate(invalid="ignore"):
        bad = ~((array >= MIN_SAMPLE_SECONDS) & (array <= MAX_SAMPLE_SECONDS))
    if not bad.any():
        return None
    index = int(np.argmax(bad))
    return index, duration_problem(float(array[index])) or "not a duration"


def check_metric_magnitudes(metric: dict[str, Any], path: str) -> None:
    """A metric's statistics, interval and samples are possible durations (every metric is
    a time: `METRIC_UNIT`). Called after `check_metric` (types, finiteness, unit and order
    are already checked); samples that are still packed (a store row) are checked by the
    store once unpacked."""
    for key in _DURATION_FIELDS:
        problem = duration_problem(float(metric[key]))
        if problem is not None:
            raise ResultsDataError(join(path, key), problem)
    ci = metric.get("ci95")
    for i, value in enumerate(ci if isinstance(ci, list) else ()):
        problem = duration_problem(float(value))
        if problem is not None:
            raise ResultsDataError(f"{join(path, 'ci95')}[{i}]", problem)
    samples = metric.get("samples")
    if isinstance(samples, list):
        found = sample_magnitude_problem(samples)
        if found is not None:
            raise ResultsDataError(f"{join(path, 'samples')}[{found[0]}]", found[1])

"""app.core.results.plausible: each invariant refuses its violation, naming the field, and
accepts the producer's own records (tests/reliability/test_written_read_back.py holds the
round trips)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from app.core.results import model as results
from app.core.results.check import check_job
from app.core.results.errors import ResultsDataError
from app.core.results.model import ResultsFileError, parse_results_text
from app.core.results.plausible import EARLIEST_TIME, LATEST_TIME, parse_time, time_problem
from tests.helpers import records
from tests.helpers.loads import KNEE_STEPS, load


def _job() -> dict[str, Any]:
    job = records.job("r", 0, metrics={"encrypt": [1e-6, 2e-6, 3e-6, 4e-6, 5e-6]}, load=load(list(KNEE_STEPS)))
    job.cpu = job.cpu.__class__.from_dict({"worker": {"samples": 3, "mean_percent": 50.0, "max_percent": 90.0}})
    return job.to_dict()


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], None]:
    def change(job: dict[str, Any]) -> None:
        target = job
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    return change


M = ("metrics", "encrypt")
S0 = ("load", "steps", 0)

CASES: list[tuple[str, Callable[[dict[str, Any]], None], str]] = [
    # a metric
    # (the field only: a stricter duration check may refuse a negative time first, in its words)
    ("negative min", _set((*M, "min"), -4.98e-5), "result.metrics.encrypt.min: "),
    ("p5 below min", _set((*M, "p5"), 0.5e-6), "result.metrics.encrypt.p5: expected at least min"),
    ("p25 below p5", _set((*M, "p25"), 1.0e-6), "result.metrics.encrypt.p25: expected at least p5"),
    ("p75 below median", _set((*M, "p75"), 2.5e-6), "result.metrics.encrypt.p75: expected at least median"),
    ("p95 below p75", _set((*M, "p95"), 3.9e-6), "result.metrics.encrypt.p95: expected at least p75"),
    ("p99 below p95", _set((*M, "p99"), 4.7e-6), "result.metrics.encrypt.p99: expected at least p95"),
    ("max below p99", _set((*M, "max"), 4.9e-6), "result.metrics.encrypt.max: expected at least p99"),
    ("mean above max", _set((*M, "mean"), 6e-6), "result.metrics.encrypt.mean: expected a mean between min"),
    ("mean below min", _set((*M, "mean"), 0.5e-6), "result.metrics.encrypt.mean: expected a mean between min"),
    ("interval past max", _set((*M, "ci95"), [1e-6, 9e-6]), "result.metrics.encrypt.ci95: expected the median's"),
    # a load step
    ("sent past the window", _set((*S0, "sent"), 201), "result.load.steps[0].sent: expected at most 200"),
    ("completed past sent", _set((*S0, "completed"), 101), "result.load.steps[0].completed: expected at most sent"),
    ("errors past sent", _set((*S0, "errors"), 101), "result.load.steps[0].errors: expected at most sent"),
    ("completed + errors", _set((*S0, "errors"), 1), "result.load.steps[0].errors: expected completed + errors"),
    ("achieved past the window", _set((*S0, "achieved_per_s"), 152.0), "result.load.steps[0].achieved_per_s"),
    ("zero latency", _set((*S0, "latency_s", "p50"), 0.0), "result.load.steps[0].latency_s.p50: expected a positive"),
    (
        "p99.9 below p99",
        _set((*S0, "latency_s", "p99.9"), 1e-3),
        'result.load.steps[0].latency_s["p99.9"]: expected at least p99',
    ),
    ("max below p99.9", _set((*S0, "latency_s", "max"), 2.5e-3), "result.load.steps[0].latency_s.max: expected"),
    # a load job
    ("knee no step reached", _set(("load", "knee_per_s"), 1e15), "result.load.knee_per_s: expected one of the steps'"),
    ("sustained no step", _set(("load", "sustained_per_s"), 898.0), "result.load.sustained_per_s: expected one of"),
    ("sustained above knee", _set(("load", "knee_per_s"), 499.0), "result.load.sustained_per_s: expected at most"),
    ("p99 of no step", _set(("load", "sustained_p99_s"), 1.0), "result.load.sustained_p99_s: expected one of"),
    # CPU, times
    ("cpu mean above max", _set(("cpu", "worker", "mean_percent"), 95.0), "result.cpu.worker.mean_percent"),
    ("naive start", _set(("started",), "2026-01-01T00:00:00"), "result.started: expected an ISO 8601 time"),
    ("far finish", _set(("finished",), "9999-12-31T23:59:59-23:59"), "result.finished: expected an ISO 8601"),
]


def test_the_base_record_is_accepted() -> None:
    check_job(_job(), "result")


@pytest.mark.parametrize(("name", "change", "message"), CASES, ids=[c[0] for c in CASES])
def test_each_invariant_refuses_its_violation_naming_the_field(
    name: str, change: Callable[[dict[str, Any]], None], message: str
) -> None:
    job = copy.deepcopy(_job())
    change(job)
    with pytest.raises(ResultsDataError) as caught:
        check_job(job, "result")
    assert str(caught.value).startswith(message), str(caught.value)


def test_the_issue_s_load_imports_no_more() -> None:
    """A knee of 10^15/s with 10^12 completed out of 5 sent."""
    job = records.job("r", 0, mode="load", load=load(list(KNEE_STEPS)))
    data = json.loads(results.to_json(records.run("r", [job])))
    step = data["jobs"][0]["load"]["steps"][0]
    step.update(sent=5, completed=10**12, achieved_per_s=1e15)
    data["jobs"][0]["load"]["knee_per_s"] = 1e15

    def refused(message: str) -> None:
        with pytest.raises(ResultsFileError, match=r"f\.json: jobs\[0\]\.load\." + message):
            parse_results_text(json.dumps(data), "f.json")

    refused(r"steps\[0\]\.completed: expected at most sent \(5\), got 1000000000000")
    step["completed"] = 5
    refused(r"steps\[0\]\.achieved_per_s: expected at most 1\d+\.?\d*/s .*got 1000000000000000\.0")
    step["achieved_per_s"] = 100.0
    step["sent"] = 300
    refused(r"steps\[0\]\.sent: expected at most 200 \(a 2 s window at 100/s\), got 300")
    step["sent"] = 100
    refused(r"steps\[0\]\.achieved_per_s: expected at most 56/s \(5 requests completed and 50 of warm-up")
    step["completed"] = 100 - step["errors"]
    refused(r"knee_per_s: expected one of the steps' achieved rates \(100, 499, .*got 1000000000000000\.0")
    data["jobs"][0]["load"]["knee_per_s"] = 960.0
    parse_results_text(json.dumps(data), "f.json")


def test_negative_times_import_no_more() -> None:
    job = records.job("r", 0, metrics={"encrypt": [-4.98e-5, -4.9e-5, 1e-6]})
    with pytest.raises(ResultsFileError, match=r"jobs\[0\]\.metrics\.encrypt\.(min|samples\[0\]): "):
        parse_results_text(results.to_json(records.run("r", [job])), "f.json")


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("2026-04-01T12:00:00+00:00", True),
        ("2026-04-01T12:00:00.123+05:30", True),
        ("2026-04-01T12:00:00Z", True),
        ("1970-01-01T00:00:00+00:00", True),
        ("1970-01-01T00:59:59+01:00", False),  # 1969 in UTC
        ("2199-12-31T23:59:59.999999+00:00", True),
        ("2200-01-01T00:00:00+00:00", False),
        ("2026-04-01T12:00:00", False),
        ("9999-12-31T23:59:59-23:59", False),
        ("0001-01-01T00:00:00+23:59", False),
        ("2026-13-01T00:00:00+00:00", False),
        ("", False),
        ("2026-04-01T12:00:00+00:00" + " " * 60, False),
    ],
)
def test_a_time_is_aware_and_in_range(text: str, ok: bool) -> None:
    assert (parse_time(text) is not None) is ok
    assert (time_problem(text) is None) is ok


def test_the_range_s_ends_convert_to_any_offset_without_overflow() -> None:
    from datetime import timedelta, timezone

    for moment in (EARLIEST_TIME, LATEST_TIME - timedelta(microseconds=1)):
        for hours in (-23, 23):
            shifted = moment.astimezone(timezone(timedelta(hours=hours, minutes=59 if hours > 0 else -59)))
            assert (shifted - EARLIEST_TIME).total_seconds() >= 0
            assert shifted.timestamp() >= 0
    assert time_problem(7) == "expected an ISO 8601 time, got 7"

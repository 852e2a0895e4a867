"""A load step's achieved rate counts its own completed requests and the warm-up's, no more.

The generator counts the warm-up's replies answered in the window, a reply timed before
it was due is a clock fault (never a 1 ns latency), and the checker refuses an achieved
rate without completed requests beyond what the warm-up's backlog explains.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.core.results import model as results
from app.core.results.check import check_results
from app.core.results.errors import ResultsDataError
from tests.helpers.extreme_runs import RUN_ID

# --- a load step's achieved rate: its own completed requests and the warm-up's, no more ------------
# The outside round saw "sent 948, completed 0, errors 948, achieved 1,144/s" (1 M/s over a
# 1 Mbit/s link): honest, since the window's throughput counts the warm-up's replies it
# answered (the server's work in the window). Without a warm-up, no completed request
# leaves nothing to count: such a rate is refused.


def test_warm_up_replies_in_the_window_are_the_achieved_rate_of_a_step_whose_own_requests_failed() -> None:
    from hdrh.histogram import HdrHistogram

    from app.core.load.generator import LoadGenerator, StepState
    from app.core.records.load_histogram import HISTOGRAM_RANGE
    from app.core.session.protocol import Verdict

    step = StepState(HdrHistogram(*HISTOGRAM_RANGE), window_start=1_000, window_end=2_000, first_measured=10)
    step.outstanding = dict.fromkeys(range(20), 0)
    for ident in range(10):  # the warm-up's, answered inside the window
        LoadGenerator._replied(None, step, ident, 0, Verdict.OK, 1_500)  # type: ignore[arg-type]
    for ident in range(10, 20):  # the step's own, each refused
        LoadGenerator._replied(None, step, ident, 0, Verdict.ERROR, 1_600)  # type: ignore[arg-type]
    assert step.completed_in_window == 10 and step.histogram.get_total_count() == 0
    assert sum(step.refused.values()) == 10


def test_a_reply_timed_before_it_was_due_is_a_clock_fault_never_a_1_ns_latency() -> None:
    """Two load latencies of exactly 1 ns came from a clamp: a reply whose kernel stamp fell
    before its intended start. That is a clock fault: counted and flagged, never a sample."""
    from hdrh.histogram import HdrHistogram

    from app.core.load.generator import LoadGenerator, StepState
    from app.core.load.verdict import clock_fault_text
    from app.core.records.job_conditions import LoadStep
    from app.core.records.load_histogram import HISTOGRAM_RANGE
    from app.core.session.protocol import Verdict
    from app.gui.results.load_cells import step_line
    from app.report.load_words import step_mark

    step = StepState(HdrHistogram(*HISTOGRAM_RANGE), window_start=0, window_end=10_000, first_measured=0)
    step.measured, step.outstanding = 4, {0: 5_000, 1: 5_000, 2: 5_000, 3: 5_000}
    for ident, now in ((0, 4_999), (1, 5_000), (2, 5_250), (3, 5_500)):  # early, on the dot, then 250 and 500 ns
        LoadGenerator._replied(None, step, ident, 0, Verdict.OK, now)  # type: ignore[arg-type]
    assert step.clock_faults == 2 and step.histogram.get_total_count() == 2
    assert step.histogram.get_min_value() >= 250 and [round(x * 1e9) for x in step.latencies] == [250, 500]
    assert step.completed_in_window == 4  # the server did answer them: its throughput
    faulty = LoadStep(offered_per_s=100, achieved_per_s=100, errors=0, latency_s={"p50": 3e-7}, clock_faults=2)
    said = clock_fault_text(faulty)
    assert said == "clock fault: 2 replies timed at or before their intended start, not recorded as latencies"
    from app.core.load.verdict import StepCall
    from app.core.records.job_conditions import StepLimit

    assert step_mark(faulty, StepCall(StepLimit.KEPT_UP)) == said  # flagged even where the server kept up
    assert step_line(faulty, StepCall(StepLimit.KEPT_UP)).endswith(f" · {said}")
    assert (
        LoadStep.from_dict(faulty.to_dict()).clock_faults == 2 and "clock_faults" not in LoadStep(1, 1, 0, {}).to_dict()
    )


def _errored_step_document(warmup_s: float, achieved: float) -> dict[str, Any]:
    """The outside round's step: 948 sent, 948 errors, none completed, in a 0.948 s window."""
    from app.core.records.job_conditions import Load, LoadStep
    from tests.helpers import records

    step = LoadStep(offered_per_s=1000.0, achieved_per_s=achieved, errors=948, latency_s={}, sent=948, completed=0)
    load = Load(clients=4, server_workers=1, steps=(step,), duration_s=0.948, warmup_s=warmup_s)
    job = records.job(RUN_ID, 0, mode="load", load=load)
    return json.loads(results.to_json(records.run(RUN_ID, [job], started="2026-11-21T10:04:00+00:00")))


@pytest.mark.parametrize(
    ("warmup_s", "achieved", "ok"),
    [(0.2, 212.0, True), (0.2, 213.0, False), (0.0, 1.0, True), (0.0, 1_144.3, False), (0.0, 3.0, False)],
    ids=["warm-up-backlog", "past-the-backlog", "rounding", "no-warm-up", "no-warm-up-small"],
)
def test_an_achieved_rate_without_completed_requests_needs_a_warm_up(
    warmup_s: float, achieved: float, ok: bool
) -> None:
    data = _errored_step_document(warmup_s, achieved)
    if ok:
        check_results(data)
        return
    with pytest.raises(ResultsDataError) as refused:
        check_results(data)
    assert str(refused.value).startswith("jobs[0].load.steps[0].achieved_per_s: expected at most "), str(refused.value)
    assert "(0 requests completed and " in str(refused.value)

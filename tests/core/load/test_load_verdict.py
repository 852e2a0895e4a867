"""What limited each load step, and the verdict (app/core/load/verdict.py), on recorded and
hand-made steps: no process runs here (a real run past a knee: test_load_knee.py)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from app.core.load import verdict
from app.core.load.verdict import StepCall, VerdictKind, classify, load_verdict, verdict_text
from app.core.records.job_conditions import Load, LoadStep, StepLimit
from tests.helpers.loads import OVERLOADED_SWEEP, load, load_job

LOW = 0.5e-3  # a low-load p99


def _step(
    offered: float,
    achieved: float,
    p50: float,
    p99: float,
    *,
    lag: float = 0.2e-3,
    server_cpu: float | None = 50.0,
    first: float | None = None,
    last: float | None = None,
    missed: int = 0,
    errors: int = 0,
    reason: str | None = None,
) -> LoadStep:
    """A 2 s step: its schedule sent (less `missed`), the generator's mark when `reason`."""
    scheduled = round(offered * 2)
    return LoadStep(
        offered_per_s=offered,
        achieved_per_s=achieved,
        errors=errors,
        latency_s={"p50": p50, "p99": p99},
        generator_saturated=reason is not None,
        sent=scheduled - missed,
        missed=missed,
        completed=round(achieved * 2),
        generator_cpu_percent=100.0,  # it polls before each request: near 100 % at any high rate
        send_lag_p99_s=lag,
        server_cpu_percent=server_cpu,
        saturation_reason=reason,
        latency_first_p50_s=first,
        latency_last_p50_s=last,
    )


BASE = _step(100, 100, 0.2e-3, LOW)


def _call(step: LoadStep, workers: int = 1) -> StepCall:
    return classify([BASE, step], workers)[1]


# --- each class, on synthetic steps ----------------------------------------------------------


def test_a_step_with_its_rate_achieved_and_latency_flat_was_kept_up_with() -> None:
    call = _call(_step(1000, 998, 0.3e-3, 1.5e-3, server_cpu=92.0, first=0.3e-3, last=0.32e-3))
    assert call == StepCall(StepLimit.KEPT_UP)  # busy, but keeping up: no evidence is no call


def test_a_queue_many_low_load_tails_long_is_the_servers_even_at_97_percent_achieved() -> None:
    call = _call(_step(1000, 975, 60e-3, 130e-3, server_cpu=98.0))
    assert call.limit == StepLimit.SERVER
    assert call.evidence == ("p50 60 ms, 120× the low-load p99 (500 µs)", "server CPU 98 %")


def test_latency_growing_through_the_step_on_a_busy_server_is_a_queue_without_bound() -> None:
    growing = _step(1000, 990, 2e-3, 30e-3, server_cpu=97.0, first=1e-3, last=12e-3)
    assert _call(growing).limit == StepLimit.SERVER
    assert (
        _call(growing).evidence[0] == "latency grew through the step (p50 1 ms in its first quarter, 12 ms in its last)"
    )
    # The same rise on an idle server (a pause of the machine, not a queue the server could
    # not serve) is no evidence: the step was kept up with.
    assert _call(replace(growing, server_cpu_percent=40.0)).limit == StepLimit.KEPT_UP
    # Nor is a rise of a few hundred microseconds.
    assert _call(replace(growing, latency_first_p50_s=0.2e-3, latency_last_p50_s=0.6e-3)).limit == StepLimit.KEPT_UP


def test_less_achieved_than_the_generator_sent_on_time_is_the_servers_shortfall() -> None:
    call = _call(_step(1000, 800, 1e-3, 3e-3, server_cpu=99.0))
    assert call.limit == StepLimit.SERVER and call.evidence == ("achieved 80 % of offered", "server CPU 99 %")
    # A server that fell behind without working flat out was held back: said so.
    idle = _call(_step(1000, 800, 1e-3, 3e-3, server_cpu=20.0))
    assert idle.evidence == (
        "achieved 80 % of offered",
        "server CPU only 20 %: held back by the machine or the link, not by its own work",
    )


def test_a_late_generator_before_a_server_that_kept_pace_is_the_generators_limit() -> None:
    mark = "the generator handed requests to the kernel up to 3.00 ms late (p99, limit 1 ms)"
    late = _step(1000, 990, 1.5e-3, 4e-3, lag=3e-3, server_cpu=30.0, reason=mark)
    assert _call(late) == StepCall(StepLimit.GENERATOR, (mark,))
    # Its CPU alone is no mark: it polls, so it is near 100 % at every step above.
    unmarked = replace(late, send_lag_p99_s=0.2e-3, saturation_reason=None, generator_saturated=False)
    assert _call(unmarked).limit == StepLimit.KEPT_UP
    # A generator that fell ever further behind: its lag explains both the latency and the shortfall.
    behind = _step(1000, 700, 0.3, 0.6, lag=0.6, server_cpu=30.0, reason=mark)
    assert _call(behind).limit == StepLimit.GENERATOR


def test_server_overload_wins_over_the_generators_marks() -> None:
    mark = "the generator handed requests to the kernel up to 1.20 ms late (p99, limit 1 ms)"
    call = _call(_step(1300, 1000, 200e-3, 400e-3, lag=1.2e-3, server_cpu=99.0, reason=mark))
    assert call.limit == StepLimit.SERVER
    assert call.evidence[1] == "achieved 77 % of offered, which a send lag of 1.2 ms (p99) cannot explain"
    assert call.evidence[-1] == f"the generator's marks ({mark}) are the server's back-pressure, not its limit"
    # Misses too: the server's back-pressure filled the backlog.
    missed = _step(1300, 1000, 200e-3, 400e-3, lag=1.2e-3, server_cpu=99.0, missed=200, reason="missed")
    assert _call(missed).limit == StepLimit.SERVER


def test_refused_or_unanswered_requests_mean_the_server_did_not_keep_up() -> None:
    call = _call(_step(1000, 1000, 0.3e-3, 1e-3, errors=3))
    assert call == StepCall(StepLimit.SERVER, ("3 requests refused or unanswered",))


def test_several_workers_are_busy_at_their_summed_cpu() -> None:
    growing = _step(1000, 990, 2e-3, 30e-3, server_cpu=150.0, first=1e-3, last=12e-3)
    assert _call(growing, workers=1).limit == StepLimit.SERVER
    assert _call(growing, workers=2).limit == StepLimit.KEPT_UP  # 75 % of two cores: not busy


# --- an X25519 sweep past its knee -------------------------------------------------------------------


def test_an_x25519_sweep_sent_late_by_back_pressure_is_server_overloaded_at_its_knee() -> None:
    calls = classify(OVERLOADED_SWEEP)
    assert [call.limit for call in calls] == [StepLimit.KEPT_UP] * 7 + [StepLimit.SERVER] * 3
    # 97.5 % achieved, but p50 61 ms: not kept up with.
    assert calls[7].evidence[0] == "p50 61 ms, 102× the low-load p99 (600 µs)"
    # Sent 1.17 ms late, 13 % short: the lag cannot explain the shortfall.
    assert "achieved 87 % of offered, which a send lag of 1.17 ms (p99) cannot explain" in calls[8].evidence
    the_load = load(OVERLOADED_SWEEP)
    assert (the_load.knee_per_s, the_load.sustained_per_s, the_load.sustained_p99_s, the_load.saturated) == (
        24_649,
        21_624,
        3e-3,
        True,
    )
    job = load_job(0, "X25519 [cryptography]", the_load)
    assert verdict_text(job, the_load) == (
        "server overloaded from the step offered 24,868/s (achieved 24,252/s: p50 61 ms, 102× the low-load p99 "
        "(600 µs), server CPU 98 %); the knee, the most it achieved, 24,649 handshakes/s on one core (CPU 1) at "
        "the step offered 34,599/s; sustains 21,624/s at p99 under 3 ms"
    )
    assert verdict.should_stop(OVERLOADED_SWEEP) and not verdict.should_stop(OVERLOADED_SWEEP[:8])


def test_that_sweep_is_the_servers_even_with_every_low_step_at_3_ms() -> None:
    slow = [
        replace(step, latency_s={**step.latency_s, "p99": 3e-3}) if k < 7 else step
        for k, step in enumerate(OVERLOADED_SWEEP)
    ]
    assert [call.limit for call in classify(slow)][7:] == [StepLimit.SERVER] * 3


# --- the verdict's three sentences -----------------------------------------------------------


def test_at_least_is_said_only_where_no_step_showed_server_overload() -> None:
    kept = load([BASE, _step(1000, 999, 0.3e-3, 1e-3)])
    job = load_job(0, "X", kept)
    assert load_verdict(kept).kind == VerdictKind.AT_LEAST
    assert verdict_text(job, kept) == (
        "at least 999 handshakes/s on one core (CPU 1) at p99 under 1 ms: no step showed server overload, "
        "so its limit lies higher"
    )
    mark = "the generator handed requests to the kernel up to 3.00 ms late (p99, limit 1 ms)"
    capped = load([BASE, _step(1000, 999, 0.3e-3, 1e-3), _step(5000, 4990, 2e-3, 5e-3, lag=3e-3, reason=mark)])
    assert load_verdict(capped).kind == VerdictKind.GENERATOR
    assert verdict_text(load_job(0, "X", capped), capped) == (
        "generator limited: at least 999 handshakes/s on one core (CPU 1) at p99 under 1 ms, and no step showed "
        f"server overload; at the step offered 5,000/s the load generator, not the server, was the limit: {mark}"
    )
    only = load([_step(5000, 4990, 2e-3, 5e-3, lag=3e-3, reason=mark)])
    assert verdict_text(load_job(0, "X", only), only) == (
        "generator limited: the load generator, not the server, was the limit at its one step, so no rate here "
        f"is the server's: {mark}"
    )
    assert verdict_text(load_job(0, "X", load([])), load([])) == "no load step was measured"


# --- recorded with the steps, and results from before ---------------------------------------


def test_a_run_records_each_call_and_its_figures_read_back_the_same() -> None:
    steps = verdict.with_calls(OVERLOADED_SWEEP)
    assert [step.limit for step in steps][-3:] == [StepLimit.SERVER] * 3
    assert not any(step.generator_saturated for step in steps)  # the server's, not the generator's
    assert steps[8].saturation_reason and "1.17 ms late" in steps[8].saturation_reason  # its mark is kept
    recorded = replace(load(OVERLOADED_SWEEP), steps=tuple(steps))
    back = Load.from_dict(json.loads(json.dumps(recorded.to_dict())))
    assert back == recorded
    assert verdict.step_calls(back) == classify(OVERLOADED_SWEEP)


def test_a_step_without_a_recorded_call_writes_no_new_field() -> None:
    data = OVERLOADED_SWEEP[0].to_dict()
    assert not {"limit", "limit_reason", "latency_first_p50_s", "latency_last_p50_s"} & set(data)
    assert LoadStep.from_dict(data).limit is None


def test_a_recorded_call_is_what_the_faces_say_even_where_the_rule_would_now_differ() -> None:
    """The call a run made stands (a later rule does not rewrite a stored run's steps);
    only steps recorded without one are called from their figures."""
    the_load = load(OVERLOADED_SWEEP)
    odd = replace(
        the_load,
        steps=tuple(
            replace(step, limit=StepLimit.KEPT_UP, limit_reason=None) for step in verdict.with_calls(OVERLOADED_SWEEP)
        ),
    )
    assert load_verdict(odd).kind == VerdictKind.AT_LEAST
    partly = replace(the_load, steps=(replace(OVERLOADED_SWEEP[0], limit=StepLimit.KEPT_UP), *OVERLOADED_SWEEP[1:]))
    assert load_verdict(partly).kind == VerdictKind.SERVER  # not all recorded: called afresh


@pytest.mark.parametrize("limit", list(StepLimit))
def test_every_call_reads_back_from_json(limit: StepLimit) -> None:
    step = replace(BASE, limit=limit, limit_reason="why", generator_saturated=limit == StepLimit.GENERATOR)
    assert LoadStep.from_dict(json.loads(json.dumps(step.to_dict()))) == step

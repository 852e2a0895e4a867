"""Several generators' records of one step merged (app/core/load/merge.py): lossless
histograms, summed counts, any generator's saturation, rates that add up, clock offsets."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hdrh.histogram import HdrHistogram
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.load.cluster import replies
from app.core.load.merge import (
    MAX_MISALIGNMENT_SHARE,
    ClockOffset,
    clock_offset,
    late_start_limit_s,
    late_start_reason,
    merge_steps,
    merge_tls,
    misalignment_problem,
    sum_handshakes,
    with_start,
)
from app.core.records.load_histogram import HISTOGRAM_RANGE
from app.core.records.tls_record import ByteRange, TlsStep
from app.core.settings.load import (
    MAX_DURATION_S,
    MAX_GENERATORS,
    MAX_RATE_PER_S,
    MAX_WARMUP_S,
    schedule_share,
    split_rate,
    step_schedule,
)
from tests.helpers.loads import LAG_REASON, step
from tests.helpers.records import tls_record


def _timed(latencies_ns: list[int], **fields: object) -> object:
    """A generator's step whose histogram holds exactly these latencies."""
    histogram = HdrHistogram(*HISTOGRAM_RANGE)
    for value in latencies_ns:
        histogram.record_value(value)
    base = step(100.0, 100.0, 0.001, 0.002)
    return replace(
        base,
        histogram=histogram.encode().decode("ascii"),
        sent=len(latencies_ns),
        completed=len(latencies_ns),
        **fields,  # type: ignore[arg-type]
    )


def test_merged_percentiles_are_those_of_every_request_not_an_average_of_the_generators() -> None:
    rng = random.Random(7)
    fast = [rng.randint(1_000_000, 2_000_000) for _ in range(3000)]  # 1-2 ms
    slow = [rng.randint(40_000_000, 60_000_000) for _ in range(1000)]  # 40-60 ms
    merged = merge_steps([_timed(fast), _timed(slow)])  # type: ignore[list-item]
    everything = HdrHistogram(*HISTOGRAM_RANGE)
    for value in fast + slow:
        everything.record_value(value)
    assert merged.completed == merged.sent == 4000  # the merged count is the sum of the generators'
    assert HdrHistogram.decode(merged.histogram).get_total_count() == 4000
    for name, percentile in (("p50", 50.0), ("p99", 99.0)):
        assert merged.latency_s[name] == everything.get_value_at_percentile(percentile) / 1e9
    # p50 of everything is a fast request's; the average of the two p50s would be ~25 ms.
    assert merged.latency_s["p50"] < 0.0021 and merged.latency_s["p99"] > 0.04


def test_rates_and_counts_add_and_one_late_generator_marks_the_step() -> None:
    on_time = step(500.0, 500.0, 0.001, 0.002)
    late = step(500.0, 480.0, 0.001, 0.004, saturated=True)
    merged = merge_steps([_with_histogram(on_time), _with_histogram(late)])
    assert merged.offered_per_s == 1000.0 and merged.achieved_per_s == 980.0
    assert merged.generator_saturated and merged.saturation_reason == f"generator #2: {LAG_REASON}"
    assert merged.send_lag_p99_s == late.send_lag_p99_s and merged.generator_cpu_percent == 40.0
    assert merged.server_cpu_percent == 50.0  # one server: its figure, not a sum


def test_queue_growth_is_kept_from_the_generator_that_saw_it_most() -> None:
    flat = replace(
        _with_histogram(step(500.0, 500.0, 0.001, 0.002)), latency_first_p50_s=0.001, latency_last_p50_s=0.001
    )
    growing = replace(flat, latency_first_p50_s=0.002, latency_last_p50_s=0.2)
    merged = merge_steps([flat, growing])
    assert (merged.latency_first_p50_s, merged.latency_last_p50_s) == (0.002, 0.2)


def test_nothing_to_merge_is_refused() -> None:
    with pytest.raises(ValueError, match="no generator's step"):
        merge_steps([])
    with pytest.raises(ValueError, match="no histogram"):
        merge_steps([step(1.0, 1.0, 0.001, 0.002)])


@pytest.mark.parametrize(("total", "generators"), [(1000.0, 3), (0.3, 3), (24_868.0, 7), (5.0, 1)])
def test_a_step_s_rate_splits_into_shares_that_add_up_to_it(total: float, generators: int) -> None:
    shares = split_rate(total, generators)
    assert len(shares) == generators and sum(shares) == total
    assert max(shares) - min(shares) <= 1e-9 * total
    with pytest.raises(ValueError, match="at least one generator"):
        split_rate(total, 0)


@given(
    rate=st.floats(min_value=0.01, max_value=MAX_RATE_PER_S * MAX_GENERATORS),
    warmup=st.floats(min_value=0.0, max_value=MAX_WARMUP_S),
    duration=st.floats(min_value=0.001, max_value=MAX_DURATION_S),
    generators=st.integers(min_value=1, max_value=MAX_GENERATORS),
)
@settings(max_examples=300)
def test_generators_sharing_a_step_send_exactly_its_schedule(
    rate: float, warmup: float, duration: float, generators: int
) -> None:
    # Each generator used to round its own share's window: 2 generators at 3/s for 1 s sent
    # 2 + 2 of a schedule of 3, and their run read back as damaged.
    warm, measured = step_schedule(rate, warmup, duration)
    shares = [
        (schedule_share(warm, generators, k), schedule_share(warm + measured, generators, k)) for k in range(generators)
    ]
    assert sum(own_warm for own_warm, _ in shares) == warm
    assert sum(total - own_warm for own_warm, total in shares) == measured
    assert measured == max(1, round(duration * rate)) and warm == round(warmup * rate)


def test_the_shares_of_the_reported_cases_add_up() -> None:
    for rate, duration, generators in ((3.0, 1.0, 2), (153.5, 2.0, 2), (20.0, 0.1, 3)):
        _, measured = step_schedule(rate, 0.0, duration)
        old = sum(max(1, round(duration * share)) for share in split_rate(rate, generators))
        new = [schedule_share(measured, generators, k) for k in range(generators)]
        assert old == measured + 1 and sum(new) == measured, (rate, old, new)
    assert schedule_share(2, 3, 2) == 0  # fewer requests than generators: the last has none
    with pytest.raises(ValueError, match="generator 3 of 3"):
        schedule_share(5, 3, 3)


def test_the_clock_offset_comes_from_the_exchange_with_the_least_round_trip() -> None:
    # The worker's clock runs 2.5 s ahead; the second exchange's reply waited 40 ms in a queue.
    exchanges = [(10.0, 12.5 + 0.0005, 10.001), (11.0, 13.5 + 0.04, 11.0412), (12.0, 14.5 + 0.0002, 12.0004)]
    offset = clock_offset(exchanges)
    assert offset.round_trip_s == pytest.approx(0.0004) and offset.offset_s == pytest.approx(2.5)
    with pytest.raises(ValueError, match="no clock exchange"):
        clock_offset([])
    with pytest.raises(ValueError, match="received before it was sent"):
        clock_offset([(2.0, 5.0, 1.0)])


def test_a_clock_known_too_loosely_for_the_step_is_refused_naming_the_generator() -> None:
    step_s = 2.0
    limit = MAX_MISALIGNMENT_SHARE * step_s
    tight, loose = ClockOffset(3.0, round_trip_s=limit), ClockOffset(-1.0, round_trip_s=4 * limit)
    assert misalignment_problem([tight, tight], step_s) is None  # a large offset is corrected, not refused
    problem = misalignment_problem([tight, loose], step_s)
    assert problem is not None and "generator(s) #2" in problem and "80.0 ms" in problem and "2 s step" in problem


def _with_histogram(base: object) -> object:
    histogram = HdrHistogram(*HISTOGRAM_RANGE)
    histogram.record_value(1_000_000)
    return replace(base, histogram=histogram.encode().decode("ascii"))  # type: ignore[type-var]


# --- a generator that began its share of a step late -------------------------------------


def test_the_late_start_limit_is_the_clocks_tolerance_of_the_step() -> None:
    """A start as late as a clock the run would refuse: MAX_MISALIGNMENT_SHARE of the step."""
    assert late_start_limit_s(10.0) == pytest.approx(MAX_MISALIGNMENT_SHARE * 10.0) == pytest.approx(0.2)
    assert late_start_reason(-0.25, 10.0) is None  # ready early, as it should be
    assert late_start_reason(0.2, 10.0) is None  # at the limit
    reason = late_start_reason(0.21, 10.0)
    assert reason == (
        "the generator began its share 210 ms after the agreed start (limit 200 ms, 2% of the 10 s step): "
        "the requests due meanwhile went out late, in a burst"
    )


def test_a_record_keeps_its_start_and_is_marked_only_past_the_limit() -> None:
    part = replace(_with_histogram(step(500.0, 500.0, 0.001, 0.002)), generator=2)
    early = with_start(part, -0.25, 1.0)
    assert early.started_late_s == -0.25 and not early.generator_saturated and early.saturation_reason is None
    late = with_start(part, 0.05, 1.0)  # the limit of a 1 s step is 20 ms
    assert late.started_late_s == 0.05 and late.generator_saturated
    assert late.saturation_reason == late_start_reason(0.05, 1.0)
    # Its other marks are kept, the start's added.
    lagging = replace(part, generator_saturated=True, saturation_reason=LAG_REASON)
    both = with_start(lagging, 0.05, 1.0)
    assert both.saturation_reason == f"{LAG_REASON}; {late_start_reason(0.05, 1.0)}"
    # The merge names the generator by its number (#2 here, though it is the only record).
    merged = merge_steps([late])
    assert merged.generator_saturated and merged.saturation_reason == f"generator #2: {late.saturation_reason}"
    assert merged.started_late_s is None  # a generator's own figure, not the step's


# --- a tls13 job's handshakes over several generators ------------------------------------------


def test_generators_handshake_counts_add_up_and_their_records_merge() -> None:
    assert sum_handshakes([None, None]) is None  # not a tls13 job
    assert sum_handshakes([TlsStep(10, 4, 1), None, TlsStep(5, 5, 0, 1)]) == TlsStep(15, 9, 1, 1)
    one = tls_record(handshakes=12, client_bytes=ByteRange(1447, 1447), server_bytes=ByteRange(10333, 10334))
    other = tls_record(handshakes=8, client_bytes=ByteRange(1446, 1447), server_bytes=ByteRange(10333, 10333))
    merged = merge_tls([one, other])
    assert merged is not None and merged.handshakes == 20
    assert merged.client_bytes == ByteRange(1446, 1447) and merged.server_bytes == ByteRange(10333, 10334)
    # A worker's record is data: one no handshake could have written is named, not merged.
    assert replies.tls_record(one) == one and replies.tls_record(None) is None
    with pytest.raises(replies.BadReply, match=r"its TLS record\.handshakes"):
        replies.tls_record(replace(one, handshakes=0))
    with pytest.raises(replies.BadReply, match="expected a TLS record"):
        replies.tls_record({"handshakes": 12})

"""The packet link's arithmetic on a fake clock: serialization, delay, the drop-tail queue,
jitter without reordering, and loss within its binomial interval."""

from __future__ import annotations

import random

import pytest

from app.core.link.packet_line import (
    DEFAULT_QUEUE_BYTES,
    DEFAULT_QUEUE_PACKETS,
    GilbertElliott,
    LossModel,
    PacketLine,
)
from app.core.link.packet_link import PacketPathPlan, packet_lines, queue_bounds
from app.core.records.job_conditions import BurstLoss, Link
from app.core.records.link_path import PathDirection, wilson_interval


def _line(rate_bps: float | None = 8_000_000, delay_s: float = 0.02, **kwargs: object) -> PacketLine:
    loss = kwargs.pop("loss", LossModel())
    jitter = kwargs.pop("jitter_s", 0.0)
    return PacketLine(delay_s, jitter, rate_bps, loss, random.Random(7), **kwargs)  # type: ignore[arg-type]


def test_a_packet_on_an_idle_line_arrives_after_its_serialization_and_the_delay() -> None:
    line = _line()
    assert line.push(10.0, b"x" * 1500) is None
    assert line.next_due() == pytest.approx(10.0 + 8 * 1500 / 8e6 + 0.02)
    assert line.pop_due(10.0214) == [] and len(line.pop_due(10.0216)) == 1


def test_back_to_back_packets_leave_one_serialization_apart() -> None:
    line = _line()
    for _ in range(10):
        line.push(0.0, b"x" * 1000)
    due = [packet.deliver_at for packet in line.pop_due(1.0)]
    assert due == pytest.approx([0.02 + 0.001 * (k + 1) for k in range(10)])
    assert (line.counters.packets_out, line.counters.bytes_out) == (10, 10_000)


def test_an_unlimited_line_only_delays() -> None:
    line = _line(rate_bps=None)
    for _ in range(5):
        line.push(1.0, b"x" * 60_000)
    assert [p.deliver_at for p in line.pop_due(2.0)] == [1.02] * 5


def test_the_queue_drops_at_its_tail_by_packets_and_by_bytes() -> None:
    line = _line(queue_packets=3, queue_bytes=10**9)
    causes = [line.push(0.0, b"x" * 1000) for _ in range(6)]
    # the first starts at once; three wait; the rest find the queue full
    assert causes == [None, None, None, None, "queue", "queue"]
    assert line.counters.dropped_queue == 2
    later = line.push(0.0025, b"x" * 1000)  # two have left the queue by then
    assert later is None
    by_bytes = _line(queue_packets=1000, queue_bytes=2500)
    assert [by_bytes.push(0.0, b"x" * 1000) for _ in range(5)] == [None, None, None, "queue", "queue"]


def test_jitter_never_reorders() -> None:
    line = _line(rate_bps=None, delay_s=0.05, jitter_s=0.04)
    for k in range(500):
        line.push(k * 0.0001, b"p")
    due = [packet.deliver_at for packet in line.pop_due(10.0)]
    assert due == sorted(due) and min(due) >= 0.01 and max(due) <= 0.0499 + 0.09 + 1e-9


@pytest.mark.parametrize("probability", [0.01, 0.1, 0.5])
def test_independent_loss_lands_within_its_binomial_interval(probability: float) -> None:
    line = _line(rate_bps=None, loss=LossModel(probability))
    trials = 20_000
    lost = sum(line.push(0.0, b"p") == "loss" for _ in range(trials))
    interval = wilson_interval(lost, trials, z=3.29)  # 99.9 %: a seeded run, checked once
    assert interval is not None and interval[0] <= probability <= interval[1]
    assert line.counters.dropped_loss == lost and len(line.pop_due(1.0)) == trials - lost


def test_bursty_loss_has_its_mean_and_comes_in_bursts() -> None:
    model = GilbertElliott(p=0.01, r=0.2, loss_good=0.0, loss_bad=0.8)
    line = _line(rate_bps=None, loss=LossModel(bursty=model))
    outcomes = [line.push(0.0, b"p") == "loss" for _ in range(100_000)]
    rate = sum(outcomes) / len(outcomes)
    assert model.mean_loss == pytest.approx(0.8 * 0.01 / 0.21)
    assert rate == pytest.approx(model.mean_loss, rel=0.15)
    after_loss = [b for a, b in zip(outcomes, outcomes[1:]) if a]
    assert sum(after_loss) / len(after_loss) > 5 * rate  # a loss is followed by another far more often


def test_a_lost_packet_used_its_line_time() -> None:
    line = _line(loss=LossModel(1.0))
    assert line.push(0.0, b"x" * 1000) == "loss"
    line.loss = LossModel()
    line.push(0.0, b"x" * 1000)
    assert line.next_due() == pytest.approx(0.002 + 0.02)


def test_the_line_refuses_impossible_settings() -> None:
    with pytest.raises(ValueError, match="must not be negative"):
        _line(delay_s=-1)
    with pytest.raises(ValueError, match="must be positive"):
        _line(rate_bps=0)
    with pytest.raises(ValueError, match="holds nothing"):
        _line(queue_packets=0)


def test_the_achieved_loss_and_its_interval() -> None:
    direction = PathDirection(1000, 1_500_000, 970, 1_455_000, dropped_queue=10, dropped_loss=20)
    assert direction.loss_trials == 990 and direction.loss_rate == pytest.approx(20 / 990)
    low, high = direction.to_dict()["loss_ci95"]
    assert low < 20 / 990 < high and 0 <= low and high <= 1
    assert wilson_interval(0, 0) is None
    assert wilson_interval(0, 10) == (0.0, pytest.approx(0.2775, abs=1e-3))


def test_a_link_s_bursty_loss_and_queue_reach_both_lines() -> None:
    """What a profile sets (app.core.settings.links) is what each direction runs with, and
    the bursty model's mean is the long-run loss the link's label and record give."""
    bursts = BurstLoss(p_percent=2, r_percent=30, bad_loss_percent=90, good_loss_percent=0.5)
    link = Link(None, 20, 0, 8000, 8000, bursts.mean_percent, "packet", burst_loss=bursts, queue_packets=50)
    up, down = packet_lines(PacketPathPlan(link, seed=1, counters=None))
    for line in (up, down):
        model = line.loss.bursty
        assert model is not None and model.mean_loss == pytest.approx(bursts.mean_percent / 100)
        assert (line.queue_packets, line.queue_bytes) == queue_bounds(link) == (50, DEFAULT_QUEUE_BYTES)
    plain = Link(None, 20, 0, None, None, 1.0, "packet")
    up, _ = packet_lines(PacketPathPlan(plain, seed=1, counters=None))
    assert up.loss.bursty is None and up.loss.probability == 0.01
    assert queue_bounds(plain) == (DEFAULT_QUEUE_PACKETS, DEFAULT_QUEUE_BYTES)

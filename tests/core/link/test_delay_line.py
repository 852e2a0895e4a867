"""The delay line's arithmetic on a fake clock: serialization, delay, jitter, no reordering."""

from __future__ import annotations

import random

import pytest

from app.core.contracts.plan import SessionPeer
from app.core.link.delay_line import MAX_SEGMENT_BYTES, MSS_BYTES, DelayLine, segment_bytes
from app.core.link.relay import LinkError, check_link, delay_lines
from app.core.link.timeouts import exchange_seconds, largest_frame, limits_over_link, loss_seconds, peer_over_link
from app.core.records.job_conditions import Link
from app.core.session.receiver import ReceiverLimits
from app.core.transport.wire import MAX_CONTROL_FRAME, frame_deadline
from app.core.vocab import LinkEmulation


def _line(delay_ms: float, rate_kbit: float | None, jitter_ms: float = 0.0, seed: int = 1) -> DelayLine:
    return DelayLine(
        delay_ms / 1000, jitter_ms / 1000, None if rate_kbit is None else rate_kbit * 1000, random.Random(seed)
    )


def _link(
    delay_ms: float = 0.0,
    up: float | None = None,
    down: float | None = None,
    jitter_ms: float = 0.0,
    loss: float = 0.0,
    emulation: str = LinkEmulation.DELAY_LINE,
) -> Link:
    return Link(
        name=None,
        delay_ms=delay_ms,
        jitter_ms=jitter_ms,
        rate_kbit_up=up,
        rate_kbit_down=down,
        loss_percent=loss,
        emulation=emulation,
    )


def test_a_message_arrives_after_its_serialization_and_the_delay() -> None:
    line = _line(delay_ms=20, rate_kbit=8)  # 8 kbit/s: one byte per millisecond
    line.push(10.0, b"x" * 1000)
    (segment,) = line.pop_due(11.020)
    assert (segment.tx_start, segment.tx_end, segment.deliver_at) == pytest.approx((10.0, 11.0, 11.020))
    assert segment.data == b"x" * 1000 and not line.queue


def test_nothing_is_released_before_its_time() -> None:
    line = _line(delay_ms=300, rate_kbit=None)
    line.push(0.0, b"abc")
    assert line.pop_due(0.299999) == []
    assert line.next_due() == pytest.approx(0.3)
    assert [s.data for s in line.pop_due(0.3)] == [b"abc"]
    assert line.next_due() is None


def test_bytes_queue_behind_the_line_and_an_idle_line_starts_at_arrival() -> None:
    line = _line(delay_ms=5, rate_kbit=800)  # 100 bytes per millisecond
    line.push(0.0, b"a" * 1000)  # busy until 10 ms
    line.push(0.002, b"b" * 500)  # arrives while the line is busy: waits for it
    line.push(1.0, b"c" * 100)  # the line is idle again: starts at once
    a, b, c = line.pop_due(2.0)
    assert (a.tx_end, a.deliver_at) == pytest.approx((0.010, 0.015))
    assert (b.tx_start, b.tx_end, b.deliver_at) == pytest.approx((0.010, 0.015, 0.020))
    assert (c.tx_start, c.tx_end, c.deliver_at) == pytest.approx((1.0, 1.001, 1.006))


def test_a_large_message_arrives_progressively_a_segment_at_a_time() -> None:
    rate_kbit, delay = 1000.0, 0.050
    line = _line(delay_ms=delay * 1000, rate_kbit=rate_kbit)
    message = bytes(range(256)) * 40  # 10,240 bytes
    line.push(0.0, message)
    segments = line.pop_due(10.0)
    assert [len(s.data) for s in segments[:-1]] == [MSS_BYTES] * (len(segments) - 1)
    assert b"".join(s.data for s in segments) == message
    per_segment = 8 * MSS_BYTES / (rate_kbit * 1000)
    for k, segment in enumerate(segments[:-1]):
        assert segment.deliver_at == pytest.approx((k + 1) * per_segment + delay)
    # The whole message: serialization of every byte, then the delay (the benchmark's model).
    assert segments[-1].deliver_at == pytest.approx(8 * len(message) / (rate_kbit * 1000) + delay)


def test_segments_are_mss_sized_on_slow_lines_and_larger_on_fast_ones() -> None:
    assert segment_bytes(50_000) == MSS_BYTES
    assert segment_bytes(1e6) == MSS_BYTES
    assert MSS_BYTES < segment_bytes(1e9) <= MAX_SEGMENT_BYTES
    assert segment_bytes(None) == MAX_SEGMENT_BYTES


def test_an_unlimited_line_only_delays() -> None:
    line = _line(delay_ms=0.5, rate_kbit=None)
    line.push(1.0, b"z" * 100_000)
    segments = line.pop_due(1.0005)
    assert sum(len(s.data) for s in segments) == 100_000
    assert all(s.deliver_at == pytest.approx(1.0005) for s in segments)
    assert line.backlog_bytes(1.0) == 0.0


def test_jitter_stays_within_its_bounds_never_reorders_and_repeats_with_the_seed() -> None:
    def deliveries(seed: int) -> list[float]:
        line = _line(delay_ms=10, rate_kbit=None, jitter_ms=4, seed=seed)
        for k in range(500):
            line.push(k * 0.001, bytes([k % 256]))  # one byte a millisecond: jitter would reorder them
        segments = line.pop_due(10.0)
        assert bytes(s.data[0] for s in segments) == bytes(k % 256 for k in range(500))  # stream order kept
        return [s.deliver_at for s in segments]

    delivered = deliveries(7)
    assert delivered == sorted(delivered)
    flights = [t - k * 0.001 for k, t in enumerate(delivered)]
    assert all(0.006 - 1e-9 <= f <= 0.014 + 1e-9 for f in flights)
    assert max(flights) - min(flights) > 0.004  # the jitter is there
    assert deliveries(7) == delivered and deliveries(8) != delivered


def test_jitter_larger_than_the_delay_never_delivers_before_serialization() -> None:
    line = _line(delay_ms=1, rate_kbit=None, jitter_ms=5)
    for k in range(200):
        line.push(float(k), b"q")
    assert all(s.deliver_at >= s.tx_end for s in line.pop_due(1000.0))


def test_the_end_of_stream_travels_behind_the_last_byte() -> None:
    line = _line(delay_ms=10, rate_kbit=8)
    line.push(0.0, b"x" * 100)
    line.close(0.001)
    data, end = line.pop_due(1.0)
    assert end.data == b"" and end.deliver_at == pytest.approx(data.deliver_at)
    with pytest.raises(ValueError, match="pushed after the end"):
        line.push(2.0, b"late")


def test_backlog_is_what_waits_for_the_line() -> None:
    line = _line(delay_ms=0, rate_kbit=8)  # 1000 bytes a second
    line.push(0.0, b"x" * 3000)
    assert line.backlog_bytes(0.0) == pytest.approx(3000)
    assert line.backlog_bytes(2.0) == pytest.approx(1000)
    assert line.backlog_bytes(5.0) == 0.0
    assert line.backlog_below(500) == pytest.approx(2.5)


def test_asymmetric_rates_serialize_each_direction_at_its_own_rate() -> None:
    up, down = delay_lines(_link(delay_ms=30, up=80, down=800), seed=3)
    up.push(0.0, b"u" * 1000)
    down.push(0.0, b"d" * 1000)
    assert up.pop_due(1.0)[-1].deliver_at == pytest.approx(0.1 + 0.03)
    assert down.pop_due(1.0)[-1].deliver_at == pytest.approx(0.01 + 0.03)


@pytest.mark.parametrize(
    ("link", "reason"),
    [
        (_link(loss=1.0), "packet loss (1 %) cannot be emulated by the delay line"),
        (_link(emulation="netem"), "link emulation 'netem' is not the delay line"),
        (_link(delay_ms=-1), "link delay_ms = -1"),
        (_link(jitter_ms=float("nan")), "link jitter_ms = nan"),
        (_link(up=0.0), "link rate_kbit up = 0.0 is not a rate > 0"),
    ],
)
def test_what_the_delay_line_cannot_emulate_is_refused_with_the_reason(link: Link, reason: str) -> None:
    with pytest.raises(LinkError, match=r"^" + reason.replace("(", r"\(").replace(")", r"\)")):
        check_link(link)
    with pytest.raises(LinkError):
        delay_lines(link, seed=0)


def test_timeouts_stretch_with_the_link_and_the_message() -> None:
    """A 1 MiB message over a 300 ms, 50 kbit/s link takes minutes: every wait covers it."""
    link = _link(delay_ms=300, up=50, down=50)
    sizes = [18, 1024 * 1024]
    serialization = 8 * 1024 * 1024 / 50_000  # 168 s
    peer = peer_over_link(SessionPeer("127.0.0.1", 1, b"t"), link, sizes)
    assert peer.reply_timeout >= SessionPeer.reply_timeout + serialization + 0.6
    assert peer.connect_timeout >= SessionPeer.connect_timeout + 2 * 8 * MAX_CONTROL_FRAME / 50_000
    limits = limits_over_link(ReceiverLimits(), link)
    assert limits.min_rate == pytest.approx(50_000 / 8 / 2)
    # The receiver's deadline for the largest body covers its serialization twice over.
    assert frame_deadline(largest_frame(sizes), limits.idle_timeout, limits.min_rate) > 2 * 2 * serialization
    assert limits.hello_timeout > ReceiverLimits().hello_timeout + 2 * exchange_seconds(link, 0, 0)
    fast = limits_over_link(ReceiverLimits(), _link(delay_ms=1))
    assert fast.min_rate == ReceiverLimits().min_rate  # an unlimited link asks nothing slower than loopback


def test_a_lossy_link_waits_out_tcp_s_retransmissions() -> None:
    """At 20 % loss a ClientHello lost three times after a lost SYN arrives 21 s later (3, 6
    and 12 s): every wait covers TCP's retransmission timers, and a lossless link adds none."""
    lossless, lossy = _link(delay_ms=2.8), _link(delay_ms=2.8, loss=20.0)
    assert loss_seconds(lossless) == 0
    assert loss_seconds(lossy) >= 3 + 6 + 12
    assert loss_seconds(_link(delay_ms=2.8, loss=1.0)) < loss_seconds(lossy)
    peer, base = peer_over_link(SessionPeer("127.0.0.1", 1, b"t"), lossy, [32]), SessionPeer("127.0.0.1", 1, b"t")
    assert peer.connect_timeout >= base.connect_timeout + loss_seconds(lossy)
    assert limits_over_link(ReceiverLimits(), lossy).hello_timeout >= ReceiverLimits().hello_timeout + loss_seconds(
        lossy
    )

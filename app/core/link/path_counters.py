"""The packet link's counters, shared with the supervisor, and what they say over a size.

The link process writes cumulative counters into an array of doubles in shared memory
(one writer); the supervisor reads it when the sender starts a message size and when it
reports the size measured, and the difference is the path over that size: packets,
bytes and drops per direction, the emulator's CPU time, and a histogram of how late it
released packets (`LinkPath`). Reading at those two moments needs no message from the
link, so the link never has to know where a size begins.

A slot may be read while it is being written; a double is written whole on the machines
Python runs on, and a count read one packet early is within what a size's edges mean.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol

from app.core.link.packet_line import LineCounters
from app.core.records.link_path import LATE_LIMIT_S, LinkPath, PathDirection

_FIELDS = ("packets_in", "bytes_in", "packets_out", "bytes_out", "dropped_queue", "dropped_loss")
UP, DOWN = 0, len(_FIELDS)
#: Packets released, the worst lateness since the supervisor last reset it, CPU seconds.
RELEASED = 2 * len(_FIELDS)
LATE_MAX = RELEASED + 1
CPU = RELEASED + 2
#: Packets read later than the limit (see `record_read`), and the longest such wait since
#: the supervisor last reset it.
READ_LATE = RELEASED + 3
READ_LATE_MAX = RELEASED + 4
#: The lateness histogram: bucket k counts releases at most 2^(k/8) us late (k = 0..127,
#: 1 us to 60 ms, each edge 9 % above the last); the last bucket, anything later.
HISTOGRAM = RELEASED + 5
BUCKETS = 129
SLOTS = HISTOGRAM + BUCKETS


class Counters(Protocol):
    """The shared array (multiprocessing's RawArray of doubles) or any list standing in."""

    def __getitem__(self, index: int) -> float: ...

    def __setitem__(self, index: int, value: float) -> None: ...

    def __len__(self) -> int: ...


def bucket_of(late_s: float) -> int:
    """The histogram bucket of a lateness in seconds."""
    micros = late_s * 1e6
    if micros <= 1.0:
        return 0
    return min(BUCKETS - 1, math.ceil(8 * math.log2(micros)))


def bucket_edge_s(bucket: int) -> float:
    """The upper edge of a bucket in seconds (the last bucket has none: its lower edge)."""
    return 2 ** (min(bucket, BUCKETS - 2) / 8) / 1e6


def write_lines(counters: Counters, up: LineCounters, down: LineCounters) -> None:
    """Copy both directions' counts into the shared array."""
    for base, line in ((UP, up), (DOWN, down)):
        for offset, name in enumerate(_FIELDS):
            counters[base + offset] = getattr(line, name)


def record_release(counters: Counters, late_s: float) -> None:
    counters[RELEASED] += 1
    counters[HISTOGRAM + bucket_of(late_s)] += 1
    if late_s > counters[LATE_MAX]:
        counters[LATE_MAX] = late_s


def record_read(counters: Counters, waited_s: float) -> None:
    """A packet read `waited_s` after the line could have started sending it (see
    `PacketForwarder.drain`); only waits beyond the limit are counted."""
    if waited_s > LATE_LIMIT_S:
        counters[READ_LATE] += 1
    if waited_s > counters[READ_LATE_MAX]:
        counters[READ_LATE_MAX] = waited_s


def snapshot(counters: Counters) -> tuple[float, ...]:
    return tuple(counters[i] for i in range(SLOTS))


def _percentile(histogram: Sequence[float], fraction: float) -> float | None:
    total = sum(histogram)
    if total <= 0:
        return None
    rank, seen = fraction * total, 0.0
    for bucket, count in enumerate(histogram):
        seen += count
        if seen >= rank:
            return bucket_edge_s(bucket)
    return bucket_edge_s(len(histogram) - 1)


def path_over(
    before: Sequence[float],
    after: Sequence[float],
    *,
    late_max_s: float,
    congestion_control: str | None,
    slow_start_after_idle: bool | None,
    realtime: bool,
    queue: tuple[int, int] | None = None,
    read_late_max_s: float = 0.0,
    device_dropped: int | None = None,
    late_limit_s: float | None = None,
    late_samples: int | None = None,
) -> LinkPath:
    """The path between two snapshots (`late_max_s`: the worst lateness the link recorded
    since the supervisor reset it at the size's start)."""
    delta = [a - b for a, b in zip(after, before)]

    def direction(base: int) -> PathDirection:
        return PathDirection(*(int(delta[base + offset]) for offset in range(len(_FIELDS))))

    histogram = delta[HISTOGRAM : HISTOGRAM + BUCKETS]
    released = delta[RELEASED] > 0

    def percentile(fraction: float) -> float | None:
        # A bucket's upper edge may pass the worst lateness seen in it: never report beyond that.
        edge = _percentile(histogram, fraction)
        return None if edge is None else min(edge, late_max_s) if released and late_max_s > 0 else edge

    return LinkPath(
        up=direction(UP),
        down=direction(DOWN),
        late_p50_s=percentile(0.5),
        late_p99_s=percentile(0.99),
        late_max_s=late_max_s if released else None,
        emulator_cpu_s=max(0.0, delta[CPU]),
        congestion_control=congestion_control,
        slow_start_after_idle=slow_start_after_idle,
        realtime=realtime,
        queue_packets=None if queue is None else queue[0],
        queue_bytes=None if queue is None else queue[1],
        read_late_packets=int(delta[READ_LATE]),
        read_late_max_s=read_late_max_s,
        device_dropped=device_dropped,
        late_limit_s=late_limit_s,
        late_samples=late_samples,
    )

"""One direction of an emulated link, as arithmetic: when each byte leaves the far end.

A byte stream read from the source at time `t_arrive` is cut into segments; each is
serialized at the direction's rate on a line that carries one segment at a time,

    tx_start = max(t_arrive, line_free_at)      line_free_at = tx_start + 8 * n / rate

and delivered whole once its last bit has crossed the one-way delay:

    deliver_at = max(tx_end + delay + jitter, previous deliver_at)

with jitter drawn uniformly in [-jitter, +jitter] per segment from the job's seeded
generator (the delay plus jitter never below zero). Delivery times never decrease, so a
byte stream is never reordered; the price, as with netem's jitter on a rate-limited
queue, is that back-to-back segments under heavy jitter lean towards the late end.
A whole message of F bytes arriving at t0 on an idle line is thus delivered at
t0 + 8F / rate + delay: the model benchmarks/bench_link.py checks.

Segments are MSS-sized where the rate is low (a large message arrives progressively,
a packet at a time, as on a real link) and up to `MAX_SEGMENT_BYTES` where one MSS
would take far less than a millisecond to serialize: the same arrival time for a
message's last byte (the line never idles between its segments), and a tenth of the
wake-ups (a 1 MiB message at 100 Mbit/s kept the link at 43 % of a core with MSS
segments: benchmarks/README.md, "Emulated link fidelity").

Nothing here touches a socket or a clock: the caller passes `now` (app.core.link.relay
uses time.monotonic), so the tests run it on a fake clock.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass

#: The payload of one Ethernet frame's TCP segment (1500 - 20 IP - 20 TCP - 12 options):
#: the unit a low-rate link delivers at a time.
MSS_BYTES = 1448
#: The largest segment: where one MSS serializes in well under `SEGMENT_SECONDS`, a
#: segment holds `SEGMENT_SECONDS` of line time, up to this (16 KiB at 1 Gbit/s is 131 us).
MAX_SEGMENT_BYTES = 16 * 1024
#: Line time one segment aims at on a fast link (12.5 kB at 100 Mbit/s): a message still
#: arrives in pieces, and the link wakes at most about once a millisecond for it.
SEGMENT_SECONDS = 0.001


def segment_bytes(rate_bps: float | None) -> int:
    """How many bytes one segment carries on a line of `rate_bps` bits/s (None: unlimited)."""
    if rate_bps is None:
        return MAX_SEGMENT_BYTES
    return max(MSS_BYTES, min(MAX_SEGMENT_BYTES, int(rate_bps / 8 * SEGMENT_SECONDS)))


@dataclass(frozen=True, slots=True)
class Segment:
    """Bytes (empty: the source's end of stream) and when they reach the far end."""

    data: bytes
    tx_start: float
    tx_end: float
    deliver_at: float


class DelayLine:
    """One direction: serialization at `rate_bps`, then `delay_s` plus uniform jitter.

    Args:
        delay_s: one-way delay in seconds (>= 0).
        jitter_s: half-width of the uniform jitter in seconds (>= 0).
        rate_bps: bits per second, or None for a line with no rate limit.
        rng: the direction's generator (seeded per job, so a job's jitter repeats).
    """

    def __init__(self, delay_s: float, jitter_s: float, rate_bps: float | None, rng: random.Random) -> None:
        if delay_s < 0 or jitter_s < 0:
            raise ValueError(f"delay {delay_s} s and jitter {jitter_s} s must not be negative")
        if rate_bps is not None and rate_bps <= 0:
            raise ValueError(f"rate {rate_bps} bit/s must be positive")
        self.delay_s, self.jitter_s, self.rate_bps, self.rng = delay_s, jitter_s, rate_bps, rng
        self.segment_bytes = segment_bytes(rate_bps)
        self.line_free_at = float("-inf")
        self.last_delivery = float("-inf")
        self.queue: deque[Segment] = deque()
        self.bytes_in = 0
        self.closed = False

    def push(self, now: float, data: bytes) -> int:
        """Bytes read from the source at `now`: cut into segments and scheduled. Returns
        how many segments (a line shared by several connections tags each with its owner)."""
        if self.closed:
            raise ValueError("bytes pushed after the end of the stream")
        size = self.segment_bytes
        segments = 0
        for start in range(0, len(data), size):
            self._schedule(now, data[start : start + size] if len(data) > size else data)
            segments += 1
        self.bytes_in += len(data)
        return segments

    def push_end(self, now: float) -> None:
        """One of several streams sharing this line ended at `now`: its end travels behind
        its last byte, and the line stays open for the others (`close` ends the line)."""
        if self.closed:
            raise ValueError("a stream's end pushed after the end of the line")
        self._schedule(now, b"")

    def close(self, now: float) -> None:
        """The source ended its stream at `now`: the end travels behind the last byte."""
        if not self.closed:
            self._schedule(now, b"")
            self.closed = True

    def _schedule(self, now: float, data: bytes) -> None:
        tx_start = max(now, self.line_free_at)
        tx_end = tx_start + (8 * len(data) / self.rate_bps if self.rate_bps is not None else 0.0)
        self.line_free_at = tx_end
        flight = self.delay_s
        if self.jitter_s > 0:
            flight = max(0.0, flight + self.rng.uniform(-self.jitter_s, self.jitter_s))
        deliver_at = max(tx_end + flight, self.last_delivery)
        self.last_delivery = deliver_at
        self.queue.append(Segment(data, tx_start, tx_end, deliver_at))

    def backlog_bytes(self, now: float) -> float:
        """Bytes accepted but not yet serialized at `now` (the bottleneck's queue)."""
        if self.rate_bps is None or self.line_free_at <= now:
            return 0.0
        return (self.line_free_at - now) * self.rate_bps / 8

    def backlog_below(self, limit_bytes: float) -> float:
        """The time from which the backlog is below `limit_bytes` (-inf: it already is,
        whenever the line has no rate)."""
        if self.rate_bps is None:
            return float("-inf")
        return self.line_free_at - limit_bytes * 8 / self.rate_bps

    def next_due(self) -> float | None:
        """When the oldest segment still in the line reaches the far end (None: empty)."""
        return self.queue[0].deliver_at if self.queue else None

    def pop_due(self, now: float) -> list[Segment]:
        """The segments that have reached the far end by `now`, oldest first."""
        due: list[Segment] = []
        queue = self.queue
        while queue and queue[0].deliver_at <= now:
            segment = queue.popleft()
            due.append(segment)
        return due

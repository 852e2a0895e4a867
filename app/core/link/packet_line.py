"""One direction of a packet link, as arithmetic: which IP packets leave the far end, and when.

Each packet read from the near end's TUN device at `now` goes through, in order:

1. a bounded drop-tail queue: a packet that finds `queue_packets` packets, or
   `queue_bytes` bytes, waiting for the line is dropped (cause "queue");
2. serialization at the rate, one packet at a time, every byte of the IP packet
   (headers included: a real line carries them):
       tx_start = max(now, line_free_at)     line_free_at = tx_start + 8 * len / rate
3. the one-way delay plus uniform jitter; delivery times never decrease (no
   reordering), as on a single path:
       deliver_at = max(tx_end + delay + jitter, previous deliver_at)
4. loss on the way (cause "loss"): independent (each packet lost with probability p) or
   bursty (Gilbert-Elliott: a good and a bad state, each packet first moves the state,
   then is lost with the state's probability). A lost packet used its line time.

A packet of F bytes on an idle line thus arrives at now + 8F / rate + delay: the model
benchmarks/bench_packet_link.py checks the emulator against. Nothing here touches a
device or a clock: the caller passes `now`, so the tests run it on a fake clock.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field

#: The queue a line holds by default: 1,000 packets (Linux's default txqueuelen) and at
#: most 1.5 MB, whichever is reached first.
DEFAULT_QUEUE_PACKETS = 1000
DEFAULT_QUEUE_BYTES = 1_500_000


@dataclass(frozen=True)
class GilbertElliott:
    """Bursty loss: `p` the chance a packet finds the good state turned bad, `r` the chance
    the bad state turns good; a packet is lost with `loss_good` in the good state and
    `loss_bad` in the bad one. The long-run loss rate is
    (r * loss_good + p * loss_bad) / (p + r)."""

    p: float
    r: float
    loss_good: float = 0.0
    loss_bad: float = 1.0

    @property
    def mean_loss(self) -> float:
        return (self.r * self.loss_good + self.p * self.loss_bad) / (self.p + self.r) if self.p + self.r else 0.0


@dataclass
class LossModel:
    """Which packets a direction loses: independent with `probability`, or bursty."""

    probability: float = 0.0
    bursty: GilbertElliott | None = None
    _bad: bool = field(default=False, repr=False)

    def lost(self, rng: random.Random) -> bool:
        if self.bursty is not None:
            model = self.bursty
            self._bad = (rng.random() >= model.r) if self._bad else (rng.random() < model.p)
            return rng.random() < (model.loss_bad if self._bad else model.loss_good)
        return self.probability > 0 and rng.random() < self.probability


@dataclass(frozen=True, slots=True)
class Packet:
    """An IP packet and when its last bit reaches the far end."""

    data: bytes
    deliver_at: float


@dataclass
class LineCounters:
    """What a direction did: packets and bytes in (read from the near end) and out
    (delivered to the far end), and packets dropped by cause."""

    packets_in: int = 0
    bytes_in: int = 0
    packets_out: int = 0
    bytes_out: int = 0
    dropped_queue: int = 0
    dropped_loss: int = 0


class PacketLine:
    """One direction: drop-tail queue, serialization at `rate_bps`, delay plus jitter, loss.

    Args:
        delay_s: one-way delay in seconds (>= 0).
        jitter_s: half-width of the uniform jitter in seconds (>= 0).
        rate_bps: bits per second, or None for a line with no rate limit (no queue forms).
        loss: which packets are lost on the way.
        rng: the direction's generator (seeded per job, so a job's jitter and losses repeat).
    """

    def __init__(
        self,
        delay_s: float,
        jitter_s: float,
        rate_bps: float | None,
        loss: LossModel,
        rng: random.Random,
        queue_packets: int = DEFAULT_QUEUE_PACKETS,
        queue_bytes: int = DEFAULT_QUEUE_BYTES,
    ) -> None:
        if delay_s < 0 or jitter_s < 0:
            raise ValueError(f"delay {delay_s} s and jitter {jitter_s} s must not be negative")
        if rate_bps is not None and rate_bps <= 0:
            raise ValueError(f"rate {rate_bps} bit/s must be positive")
        if queue_packets < 1 or queue_bytes < 1:
            raise ValueError(f"a queue of {queue_packets} packets and {queue_bytes} bytes holds nothing")
        self.delay_s, self.jitter_s, self.rate_bps = delay_s, jitter_s, rate_bps
        self.loss, self.rng = loss, rng
        self.queue_packets, self.queue_bytes = queue_packets, queue_bytes
        self.line_free_at = float("-inf")
        self.last_delivery = float("-inf")
        self.counters = LineCounters()
        #: (tx_start, size) of the packets accepted but not yet on the line: the queue.
        self._waiting: deque[tuple[float, int]] = deque()
        self._waiting_bytes = 0
        self._flight: deque[Packet] = deque()

    def push(self, now: float, data: bytes) -> str | None:
        """A packet read at `now`; None when it is on its way, else why it was dropped
        ("queue": the queue was full; "loss": lost on the way after its line time)."""
        counters = self.counters
        counters.packets_in += 1
        counters.bytes_in += len(data)
        waiting = self._waiting
        while waiting and waiting[0][0] <= now:  # these have started onto the line
            self._waiting_bytes -= waiting.popleft()[1]
        if len(waiting) >= self.queue_packets or self._waiting_bytes + len(data) > self.queue_bytes:
            counters.dropped_queue += 1
            return "queue"
        tx_start = max(now, self.line_free_at)
        tx_end = tx_start + (8 * len(data) / self.rate_bps if self.rate_bps is not None else 0.0)
        self.line_free_at = tx_end
        if tx_start > now:
            waiting.append((tx_start, len(data)))
            self._waiting_bytes += len(data)
        if self.loss.lost(self.rng):
            counters.dropped_loss += 1
            return "loss"
        flight = self.delay_s
        if self.jitter_s > 0:
            flight = max(0.0, flight + self.rng.uniform(-self.jitter_s, self.jitter_s))
        deliver_at = max(tx_end + flight, self.last_delivery)
        self.last_delivery = deliver_at
        self._flight.append(Packet(data, deliver_at))
        return None

    def next_due(self) -> float | None:
        """When the oldest packet in flight reaches the far end (None: none in flight)."""
        return self._flight[0].deliver_at if self._flight else None

    def pop_due(self, now: float) -> list[Packet]:
        """The packets that have reached the far end by `now`, oldest first."""
        due: list[Packet] = []
        flight = self._flight
        while flight and flight[0].deliver_at <= now:
            packet = flight.popleft()
            self.counters.packets_out += 1
            self.counters.bytes_out += len(packet.data)
            due.append(packet)
        return due

"""How long a run will take, from what each of its jobs will do: before it starts (the
Presets menu, the question before a long run, the CLI's first line) and while it runs
(the status bar's time left).

Each result a job gives (one per message size) is priced from its own work, never from
a past run of another size:

- operations: the harness's rounds (app.core.measure.ops): warm-up plus samples, each a
  calibrated batch of about BATCH_TARGET_NS of calls (one call when an operation is
  slower than BATCH_THRESHOLD_NS) plus the untimed call before it and the validation of
  every output (an encrypt is checked by a decrypt); key generations, the key
  agreement's exchanges, the tamper tries and the memory pass; the operations' costs
  from app.core.run.op_costs (catalogued here, scaled by this machine's speed probe);
- loopback and remote sessions (app.core.session.sender): the handshake rounds, the
  floor ping-pong and the messages, each a round trip over the job's link (both delays,
  the message serialized at the rate: app.core.settings.links.round_trip_ms) plus the
  sealing and opening at both ends, and the pauses between samples;
- load: per size, the pools of requests, the sweep's closed-loop estimate, and each step's
  warm-up, window and drain (a sweep stops past the knee or when its generator falls
  behind: from 2 to all 10 steps).

Each job also pays a fixed start-up (child processes spawned, libraries imported, a
link set up), measured on this machine (benchmarks/bench_estimates.py). CPU work is
multiplied by the slowdown other programs cause now (op_costs.cpu_slowdown, measured
once before the run); waiting (a link's delays, pauses, load steps) is not. The result
is a range: the central figure and the low and high ends around it, wider where less is
known (a scheme this process had to probe, a sweep whose steps depend on its knee).

While a run goes, `Refined` scales the remaining jobs' estimates by what the finished
ones took against their own estimates: a run of very different jobs (a 64-byte AES job
beside a pure-Python RSA one) is not assumed to go on at its average pace so far.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from app.core.contracts.plan import SessionPeer
from app.core.load import sweep
from app.core.load.generator import (
    CALIBRATION_BUDGET_S,
    CALIBRATION_REQUESTS,
    MIN_DRAIN_S,
    POOL_BUDGET_S,
    POOL_MAX,
    POOL_MIN,
)
from app.core.measure.ops import BATCH_BYTES
from app.core.measure.timing import BATCH_TARGET_NS, BATCH_THRESHOLD_NS, SLOW_CALL_NS
from app.core.records.job_conditions import Link
from app.core.run.op_costs import Line, OpCosts, costs_for, cpu_slowdown
from app.core.schemes.base import KEYGEN_ON_SENDER, NO_KEYGEN, OPEN_METRIC, SEAL_METRIC
from app.core.session.receiver import ReceiverLimits
from app.core.session.sender import FLOOR_MAX_SAMPLES, HANDSHAKE_WARMUP_MAX
from app.core.settings.links import SEGMENT_BYTES, round_trip_ms
from app.core.settings.profile import ResolvedJob
from app.core.vocab import KEY_ESTABLISHING, LEGACY_EXCHANGE, Exchange, Family, LinkEmulation, Mode, TcpConnection

#: A run expected to take longer than this (its estimate's upper end) asks before it starts.
LONG_RUN_S = 5 * 60.0

# Fixed costs measured on this machine (benchmarks/bench_estimates.py, 2026-11-26, reduced
# runs at a load of about 7 on 2 CPUs, divided by the slowdown that load makes): what a job
# pays besides its operations, on an idle machine.
#: An operations job: its child process spawned and its libraries imported.
OPERATIONS_START_S = 0.025
#: A session: receiver and sender processes, the connection and its token handshake.
SESSION_START_S = 0.04
#: A session over an emulated link: the relay or the packet path's namespaces set up.
LINK_START_S = 0.3
#: A load job: the server's workers and the generator started, the clients connected.
LOAD_START_S = 0.2
#: The run itself: the pre-flight check, the store, the report of the environment.
RUN_START_S = 0.25
#: Each message size: its plaintext, handshake and summary (statistics over the samples).
PER_SIZE_S = 0.01
#: What the harness adds to each timed call: making its input, keeping and checking its
#: output (a few Python calls), beyond the operation itself.
PER_CALL_S = 1.5e-6
#: Bytes the harness handles besides the operation's own: a message's random plaintext
#: made once a size, and per call the payload joined, copied and compared when checked.
PLAINTEXT_S_PER_BYTE = 2e-9
COPY_S_PER_BYTE = 1e-9
#: Per round of a metric: the recorder, the progress message, the untimed warm call's loop.
PER_ROUND_S = 30e-6
#: A session's exchanges before its first handshake round: the token proofs each way
#: (HELLO/CHALLENGE, PROOF/WELCOME) and the job (JOB/JOB_OK). On loopback their cost is
#: in SESSION_START_S; over a link each is a round trip, and a lossy one may retransmit.
OPENING_EXCHANGES = 3
#: One exchange on plain loopback: two frames through the kernel, both ends in Python.
LOOPBACK_EXCHANGE_S = 150e-6
#: tracemalloc slows every allocation down: the memory pass's one call costs this many.
TRACED_FACTOR = 1.5

#: Below this share of its samples, a job's own progress says little about its end.
MIN_FRACTION = 0.05

#: The range around the central figure: what the actual runs here spread over (0.47 to
#: 1.93 of it, benchmarks/README.md: the machine's other work comes and goes during a run,
#: its slowdown is read once before); a scheme probed in this process rests on one call of
#: each operation.
LOW, HIGH = 0.55, 2.0
PROBED_LOW, PROBED_HIGH = 0.4, 2.5


@dataclass(frozen=True)
class JobEstimate:
    """One result's estimated seconds (a job's first size carries its start-up)."""

    label: str
    seconds: float
    low: float
    high: float
    known: bool = True  # False: the scheme's costs could not be found or probed here


@dataclass(frozen=True)
class RunEstimate:
    jobs: tuple[JobEstimate, ...]
    start_s: float = RUN_START_S
    #: How much longer CPU work took here when estimated, for the machine's other work.
    slowdown: float = 1.0

    @property
    def seconds(self) -> float:
        return self.start_s + sum(job.seconds for job in self.jobs)

    @property
    def low(self) -> float:
        return self.start_s + sum(job.low for job in self.jobs)

    @property
    def high(self) -> float:
        return self.start_s + sum(job.high for job in self.jobs)

    @property
    def unknown(self) -> int:
        return sum(1 for job in self.jobs if not job.known)

    @property
    def long(self) -> bool:
        """Whether the run should ask first: its upper end passes LONG_RUN_S."""
        return self.high > LONG_RUN_S

    def busy_note(self) -> str:
        """What the machine's other work adds, said where it matters (1.5x and more)."""
        if self.slowdown < 1.5:
            return ""
        return f"other programs are using the CPUs: work runs about {self.slowdown:.0f}× slower than on an idle machine"

    def text(self) -> str:
        """ "about 40 s", "12–15 min", with the jobs that could not be priced named."""
        said = range_text(self.low, self.high)
        if self.unknown:
            said += f" (+ {self.unknown} job{'s' if self.unknown != 1 else ''} not estimated)"
        return said


def duration_text(seconds: float) -> str:
    """ "9 s", "12 min", "1.5 h": as a range's ends are written."""
    if seconds < 60:
        return f"{max(1, round(seconds))} s"
    if seconds < 3600:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


def range_text(low: float, high: float) -> str:
    """A range as a user reads it: "under 1 s", "about 9 s", "4–9 s", "12–15 min", "1.2–2.0 h"."""
    if high < 1:
        return "under 1 s"
    if high < 60:
        a, b = max(1, round(low)), round(high)
        return f"about {b} s" if b - a <= max(1, b // 5) else f"{a}–{b} s"
    if high < 3600:
        a_min, b_min = max(1, round(low / 60)), max(1, round(high / 60))
        if low < 60:
            return f"{max(1, round(low))} s–{b_min} min"
        return f"about {b_min} min" if a_min == b_min else f"{a_min}–{b_min} min"
    if low < 3600:
        return f"{max(1, round(low / 60))} min–{high / 3600:.1f} h"
    return f"{low / 3600:.1f}–{high / 3600:.1f} h"


# --- operations ---------------------------------------------------------------------


@dataclass
class _Time:
    """A result's time in two parts: `cpu`, work a busy machine slows down (operations,
    the harness, processes starting), and `wait`, time a clock or a link sets (pauses,
    a link's delays and rates, a load step's window), which it does not."""

    cpu: float = 0.0
    wait: float = 0.0

    def seconds(self, slowdown: float) -> float:
        return self.cpu * slowdown + self.wait


def _count(op_s: float, output_bytes: int = 0) -> int:
    """Calls per sample, as app.core.measure.timing.calibrate and ops._measure choose them."""
    if op_s * 1e9 >= BATCH_THRESHOLD_NS:
        return 1
    count = max(1, int(BATCH_TARGET_NS / max(op_s * 1e9, 1.0)))
    if output_bytes:
        count = max(1, min(count, BATCH_BYTES // max(output_bytes, 1)))
    return min(count, 20_000)


def _metric_s(rounds: int, op_s: float, other_s: float, output_bytes: int = 0) -> float:
    """One metric's rounds (CPU time): the calibration, then each round's batch of timed
    calls, their inputs made and outputs checked (`other_s` a call), and the untimed call
    before a fast batch."""
    count = _count(op_s, output_bytes)
    warm = op_s if op_s * 1e9 < SLOW_CALL_NS else 0.0
    per_round = count * (op_s + other_s + PER_CALL_S) + warm + PER_ROUND_S
    # calibrate(): one probe call, a second for a middling one, a quarter-batch for a fast one.
    if count > 1:
        calibration = 2 * op_s + count * op_s / 4
    else:
        calibration = op_s if op_s * 1e9 >= 50 * BATCH_THRESHOLD_NS else 2 * op_s
    return calibration + rounds * per_round


def _operations(job: ResolvedJob, costs: OpCosts) -> list[_Time]:
    family, pause = costs.family, job.pause_ms / 1000
    rounds = job.warmup + job.samples
    first = _Time(OPERATIONS_START_S)
    if family not in NO_KEYGEN:
        warmup = min(job.warmup, 2) - (0 if family in KEYGEN_ON_SENDER or not job.warmup else 1)
        # The working key pair, the timed rounds, and the memory pass's one more (a key
        # generation allocates in C, which tracemalloc does not slow down).
        first.cpu += costs.keygen * 2 + _metric_s(warmup + job.keygen_samples, costs.keygen, 0.0)
        first.wait += (warmup + job.keygen_samples) * pause
    if family in KEY_ESTABLISHING:  # one key establishment at each end, timed apart
        establish = costs.exchange or sum(costs.extras.values()) / 2
        first.cpu += 2 * _metric_s(rounds, establish, establish)
        first.wait += 2 * rounds * pause
    out = []
    for k, size in enumerate(job.message_sizes):
        ops = {name: line.at(size) for name, line in costs.messages.items()}
        both = sum(ops.values())
        time = _Time(first.cpu, first.wait) if k == 0 else _Time()
        time.cpu += PER_SIZE_S + costs.exchange * 2 + both  # the size's own handshake and sample payload
        time.cpu += size * PLAINTEXT_S_PER_BYTE
        copies = size * COPY_S_PER_BYTE
        for op in ops.values():
            # An encrypt is checked by a decrypt, a decrypt's input made by an encrypt; a
            # hash or a derivation is checked by computing it again.
            other = (both - op if len(ops) > 1 else op) + copies
            time.cpu += _metric_s(rounds, op, other, max(size, 1))
        time.cpu += sum(_metric_s(rounds, op, op) for op in costs.extras.values())
        # The tamper tries (a payload sealed, a bit flipped in a copy, opened); the memory pass.
        time.cpu += job.tamper * (both + 2 * copies) + TRACED_FACTOR * both
        time.wait += (len(ops) + len(costs.extras)) * rounds * pause
        out.append(time)
    return out


# --- sessions -----------------------------------------------------------------------


# Linux's retransmission timer (include/net/tcp.h, net/ipv4/tcp_timer.c): a segment not
# acknowledged within the RTO is sent again and the RTO doubles, up to TCP_RTO_MAX; after
# tcp_retries2 such timeouts the connection is given up. The RTO of an established
# connection is its smoothed round trip plus at least TCP_RTO_MIN; a SYN's starts at 1 s.
RTO_MIN_S = 0.2
RTO_MAX_S = 120.0
SYN_RTO_S = 1.0
RETRIES = 15
#: A lost segment followed by this many more is repaired by fast retransmit (three
#: duplicate acknowledgements) in about a round trip, not by the timer.
DUPACKS = 3
#: The longest a receiver waits for its sender's next frame (app.core.session.receiver):
#: an exchange whose retransmissions take longer ends the job there, failed.
GIVE_UP_S = ReceiverLimits().idle_timeout
#: The longest a connection's SYN is retried before the job gives it up (SessionPeer's
#: connect timeout): a SYN retransmitted after 1, 3 and 7 s is not tried again at 15 s.
CONNECT_GIVE_UP_S = SessionPeer.connect_timeout


@dataclass(frozen=True)
class Retransmissions:
    """What loss adds to one exchange: `wait_s`, the expected wait on the retransmission
    timer of an exchange that gets through, weighted by its chance; `ends`, the chance it
    never does (TCP, or the receiver's wait, gives up after `end_s` and the job ends)."""

    wait_s: float = 0.0
    ends: float = 0.0
    end_s: float = 0.0


def timeouts(rto_s: float, failed: float, give_up_s: float = GIVE_UP_S, retries: int = RETRIES) -> Retransmissions:
    """An exchange each try of which fails with probability `failed`: try i comes after the
    timeouts before it, each twice the last (up to RTO_MAX_S), until TCP's `retries` or the
    receiver's `give_up_s` end it. At 50 % loss a 1 KiB exchange (its segment and the
    reply's: 3 tries in 4 fail) waits 4.4 s on average when it gets through, and 1 in 24
    waits out the receiver's 300 s: a job of 45 such exchanges ends failed, after about 7
    minutes (measured: 416 s)."""
    expected, waited, timeout, reach = 0.0, 0.0, rto_s, 1.0
    for _ in range(retries):
        expected += reach * (1 - failed) * waited  # this try went through
        reach *= failed
        waited += timeout
        timeout = min(2 * timeout, RTO_MAX_S)
        if waited >= give_up_s:
            break
    return Retransmissions(expected, reach, min(waited, give_up_s))


def retransmissions(link: Link | None, up_bytes: int, down_bytes: int) -> Retransmissions:
    """What loss on `link` adds to an exchange of `up_bytes` answered by `down_bytes` on the
    packet path: segments lost early in a message or its reply are fast-retransmitted (a
    round trip each); a loss among the last `DUPACKS` segments of either waits for the
    timer, which backs off as TCP's does. (The long-run loss stands for a bursty model's: its
    bursts make consecutive losses likelier, so this is its lower end.)"""
    if link is None or link.loss_percent <= 0 or link.emulation != LinkEmulation.PACKET:
        return Retransmissions()
    p = link.loss_percent / 100
    round_trip = round_trip_ms(link, up_bytes, down_bytes) / 1000
    up = max(1, -(-up_bytes // SEGMENT_BYTES))
    down = max(1, -(-down_bytes // SEGMENT_BYTES))
    fast = (up - min(up, DUPACKS) + down - min(down, DUPACKS)) * p * round_trip
    timer = timeouts(round_trip + RTO_MIN_S, 1 - (1 - p) ** (min(up, DUPACKS) + min(down, DUPACKS)))
    return Retransmissions(fast * (1 - timer.ends) + timer.wait_s, timer.ends, timer.end_s)


def connect_retransmissions(link: Link | None) -> Retransmissions:
    """What loss adds to opening a connection (a SYN and its SYN-ACK), which the job gives
    up after its connect timeout (`CONNECT_GIVE_UP_S`): at 30 % loss, 1 connection in 15."""
    if link is None or link.loss_percent <= 0 or link.emulation != LinkEmulation.PACKET:
        return Retransmissions()
    return timeouts(SYN_RTO_S, 1 - (1 - link.loss_percent / 100) ** 2, CONNECT_GIVE_UP_S)


def exchange_s(link: Link | None, up_bytes: int, down_bytes: int = 64) -> _Time:
    """One exchange of `up_bytes` answered by `down_bytes`: both ends' work on plain
    loopback, and over an emulated link its round trip in the model (delays,
    serialization at its rates); what loss adds is `retransmissions`."""
    cpu = LOOPBACK_EXCHANGE_S + (up_bytes + down_bytes) / 2e9  # frames, copies at ~2 GB/s
    if link is None or link.emulation == "none":
        return _Time(cpu)
    return _Time(cpu, round_trip_ms(link, up_bytes, down_bytes) / 1000)


class _Lossy:
    """A session's exchanges in order over a link that may lose packets: each adds its
    round trip and what retransmissions add, and the chance that one never gets through
    (the job ends there) makes every later one less likely to happen at all."""

    def __init__(self, link: Link | None) -> None:
        self.link = link
        #: The chance the job is still running.
        self.survival = 1.0

    def add(self, time: _Time, count: int, part: _Time, lost: Retransmissions) -> None:
        """`count` exchanges, each `part` and `lost`, into `time`."""
        if count <= 0:
            return
        # The expected number that happen, the first that never gets through included:
        # (1 - (1 - ends)^count) / ends, written to stay exact for the tiniest `ends`.
        stay = math.log1p(-lost.ends) * count if lost.ends < 1 else -math.inf
        runs = -math.expm1(stay) / lost.ends if lost.ends > 0 else float(count)
        time.cpu += self.survival * runs * part.cpu
        time.wait += self.survival * runs * (part.wait + lost.wait_s + lost.ends * lost.end_s)
        self.survival *= math.exp(stay)

    def exchanges(self, time: _Time, count: int, up_bytes: int, down_bytes: int = 64) -> None:
        self.add(
            time, count, exchange_s(self.link, up_bytes, down_bytes), retransmissions(self.link, up_bytes, down_bytes)
        )

    def connections(self, time: _Time, count: int) -> None:
        self.add(time, count, _Time(), connect_retransmissions(self.link))

    def in_turn(self, time: _Time, count: int, cpu: float, steps: Sequence[tuple[float, Retransmissions]]) -> None:
        """`count` times `steps` one after the other (a connection opened, its handshake, its
        data: each a round trip and what loss adds), each needing the one before it to have
        got through: priced in turn, not all the connects first, so that a heavy loss of the
        later steps is not hidden behind the chance that an earlier one ended the job."""
        cost, through = 0.0, 1.0
        for wait, lost in steps:
            cost += through * (wait + lost.wait_s + lost.ends * lost.end_s)
            through *= 1 - lost.ends
        self.add(time, count, _Time(cpu), Retransmissions(cost, 1 - through))


def _add(time: _Time, count: float, part: _Time) -> None:
    time.cpu += count * part.cpu
    time.wait += count * part.wait


def _session(job: ResolvedJob, costs: OpCosts) -> list[_Time]:
    family, pause, link = costs.family, job.pause_ms / 1000, job.link
    lossy = _Lossy(link)
    start = _Time(SESSION_START_S + (LINK_START_S if link is not None and link.emulation != "none" else 0.0))
    if link is not None and link.emulation != "none":
        lossy.connections(start, 1)
        lossy.add(start, OPENING_EXCHANGES, _Time(0.0, exchange_s(link, 256).wait), retransmissions(link, 256, 64))
    handshake = costs.exchange or sum(costs.extras.values()) / 2
    rounds = min(job.warmup, HANDSHAKE_WARMUP_MAX) + job.keygen_samples
    keygen = costs.keygen if family not in NO_KEYGEN else 0.0
    lossy.exchanges(start, 2 * rounds, 1024)
    start.cpu += rounds * (keygen + 2 * handshake)
    fresh = link is not None and link.connection == TcpConnection.FRESH  # a connection a timed exchange
    out = []
    for k, size in enumerate(job.message_sizes):
        both = sum(line.at(size) for line in costs.messages.values())
        payload = size + 64
        time = _Time(start.cpu, start.wait) if k == 0 else _Time()
        time.cpu += PER_SIZE_S * lossy.survival
        lossy.exchanges(time, 2, 64)  # the size's start and end
        floor = job.warmup + min(job.samples, FLOOR_MAX_SAMPLES)
        lossy.exchanges(time, floor, payload, payload)
        if fresh:
            lossy.connections(time, floor)
        lossy.exchanges(time, job.warmup + job.samples + job.tamper, payload)
        if fresh:
            lossy.connections(time, job.warmup + job.samples)
        time.cpu += ((job.warmup + job.samples + job.tamper) * both + TRACED_FACTOR * both) * lossy.survival
        time.wait += (job.warmup + job.samples) * pause * lossy.survival
        out.append(time)
    return out


# --- tls13 --------------------------------------------------------------------------


def _tls_operations(job: ResolvedJob, costs: OpCosts) -> list[_Time]:
    """A tls13 operations job: its chains made, then per size each handshake (both ends)
    with its data, the record layer's two metrics in batches, a handshake per tamper try."""
    rounds = job.warmup + job.samples
    out = []
    for k, size in enumerate(job.message_sizes):
        time = _Time(OPERATIONS_START_S + costs.keygen if k == 0 else 0.0)
        records = sum(line.at(size) for line in costs.messages.values())
        time.cpu += PER_SIZE_S + rounds * (costs.exchange + records) + (4 + job.tamper) * costs.exchange
        for line in costs.messages.values():
            time.cpu += _metric_s(rounds, line.at(size), records, max(size, 1))
        time.wait += 3 * rounds * job.pause_ms / 1000
        out.append(time)
    return out


def _tls_connections(job: ResolvedJob, costs: OpCosts) -> list[_Time]:
    """A tls13 job over TCP: per size a connection per sample and tamper try (and a resumed
    job's first), each its connect, its handshake's flights and the data over the link;
    over a lossy packet path each of them retransmits as a session's exchanges do."""
    link = job.link
    lossy = _Lossy(link)
    up, down = costs.handshake_bytes
    start = _Time(SESSION_START_S + (LINK_START_S if link is not None else 0.0) + 2 * costs.keygen)
    if link is not None and link.emulation != "none":  # the control connection, its token proofs and job
        lossy.connections(start, 1)
        lossy.add(start, OPENING_EXCHANGES, _Time(0.0, exchange_s(link, 256).wait), retransmissions(link, 256, 64))
    out = []
    for k, size in enumerate(job.message_sizes):
        time = _Time(start.cpu, start.wait) if k == 0 else _Time()
        connections = job.warmup + job.samples + job.tamper + (job.params.get("resumption") == "ticket")
        connect, flights, data = (
            exchange_s(link, 64, 64),
            exchange_s(link, up, down),
            exchange_s(link, size + 64, size + 64),
        )
        steps = [
            (connect.wait, connect_retransmissions(link)),  # the TCP handshake
            (flights.wait, retransmissions(link, up, down)),  # the TLS handshake's flights
            (data.wait, retransmissions(link, size + 64, size + 64)),  # the request and the response
        ]
        lossy.in_turn(time, connections, costs.exchange + connect.cpu + flights.cpu + data.cpu, steps)
        lossy.exchanges(time, 3 + job.tamper, 64)  # SIZE, SIZE_END, each TAMPER
        time.wait += (job.warmup + job.samples) * job.pause_ms / 1000 * lossy.survival
        out.append(time)
    return out


# --- load ---------------------------------------------------------------------------


#: The fewest steps a sweep runs: two that did not keep up stop it.
SWEEP_MIN_STEPS = 2


def _load(job: ResolvedJob, costs: OpCosts) -> list[tuple[_Time, _Time, _Time]]:
    """(central, low, high) per size: a sweep's step count depends on where its knee lies."""
    settings = job.load
    assert settings is not None
    request = (costs.exchange or sum(costs.extras.values()) / 2) * 2 + sum(
        line.at(32) for line in costs.messages.values()
    )
    link = exchange_s(job.link, 64)
    out = []
    for k in range(len(job.message_sizes)):
        head = _Time(LOAD_START_S if k == 0 else 0.0)
        # Each client's pool: up to POOL_MAX requests within POOL_BUDGET_S, at least POOL_MIN.
        head.cpu += settings.clients * max(min(POOL_BUDGET_S, POOL_MAX * request), POOL_MIN * request)
        _add(head, job.tamper, link)
        head.cpu += job.tamper * request
        step = settings.warmup_s + settings.duration_s
        drain = max(MIN_DRAIN_S, settings.duration_s) + link.wait
        if settings.sweep:
            head.cpu += min(CALIBRATION_BUDGET_S, CALIBRATION_REQUESTS * (request + link.cpu))
            head.wait += min(CALIBRATION_BUDGET_S, CALIBRATION_REQUESTS * link.wait)
            steps = len(sweep.SWEEP_FRACTIONS)
            # Two steps that did not keep up stop a sweep (sweep.should_stop), so it runs
            # from 2 steps to all of them, as its knee and its generator decide. Here every
            # sweep measured stopped after its first two (18 sweeps, 2026-11-24 and -26, at
            # loads from 3 to 10 on 2 CPUs: the generator fell behind its schedule at once),
            # so the central figure is that; the upper end is a sweep that climbs to the top.
            central = _Time(head.cpu, head.wait + SWEEP_MIN_STEPS * step + link.wait)
            low = _Time(head.cpu, head.wait + SWEEP_MIN_STEPS * step)
            high = _Time(head.cpu, head.wait + steps * (step + link.wait) + 2 * drain)
        else:
            steps = len(settings.rates)
            central = _Time(head.cpu, head.wait + steps * (step + link.wait))
            low = _Time(head.cpu, head.wait + steps * step)
            # A drain waits for late replies only where the server fell behind: the last step's.
            high = _Time(head.cpu, head.wait + steps * (step + link.wait) + drain)
        out.append((central, low, high))
    return out


# --- the run ------------------------------------------------------------------------


def in_pattern(costs: OpCosts, exchange: Exchange | None) -> OpCosts:
    """`costs` as a job of `exchange`'s pattern pays them. The catalogue and the probe time a
    key-establishing scheme in its family's legacy pattern (`op_costs.probe_costs`): a key
    agreement's messages AEAD alone, a hybrid's each with its encapsulation. The other
    pattern moves one key establishment at each end into (or out of) every message."""
    measured = LEGACY_EXCHANGE.get(costs.family)
    if exchange is None or measured is None or exchange == measured:
        return costs
    sender = costs.exchange or costs.extras.get("encapsulate", 0.0)
    receiver = costs.exchange or costs.extras.get("decapsulate", 0.0)
    sign = 1.0 if exchange is Exchange.PER_MESSAGE else -1.0
    seal, opened = SEAL_METRIC[costs.family], OPEN_METRIC[costs.family]

    def moved(name: str, line: Line) -> Line:
        shift = sign * (sender if name == seal else receiver if name == opened else 0.0)
        # Out of a message, what is left is at least a hundredth of it (the AEAD, the framing).
        return Line(max(line.fixed + shift, line.fixed / 100), line.per_byte)

    return replace(costs, messages={name: moved(name, line) for name, line in costs.messages.items()})


def estimate_job(job: ResolvedJob, *, probe: bool = True, slowdown: float = 1.0) -> list[JobEstimate]:
    """One estimate per message size of `job`, in the order the runner gives results.
    `slowdown`: how much longer the machine's other work makes CPU time take (op_costs.cpu_slowdown)."""
    costs = costs_for(job.scheme, job.backend, job.params, probe=probe)
    if costs is None:
        return [JobEstimate(job.label, 0.0, 0.0, 0.0, known=False) for _ in job.message_sizes]
    low_f, high_f = (LOW, HIGH) if costs.source == "catalogue" else (PROBED_LOW, PROBED_HIGH)
    if job.mode == Mode.LOAD:
        return [
            JobEstimate(job.label, c.seconds(slowdown), lo.seconds(slowdown) * low_f, h.seconds(slowdown) * high_f)
            for c, lo, h in _load(job, costs)
        ]
    costs = in_pattern(costs, job.exchange)
    if costs.family is Family.TLS:
        times = _tls_operations(job, costs) if job.mode == Mode.OPERATIONS else _tls_connections(job, costs)
    else:
        times = _operations(job, costs) if job.mode == Mode.OPERATIONS else _session(job, costs)
    return [
        JobEstimate(job.label, t.seconds(slowdown), t.seconds(slowdown) * low_f, t.seconds(slowdown) * high_f)
        for t in times
    ]


def estimate_run(jobs: Sequence[ResolvedJob], *, probe: bool = True, slowdown: float | None = None) -> RunEstimate:
    """The run's estimate; `slowdown` None: measured now (op_costs.cpu_slowdown)."""
    slowdown = cpu_slowdown() if slowdown is None else slowdown
    out: list[JobEstimate] = []
    for job in jobs:
        out.extend(estimate_job(job, probe=probe, slowdown=slowdown))
    return RunEstimate(tuple(out), start_s=RUN_START_S * slowdown, slowdown=slowdown)


@dataclass(frozen=True)
class Refined:
    """The time left of a running run: the estimates of the results not yet finished,
    scaled by how the finished ones compared with theirs."""

    estimate: RunEstimate

    def ratio(self, finished_s: float, finished: int) -> float:
        """Actual over estimated time of the first `finished` results (1 before any)."""
        planned = self.estimate.start_s + sum(job.seconds for job in self.estimate.jobs[:finished])
        if finished <= 0 or planned <= 0 or finished_s <= 0:
            return 1.0
        return finished_s / planned

    def left(self, finished_s: float, finished: int, current_s: float | None, current_fraction: float = 0.0) -> float:
        """Seconds left: the running result's estimate less what it has run, every later
        one's estimate, all times the ratio. A job's phases differ in cost (ElGamal's key
        generations are quick, its decryptions slow), so its share of samples done says
        little about its end: it is used only once the job has run past its estimate (from
        MIN_FRACTION of it; before, a tenth of the estimate: it is still running)."""
        ratio = self.ratio(finished_s, finished)
        jobs = self.estimate.jobs
        if finished >= len(jobs):
            return 0.0
        current = jobs[finished].seconds * ratio
        if current_s is not None:
            if current_s < current:
                current = max(current - current_s, current * 0.1)
            elif current_fraction >= MIN_FRACTION:
                current = current_s * (1 - current_fraction) / current_fraction
            else:
                current *= 0.1
        return current + ratio * sum(job.seconds for job in jobs[finished + 1 :])

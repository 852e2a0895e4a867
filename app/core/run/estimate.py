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
  the message serialized at the rate: app.core.link.presets.round_trip_ms) plus the
  sealing and opening at both ends, and the pauses between samples;
- load: per size, the pools of requests, the sweep's closed-loop estimate, and each step's
  warm-up, window and drain (a sweep stops past the knee: from 3 to all 10 steps).

Each job also pays a fixed start-up (child processes spawned, libraries imported, a
link set up), measured on this machine (benchmarks/bench_estimates.py). The result is
a range: the central figure and the low and high ends around it, wider where less is
known (a scheme this process had to probe, a sweep whose steps depend on its knee).

While a run goes, `Refined` scales the remaining jobs' estimates by what the finished
ones took against their own estimates: a run of very different jobs (a 64-byte AES job
beside a pure-Python RSA one) is not assumed to go on at its average pace so far.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.core.link.presets import round_trip_ms
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
from app.core.profile.model import ResolvedJob
from app.core.results.job_conditions import Link
from app.core.run.op_costs import OpCosts, costs_for, load_factor
from app.core.schemes.base import KEYGEN_ON_SENDER, NO_KEYGEN, Family
from app.core.session.sender import FLOOR_MAX_SAMPLES, HANDSHAKE_WARMUP_MAX
from app.core.vocab import Mode

#: A run expected to take longer than this (its estimate's upper end) asks before it starts.
LONG_RUN_S = 5 * 60.0

# Fixed costs measured on this machine (benchmarks/bench_estimates.py, 2026-11-26): what a
# job pays besides its operations.
#: An operations job: its child process spawned and its libraries imported.
OPERATIONS_START_S = 0.05
#: A session: receiver and sender processes, the connection and its token handshake.
SESSION_START_S = 0.08
#: A session over an emulated link: the relay or the packet path's namespaces set up.
LINK_START_S = 0.2
#: A load job: the server's workers and the generator started, the clients connected.
LOAD_START_S = 0.4
#: The run itself: the pre-flight check, the store, the report of the environment.
RUN_START_S = 0.5
#: Each message size: its plaintext, handshake and summary (statistics over the samples).
PER_SIZE_S = 0.01
#: What the harness adds to each timed call: making its input, keeping and checking its
#: output (a few Python calls), beyond the operation itself.
PER_CALL_S = 1.5e-6
#: Per round of a metric: the recorder, the progress message, the untimed warm call's loop.
PER_ROUND_S = 30e-6
#: One exchange on plain loopback: two frames through the kernel, both ends in Python.
LOOPBACK_EXCHANGE_S = 150e-6
#: tracemalloc slows every allocation down: the memory pass's one call costs this many.
TRACED_FACTOR = 1.5

#: Below this share of its samples, a job's own progress says little about its end.
MIN_FRACTION = 0.05

#: The range around the central figure: operations timed here scale with the machine's
#: load (2 cores shared with other work can double a run); a scheme probed in this
#: process rests on one call of each operation.
LOW, HIGH = 0.75, 1.6
PROBED_LOW, PROBED_HIGH = 0.5, 2.5


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


def _count(op_s: float, output_bytes: int = 0) -> int:
    """Calls per sample, as app.core.measure.timing.calibrate and ops._measure choose them."""
    if op_s * 1e9 >= BATCH_THRESHOLD_NS:
        return 1
    count = max(1, int(BATCH_TARGET_NS / max(op_s * 1e9, 1.0)))
    if output_bytes:
        count = max(1, min(count, BATCH_BYTES // max(output_bytes, 1)))
    return min(count, 20_000)


def _metric_s(rounds: int, op_s: float, other_s: float, pause_s: float, output_bytes: int = 0) -> float:
    """One metric's rounds: the calibration, then each round's batch of timed calls, their
    inputs made and outputs checked (`other_s` a call), the untimed call before a fast
    batch, and the pause."""
    count = _count(op_s, output_bytes)
    warm = op_s if op_s * 1e9 < SLOW_CALL_NS else 0.0
    per_round = count * (op_s + other_s + PER_CALL_S) + warm + PER_ROUND_S + pause_s
    # calibrate(): one probe call, a second for a middling one, a quarter-batch for a fast one.
    if count > 1:
        calibration = 2 * op_s + count * op_s / 4
    else:
        calibration = op_s if op_s * 1e9 >= 50 * BATCH_THRESHOLD_NS else 2 * op_s
    return calibration + rounds * per_round


def _operations(job: ResolvedJob, costs: OpCosts) -> list[float]:
    family, pause = costs.family, job.pause_ms / 1000
    rounds = job.warmup + job.samples
    first = OPERATIONS_START_S
    if family not in NO_KEYGEN:
        warmup = min(job.warmup, 2) - (0 if family in KEYGEN_ON_SENDER or not job.warmup else 1)
        # The working key pair, the timed rounds, and the memory pass's one more (a key
        # generation allocates in C, which tracemalloc does not slow down).
        first += costs.keygen * 2 + _metric_s(warmup + job.keygen_samples, costs.keygen, 0.0, pause)
    if family is Family.KEY_AGREEMENT:
        first += _metric_s(rounds, costs.exchange, costs.exchange, pause)
    out = []
    for k, size in enumerate(job.message_sizes):
        ops = {name: line.at(size) for name, line in costs.messages.items()}
        both = sum(ops.values())
        seconds = (first if k == 0 else 0.0) + PER_SIZE_S
        seconds += costs.exchange * 2 + both  # the size's own handshake and sample payload
        for op in ops.values():
            # An encrypt is checked by a decrypt, a decrypt's input made by an encrypt.
            seconds += _metric_s(rounds, op, both - op if len(ops) > 1 else op * 0.1, pause, max(size, 1))
        seconds += sum(_metric_s(rounds, op, op, pause) for op in costs.extras.values())
        seconds += job.tamper * both + TRACED_FACTOR * both  # tamper tries; the memory pass
        out.append(seconds)
    return out


# --- sessions -----------------------------------------------------------------------


def exchange_s(link: Link | None, up_bytes: int, down_bytes: int = 64) -> float:
    """One exchange of `up_bytes` answered by `down_bytes`: the link's round trip in the
    model (delays, serialization at its rates), else plain loopback's."""
    if link is None or link.emulation == "none":
        return LOOPBACK_EXCHANGE_S + (up_bytes + down_bytes) / 2e9  # copies at ~2 GB/s
    return LOOPBACK_EXCHANGE_S + round_trip_ms(link, up_bytes, down_bytes) / 1000


def _session(job: ResolvedJob, costs: OpCosts) -> list[float]:
    family, pause, link = costs.family, job.pause_ms / 1000, job.link
    start = SESSION_START_S + (LINK_START_S if link is not None and link.emulation != "none" else 0.0)
    handshake = costs.exchange or sum(costs.extras.values()) / 2
    rounds = min(job.warmup, HANDSHAKE_WARMUP_MAX) + job.keygen_samples
    keygen = costs.keygen if family not in NO_KEYGEN else 0.0
    start += rounds * (2 * exchange_s(link, 1024) + keygen + 2 * handshake)
    out = []
    for k, size in enumerate(job.message_sizes):
        both = sum(line.at(size) for line in costs.messages.values())
        payload = size + 64
        seconds = (start if k == 0 else 0.0) + PER_SIZE_S
        seconds += 2 * exchange_s(link, 64)  # the size's start and end
        floor = job.warmup + min(job.samples, FLOOR_MAX_SAMPLES)
        seconds += floor * exchange_s(link, payload, payload)
        seconds += (job.warmup + job.samples) * (exchange_s(link, payload) + both + pause)
        seconds += job.tamper * (exchange_s(link, payload) + both) + TRACED_FACTOR * both
        out.append(seconds)
    return out


# --- load ---------------------------------------------------------------------------


def _load(job: ResolvedJob, costs: OpCosts) -> tuple[list[float], list[float], list[float]]:
    """(central, low, high) per size: a sweep's step count depends on where its knee lies."""
    settings = job.load
    assert settings is not None
    request = (costs.exchange or sum(costs.extras.values()) / 2) * 2 + sum(
        line.at(32) for line in costs.messages.values()
    )
    link_rtt = exchange_s(job.link, 64) if job.link is not None else 0.0
    central, low, high = [], [], []
    for k in range(len(job.message_sizes)):
        head = LOAD_START_S if k == 0 else 0.0
        # Each client's pool: up to POOL_MAX requests within POOL_BUDGET_S, at least POOL_MIN.
        pool = max(min(POOL_BUDGET_S, POOL_MAX * request), POOL_MIN * request)
        head += settings.clients * pool + job.tamper * (request + link_rtt)
        step = settings.warmup_s + settings.duration_s
        if settings.sweep:
            head += min(CALIBRATION_BUDGET_S, CALIBRATION_REQUESTS * (request + exchange_s(job.link, 64)))
            steps = len(sweep.SWEEP_FRACTIONS)
            # Past the knee a step drains for up to max(MIN_DRAIN_S, duration): the last two do.
            drain = max(MIN_DRAIN_S, settings.duration_s) + link_rtt
            central.append(head + steps * step + drain)
            low.append(head + 3 * step)  # two overloaded steps stop it: at the least the first 3
            high.append(head + steps * step + 2 * drain + steps * link_rtt)
        else:
            steps = len(settings.rates)
            central.append(head + steps * (step + link_rtt))
            low.append(head + steps * step)
            # A drain waits for late replies only where the server fell behind: the last step's.
            high.append(head + steps * (step + link_rtt) + max(MIN_DRAIN_S, settings.duration_s))
    return central, low, high


# --- the run ------------------------------------------------------------------------


def estimate_job(job: ResolvedJob, *, probe: bool = True, busy: float = 1.0) -> list[JobEstimate]:
    """One estimate per message size of `job`, in the order the runner gives results.
    `busy`: how much longer the machine's other work may make it (the upper end only)."""
    costs = costs_for(job.scheme, job.backend, job.params, probe=probe)
    if costs is None:
        return [JobEstimate(job.label, 0.0, 0.0, 0.0, known=False) for _ in job.message_sizes]
    low_f, high_f = (LOW, HIGH) if costs.source == "catalogue" else (PROBED_LOW, PROBED_HIGH)
    high_f *= busy
    if job.mode == Mode.LOAD:
        central, low, high = _load(job, costs)
        return [JobEstimate(job.label, c, lo * low_f, h * high_f) for c, lo, h in zip(central, low, high)]
    times = _operations(job, costs) if job.mode == Mode.OPERATIONS else _session(job, costs)
    return [JobEstimate(job.label, t, t * low_f, t * high_f) for t in times]


def estimate_run(jobs: Sequence[ResolvedJob], *, probe: bool = True, busy: float | None = None) -> RunEstimate:
    """The run's estimate; `busy` None: from this machine's load now (op_costs.load_factor)."""
    busy = load_factor() if busy is None else busy
    out: list[JobEstimate] = []
    for job in jobs:
        out.extend(estimate_job(job, probe=probe, busy=busy))
    return RunEstimate(tuple(out))


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
        """Seconds left: the running result's (from its own progress once it has done
        MIN_FRACTION of it, else its estimate less what it has run, never below a tenth of
        it: it is still running), and every later one's estimate, all times the ratio."""
        ratio = self.ratio(finished_s, finished)
        jobs = self.estimate.jobs
        if finished >= len(jobs):
            return 0.0
        current = jobs[finished].seconds * ratio
        if current_s is not None:
            if current_fraction >= MIN_FRACTION:
                current = current_s * (1 - current_fraction) / current_fraction
            else:
                current = max(current - current_s, current * 0.1)
        return current + ratio * sum(job.seconds for job in jobs[finished + 1 :])

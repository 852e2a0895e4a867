"""What limited each step of a load job, and the one verdict its steps add up to.

A step falls short of its offered rate, or its latency climbs, for one of two reasons:
the server (or what lies between it and the generator) fell behind, or the generator
could not offer the rate. Each leaves its own marks, but they are not independent: when
the server falls behind, its socket buffers fill, TCP back-pressure stalls the
generator's sends, and the generator looks late too (a sweep of X25519 whose server sat
at 99 % CPU, achieved flat at 24.5k/s while offered rose 40 %, p50 61 ms to p99 1.06 s,
was once called "generator saturated" for a send lag of 1.2 ms at p99). So the evidence
is weighed, not merely collected:

- the server fell behind (`StepLimit.SERVER`) when requests queued beyond what the
  generator's own lateness explains: the step's p50, less the generator's send lag, is
  many times the low-load p99 (`QUEUE_FACTOR`); or its p50 grew through the step (first
  quarter to last, `GROWTH_FACTOR`) while the server was busy; or it achieved less than
  it was sent, beyond what the send lag could shift out of the window; or requests were
  refused or left unanswered. Such evidence wins over the generator's marks.
- the generator was the limit (`StepLimit.GENERATOR`) when it sent late (p99 beyond
  `MAX_SEND_LAG_S`), short or missed requests, and nothing shows the server falling behind.
- otherwise the server kept up (`StepLimit.KEPT_UP`).

The generator's CPU is recorded but is no evidence either way: it polls for the last
half millisecond before each request, so above ~2,000 requests/s it is near 100 % by
design. The verdict then says "server overloaded at X/s" (the knee is measured) only
with evidence of overload, "at least X/s" only without any, and "generator limited"
where the generator capped what was offered. Every face (the report, the terminal, the
window) says `verdict_text`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from app.core.load.sweep import KEPT_UP, MAX_SEND_LAG_S, OVERLOADED_STEPS_TO_STOP
from app.core.records.job_conditions import Load, LoadStep, StepLimit
from app.core.records.placement_words import cpus_text
from app.core.results.model import JobResult
from app.core.units import MISSING, format_seconds
from app.core.vocab import Role

#: A step's p50, less the generator's send lag, this many times the low-load p99 means
#: requests queued at the server: at 95 % of a server's capacity a typical request waits a
#: few service times, far less than ten low-load tails.
QUEUE_FACTOR = 10.0
#: ... and at least this long: a queue of microseconds is no overload.
QUEUE_FLOOR_S = 0.005
#: The p50 of a step's last quarter this many times its first quarter's (the growth also
#: beyond QUEUE_FACTOR low-load tails, or QUEUE_FLOOR_S): latency growing without bound.
GROWTH_FACTOR = 2.0
#: The server counts as busy at this share of its workers' CPUs.
SERVER_BUSY = 0.9
#: In a load job the receiver is the server.
SERVER_ROLE = Role.RECEIVER


@dataclass(frozen=True)
class StepCall:
    """What limited one step, and the evidence it rests on (the first item leads)."""

    limit: StepLimit
    evidence: tuple[str, ...] = ()

    @property
    def reason(self) -> str | None:
        return "; ".join(self.evidence) or None


def low_load_p99(steps: Sequence[LoadStep]) -> float | None:
    """The p99 of the step at the lowest offered rate: what a request takes without a queue."""
    measured = [step for step in steps if step.latency_s.get("p99")]
    lowest = min(measured, key=lambda step: step.offered_per_s, default=None)
    return lowest.latency_s["p99"] if lowest is not None else None


def generator_marks(step: LoadStep) -> str | None:
    """What the generator's own figures say against it, in words, or None."""
    if step.saturation_reason:
        return step.saturation_reason
    if step.missed:
        return f"{step.missed:,} requests missed (never sent)"
    lag = step.send_lag_p99_s
    if lag is not None and lag > MAX_SEND_LAG_S:
        return f"requests sent up to {format_seconds(lag)} late (p99, limit {format_seconds(MAX_SEND_LAG_S)})"
    if step.generator_saturated and step.limit is None:  # an older file's mark, its reason not kept
        return "marked generator-saturated (no reason recorded)"
    return None


def clock_fault_text(step: LoadStep) -> str | None:
    """A step's clock faults in words (replies timed at or before they were due: counted,
    never latency samples), or None; every face flags the step with it."""
    if not step.clock_faults:
        return None
    n = step.clock_faults
    return (
        f"clock fault: {n:,} repl{'ies' if n != 1 else 'y'} timed at or before {'their' if n != 1 else 'its'} "
        "intended start, not recorded as latencies"
    )


def _window_s(step: LoadStep) -> float | None:
    """The measured window, from the schedule it held (sent + missed at the offered rate)."""
    scheduled = step.sent + step.missed
    return scheduled / step.offered_per_s if scheduled and step.offered_per_s > 0 else None


def server_evidence(step: LoadStep, low_p99: float | None, workers: int = 1) -> list[str]:
    """Signs that requests queued beyond the generator at this step (empty: none)."""
    lag = step.send_lag_p99_s or 0.0
    found: list[str] = []
    p50 = step.latency_s.get("p50")
    queue_bar = max(QUEUE_FACTOR * low_p99, QUEUE_FLOOR_S) if low_p99 else None
    if p50 is not None and low_p99 and queue_bar is not None and p50 - lag >= queue_bar:
        found.append(f"p50 {format_seconds(p50)}, {p50 / low_p99:,.0f}× the low-load p99 ({format_seconds(low_p99)})")
    first, last = step.latency_first_p50_s, step.latency_last_p50_s
    busy = step.server_cpu_percent is None or step.server_cpu_percent >= SERVER_BUSY * 100 * workers
    growth_bar = queue_bar if queue_bar is not None else QUEUE_FLOOR_S
    if first and last and busy and last >= GROWTH_FACTOR * first and last - first - lag >= growth_bar:
        found.append(
            f"latency grew through the step (p50 {format_seconds(first)} in its first quarter, "
            f"{format_seconds(last)} in its last)"
        )
    window = _window_s(step)
    scheduled = step.sent + step.missed
    sent_rate = step.offered_per_s * step.sent / scheduled if scheduled else step.offered_per_s
    # A send lag L shifts at most about L's worth of the schedule out of the window.
    allowance = min(1.0, lag / window) if window else 0.0
    # What the generator sent is known from its counts; without them (hand-made records),
    # a step the generator marked may not have sent its offered rate.
    known = bool(scheduled) or generator_marks(step) is None
    if known and sent_rate > 0 and step.achieved_per_s < KEPT_UP * sent_rate * (1 - allowance):
        share = step.achieved_per_s / sent_rate
        of = "offered" if not step.missed else f"the {sent_rate:,.0f}/s the generator sent"
        found.append(
            f"achieved {share * 100:.0f} % of {of}"
            + (f", which a send lag of {format_seconds(lag)} (p99) cannot explain" if lag > MAX_SEND_LAG_S else "")
        )
    if step.errors:
        found.append(f"{step.errors:,} request{'s' if step.errors != 1 else ''} refused or unanswered")
    return found


def call_step(step: LoadStep, low_p99: float | None, workers: int = 1) -> StepCall:
    """What limited one step: evidence of the server falling behind wins over the
    generator's marks (back-pressure makes the generator late too). An incomplete step (one
    of several generators returned nothing) did not offer its rate: never the server's figure."""
    if step.incomplete:
        return StepCall(StepLimit.GENERATOR, (f"incomplete: {step.incomplete}",))
    server = server_evidence(step, low_p99, workers)
    marks = generator_marks(step)
    if server:
        cpu = step.server_cpu_percent
        if cpu is not None and cpu >= SERVER_BUSY * 100 * workers:
            server.append(f"server CPU {cpu:.0f} %")
        elif cpu is not None and not (step.errors and len(server) == 1):  # not for refusals alone
            # Requests waited while the server did not work: it was held back, not short of
            # CPU for its own work (other programs on its CPU, or the link before it).
            server.append(f"server CPU only {cpu:.0f} %: held back by the machine or the link, not by its own work")
        if marks:
            server.append(f"the generator's marks ({marks}) are the server's back-pressure, not its limit")
        return StepCall(StepLimit.SERVER, tuple(server))
    if marks:
        return StepCall(StepLimit.GENERATOR, (marks,))
    return StepCall(StepLimit.KEPT_UP)


def classify(steps: Sequence[LoadStep], workers: int = 1) -> list[StepCall]:
    """Every step's call, from its figures (what a run records in `LoadStep.limit`)."""
    low = low_load_p99(steps)
    return [call_step(step, low, workers) for step in steps]


def step_calls(load: Load) -> list[StepCall]:
    """The calls a run recorded, or (results written before it recorded them) the calls
    its figures give now."""
    if load.steps and all(step.limit is not None for step in load.steps):
        return [
            StepCall(step.limit, tuple(step.limit_reason.split("; ")) if step.limit_reason else ())
            for step in load.steps
            if step.limit is not None
        ]
    return classify(load.steps, load.server_workers)


class VerdictKind(StrEnum):
    """What a load job's steps add up to (`LoadVerdict.kind`)."""

    #: Some step overloaded the server: its limit, the knee, is measured.
    SERVER = "server"
    #: No step showed server overload, and the generator kept its schedule: a lower bound.
    AT_LEAST = "at-least"
    #: No step showed server overload, and the generator was the limit at some step.
    GENERATOR = "generator"
    #: No step was measured.
    NONE = "none"


@dataclass(frozen=True)
class LoadVerdict:
    """What a load job's steps add up to."""

    kind: VerdictKind
    calls: tuple[StepCall, ...] = ()
    #: The highest achieved rate of a step the generator did not limit, and that step: a
    #: face names the step a figure comes from, never another step's offered rate beside it.
    knee_per_s: float | None = None
    knee_step: LoadStep | None = None
    #: The highest achieved rate of a step kept up with, and its p99.
    sustained_per_s: float | None = None
    sustained_p99_s: float | None = None
    #: The first step (lowest offered) the server fell behind at, and the first the generator limited.
    first_overloaded: tuple[LoadStep, StepCall] | None = None
    first_generator: tuple[LoadStep, StepCall] | None = None
    generator_steps: int = 0


def judge(steps: Sequence[LoadStep], calls: Sequence[StepCall]) -> LoadVerdict:
    """The verdict of steps and their calls (`classify` or `step_calls`)."""
    if not steps:
        return LoadVerdict(VerdictKind.NONE)
    pairs = list(zip(steps, calls, strict=True))
    server_side = [(s, c) for s, c in pairs if c.limit != StepLimit.GENERATOR]
    kept = [s for s, c in pairs if c.limit == StepLimit.KEPT_UP]
    overloaded = sorted(((s, c) for s, c in pairs if c.limit == StepLimit.SERVER), key=lambda p: p[0].offered_per_s)
    limited = sorted(((s, c) for s, c in pairs if c.limit == StepLimit.GENERATOR), key=lambda p: p[0].offered_per_s)
    best = max(kept, key=lambda s: s.achieved_per_s, default=None)
    knee = max((s for s, _ in server_side), key=lambda s: s.achieved_per_s, default=None)
    if overloaded:
        kind = VerdictKind.SERVER
    elif limited:
        kind = VerdictKind.GENERATOR
    else:
        kind = VerdictKind.AT_LEAST
    return LoadVerdict(
        kind,
        tuple(calls),
        knee_per_s=knee.achieved_per_s if knee is not None else None,
        knee_step=knee,
        sustained_per_s=best.achieved_per_s if best is not None else None,
        sustained_p99_s=best.latency_s.get("p99") if best is not None else None,
        first_overloaded=overloaded[0] if overloaded else None,
        first_generator=limited[0] if limited else None,
        generator_steps=len(limited),
    )


def load_verdict(load: Load) -> LoadVerdict:
    """A recorded load job's verdict."""
    return judge(load.steps, step_calls(load))


def with_calls(steps: Sequence[LoadStep], workers: int = 1) -> list[LoadStep]:
    """The steps with their calls recorded (`limit`, `limit_reason`, and
    `generator_saturated` for a step the generator limited): what a run writes."""
    return [
        replace(step, limit=call.limit, limit_reason=call.reason, generator_saturated=call.limit == StepLimit.GENERATOR)
        for step, call in zip(steps, classify(steps, workers), strict=True)
    ]


def summarise(steps: Sequence[LoadStep], workers: int = 1) -> tuple[float | None, float | None, float | None, bool]:
    """(knee, sustained rate, its p99, server overloaded) of a job's steps, as `Load` records them."""
    verdict = judge(steps, classify(steps, workers))
    return verdict.knee_per_s, verdict.sustained_per_s, verdict.sustained_p99_s, verdict.kind == VerdictKind.SERVER


def should_stop(steps: Sequence[LoadStep], workers: int = 1) -> bool:
    """Enough steps past the knee: two in a row not kept up with (the server fell behind,
    or the generator could not offer more: one late step may be a moment's trouble, two
    say more would tell nothing)."""
    if len(steps) < OVERLOADED_STEPS_TO_STOP:
        return False
    tail = classify(steps, workers)[-OVERLOADED_STEPS_TO_STOP:]
    return not any(call.limit == StepLimit.KEPT_UP for call in tail)


# --- in words: the one sentence every face says ---------------------------------------------

#: Notes results written before the verdict said it carried: a knee where the verdict may
#: find none, and a sweep's planned steps said as offered (app.core.load.job writes neither now).
_KNEE_NOTE = "no step showed server overload: the knee is at least the highest rate achieved"
_OFFERED_STEPS = re.compile(r"offered (\d+) steps from (\S+) to (\S+)/s, stopping past the knee")


def shown_notes(job: JobResult) -> list[str]:
    """A job's notes as every face shows them: a load job's never contradict its verdict
    (results written before it was said here: the knee note dropped, the sweep's steps said
    as planned, with how many ran)."""
    if job.load is None:
        return list(job.notes)
    shown = []
    for note in job.notes:
        if note == _KNEE_NOTE:
            continue  # what the steps add up to is the verdict's to say
        offered = _OFFERED_STEPS.search(note)
        if offered is not None:
            planned, low, high = offered.groups()
            ran = f"{len(job.load.steps)} of them ran" if len(job.load.steps) < int(planned) else f"all {planned} ran"
            note = (
                f"{note[: offered.start()]}planned {planned} steps from {low} to {high}/s; {ran}{note[offered.end() :]}"
            )
        shown.append(note)
    return shown


def rate_text(rate: float | None) -> str:
    """Requests per second without the unit: 1,941 or 20 or 0.5."""
    if rate is None or not math.isfinite(rate):
        return MISSING
    return f"{rate:,.0f}" if rate >= 10 else f"{rate:.2g}"


def requests_word(load: Load) -> str:
    """ "handshakes" or "signed messages": what one request of this job is, plural."""
    return f"{load.request}s" if not load.request.endswith("s") else load.request


def _server_cpus(job: JobResult) -> tuple[int, ...]:
    if job.placement is None or SERVER_ROLE not in job.placement.processes:
        return ()
    return tuple(job.placement.processes[SERVER_ROLE].allowed_cpus)


def generators_text(load: Load) -> str | None:
    """Where a cluster job's load came from: "2 generators on Dask workers (loadgen-a,
    loadgen-b)", each machine named once; None for one local generator (its CPUs are in
    the job's placement). The local placement's generator CPUs are the coordinator's, not
    a generator's, so a face says this instead."""
    if load.cluster is None and not load.generators:
        return None
    count = len(load.generators)
    hosts = list(dict.fromkeys(place.host for place in load.generators))
    on = "a Dask worker" if count == 1 else "Dask workers"
    return f"{count} generator{'s' if count != 1 else ''} on {on}" + (f" ({', '.join(hosts)})" if hosts else "")


def where_text(job: JobResult, load: Load) -> str:
    """Where the server ran: "on one core (CPU 1)", "on 2 server processes (CPUs 0-1)",
    "in one server process" (not pinned to one CPU). The same for a cluster job, whose
    server runs here too: where its load came from is `generators_text`, in its conditions."""
    cpus = _server_cpus(job)
    pinned = job.placement is not None and job.placement.unavailable is None and bool(cpus)
    if load.server_workers > 1:
        return f"on {load.server_workers} server processes" + (f" ({cpus_text(cpus)})" if pinned else "")
    if pinned and len(cpus) == 1:
        return f"on one core ({cpus_text(cpus)})"
    return "in one server process" + (f" ({cpus_text(cpus)})" if pinned else "")


def _sustained(verdict: LoadVerdict) -> str:
    p99 = f" at p99 under {format_seconds(verdict.sustained_p99_s)}" if verdict.sustained_p99_s is not None else ""
    return f"{rate_text(verdict.sustained_per_s)}/s{p99}"


def verdict_text(job: JobResult, load: Load, verdict: LoadVerdict | None = None) -> str:
    """The verdict in one clause, to follow the job's name: "server overloaded at 24,649
    handshakes/s on one core (CPU 1), the knee, at the step offered 24,868/s: ...", "at least
    998 handshakes/s ...: no step showed server overload, so its limit lies higher",
    "generator limited: ...". Each figure is said with the step it comes from (the first
    overloaded step's offered rate is never set beside another step's achieved one)."""
    verdict = verdict if verdict is not None else load_verdict(load)
    what, where = requests_word(load), where_text(job, load)
    left_out = verdict.generator_steps
    if verdict.kind == VerdictKind.NONE:
        return "no load step was measured"
    if verdict.kind == VerdictKind.SERVER and verdict.first_overloaded is not None:
        step, call = verdict.first_overloaded
        why = call.evidence[0] if call.evidence else "the server fell behind"
        # Whether the server worked flat out there, or was held back while requests waited.
        cpu = next((item for item in call.evidence[1:] if item.startswith("server CPU")), None)
        why += f", {cpu}" if cpu else ""
        # Every figure with the step it comes from: the first step the server fell behind at,
        # and the step of the knee (the most it achieved), which may be a later one.
        knee = verdict.knee_step
        if knee is None or knee is step:
            text = (
                f"server overloaded at {rate_text(step.achieved_per_s)} {what}/s {where}, the knee, at the step "
                f"offered {rate_text(step.offered_per_s)}/s: {why}"
            )
        else:
            text = (
                f"server overloaded from the step offered {rate_text(step.offered_per_s)}/s (achieved "
                f"{rate_text(step.achieved_per_s)}/s: {why}); the knee, the most it achieved, "
                f"{rate_text(knee.achieved_per_s)} {what}/s {where} at the step offered "
                f"{rate_text(knee.offered_per_s)}/s"
            )
        text += f"; sustains {_sustained(verdict)}" if verdict.sustained_per_s is not None else "; kept up with no step"
        if left_out:
            text += f" ({left_out} step{'s' if left_out != 1 else ''} the generator limited left out)"
        return text
    if verdict.kind == VerdictKind.GENERATOR and verdict.first_generator is not None:
        step, call = verdict.first_generator
        why = call.evidence[0] if call.evidence else "it could not keep its schedule"
        if verdict.sustained_per_s is None:
            steps = "every step" if len(load.steps) > 1 else "its one step"
            return (
                f"generator limited: the load generator, not the server, was the limit at {steps}, so no rate "
                f"here is the server's: {why}"
            )
        return (
            f"generator limited: at least {rate_text(verdict.sustained_per_s)} {what}/s {where}"
            + (
                f" at p99 under {format_seconds(verdict.sustained_p99_s)}"
                if verdict.sustained_p99_s is not None
                else ""
            )
            + f", and no step showed server overload; at the step offered {rate_text(step.offered_per_s)}/s"
            + (f" (and {left_out - 1} more)" if left_out > 1 else "")
            + f" the load generator, not the server, was the limit: {why}"
        )
    return (
        f"at least {rate_text(verdict.sustained_per_s)} {what}/s {where}"
        + (f" at p99 under {format_seconds(verdict.sustained_p99_s)}" if verdict.sustained_p99_s is not None else "")
        + ": no step showed server overload, so its limit lies higher"
    )

"""One load job in its generator process: connect, then per message size prepare,
check tampering, (for a sweep) estimate the capacity, run the steps, report. A tls13 job's
generator is app.core.load.tls_generator's (`generator_for`); over the packet path the
generator enters the sender's network namespace before it opens a socket."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from typing import Protocol

from app.core.contracts.events import Progress, RawMetric, SizeMeasured, SizeStarted
from app.core.contracts.plan import JobPlan
from app.core.load import sweep, verdict
from app.core.load.generator import Emit, LoadGenerator
from app.core.load.tls_generator import TlsLoadGenerator
from app.core.measure.harness import child_entry, describe_error
from app.core.records.job_conditions import Load, LoadStep, StepLimit
from app.core.records.tls_record import TlsRecord, TlsStep
from app.core.settings.load import MAX_RATE_PER_S, LoadSettings
from app.core.settings.profile import MAX_SAMPLES
from app.core.statistics.stats import summarize
from app.core.tls.data import DataMismatch
from app.core.tls.handshake import HandshakeFailed
from app.core.tls.stack import TlsStackError
from app.core.tls.tally import NegotiationMismatch
from app.core.transport.netns import enter_namespace
from app.core.transport.wire import WireError
from app.core.vocab import Family

#: Progress is counted in hundredths of a step.
_PER_STEP = 100


class StepLost(Exception):
    """A step none of whose records came back, or that could not be placed in time (a
    cluster job whose every generator failed, whose scheduler was lost, or whose clocks
    could not be measured closely enough): the steps before it are kept, and the size ends
    incomplete, saying why."""


class StepRecord(Protocol):
    """What `measure_size` reads of a step's record besides the step."""

    latencies: list[float]
    server_ns: list[int]
    refused: dict[str, int]
    abandoned: int
    sample_every: int
    #: A tls13 job's handshakes of the step (None for any other job).
    handshakes: TlsStep | None


class Driver(Protocol):
    """What drives a load job's steps: one local `LoadGenerator`, or several on other
    machines (app.core.load.cluster.coordinator.ClusterDriver)."""

    settings: LoadSettings
    signer: bool
    emit: Emit

    @property
    def max_rate_per_s(self) -> float:
        """The most a step may offer (MAX_RATE_PER_S per generator)."""
        ...

    def prepare(self, size: int) -> Sequence[float]: ...
    def check_tampering(self, size: int, result: SizeMeasured) -> None: ...
    def calibrate(self) -> tuple[float, float]: ...
    def run_step(self, rate: float, progress: Callable[[float], None]) -> tuple[LoadStep, StepRecord]:
        """One step's record and what `measure_size` reads of it; StepLost when there is none."""
        ...

    def pool_size(self) -> int: ...
    def tls_record(self) -> TlsRecord | None: ...


def generator_for(plan: JobPlan, emit: Emit) -> LoadGenerator:
    """The generator of the plan's job: a tls13 job's opens a connection per request."""
    if plan.job.family == Family.TLS:
        return TlsLoadGenerator(plan, emit)
    return LoadGenerator(plan, emit)


def run_load_job(plan: JobPlan, emit: Emit) -> None:
    """The body of `load_generator_main`: every message size of the job, in order."""
    namespace = plan.session_peer().namespace
    if namespace is not None:  # a packet link's end: before any socket is made
        enter_namespace(namespace)
    generator = generator_for(plan, emit)
    try:
        generator.connect_all()
        for index, size in enumerate(plan.job.message_sizes):
            emit(SizeStarted(index, size))
            emit(measure_size(generator, index, size).summarize())
    finally:
        generator.close()


def measure_size(generator: Driver, index: int, size: int) -> SizeMeasured:
    """One message size of a load job: prepare and check tampering, plan the rates (a
    sweep's from the measured capacity), run the steps, and report the load, its notes and
    the latency and server metrics of the lowest rate."""
    settings = generator.settings
    notes: list[str] = []
    costs = generator.prepare(size)
    result = SizeMeasured(size_index=index, message_size=size, metrics={})
    generator.check_tampering(size, result)
    rates, calibrated_s = _planned_rates(generator, notes)
    planned_note = len(notes) - 1 if settings.sweep else None
    run = _run_steps(generator, rates, notes)
    if planned_note is not None:  # what ran, beside what was planned: never "offered 10" when 2 ran
        notes[planned_note] += f"; {_ran(len(run.steps), len(rates), run.stopped)}"
    # Each step's call is made over all the steps (the lowest one's latency is the low-load
    # figure the others are measured against), then recorded with the step.
    steps = verdict.with_calls(run.steps, settings.server_workers)
    knee, sustained, sustained_p99, saturated = verdict.summarise(steps, settings.server_workers)
    pool = generator.pool_size()
    load = Load(
        clients=settings.clients,
        server_workers=settings.server_workers,
        steps=tuple(steps),
        request="signed message" if generator.signer else "handshake",
        duration_s=settings.duration_s,
        warmup_s=settings.warmup_s,
        pool=pool,
        client_prepare_s=statistics.median(costs) if costs else None,
        # A server that times no request on its own (a TLS server: a handshake is a whole
        # connection) is known by its CPU per request while the sweep estimated it.
        server_request_s=statistics.median(run.server_ns) / 1e9 if run.server_ns else calibrated_s,
        knee_per_s=knee,
        sustained_per_s=sustained,
        sustained_p99_s=sustained_p99,
        saturated=saturated,
    )
    notes += _limit_notes(steps, settings)
    failed = sum(run.refused.values())
    checked = sum(step.completed for step in steps) + failed
    error = None
    if run.incomplete:
        error = run.incomplete
    elif failed:
        error = "the server refused requests that should have opened: " + ", ".join(
            f"{count} {name}" for name, count in sorted(run.refused.items())
        )
    metrics = _lowest_rate_metrics(run)
    result.metrics, result.checked, result.failed, result.error, result.load = metrics, checked, failed, error, load
    tls = generator.tls_record()
    if tls is not None:
        result.tls = replace(tls, steps=tuple(run.handshakes))
    result.notes.extend(notes)
    return result


def _planned_rates(generator: Driver, notes: list[str]) -> tuple[list[float], float | None]:
    """The rates to offer: the profile's, or for a sweep, steps up to past the capacity
    one request at a time suggests (said in `notes`, with the cap if it bites); and the
    server's time per request that estimate measured (None without a sweep)."""
    settings = generator.settings
    if not settings.sweep:
        return list(settings.rates), None
    server_s, round_trip_s = generator.calibrate()
    capacity = settings.server_workers / max(server_s, 1e-7)
    cap = generator.max_rate_per_s
    rates = sweep.sweep_rates(capacity, cap=cap)
    notes.append(
        f"sweep: one request at a time, the server took {server_s * 1e6:.1f} µs a request "
        f"({round_trip_s * 1e6:.1f} µs round trip): at most ~{capacity:,.0f} requests/s estimated; "
        f"planned {len(rates)} steps from {rates[0]:g} to {rates[-1]:g}/s, to stop after "
        f"{sweep.OVERLOADED_STEPS_TO_STOP} in a row not kept up with"
        + (
            f" (capped at {cap:,.0f}/s, the most {'its generators' if cap > MAX_RATE_PER_S else 'a profile'} "
            "may offer: the knee may lie higher)"
            if capacity * sweep.SWEEP_FRACTIONS[-1] > cap
            else ""
        )
    )
    return rates, server_s


@dataclass
class _StepsRun:
    """What a size's steps gave: the steps, the first step's latencies and server times
    (the metrics' samples), every step's server times and refusals, and why the steps
    stopped short (None: they did not)."""

    steps: list[LoadStep] = field(default_factory=list)
    first_latencies: list[float] = field(default_factory=list)
    first_server_ns: list[int] = field(default_factory=list)
    server_ns: list[int] = field(default_factory=list)
    refused: dict[str, int] = field(default_factory=dict)
    incomplete: str | None = None
    #: Why the steps stopped before the last planned one (None: every one ran).
    stopped: str | None = None
    #: A tls13 job's handshakes, step by step.
    handshakes: list[TlsStep] = field(default_factory=list)


def _run_steps(generator: Driver, rates: list[float], notes: list[str]) -> _StepsRun:
    """Offer each rate in turn, reporting progress; stop at an incomplete step, at requests
    left unanswered (a backlog the later steps would start behind), or, in a sweep, past
    the knee. What made it stop, or sample, is said in `notes`."""
    settings = generator.settings
    run = _StepsRun()
    total = len(rates) * _PER_STEP
    for k, rate in enumerate(rates):

        def progress(fraction: float, k: int = k) -> None:
            generator.emit(Progress(0, int((k + fraction) * _PER_STEP), total))

        try:
            step, record = generator.run_step(rate, progress)
        except StepLost as exc:
            run.incomplete = f"the step at {rate:g}/s was lost: {exc}"
            kept = ""
            if run.steps:
                kept = (
                    "; the step before it is kept"
                    if len(run.steps) == 1
                    else f"; the {len(run.steps)} steps before it are kept"
                )
            later = "; the later steps were not offered" if k + 1 < len(rates) else ""
            notes.append(run.incomplete + kept + later)
            break
        run.steps.append(step)
        if record.handshakes is not None:
            run.handshakes.append(record.handshakes)
        run.server_ns += record.server_ns
        for name, count in record.refused.items():
            run.refused[name] = run.refused.get(name, 0) + count
        if not run.first_latencies:
            run.first_latencies, run.first_server_ns = record.latencies, record.server_ns
            if record.sample_every > 1 and run.first_latencies:
                notes.append(
                    f"latency and server: 1 in every {record.sample_every} of the {step.sent:,} requests measured "
                    f"at {rate:g}/s ({len(run.first_latencies):,} samples; a metric keeps at most {MAX_SAMPLES:,}); "
                    "the step's histogram counts them all"
                )
        if step.incomplete:
            run.incomplete = f"the step at {rate:g}/s is incomplete: {step.incomplete}"
            notes.append(run.incomplete + ("; the later steps were not offered" if k + 1 < len(rates) else ""))
            run.stopped = "stopped at an incomplete step"
            break
        if record.abandoned:
            skipped = len(rates) - k - 1
            notes.append(
                f"at {rate:g}/s, {record.abandoned} requests were still unanswered when the drain ran out "
                "(the server, or the link, could not keep up): counted as errors; the server's CPU for "
                "that step is not known (a mark would wait behind them)"
                + (
                    f"; the {skipped} later steps were not offered (they would start behind the backlog)"
                    if skipped
                    else ""
                )
            )
            run.stopped = "stopped at requests left unanswered"
            break
        if settings.sweep and verdict.should_stop(run.steps, settings.server_workers):
            run.stopped = f"{sweep.OVERLOADED_STEPS_TO_STOP} steps in a row were not kept up with"
            break
    generator.emit(Progress(0, total, total))
    return run


def _limit_notes(steps: list[LoadStep], settings: LoadSettings) -> list[str]:
    """What limited the steps, and what their figures cover: a saturated generator, the
    server's back-pressure, several server processes (what they add up to, a knee, at least
    a rate or none, is the verdict's to say: app.core.load.verdict, never a note's)."""
    notes = []
    if any(step.generator_saturated for step in steps):
        notes.append(
            "the generator, not the server, was the limit at "
            + ", ".join(f"{step.offered_per_s:g}/s" for step in steps if step.generator_saturated)
            + ": those steps are marked and left out of the knee"
        )
    backed = [step for step in steps if step.limit == StepLimit.SERVER and step.saturation_reason]
    if backed:
        notes.append(
            "the generator sent late or short at "
            + ", ".join(f"{step.offered_per_s:g}/s" for step in backed)
            + ", where the server had fallen behind: its back-pressure, so those steps count as the server's"
        )
    if settings.server_workers > 1:
        notes.append(
            f"{settings.server_workers} server processes forked by the receiver process: its sampled "
            "CPU and RSS are its own (it only waits); each step's server CPU sums every worker's own clock"
        )
    return notes


def _ran(ran: int, planned: int, stopped: str | None) -> str:
    """How many planned steps ran, and why the others did not."""
    if ran >= planned:
        return f"all {planned} ran"
    return f"{ran} of them ran" + (f" ({stopped})" if stopped else "")


def _lowest_rate_metrics(run: _StepsRun) -> dict[str, RawMetric]:
    """At the lowest offered rate: what clients saw, and what the server's crypto took per
    request (every step's requests would be hundreds of thousands of samples a job;
    `Load.server_request_s` is their median, each step's latency its histogram)."""
    latency = RawMetric(samples=run.first_latencies)
    if run.first_latencies:
        # Latency under load varies by its nature (queueing): its statistics without the
        # spread and outlier warnings, which are for timings that should be steady.
        latency.summary = summarize(run.first_latencies, "s")
    return {"latency": latency, "server": RawMetric(samples=[ns / 1e9 for ns in run.first_server_ns])}


def load_generator_main(conn: Connection, plan: JobPlan) -> None:
    """Entry point of a load generator process (multiprocessing target)."""
    child_entry(conn, lambda emit: run_load_job(plan, emit), describe=describe_load_failure)


def describe_load_failure(exc: BaseException) -> str:
    """The job's one-line error: a wire error says it all, a tls13 job's handshake that was
    not what it asked or did not complete is named; anything else as Python names it."""
    if isinstance(exc, WireError):
        return str(exc)
    if isinstance(exc, (NegotiationMismatch, HandshakeFailed, DataMismatch, TlsStackError)):
        return f"{type(exc).__name__}: {exc}"
    return describe_error(exc)

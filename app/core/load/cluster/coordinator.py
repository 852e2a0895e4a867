"""A load job driven from this machine by generators on Dask workers.

`ClusterDriver` stands where one local `LoadGenerator` stands in
`app.core.load.job.measure_size`: it prepares, checks tampering, calibrates and runs steps,
but each step is run by every generator at once, on its share of the rate, from a start
time agreed a moment ahead and corrected by each worker's clock offset, their schedules
interleaved into the one a single generator would offer; their records are merged
(app.core.load.merge). A generator that fails, dies or returns late makes the step
incomplete, naming it, and ends the job: never a silently short step.

Dask only places the generators (an actor per worker, pinned to it) and carries commands;
what measures is our generator, a subprocess on each worker.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from types import FrameType
from typing import Any
from uuid import uuid4

from app import __version__
from app.core.contracts.events import SampleBatch, SizeMeasured, SizeStarted
from app.core.contracts.plan import JobPlan
from app.core.load import merge
from app.core.load.cluster import clocks, replies
from app.core.load.cluster.errors import ClusterError
from app.core.load.cluster.leases import LEASE_S, Leases
from app.core.load.cluster.pipe_frames import StepReport
from app.core.load.cluster.scheduler import (
    CONNECT_TIMEOUT_S,
    address_host,
    first_line,
    is_encrypted,
    is_loopback,
    open_client,
    scheduler_lost,
)
from app.core.load.generator import MIN_DRAIN_S, Emit
from app.core.load.job import StepLost, measure_size
from app.core.measure.harness import child_entry, describe_error
from app.core.processes.signal_raise import Redelivery
from app.core.records.job_conditions import LoadGeneratorPlace, LoadStep
from app.core.records.tls_record import TlsRecord, TlsStep
from app.core.schemes import registry
from app.core.schemes.base import KEYGEN_ON_SENDER
from app.core.settings.load import MAX_CLUSTER_ADDRESS_CHARS, MAX_HOST_CHARS, MAX_RATE_PER_S, LoadSettings
from app.core.vocab import Family

#: A step starts this long after it is agreed (plus three of the slowest worker's round
#: trips): time for the command to reach every worker and its generator to set up.
START_MARGIN_S = 0.3
#: At most this much more, when the last step's generators began late (`_merged_record`).
MAX_EXTRA_MARGIN_S = 5.0
#: Beyond a step's own time (margin, warm-up, window, drain), how long its generators may
#: take to answer before they count as late.
STEP_GRACE_S = 20.0
#: Setup commands (connect, prepare, tamper, calibrate) may take this long: a prepare
#: includes a signer's key generation.
SETUP_TIMEOUT_S = 120.0
#: How long this machine's load server waits for a cluster job's first client: the
#: coordinator's placing (connecting, starting the generators, measuring their clocks) is
#: bounded stage by stage, and on the busy 2-core VM took more than the server's own 60 s.
PLACING_BOUND_S = 300.0
#: How often the coordinator wakes while it waits, to report progress and notice a stop.
POLL_S = 0.1


class Stopped(Exception):
    """The run was stopped (SIGTERM from the supervisor)."""


@dataclass
class _Generator:
    """One placed generator, as the coordinator holds it."""

    number: int
    worker: str
    actor: Any
    host: str = ""
    clients: int = 0
    offset: merge.ClockOffset | None = None
    #: Its worker stopped answering (a call went unanswered, or its lease ran out), or it was
    #: stopped after a failure: nothing more is sent to it.
    silent: bool = False

    def place(self) -> LoadGeneratorPlace:
        assert self.offset is not None
        return LoadGeneratorPlace(
            # As the results reader bounds them (the host was cut where it entered, too).
            worker=replies.text(self.worker, "its worker address", MAX_CLUSTER_ADDRESS_CHARS),
            host=replies.text(self.host, "its host name", MAX_HOST_CHARS),
            clients=self.clients,
            clock_offset_s=self.offset.offset_s,
            clock_uncertainty_s=self.offset.uncertainty_s,
        )

    @property
    def name(self) -> str:
        return f"generator #{self.number} ({self.host or '?'}, worker {self.worker})"


@dataclass
class MergedRecord:
    """What `measure_size` reads of a step's record, over every generator that returned."""

    latencies: list[float]
    server_ns: list[int]
    refused: dict[str, int]
    abandoned: int
    sample_every: int
    handshakes: TlsStep | None = None


@dataclass
class _Refused:
    """A call Dask refused before sending it (its actor's proxy raises at once when the
    worker, or the scheduler, is lost): failed, as a future that failed would be."""

    error: BaseException

    def done(self) -> bool:
        return True

    def result(self, timeout: float | None = None) -> Any:
        raise self.error


def split_clients(clients: int, generators: int) -> list[int]:
    """`clients` connections over `generators`, as evenly as they go (each at least one)."""
    base, extra = divmod(clients, generators)
    return [base + (1 if k < extra else 0) for k in range(generators)]


class ClusterDriver:
    """Several generators on Dask workers, driven as one (see the module's docstring)."""

    def __init__(
        self,
        plan: JobPlan,
        emit: Emit,
        client: Any,
        clock_exchange: Callable[[Any], tuple[float, float, float]] | None = None,
    ) -> None:
        job = plan.job
        assert job.load is not None and job.load.cluster is not None, "a cluster plan names its scheduler"
        self.plan, self.emit, self.client = plan, emit, client
        self.settings: LoadSettings = job.load
        self.address: str = job.load.cluster
        # What one request is (the results' "handshake" or "signed message"): the scheme's, as
        # the generators see it.
        self.signer = registry.create(job.scheme, job.backend, job.params, job.exchange).info.family in KEYGEN_ON_SENDER
        self.generators: list[_Generator] = []
        self.notes: list[str] = []
        self._exchange = clock_exchange or self._clock_exchange
        self._run = uuid4().hex[:12]
        #: Whether a step has returned latency samples for this size (only the first does:
        #: `measure_size` keeps one step's, and a million samples a generator would cross
        #: the network for nothing).
        self._sampled = False
        #: How much further ahead than START_MARGIN_S the next step's start is agreed.
        self._late_s = 0.0
        self.leases = Leases(LEASE_S)

    # --- placing -----------------------------------------------------------------------------

    def place(self) -> None:
        """Choose the workers, start a generator on each, measure their clocks, connect them."""
        from distributed import TimeoutError as DaskTimeout

        settings = self.settings
        try:
            info = self.client.scheduler_info(n_workers=-1)  # every worker, not the first few
        except TypeError:  # a Dask before 2025 lists every worker without being asked
            info = self.client.scheduler_info()
        workers = sorted(info.get("workers", {}))
        if not workers:
            raise ClusterError(f"the Dask scheduler at {self.address} has no workers: start some with dask worker")
        wanted = settings.generators or len(workers)
        if wanted > len(workers):
            raise ClusterError(
                f"{wanted} generators asked for, but the scheduler at {self.address} has {len(workers)} "
                f"worker{'s' if len(workers) != 1 else ''} (one generator each)"
            )
        wanted = min(wanted, settings.clients)
        if wanted < (settings.generators or len(workers)):
            self.notes.append(
                f"{wanted} generators, not {settings.generators or len(workers)}: each needs one of the "
                f"job's {settings.clients} client connections"
            )
        self._check_secrets(workers[:wanted])
        peer = self.plan.session_peer()
        if is_loopback(peer.host):
            away = [w for w in workers[:wanted] if not is_loopback(address_host(w))]
            if away:
                raise ClusterError(
                    f"the load server listens on {peer.host} (this machine only), but worker {away[0]} is "
                    "elsewhere: start the scheduler on an address the workers reach this machine by"
                )
        from app.core.load.cluster.worker_side import GeneratorActor

        for k, worker in enumerate(workers[:wanted]):
            future = self.client.submit(
                GeneratorActor,
                key=f"cryptobench-generator-{self._run}-{k + 1}",
                workers=[worker],
                allow_other_workers=False,
                actor=True,
                pure=False,
            )
            try:
                actor = future.result(timeout=CONNECT_TIMEOUT_S)
            except (DaskTimeout, TimeoutError):
                raise ClusterError(
                    f"worker {worker} did not start a generator within {CONNECT_TIMEOUT_S:g} s"
                ) from None
            self.generators.append(_Generator(k + 1, worker, actor))
        for generator, clients in zip(self.generators, split_clients(settings.clients, wanted), strict=True):
            identity = self._wait(generator, self._call(generator, "identity"), CONNECT_TIMEOUT_S, replies.identity)
            generator.host = identity.host
            generator.clients = clients
            if identity.version != __version__:
                raise ClusterError(
                    f"{generator.name} runs CryptoBench {identity.version}, this machine {__version__}: "
                    "install the same version on every worker"
                )
        self._measure_clocks()
        # Started together: each is an interpreter that imports the generator (seconds apiece).
        self._gather([(g, self._call(g, "start", LEASE_S)) for g in self.generators], CONNECT_TIMEOUT_S, "starting")
        for generator in self.generators:
            self.leases.add(generator.number, generator.actor.renew)
        self.leases.start()
        calls = [(g, self._call(g, "call", "connect", self._share_plan(g.clients))) for g in self.generators]
        self._gather(calls, SETUP_TIMEOUT_S, "connecting")
        # Every client of every generator is in: the server may stop listening.
        self._wait(self.generators[0], self._call(self.generators[0], "call", "seal"), SETUP_TIMEOUT_S)

    def _check_secrets(self, workers: Sequence[str]) -> None:
        """The server's token travels to each worker with the commands: only over comms the
        user secured (the scheduler and every chosen worker on tls://), or when the user
        confirmed plain TCP. The loopback is no exception: on a shared machine any local
        user who reaches a plain-TCP scheduler runs code in its workers and reads what
        they are sent."""
        plain = [a for a in (self.address, *workers) if not is_encrypted(a)]
        if not plain:
            return
        where = plain[0] if plain[0] == self.address else f"worker {plain[0]}"
        if not self.settings.cluster_plain_tcp:
            raise ClusterError(
                f"the load server's token would travel to the workers unencrypted ({where}): anyone who "
                "reaches the scheduler, on this machine or elsewhere, runs code on its workers and could read "
                "it; use tls:// with Dask's TLS settings (docs/cluster.md), or confirm with --cluster-plain-tcp"
            )
        self.notes.append(f"the server's token was sent to the generators over plain TCP ({where}), as confirmed")

    def _share_plan(self, clients: int) -> JobPlan:
        job = self.plan.job
        assert job.load is not None
        return replace(self.plan, job=replace(job, load=replace(job.load, clients=clients)))

    def _clock_exchange(self, actor: Any) -> tuple[float, float, float]:
        t0 = time.time()
        remote = actor.clock().result(timeout=CONNECT_TIMEOUT_S)
        return t0, remote, time.time()

    def _offset(self, generator: _Generator, least: int) -> merge.ClockOffset:
        """One measurement of `generator`'s clock (`clocks.measure`), more exchanges while it
        is known more loosely than a step allows."""
        limit = merge.late_start_limit_s(self.settings.duration_s)
        return clocks.measure(lambda: self._exchange(generator.actor), least, limit)

    def _measure_clocks(self) -> None:
        step_s = self.settings.duration_s
        for generator in self.generators:
            try:
                generator.offset = self._offset(generator, clocks.CLOCK_EXCHANGES)
            except replies.BadReply as exc:
                raise ClusterError(f"{generator.name} answered a clock exchange badly: {exc}") from None
            except Exception as exc:  # noqa: BLE001 - a worker's failure of any kind is named
                raise ClusterError(
                    self._lost(f"{generator.name} did not answer a clock exchange: {first_line(exc)}")
                ) from None
        problem = merge.misalignment_problem([g.offset for g in self.generators if g.offset is not None], step_s)
        if problem is not None:
            raise ClusterError(f"refused: {problem}")

    def _recheck_clocks(
        self, generators: Sequence[_Generator] = (), placing: bool = True
    ) -> dict[int, merge.ClockOffset]:
        """The offsets of `generators` (default: all) measured again, before a step
        (`placing`) or after it, by number; StepLost when one cannot be measured, or, to place
        a step, not closely enough (after it, a loose offset only widens what `clocks.moved`
        allows)."""
        limit = merge.late_start_limit_s(self.settings.duration_s)
        offsets: dict[int, merge.ClockOffset] = {}
        for generator in generators or self.generators:
            try:
                offset = self._offset(generator, clocks.RECHECK_EXCHANGES)
            except Exception as exc:  # noqa: BLE001 - a worker's failure of any kind is named
                raise StepLost(
                    self._lost(f"{generator.name}: its clock could not be read ({first_line(exc)})")
                ) from None
            problem = clocks.loose(offset, limit, self.settings.duration_s) if placing else None
            if problem is not None:
                raise StepLost(f"it could not be placed in time: {generator.name}: {problem}")
            offsets[generator.number] = offset
        return offsets

    # --- waiting on workers --------------------------------------------------------------------

    def _call(self, generator: _Generator, method: str, *args: Any) -> Any:
        """Call `method` on `generator`'s actor: its future, or `_Refused` when Dask refuses
        the call at once (so every failure is collected, and named, the same way)."""
        try:
            return getattr(generator.actor, method)(*args)
        except Exception as exc:  # noqa: BLE001 - Dask's refusal of any kind is this generator's failure
            return _Refused(exc)

    def _lost(self, text: str) -> str:
        """`text`, led by the scheduler's loss when that is what made the workers fail (its
        workers' calls then fail as "Worker holding Actor was lost")."""
        lost = scheduler_lost(self.client, self.address)
        return text if lost is None else f"{lost}: {text}"

    def _wait(
        self, generator: _Generator, future: Any, timeout: float, check: Callable[[Any], Any] | None = None
    ) -> Any:
        """One generator's answer (checked by `check`), or a ClusterError naming it."""
        done = self._gather([(generator, future)], timeout, "answering", check=check)
        return done[0]

    def _gather(
        self,
        calls: Sequence[tuple[_Generator, Any]],
        timeout: float,
        doing: str,
        progress: Callable[[float], None] | None = None,
        check: Callable[[Any], Any] | None = None,
    ) -> list[Any]:
        """Every call's answer; a ClusterError naming the generators that failed or were late
        (and the scheduler, when it was lost)."""
        results, failures = self._collect(calls, timeout, progress, check)
        if failures:
            raise ClusterError(self._lost(f"while {doing}: " + "; ".join(failures)))
        return results

    def _collect(
        self,
        calls: Sequence[tuple[_Generator, Any]],
        timeout: float,
        progress: Callable[[float], None] | None = None,
        check: Callable[[Any], Any] | None = None,
    ) -> tuple[list[Any], list[str]]:
        """Answers in call order, each passed through `check` (a `replies` checker; None
        for a failed one) and what failed, in words. A generator whose lease ran out
        (`Leases.gone`: its worker stopped answering) fails at once, not at the deadline."""
        start = time.monotonic()
        deadline = start + timeout
        results: list[Any] = [None] * len(calls)
        pending = dict(enumerate(calls))
        failures: list[str] = []
        while pending:
            for k, (generator, future) in list(pending.items()):
                if not future.done():
                    gone = self.leases.gone(generator.number)
                    if gone is not None:
                        del pending[k]
                        generator.silent = True
                        failures.append(f"{generator.name} failed: {gone}")
                    continue
                del pending[k]
                try:
                    answer = future.result()  # done: at once (a timeout of 0 would time out)
                    results[k] = answer if check is None else check(answer)
                except replies.BadReply as exc:
                    failures.append(f"{generator.name} answered badly: {exc}")
                except Exception as exc:  # noqa: BLE001 - a worker's failure of any kind is named
                    failures.append(f"{generator.name} failed: {first_line(exc)}")
            if not pending or time.monotonic() >= deadline:
                break
            if progress is not None:
                progress(min(1.0, (time.monotonic() - start) / max(timeout - STEP_GRACE_S, 1e-3)))
            time.sleep(POLL_S)
        for _k, (generator, _) in pending.items():
            generator.silent = True
            failures.append(f"{generator.name} did not answer within {timeout:.0f} s")
        return results, failures

    # --- what measure_size calls ---------------------------------------------------------------

    def pool_size(self) -> int:
        return self._pool

    def prepare(self, size: int) -> list[float]:
        calls = [(g, self._call(g, "call", "prepare", size)) for g in self.generators]
        answers = self._gather(calls, SETUP_TIMEOUT_S, "preparing", check=replies.prepared)
        self._pool = min(pool for _, pool in answers)
        self._sampled = False
        return [cost for costs, _ in answers for cost in costs]

    def check_tampering(self, size: int, result: SizeMeasured) -> None:
        """The first generator's tampered requests (the server's checks are the same for all):
        only the counts and words the check sets are taken from its answer."""
        first = self.generators[0]
        answer = self._wait(
            first, self._call(first, "call", "tamper", size, result), SETUP_TIMEOUT_S, replies.tampering
        )
        result.tamper_tried, result.tamper_rejected = answer.tried, answer.rejected
        result.tamper_failures, result.notes = answer.failures, answer.notes

    def calibrate(self) -> tuple[float, float]:
        first = self.generators[0]
        answer: tuple[float, float] = self._wait(
            first, self._call(first, "call", "calibrate"), SETUP_TIMEOUT_S, replies.calibration
        )
        return answer

    def run_step(self, rate: float, progress: Callable[[float], None]) -> tuple[LoadStep, MergedRecord]:
        """Every generator offers its share of `rate` from one agreed moment, placed on
        offsets measured just before the step and checked again after it; the merge.
        StepLost when no generator's record came back, or the step could not be placed."""
        settings = self.settings
        before = self._recheck_clocks()
        self._note_moves(before)
        slowest = max(offset.round_trip_s for offset in before.values())
        start = time.time() + START_MARGIN_S + 3 * slowest + self._late_s
        calls = []
        count = len(self.generators)
        for k, generator in enumerate(self.generators):
            # Interleaved, not aligned: the step has one schedule, and generator k sends its
            # requests j with j mod N = k (`LoadGenerator.run_step`), so together they offer
            # and count exactly what a single generator would. Aligned, N requests would
            # arrive at once every N intervals: a burst the server queues (measured: p50
            # twice one generator's with three); each rounding its own share, they sent up
            # to one request a generator more than the step's window holds.
            at = start + before[generator.number].offset_s
            calls.append((generator, self._call(generator, "call", "step", rate, count, k, at, not self._sampled)))
        ahead = start - time.time()  # the margin, the round trips and any extra agreed
        own_time = ahead + settings.warmup_s + settings.duration_s + max(MIN_DRAIN_S, settings.duration_s)
        reports, failures = self._collect(calls, own_time + STEP_GRACE_S, progress, replies.step_report)
        returned = [(g, r) for g, r in zip(self.generators, reports, strict=True) if isinstance(r, StepReport)]
        if failures:
            for generator, report in zip(self.generators, reports, strict=True):
                if not isinstance(report, StepReport):
                    self._stop(generator)
        if not returned:
            raise StepLost(self._lost("no generator returned it: " + "; ".join(failures)))
        problems = ["; ".join(failures) + ": their share of the rate is missing"] if failures else []
        problems += self._moved_during(before, [g for g, _ in returned])
        # Each record keeps how late its generator began; one that began beyond the clocks'
        # tolerance is marked against it, as a late sender is (app.core.load.merge.with_start).
        parts = [
            merge.with_start(replace(report.step, generator=g.number), report.started_late_s, settings.duration_s)
            for g, report in returned
        ]
        # The step offered the whole rate (the shares' sum, exactly); with a generator missing,
        # what it would have sent is not in the counts (the survivors', marked incomplete).
        incomplete = self._lost("; ".join(problems)) if problems else None
        step = replace(merge.merge_steps(parts), offered_per_s=rate, generators=tuple(parts), incomplete=incomplete)
        return step, self._merged_record([r for _, r in returned])

    def _note_moves(self, offsets: dict[int, merge.ClockOffset]) -> None:
        """A clock found elsewhere than when it was placed is said once (the step itself is
        placed on the new offset)."""
        for generator in self.generators:
            offset, placed = offsets[generator.number], generator.offset
            assert placed is not None
            if clocks.moved(placed, offset, merge.late_start_limit_s(self.settings.duration_s)) is not None:
                shift = offset.offset_s - placed.offset_s
                self.notes.append(
                    f"{generator.name}: its clock moved {shift:+.6f} s after it was placed; each step is placed on "
                    "its offset measured just before the step"
                )
                generator.offset = offset

    def _moved_during(self, before: dict[int, merge.ClockOffset], returned: Sequence[_Generator]) -> list[str]:
        """Why the shares of the generators that returned may not have run together: a clock
        that moved while the step ran, or that could not be measured again after it."""
        limit = merge.late_start_limit_s(self.settings.duration_s)
        try:
            after = self._recheck_clocks(returned, placing=False)
        except StepLost as exc:
            return [f"after the step: {exc}"]
        moved = [(g, clocks.moved(before[g.number], after[g.number], limit)) for g in returned]
        return [f"{g.name}: {problem}" for g, problem in moved if problem is not None]

    def _merged_record(self, reports: Sequence[StepReport]) -> MergedRecord:
        # A command that took longer than the margin to reach a generator (a busy machine)
        # made it begin late: the next step's start is agreed that much further ahead.
        self._late_s = min(MAX_EXTRA_MARGIN_S, 1.5 * max(0.0, *(r.started_late_s for r in reports)))
        self._sampled = self._sampled or any(r.latencies for r in reports)
        if reports[0].live:
            self.emit(SampleBatch(0, "latency", [x for r in reports for x in r.live]))
        return MergedRecord(
            latencies=[x for r in reports for x in r.latencies],
            server_ns=[x for r in reports for x in r.server_ns],
            refused=_sum_counts(r.refused for r in reports),
            abandoned=sum(r.abandoned for r in reports),
            sample_every=max(r.sample_every for r in reports),
            handshakes=merge.sum_handshakes([r.handshakes for r in reports]),
        )

    def tls_record(self) -> TlsRecord | None:
        """A tls13 job's handshakes of the size, every generator's added (None for any other job)."""
        if self.plan.job.family != Family.TLS:
            return None
        calls = [(g, self._call(g, "call", "tls")) for g in self.generators]
        answers = self._gather(calls, SETUP_TIMEOUT_S, "counting", check=replies.tls_record)
        return merge.merge_tls([answer for answer in answers if answer is not None])

    # --- ending --------------------------------------------------------------------------------

    def _stop(self, generator: _Generator) -> None:
        """End one generator at once. Nothing is sent to one whose worker went silent: its
        generator ends by its lease, and a message queued to a stopped worker would reach a
        released actor when it resumes."""
        self.leases.drop(generator.number)
        if generator.silent:
            return
        try:
            generator.actor.stop().result(timeout=2.0)
        except Exception:  # noqa: BLE001, S110 - a dead worker's generator died with it (its lease's pipe closed)
            pass
        # Stopped (or its worker gone): the job's end sends it nothing more (a polite close
        # to a dead worker waited out its 10 s).
        generator.silent = True

    def close(self, stopped: bool) -> None:
        """End every generator: at once when the run was stopped (or the scheduler is lost),
        else politely."""
        self.leases.stop()
        live = [g for g in self.generators if not g.silent]
        if stopped or scheduler_lost(self.client, self.address) is not None:
            futures = [self._call(g, "stop") for g in live]  # all at once: the supervisor's grace is short
            for future in futures:
                try:
                    future.result(timeout=2.0)
                except Exception:  # noqa: BLE001, S110 - see _stop
                    pass
            return
        for generator in live:
            try:
                generator.actor.close().result(timeout=10.0)
            except Exception:  # noqa: BLE001
                self._stop(generator)

    @property
    def max_rate_per_s(self) -> float:
        """Each generator may offer what one generator may."""
        return MAX_RATE_PER_S * max(1, len(self.generators))

    @property
    def places(self) -> tuple[LoadGeneratorPlace, ...]:
        return tuple(g.place() for g in self.generators)

    _pool = 0


def _sum_counts(counts: Iterator[dict[str, int]] | Sequence[dict[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for count in counts:
        for name, n in count.items():
            total[name] = total.get(name, 0) + n
    return total


@contextmanager
def _stop_on_sigterm() -> Iterator[Redelivery]:
    """SIGTERM (the supervisor's stop) raises `Stopped` here, so the generators are stopped;
    raised again after a callback that swallowed it (app.core.processes.signal_raise: Dask's
    client dies with weakref callbacks of its own)."""
    with Redelivery(Stopped) as redelivery:

        def stop(signum: int, frame: FrameType | None) -> None:
            redelivery.raise_from_handler(signum, frame, Stopped())

        previous = signal.signal(signal.SIGTERM, stop)
        try:
            yield redelivery
        finally:
            redelivery.wait_for_marks()
            signal.signal(signal.SIGTERM, previous)


def _describe_failure(exc: BaseException) -> str:
    """A cluster's refusal in its own words; anything else with its type."""
    return str(exc) if isinstance(exc, ClusterError) else describe_error(exc)


def run_cluster_load_job(plan: JobPlan, emit: Emit) -> None:
    """A load job's every message size, its generators placed on the plan's Dask cluster."""
    settings = plan.job.load
    assert settings is not None and settings.cluster is not None
    with _stop_on_sigterm():
        client = open_client(settings.cluster)
        driver = ClusterDriver(plan, emit, client)
        stopped = True
        try:
            driver.place()
            for index, size in enumerate(plan.job.message_sizes):
                emit(SizeStarted(index, size))
                result = measure_size(driver, index, size)
                assert result.load is not None
                result.load = replace(result.load, cluster=settings.cluster, generators=driver.places)
                result.notes.extend(driver.notes)
                emit(result.summarize())
                if result.error:
                    break
            stopped = False
        finally:
            driver.close(stopped)
            client.close(timeout=5)


def cluster_generator_main(conn: Any, plan: JobPlan) -> None:
    """Entry point of a cluster load job's coordinator process (multiprocessing target)."""
    child_entry(conn, lambda emit: run_cluster_load_job(plan, emit), _describe_failure)

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

import importlib.util
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from ipaddress import ip_address
from types import FrameType
from typing import Any
from uuid import uuid4

from app import __version__
from app.core.contracts.events import SampleBatch, SizeMeasured, SizeStarted
from app.core.contracts.plan import JobPlan
from app.core.load import merge
from app.core.load.cluster.pipe_frames import StepReport
from app.core.load.generator import MIN_DRAIN_S, Emit
from app.core.load.job import measure_size
from app.core.measure.harness import child_entry, describe_error
from app.core.records.job_conditions import LoadGeneratorPlace, LoadStep
from app.core.records.tls_record import TlsRecord, TlsStep
from app.core.schemes import registry
from app.core.schemes.base import KEYGEN_ON_SENDER
from app.core.settings.load import MAX_RATE_PER_S, LoadSettings
from app.core.vocab import Family

#: Connecting to the scheduler, and placing and starting a generator on a worker.
CONNECT_TIMEOUT_S = 20.0
#: Clock exchanges per worker; the least round trip of them gives the offset.
CLOCK_EXCHANGES = 12
#: A step starts this long after it is agreed (plus three of the slowest worker's round
#: trips): time for the command to reach every worker and its generator to set up.
START_MARGIN_S = 0.3
#: Beyond a step's own time (margin, warm-up, window, drain), how long its generators may
#: take to answer before they count as late.
STEP_GRACE_S = 20.0
#: Setup commands (connect, prepare, tamper, calibrate) may take this long: a prepare
#: includes a signer's key generation.
SETUP_TIMEOUT_S = 120.0
#: How often the coordinator wakes while it waits, to report progress and notice a stop.
POLL_S = 0.1
#: How often each generator's lease is renewed (it expires after worker_side.LEASE_S).
RENEW_S = 1.0


class ClusterError(RuntimeError):
    """The cluster cannot run this job (unreachable, too few workers, a loose clock, a
    version mismatch, a secret that would travel in clear): said before any step."""


class Stopped(Exception):
    """The run was stopped (SIGTERM from the supervisor)."""


def cluster_missing() -> str | None:
    """Why load from many machines cannot run here (Dask distributed not installed), or None."""
    if importlib.util.find_spec("distributed") is None:
        return (
            "load from many machines places generators with Dask distributed, which is not installed: "
            "pip install 'cryptobench[cluster]' (here and on every worker)"
        )
    return None


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def address_host(address: str) -> str:
    """The host of a Dask address (scheme://host:port)."""
    rest = address.partition("://")[2] or address
    return rest.rpartition(":")[0].strip("[]")


def server_address_for(scheduler: str) -> str:
    """The address this machine's load server listens on for generators placed through
    `scheduler`: the loopback for a scheduler on it (then every worker is on this machine),
    else this machine's address on the route to the scheduler (no packet is sent: a UDP
    socket's connect only picks the route)."""
    host = address_host(scheduler)
    if is_loopback(host):
        return "127.0.0.1"
    port = int(scheduler.rpartition(":")[2])
    infos = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_DGRAM)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(infos[0][4])
        return str(probe.getsockname()[0])


@dataclass
class _Generator:
    """One placed generator, as the coordinator holds it."""

    number: int
    worker: str
    actor: Any
    host: str = ""
    clients: int = 0
    offset: merge.ClockOffset | None = None

    def place(self) -> LoadGeneratorPlace:
        assert self.offset is not None
        return LoadGeneratorPlace(
            worker=self.worker,
            host=self.host,
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
        self.signer = registry.create(job.scheme, job.backend, job.params).info.family in KEYGEN_ON_SENDER
        self.generators: list[_Generator] = []
        self.notes: list[str] = []
        self._exchange = clock_exchange or self._clock_exchange
        self._run = uuid4().hex[:12]
        #: Whether a step has returned latency samples for this size (only the first does:
        #: `measure_size` keeps one step's, and a million samples a generator would cross
        #: the network for nothing).
        self._sampled = False
        self._renewing = threading.Event()
        self._renewer: threading.Thread | None = None

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
            identity = self._wait(generator, generator.actor.identity(), CONNECT_TIMEOUT_S)
            generator.host = str(identity.get("host", "?"))
            generator.clients = clients
            if identity.get("version") != __version__:
                raise ClusterError(
                    f"{generator.name} runs CryptoBench {identity.get('version')}, this machine {__version__}: "
                    "install the same version on every worker"
                )
        self._measure_clocks()
        for generator in self.generators:
            self._wait(generator, generator.actor.start(), CONNECT_TIMEOUT_S)
        self._renewer = threading.Thread(target=self._renew, name="cryptobench-lease", daemon=True)
        self._renewer.start()
        calls = [(g, g.actor.call("connect", self._share_plan(g.clients))) for g in self.generators]
        self._gather(calls, SETUP_TIMEOUT_S, "connecting")
        # Every client of every generator is in: the server may stop listening.
        self._wait(self.generators[0], self.generators[0].actor.call("seal"), SETUP_TIMEOUT_S)

    def _renew(self) -> None:
        """Renew every generator's lease until the driver closes (fire and forget: a lost
        renewal only brings the lease's end nearer, and a dead worker is noticed by the step)."""
        while not self._renewing.wait(RENEW_S):
            for generator in self.generators:
                try:
                    generator.actor.renew()
                except Exception:  # noqa: BLE001, S110 - the worker is gone; its step will say so
                    pass

    def _check_secrets(self, workers: Sequence[str]) -> None:
        """The server's token travels to each worker with the commands: only over comms the
        user secured (tls://), over a loopback that never leaves this machine, or when the
        user confirmed plain TCP."""
        if self.address.startswith("tls://"):
            return
        if is_loopback(address_host(self.address)) and all(is_loopback(address_host(w)) for w in workers):
            self.notes.append(
                "the server's token went to the generators over plain TCP on this machine's loopback only"
            )
            return
        if not self.settings.cluster_plain_tcp:
            raise ClusterError(
                f"the load server's token would travel to the workers over plain TCP ({self.address}): "
                "use tls:// with Dask's TLS settings, or confirm with --cluster-plain-tcp"
            )
        self.notes.append(
            f"the server's token was sent to the generators over plain TCP ({self.address}), as confirmed"
        )

    def _share_plan(self, clients: int) -> JobPlan:
        job = self.plan.job
        assert job.load is not None
        return replace(self.plan, job=replace(job, load=replace(job.load, clients=clients)))

    def _clock_exchange(self, actor: Any) -> tuple[float, float, float]:
        t0 = time.time()
        remote = float(actor.clock().result(timeout=CONNECT_TIMEOUT_S))
        return t0, remote, time.time()

    def _measure_clocks(self) -> None:
        step_s = self.settings.duration_s
        for generator in self.generators:
            exchanges = [self._exchange(generator.actor) for _ in range(CLOCK_EXCHANGES)]
            generator.offset = merge.clock_offset(exchanges)
        problem = merge.misalignment_problem([g.offset for g in self.generators if g.offset is not None], step_s)
        if problem is not None:
            raise ClusterError(f"refused: {problem}")

    # --- waiting on workers --------------------------------------------------------------------

    def _wait(self, generator: _Generator, future: Any, timeout: float) -> Any:
        """One generator's answer, or a ClusterError naming it."""
        done = self._gather([(generator, future)], timeout, "answering")
        return done[0]

    def _gather(
        self,
        calls: Sequence[tuple[_Generator, Any]],
        timeout: float,
        doing: str,
        progress: Callable[[float], None] | None = None,
    ) -> list[Any]:
        """Every call's answer; a ClusterError naming the generators that failed or were late."""
        results, failures = self._collect(calls, timeout, progress)
        if failures:
            raise ClusterError(f"while {doing}: " + "; ".join(failures))
        return results

    def _collect(
        self, calls: Sequence[tuple[_Generator, Any]], timeout: float, progress: Callable[[float], None] | None = None
    ) -> tuple[list[Any], list[str]]:
        """Answers in call order (None for a failed one) and what failed, in words."""
        start = time.monotonic()
        deadline = start + timeout
        results: list[Any] = [None] * len(calls)
        pending = dict(enumerate(calls))
        failures: list[str] = []
        while pending:
            for k, (generator, future) in list(pending.items()):
                if not future.done():
                    continue
                del pending[k]
                try:
                    results[k] = future.result()  # done: at once (a timeout of 0 would time out)
                except Exception as exc:  # noqa: BLE001 - a worker's failure of any kind is named
                    failures.append(f"{generator.name} failed: {_describe(exc)}")
            if not pending or time.monotonic() >= deadline:
                break
            if progress is not None:
                progress(min(1.0, (time.monotonic() - start) / max(timeout - STEP_GRACE_S, 1e-3)))
            time.sleep(POLL_S)
        for _k, (generator, _) in pending.items():
            failures.append(f"{generator.name} did not answer within {timeout:.0f} s")
        return results, failures

    # --- what measure_size calls ---------------------------------------------------------------

    def pool_size(self) -> int:
        return self._pool

    def prepare(self, size: int) -> list[float]:
        answers = self._gather(
            [(g, g.actor.call("prepare", size)) for g in self.generators], SETUP_TIMEOUT_S, "preparing"
        )
        self._pool = min(pool for _, pool in answers)
        self._sampled = False
        return [cost for costs, _ in answers for cost in costs]

    def check_tampering(self, size: int, result: SizeMeasured) -> None:
        """The first generator's tampered requests (the server's checks are the same for all)."""
        first = self.generators[0]
        answer = self._wait(first, first.actor.call("tamper", size, result), SETUP_TIMEOUT_S)
        for f in fields(result):
            setattr(result, f.name, answer[f.name])

    def calibrate(self) -> tuple[float, float]:
        first = self.generators[0]
        server_s, round_trip_s = self._wait(first, first.actor.call("calibrate"), SETUP_TIMEOUT_S)
        return float(server_s), float(round_trip_s)

    def run_step(self, rate: float, progress: Callable[[float], None]) -> tuple[LoadStep, MergedRecord]:
        """Every generator offers its share of `rate` from one agreed moment; the merge."""
        settings = self.settings
        slowest = max((g.offset.round_trip_s for g in self.generators if g.offset is not None), default=0.0)
        start = time.time() + START_MARGIN_S + 3 * slowest
        calls = []
        count = len(self.generators)
        for k, generator in enumerate(self.generators):
            assert generator.offset is not None
            # Interleaved, not aligned: the step has one schedule, and generator k sends its
            # requests j with j mod N = k (`LoadGenerator.run_step`), so together they offer
            # and count exactly what a single generator would. Aligned, N requests would
            # arrive at once every N intervals: a burst the server queues (measured: p50
            # twice one generator's with three); each rounding its own share, they sent up
            # to one request a generator more than the step's window holds.
            calls.append(
                (
                    generator,
                    generator.actor.call("step", rate, count, k, start + generator.offset.offset_s, not self._sampled),
                )
            )
        own_time = START_MARGIN_S + settings.warmup_s + settings.duration_s + max(MIN_DRAIN_S, settings.duration_s)
        reports, failures = self._collect(calls, own_time + STEP_GRACE_S, progress)
        returned = [(g, r) for g, r in zip(self.generators, reports, strict=True) if isinstance(r, StepReport)]
        # Each record keeps how late its generator began; one that began beyond the clocks'
        # tolerance is marked against it, as a late sender is (app.core.load.merge.with_start).
        parts = [
            merge.with_start(replace(report.step, generator=g.number), report.started_late_s, settings.duration_s)
            for g, report in returned
        ]
        incomplete = None
        if failures:
            for generator, report in zip(self.generators, reports, strict=True):
                if not isinstance(report, StepReport):
                    self._stop(generator)
            incomplete = "; ".join(failures) + ": their share of the rate is missing"
        if not parts:
            raise ClusterError(f"no generator returned the step at {rate:g}/s: " + "; ".join(failures))
        # The step offered the whole rate (the shares' sum, exactly); with a generator missing,
        # what it would have sent is not in the counts (the survivors', marked incomplete).
        step = replace(merge.merge_steps(parts), offered_per_s=rate, generators=tuple(parts), incomplete=incomplete)
        self._sampled = self._sampled or any(r.latencies for _, r in returned)
        if returned and returned[0][1].live:
            self.emit(SampleBatch(0, "latency", [x for _, r in returned for x in r.live]))
        record = MergedRecord(
            latencies=[x for _, r in returned for x in r.latencies],
            server_ns=[x for _, r in returned for x in r.server_ns],
            refused=_sum_counts(r.refused for _, r in returned),
            abandoned=sum(r.abandoned for _, r in returned),
            sample_every=max(r.sample_every for _, r in returned),
            handshakes=merge.sum_handshakes([r.handshakes for _, r in returned]),
        )
        return step, record

    def tls_record(self) -> TlsRecord | None:
        """A tls13 job's handshakes of the size, every generator's added (None for any other job)."""
        if self.plan.job.family != Family.TLS:
            return None
        answers = self._gather([(g, g.actor.call("tls")) for g in self.generators], SETUP_TIMEOUT_S, "counting")
        return merge.merge_tls([answer for answer in answers if isinstance(answer, TlsRecord)])

    # --- ending --------------------------------------------------------------------------------

    def _stop(self, generator: _Generator) -> None:
        try:
            generator.actor.stop().result(timeout=2.0)
        except Exception:  # noqa: BLE001, S110 - a dead worker's generator died with it (parent-death signal)
            pass

    def close(self, stopped: bool) -> None:
        """End every generator: at once when the run was stopped, else politely."""
        self._renewing.set()
        if stopped:
            futures = [g.actor.stop() for g in self.generators]  # all at once: the supervisor's grace is short
            for future in futures:
                try:
                    future.result(timeout=2.0)
                except Exception:  # noqa: BLE001, S110 - see _stop
                    pass
            return
        for generator in self.generators:
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


def _describe(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


def _sum_counts(counts: Iterator[dict[str, int]] | Sequence[dict[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for count in counts:
        for name, n in count.items():
            total[name] = total.get(name, 0) + n
    return total


@contextmanager
def _stop_on_sigterm() -> Iterator[None]:
    """SIGTERM (the supervisor's stop) raises `Stopped` here, so the generators are stopped."""

    def stop(signum: int, frame: FrameType | None) -> None:
        raise Stopped()

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _describe_failure(exc: BaseException) -> str:
    """A cluster's refusal in its own words; anything else with its type."""
    return str(exc) if isinstance(exc, ClusterError) else describe_error(exc)


def run_cluster_load_job(plan: JobPlan, emit: Emit) -> None:
    """A load job's every message size, its generators placed on the plan's Dask cluster."""
    from distributed import Client

    settings = plan.job.load
    assert settings is not None and settings.cluster is not None
    with _stop_on_sigterm():
        try:
            # A plain connect first: Dask's client retries a refused one until its timeout
            # (20 s for a scheduler that is simply not running).
            host, port = address_host(settings.cluster), int(settings.cluster.rpartition(":")[2])
            socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S).close()
            # The default client of this process: the actors' proxies find it by get_client().
            client = Client(settings.cluster, timeout=CONNECT_TIMEOUT_S)  # type: ignore[no-untyped-call]
        except (OSError, TimeoutError) as exc:
            raise ClusterError(f"cannot reach the Dask scheduler at {settings.cluster}: {_describe(exc)}") from None
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
            client.close(timeout=5)  # type: ignore[no-untyped-call]


def cluster_generator_main(conn: Any, plan: JobPlan) -> None:
    """Entry point of a cluster load job's coordinator process (multiprocessing target)."""
    child_entry(conn, lambda emit: run_cluster_load_job(plan, emit), _describe_failure)

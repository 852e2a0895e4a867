"""What every producer of results writes, for the producer x reader round trip
(tests/reliability/test_round_trip.py).

A producer is anything that writes a run: the runner in each mode and topology, the
cluster coordinator, the store (an interrupted run is the store's verdict on a run whose
process died). Each is run for real where that is cheap (a reduced job: a few samples, a
load step of a tenth of a second), and where it is not (a 404 s step at 2,500/s, 64
generators on 64 machines) its record is built by the producer's own code: the
generator's schedule and sampling rules, the HdrHistogram it records into, the
coordinator's `run_step` and merge with its generators' answers faked, `measure_size`.
Each producer leaves its run as every reader finds it: a results JSON written by the
exporter `run --json` and the window use, and a store holding that run alone.
"""

from __future__ import annotations

import math
import random
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import ExitStack
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from hdrh.histogram import HdrHistogram

from app.core.contracts.events import SizeMeasured
from app.core.contracts.plan import JobPlan, SessionPeer
from app.core.load import sweep, verdict
from app.core.load.cluster import coordinator
from app.core.load.cluster.pipe_frames import StepReport
from app.core.load.generator import sample_stride
from app.core.load.job import measure_size
from app.core.load.merge import ClockOffset
from app.core.profile.files import parse_profile
from app.core.profile.resolve import resolve_jobs
from app.core.records.job_conditions import LOAD_PERCENTILES, Load, LoadStep
from app.core.records.job_records import Validation
from app.core.records.load_histogram import HISTOGRAM_RANGE
from app.core.results import model as results
from app.core.results.model import RunResult
from app.core.run.runner import Runner
from app.core.store import runlock
from app.core.store.store import Store
from app.core.transport.connect import RemoteTarget
from app.core.vocab import JobStatus, RunStatus
from app.report.exporters import export
from tests.helpers import records

#: The scheduler the hand-built cluster jobs name (nothing listens there: their generators are faked).
FAKE_SCHEDULER = "tcp://10.1.2.3:8786"


@dataclass(frozen=True)
class Written:
    """One producer's run as its readers find it."""

    name: str
    run: RunResult
    #: The results JSON the producer's export wrote (`run --json`, File > Export).
    json_path: Path
    #: A store that holds this run alone, written as the producer writes it.
    store_path: Path

    @property
    def run_id(self) -> str:
        return self.run.id

    @property
    def document(self) -> dict[str, Any]:
        """The run as its JSON export holds it (what every reader must give back)."""
        return self.run.to_dict()


def written(name: str, run: RunResult, folder: Path, *, stored: bool = False) -> Written:
    """`run` exported as JSON into `folder`, and (unless the producer `stored` it there
    itself, as the runner does) added to a store of its own in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    json_path = export("json", run, folder / "run.json")
    store_path = folder / "store.sqlite3"
    if not stored:
        with Store(store_path) as store:
            store.add_run(run)
    return Written(name, run, json_path, store_path)


def run_profile(jobs: list[dict[str, Any]], folder: Path, name: str, **runner: Any) -> Written:
    """A real run of `jobs` by the runner, which writes it into its store as it goes."""
    folder.mkdir(parents=True, exist_ok=True)
    profile = parse_profile({"name": name, "jobs": jobs})
    with Store(folder / "store.sqlite3") as store:
        run = Runner(profile, store=store, cancel=runner.pop("cancel", threading.Event()), **runner).run()
    return written(name, run, folder, stored=True)


def failed_run(jobs: list[dict[str, Any]], folder: Path, **runner: Any) -> Written:
    """A run that failed: its first job ran (and failed), then the run ended before the
    others, as when an internal error stops the window's or the command line's run between
    jobs (`Runner.finish` then records it failed)."""
    folder.mkdir(parents=True, exist_ok=True)
    profile = parse_profile({"name": "failed", "jobs": jobs})
    with Store(folder / "store.sqlite3") as store:
        runner_ = Runner(profile, store=store, cancel=threading.Event(), **runner)
        run = runner_.start()
        try:
            runner_.record(run, runner_.execute(run, runner_.jobs[0], runner_.base_indexes[0]))
        finally:
            runner_.finish(run)
    assert run.status == RunStatus.FAILED
    return written("failed", run, folder, stored=True)


def remote_target(server: Any, token: bytes | None = None) -> RemoteTarget:
    host, port = server.address
    return RemoteTarget(host, port, token if token is not None else server.token)


def cancelled_run(jobs: list[dict[str, Any]], folder: Path) -> Written:
    """A run stopped by the user once its last job has sent its first samples (Stop in the
    window, Ctrl-C on the command line: the runner's cancel event): the jobs before it ok,
    that one cancelled mid-measurement."""
    from app.core.contracts.events import JobStarted, SampleBatch

    cancel = threading.Event()
    started: list[object] = []

    def on_event(event: object) -> None:
        if isinstance(event, JobStarted):
            started.append(event)
        elif isinstance(event, SampleBatch) and len(started) == len(jobs):
            cancel.set()

    return run_profile(jobs, folder, "cancelled", cancel=cancel, on_event=on_event)


def interrupted_run(source: Written, folder: Path) -> Written:
    """A run whose process died after its first job was stored: the store's own record of
    it (`interrupted`, the job it kept) is what every reader gets, here from a store whose
    writer let go of the run's lock as a dead process's kernel does."""
    folder.mkdir(parents=True, exist_ok=True)
    store_path = folder / "store.sqlite3"
    begun = replace(source.run, id=source.run.id[:-6] + "dead00", status=RunStatus.RUNNING, finished=None, jobs=[])
    first = replace(source.run.jobs[0], id=f"{begun.id}/{source.run.jobs[0].index}")
    with Store(store_path) as store:
        store.begin_run(begun)
        store.add_job(begun.id, first)
    runlock.release(store_path, begun.id)  # as the kernel does when the process dies
    with Store(store_path) as store:
        run = store.load_run(begun.id)
    assert run.status == RunStatus.INTERRUPTED and run.jobs
    json_path = export("json", run, folder / "run.json")
    return Written("interrupted", run, json_path, store_path)


# --- a long load step: 2,500/s for 404 s -------------------------------------------------------


def _recorded_step(rate: float, warmup_s: float, duration_s: float, rng: random.Random) -> LoadStep:
    """One step as the generator records it over a window it cannot run here: its schedule
    by the generator's rule (`step_schedule`), every request's latency in the generator's
    histogram, spread as an overloaded server spreads them (30 µs to seconds)."""
    from app.core.settings.load import step_schedule

    _, measured = step_schedule(rate, warmup_s, duration_s)
    histogram = HdrHistogram(*HISTOGRAM_RANGE)
    draws = 20_000
    for k in range(draws):  # every request once: `measured` in draws of equal weight
        weight = measured // draws + (1 if k < measured % draws else 0)
        if weight:
            histogram.record_value(max(30_000, int(math.exp(rng.gauss(math.log(2e6), 2.0)))), weight)
    assert histogram.get_total_count() == measured
    latency = {name: histogram.get_value_at_percentile(p) / 1e9 for name, p in LOAD_PERCENTILES}
    latency["max"] = histogram.get_max_value() / 1e9
    return LoadStep(
        offered_per_s=rate,
        achieved_per_s=measured / duration_s,
        errors=0,
        latency_s=latency,
        sent=measured,
        completed=measured,
        histogram=histogram.encode().decode("ascii"),
        generator_cpu_percent=97.0,
        send_lag_p99_s=0.0004,
        server_cpu_percent=99.0,
        latency_first_p50_s=1.5e-3,
        latency_last_p50_s=2.5e-3,
    )


def long_load_run(folder: Path, rates: tuple[float, ...] = (100.0, 2500.0), duration_s: float = 404.0) -> Written:
    """A load job of valid profile whose steps last 404 s (it cannot run in a test), the
    highest at 2,500/s: each step's counts and histogram as the generator records them
    (`_recorded_step`: at 2,500/s, 1,010,000 requests and an encoded histogram as long as a
    real one's, whose 15,408 characters every reader refused), the job's metrics the lowest
    step's samples by the generator's rule (`sample_stride`: 1 in k past 1,000,000)."""
    warmup_s = 0.5
    rng = random.Random(404)
    steps = verdict.with_calls([_recorded_step(rate, warmup_s, duration_s, rng) for rate in rates])
    lowest = steps[0].sent
    stride = sample_stride(lowest)
    kept = len(range(0, lowest, stride))
    latencies = [max(30e-6, math.exp(rng.gauss(math.log(2e-3), 1.0))) for _ in range(kept)]
    server = [max(20e-6, rng.gauss(300e-6, 30e-6)) for _ in range(kept)]
    knee, sustained, p99, saturated = verdict.summarise(steps)
    the_load = Load(
        clients=8,
        server_workers=1,
        steps=tuple(steps),
        duration_s=duration_s,
        warmup_s=warmup_s,
        pool=64,
        client_prepare_s=60e-6,
        server_request_s=300e-6,
        knee_per_s=knee,
        sustained_per_s=sustained,
        sustained_p99_s=p99,
        saturated=saturated,
    )
    notes = []
    if stride > 1:
        notes.append(
            f"latency and server: 1 in every {stride} of the {lowest:,} requests measured at {rates[0]:g}/s "
            f"({kept:,} samples; a metric keeps at most 1,000,000); the step's histogram counts them all"
        )
    run_id = "20260501-120000-long00"
    job = records.job(
        run_id,
        0,
        32,
        {"latency": latencies, "server": server},
        scheme="x25519",
        params={},
        label="X25519 + HKDF-SHA256 + AES-256-GCM [cryptography]",
        family="key-agreement",
        mode="load",
        load=the_load,
        notes=notes,
        started="2026-05-01T12:00:01+00:00",
        finished="2026-05-01T12:13:50+00:00",
    )
    run = records.run(run_id, [job], started="2026-05-01T12:00:00+00:00", finished="2026-05-01T12:14:00+00:00")
    return written("long load steps", run, folder)


# --- cluster jobs with their generators faked ----------------------------------------------------


def _done(value: Any = None, error: BaseException | None = None) -> Future[Any]:
    future: Future[Any] = Future()
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(value)
    return future


class FakeGeneratorActor:
    """A worker's generator as the coordinator sees it (its actor's futures): it answers
    each command at once, and a step with the record `step` makes of its share, or fails."""

    def __init__(self, step: Callable[[float, int, int], LoadStep] | None, failure: str | None = None) -> None:
        self.step, self.failure = step, failure

    def call(self, command: str, *args: Any) -> Future[Any]:
        if command == "prepare":
            return _done(([60e-6, 62e-6], 64))
        if command == "tamper":
            _, result = args
            assert isinstance(result, SizeMeasured)
            result.tamper_tried = result.tamper_rejected = 5
            return _done({f.name: getattr(result, f.name) for f in fields(result)})
        if command == "step":
            rate, generators, number, _start, _samples = args
            if self.failure is not None:
                return _done(error=RuntimeError(self.failure))
            assert self.step is not None
            part = self.step(rate, generators, number)
            return _done(StepReport(step=part, latencies=[2e-3, 3e-3], server_ns=[300_000, 310_000], sample_every=1))
        raise AssertionError(f"unexpected command {command}")

    def clock(self) -> Future[Any]:
        """The worker's clock, 1 ms ahead of this machine's (the offset the places record)."""
        return _done(time.time() + 1e-3)

    def stop(self) -> Future[Any]:
        return _done(True)


def generator_part(rate: float, generators: int, number: int, duration_s: float, missed: int = 0) -> LoadStep:
    """One generator's record of its part of a step's schedule, as `LoadGenerator.run_step`
    makes it: its share of the schedule (`schedule_share`), its own histogram, and its mark
    (`sweep.generator_saturation`) when it missed requests."""
    from app.core.settings.load import schedule_share, split_rate, step_schedule

    _, measured_all = step_schedule(rate, 0.0, duration_s)
    measured = schedule_share(measured_all, generators, number)
    sent = max(0, measured - missed)
    histogram = HdrHistogram(*HISTOGRAM_RANGE)
    for k in range(sent):
        histogram.record_value(200_000 + 1_000 * (k % 97) + 50_000 * number)
    latency = {name: histogram.get_value_at_percentile(p) / 1e9 for name, p in LOAD_PERCENTILES}
    latency["max"] = histogram.get_max_value() / 1e9
    reason = sweep.generator_saturation(0.0004, sent, measured, measured - sent, 0, sweep.BACKLOG_MAX)
    return LoadStep(
        offered_per_s=split_rate(rate, generators)[number],
        achieved_per_s=sent / (measured_all / rate),
        errors=0,
        latency_s=latency if sent else {},
        generator_saturated=reason is not None,
        sent=sent,
        missed=measured - sent,
        completed=sent,
        histogram=histogram.encode().decode("ascii"),
        generator_cpu_percent=35.0,
        send_lag_p99_s=0.0004,
        server_cpu_percent=99.0,
        saturation_reason=reason,
    )


def cluster_run(
    folder: Path,
    name: str,
    *,
    generators: int,
    failing: set[int],
    missed: int = 0,
    failure: str = "worker lost",
    host: Callable[[int], str] = lambda k: f"loadgen-{k + 1:02d}",
    rate: float = 1200.0,
    duration_s: float = 1.0,
) -> Written:
    """A cluster load job of `generators` generators through the coordinator's own code
    (`ClusterDriver.run_step`, the merge, `measure_size`, the job's record as
    `run_cluster_load_job` completes it), its generators faked: those in `failing` fail the
    step with `failure` (it is then incomplete, naming them), the others each miss `missed`
    requests of their share (their marks then join the step's)."""
    clients = max(generators, 4)
    profile = parse_profile(
        {
            "name": name,
            "jobs": [
                {
                    "scheme": "x25519",
                    "mode": "load",
                    "cluster": FAKE_SCHEDULER,
                    "cluster_plain_tcp": True,
                    "generators": generators,
                    "clients": clients,
                    "rates": [rate],
                    "duration_s": duration_s,
                    "warmup_s": 0.0,
                }
            ],
        }
    )
    (job,) = resolve_jobs(profile)
    plan = JobPlan(job, 0, SessionPeer("10.0.0.2", 4000, b"t" * 32))
    driver = coordinator.ClusterDriver(plan, lambda message: None, client=None)
    shares = coordinator.split_clients(clients, generators)
    for k in range(generators):
        actor = FakeGeneratorActor(
            lambda r, n, i: generator_part(r, n, i, duration_s, missed), failure if k in failing else None
        )
        place = coordinator._Generator(
            k + 1, f"tcp://10.1.{k // 250}.{k % 250 + 1}:40001", actor, host(k), shares[k], ClockOffset(1e-3, 4e-4)
        )
        driver.generators.append(place)
    measured = measure_size(driver, 0, 32)
    assert measured.load is not None
    the_load = replace(measured.load, cluster=FAKE_SCHEDULER, generators=driver.places)
    run_id = f"20260502-120000-clu{generators:03d}"
    summary = measured.summarize()
    result = records.job(
        run_id,
        0,
        32,
        {name: raw.samples for name, raw in summary.metrics.items() if raw.samples},
        scheme="x25519",
        params={},
        label="X25519 + HKDF-SHA256 + AES-256-GCM [cryptography]",
        family="key-agreement",
        mode="load",
        status=JobStatus.FAILED if measured.error else JobStatus.OK,
        error=measured.error,
        load=the_load,
        notes=[*measured.notes, *driver.notes],
        validation=Validation(
            checked=measured.checked,
            failed=measured.failed,
            tamper_tried=measured.tamper_tried,
            tamper_rejected=measured.tamper_rejected,
        ),
    )
    run = records.run(
        run_id,
        [result],
        status=RunStatus.FAILED if measured.error else RunStatus.FINISHED,
        finished="2026-01-01T00:01:00+00:00",
        name=name,
    )
    return written(name, run, folder)


def json_text(item: Written) -> str:
    return item.json_path.read_text(encoding="utf-8")


def to_json(run: RunResult) -> str:
    return results.to_json(run)


@dataclass
class Producers:
    """Every producer's run, made once when a test first asks for it (module-scoped: the
    real runs, a cluster and a serve are shared by every reader)."""

    folder: Path
    makers: dict[str, Callable[[Producers, Path], Written]]
    made: dict[str, Written]
    resources: ExitStack
    #: A Dask cluster on this machine for the cluster producers (None: no cluster extra).
    dask: Any = None

    def __getitem__(self, name: str) -> Written:
        if name not in self.made:
            self.made[name] = self.makers[name](self, self.folder / name.replace(" ", "-"))
        return self.made[name]

    def shared(self, key: str, open_: Callable[[], Any]) -> Any:
        """A resource producers share (a serve), opened once and closed with them."""
        found = getattr(self, "_shared", None)
        if found is None:
            found = {}
            self._shared = found
        if key not in found:
            found[key] = self.resources.enter_context(open_())
        return found[key]


def statuses(run: RunResult) -> list[str]:
    return [str(job.status) for job in run.jobs]


def iter_texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from iter_texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from iter_texts(item)

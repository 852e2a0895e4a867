"""Executes a profile: one child process per job, events out, results stored at once.

The runner is the supervisor both faces share: the CLI calls `Runner.run()` on its
main thread, the GUI's worker does the same on a pool thread. It never runs crypto
itself. Each profile job gets a fresh child process (no state inherited from the
GUI or from earlier jobs), watched by a psutil sampler thread here in the parent
(app.core.run.supervisor spawns, watches and stops them); raw samples come back over a
pipe and become statistics and warnings here. Each finished job is written to the
store before the next one starts.

Where the platform has it (Linux, macOS), children are forked from multiprocessing's
fork server, a clean interpreter started once per supervising process that imported
the measuring code and every scheme module ahead of time (`CHILD_PRELOAD`). A job
still gets a process of its own that runs nothing else and exits, but no longer pays
the interpreter start and the imports (0.3-0.5 s a job here; about 20 ms forked). The
server never runs a job, so a fork of it carries no state from an earlier one.
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import psutil

from app.core.contracts.events import (
    JobFinished,
    LogMessage,
    RawMetric,
    RunEvent,
    RunFinished,
    RunStarted,
    SizeMeasured,
)
from app.core.errors import RegistryError
from app.core.machine import preflight
from app.core.machine.environment import collect_environment
from app.core.processes.jobstart import start_method, warm_up_children
from app.core.profile.resolve import resolve_jobs
from app.core.records.job_conditions import Link
from app.core.records.job_records import (
    SAMPLING_INTERVAL_S,
    CpuUsage,
    MemoryUsage,
    ProcessUsage,
    ResourceSeries,
    Security,
    Validation,
    read_rss,
)
from app.core.records.link_path import emulator_late_text
from app.core.results.check_metrics import sample_magnitude_problem
from app.core.results.model import JobResult, MetricResult, RunResult
from app.core.run.child_failures import died_of_a_stop_signal
from app.core.run.supervisor import ChildSupervisor
from app.core.schemes import registry
from app.core.schemes.base import OPEN_METRIC, SEAL_METRIC
from app.core.settings.links import round_trip_ms
from app.core.settings.profile import MAX_LINK_SEED, Profile, ResolvedJob
from app.core.statistics import stability_warnings, stats
from app.core.store.store import Store, StoreError
from app.core.store.unstored import import_command, keep_unstored
from app.core.transport.connect import RemoteTarget
from app.core.vocab import JobStatus, LinkEmulation, LogLevel, Mode, Role, RunStatus

#: Receives every event of a run, on the runner's thread.
EventHandler = Callable[[RunEvent], None]

#: The error of a job the user stopped while it ran.
CANCELLED_BY_USER = "cancelled by the user"
#: The error of a job a stop reached before it started.
NOT_STARTED = "cancelled before start"
#: How long a job whose process died of a stop signal waits for its supervisor's own
#: handler to set the cancel flag (the window's runs on the GUI thread, not the runner's).
STOP_ATTRIBUTION_SECONDS = 0.5


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def preload() -> None:
    """Do now the one-time work a first run would otherwise do in the middle of a job.

    A GUI calls this once, idle, after its window shows. Left to the run, these lazy
    imports happen on a worker thread holding the interpreter lock (under PySide's
    import hook, which reads each new module's source), and froze the event loop for
    60-100 ms when the first job ended: `np.percentile` imports `numpy.ma` on first
    use; spawning the first child imports multiprocessing's spawn machinery; the first
    environment record imports `importlib.metadata`'s parsers and fills caches.
    """
    import importlib

    import numpy.ma  # noqa: F401

    for name in (
        "multiprocessing.spawn",
        "multiprocessing.resource_tracker",
        "multiprocessing.popen_spawn_win32" if os.name == "nt" else "multiprocessing.popen_spawn_posix",
        *(("multiprocessing.forkserver", "multiprocessing.popen_forkserver") if start_method() == "forkserver" else ()),
    ):
        importlib.import_module(name)
    warm_up_children()
    collect_environment()
    stats.summarize(np.arange(1.0, 33.0))


def new_run_id() -> str:
    """The time and 48 random bits: machines writing one shared store (docs/shared-store.md)
    never make the same id (24 bits met once in 16 million runs started in the same second)."""
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(6)


class Runner:
    """Runs every job of a profile in order.

    Args:
        profile: a validated profile.
        store: where each finished job is written at once (None: keep in memory only).
        on_event: called with every event (on the runner's thread).
        cancel: set it to stop; the running job's processes are killed and the job
            and every job after it are marked cancelled.
        source: the profile's file name, for error messages.
        remote: the `cryptobench serve` receiver that jobs in mode "remote" talk to.
        parallel_workers: how many jobs the caller runs at once (the GUI's pool); above
            one, the run and every job record why their timings may be inflated.

    A store that fails mid-run (disk full, folder gone read-only) does not stop the
    run: the error is logged once, `store_error` keeps it, and the results stay in
    memory (`current_run`) for the caller to show and export.
    """

    def __init__(
        self,
        profile: Profile,
        *,
        store: Store | None = None,
        on_event: EventHandler | None = None,
        cancel: threading.Event | None = None,
        source: str | None = None,
        remote: RemoteTarget | None = None,
        parallel_workers: int = 1,
        preflight_wait: bool = True,
        preflight_start: preflight.CpuTimes | None = None,
    ) -> None:
        self.profile = profile
        #: False: `start` never waits for the pre-flight's CPU-counter interval (the window
        #: calls `start` on its event loop, which must not stall for 0.2 s); steal and other
        #: load are then measured from `preflight_start`, or are "unknown" when the interval
        #: since the reading is shorter than the one the command line waits (one rule).
        self.preflight_wait = preflight_wait
        #: An earlier reading of the CPU counters (`preflight.RecentReadings`) to measure steal
        #: and other load from: a face that does not wait passes one at least the interval old.
        self.preflight_start = preflight_start
        self.parallel_workers = max(1, parallel_workers)
        self.current_run: RunResult | None = None
        self.store_error: str | None = None
        #: Where the run was kept when its store failed (`store_error`), else None.
        self.kept_file: Path | None = None
        self.remote = remote
        #: Every emulated link's draws come from this (the profile's, else a new one per run),
        #: recorded on each linked job's `link.seed`.
        self.link_seed = profile.link_seed if profile.link_seed is not None else secrets.randbelow(MAX_LINK_SEED + 1)
        self.jobs: list[ResolvedJob] = [
            job if job.link is None else replace(job, link=replace(job.link, seed=self.link_seed))
            for job in resolve_jobs(profile, source, has_remote=remote is not None)
        ]
        self._store = store
        #: The store to name in the command that stores a kept run later (`_keep_unstored`).
        self.store_target = store.target if store is not None else None
        self.on_event = on_event or (lambda event: None)
        self.cancel = cancel or threading.Event()
        self.total_jobs = sum(len(job.message_sizes) for job in self.jobs)
        #: The result index of each job's first message size.
        self.base_indexes = [sum(len(j.message_sizes) for j in self.jobs[:k]) for k in range(len(self.jobs))]
        self._scaling: stability_warnings.StabilityWarning | None = None
        self._parallel: stability_warnings.StabilityWarning | None = None

    @property
    def store(self) -> Store | None:
        """The store given to the constructor; None once it failed (`store_error` says why)."""
        return self._store

    def run(self) -> RunResult:
        """Run every job in order on this thread (the CLI's way)."""
        run = self.start()
        try:
            for job, base in zip(self.jobs, self.base_indexes):
                self.record(run, self.execute(run, job, base))
        except KeyboardInterrupt:
            self.cancel.set()  # Ctrl-C: the run is cancelled, not failed
            raise
        finally:
            self.finish(run)
        return run

    # --- the three steps, for callers that dispatch jobs themselves (the GUI's pool) --

    def start(self) -> RunResult:
        """Record the environment, open the run in the store, announce it."""
        check = preflight.enabled()
        # The interval starts at the caller's earlier reading, else here, overlapping the start-up work.
        sample = (self.preflight_start or preflight.begin_sample()) if check else None
        warm_up_children()  # the fork server imports while the environment is collected
        environment = collect_environment()
        stability = (
            (
                preflight.read_facts(start=sample)
                if self.preflight_wait
                else preflight.read_facts(start=sample, sleep=lambda _: None)
            )
            if check
            else []
        )
        if check:
            environment["stability"] = preflight.facts_to_dict(stability)
        # How job processes started (a fresh interpreter, or a fork of the preloaded fork
        # server): a condition of every timing and of every process's RSS.
        environment["job_start_method"] = start_method()
        run = RunResult(
            id=new_run_id(),
            started=now_iso(),
            status=RunStatus.RUNNING,
            environment=environment,
            profile=self.profile.to_dict(),
        )
        governors = environment.get("cpu", {}).get("governors") or []
        self._scaling = stability_warnings.frequency_scaling_warning(governors)
        self._parallel = stability_warnings.parallel_jobs_warning(self.parallel_workers, psutil.cpu_count() or 1)
        if self._parallel is not None:
            environment["parallel_workers"] = self.parallel_workers  # before the store records it
        if self._store is not None:
            self._store.begin_run(run)  # a store that cannot start a run refuses it, before any job
        self.current_run = run
        self.on_event(RunStarted(run.id, self.total_jobs, self.profile.name))
        for finding in (fact.finding for fact in stability):
            if finding is not None:  # one line each; none on a machine found fine
                self.on_event(
                    LogMessage(LogLevel.WARNING, f"Stability: {finding.found}: {finding.why}. Fix: {finding.fix}.")
                )
        if self._parallel is not None:
            self.on_event(LogMessage(LogLevel.WARNING, f"{self._parallel.message}. {self._parallel.fix}."))
        return run

    def execute(self, run: RunResult, job: ResolvedJob, base_index: int) -> list[JobResult]:
        """Run one profile job in its child processes; safe to call from a worker thread
        (it touches neither the store nor the run)."""
        results = self._run_job(job, run.id, base_index)
        for result in results:
            if result.status == JobStatus.OK:
                result.warnings.extend(w for w in (self._scaling, self._parallel) if w is not None)
        return results

    def record(self, run: RunResult, results: list[JobResult], *, stored: bool = False) -> None:
        """Add finished results to the run and (unless the caller already `stored` them
        through its own connection) to the store, on the thread that owns the store."""
        for result in results:
            run.jobs.append(result)
            if self._store is not None and not stored:
                try:
                    self._store.add_job(run.id, result)
                except StoreError as exc:
                    self._store_failed(exc)
            self.on_event(JobFinished(result.index, result))

    def _store_failed(self, exc: StoreError) -> None:
        """Stop writing to a store that failed; the run and its results go on in memory."""
        self.store_error = str(exc)
        if self._store is not None and self.current_run is not None:
            self._store.abandon_run(self.current_run.id)  # it reads interrupted; its kept file completes it
        self._store = None
        self.on_event(
            LogMessage(
                LogLevel.ERROR, f"{exc}. The run goes on; its results are kept in memory and can still be exported."
            )
        )

    def finish(self, run: RunResult) -> RunResult:
        run.jobs.sort(key=lambda job: job.index)
        run.finished = now_iso()
        if self.cancel.is_set():
            run.status = RunStatus.CANCELLED
        elif len(run.jobs) < self.total_jobs:
            run.status = RunStatus.FAILED
        else:
            run.status = RunStatus.FINISHED
        if self._store is not None:
            try:
                self._store.finish_run(run.id, run.status, run.finished)
            except StoreError as exc:
                self._store_failed(exc)
        if self.store_error is not None:
            self._keep_unstored(run)
        self.on_event(RunFinished(run))
        return run

    def _keep_unstored(self, run: RunResult) -> None:
        """The whole run in a results file of its own when the store failed (app/core/store/unstored.py)."""
        try:
            self.kept_file = keep_unstored(run)
        except OSError as exc:
            text = f"the run could not be kept in a file either ({exc.strerror or exc}); export it now"
        else:
            text = (
                f"The run's results are kept in {self.kept_file}; `{import_command(self.kept_file, self.store_target)}` "
                "adds them to the store once it is back"
            )
        self.on_event(LogMessage(LogLevel.ERROR, text))

    # --- one profile job = one child process --------------------------------------

    def _run_job(self, job: ResolvedJob, run_id: str, base_index: int) -> list[JobResult]:
        sizes = job.message_sizes
        if self.cancel.is_set():
            return [
                placeholder_result(job, run_id, base_index + i, size, JobStatus.CANCELLED, NOT_STARTED)
                for i, size in enumerate(sizes)
            ]
        return _JobRun(self, job, run_id, base_index).execute()


def placeholder_result(
    job: ResolvedJob, run_id: str, index: int, size: int, status: JobStatus, error: str | None
) -> JobResult:
    """A result for one message size of `job` with no measurement yet: the job's identity,
    its scheme's security metadata and notes, and `status`/`error`.

    The runner builds every result from one, and a size that never reported (cancelled,
    failed, or lost to an internal error in a face's worker) is recorded as one, so that
    tables and stores still show which job it was. `index` is the result's index in the
    run; its id is "<run_id>/<index>".
    """
    result = JobResult(
        id=f"{run_id}/{index}",
        index=index,
        scheme=job.scheme,
        backend=job.backend,
        params=dict(job.params),
        label=job.label,
        family=job.family.value,
        mode=job.mode,
        message_size=size,
        status=status,
        error=error,
        tcp_nodelay=job.tcp_nodelay if job.mode != Mode.OPERATIONS else None,
        link=job.link,  # the job's link as resolved, on every result (None: plain loopback, operations)
        exchange=job.exchange,  # a key-establishing job's pattern (None for any other family)
    )
    try:
        info = registry.create(job.scheme, job.backend, job.params, job.exchange).info
    except RegistryError:
        return result  # the child reports why; the metadata is simply unknown
    result.security = Security(
        classical_bits=info.security.classical_bits, pq_category=info.security.pq_category, insecure=info.insecure
    )
    result.notes = list(info.notes)
    if result.tcp_nodelay is False:
        result.notes.append("TCP_NODELAY off at both ends: Nagle's algorithm may hold back small writes")
    return result


class _JobRun:
    """One profile job: its processes (a ChildSupervisor) and the results built from
    what they measured, one per message size, as each size's measurement arrives."""

    def __init__(self, runner: Runner, job: ResolvedJob, run_id: str, base_index: int) -> None:
        self.runner, self.job, self.run_id, self.base = runner, job, run_id, base_index
        self.results: dict[int, JobResult] = {}
        self.supervisor = ChildSupervisor(
            job,
            base_index,
            emit=runner.on_event,
            cancel=runner.cancel,
            remote=runner.remote,
            on_measured=self._measured,
        )

    def execute(self) -> list[JobResult]:
        cancelled = self.supervisor.run() or self._stopped_by_the_user()
        results = []
        for i, size in enumerate(self.job.message_sizes):
            if i in self.results:
                results.append(self.results[i])
                continue
            if cancelled:
                status, error = JobStatus.CANCELLED, CANCELLED_BY_USER
            else:
                status, error = JobStatus.FAILED, self.supervisor.failure_cause()
            result = placeholder_result(self.job, self.run_id, self.base + i, size, status, error)
            placer = self.supervisor.placer
            if placer.allowed:  # a process started: where it was allowed and seen, over the whole job
                sampler = self.supervisor.sampler
                result.placement = placer.record(sampler.series if sampler is not None else {})
                result.notes.extend(placer.notes(unavailable=True))
            results.append(result)
        strangers = strangers_note(self.supervisor.strangers)
        if strangers is not None:  # on every size of the job, and once where the run's warnings go
            for result in results:
                result.notes.append(strangers)
            self.runner.on_event(LogMessage(LogLevel.WARNING, f"{self.job.label}: {strangers}"))
        return results

    def _stopped_by_the_user(self) -> bool:
        """Whether the job ended because the user stopped the run, even if its own processes
        acted on the stop first. A stop signal sent to the whole process group (GNU
        `timeout`, `kill -TERM -PGID`, a CI cancel) kills them as it reaches the supervisor:
        the job then ends on their deaths, with the cancel flag set a moment before (the
        CLI's handler) or just after (the window's, on its own thread); before, it was
        recorded "failed" ("worker process exited with code 255")."""
        cancel = self.runner.cancel
        if cancel.is_set():
            return True
        supervisor = self.supervisor
        if died_of_a_stop_signal(supervisor.exitcodes, supervisor.stopped_by_us):
            return cancel.wait(STOP_ATTRIBUTION_SECONDS)
        return False

    def _measured(self, measured: SizeMeasured, series: dict[str, ResourceSeries], window_start: float) -> None:
        self.results[measured.size_index] = self._build(measured, series, window_start)

    def _build(self, measured: SizeMeasured, series: dict[str, ResourceSeries], window_start: float) -> JobResult:
        job = self.job
        index = self.base + measured.size_index
        result = placeholder_result(job, self.run_id, index, measured.message_size, JobStatus.OK, None)
        result.finished = now_iso()
        result.notes.extend(measured.notes)
        result.wire_bytes = dict(measured.wire_bytes)
        result.load = measured.load
        result.tls = measured.tls
        result.tcp_info = dict(measured.tcp_info)
        result.path = self.supervisor.paths.get(measured.size_index)
        if result.path is not None and result.path.late:
            result.warnings.append(
                stability_warnings.StabilityWarning.make(
                    stability_warnings.WarningCode.LINK_EMULATOR_LATE, None, emulator_late_text(result.path)
                )
            )
        if result.tcp_info and job.link is not None and job.link.emulation == LinkEmulation.DELAY_LINE:
            result.notes.append(
                "TCP_INFO is of each end's connection to the link process: the kernel's RTT is "
                "that hop's, and includes the emulated delay only where an acknowledgement waited "
                "for the reply (delayed ACK)"
            )
        self._judge(result, measured)
        self._add_metrics(result, measured)
        short = short_link_note(job.link, result)
        if short is not None:
            result.notes.append(short)
        self._add_resources(result, measured, series, window_start)
        return result

    def _judge(self, result: JobResult, measured: SizeMeasured) -> None:
        """The size's validation counts, and its status: failed on the child's error or a
        tampered payload accepted; cancelled when the error came from the user's stop."""
        failures = list(measured.tamper_failures)
        result.validation = Validation(
            # Every producer counts a failed message as checked too (SizeMeasured.failure);
            # held here as well, where they all meet: the reader refuses failed > checked.
            checked=max(measured.checked, measured.failed),
            failed=measured.failed,
            tamper_tried=measured.tamper_tried,
            tamper_rejected=measured.tamper_rejected,
        )
        if measured.error and self.runner.cancel.is_set():
            # The stop reached this size's processes before the supervisor stopped them
            # (a signal to the whole process group): the user's stop, not a failure.
            result.status, result.error = JobStatus.CANCELLED, CANCELLED_BY_USER
            result.notes.append(f"as it was being stopped: {measured.error}")
        elif measured.error:
            result.status, result.error = JobStatus.FAILED, measured.error
        elif failures:
            result.status = JobStatus.FAILED
            result.error = "tampered payload not rejected: " + "; ".join(failures)

    def _add_metrics(self, result: JobResult, measured: SizeMeasured) -> None:
        """Each metric's statistics, and the job's throughput from its sealing metric; a
        metric whose samples could not have happened fails the size instead of being kept."""
        job = self.job
        seal, _ = _per_message_metrics(job)
        for name, raw in measured.metrics.items():
            if not raw.samples:
                continue
            impossible = sample_magnitude_problem(raw.samples)
            if impossible is not None:
                # Never stored: the store and every results reader refuse it (check.py), so
                # what the app writes stays inside what it reads back. The job says why.
                index, problem = impossible
                result.status = JobStatus.FAILED
                result.error = (
                    result.error or f"{name} sample {index}: {problem} (the clock or the measurement is broken)"
                )
                continue
            result.metrics[name] = self._metric(name, raw, measured.message_size, result)
            # Hand the interpreter lock over between metrics: in the GUI this runs on a
            # worker thread, and a GUI thread waiting to paint gets it now rather than
            # after the whole job's statistics (~100 ms for 100,000-sample metrics).
            time.sleep(0)
        if seal in result.metrics:
            result.throughput_bytes_per_s = result.metrics[seal].throughput_bytes_per_s

    def _add_resources(
        self, result: JobResult, measured: SizeMeasured, series: dict[str, ResourceSeries], window_start: float
    ) -> None:
        """CPU, memory and placement over the size's window (a remote receiver's own report
        where it was not sampled here), with the notes and warnings they call for."""
        job = self.job
        usage = {role: ProcessUsage.from_series(_slice(s, window_start)) for role, s in series.items()}
        if measured.receiver_resources is not None and Role.RECEIVER not in usage:
            reported = measured.receiver_resources
            usage[Role.RECEIVER] = ProcessUsage(
                samples=0,
                mean_percent=reported.get("cpu_percent_mean"),
                rss_peak_bytes=read_rss(reported.get("rss_bytes")),
                source="reported by the remote receiver: CPU time over the size, RSS at its end",
            )
        result.cpu = CpuUsage(processes=usage, interval_s=SAMPLING_INTERVAL_S)
        placer = self.supervisor.placer
        result.placement = placer.record({role: _slice(s, window_start) for role, s in series.items()})
        result.notes.extend(placer.notes())
        placement_warning = placer.warning()
        if placement_warning is not None:
            result.warnings.append(placement_warning)
        if not all(u.sampled for u in usage.values()):
            result.notes.append("CPU and RSS not sampled: the job ended within one 100 ms sampling interval")
        result.memory = MemoryUsage(
            rss_peak_bytes={role: u.rss_peak_bytes for role, u in usage.items()},
            traced_peak_bytes={
                name: m.traced_peak_bytes for name, m in result.metrics.items() if m.traced_peak_bytes is not None
            },
        )
        measuring = result.cpu.measuring(job.mode)
        busy = measuring.other_processes_mean_percent if measuring else None
        if busy is not None:
            warning = stability_warnings.machine_busy_warning(busy, psutil.cpu_count() or 1)
            if warning is not None:
                result.warnings.append(warning)

    def _metric(self, name: str, raw: RawMetric, size: int, result: JobResult) -> MetricResult:
        if raw.summary is not None:  # computed by the child (SizeMeasured.summarize)
            summary = raw.summary
            result.warnings.extend(raw.warnings)
        else:
            samples = np.asarray(raw.samples, dtype=np.float64)  # packed on the pipe: no per-float work
            summary = stats.summarize(samples, "s")
            result.warnings.extend(stability_warnings.check_stability(name, summary, samples, raw.warmup))
        per_message = name in _per_message_metrics(self.job)
        throughput = size / summary.median if per_message and size and summary.median > 0 else None
        return MetricResult(
            stats=summary,
            samples=raw.samples,
            batch=raw.batch,
            traced_peak_bytes=raw.traced_peak_bytes,
            throughput_bytes_per_s=throughput,
        )


def _per_message_metrics(job: ResolvedJob) -> tuple[str, str | None]:
    """The metrics that time one message on each side: (seal, open)."""
    if job.mode == Mode.OPERATIONS:
        return SEAL_METRIC[job.family], OPEN_METRIC.get(job.family)
    return "compute", "receiver"


def _slice(series: ResourceSeries, start: float) -> ResourceSeries:
    """The part of a resource series sampled since `start` (one message size's window)."""
    window = ResourceSeries(series.role)
    for i, t in enumerate(series.times):
        if t >= start:
            window.times.append(t)
            window.cpu_percent.append(series.cpu_percent[i])
            window.rss_bytes.append(series.rss_bytes[i])
            window.other_cpu_percent.append(series.other_cpu_percent[i])
            if i < len(series.cpu_nums):
                window.cpu_nums.append(series.cpu_nums[i])
    return window


#: Below this round trip a packet-path figure is at the edge of what the emulator resolves
#: (the fidelity target is 2 % of the model or 1 ms, whichever is larger).
RESOLVED_ROUND_TRIP_S = 0.001


def short_link_note(link: Link | None, result: JobResult) -> str | None:
    """On a packet-path link shorter than the emulator resolves, what this size's own floor
    round trip says about it: the model's round trip beside the measured one, when the
    emulator's and the kernels' cost is the larger share (None: nothing to say)."""
    floor = result.metrics.get("floor_rtt")
    if link is None or link.emulation != LinkEmulation.PACKET or floor is None:
        return None
    frame = result.wire_bytes.get("frame")
    pong = result.wire_bytes.get("ack_frame")
    if frame is None or pong is None:
        return None
    model = round_trip_ms(link, frame, pong) / 1000
    measured = floor.stats.median
    if model >= RESOLVED_ROUND_TRIP_S or measured <= 2 * model:
        return None
    return (
        f"this link's round trip in the model is {model * 1e6:.0f} µs, and the floor round trip over the packet "
        f"path took {measured * 1e6:.0f} µs: most of it is the emulator's and both kernels' own cost, which the "
        "packet path resolves to about 1 ms; read round trips over so short a link as upper bounds"
    )


def strangers_note(dropped: list[str]) -> str | None:
    """The note a job gets when connections that were not its own reached its ports.

    Each was closed before it proved itself (app.core.transport.doorway), side by side
    with the job's own peers and never in their way; nothing it sent was relayed,
    served or timed, and every port stopped listening once the job's peers were in."""
    if not dropped:
        return None
    count = len(dropped)
    first = dropped[0]
    return (
        f"{count} connection{'s' if count != 1 else ''} from outside the job reached its ports and "
        f"{'were' if count != 1 else 'was'} closed unserved (first: {first}); none held up the job's "
        "own peers, and nothing they sent was relayed, served or timed"
    )

"""Executes a profile: one child process per job, events out, results stored at once.

The runner is the supervisor both faces share: the CLI calls `Runner.run()` on its
main thread, the GUI's worker does the same on a pool thread. It never runs crypto
itself. Each profile job gets a fresh child process (no state inherited from the
GUI or from earlier jobs), watched by a psutil sampler thread here in the parent;
raw samples come back over a pipe and become statistics and warnings here. Each
finished job is written to the store before the next one starts.

Where the platform has it (Linux, macOS), children are forked from multiprocessing's
fork server, a clean interpreter started once per supervising process that imported
the measuring code and every scheme module ahead of time (`CHILD_PRELOAD`). A job
still gets a process of its own that runs nothing else and exits, but no longer pays
the interpreter start and the imports (0.3-0.5 s a job here; about 20 ms forked). The
server never runs a job, so a fork of it carries no state from an earlier one.
"""

from __future__ import annotations

import errno
import multiprocessing
import multiprocessing.connection as mp_connection
import os
import secrets
import signal
import threading
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from typing import Any

import numpy as np
import psutil

from app.core import stats
from app.core.environment import collect_environment
from app.core.events import (
    ChildFailed,
    JobFinished,
    JobProcesses,
    JobStarted,
    LogMessage,
    Progress,
    RawMetric,
    ResourceSample,
    RunFinished,
    RunStarted,
    SampleBatch,
    SizeMeasured,
    SizeStarted,
)
from app.core.job_records import (
    SAMPLING_INTERVAL_S,
    CpuUsage,
    MemoryUsage,
    ProcessUsage,
    Security,
    Validation,
)
from app.core.jobstart import child_context, start_method, stop_signals_blocked, warm_up_children
from app.core.measure import ResourceSampler, ResourceSeries
from app.core.ops import OpsPlan, child_main
from app.core.profile import Profile, ResolvedJob, resolve_jobs
from app.core.results import JobResult, MetricResult, RunResult
from app.core.schemes import registry
from app.core.schemes.base import OPEN_METRIC, SEAL_METRIC
from app.core.session.protocol import TOKEN_BYTES
from app.core.session.receiver import ReceiverPlan, receiver_main
from app.core.session.sender import RemoteTarget, SessionPlan, sender_main
from app.core.store import Store, StoreError
from app.core.vocab import JobStatus, LogLevel, Mode, Role, RunStatus

EventHandler = Callable[[Any], None]
#: How long the supervisor waits for a child's next message before checking for
#: cancel and child death; cancel is therefore honoured within this time.
POLL_SECONDS = 0.05
#: A child asked to stop gets this long to exit before it is killed.
TERMINATE_GRACE_SECONDS = 1.0
#: How long a loopback receiver may take to start listening (a cold spawn on a
#: loaded 2-core machine takes about a second).
PORT_TIMEOUT_SECONDS = 30.0
#: How long a process that is on its way out gets before we count it as stopped by us.
EXIT_SETTLE_SECONDS = 0.1
#: After the sender is gone, how long the receiver may take to report its outcome.
RECEIVER_GRACE_SECONDS = 2.0


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


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

    for name in ("multiprocessing.spawn", "multiprocessing.resource_tracker",
                 "multiprocessing.popen_spawn_win32" if os.name == "nt" else "multiprocessing.popen_spawn_posix",
                 *(("multiprocessing.forkserver", "multiprocessing.popen_forkserver")
                   if start_method() == "forkserver" else ())):
        importlib.import_module(name)
    warm_up_children()
    collect_environment()
    stats.summarize(np.arange(1.0, 33.0))


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


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

    def __init__(self, profile: Profile, *, store: Store | None = None, on_event: EventHandler | None = None,
                 cancel: threading.Event | None = None, source: str | None = None,
                 remote: RemoteTarget | None = None, parallel_workers: int = 1) -> None:
        self.profile = profile
        self.parallel_workers = max(1, parallel_workers)
        self.current_run: RunResult | None = None
        self.store_error: str | None = None
        self.remote = remote
        self.jobs: list[ResolvedJob] = resolve_jobs(profile, source, has_remote=remote is not None)
        self.store = store
        self.on_event = on_event or (lambda event: None)
        self.cancel = cancel or threading.Event()
        self.total_jobs = sum(len(job.message_sizes) for job in self.jobs)
        #: The result index of each job's first message size.
        self.base_indexes = [sum(len(j.message_sizes) for j in self.jobs[:k]) for k in range(len(self.jobs))]
        self._scaling: stats.StabilityWarning | None = None
        self._parallel: stats.StabilityWarning | None = None

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
        warm_up_children()  # the fork server imports while the environment is collected
        environment = collect_environment()
        # How job processes started (a fresh interpreter, or a fork of the preloaded fork
        # server): a condition of every timing and of every process's RSS.
        environment["job_start_method"] = start_method()
        run = RunResult(id=new_run_id(), started=now_iso(), status=RunStatus.RUNNING, environment=environment,
                        profile=self.profile.to_dict())
        governors = environment.get("cpu", {}).get("governors") or []
        self._scaling = stats.frequency_scaling_warning(governors)
        self._parallel = stats.parallel_jobs_warning(self.parallel_workers, psutil.cpu_count() or 1)
        if self._parallel is not None:
            environment["parallel_workers"] = self.parallel_workers  # before the store records it
        if self.store is not None:
            self.store.begin_run(run)  # a store that cannot start a run refuses it, before any job
        self.current_run = run
        self.on_event(RunStarted(run.id, self.total_jobs, self.profile.name))
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
            if self.store is not None and not stored:
                try:
                    self.store.add_job(run.id, result)
                except StoreError as exc:
                    self._store_failed(exc)
            self.on_event(JobFinished(result.index, result))

    def _store_failed(self, exc: StoreError) -> None:
        """Stop writing to a store that failed; the run and its results go on in memory."""
        self.store_error = str(exc)
        self.store = None
        self.on_event(LogMessage(LogLevel.ERROR, f"{exc}. The run goes on; its results are kept in memory "
                                          "and can still be exported."))

    def finish(self, run: RunResult) -> RunResult:
        run.jobs.sort(key=lambda job: job.index)
        run.finished = now_iso()
        if self.cancel.is_set():
            run.status = RunStatus.CANCELLED
        elif len(run.jobs) < self.total_jobs:
            run.status = RunStatus.FAILED
        else:
            run.status = RunStatus.FINISHED
        if self.store is not None:
            try:
                self.store.finish_run(run.id, run.status, run.finished)
            except StoreError as exc:
                self._store_failed(exc)
        self.on_event(RunFinished(run))
        return run

    # --- one profile job = one child process --------------------------------------

    def _run_job(self, job: ResolvedJob, run_id: str, base_index: int) -> list[JobResult]:
        sizes = job.message_sizes
        if self.cancel.is_set():
            return [self._empty_result(job, run_id, base_index + i, size, JobStatus.CANCELLED, "cancelled before start")
                    for i, size in enumerate(sizes)]
        return _ChildSupervisor(self, job, run_id, base_index).execute()

    def _empty_result(self, job: ResolvedJob, run_id: str, index: int, size: int, status: str,
                      error: str | None) -> JobResult:
        result = JobResult(
            id=f"{run_id}/{index}", index=index, scheme=job.scheme, backend=job.backend, params=dict(job.params),
            label=job.label, family=job.family.value, mode=job.mode, message_size=size, status=status, error=error,
            tcp_nodelay=job.tcp_nodelay if job.mode != Mode.OPERATIONS else None,
        )
        try:
            info = registry.create(job.scheme, job.backend, job.params).info
        except registry.RegistryError:
            return result  # the child reports why; the metadata is simply unknown
        result.security = Security(classical_bits=info.security.classical_bits,
                                   pq_category=info.security.pq_category, insecure=info.insecure)
        result.notes = list(info.notes)
        if result.tcp_nodelay is False:
            result.notes.append("TCP_NODELAY off at both ends: Nagle's algorithm may hold back small writes")
        return result


class _ChildSupervisor:
    """Spawns, watches and (on cancel) kills one job's child processes.

    Operations mode: one "worker". Loopback: a "receiver" that reports the port it
    bound, then a "sender" that connects to it. Remote: a "sender" only. The
    process that measures (worker or sender) sends events; a loopback receiver
    sends only its port, log lines and its outcome.
    """

    def __init__(self, runner: Runner, job: ResolvedJob, run_id: str, base_index: int) -> None:
        self.runner, self.job, self.run_id, self.base = runner, job, run_id, base_index
        self.current = base_index
        self.results: dict[int, JobResult] = {}
        self.window_start: dict[int, float] = {}
        self.child_error: str | None = None
        self.receiver_error: str | None = None
        self.start_error: str | None = None
        self.processes: dict[str, Any] = {}
        self.pipes: dict[str, Any] = {}
        self.exitcodes: dict[str, int | None] = {}
        self.stopped_by_us: set[str] = set()
        self.sampler: ResourceSampler | None = None
        self._context = child_context()

    def emit(self, event: Any) -> None:
        self.runner.on_event(event)

    def _start(self, role: str, target: Callable[..., None], plan: Any) -> None:
        """Spawn one child; _StartFailed when the system refuses (no file descriptor,
        memory or process slot left), which fails this job and lets the run go on."""
        try:
            receive, send = self._context.Pipe(duplex=False)
        except (OSError, MemoryError) as exc:
            raise _StartFailed(f"{role} process", exc) from None
        process = self._context.Process(target=target, args=(send, plan), daemon=True,
                                        name=f"cryptobench-job-{self.base}-{role}")
        try:
            with stop_signals_blocked():
                process.start()
        except (OSError, MemoryError) as exc:
            receive.close()
            send.close()
            raise _StartFailed(f"{role} process", exc) from None
        self.processes[role] = process
        self.pipes[role] = receive
        send.close()  # the child holds the only writer: EOF here means it is gone
        self.emit(JobProcesses(self.base, {r: p.pid for r, p in self.processes.items()}))

    def _session_plan(self, host: str, port: int, token: bytes) -> SessionPlan:
        job = self.job
        return SessionPlan(job_index=self.base, scheme=job.scheme, backend=job.backend, params=dict(job.params),
                           message_sizes=list(job.message_sizes), samples=job.samples, warmup=job.warmup,
                           keygen_samples=job.keygen_samples, pause_ms=job.pause_ms, tamper=job.tamper,
                           host=host, port=port, token=token, tcp_nodelay=job.tcp_nodelay)

    def execute(self) -> list[JobResult]:
        job = self.job
        cancelled = False
        exitcodes: dict[str, int | None] = {}
        try:
            if job.mode == Mode.OPERATIONS:
                self._start(Role.WORKER, child_main, OpsPlan(
                    job_index=self.base, scheme=job.scheme, backend=job.backend, params=dict(job.params),
                    message_sizes=list(job.message_sizes), samples=job.samples, warmup=job.warmup,
                    keygen_samples=job.keygen_samples, pause_ms=job.pause_ms, tamper=job.tamper))
                main = Role.WORKER
            elif job.mode == Mode.LOOPBACK:
                token = secrets.token_bytes(TOKEN_BYTES)
                self._start(Role.RECEIVER, receiver_main, ReceiverPlan(token))
                port = self._wait_for_port()
                if port is None:
                    cancelled = self.runner.cancel.is_set()
                    return self._finish(self._stop_all(), cancelled)
                self._start(Role.SENDER, sender_main, self._session_plan("127.0.0.1", port, token))
                main = Role.SENDER
            else:
                remote = self.runner.remote
                if remote is None:  # resolve_jobs refuses this; kept as a clear error
                    self.child_error = "mode remote needs a server: run with --remote HOST:PORT --token-file FILE"
                    return self._finish({}, False)
                self._start(Role.SENDER, sender_main, self._session_plan(remote.host, remote.port, remote.token))
                main = Role.SENDER
            try:
                self.sampler = ResourceSampler({role: p.pid for role, p in self.processes.items()},
                                               on_sample=self._on_resource)
                self.sampler.start()
            except (OSError, MemoryError, RuntimeError) as exc:  # RuntimeError: no thread can start
                self.sampler = None
                raise _StartFailed("resource sampler", exc) from None
            self.emit(JobStarted(self.base, job.label, job.message_sizes[0]))
            cancelled = self._pump(main)
        except _StartFailed as exc:
            self.start_error = str(exc)
            self.emit(LogMessage(LogLevel.ERROR, f"{job.label}: {exc}", self.current))
        finally:
            if self.sampler is not None:
                self.sampler.stop()
            exitcodes = self._stop_all()
        return self._finish(exitcodes, cancelled)

    def _wait_for_port(self) -> int | None:
        """The loopback receiver's bound port, or None (cancelled, or it failed)."""
        pipe = self.pipes[Role.RECEIVER]
        deadline = time.monotonic() + PORT_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self.runner.cancel.is_set():
                return None
            if pipe.poll(POLL_SECONDS):
                try:
                    kind, value = pipe.recv()
                except (EOFError, OSError):
                    break
                if kind == "port":
                    return int(value)
                if kind == "error":
                    self.receiver_error = str(value)
                    return None
        self.receiver_error = self.receiver_error or f"receiver did not start listening within {PORT_TIMEOUT_SECONDS:g} s"
        return None

    def _pump(self, main: str) -> bool:
        """Relay messages until the measuring process is done; True if cancelled."""
        open_pipes = dict(self.pipes)
        main_done_at: float | None = None
        while open_pipes:
            if self.runner.cancel.is_set():
                return True
            if main_done_at is not None and time.monotonic() - main_done_at > RECEIVER_GRACE_SECONDS:
                break  # the sender is gone; the receiver had its chance to report
            ready = mp_connection.wait(list(open_pipes.values()), timeout=POLL_SECONDS)
            for role in [r for r, pipe in open_pipes.items() if pipe in ready]:
                try:
                    message = open_pipes[role].recv()
                except (EOFError, OSError):
                    del open_pipes[role]
                    if role == main:
                        main_done_at = time.monotonic()
                    continue
                if role == Role.RECEIVER:
                    self._handle_receiver(message)
                else:
                    self._handle(message)
        return False

    def _handle_receiver(self, message: Any) -> None:
        kind, value = message
        if kind == "log":
            self.emit(LogMessage(LogLevel.WARNING, f"{self.job.label}: {value}", self.current))
        elif kind == "error":
            self.receiver_error = str(value)

    def _stop_all(self) -> dict[str, int | None]:
        """Stop every process of the job (idempotent); remember which ones we had to stop,
        so that our own SIGTERM is never reported as the cause of a failure."""
        for role, process in list(self.processes.items()):
            if process.pid is not None and process.is_alive():
                # A process whose pipe just closed may still be exiting (the kernel
                # closes its files before it can be reaped): a moment's wait keeps a
                # death from outside from being mistaken for our own stop.
                process.join(EXIT_SETTLE_SECONDS)
            if process.pid is not None and process.is_alive():
                self.stopped_by_us.add(role)
            self.exitcodes[role] = _stop_process(process)
            del self.processes[role]
        for pipe in self.pipes.values():
            pipe.close()
        return dict(self.exitcodes)

    def _on_resource(self, role: str, t: float, cpu: float, rss: int) -> None:
        self.emit(ResourceSample(self.current, role, t, cpu, rss))

    def _handle(self, message: Any) -> None:
        assert self.sampler is not None
        series = next(iter(self.sampler.series.values()))
        if isinstance(message, SampleBatch):
            self.emit(SampleBatch(self.current, message.metric, message.values))
        elif isinstance(message, Progress):
            self.emit(Progress(self.current, message.done, message.total))
        elif isinstance(message, SizeStarted):
            self.current = self.base + message.size_index
            self.window_start[message.size_index] = series.times[-1] if series.times else 0.0
            if message.size_index:
                self.emit(JobStarted(self.current, self.job.label, message.message_size))
        elif isinstance(message, SizeMeasured):
            start = self.window_start.get(message.size_index, 0.0)
            self.results[message.size_index] = self._build(message, self.sampler.series, start)
        elif isinstance(message, ChildFailed):
            self.child_error = message.error
            self.emit(LogMessage(LogLevel.ERROR, f"{self.job.label}: {message.error}", self.current))

    def _failure_cause(self, exitcodes: dict[str, int | None]) -> str:
        """One sentence naming why a job ended early, the most basic cause first."""
        if self.start_error:  # any process we stopped afterwards was stopped because of it
            return self.start_error
        for role in (Role.RECEIVER, Role.SENDER, Role.WORKER):
            code = exitcodes.get(role)
            if code is not None and code < 0 and role not in self.stopped_by_us:
                cause = _death_cause(role, code)
                if self.child_error and role == Role.RECEIVER:
                    cause += f" (sender: {self.child_error})"
                return cause
        if self.child_error:
            if self.receiver_error and self.receiver_error not in self.child_error:
                return f"{self.child_error} ({self.receiver_error})"
            return self.child_error
        if self.receiver_error:
            return self.receiver_error
        main = Role.WORKER if Role.WORKER in exitcodes else Role.SENDER
        return _death_cause(main, exitcodes.get(main))

    def _finish(self, exitcodes: dict[str, int | None], cancelled: bool) -> list[JobResult]:
        results = []
        for i, size in enumerate(self.job.message_sizes):
            if i in self.results:
                results.append(self.results[i])
                continue
            index = self.base + i
            if cancelled:
                status, error = JobStatus.CANCELLED, "cancelled by the user"
            else:
                status, error = JobStatus.FAILED, self._failure_cause(exitcodes)
            results.append(self.runner._empty_result(self.job, self.run_id, index, size, status, error))
        return results

    def _build(self, measured: SizeMeasured, series: dict[str, ResourceSeries], window_start: float) -> JobResult:
        job = self.job
        index = self.base + measured.size_index
        result = self.runner._empty_result(job, self.run_id, index, measured.message_size, JobStatus.OK, None)
        result.finished = now_iso()
        result.notes.extend(measured.notes)
        result.wire_bytes = dict(measured.wire_bytes)
        failures = list(measured.tamper_failures)
        result.validation = Validation(checked=measured.checked, failed=measured.failed,
                                       tamper_tried=measured.tamper_tried, tamper_rejected=measured.tamper_rejected)
        if measured.error:
            result.status, result.error = JobStatus.FAILED, measured.error
        elif failures:
            result.status = JobStatus.FAILED
            result.error = "tampered payload not rejected: " + "; ".join(failures)
        seal, _ = _per_message_metrics(job)
        for name, raw in measured.metrics.items():
            if not raw.samples:
                continue
            result.metrics[name] = self._metric(name, raw, measured.message_size, result)
            # Hand the interpreter lock over between metrics: in the GUI this runs on a
            # worker thread, and a GUI thread waiting to paint gets it now rather than
            # after the whole job's statistics (~100 ms for 100,000-sample metrics).
            time.sleep(0)
        if seal in result.metrics:
            result.throughput_bytes_per_s = result.metrics[seal].throughput_bytes_per_s
        usage = {role: ProcessUsage.from_series(_slice(s, window_start)) for role, s in series.items()}
        if measured.receiver_resources is not None and Role.RECEIVER not in usage:
            reported = measured.receiver_resources
            usage[Role.RECEIVER] = ProcessUsage(
                samples=0, mean_percent=reported.get("cpu_percent_mean"),
                rss_peak_bytes=int(reported["rss_bytes"]) if "rss_bytes" in reported else None,
                source="reported by the remote receiver: CPU time over the size, RSS at its end",
            )
        result.cpu = CpuUsage(processes=usage, interval_s=SAMPLING_INTERVAL_S)
        if not all(u.sampled for u in usage.values()):
            result.notes.append("CPU and RSS not sampled: the job ended within one 100 ms sampling interval")
        result.memory = MemoryUsage(
            rss_peak_bytes={role: u.rss_peak_bytes for role, u in usage.items()},
            traced_peak_bytes={name: m.traced_peak_bytes for name, m in result.metrics.items()
                               if m.traced_peak_bytes is not None},
        )
        measuring = result.cpu.measuring(job.mode)
        busy = measuring.other_processes_mean_percent if measuring else None
        if busy is not None:
            warning = stats.machine_busy_warning(busy, psutil.cpu_count() or 1)
            if warning is not None:
                result.warnings.append(warning)
        return result

    def _metric(self, name: str, raw: RawMetric, size: int, result: JobResult) -> MetricResult:
        if raw.summary is not None:  # computed by the child (SizeMeasured.summarize)
            summary = raw.summary
            result.warnings.extend(raw.warnings)
        else:
            samples = np.asarray(raw.samples, dtype=np.float64)  # packed on the pipe: no per-float work
            summary = stats.summarize(samples, "s")
            result.warnings.extend(stats.check_stability(name, summary, samples, raw.warmup))
        per_message = name in _per_message_metrics(self.job)
        throughput = size / summary.median if per_message and size and summary.median > 0 else None
        return MetricResult(stats=summary, samples=raw.samples, batch=raw.batch,
                            traced_peak_bytes=raw.traced_peak_bytes, throughput_bytes_per_s=throughput)


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
    return window


class _StartFailed(Exception):
    """The system refused to start a part of a job; str() is the job's one-line cause."""

    def __init__(self, what: str, exc: BaseException) -> None:
        super().__init__(f"cannot start the {what}: {_exhaustion_reason(exc)}")


def _exhaustion_reason(exc: BaseException) -> str:
    """What ran out, in words, with the errno name and the limit to raise."""
    if isinstance(exc, MemoryError):
        return "out of memory"
    if isinstance(exc, RuntimeError):  # threading: "can't start new thread"
        return f"{exc} (thread or process limit reached: `ulimit -u`)"
    code = getattr(exc, "errno", None)
    text = getattr(exc, "strerror", None) or str(exc)
    hint = {errno.EMFILE: "this process's open-file limit is reached: raise `ulimit -n`",
            errno.ENFILE: "the system's open-file table is full",
            errno.EAGAIN: "process or thread limit reached: `ulimit -u`",
            errno.ENOMEM: "out of memory"}.get(code) if code is not None else None
    name = errno.errorcode.get(code, "") if code is not None else ""
    return f"{text} ({name}{': ' + hint if hint else ''})" if name else text


def _death_cause(role: str, exitcode: int | None) -> str:
    if exitcode is None:
        return f"{role} process did not report a result"
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            name = f"signal {-exitcode}"
        return f"{role} process was killed by {name}"
    return f"{role} process exited with code {exitcode} before reporting a result"


def _stop_process(process: Any) -> int | None:
    """Make sure a child is gone: terminate, wait briefly, then kill. Returns its exit code."""
    if process.pid is None:
        return None
    if process.is_alive():
        process.terminate()
        process.join(TERMINATE_GRACE_SECONDS)
    if process.is_alive():
        process.kill()
    process.join(5)
    exitcode: int | None = process.exitcode
    if exitcode is not None:
        process.close()
    return exitcode

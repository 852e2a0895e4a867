"""Runs a profile from the GUI: a worker pool of its own, events drained by one timer.

Each profile job becomes a `JobRunnable` in a `QThreadPool` owned by the controller
(not the global pool, which other Qt code may use). The runnable supervises the
job's child processes through the core runner, exactly as the CLI does; the GUI
thread never runs crypto and never blocks on a child. Events from worker threads go
into an `EventBuffer`; one GUI timer drains it 30 times a second and hands the
batch to the window, so 100,000 samples cost a few hundred slot calls, not 100,000.
The store is touched only on the GUI thread (SQLite connections are per thread).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, QThreadPool, QTimer, Signal

from app.core.contracts.events import LogMessage, RunEvent
from app.core.machine import preflight
from app.core.results.model import JobResult, RunResult
from app.core.run.runner import Runner, placeholder_result
from app.core.settings.profile import Profile
from app.core.store import store as store_module
from app.core.store.store import Store, StoreUnreachable
from app.core.transport.connect import RemoteTarget
from app.core.vocab import JobStatus, LogLevel
from app.gui.pool_task import PoolTask, Progress

DRAIN_INTERVAL_MS = 33  # ~30 Hz: smooth enough for live plots, cheap for the event loop
#: How often the idle window reads the CPU counters for the next run's pre-flight: a run's
#: interval is then between the pre-flight's 0.2 s and this plus 0.2 s.
READING_INTERVAL_MS = 1000


class EventBuffer:
    """A thread-safe list of events: workers append, the GUI timer takes them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: list[RunEvent] = []

    def push(self, event: RunEvent) -> None:
        with self._lock:
            self._events.append(event)

    def take(self) -> list[RunEvent]:
        with self._lock:
            events, self._events = self._events, []
        return events


@dataclass(frozen=True)
class JobOutcome:
    """What a `JobRunnable` hands back to the GUI thread."""

    number: int  # the profile job's position in the runner's jobs
    results: list[JobResult]
    store_problem: str | None  # why the results could not be stored, for the log


class JobRunnable(PoolTask[JobOutcome]):
    """One profile job on a pool thread: supervise its processes, then write its results
    to the store through this thread's own connection (serializing a 100,000-sample
    job takes longer than a GUI frame, so it must not happen on the GUI thread)."""

    def __init__(
        self,
        runner: Runner,
        run: RunResult,
        number: int,
        store_factory: Callable[[], Store | None],
    ) -> None:
        super().__init__(self._execute)
        self.runner, self.run_result, self.number = runner, run, number
        self.store_factory = store_factory
        self.setAutoDelete(True)

    def _execute(self, _progress: Progress) -> JobOutcome:
        job = self.runner.jobs[self.number]
        base = self.runner.base_indexes[self.number]
        try:
            results = self.runner.execute(self.run_result, job, base)
        except Exception as exc:  # noqa: BLE001 - a bug in the supervisor must not hang the run
            results = []
            for k, size in enumerate(job.message_sizes):
                failed = placeholder_result(
                    job,
                    self.run_result.id,
                    base + k,
                    size,
                    JobStatus.FAILED,
                    f"internal error: {type(exc).__name__}: {exc}",
                )
                results.append(failed)
        problem = None
        try:
            store = _open_waiting(self.store_factory)
            if store is not None:
                with store:
                    for result in results:
                        store.add_job(self.run_result.id, result)
        except Exception as exc:  # noqa: BLE001 - reported in the log; the results stay on screen
            problem = f"could not store job results: {type(exc).__name__}: {exc}"
        return JobOutcome(self.number, results, problem)


def _open_waiting(factory: Callable[[], Store | None]) -> Store | None:
    """The job's store, waiting for a shared server that is away for a moment (a routine
    restart) as a write through an open store does (`store.RECONNECT_SECONDS`), on this pool
    thread: a job finished during a restart is stored once the server is back, not kept
    out of the store."""
    deadline = time.monotonic() + store_module.RECONNECT_SECONDS
    pause = 0.05
    while True:
        try:
            return factory()
        except StoreUnreachable:
            if time.monotonic() >= deadline:
                raise
        time.sleep(pause)
        pause = min(1.0, pause * 2)


class RunController(QObject):
    """Starts, watches and stops one run at a time.

    Signals carry batches: `events(list)` every drain tick with everything that
    arrived, `run_finished(RunResult)` once all jobs are recorded.
    """

    events = Signal(list)
    run_finished = Signal(object)

    def __init__(
        self, parent: QObject | None = None, workers: int = 1, store_factory: Callable[[], Store | None] | None = None
    ) -> None:
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(max(1, workers))
        self.store_factory = store_factory or (lambda: Store())
        self.buffer = EventBuffer()
        self.timer = QTimer(self)
        self.timer.setInterval(DRAIN_INTERVAL_MS)
        self.timer.timeout.connect(self.drain)
        self.cancel = threading.Event()
        self.runner: Runner | None = None
        self.run: RunResult | None = None
        self.store: Store | None = None
        self._pending: set[int] = set()
        self._runnables: list[JobRunnable] = []
        # The pre-flight's CPU counters, read now and then while no run is going, so a run
        # measures other programs' load over as long an interval as `cryptobench run` does
        # without stalling the event loop (app/core/machine/preflight.py, DEFAULT_INTERVAL).
        self.readings = preflight.RecentReadings()
        self.reading_timer = QTimer(self)
        self.reading_timer.setInterval(READING_INTERVAL_MS)
        self.reading_timer.timeout.connect(self.readings.take)
        if preflight.enabled():
            self.readings.take()
            self.reading_timer.start()
        self._reading = self.reading_timer.isActive()

    @property
    def running(self) -> bool:
        return self.run is not None

    def set_workers(self, workers: int) -> None:
        self.pool.setMaxThreadCount(max(1, workers))

    def start(self, profile: Profile, remote: RemoteTarget | None = None, source: str | None = None) -> RunResult:
        """Begin a run (raises ProfileError or StoreError before anything starts)."""
        if self.running:
            raise RuntimeError("a run is already in progress")
        self.cancel = threading.Event()
        # Parallel jobs perturb each other: the runner records it in the run and on every job.
        store = self.store_factory()
        try:
            runner = Runner(
                profile,
                store=store,
                on_event=self.buffer.push,
                cancel=self.cancel,
                source=source,
                remote=remote,
                parallel_workers=self.pool.maxThreadCount(),
                preflight_wait=False,
                preflight_start=self.readings.start(),
            )
            run = runner.start()
        except BaseException:
            if store is not None:
                store.close()  # a profile that cannot run, or a store that cannot begin it: not kept open
            raise
        self.store, self.runner, self.run = store, runner, run
        self.reading_timer.stop()  # no readings while jobs are timed
        self._pending = set(range(len(runner.jobs)))
        self._runnables = []
        for number in range(len(runner.jobs)):
            runnable = JobRunnable(runner, self.run, number, self.store_factory)
            runnable.signals.finished.connect(self._job_done)
            runnable.signals.failed.connect(lambda message, n=number: self._job_lost(n, message))
            self._runnables.append(runnable)  # keep the signal objects alive until they fire
            self.pool.start(runnable)
        self.timer.start()
        return self.run

    def stop(self) -> None:
        """Stop: running jobs' processes are killed, queued jobs become cancelled."""
        self.cancel.set()

    def _job_done(self, outcome: JobOutcome) -> None:
        if self.runner is None or self.run is None:
            return
        if outcome.store_problem:
            self.buffer.push(LogMessage(LogLevel.ERROR, outcome.store_problem))
            if self.runner.store_error is None:  # the run is then kept whole in a file at its end (unstored.py)
                self.runner.store_error = outcome.store_problem
        self.runner.record(self.run, outcome.results, stored=True)
        self._pending.discard(outcome.number)
        if not self._pending:
            self._finish()

    def _job_lost(self, number: int, message: str) -> None:
        """A job whose runnable itself failed has no results; the run goes on without
        them and ends "failed", rather than waiting for them forever."""
        if self.runner is None or self.run is None:
            return
        self.buffer.push(LogMessage(LogLevel.ERROR, f"job {number + 1}: {message}"))
        self._pending.discard(number)
        if not self._pending:
            self._finish()

    def _finish(self) -> None:
        assert self.runner is not None and self.run is not None
        run = self.runner.finish(self.run)
        if self.store is not None:
            self.store.close()
        self.drain()
        self.timer.stop()
        self.runner, self.run, self.store = None, None, None
        self._runnables = []
        if self._reading:  # read again from now: the run's own load is not the next run's
            self.readings.readings = []
            self.readings.take()
            self.reading_timer.start()
        self.run_finished.emit(run)

    def drain(self) -> None:
        batch = self.buffer.take()
        if batch:
            self.events.emit(batch)

    def shutdown(self, timeout_ms: int = 30_000) -> bool:
        """Cancel and wait for the workers (on quit): no process is left behind."""
        self.cancel.set()
        done = self.pool.waitForDone(timeout_ms)
        # The workers' finished signals are queued; deliver them so the store is closed.
        from PySide6.QtCore import QCoreApplication

        QCoreApplication.processEvents()
        return bool(done)

"""Spawns, watches and (on cancel) kills one job's child processes.

Which processes a job has, and in what order they start, is its topology: one start
function each in app.core.run.topologies, called through the supervisor's `start_child`,
`wait_for_port`, `session_plan` and `start_packet_path`. Operations mode: one worker. Load: a load server (app.core.load.server), then the load
generator that drives every client connection (app.core.load.job). Loopback: a receiver that reports the port it bound, then
a sender that connects to it; over an emulated link (`ResolvedJob.link`), a link
process (app.core.link) between them, which listens on a port of its own that the
sender connects to instead. Remote: a sender only. Every child gets its plan up front
(app.core.contracts.plan) and answers over one pipe with the typed messages of app.core.contracts.events:
the process that measures (worker or sender) sends `MeasuringMessage`s, a loopback
receiver `ReceiverMessage`s, a link `LinkMessage`s. The supervisor relays what the
faces show as `RunEvent`s, hands each size's measurement to the runner as it arrives,
and owns the killing: a child is stopped by its parent, never left behind
(`stop_process`).
"""

from __future__ import annotations

import multiprocessing.connection as mp_connection
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, assert_never

from app.core.contracts.events import (
    ChildFailed,
    JobProcesses,
    JobStarted,
    LinkDone,
    LinkMessage,
    Listening,
    LogMessage,
    MeasuringMessage,
    PathReady,
    PeerDropped,
    Progress,
    ReceiverDone,
    ReceiverMessage,
    ResourceSample,
    RunEvent,
    SampleBatch,
    SizeMeasured,
    SizeStarted,
)
from app.core.contracts.plan import JobPlan, SessionPeer
from app.core.link.packet_link import PacketPathPlan, late_limit, packet_link_main, queue_bounds
from app.core.link.path_counters import LATE_MAX, READ_LATE_MAX, SLOTS, path_over, snapshot
from app.core.link.timeouts import one_way_seconds, peer_over_link
from app.core.machine.placement import Placer, roles_of
from app.core.measure.sampler import ResourceSampler
from app.core.processes.continued import SLOTS as CONTINUE_SLOTS
from app.core.processes.continued import run_counting
from app.core.processes.deadlines import (
    StartCancelled,
    StartStalled,
    is_running,
    start_process,
    stop_process,
)
from app.core.processes.jobstart import child_context
from app.core.processes.watchdog import FrozenWatch
from app.core.records.job_records import ResourceSeries
from app.core.records.link_path import LinkPath
from app.core.run.child_failures import StartFailed, death_cause
from app.core.run.topologies import TOPOLOGIES, JobRefused, PlanT, topology_of
from app.core.settings.profile import ResolvedJob
from app.core.transport.connect import RemoteTarget
from app.core.transport.netns import device_drops
from app.core.transport.wire import HEADER_SIZE
from app.core.vocab import Family, LogLevel, Mode, Role, measuring_role

#: How long the supervisor waits for a child's next message before checking for
#: cancel and child death; cancel is therefore honoured within this time.
POLL_SECONDS = 0.05
#: How long a loopback receiver may take to start listening (a cold spawn on a
#: loaded 2-core machine takes about a second).
PORT_TIMEOUT_SECONDS = 30.0
#: How long a process that is on its way out gets before we count it as stopped by us.
EXIT_SETTLE_SECONDS = 0.1
#: After the sender is gone, how long the receiver may take to report its outcome.
RECEIVER_GRACE_SECONDS = 2.0

#: Called with each size's measurement as it arrives: what the child measured, the
#: sampler's series by role, and when (in those series' time) the size's window began.
OnMeasured = Callable[[SizeMeasured, dict[str, ResourceSeries], float], None]


class ChildSupervisor:
    """Runs one profile job's child processes from spawn to exit.

    Args:
        job: the job, as the profile layer resolved it.
        first_index: the result index of the job's first message size.
        emit: where run events go (the runner's `on_event`).
        cancel: set it to stop; the processes are killed within POLL_SECONDS.
        remote: the `cryptobench serve` receiver, for a job in mode remote.
        on_measured: given each size's measurement as it arrives (see `OnMeasured`).

    `run()` returns once every process is gone; `failure_cause()` then names why sizes
    that reported nothing are missing.
    """

    def __init__(
        self,
        job: ResolvedJob,
        first_index: int,
        *,
        emit: Callable[[RunEvent], None],
        cancel: threading.Event,
        remote: RemoteTarget | None,
        on_measured: OnMeasured,
    ) -> None:
        self.job, self.base = job, first_index
        self.emit, self.cancel, self.remote, self.on_measured = emit, cancel, remote, on_measured
        self.current = first_index
        self.window_start: dict[int, float] = {}
        self.child_error: str | None = None
        self.receiver_error: str | None = None
        self.link_error: str | None = None
        self.start_error: str | None = None
        #: The first process of the job that ended while the job still needed it without
        #: saying why (killed, crashed): the job ended with it, and it is named first.
        self.died: Role | None = None
        #: Helpers (receiver, link) that said they were done, or failed with a reason.
        self._finished: set[Role] = set()
        self._failed: set[Role] = set()
        #: The watch's count of stops seen when each size started (a size measured across a stop fails).
        self._stops_at_start: dict[int, int] = {}
        #: The job's processes' shared count of continues after a stop (app.core.processes.continued),
        #: and its value as each size started, stamped by the measuring process.
        self.continues: Any = None
        self._continue_slots: dict[Role, int] = {}
        self._continues_at_start: dict[int, int] = {}
        self._slots_at_start: dict[int, list[int]] = {}
        #: What each connection closed unserved (not the job's own peer) was told, in order.
        self.strangers: list[str] = []
        self.processes: dict[Role, BaseProcess] = {}
        self.pipes: dict[Role, Connection] = {}
        self.exitcodes: dict[Role, int | None] = {}
        self.stopped_by_us: set[Role] = set()
        self.sampler: ResourceSampler | None = None
        #: The job's CPU placement: applied to each process as it starts (`start_child`).
        self.placer = Placer(
            job.placement,
            roles_of(job.mode, job.link is not None),
            receiver_processes=job.load.server_workers if job.load is not None else 1,
        )
        self._placement_warned = False
        self._context = child_context()
        #: Kills a process of the job that stays stopped, which ends every wait on it.
        self.watch = FrozenWatch({}, on_fork_server=self._fork_server_killed)
        #: A packet link's shared counters, what it reported when ready, the counters at each
        #: size's start, and the path over each measured size (read by the runner).
        self.path_counters: Any = None
        #: The packet link's count of packets it released or read late (JobPlan.late_packets).
        self.late_packets: Any = None
        self.path_ready: PathReady | None = None
        self._path_start: dict[int, tuple[float, ...]] = {}
        self._drops_start: dict[int, int | None] = {}
        self.paths: dict[int, LinkPath] = {}

    def start_child(self, role: Role, target: Callable[[Connection, PlanT], None], plan: PlanT) -> None:
        """Spawn one child; StartFailed when the system refuses (no file descriptor,
        memory or process slot left), which fails this job and lets the run go on."""
        try:
            receive, send = self._context.Pipe(duplex=False)
        except (OSError, MemoryError) as exc:
            raise StartFailed(f"{self.named(role)} process", exc) from None
        if self.continues is None:
            try:
                self.continues = self._context.RawArray("q", CONTINUE_SLOTS)
            except (OSError, MemoryError) as exc:
                raise StartFailed("job's shared stop count", exc) from None
        slot = self._continue_slots.setdefault(role, len(self._continue_slots) % CONTINUE_SLOTS)
        process = self._context.Process(
            target=run_counting,
            args=(target, send, plan, self.continues, slot),
            daemon=True,
            name=f"cryptobench-job-{self.base}-{role}",
        )
        try:
            start_process(process, self.cancel)  # bounded, and cancel interrupts it (app.core.processes.deadlines)
        except (OSError, MemoryError, EOFError, RuntimeError, StartStalled, StartCancelled) as exc:
            receive.close()
            send.close()
            if isinstance(exc, StartCancelled):
                raise
            raise StartFailed(f"{self.named(role)} process", exc) from None
        self.processes[role] = process
        self.pipes[role] = receive
        send.close()  # the child holds the only writer: EOF here means it is gone
        if process.pid is not None:
            self.watch.processes[self.named(role)] = process.pid
            self.placer.apply(role, process.pid)
            if self.placer.unavailable is not None and not self._placement_warned:
                self._placement_warned = True
                self.emit(
                    LogMessage(
                        LogLevel.WARNING,
                        f"{self.job.label}: CPU placement {self.job.placement} not "
                        f"applied, the job runs as free: {self.placer.unavailable}",
                        self.current,
                    )
                )
        self.emit(JobProcesses(self.base, {r: p.pid for r, p in self.processes.items() if p.pid is not None}))

    def named(self, role: Role) -> str:
        """How messages name the job's process in `role`: in a load job, the receiver is
        the load server and the sender the load generator; in a tls13 job, the TLS server
        and client."""
        if self.job.mode == Mode.LOAD:
            return {Role.RECEIVER: "load server", Role.SENDER: "load generator"}.get(role, str(role))
        if self.job.family == Family.TLS:
            return {Role.RECEIVER: "TLS server", Role.SENDER: "TLS client"}.get(role, str(role))
        return str(role)

    def _fork_server_killed(self, text: str) -> None:
        self.emit(LogMessage(LogLevel.WARNING, f"{self.job.label}: {text}", self.current))

    def session_plan(
        self,
        host: str,
        port: int,
        token: bytes,
        namespace: str | None = None,
        congestion_control: str | None = None,
        admission: bytes = b"",
    ) -> JobPlan:
        peer = SessionPeer(
            host, port, token, namespace=namespace, congestion_control=congestion_control, admission=admission
        )
        if self.job.link is not None:
            peer = peer_over_link(peer, self.job.link, self.job.message_sizes)
        return JobPlan(self.job, self.base, peer, late_packets=self.late_packets)

    def run(self) -> bool:
        """Spawn the job's processes in its topology (app.core.run.topologies), relay their
        messages until the measuring one is done, then stop them all. True if the run was
        cancelled meanwhile."""
        job = self.job
        cancelled = False
        self.placer.claim()
        try:
            self.watch.start()
            start = TOPOLOGIES[topology_of(job, self.remote)]
            if not start(self, job):
                return self.cancel.is_set()
            cancelled = self._measure(measuring_role(job.mode))
        except (StartFailed, JobRefused) as exc:
            self.start_error = str(exc)
            self.emit(LogMessage(LogLevel.ERROR, f"{job.label}: {exc}", self.current))
        except StartCancelled:
            cancelled = True
        finally:
            self.watch.stop()
            if self.sampler is not None:
                self.sampler.stop()
            self._stop_all()
            self.placer.release()
        return cancelled

    def _measure(self, main: Role) -> bool:
        """Sample the started processes and relay their messages until the measuring one is
        done; True if the run was cancelled meanwhile."""
        try:
            self.sampler = ResourceSampler(
                {role: p.pid for role, p in self.processes.items() if p.pid is not None},
                on_sample=self._on_resource,
            )
            self.sampler.start()
        except (OSError, MemoryError, RuntimeError) as exc:  # RuntimeError: no thread can start
            self.sampler = None
            raise StartFailed("resource sampler", exc) from None
        self.emit(JobStarted(self.base, self.job.label, self.job.message_sizes[0]))
        return self._pump(main)

    def start_packet_path(self, job: ResolvedJob) -> PathReady | None:
        """Start the packet link and wait until both namespaces are up (None: it failed, or
        the run was cancelled)."""
        assert job.link is not None
        try:
            self.path_counters = self._context.RawArray("d", SLOTS)
            self.late_packets = self._context.RawValue("d", 0.0)
        except (OSError, MemoryError) as exc:
            raise StartFailed("packet link's counters", exc) from None
        plan = PacketPathPlan(
            job.link,
            job.link.draw_seed(job.index),
            self.path_counters,
            slow_start_after_idle=job.link.slow_start_after_idle,
            late_packets=self.late_packets,
        )
        self.start_child(Role.LINK, packet_link_main, plan)
        pipe = self.pipes[Role.LINK]
        deadline = time.monotonic() + PORT_TIMEOUT_SECONDS
        while time.monotonic() < deadline and not self.cancel.is_set() and self.watch.frozen is None:
            if not pipe.poll(POLL_SECONDS):
                continue
            try:
                message = pipe.recv()
            except (EOFError, OSError):
                self._ended(Role.LINK)
                break
            if isinstance(message, PathReady):
                self.path_ready = message
                return message
            self._handle_link(message)
            if self.link_error is not None:
                return None
        if not self.cancel.is_set() and self.watch.frozen is None and self.died is None:
            self.link_error = self.link_error or f"link did not make its namespaces within {PORT_TIMEOUT_SECONDS:g} s"
        return None

    def wait_for_port(self, role: Role) -> int | None:
        """The port the loopback receiver (or the link) listens on, or None (cancelled, or it failed)."""
        pipe = self.pipes[role]
        deadline = time.monotonic() + PORT_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self.cancel.is_set() or self.watch.frozen is not None or self._another_died(role):
                return None
            if pipe.poll(POLL_SECONDS):
                try:
                    received = pipe.recv()
                except (EOFError, OSError):
                    self._ended(role)
                    break
                if isinstance(received, Listening):
                    return received.port
                if role == Role.LINK:
                    link_message: LinkMessage = received
                    self._handle_link(link_message)
                else:
                    receiver_message: ReceiverMessage = received
                    self._handle_receiver(receiver_message)
                if self.receiver_error is not None or self.link_error is not None:
                    return None
        if self.died is not None:
            return None
        missing = f"{self.named(role)} did not start listening within {PORT_TIMEOUT_SECONDS:g} s"
        if role == Role.LINK:
            self.link_error = self.link_error or missing
        else:
            self.receiver_error = self.receiver_error or missing
        return None

    def _pump(self, main: Role) -> bool:
        """Relay messages until the measuring process is done; True if cancelled.

        Every process of the job is watched, not only the measuring one: a helper (the
        receiver, the link, the load server) that dies while the job still needs it ends
        the job at once, named as its cause. Before, a SIGKILLed packet link left the
        sender waiting out its 600 s reply timeout on a path that no longer existed. A
        helper that failed with a reason gets the measuring process `grace` to report
        what it saw (its words are the more precise), then the job ends too."""
        open_pipes = dict(self.pipes)
        main_done_at: float | None = None
        helper_failed_at: float | None = None
        grace = RECEIVER_GRACE_SECONDS
        if self.job.link is not None:  # the sender's last frame (BYE) has yet to cross the link
            grace += one_way_seconds(self.job.link, HEADER_SIZE, self.job.link.rate_kbit_up)
        while open_pipes:
            if self.cancel.is_set():
                return True
            if self.watch.frozen is not None:
                break  # a process of the job froze and was killed: nothing it measures now counts
            if self.died is not None:
                break  # a process of the job died: every wait on it would only run out its timeout
            now = time.monotonic()
            if main_done_at is not None and now - main_done_at > grace:
                break  # the sender is gone; the receiver had its chance to report
            if helper_failed_at is not None and now - helper_failed_at > grace:
                break  # a helper failed; the measuring process had its chance to report
            if main_done_at is not None and self.path_ready is not None and set(open_pipes) <= {Role.LINK}:
                break  # a packet link forwards until it is stopped: nothing more will come
            ready = mp_connection.wait(list(open_pipes.values()), timeout=POLL_SECONDS)
            for role in [r for r, pipe in open_pipes.items() if pipe in ready]:
                try:
                    message = open_pipes[role].recv()
                except (EOFError, OSError):
                    del open_pipes[role]
                    if role == main:
                        main_done_at = time.monotonic()
                    # A helper's end is read even after the measuring process's: killed, it
                    # made the measuring process fail first (its connection closed), and the
                    # job must name the death, not what followed from it. Judged by the exit
                    # code alone, a kill not yet reaped under load read as our own stop.
                    elif self._ended(role) and main_done_at is None and helper_failed_at is None:
                        helper_failed_at = time.monotonic()
                    continue
                if role == Role.RECEIVER:
                    self._handle_receiver(message)
                elif role == Role.LINK:
                    self._handle_link(message)
                else:
                    self._handle(message)
        return False

    def _ended(self, role: Role) -> bool:
        """A helper's pipe closed: it has ended. True if it failed with a reason it gave;
        one that said nothing (killed, crashed) is recorded in `died`, which ends the job."""
        if role in self._finished:
            return False
        if role in self._failed:
            return True
        if self.died is None:
            self.died = role
        return False

    def _another_died(self, waiting_for: Role) -> bool:
        """While the job starts: whether a process started before `waiting_for` has gone
        (by its pid: its pipe is not read here). It is recorded in `died`."""
        if self.died is not None:
            return True
        for role, process in self.processes.items():
            if role != waiting_for and role not in self._finished | self._failed and not is_running(process):
                self.died = role
                return True
        return False

    def _handle_receiver(self, message: ReceiverMessage) -> None:
        if isinstance(message, PeerDropped):
            self._stranger(message)
        elif isinstance(message, ChildFailed):
            self.receiver_error = message.error
            self._failed.add(Role.RECEIVER)
        elif isinstance(message, ReceiverDone):
            self._finished.add(Role.RECEIVER)
        elif isinstance(message, Listening):
            pass  # the port was read before the sender started
        else:
            assert_never(message)

    def _stranger(self, message: PeerDropped) -> None:
        self.strangers.append(message.text)
        self.emit(LogMessage(LogLevel.WARNING, f"{self.job.label}: {message.text}", self.current))

    def _handle_link(self, message: LinkMessage) -> None:
        if isinstance(message, PeerDropped):
            self._stranger(message)
        elif isinstance(message, ChildFailed):
            self.link_error = message.error
            self._failed.add(Role.LINK)
            self.emit(LogMessage(LogLevel.ERROR, f"{self.job.label}: {message.error}", self.current))
        elif isinstance(message, LinkDone):
            self._finished.add(Role.LINK)
            if message.broken is not None:
                self.emit(
                    LogMessage(
                        LogLevel.WARNING,
                        f"{self.job.label}: link: the connection broke ({message.broken})",
                        self.current,
                    )
                )
        elif isinstance(message, (Listening, PathReady)):
            pass  # read before the sender started
        else:
            assert_never(message)

    def _device_drops(self) -> int | None:
        """Packets both ends' devices have dropped so far (None: unknown)."""
        if self.path_ready is None:
            return None
        counts = [device_drops(self.path_ready.sender_namespace), device_drops(self.path_ready.receiver_namespace)]
        return None if None in counts else sum(count or 0 for count in counts)

    def _handle(self, message: MeasuringMessage) -> None:
        """Relay a measuring child's message under the result index of the size it is on."""
        assert self.sampler is not None
        series = next(iter(self.sampler.series.values()))
        if isinstance(message, SampleBatch):
            self.emit(SampleBatch(self.current, message.metric, message.values))
        elif isinstance(message, Progress):
            self.emit(Progress(self.current, message.done, message.total))
        elif isinstance(message, SizeStarted):
            self._stops_at_start[message.size_index] = self.watch.stops_seen
            self._continues_at_start[message.size_index] = message.continues
            if self.continues is not None:
                self._slots_at_start[message.size_index] = list(self.continues)
            self.current = self.base + message.size_index
            self.window_start[message.size_index] = series.times[-1] if series.times else 0.0
            if self.path_counters is not None:
                self.path_counters[LATE_MAX] = self.path_counters[READ_LATE_MAX] = 0.0
                self._path_start[message.size_index] = snapshot(self.path_counters)
                self._drops_start[message.size_index] = self._device_drops()
            if message.size_index:
                self.emit(JobStarted(self.current, self.job.label, message.message_size))
        elif isinstance(message, SizeMeasured):
            if self.watch.frozen is not None:
                return  # a process of the job froze and was killed meanwhile: the size fails with that
            stopped = self._stop_in(message)
            if stopped is not None and not message.error:
                message.error = f"{stopped}: its figures include the stop, so they are not kept"
                message.load, message.metrics = None, {}
            start = self.window_start.get(message.size_index, 0.0)
            before = self._path_start.get(message.size_index)
            if self.path_counters is not None and self.path_ready is not None and before is not None:
                self.paths[message.size_index] = path_over(
                    before,
                    snapshot(self.path_counters),
                    late_max_s=self.path_counters[LATE_MAX],
                    congestion_control=self.job.link.congestion_control
                    if self.job.link is not None and self.job.link.congestion_control
                    else self.path_ready.congestion_control,
                    slow_start_after_idle=self.path_ready.slow_start_after_idle,
                    realtime=self.path_ready.realtime,
                    queue=None if self.job.link is None else queue_bounds(self.job.link),
                    read_late_max_s=self.path_counters[READ_LATE_MAX],
                    device_dropped=_difference(self._drops_start.get(message.size_index), self._device_drops()),
                    late_limit_s=None if self.job.link is None else late_limit(self.job.link),
                    late_samples=message.late_samples,
                )
            self.on_measured(message, self.sampler.series, start)
        elif isinstance(message, ChildFailed):
            self.child_error = message.error
            self.emit(LogMessage(LogLevel.ERROR, f"{self.job.label}: {message.error}", self.current))
        else:
            assert_never(message)

    def _stop_in(self, message: SizeMeasured) -> str | None:
        """What was stopped while the size was measured (None: nothing): a stop one of the
        watch's looks fell in, named; or a continue the job's processes counted, which the
        watch misses when the stop is brief, when its thread is slow to look, and when the
        whole process group was stopped with it (Ctrl-Z)."""
        if self.watch.stops_seen != self._stops_at_start.get(message.size_index, 0):
            return self.watch.stopped
        stopped = "a process of the job was stopped (SIGSTOP, or Ctrl-Z of its process group) and continued"
        if message.continues != self._continues_at_start.get(message.size_index, message.continues):
            return self._continued_since(message.size_index) or f"{stopped} while it measured"
        # The count starts at 0 with the job: moved before its first size, it moved while the
        # key generations and handshakes were timed, whose figures every size of a session
        # or operations job carries (a load job times nothing before its sizes).
        if self._continues_at_start.get(0, 0) and self.job.mode != Mode.LOAD:
            return f"{stopped} while it timed the key generations and handshakes every size carries"
        return None

    def _continued_since(self, size_index: int) -> str | None:
        """Which of the job's processes were continued since the size began, in the watch's
        words (None: not known, the count read at the size's start already held them)."""
        before = self._slots_at_start.get(size_index)
        if before is None or self.continues is None:
            return None
        moved = [role for role, slot in self._continue_slots.items() if self.continues[slot] != before[slot]]
        if not moved:
            return None
        if len(moved) > 1:
            together = ", ".join(self.named(role) for role in moved)
            return f"the job's processes ({together}) were stopped together (Ctrl-Z of their process group) while it measured"
        role = moved[0]
        process = self.processes.get(role)
        pid = f" (pid {process.pid})" if process is not None and process.pid is not None else ""
        return f"the {self.named(role)} process{pid} was stopped (SIGSTOP or a debugger) while it measured"

    def _on_resource(self, role: str, t: float, cpu: float, rss: int) -> None:
        self.emit(ResourceSample(self.current, role, t, cpu, rss))

    def _stop_all(self) -> None:
        """Stop every process of the job (idempotent); remember which ones we had to stop,
        so that our own SIGTERM is never reported as the cause of a failure."""
        for role, process in list(self.processes.items()):
            if is_running(process):
                # A process whose pipe just closed may still be exiting (the kernel
                # closes its files before it can be reaped): a moment's wait keeps a
                # death from outside from being mistaken for our own stop.
                process.join(EXIT_SETTLE_SECONDS)
            if is_running(process):
                self.stopped_by_us.add(role)
            self.exitcodes[role] = stop_process(process)
            del self.processes[role]
        for pipe in self.pipes.values():
            pipe.close()

    def failure_cause(self) -> str:
        """One sentence naming why the job ended early, the most basic cause first."""
        exitcodes = self.exitcodes
        if self.start_error:  # any process we stopped afterwards was stopped because of it
            return self.start_error
        if self.watch.frozen:  # killed for it; everything else that failed failed with it
            return self.watch.frozen
        # The process that died first, then the link: when it dies, both ends lose their
        # connection and fail with it (a killed link is never a killed receiver).
        order: tuple[Role, ...] = (Role.LINK, Role.RECEIVER, Role.SENDER, Role.WORKER)
        if self.died is not None:
            order = (self.died, *[role for role in order if role != self.died])
        for role in order:
            code = exitcodes.get(role)
            if role == self.died or (code is not None and code < 0 and role not in self.stopped_by_us):
                name = self.named(role)
                cause = death_cause(name, code) if code is not None else f"{name} process ended without a word"
                if self.child_error and role in (Role.LINK, Role.RECEIVER):
                    cause += f" ({self.named(Role.SENDER)}: {self.child_error})"
                return cause
        if self.link_error:
            return f"{self.link_error} (sender: {self.child_error})" if self.child_error else self.link_error
        if self.receiver_error and self.child_error and self.job.mode == Mode.LOAD:
            # A load server never fails because of a client (it ends when they leave): its
            # reason (out of file descriptors, no client came) is the cause of the job's end,
            # and the generator's lost connections are what followed from it.
            return f"{self.receiver_error} (load generator: {self.child_error})"
        if self.child_error:
            if self.receiver_error and self.receiver_error not in self.child_error:
                return f"{self.child_error} ({self.receiver_error})"
            return self.child_error
        if self.receiver_error:
            return self.receiver_error
        main = measuring_role(self.job.mode)
        return death_cause(self.named(main), exitcodes.get(main))


def _difference(before: int | None, after: int | None) -> int | None:
    return None if before is None or after is None else max(0, after - before)

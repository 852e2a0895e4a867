"""Events a run produces, and the messages its child processes send: plain, picklable dataclasses.

Two channels, each typed by a union below so that every dispatch over them is checked:
`RunEvent`, what the runner reports to its faces (the CLI and the GUI), and
`ChildMessage`, what a job's child processes send their supervisor over their pipes
(`MeasuringMessage` from the worker or sender, `ReceiverMessage` from a loopback
receiver, `LinkMessage` from the link process of an emulated link). Samples travel in
batches (lists), never one event per sample, so a 100,000-sample job costs a few
hundred events rather than 100,000 signals.
"""

from __future__ import annotations

from array import array
from collections.abc import MutableSequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from app.core.records.job_conditions import Load
from app.core.records.job_tcp_info import TcpInfo
from app.core.records.tls_record import TlsRecord
from app.core.statistics.stability_warnings import StabilityWarning, check_stability
from app.core.statistics.stats import MetricStats, summarize
from app.core.vocab import LogLevel

if TYPE_CHECKING:  # only for the annotations: the measuring children never import the results layer
    from app.core.results.model import JobResult, RunResult


@dataclass(frozen=True)
class RunStarted:
    run_id: str
    total_jobs: int
    profile_name: str


@dataclass(frozen=True)
class JobStarted:
    job_index: int
    label: str
    message_size: int


@dataclass(frozen=True)
class JobProcesses:
    """The processes a job runs in, by role ("worker"; or "receiver", "sender" and maybe "link")."""

    job_index: int
    pids: dict[str, int]


@dataclass(frozen=True)
class SampleBatch:
    job_index: int
    metric: str
    values: list[float]  # seconds per operation


@dataclass(frozen=True)
class ResourceSample:
    job_index: int
    role: str  # "worker" in operations mode; "sender" / "receiver" (and "link") in loopback
    t: float
    cpu_percent: float
    rss_bytes: int


@dataclass(frozen=True)
class Progress:
    job_index: int
    done: int
    total: int


@dataclass(frozen=True)
class JobFinished:
    job_index: int
    result: JobResult


@dataclass(frozen=True)
class RunFinished:
    run: RunResult


@dataclass(frozen=True)
class LogMessage:
    level: LogLevel
    text: str
    job_index: int | None = None


# --- messages from a measuring child process (worker or sender) to its supervisor ----


@dataclass
class RawMetric:
    """One metric's raw samples as measured in the child process."""

    samples: MutableSequence[float] = field(default_factory=list)  # seconds per operation
    warmup: MutableSequence[float] = field(default_factory=list)
    batch: int = 1  # operations per timed sample
    traced_peak_bytes: int | None = None
    #: Statistics and warnings, computed in the child once measuring is over (see
    #: SizeMeasured.summarize); None when they were not, and the supervisor computes them.
    summary: MetricStats | None = None
    warnings: list[StabilityWarning] = field(default_factory=list)

    # Crossing the pipe, samples travel as packed float64 (array('d')): unpickling
    # 100,000 Python floats holds the GIL ~15 ms in the supervising thread, which in
    # the GUI process stalls the event loop; a packed array unpickles as one memcpy.
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["samples"] = array("d", self.samples)
        state["warmup"] = array("d", self.warmup)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


@dataclass
class SizeMeasured:
    """Everything measured for one message size of one profile job."""

    size_index: int
    message_size: int
    metrics: dict[str, RawMetric]
    checked: int = 0
    failed: int = 0
    tamper_tried: int = 0
    tamper_rejected: int = 0
    tamper_failures: list[str] = field(default_factory=list)
    wire_bytes: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    #: A remote receiver's own CPU/RSS report (loopback processes are sampled locally).
    receiver_resources: dict[str, float] | None = None
    #: Sessions: what each end's kernel saw over the size (TCP_INFO), by role ("sender",
    #: "receiver"); an end that could not say is absent. Empty in operations mode.
    tcp_info: dict[str, TcpInfo] = field(default_factory=dict)
    #: A load job's steps and what they add up to (None in every other mode).
    load: Load | None = None
    #: How many times a process of the job had been continued after a stop when the size
    #: ended (stamped as it is sent, like `SizeStarted.continues`): more than at its start,
    #: and the size timed a stop.
    continues: int = 0
    #: Over the packet path: the timed round trips (floor pings and messages) during which
    #: its emulator released or read a packet later than its limit (None: no such link).
    late_samples: int | None = None
    #: A tls13 job's handshakes: what they negotiated and put on the wire (None otherwise).
    tls: TlsRecord | None = None

    @classmethod
    def failure(cls, size_index: int, message_size: int, exc: BaseException) -> SizeMeasured:
        """A size that stopped on a message that failed (validation, or the scheme itself):
        that message counts as checked and failed, so `failed <= checked` holds as the
        results reader requires (`failed=1, checked=0` was stored and then read back as a
        damaged row)."""
        return cls(size_index, message_size, metrics={}, checked=1, failed=1, error=f"{type(exc).__name__}: {exc}")

    def summarize(self) -> SizeMeasured:
        """Compute each metric's statistics here, in the measuring child, after the
        timed work is done: its core is free then, whereas in the supervising process
        ~40 ms of numpy per 100,000-sample job competes with the GUI thread for the
        interpreter lock and shows as a frozen window. Returns self."""
        for name, raw in self.metrics.items():
            if raw.samples and raw.summary is None:
                try:
                    raw.summary = summarize(raw.samples, "s")
                except ValueError:
                    continue  # the supervisor recomputes, and reports the bad samples
                raw.warnings = check_stability(name, raw.summary, raw.samples, raw.warmup)
        return self


@dataclass(frozen=True)
class SizeStarted:
    size_index: int
    message_size: int
    #: How many times a process of the job had been continued after a stop when the size
    #: began (app.core.processes.continued: stamped by the measuring process as it sends this).
    continues: int = 0


@dataclass(frozen=True)
class ChildFailed:
    """The child hit an error outside any one size (e.g. the scheme would not build)."""

    error: str


# --- messages from a loopback receiver process to its supervisor ----------------------


@dataclass(frozen=True)
class Listening:
    """The receiver listens on this port (its first message; the sender starts after it)."""

    port: int


@dataclass(frozen=True)
class PeerDropped:
    """A receiver, load server or link closed a connection that never proved it is the
    job's own (the token, or a link's admission ticket), and went on without it; `text`
    says who it was and why."""

    text: str


@dataclass(frozen=True)
class ReceiverDone:
    """The receiver served its sender's whole job and said goodbye."""


# --- messages from a link process (the delay line between sender and receiver) -------


@dataclass(frozen=True)
class LinkDone:
    """The link relayed its connection to the end: bytes read from each side (up: from
    the sender), why the connection broke if it did (None: both sides closed), and the
    link's own timing error: how many segments it released, and how late on average
    and at worst against the time the delay line gave them (seconds); and the CPU time
    the link process used in all (seconds, user + system)."""

    bytes_up: int
    bytes_down: int
    broken: str | None = None
    segments: int = 0
    late_mean_s: float = 0.0
    late_max_s: float = 0.0
    cpu_s: float = 0.0


@dataclass(frozen=True)
class PathReady:
    """The packet path is up (a packet link's first message): the namespaces the sender
    and the receiver enter, the address the receiver listens on, and the TCP settings
    both namespaces have (the default congestion control, slow start after idle)."""

    sender_namespace: str
    receiver_namespace: str
    receiver_address: str
    congestion_control: str | None
    slow_start_after_idle: bool | None
    #: Whether the link runs at a real-time priority (else its lateness shows the CPU it waited for).
    realtime: bool = False


#: What a worker or a session sender sends its supervisor.
MeasuringMessage: TypeAlias = SizeStarted | SizeMeasured | SampleBatch | Progress | ChildFailed
#: What a loopback receiver sends its supervisor (ChildFailed: the job's session failed there).
ReceiverMessage: TypeAlias = Listening | PeerDropped | ReceiverDone | ChildFailed
#: What a link process sends its supervisor (`Listening` first, with the port the sender
#: connects to, or `PathReady` from a packet link; ChildFailed: the link could not be set up).
LinkMessage: TypeAlias = Listening | PathReady | LinkDone | PeerDropped | ChildFailed
#: Anything a job's child process sends over its pipe.
ChildMessage: TypeAlias = MeasuringMessage | ReceiverMessage | LinkMessage
#: What a run reports to its faces, on the runner's thread.
RunEvent: TypeAlias = (
    RunStarted
    | JobStarted
    | JobProcesses
    | SampleBatch
    | ResourceSample
    | Progress
    | JobFinished
    | RunFinished
    | LogMessage
)

"""Typed records for the parts of a job's result: CPU, memory, validation, security,
the conditions a session ran under (link, placement, load) and what its kernel saw (TCP_INFO).

Each record is frozen and converts to and from exactly the JSON the results contract
has always had (docs/ARCHITECTURE.md, "Results format"), so the wire does not change
while code reads `job.cpu.measuring(job.mode).mean_percent` instead of guessing keys.
`from_dict` is lenient in what it fills in (a missing count is 0, a missing figure is
None) because every results file is checked field by field first
(`app.core.results.check`); it never invents a figure that was not measured.

Where a CPU figure comes from, end to end: the supervisor's `ResourceSampler`
(app/core/measure/timing.py) samples each child process into a `ResourceSeries`; the runner
turns each series into a `ProcessUsage` (`ProcessUsage.from_series`) and the job's
`CpuUsage`; the store and the JSON export write `CpuUsage.to_dict()`; the results
table, the plots and the report read `CpuUsage.measuring(mode)` or `CpuUsage.processes`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from app.core.vocab import Mode, measuring_role

if TYPE_CHECKING:
    from app.core.measure.sampler import ResourceSeries

#: The supervisor's CPU/RSS sampling interval, in seconds (recorded with every job).
SAMPLING_INTERVAL_S = 0.1
#: A packet link's largest queue bounds: far beyond any router's buffer (a bufferbloated
#: one holds seconds), so a mistyped figure is refused, not run out of memory.
MAX_QUEUE_PACKETS = 1_000_000
MAX_QUEUE_BYTES = 1_000_000_000


def _opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True)
class ProcessUsage:
    """CPU and memory of one child process over one message size."""

    #: psutil readings taken (0: the size ended within one sampling interval).
    samples: int | None = None
    mean_percent: float | None = None
    max_percent: float | None = None
    rss_peak_bytes: int | None = None
    #: CPU used by every other process on the machine meanwhile (the "machine busy" evidence).
    other_processes_mean_percent: float | None = None
    #: Set when the figures were not sampled here (a remote receiver reports its own).
    source: str | None = None

    @property
    def sampled(self) -> bool:
        """Whether these figures are readings (False: the size was shorter than one interval)."""
        return self.source is not None or bool(self.samples)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "samples": self.samples,
            "mean_percent": self.mean_percent,
            "max_percent": self.max_percent,
            "rss_peak_bytes": self.rss_peak_bytes,
            "other_processes_mean_percent": self.other_processes_mean_percent,
        }
        if self.source is not None:
            data["source"] = self.source
        return data

    @classmethod
    def from_series(cls, series: ResourceSeries) -> ProcessUsage:
        """The summary of one process's readings (none: 0 samples and no figures, never 0 %)."""
        n = len(series.cpu_percent)
        others = series.other_cpu_percent
        return cls(
            samples=n,
            mean_percent=sum(series.cpu_percent) / n if n else None,
            max_percent=max(series.cpu_percent) if n else None,
            rss_peak_bytes=max(series.rss_bytes) if series.rss_bytes else None,
            other_processes_mean_percent=sum(others) / len(others) if others else None,
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProcessUsage:
        return cls(
            samples=_opt_int(data.get("samples")),
            mean_percent=_opt_float(data.get("mean_percent")),
            max_percent=_opt_float(data.get("max_percent")),
            rss_peak_bytes=_opt_int(data.get("rss_peak_bytes")),
            other_processes_mean_percent=_opt_float(data.get("other_processes_mean_percent")),
            source=data.get("source"),
        )


@dataclass(frozen=True)
class CpuUsage:
    """Every process of a job, by role ("worker", or "sender" and "receiver").

    On the wire the roles are the keys of one object, beside `interval_s`; here they
    are kept apart so no reader has to skip the scalar.
    """

    processes: Mapping[str, ProcessUsage | None] = field(default_factory=dict)
    #: Sampling interval in seconds; None for a job that never ran.
    interval_s: float | None = None

    def role(self, role: str) -> ProcessUsage | None:
        return self.processes.get(role)

    def measuring(self, mode: str) -> ProcessUsage | None:
        """The process that timed the job's figures (the one rule: `vocab.measuring_role`).

        Falls back to the first process recorded, for results written by other tools.
        """
        usage = self.processes.get(measuring_role(mode)) if mode in set(Mode) else None
        return usage if usage is not None else next((u for u in self.processes.values() if u is not None), None)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            role: None if usage is None else usage.to_dict() for role, usage in self.processes.items()
        }
        if self.interval_s is not None:
            data["interval_s"] = self.interval_s
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CpuUsage:
        processes = {
            role: None if block is None else ProcessUsage.from_dict(block)
            for role, block in data.items()
            if role != "interval_s"
        }
        return cls(processes=processes, interval_s=_opt_float(data.get("interval_s")))


@dataclass(frozen=True)
class MemoryUsage:
    """Peak memory: resident set per process, and tracemalloc's peak per metric.

    The two are never measured in the same pass (tracemalloc slows the code it
    watches), so they sit side by side rather than in one figure.
    """

    #: role -> peak RSS in bytes (None: not sampled).
    rss_peak_bytes: Mapping[str, int | None] = field(default_factory=dict)
    #: metric -> peak bytes allocated by Python during one operation (a separate, untimed pass).
    traced_peak_bytes: Mapping[str, int] = field(default_factory=dict)

    def measuring_rss(self, mode: str) -> int | None:
        """Peak RSS of the process that timed the job (the rule `CpuUsage.measuring` uses)."""
        rss = self.rss_peak_bytes.get(measuring_role(mode)) if mode in set(Mode) else None
        if rss is None:
            rss = next((v for v in self.rss_peak_bytes.values() if v is not None), None)
        return rss

    def to_dict(self) -> dict[str, Any]:
        if not self.rss_peak_bytes and not self.traced_peak_bytes:
            return {}  # a job that never ran: no memory record at all, as always
        return {"rss_peak_bytes": dict(self.rss_peak_bytes), "traced_peak_bytes": dict(self.traced_peak_bytes)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MemoryUsage:
        rss = data.get("rss_peak_bytes") or {}
        traced = data.get("traced_peak_bytes") or {}
        return cls(
            rss_peak_bytes={role: _opt_int(v) for role, v in rss.items()},
            traced_peak_bytes={metric: int(v) for metric, v in traced.items() if v is not None},
        )


@dataclass(frozen=True)
class Validation:
    """Every message checked, and the tampered payloads that had to be rejected."""

    checked: int = 0
    failed: int = 0
    tamper_tried: int = 0
    tamper_rejected: int = 0

    @property
    def tamper_accepted(self) -> int:
        return self.tamper_tried - self.tamper_rejected

    def to_dict(self) -> dict[str, int]:
        return {
            "checked": self.checked,
            "failed": self.failed,
            "tamper_tried": self.tamper_tried,
            "tamper_rejected": self.tamper_rejected,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Validation:
        return cls(
            checked=int(data.get("checked", 0)),
            failed=int(data.get("failed", 0)),
            tamper_tried=int(data.get("tamper_tried", 0)),
            tamper_rejected=int(data.get("tamper_rejected", 0)),
        )


@dataclass(frozen=True)
class Security:
    """The scheme's strength as declared by its adapter (NIST SP 800-57, FIPS 203/204)."""

    classical_bits: int | None = None
    #: NIST post-quantum category 1-5; 0: none (broken by a quantum computer).
    pq_category: int | None = None
    #: Demonstration parameters (below 112-bit classical strength).
    insecure: bool | None = None

    @property
    def known(self) -> bool:
        return self.classical_bits is not None or self.pq_category is not None or self.insecure is not None

    def to_dict(self) -> dict[str, Any]:
        if not self.known:
            return {}  # the scheme could not be created: its strength is unknown, not zero
        return {"classical_bits": self.classical_bits, "pq_category": self.pq_category, "insecure": self.insecure}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Security:
        insecure = data.get("insecure")
        return cls(
            classical_bits=_opt_int(data.get("classical_bits")),
            pq_category=_opt_int(data.get("pq_category")),
            insecure=None if insecure is None else bool(insecure),
        )


# --- the conditions of a session: link, placement, load ---------------------------------
#
# Each is absent from a job's JSON until a job sets it, so results written before
# them read back unchanged. Their fields are the agreed design (docs/ARCHITECTURE.md,
# "Links, placement and load"); the features that fill them are built on these types.


@dataclass(frozen=True)
class BurstLoss:
    """Bursty (Gilbert-Elliott) loss, per direction, in percent: each packet first moves the
    state (good to bad with `p_percent`, bad to good with `r_percent`), then is lost with
    the state's loss. The long-run loss is `mean_percent`."""

    p_percent: float
    r_percent: float
    bad_loss_percent: float = 100.0
    good_loss_percent: float = 0.0

    @property
    def mean_percent(self) -> float:
        p, r = self.p_percent, self.r_percent
        return (r * self.good_loss_percent + p * self.bad_loss_percent) / (p + r) if p + r else 0.0

    @property
    def mean_burst_packets(self) -> float:
        """The bad state's mean length, in packets (1 / r)."""
        return 100.0 / self.r_percent if self.r_percent else float("inf")

    def to_dict(self) -> dict[str, float]:
        return {
            "p_percent": self.p_percent,
            "r_percent": self.r_percent,
            "bad_loss_percent": self.bad_loss_percent,
            "good_loss_percent": self.good_loss_percent,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BurstLoss:
        return cls(
            p_percent=float(data["p_percent"]),
            r_percent=float(data["r_percent"]),
            bad_loss_percent=float(data.get("bad_loss_percent", 100.0)),
            good_loss_percent=float(data.get("good_loss_percent", 0.0)),
        )


@dataclass(frozen=True)
class Link:
    """The network a session ran over, as resolved (numbers, and how it was emulated).

    Delay, jitter and loss apply to each direction alike (one-way figures); the rate
    may differ: `up` is sender -> receiver (the client's upload), `down` the reverse.
    A rate of None is unlimited.
    """

    #: Preset name ("lte", ...) or None for a custom link.
    name: str | None
    delay_ms: float
    jitter_ms: float
    rate_kbit_up: float | None
    rate_kbit_down: float | None
    loss_percent: float
    #: "none" (plain loopback), "delay-line" (the stream relay), "packet" or "netem".
    emulation: str
    #: The packet path's TCP as the job set it (None: the kernel's default, which the
    #: result's `path` records): the congestion control both ends use, and whether an
    #: idle connection restarts from the initial window. Absent from the JSON when None.
    congestion_control: str | None = None
    slow_start_after_idle: bool | None = None
    #: The packet path: "warm" (the session's one connection) or "fresh" (a new connection
    #: per timed message). Absent from the JSON when warm, as every session before it was.
    connection: str = "warm"
    #: The packet path: bursty loss (then `loss_percent` is its long-run mean), and the
    #: drop-tail queue's bounds a profile set (None: the defaults, which `path` records).
    #: Absent from the JSON when None.
    burst_loss: BurstLoss | None = None
    queue_packets: int | None = None
    queue_bytes: int | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "name": self.name,
            "delay_ms": self.delay_ms,
            "jitter_ms": self.jitter_ms,
            "rate_kbit": {"up": self.rate_kbit_up, "down": self.rate_kbit_down},
            "loss_percent": self.loss_percent,
            "emulation": self.emulation,
        }
        if self.congestion_control is not None:
            data["congestion_control"] = self.congestion_control
        if self.slow_start_after_idle is not None:
            data["slow_start_after_idle"] = self.slow_start_after_idle
        if self.connection != "warm":
            data["connection"] = self.connection
        if self.burst_loss is not None:
            data["burst_loss"] = self.burst_loss.to_dict()
        for name in ("queue_packets", "queue_bytes"):
            if getattr(self, name) is not None:
                data[name] = getattr(self, name)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Link:
        rate = data.get("rate_kbit") or {}
        return cls(
            name=data.get("name"),
            delay_ms=float(data["delay_ms"]),
            jitter_ms=float(data.get("jitter_ms", 0)),
            rate_kbit_up=_opt_float(rate.get("up")),
            rate_kbit_down=_opt_float(rate.get("down")),
            loss_percent=float(data.get("loss_percent", 0)),
            emulation=str(data["emulation"]),
            congestion_control=None if data.get("congestion_control") is None else str(data["congestion_control"]),
            slow_start_after_idle=None
            if data.get("slow_start_after_idle") is None
            else bool(data["slow_start_after_idle"]),
            connection=str(data.get("connection") or "warm"),
            burst_loss=BurstLoss.from_dict(data["burst_loss"]) if data.get("burst_loss") else None,
            queue_packets=_opt_int(data.get("queue_packets")),
            queue_bytes=_opt_int(data.get("queue_bytes")),
        )


@dataclass(frozen=True)
class ProcessPlacement:
    """The CPUs one process was allowed, and those it was seen running on."""

    allowed_cpus: tuple[int, ...]
    observed_cpus: tuple[int, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"allowed_cpus": list(self.allowed_cpus), "observed_cpus": list(self.observed_cpus)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProcessPlacement:
        return cls(
            allowed_cpus=tuple(int(c) for c in data.get("allowed_cpus", ())),
            observed_cpus=tuple(int(c) for c in data.get("observed_cpus", ())),
        )


@dataclass(frozen=True)
class Placement:
    """Where a job's processes ran: the policy asked for, and per role what happened."""

    #: "same", "split" or "free".
    policy: str
    processes: Mapping[str, ProcessPlacement] = field(default_factory=dict)
    #: Why the policy could not be applied here (macOS, a restricted container), if so.
    unavailable: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "processes": {role: p.to_dict() for role, p in self.processes.items()},
            "unavailable": self.unavailable,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Placement:
        return cls(
            policy=str(data["policy"]),
            processes={role: ProcessPlacement.from_dict(p) for role, p in (data.get("processes") or {}).items()},
            unavailable=data.get("unavailable"),
        )


#: Latency percentiles every load step records, read from its merged histogram.
LOAD_PERCENTILES: tuple[tuple[str, float], ...] = (("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("p99.9", 99.9))


@dataclass(frozen=True)
class LoadStep:
    """One offered rate of a load job: what was achieved and the latency clients saw.

    Latency runs from each request's *intended* start (its place in the open-loop
    schedule) to its acknowledgement, so a stalled server shows as latency instead of
    slowing the clients down (no coordinated omission).
    """

    offered_per_s: float
    #: Requests acknowledged OK within the step's measured window (warm-up ones too: the
    #: server's work then), per second of it.
    achieved_per_s: float
    #: Requests refused by the server, or not acknowledged before the drain ran out.
    errors: int
    #: percentile name ("p50", "p90", "p99", "p99.9", "max") -> seconds, from the merged histogram.
    latency_s: Mapping[str, float]
    #: Set when the load generator, not the server, was the bottleneck at this step.
    generator_saturated: bool = False
    #: Requests of the measured window that were sent, and how many of them were acknowledged OK.
    sent: int = 0
    completed: int = 0
    #: The merged latency histogram, HdrHistogram's compressed base64 form (nanoseconds);
    #: `hdrh.histogram.HdrHistogram.decode` reads it back, `add` merges several.
    histogram: str | None = None
    #: The generator's own CPU over the step (percent of one CPU), and how late its loop
    #: handed requests to the kernel against their intended times (p99, seconds).
    generator_cpu_percent: float | None = None
    send_lag_p99_s: float | None = None
    #: The server processes' CPU over the step (percent of one CPU, summed over workers).
    server_cpu_percent: float | None = None
    #: Why the step counts as generator-saturated, in words (None when it does not).
    saturation_reason: str | None = None
    #: Requests of the measured window that were never sent: they came due while the
    #: generator's backlog was at its cap (app.core.load.generator.BACKLOG_MAX). Any makes
    #: the step generator-saturated. sent + missed is the window's schedule.
    missed: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "offered_per_s": self.offered_per_s,
            "achieved_per_s": self.achieved_per_s,
            "errors": self.errors,
            "latency_s": dict(self.latency_s),
            "generator_saturated": self.generator_saturated,
            "sent": self.sent,
            "completed": self.completed,
            "histogram": self.histogram,
            "generator_cpu_percent": self.generator_cpu_percent,
            "send_lag_p99_s": self.send_lag_p99_s,
            "server_cpu_percent": self.server_cpu_percent,
            "saturation_reason": self.saturation_reason,
            "missed": self.missed,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LoadStep:
        def number(key: str) -> float | None:
            value = data.get(key)
            return None if value is None else float(value)

        return cls(
            offered_per_s=float(data["offered_per_s"]),
            achieved_per_s=float(data["achieved_per_s"]),
            errors=int(data.get("errors", 0)),
            latency_s={k: float(v) for k, v in (data.get("latency_s") or {}).items()},
            generator_saturated=bool(data.get("generator_saturated", False)),
            sent=int(data.get("sent", 0)),
            completed=int(data.get("completed", 0)),
            histogram=data.get("histogram"),
            generator_cpu_percent=number("generator_cpu_percent"),
            send_lag_p99_s=number("send_lag_p99_s"),
            server_cpu_percent=number("server_cpu_percent"),
            saturation_reason=data.get("saturation_reason"),
            missed=int(data.get("missed", 0)),
        )


@dataclass(frozen=True)
class Load:
    """A load job's steps, in the order they were offered, and what they add up to."""

    clients: int
    server_workers: int
    steps: tuple[LoadStep, ...] = ()
    #: What one request is: "handshake" (the client's per-session key establishment, one
    #: sealed message and its acknowledgement) or "signed message" (signatures).
    request: str = "handshake"
    duration_s: float = 0.0
    warmup_s: float = 0.0
    #: Distinct requests each client connection prepared ahead and cycles through (the
    #: client's crypto is done before a step, so the generator only sends and times).
    pool: int = 0
    #: The client's own crypto per request, median seconds (prepared ahead, outside latency).
    client_prepare_s: float | None = None
    #: The server's crypto per request, median seconds (timed in the server, all steps).
    server_request_s: float | None = None
    #: The highest achieved rate over steps the generator did not saturate (requests/s):
    #: the server's saturation throughput where a step overloaded it.
    knee_per_s: float | None = None
    #: The highest offered rate the server kept up with (achieved >= 95 % of offered, no
    #: errors, generator not saturated), and that step's p99 latency in seconds.
    sustained_per_s: float | None = None
    sustained_p99_s: float | None = None
    #: True when some step offered more than the server could take (the knee is measured,
    #: not a lower bound); False: every step was kept up with, the knee lies higher.
    saturated: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "clients": self.clients,
            "server_workers": self.server_workers,
            "steps": [step.to_dict() for step in self.steps],
            "request": self.request,
            "duration_s": self.duration_s,
            "warmup_s": self.warmup_s,
            "pool": self.pool,
            "client_prepare_s": self.client_prepare_s,
            "server_request_s": self.server_request_s,
            "knee_per_s": self.knee_per_s,
            "sustained_per_s": self.sustained_per_s,
            "sustained_p99_s": self.sustained_p99_s,
            "saturated": self.saturated,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Load:
        def number(key: str) -> float | None:
            value = data.get(key)
            return None if value is None else float(value)

        return cls(
            clients=int(data["clients"]),
            server_workers=int(data.get("server_workers", 1)),
            steps=tuple(LoadStep.from_dict(s) for s in data.get("steps", ())),
            request=str(data.get("request", "handshake")),
            duration_s=float(data.get("duration_s", 0.0)),
            warmup_s=float(data.get("warmup_s", 0.0)),
            pool=int(data.get("pool", 0)),
            client_prepare_s=number("client_prepare_s"),
            server_request_s=number("server_request_s"),
            knee_per_s=number("knee_per_s"),
            sustained_per_s=number("sustained_per_s"),
            sustained_p99_s=number("sustained_p99_s"),
            saturated=bool(data.get("saturated", False)),
        )


@dataclass(frozen=True)
class TcpInfo:
    """What one end's kernel knew about its TCP connection over one message size
    (Linux `TCP_INFO`, read by app/core/session/tcpinfo.py).

    Two readings are taken per size, one before the sender's SIZE request and one after
    its SIZE_END (the receiver: on SIZE and on SIZE_END). Counters (segments, bytes,
    retransmissions) are the difference between them: this size's traffic only, floor
    ping-pong, messages, tampered payloads and the traced one included, but not the
    handshakes. RTT, its variation, the congestion window and the MSS are the kernel's
    values at the size's end (its smoothed estimates over the connection so far).

    A figure is None when the kernel did not fill it (an older kernel returns a shorter
    struct); a reading that could not be taken at all (not Linux) has only `unavailable`,
    the reason, never zeros.

    Over an emulated link (app/core/link/) each end's connection is to the link process,
    not to the other end: the kernel times that loopback hop, and its congestion window
    never meets the emulated rate. The emulated delay shows in its RTT only where an
    acknowledgement waited to ride on the reply (a delayed ACK: a small message's sRTT
    then matches the emulated round trip, a 64 KiB one's, acknowledged at once, does not).
    """

    #: tcpi_rtt: the kernel's smoothed round-trip time, in seconds (it keeps microseconds).
    smoothed_rtt_s: float | None = None
    #: tcpi_rttvar: its mean deviation, in seconds.
    rtt_var_s: float | None = None
    #: tcpi_total_retrans over the size: segments this end sent again.
    retransmits_total: int | None = None
    #: tcpi_segs_out / tcpi_segs_in over the size: every segment, pure acknowledgements included.
    segments_out: int | None = None
    segments_in: int | None = None
    #: tcpi_data_segs_out / tcpi_data_segs_in over the size: segments that carried data.
    data_segments_out: int | None = None
    data_segments_in: int | None = None
    #: tcpi_bytes_acked / tcpi_bytes_received over the size: stream bytes acknowledged by the
    #: peer, and received from it.
    bytes_acked: int | None = None
    bytes_received: int | None = None
    #: tcpi_snd_cwnd at the size's end, in segments of `mss_bytes`.
    congestion_window_segments: int | None = None
    #: tcpi_snd_mss: the largest segment this end sends, in bytes.
    mss_bytes: int | None = None
    #: Request/reply exchanges of the session protocol over the size (counted by the sender,
    #: not the kernel): each floor ping, message, tampered payload and the traced one is one,
    #: plus SIZE and SIZE_END. Divides the counters into "per exchange" figures.
    exchanges: int | None = None
    #: Why there is no reading ("not available on this OS (Darwin) ..."); None: read.
    unavailable: str | None = None

    def per_exchange(self, count: int | None) -> float | None:
        """A counter of this record divided by its exchanges (None when either is unknown)."""
        return None if count is None or not self.exchanges else count / self.exchanges

    def to_dict(self) -> dict[str, Any]:
        if self.unavailable is not None:
            return {"unavailable": self.unavailable}
        return {name: getattr(self, name) for name in _TCP_INFO_FIGURES}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TcpInfo:
        if data.get("unavailable") is not None:
            return cls(unavailable=str(data["unavailable"]))
        return cls.of(
            _opt_float(data.get("smoothed_rtt_s")),
            _opt_float(data.get("rtt_var_s")),
            {name: _opt_int(data.get(name)) for name in TCP_INFO_COUNTS},
        )

    @classmethod
    def of(cls, smoothed_rtt_s: float | None, rtt_var_s: float | None, counts: Mapping[str, int | None]) -> TcpInfo:
        """A reading from its two times and its counts by name (`TCP_INFO_COUNTS`; missing: None)."""
        return cls(
            smoothed_rtt_s=smoothed_rtt_s,
            rtt_var_s=rtt_var_s,
            retransmits_total=counts.get("retransmits_total"),
            segments_out=counts.get("segments_out"),
            segments_in=counts.get("segments_in"),
            data_segments_out=counts.get("data_segments_out"),
            data_segments_in=counts.get("data_segments_in"),
            bytes_acked=counts.get("bytes_acked"),
            bytes_received=counts.get("bytes_received"),
            congestion_window_segments=counts.get("congestion_window_segments"),
            mss_bytes=counts.get("mss_bytes"),
            exchanges=counts.get("exchanges"),
        )


#: TcpInfo's integer figures (counts of segments, bytes and exchanges; window and MSS).
TCP_INFO_COUNTS = (
    "retransmits_total",
    "segments_out",
    "segments_in",
    "data_segments_out",
    "data_segments_in",
    "bytes_acked",
    "bytes_received",
    "congestion_window_segments",
    "mss_bytes",
    "exchanges",
)
#: Every figure of TcpInfo, in its JSON order.
_TCP_INFO_FIGURES = ("smoothed_rtt_s", "rtt_var_s", *TCP_INFO_COUNTS)


__all__ = [
    "MAX_QUEUE_BYTES",
    "MAX_QUEUE_PACKETS",
    "SAMPLING_INTERVAL_S",
    "BurstLoss",
    "CpuUsage",
    "Link",
    "Load",
    "LoadStep",
    "MemoryUsage",
    "Placement",
    "ProcessPlacement",
    "ProcessUsage",
    "Security",
    "TCP_INFO_COUNTS",
    "TcpInfo",
    "Validation",
]

"""Typed records for the conditions a session ran under: its link (`Link`, with
`BurstLoss`), where its processes ran (`Placement`) and a load job's steps (`Load`).

Each is absent from a job's JSON until a job sets it, so results written before
them read back unchanged. Their fields are the agreed design (docs/ARCHITECTURE.md,
"Links, placement and load"); the features that fill them are built on these types.
Like the other parts of a job's result (`app.core.records.job_records`), each is frozen
and converts to and from exactly the results contract's JSON.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from app.core.records.job_records import opt_float, opt_int

#: A packet link's largest queue bounds: far beyond any router's buffer (a bufferbloated
#: one holds seconds), so a mistyped figure is refused, not run out of memory.
MAX_QUEUE_PACKETS = 1_000_000
MAX_QUEUE_BYTES = 1_000_000_000


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
    #: The run's link seed, which every loss and jitter draw of the link comes from (with the
    #: job's index: `draw_seed`): a run with the same seed loses the same packets, one with
    #: another seed is a run of its own. None in results written before it (the draws then
    #: came from the job's index alone). Absent from the JSON when None.
    seed: int | None = None

    def draw_seed(self, job_index: int) -> int:
        """What the link's generators are seeded with for the job at `job_index`."""
        if self.seed is None:
            return job_index
        digest = hashlib.sha256(f"{self.seed}/{job_index}".encode("ascii")).digest()
        return int.from_bytes(digest[:8], "big") >> 1

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
        for name in ("queue_packets", "queue_bytes", "seed"):
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
            rate_kbit_up=opt_float(rate.get("up")),
            rate_kbit_down=opt_float(rate.get("down")),
            loss_percent=float(data.get("loss_percent", 0)),
            emulation=str(data["emulation"]),
            congestion_control=None if data.get("congestion_control") is None else str(data["congestion_control"]),
            slow_start_after_idle=None
            if data.get("slow_start_after_idle") is None
            else bool(data["slow_start_after_idle"]),
            connection=str(data.get("connection") or "warm"),
            burst_loss=BurstLoss.from_dict(data["burst_loss"]) if data.get("burst_loss") else None,
            queue_packets=opt_int(data.get("queue_packets")),
            queue_bytes=opt_int(data.get("queue_bytes")),
            seed=opt_int(data.get("seed")),
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


class StepLimit(StrEnum):
    """What limited one load step, as app.core.load.verdict reads its figures."""

    #: The server took what was offered, and its latency stayed bounded.
    KEPT_UP = "kept-up"
    #: The server (or what lies between it and the generator) fell behind: requests queued.
    SERVER = "server"
    #: The generator could not offer the rate, and nothing showed the server falling behind.
    GENERATOR = "generator"


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
    #: Set when the load generator, not the server, was the bottleneck at this step
    #: (`limit` is GENERATOR): the generator's own marks below, and no sign of the server
    #: falling behind.
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
    #: What the generator's own marks say against it (late or short sends, misses), in
    #: words; None when they say nothing. Under server overload TCP back-pressure delays the
    #: generator's sends too, so these marks alone do not make a step generator-saturated.
    saturation_reason: str | None = None
    #: Requests of the measured window that were never sent: they came due while the
    #: generator's backlog was at its cap (app.core.load.generator.BACKLOG_MAX). Any makes
    #: the step generator-saturated unless the server is shown to have fallen behind (then the
    #: back-pressure filled the backlog). sent + missed is the window's schedule.
    missed: int = 0
    #: What limited the step and what that call rests on, in words (app.core.load.verdict);
    #: None in results written before the call was recorded (the verdict then reads the
    #: step's figures itself). Absent from the JSON when None.
    limit: StepLimit | None = None
    limit_reason: str | None = None
    #: The p50 latency of the requests due in the first and in the last quarter of the
    #: measured window: latency growing through a step is a queue growing without bound.
    #: Absent from the JSON when None (results written before them).
    latency_first_p50_s: float | None = None
    latency_last_p50_s: float | None = None
    #: Load from several machines: each generator's own record of this step (its share of
    #: the rate, its histogram, its marks), numbered by `generator`; the step's figures are
    #: their merge (app.core.load.merge). Empty for one generator. Absent from the JSON when empty.
    generators: tuple[LoadStep, ...] = ()
    #: Which generator (1-based, `Load.generators`) this record is, in a step's `generators`.
    generator: int | None = None
    #: Why the step is incomplete (a generator died, disconnected or returned late: its
    #: share is missing from the merge), naming the generator; None when every one returned.
    incomplete: str | None = None
    #: A generator's own record (load from several machines): how long after the agreed
    #: moment it began its share of the schedule, in seconds (negative: it was ready early,
    #: as it should be). Beyond app.core.load.merge's `late_start_limit_s` it marks the
    #: record. None for one local generator and in results written before it was kept;
    #: absent from the JSON then.
    started_late_s: float | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
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
        if self.limit is not None:
            data["limit"] = self.limit.value
        optional = ("limit_reason", "latency_first_p50_s", "latency_last_p50_s", "generator", "incomplete")
        for name in (*optional, "started_late_s"):
            if getattr(self, name) is not None:
                data[name] = getattr(self, name)
        if self.generators:
            data["generators"] = [part.to_dict() for part in self.generators]
        return data

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
            limit=StepLimit(data["limit"]) if data.get("limit") is not None else None,
            limit_reason=data.get("limit_reason"),
            latency_first_p50_s=number("latency_first_p50_s"),
            latency_last_p50_s=number("latency_last_p50_s"),
            generators=tuple(LoadStep.from_dict(part) for part in data.get("generators") or ()),
            generator=int(data["generator"]) if data.get("generator") is not None else None,
            incomplete=data.get("incomplete"),
            started_late_s=number("started_late_s"),
        )


@dataclass(frozen=True)
class LoadGeneratorPlace:
    """Load from several machines: where one generator ran and how its clock stood."""

    #: The Dask worker it ran on (its address, as the scheduler names it).
    worker: str
    #: The machine's name, as the worker reported it.
    host: str
    #: Its share of the job's client connections.
    clients: int
    #: Its clock against the coordinator's (seconds to add to a coordinator time), and how
    #: well that is known (half the least round trip of the exchanges it was measured by).
    clock_offset_s: float
    clock_uncertainty_s: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "worker": self.worker,
            "host": self.host,
            "clients": self.clients,
            "clock_offset_s": self.clock_offset_s,
            "clock_uncertainty_s": self.clock_uncertainty_s,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LoadGeneratorPlace:
        return cls(
            worker=str(data["worker"]),
            host=str(data["host"]),
            clients=int(data["clients"]),
            clock_offset_s=float(data["clock_offset_s"]),
            clock_uncertainty_s=float(data["clock_uncertainty_s"]),
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
    #: The highest rate of a step the server kept up with (`StepLimit.KEPT_UP`: achieved >=
    #: 95 % of offered, no errors, latency bounded, generator on time), and its p99 in seconds.
    sustained_per_s: float | None = None
    sustained_p99_s: float | None = None
    #: True when some step showed the server overloaded (`StepLimit.SERVER`: the knee is
    #: measured, not a lower bound); False: no step did, the knee lies higher.
    saturated: bool = False
    #: Load from several machines: the Dask scheduler the generators were placed through
    #: (its address, never credentials), and each generator, in the order its figures are
    #: numbered in the steps. None and empty for one local generator; absent from the JSON then.
    cluster: str | None = None
    generators: tuple[LoadGeneratorPlace, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
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
        if self.cluster is not None:
            data["cluster"] = self.cluster
        if self.generators:
            data["generators"] = [place.to_dict() for place in self.generators]
        return data

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
            cluster=data.get("cluster"),
            generators=tuple(LoadGeneratorPlace.from_dict(g) for g in data.get("generators") or ()),
        )


__all__ = [
    "LOAD_PERCENTILES",
    "MAX_QUEUE_BYTES",
    "MAX_QUEUE_PACKETS",
    "BurstLoss",
    "Link",
    "Load",
    "LoadGeneratorPlace",
    "LoadStep",
    "Placement",
    "ProcessPlacement",
    "StepLimit",
]

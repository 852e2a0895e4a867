"""Typed records for the parts of a job's result: CPU, memory, validation, security. The
conditions a session ran under (link, placement, load) are in `job_conditions`, what its
kernel saw (TCP_INFO) in `job_tcp_info`; the rules below hold for all of them.

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
from typing import Any

from app.core.vocab import Mode, measuring_role

#: The supervisor's CPU/RSS sampling interval, in seconds (recorded with every job).
SAMPLING_INTERVAL_S = 0.1


def opt_int(value: Any) -> int | None:
    return None if value is None else int(value)


def opt_float(value: Any) -> float | None:
    return None if value is None else float(value)


def read_rss(value: Any) -> int | None:
    """A resident size as read back: no running process has 0 bytes resident, so a 0 (a
    reading of a process already gone, a zombie, in results written before the sampler
    skipped them) is "not measured", None, never a figure of 0 B."""
    return None if value is None or int(value) <= 0 else int(value)


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
            rss_peak_bytes=read_rss(max(series.rss_bytes)) if series.rss_bytes else None,
            other_processes_mean_percent=sum(others) / len(others) if others else None,
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ProcessUsage:
        return cls(
            samples=opt_int(data.get("samples")),
            mean_percent=opt_float(data.get("mean_percent")),
            max_percent=opt_float(data.get("max_percent")),
            rss_peak_bytes=read_rss(data.get("rss_peak_bytes")),
            other_processes_mean_percent=opt_float(data.get("other_processes_mean_percent")),
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
        return cls(processes=processes, interval_s=opt_float(data.get("interval_s")))


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
            rss_peak_bytes={role: read_rss(v) for role, v in rss.items()},
            traced_peak_bytes={metric: int(v) for metric, v in traced.items() if v is not None},
        )


@dataclass(frozen=True)
class Validation:
    """Every message checked, and the tampered payloads that had to be rejected."""

    checked: int = 0
    failed: int = 0
    tamper_tried: int = 0
    tamper_rejected: int = 0

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
            classical_bits=opt_int(data.get("classical_bits")),
            pq_category=opt_int(data.get("pq_category")),
            insecure=None if insecure is None else bool(insecure),
        )


__all__ = [
    "SAMPLING_INTERVAL_S",
    "CpuUsage",
    "MemoryUsage",
    "ProcessUsage",
    "ResourceSeries",
    "Security",
    "Validation",
]


@dataclass
class ResourceSeries:
    """CPU % (of one core), RSS and the CPU it was on, over time, for one process."""

    role: str
    times: list[float] = field(default_factory=list)
    cpu_percent: list[float] = field(default_factory=list)
    rss_bytes: list[int] = field(default_factory=list)
    other_cpu_percent: list[float] = field(default_factory=list)
    #: The CPU the process was last seen running on at each reading (psutil cpu_num);
    #: -1 where the platform cannot say (macOS, Windows).
    cpu_nums: list[int] = field(default_factory=list)

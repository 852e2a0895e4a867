"""Run and job results: the model, its JSON contract, and the CSV export.

The JSON is a contract other tools read (docs/results-format.md): top level `format_version`,
`run` {id, started, finished, status, environment, profile}, `jobs` [{id, scheme,
backend, params, mode, message_size, status, error, metrics {NAME: {unit, n, mean,
median, std, min, max, p95, p99, ci95, outliers, ...}}, throughput_bytes_per_s,
wire_bytes, cpu, memory, validation {checked, failed, tamper_tried,
tamper_rejected}, warnings}]. Time metrics are in seconds. Extra keys may be added;
these are never renamed or removed.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.core.errors import CryptoBenchError
from app.core.fileio import FileReadError, read_limited
from app.core.json_bounds import structure_problem
from app.core.records.job_conditions import Link, Load, Placement, ProcessPlacement
from app.core.records.job_records import CpuUsage, MemoryUsage, Security, Validation
from app.core.records.job_tcp_info import TcpInfo
from app.core.records.link_path import LinkPath
from app.core.records.placement_words import cpu_ranges, measured_under
from app.core.records.recorded import RecordedEnvironment, RecordedProfile
from app.core.records.tls_record import TlsRecord
from app.core.results.check import check_results
from app.core.results.check_fields import clip_text
from app.core.results.errors import ResultsDataError
from app.core.results.load_csv import LOAD_CSV_COLUMNS, load_rows
from app.core.settings.links import link_text
from app.core.statistics.stability_warnings import StabilityWarning
from app.core.statistics.stats import MetricStats
from app.core.vocab import LEGACY_EXCHANGE, Exchange, Family, Mode

RESULTS_FORMAT_VERSION = 1

#: What each metric times, in words: used by the CLI, the GUI and reports.
METRIC_DESCRIPTIONS = {
    "keygen": "key pair generation (the receiver's long-term keys; the signer's for signatures)",
    "exchange": "sender side of one key establishment, as a session's handshake makes it: an ephemeral key pair "
    "and the agreement, or the encapsulation, and the KDF",
    "exchange_receiver": "receiver side of one key establishment: the agreement or the decapsulation, and the KDF",
    "encrypt": "seal one message (AEAD, public-key encryption; with a per-message exchange its key establishment too)",
    "decrypt": "open one message, including its integrity check (with a per-message exchange its key too)",
    "sign": "sign one message",
    "verify": "verify one signature",
    "hash": "digest one message",
    "derive": "derive one output key (HKDF extract + expand)",
    "encapsulate": "KEM encapsulation alone (key + encapsulated key)",
    "decapsulate": "KEM decapsulation alone",
    # Sessions (loopback and remote): a real sender and receiver process on TCP.
    "handshake": "sender side of the session handshake, once per session: with a session exchange the key "
    "establishment (an ephemeral key pair and the agreement, or the encapsulation, and the KDF); with a "
    "per-message one only loading the receiver's key; a signer's key pair; a tls13 job's: its ClientHello "
    "sent to the client's handshake done",
    "handshake_receiver": "receiver side of the session handshake: with a session exchange the agreement or "
    "decapsulation and the KDF",
    "handshake_rtt": "handshake message sent to the receiver's acknowledgement, at the sender",
    "compute": "sender seals one message (the computation delay)",
    "receiver": "receiver opens and validates one message, timed in the receiver process",
    "rtt": "message sent to acknowledgement received, at the sender (the communication delay)",
    "network": "rtt minus the receiver's open time: the transport's share, per sample",
    "floor_rtt": "raw ping-pong of frames of the payload's size on the same connection: the network floor",
    "connect": "fresh connections only: setting up each message's TCP connection (SYN to SYN-ACK), at the sender "
    "(a tls13 job: each handshake's)",
    # tls13 jobs (app/core/tls): one TCP connection and one TLS 1.3 handshake per sample.
    "connect_handshake": "tls13: connect's start to the client's handshake done, TCP's handshake and TLS's: what a "
    "client waits before it can send",
    "first_byte": "tls13: connect's start to the first byte of the server's response, the client's Finished and "
    "request sent together",
    "handshake_cpu_client": "tls13: the client's CPU time in one handshake (its thread's CPU clock)",
    "handshake_cpu_server": "tls13: the server's CPU time in one handshake, timed in the server process",
    "handshake_client": "tls13 operations: the client's handshake calls, both ends in one process over memory",
    "handshake_server": "tls13 operations: the server's handshake calls, both ends in one process over memory",
    # Load (many clients, one server): the steps themselves are in the job's `load`.
    "latency": "one request from its intended start to its acknowledgement, as a client saw it, at the lowest "
    "offered rate",
    "server": "the server's crypto for one request, timed in the server process",
}


@dataclass
class MetricResult:
    stats: MetricStats
    #: A list, or the packed array('d') that came over the pipe (converting 100,000
    #: floats to a list would hold the interpreter lock for milliseconds per metric).
    samples: Sequence[float]
    batch: int = 1
    traced_peak_bytes: int | None = None
    throughput_bytes_per_s: float | None = None

    def to_dict(self, samples: bool = True) -> dict[str, Any]:
        """JSON-ready; `samples=False` leaves the raw samples out (the store packs them)."""
        data = self.stats.to_dict()
        data.update(
            {
                "batch": self.batch,
                "traced_peak_bytes": self.traced_peak_bytes,
                "throughput_bytes_per_s": self.throughput_bytes_per_s,
            }
        )
        if samples:
            data["samples"] = list(self.samples)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MetricResult:
        return cls(
            stats=MetricStats.from_dict(data),
            samples=list(data.get("samples", [])),
            batch=int(data.get("batch", 1)),
            traced_peak_bytes=data.get("traced_peak_bytes"),
            throughput_bytes_per_s=data.get("throughput_bytes_per_s"),
        )


#: A load step's texts in words (the generators' marks, the call, what is missing): one
#: clause per generator, up to 64 of them (each failure's own message up to 300
#: characters), so longer than any text the checker reads back. Written cut, as an error is.
_STEP_TEXTS = ("saturation_reason", "limit_reason", "incomplete")


def _clip_step_texts(load: dict[str, Any]) -> None:
    for step in load["steps"]:
        for record in (step, *step.get("generators", ())):
            for key in _STEP_TEXTS:
                if record.get(key) is not None:
                    record[key] = clip_text(record[key])


@dataclass
class JobResult:
    id: str
    index: int
    scheme: str
    backend: str
    params: dict[str, Any]
    label: str
    # family, mode and status hold the values of Family, Mode and JobStatus. They stay
    # `str`: a StrEnum member equals its value, so code compares with the members, and
    # whatever a results file or store row holds passes through as read.
    family: str
    mode: str
    message_size: int
    status: str
    error: str | None = None
    metrics: dict[str, MetricResult] = field(default_factory=dict)
    throughput_bytes_per_s: float | None = None
    wire_bytes: dict[str, int] = field(default_factory=dict)
    cpu: CpuUsage = field(default_factory=CpuUsage)
    memory: MemoryUsage = field(default_factory=MemoryUsage)
    validation: Validation = field(default_factory=Validation)
    warnings: list[StabilityWarning] = field(default_factory=list)
    security: Security = field(default_factory=Security)
    notes: list[str] = field(default_factory=list)
    started: str | None = None
    finished: str | None = None
    #: Sessions: whether TCP_NODELAY was set (False: Nagle's algorithm on). None: no socket.
    tcp_nodelay: bool | None = None
    #: The conditions of a session (its link, placement, load, TCP_INFO); absent from the JSON until set.
    link: Link | None = None
    placement: Placement | None = None
    load: Load | None = None
    #: Sessions: what each end's kernel saw over this size (TCP_INFO), by role ("sender",
    #: "receiver"); absent from the JSON when empty (operations jobs, results before it).
    tcp_info: Mapping[str, TcpInfo] = field(default_factory=dict)
    #: A packet link's path over this size (app.core.records.link_path); absent otherwise.
    path: LinkPath | None = None
    #: A key-establishing job's exchange pattern (a `vocab.Exchange` value), as recorded;
    #: absent from results written before jobs named it: `exchange_used` reads those.
    exchange: str | None = None
    #: A tls13 job's handshakes over this size (app.core.records.tls_record); absent otherwise.
    tls: TlsRecord | None = None

    @property
    def exchange_used(self) -> Exchange | None:
        """The exchange pattern this job measured: the recorded one, else what its family's
        jobs did before jobs named it (`vocab.LEGACY_EXCHANGE`: a key agreement once per
        session, a hybrid per message); None for a family without key establishment."""
        if self.exchange is not None:
            try:
                return Exchange(self.exchange)
            except ValueError:
                return None
        try:
            return LEGACY_EXCHANGE.get(Family(self.family))
        except ValueError:
            return None

    @property
    def named(self) -> str:
        """The label as a table shows it: ending with the exchange pattern where the job has
        one its label does not say (results recorded before labels said it)."""
        exchange = self.exchange_used
        if exchange is None or exchange.suffix in self.label:
            return self.label
        over = self.label.rfind(" over ") if self.link is not None else -1  # before the link, as labels say it
        if over > 0:
            return self.label[:over] + exchange.suffix + self.label[over:]
        return self.label + exchange.suffix

    def to_dict(self, samples: bool = True) -> dict[str, Any]:
        data = {
            "id": self.id,
            "index": self.index,
            "scheme": self.scheme,
            "backend": self.backend,
            "params": dict(self.params),
            "label": self.label,
            "family": self.family,
            "mode": self.mode,
            "message_size": self.message_size,
            "status": self.status,
            # An exception's message may be any length: kept within what the checker reads
            # back (check_fields.MAX_TEXT_CHARS), saying that it was cut and how long it was.
            "error": None if self.error is None else clip_text(self.error),
            "metrics": {name: metric.to_dict(samples) for name, metric in self.metrics.items()},
            "throughput_bytes_per_s": self.throughput_bytes_per_s,
            "wire_bytes": dict(self.wire_bytes),
            "cpu": self.cpu.to_dict(),
            "memory": self.memory.to_dict(),
            "validation": self.validation.to_dict(),
            "warnings": [w.to_dict() for w in self.warnings],
            "security": self.security.to_dict(),
            "notes": [clip_text(note) for note in self.notes],
            "started": self.started,
            "finished": self.finished,
            "tcp_nodelay": self.tcp_nodelay,
        }
        records = (
            ("link", self.link),
            ("placement", self.placement),
            ("load", self.load),
            ("path", self.path),
            ("tls", self.tls),
        )
        for name, record in records:
            if record is not None:
                data[name] = record.to_dict()
        if isinstance(load := data.get("load"), dict):
            _clip_step_texts(load)
        if self.tcp_info:
            data["tcp_info"] = {role: info.to_dict() for role, info in self.tcp_info.items()}
        if self.exchange is not None:
            data["exchange"] = str(self.exchange)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JobResult:
        return cls(
            id=data["id"],
            index=int(data.get("index", 0)),
            scheme=data["scheme"],
            backend=data["backend"],
            params=dict(data.get("params", {})),
            label=data.get("label", data["scheme"]),
            family=data.get("family", ""),
            mode=data.get("mode", Mode.OPERATIONS),
            message_size=int(data.get("message_size", 0)),
            status=data["status"],
            error=data.get("error"),
            metrics={k: MetricResult.from_dict(v) for k, v in data.get("metrics", {}).items()},
            throughput_bytes_per_s=data.get("throughput_bytes_per_s"),
            wire_bytes=dict(data.get("wire_bytes", {})),
            cpu=CpuUsage.from_dict(data.get("cpu") or {}),
            memory=MemoryUsage.from_dict(data.get("memory") or {}),
            validation=Validation.from_dict(data.get("validation") or {}),
            warnings=[StabilityWarning.from_dict(w) for w in data.get("warnings", [])],
            security=Security.from_dict(data.get("security") or {}),
            notes=list(data.get("notes", [])),
            started=data.get("started"),
            finished=data.get("finished"),
            tcp_nodelay=data.get("tcp_nodelay"),
            link=Link.from_dict(data["link"]) if data.get("link") else None,
            placement=Placement.from_dict(data["placement"]) if data.get("placement") else None,
            load=Load.from_dict(data["load"]) if data.get("load") else None,
            tcp_info={role: TcpInfo.from_dict(info) for role, info in (data.get("tcp_info") or {}).items()},
            path=LinkPath.from_dict(data["path"]) if data.get("path") else None,
            exchange=data.get("exchange"),
            tls=TlsRecord.from_dict(data["tls"]) if data.get("tls") else None,
        )


@dataclass
class RunResult:
    id: str
    started: str
    status: str  # a RunStatus value
    environment: dict[str, Any]
    profile: dict[str, Any]
    finished: str | None = None
    jobs: list[JobResult] = field(default_factory=list)
    #: What could not be read back from the store, one line each ("job 3 (id): JSON cut short
    #: ..."). Not part of the results contract: a damaged job is exported as a failed
    #: placeholder whose error says the same.
    damaged: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.profile.get("name", ""))

    @property
    def environment_view(self) -> RecordedEnvironment:
        """The environment's facts, typed: what the faces read instead of `environment.get(...)`."""
        return RecordedEnvironment.from_dict(self.environment)

    @property
    def profile_view(self) -> RecordedProfile:
        """The profile's facts (as run), typed."""
        return RecordedProfile.from_dict(self.profile)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format_version": RESULTS_FORMAT_VERSION,
            "run": {
                "id": self.id,
                "started": self.started,
                "finished": self.finished,
                "status": self.status,
                "environment": self.environment,
                "profile": self.profile,
            },
            "jobs": [job.to_dict() for job in self.jobs],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunResult:
        version = data.get("format_version")
        if version != RESULTS_FORMAT_VERSION:
            raise ValueError(f"results format_version {version!r} is not supported (expected {RESULTS_FORMAT_VERSION})")
        run = data["run"]
        return cls(
            id=run["id"],
            started=run["started"],
            finished=run.get("finished"),
            status=run["status"],
            environment=run.get("environment", {}),
            profile=run.get("profile", {}),
            jobs=[JobResult.from_dict(job) for job in data.get("jobs", [])],
        )


class ResultsFileError(CryptoBenchError):
    """A results JSON file that cannot be read; the message names the file and the problem."""


#: The largest results file read (import, report, compare, the window's Import and Open).
#: A results file is parsed whole, at 3 to 4 bytes of memory per byte of file (a 525 MB
#: file took 2.1 GiB to import before; a 500 MB one now 1.3 GiB, 15 s), so 512 MiB needs
#: up to 2 GiB: what a desktop can spare. The app writes a sample in about 36 bytes, so
#: this holds some 14 million samples: fourteen metrics at the 1,000,000-sample maximum.
#: Without a bound, /dev/zero ended in a MemoryError and a stray multi-gigabyte file took
#: the machine's memory.
MAX_RESULTS_FILE_BYTES = 512 << 20
#: Bytes do not bound memory: json.loads spends ~75 bytes on an empty array and 40 to 80 on
#: a number or short string, so a 30 MB file of ten million `[]` took 2.4 GiB and 512 MiB
#: of `0.0,` would need many GiB. So the text's arrays and objects and its values are
#: counted before parsing (`app.core.json_bounds`), against what a file of this app's
#: within MAX_RESULTS_FILE_BYTES can hold, which follows from how it writes (`to_json`,
#: indent 2): every value it writes takes at least 15 bytes (a list item sits at 12 or more
#: spaces of indentation, then a digit, a comma and a newline; samples take 19 to 25), and
#: every array or object more than 56 (the sparest record, a failed job without metrics,
#: takes 74 per container as the runner writes it, 63.6 with one-character names).
#: tests/reliability/test_file_bounds.py measures both on every record shape the app
#: writes. The worst a file within both caps can cost is then about 36 million short
#: strings, under 3 GiB, or 9.6 million empty arrays, 0.8 GiB (the bytes alone allowed
#: some 40 GiB).
MAX_RESULTS_VALUES = MAX_RESULTS_FILE_BYTES // 15
MAX_RESULTS_CONTAINERS = MAX_RESULTS_FILE_BYTES // 56


def load_results_file(path: Path) -> RunResult:
    """Read a results JSON file written by `cryptobench run --json` or Export results.

    Only a regular file of at most MAX_RESULTS_FILE_BYTES (`fileio.read_limited`: a FIFO
    never blocks, a device is never opened)."""
    path = Path(path)
    try:
        raw = read_limited(path, MAX_RESULTS_FILE_BYTES, "a results file")
    except FileReadError as exc:
        raise ResultsFileError(f"{path}: {exc.reason}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ResultsFileError(f"{path}: not a results JSON file (not UTF-8 text)") from None
    del raw  # the text alone from here: the bytes would double the peak memory
    return parse_results_text(text, str(path))


def parse_results_text(text: str, path: str) -> RunResult:
    """A results document from its JSON text; ResultsFileError's message starts with `path`."""
    problem = structure_problem(
        text,
        max_containers=MAX_RESULTS_CONTAINERS,
        max_values=MAX_RESULTS_VALUES,
        holds=f"a results file of this app holds in {MAX_RESULTS_FILE_BYTES >> 20} MiB",
    )
    if problem is not None:
        raise ResultsFileError(f"{path}: not a results JSON file ({problem})")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsFileError(f"{path}: not a results JSON file (line {exc.lineno}: {exc.msg})") from None
    except RecursionError:  # the C scanner recurses once per nesting level
        raise ResultsFileError(f"{path}: not a results JSON file (nested too deeply)") from None
    except ValueError:  # an integer longer than Python's int/str conversion limit (4300 digits)
        raise ResultsFileError(f"{path}: not a results JSON file (a number has too many digits)") from None
    if not isinstance(data, dict) or "run" not in data:
        raise ResultsFileError(f'{path}: not CryptoBench results (no "run" object at the top level)')
    version = data.get("format_version")
    if version != RESULTS_FORMAT_VERSION:
        raise ResultsFileError(
            f"{path}: format_version: {_shown_version(version)} is not supported (this "
            f"version reads {RESULTS_FORMAT_VERSION})"
        )
    # Every field is checked before any is used: a results file is input, and a wrong
    # type used to surface as a traceback deep in the report code.
    try:
        check_results(data)
    except ResultsDataError as exc:
        raise ResultsFileError(f"{path}: {exc}") from None
    try:
        return RunResult.from_dict(data)
    except KeyError as exc:  # not expected after check_results; kept as a last line of defence
        raise ResultsFileError(f"{path}: incomplete results: missing field {exc.args[0]!r}") from None
    except (TypeError, ValueError, AttributeError) as exc:
        raise ResultsFileError(f"{path}: invalid results: {exc}") from None


def _shown_version(value: Any) -> str:
    text = json.dumps(value) if isinstance(value, (int, float, str, bool, type(None))) else type(value).__name__
    return text[:40] + "..." if len(text) > 43 else text


# --- exports ------------------------------------------------------------------------

CSV_COLUMNS = (
    "run_id",
    "job_id",
    "scheme",
    "backend",
    "params",
    "label",
    "family",
    "mode",
    "message_size",
    "status",
    "error",
    "metric",
    "unit",
    "n",
    "batch",
    "mean",
    "median",
    "std",
    "min",
    "max",
    "p5",
    "p95",
    "p99",
    "ci95_low",
    "ci95_high",
    "cv",
    "outliers",
    "throughput_bytes_per_s",
    "traced_peak_bytes",
    "wire_payload_bytes",
    "cpu_mean_percent",
    "rss_peak_bytes",
    "validation_checked",
    "validation_failed",
    "tamper_tried",
    "tamper_rejected",
    "classical_bits",
    "pq_category",
    "insecure",
    "warnings",
    # Appended after the first release's columns, which keep their positions:
    "link",
    "placement",
    "placement_cpus",
    "placement_seen",
    # A load job's step rows and, for generators on Dask workers, each generator's
    # (app.core.results.load_csv); empty in every other row:
    *LOAD_CSV_COLUMNS,
    # A key-establishing job's exchange pattern (recorded, or its family's before jobs
    # named it: `JobResult.exchange_used`); empty for any other family:
    "exchange",
)


def to_json(run: RunResult) -> str:
    return json.dumps(run.to_dict(), indent=2, allow_nan=False) + "\n"  # strict JSON, never Infinity


def to_csv(run: RunResult) -> str:
    """One row per job and metric (a failed job without metrics gets one row); a load job
    then a row per step and per generator and step (`load_rows`)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for job in run.jobs:
        cpu = job.cpu.measuring(job.mode)
        base = {
            "run_id": run.id,
            "job_id": job.id,
            "scheme": job.scheme,
            "backend": job.backend,
            "params": json.dumps(job.params, sort_keys=True),
            "label": job.label,
            "family": job.family,
            "mode": job.mode,
            "message_size": job.message_size,
            "status": job.status,
            "error": job.error or "",
            "wire_payload_bytes": job.wire_bytes.get("payload", ""),
            "cpu_mean_percent": _fmt(cpu.mean_percent) if cpu else "",
            "rss_peak_bytes": _blank(cpu.rss_peak_bytes) if cpu else "",
            "validation_checked": job.validation.checked,
            "validation_failed": job.validation.failed,
            "tamper_tried": job.validation.tamper_tried,
            "tamper_rejected": job.validation.tamper_rejected,
            "classical_bits": _blank(job.security.classical_bits) if job.security.known else "",
            "pq_category": _blank(job.security.pq_category) if job.security.known else "",
            "insecure": _blank(job.security.insecure) if job.security.known else "",
            "warnings": "; ".join(f"{w.metric or 'job'}: {w.code.value}" for w in job.warnings),
            "link": link_text(job.link) if job.link is not None else "",
            **_placement_cells(job.placement),
            "exchange": _blank(job.exchange_used),
        }
        if not job.metrics:
            writer.writerow(base)
        for name, metric in job.metrics.items():
            s = metric.stats
            writer.writerow(
                {
                    **base,
                    "metric": name,
                    "unit": s.unit,
                    "n": s.n,
                    "batch": metric.batch,
                    "mean": _fmt(s.mean),
                    "median": _fmt(s.median),
                    "std": _fmt(s.std),
                    "min": _fmt(s.min),
                    "max": _fmt(s.max),
                    "p5": _fmt(s.p5),
                    "p95": _fmt(s.p95),
                    "p99": _fmt(s.p99),
                    "ci95_low": _fmt(s.ci95[0]) if s.ci95 else "",
                    "ci95_high": _fmt(s.ci95[1]) if s.ci95 else "",
                    "cv": _fmt(s.cv),
                    "outliers": s.outliers,
                    "throughput_bytes_per_s": _fmt(metric.throughput_bytes_per_s),
                    "traced_peak_bytes": metric.traced_peak_bytes if metric.traced_peak_bytes is not None else "",
                }
            )
        if job.load is not None:
            for row in load_rows(job.load):
                writer.writerow({**base, **row})
    return out.getvalue()


def _placement_cells(placement: Placement | None) -> dict[str, str]:
    """The placement columns, made to filter on (docs/ARCHITECTURE.md, "CSV"): the policy the
    figures were measured under (`free` where the one asked for could not be applied: the
    warnings column then has placement-unavailable), and per process in start order the CPUs
    it was allowed and those the sampler saw it on ("receiver 1; sender 0-1")."""
    if placement is None:
        return {"placement": "", "placement_cpus": "", "placement_seen": ""}

    def per_role(cpus_of: Callable[[ProcessPlacement], tuple[int, ...]]) -> str:
        return "; ".join(
            f"{role} {','.join(cpu_ranges(cpus_of(process))) or '-'}" for role, process in placement.processes.items()
        )

    seen = any(p.observed_cpus for p in placement.processes.values())
    return {
        "placement": measured_under(placement),
        "placement_cpus": per_role(lambda p: p.allowed_cpus),
        # Empty when no process was sampled (a job over within one 100 ms interval).
        "placement_seen": per_role(lambda p: p.observed_cpus) if seen else "",
    }


def _fmt(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def _blank(value: object) -> object:
    """A CSV cell: None is an empty cell (as csv writes it), anything else as is."""
    return "" if value is None else value

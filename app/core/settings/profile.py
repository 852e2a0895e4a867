"""What a profile is: the pydantic models a profile file is checked against (`Profile`,
`JobSpec`), the limits they declare (`field_limits`), the error that names a bad field
(`ProfileError`) and what the profile layer resolves a job to (`ResolvedJob`).

The rest of app.core.profile works with them: `files` reads and saves profiles,
`resolve` checks and resolves their jobs, `edits` changes them for the command line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import annotated_types
from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.core.errors import CryptoBenchError
from app.core.records.job_conditions import Link
from app.core.settings.links import LinkValue
from app.core.settings.load import LoadFields, LoadSettings
from app.core.vocab import (
    DEFAULT_PLACEMENT,
    CongestionControl,
    Exchange,
    Family,
    LinkEmulationChoice,
    Mode,
    ParamValue,
    PlacementPolicy,
    TcpConnection,
)

FORMAT_VERSION = 2

#: The key-establishing schemes of format 1 by what their jobs did then: a key agreement
#: agreed once per session, a hybrid encapsulated in every message (`vocab.LEGACY_EXCHANGE`
#: by family). Frozen: a scheme added later never had a format-1 job.
_FORMAT_1_EXCHANGE = {
    **dict.fromkeys(("ecdh", "x25519", "x448"), Exchange.SESSION),
    **dict.fromkeys(("rsa-kem", "ecies", "ml-kem", "x25519-ml-kem-768"), Exchange.PER_MESSAGE),
}


def _from_1(data: dict[str, Any]) -> dict[str, Any]:
    """Format 1 to 2: jobs name their exchange pattern (`JobSpec.exchange`), whose default
    is "session". A format-1 job of a key-establishing scheme gets the pattern it measured
    then, so the profile measures what it did: a hybrid "per-message"."""
    jobs = data.get("jobs")
    if not isinstance(jobs, list):
        return data  # the model's own check names what is wrong
    upgraded = []
    for job in jobs:
        scheme = job.get("scheme") if isinstance(job, dict) else None
        if isinstance(scheme, str) and "exchange" not in job:
            pattern = _FORMAT_1_EXCHANGE.get(scheme)
            if pattern is not None:
                job = {**job, "exchange": str(pattern)}
        upgraded.append(job)
    return {**data, "jobs": upgraded}


#: Migrations from an older format: version -> function upgrading a dict by one step.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _from_1}

DEFAULT_MESSAGE_SIZES = (1024,)
MAX_MESSAGE_SIZE = 1 << 30  # 1 GiB: beyond this a single message is not a benchmark
#: Copies of a message an operations job holds at once (plaintext, sealed parts,
#: joined payload, opened plaintext, the batch's outputs, slack for the library).
MEMORY_COPIES = 6
#: Most samples per job, in a file and from `run --samples` alike.
MAX_SAMPLES = 1_000_000
#: A profile file is a few KiB; reading stops past this so `run /dev/zero` or a wrong
#: multi-gigabyte file is refused instead of filling memory.
MAX_PROFILE_BYTES = 16 << 20
#: Arrays and objects a profile may hold, counted before parsing (`app.core.json_bounds`):
#: a byte bound alone let 16 MiB of `[],` take 1.7 GiB and 12 s to refuse. The densest
#: valid profile in containers is jobs of custom links, `{"delay_ms":0},` (15 bytes a
#: container; a job's `"params":{},` 12), so a valid profile of MAX_PROFILE_BYTES holds
#: fewer than this; its values are bounded by the bytes alone (a number or short string
#: costs at most ~80 bytes of memory against 2 to 5 of file).
MAX_PROFILE_CONTAINERS = MAX_PROFILE_BYTES // 12
#: A job's label is shown in tables, chart legends and the window's rows: 200 characters
#: are a long line already. Unbounded, a 1.6-million-character label ran and exported, and
#: the PDF report of it never finished (text layout grows faster than the text).
MAX_LABEL_CHARS = 200
#: A profile's description is a paragraph or a few: 4,000 characters (a 2 MB one made the
#: PDF take 14 s).
MAX_DESCRIPTION_CHARS = 4_000
#: A job's parameters: as many as a session's job description carries
#: (`app.core.session.protocol`), names and text values as long as a label. A scheme's
#: own are a handful of short names with numbers or a curve's name; before, a 100 KB value
#: was refused with all of it echoed in the message.
MAX_PARAMS = 32
#: Command-line overrides a profile records (run has fewer options than this).
MAX_OVERRIDES = 16
#: An override's value as recorded: a `--link` JSON object is a few hundred characters.
MAX_OVERRIDE_CHARS = 1_000
MAX_PARAM_NAME_CHARS = 64
#: A link seed is a non-negative 63-bit integer (what `secrets.randbelow` draws for a run).
MAX_LINK_SEED = 2**63 - 1


class ProfileError(CryptoBenchError):
    """A profile that cannot run. str() is a one-line message naming file and field."""

    def __init__(self, message: str, *, source: str | None = None, field: str | None = None) -> None:
        self.source, self.field, self.detail = source, field, message
        prefix = ": ".join(part for part in (source, field) if part)
        super().__init__(f"{prefix}: {message}" if prefix else message)


class JobSpec(LoadFields):
    """One job as written in a profile (before the registry checks it); a job in mode
    load also has the fields of `LoadFields` (clients, rates, ...)."""

    # strict: JSON types as written. Lax mode silently read "30" and 30.0 as 30, true as 1
    # and "no"/0 as false (tcp_nodelay), so a mistyped value ran instead of being refused.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    scheme: str = Field(min_length=1)
    # min_length: "" used to fall back to the default backend silently.
    backend: str | None = Field(default=None, min_length=1)
    params: dict[str, int | str | bool] = Field(default_factory=dict)
    # Not strict: a profile's JSON string becomes the member ("loopback" -> Mode.LOOPBACK);
    # anything else is refused as before, with the same "Input should be ..." message.
    mode: Mode = Field(default=Mode.OPERATIONS, strict=False)
    message_sizes: list[int] | None = Field(default=None, min_length=1, max_length=256)
    samples: int = Field(default=30, ge=1, le=MAX_SAMPLES)
    warmup: int = Field(default=5, ge=0, le=100_000)
    keygen_samples: int = Field(default=10, ge=1, le=10_000)
    pause_ms: float = Field(default=0.0, ge=0, le=60_000, allow_inf_nan=False)
    tamper: int = Field(default=5, ge=0, le=10_000)
    #: Sessions only: False leaves Nagle's algorithm on at both ends (E1 compares both).
    tcp_nodelay: bool = True
    label: str | None = Field(default=None, max_length=MAX_LABEL_CHARS)
    #: Loopback and load: the emulated link between sender and receiver (a load job's clients
    #: all share it), a preset's name or an
    #: object (app.core.settings.links); `links` sweeps the job over several (one job per link).
    link: LinkValue | None = None
    links: list[LinkValue] | None = Field(default=None, min_length=1, max_length=64)
    #: How the link is emulated: "stream-relay", "packet" or "auto" (packet where the machine
    #: allows it); None: DEFAULT_LINK_EMULATION.
    link_emulation: LinkEmulationChoice | None = Field(default=None, strict=False)
    #: The packet path only: the congestion control both ends use (None: the kernel's default).
    tcp_congestion_control: CongestionControl | None = Field(default=None, strict=False)
    #: The packet path only: whether an idle connection restarts from the initial window
    #: (tcp_slow_start_after_idle in the job's namespaces; None: the kernel's default).
    tcp_slow_start_after_idle: bool | None = None
    #: The packet path only: "fresh" sends every timed message on a new connection (slow
    #: start from the initial window, what first contact pays); None or "warm": the
    #: session's one connection.
    tcp_connection: TcpConnection | None = Field(default=None, strict=False)
    #: Which CPUs the job's processes may run on; None: DEFAULT_PLACEMENT (docs/placement.md).
    placement: PlacementPolicy | None = Field(default=None, strict=False)
    #: Key agreement and hybrid (KEM) jobs only: "session" (one key establishment per
    #: session, then AEAD per message) or "per-message" (a fresh one in every message);
    #: None: DEFAULT_EXCHANGE. Refused for any other family (profile.resolve).
    exchange: Exchange | None = Field(default=None, strict=False)

    @field_validator("params")
    @classmethod
    def _params_bounded(cls, params: dict[str, int | str | bool]) -> dict[str, int | str | bool]:
        if len(params) > MAX_PARAMS:
            raise ValueError(f"at most {MAX_PARAMS} parameters, got {len(params)}")
        for name, value in params.items():
            if len(name) > MAX_PARAM_NAME_CHARS:
                raise ValueError(
                    f"a parameter name of at most {MAX_PARAM_NAME_CHARS} characters expected, got one of {len(name):,}"
                )
            if isinstance(value, str) and len(value) > MAX_LABEL_CHARS:
                raise ValueError(
                    f"parameter {name!r}: text of at most {MAX_LABEL_CHARS} characters expected, got {len(value):,}"
                )
        return params

    @field_validator("message_sizes")
    @classmethod
    def _sizes_in_range(cls, sizes: list[int] | None) -> list[int] | None:
        if sizes is not None:
            for size in sizes:
                if size < 0:
                    raise ValueError(f"message size must not be negative, got {size}")
                if size > MAX_MESSAGE_SIZE:
                    raise ValueError(f"message size {size:,} bytes exceeds the 1 GiB limit")
        return sizes


class Profile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    format_version: int = Field(default=FORMAT_VERSION, ge=1)
    name: str = Field(min_length=1, max_length=MAX_LABEL_CHARS)
    description: str = Field(default="", max_length=MAX_DESCRIPTION_CHARS)
    #: A published experiment this profile reproduces ("E1".."E4"): its report then
    #: sets the published figures beside the measured ones (resources/experiments/).
    experiment: str | None = Field(default=None, pattern=r"^E[0-9]+$")
    jobs: list[JobSpec] = Field(min_length=1, max_length=10_000)
    #: Set by `edits.reduced` (`run --reduced`, the window's Quick check): the numbers are
    #: a smoke test, not for comparison. Recorded with the run; every face marks it.
    reduced: bool | None = None
    #: Settings the command line changed on every job (`run --samples 3`: {"--samples": "3"}),
    #: set by `edits`: a run of a preset with them is not that preset, and is recorded,
    #: named and marked as such (`app.core.results.run_origin`).
    overrides: dict[str, str] | None = Field(default=None, max_length=MAX_OVERRIDES)
    #: The seed every emulated link's loss and jitter draws come from (`run --link-seed`):
    #: None draws a new one per run, which every linked job's `link.seed` records, so a run
    #: can be repeated loss for loss, and two runs of one profile lose different packets.
    link_seed: int | None = Field(default=None, ge=0, le=MAX_LINK_SEED)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True)


@dataclass(frozen=True)
class FieldLimits:
    """A numeric field's default and inclusive bounds, as its model declares them."""

    #: None for a required field (a custom link's delay_ms has no default).
    default: int | float | None
    minimum: int | float
    maximum: int | float


def field_limits(model: type[BaseModel], name: str) -> FieldLimits:
    """The default and `Field(ge=, le=)` bounds of `model`'s numeric field `name`: the
    window's spin boxes read them here, so each default and limit is written once, in
    the model. TypeError for a field with a default that is not a number, or without both
    bounds."""
    info = model.model_fields[name]
    minimum: int | float | None = None
    maximum: int | float | None = None
    for constraint in info.metadata:
        if isinstance(constraint, annotated_types.Ge) and isinstance(constraint.ge, int | float):
            minimum = constraint.ge
        elif isinstance(constraint, annotated_types.Le) and isinstance(constraint.le, int | float):
            maximum = constraint.le
    required = info.is_required()
    if not (required or isinstance(info.default, int | float)) or minimum is None or maximum is None:
        raise TypeError(f"{model.__name__}.{name} is not a bounded number")
    return FieldLimits(None if required else info.default, minimum, maximum)


@dataclass(frozen=True)
class ResolvedJob:
    """A job checked against the registry: what the runner executes."""

    index: int
    scheme: str
    backend: str
    params: dict[str, ParamValue]
    mode: Mode
    message_sizes: list[int]
    samples: int
    warmup: int
    keygen_samples: int
    pause_ms: float
    tamper: int
    label: str
    family: Family
    tcp_nodelay: bool = True
    #: Loopback and load: the emulated link between sender and receiver, resolved to numbers
    #: (None: plain loopback). Recorded on every result of the job.
    link: Link | None = None
    #: Which CPUs the job's processes may run on (app.core.machine.placement applies it).
    placement: PlacementPolicy = DEFAULT_PLACEMENT
    #: Mode load only: clients, server workers, offered rates, durations.
    load: LoadSettings | None = None
    #: Key-establishing families only: how the job establishes its keys (None elsewhere).
    exchange: Exchange | None = None

"""A load job's settings: the profile fields (`LoadFields`, part of `JobSpec`) and what
the profile layer resolves them to (`LoadSettings`, part of `ResolvedJob`)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field, field_validator

#: At most this many client connections: one generator process drives them all.
MAX_CLIENTS = 256
MAX_SERVER_WORKERS = 64
#: Offered rates beyond this are not something one Python generator can schedule.
MAX_RATE_PER_S = 1_000_000.0
MAX_DURATION_S = 600.0
MAX_WARMUP_S = 60.0
MAX_STEPS = 32
#: Load from several machines: at most this many generators (one per Dask worker), and a
#: scheduler address at most this long.
MAX_GENERATORS = 64
MAX_CLUSTER_ADDRESS_CHARS = 512
#: What a worker reports of itself, as the results keep it: its host name cut to this
#: (a DNS name is at most 253 characters), its clock at most this far from this machine's
#: (further is a clock to set, not one to correct for), its worker address cut to
#: MAX_CLUSTER_ADDRESS_CHARS.
MAX_HOST_CHARS = 255
MAX_CLOCK_OFFSET_S = 86_400.0
#: The Dask comms a scheduler address may name: plain TCP, or TLS with Dask's own security settings.
CLUSTER_SCHEMES = ("tcp", "tls")
#: A load job's one message, sealed per request, when the profile names no size.
DEFAULT_LOAD_MESSAGE_SIZE = 32
#: `"rate_per_s": "sweep"`: find the saturation point by itself.
SWEEP = "sweep"


class LoadFields(BaseModel):
    """The fields a profile job in `"mode": "load"` may set (every other mode refuses them).

    Inherited by `app.core.profile.files.JobSpec`, whose configuration (strict, no extra keys)
    applies to them too.
    """

    #: Client connections, all driven by one load-generator process.
    clients: int | None = Field(default=None, ge=1, le=MAX_CLIENTS)
    #: Server processes accepting on the same port (SO_REUSEPORT where more than one).
    server_workers: int | None = Field(default=None, ge=1, le=MAX_SERVER_WORKERS)
    #: Requests per second offered over all clients, or "sweep" (the default without `rates`).
    rate_per_s: float | Literal["sweep"] | None = None
    #: Several offered rates, one step each, in this order (instead of `rate_per_s`).
    rates: list[float] | None = Field(default=None, min_length=1, max_length=MAX_STEPS)
    #: Each step's measured window, after `warmup_s` at the same rate that is not recorded.
    duration_s: float | None = Field(default=None, gt=0, le=MAX_DURATION_S, allow_inf_nan=False)
    warmup_s: float | None = Field(default=None, ge=0, le=MAX_WARMUP_S, allow_inf_nan=False)
    #: Load from several machines: the Dask scheduler whose workers run the generators
    #: ("tcp://HOST:PORT" or "tls://HOST:PORT"), and how many of them (default: every worker).
    cluster: str | None = Field(default=None, max_length=MAX_CLUSTER_ADDRESS_CHARS)
    generators: int | None = Field(default=None, ge=1, le=MAX_GENERATORS)
    #: The user's confirmation that the server's token may travel to the workers over plain
    #: TCP (any tcp:// scheduler or worker: the loopback is not private on a shared machine).
    cluster_plain_tcp: bool | None = None

    @field_validator("cluster")
    @classmethod
    def _scheduler_address(cls, value: str | None) -> str | None:
        if value is None:
            return value
        return cluster_address(value)

    @field_validator("rate_per_s", mode="before")
    @classmethod
    def _number_or_sweep(cls, value: object) -> object:
        # Before the union's own checks, whose errors name its branches ("rate_per_s.float").
        if (
            value is None
            or value == SWEEP
            or (isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value))
        ):
            return value
        raise ValueError(f'a number of requests per second, or "{SWEEP}"')


#: The job fields a load job has no use for, and why: each is refused, naming it, when a
#: load job sets it to anything but its default (the window hides them for load jobs, and a
#: saved profile omits them; `tamper` a load job does use: tampered requests are refused).
IGNORED_BY_LOAD: dict[str, str] = {
    "samples": "a load job runs no sample rounds: each offered rate runs for duration_s",
    "warmup": "a load job warms up for warmup_s seconds at each rate, not for a count of samples",
    "keygen_samples": "a load job times no key generation rounds",
    "pause_ms": "a load job pauses between no samples: its offered rate sets when requests go",
}

#: The load fields' names, for the message that refuses them outside mode load.
LOAD_FIELD_NAMES: tuple[str, ...] = tuple(LoadFields.model_fields)


@dataclass(frozen=True)
class LoadSettings:
    """A load job as resolved: every field has its value."""

    clients: int = 4
    server_workers: int = 1
    #: The offered rates in order; empty: sweep (app.core.load.sweep plans them).
    rates: tuple[float, ...] = ()
    duration_s: float = 3.0
    warmup_s: float = 0.5
    #: The Dask scheduler placing the generators, and how many (None: one local generator;
    #: every worker).
    cluster: str | None = None
    generators: int | None = None
    cluster_plain_tcp: bool = False

    @property
    def sweep(self) -> bool:
        return not self.rates


def resolve_load(fields: LoadFields) -> tuple[LoadSettings, list[tuple[str, str]]]:
    """The settings of a job in mode load, and its problems as (field, message) pairs."""
    problems: list[tuple[str, str]] = []
    defaults = LoadSettings()
    rates: tuple[float, ...] = ()
    if fields.rates is not None and fields.rate_per_s is not None:
        problems.append(("rates", 'give rate_per_s (one rate, or "sweep") or rates (several), not both'))
    elif fields.rates is not None:
        rates = tuple(fields.rates)
    elif isinstance(fields.rate_per_s, float):
        rates = (fields.rate_per_s,)
    # Several generators offer several times what one can: the cap is per generator.
    most = MAX_RATE_PER_S * ((fields.generators or MAX_GENERATORS) if fields.cluster else 1)
    for k, rate in enumerate(rates):
        if not 0 < rate <= most:
            place = f"rates[{k}]" if fields.rates is not None else "rate_per_s"
            per = f" ({MAX_RATE_PER_S:,.0f} per generator)" if fields.cluster else ""
            problems.append(
                (
                    place,
                    f"an offered rate is more than 0 and at most {most:,.0f} requests per second{per} (got {rate:g})",
                )
            )
    settings = LoadSettings(
        clients=fields.clients or defaults.clients,
        server_workers=fields.server_workers or defaults.server_workers,
        rates=rates,
        duration_s=fields.duration_s if fields.duration_s is not None else defaults.duration_s,
        warmup_s=fields.warmup_s if fields.warmup_s is not None else defaults.warmup_s,
        cluster=fields.cluster,
        generators=fields.generators,
        cluster_plain_tcp=bool(fields.cluster_plain_tcp),
    )
    for name in ("generators", "cluster_plain_tcp"):
        if getattr(fields, name) is not None and fields.cluster is None:
            problems.append((name, f"{name} is for generators on a Dask cluster's workers: give cluster too"))
    return settings, problems


def cluster_address(value: str) -> str:
    """A Dask scheduler's address as a profile or `--cluster` gives it, checked: a scheme of
    CLUSTER_SCHEMES, a host and a port, and nothing else (no credentials, path or spaces:
    Dask's own security settings, not the address, carry TLS credentials)."""
    text = value.strip()
    scheme, sep, rest = text.partition("://")
    if not sep or scheme not in CLUSTER_SCHEMES:
        raise ValueError(
            f"a Dask scheduler address, {' or '.join(s + '://HOST:PORT' for s in CLUSTER_SCHEMES)} (got {value!r})"
        )
    host, colon, port = rest.rpartition(":")
    host = host.strip("[]")
    if not colon or not host or not port.isdigit() or not 0 < int(port) < 65536 or any(c in host for c in "/@?# \t"):
        raise ValueError(f"a Dask scheduler address, {scheme}://HOST:PORT with a port of 1 to 65535 (got {value!r})")
    return text


def step_requests(rate_per_s: float, seconds: float) -> int:
    """The requests a step's schedule holds in `seconds` at `rate_per_s` (request j is due
    at j / rate): Python's round, half to even."""
    return round(seconds * rate_per_s)


def step_schedule(rate_per_s: float, warmup_s: float, duration_s: float) -> tuple[int, int]:
    """One load step's schedule: (warm-up requests, measured requests). The measured window
    holds at least one. This is what `LoadGenerator.run_step` offers, over all its
    generators together, and what the results checker bounds a step's `sent` by."""
    return step_requests(rate_per_s, warmup_s), max(1, step_requests(rate_per_s, duration_s))


def schedule_share(count: int, generators: int, generator: int) -> int:
    """How many of a schedule's first `count` requests generator `generator` (0-based) of
    `generators` sends: request j is generator j mod `generators`'s (their schedules
    interleaved into the one a single generator would offer), so the shares of any count
    add up to it exactly. A generator may have none (fewer requests than generators)."""
    if not 0 <= generator < generators:
        raise ValueError(f"generator {generator} of {generators}")
    return len(range(generator, count, generators))


def split_rate(total_per_s: float, generators: int) -> list[float]:
    """`total_per_s` over `generators` in equal shares that add up to it exactly (the last
    share takes the rounding), so the offered rates of a step sum to its schedule."""
    if generators < 1:
        raise ValueError(f"need at least one generator, got {generators}")
    share = total_per_s / generators
    shares = [share] * (generators - 1)
    return [*shares, total_per_s - sum(shares)]


def fields_set_outside_load(fields: LoadFields) -> list[str]:
    """The load fields a job outside mode load sets (each is refused, naming it)."""
    return [name for name in LOAD_FIELD_NAMES if getattr(fields, name) is not None]

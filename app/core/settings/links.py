"""Link settings: a profile job's "link", the named presets, and the `Link` a job runs with.

A loopback job's link is either a preset's name ("lte") or an object

    {"delay_ms": 20, "jitter_ms": 0, "rate_kbit": 8000, "loss_percent": 0}

where `delay_ms` is the one-way delay of each direction, `rate_kbit` a number (both
directions) or {"up": .., "down": ..} (up = sender -> receiver; a direction left out is
unlimited), and an absent `rate_kbit` means unlimited. On the packet path a link may
also take bursty loss instead of `loss_percent` ("burst_loss": {"p_percent",
"r_percent", "bad_loss_percent", "good_loss_percent"}, Gilbert-Elliott) and bounds for
its drop-tail queue ("queue_packets", "queue_bytes"). The presets live in
resources/links.json, each with its figures' source beside them (`cryptobench links`).

The pydantic models here check the structure (types, ranges) for app.core.profile.files;
what needs more than one field or this machine (jitter against delay, loss against the
kernel's netem) is `resolve_jobs`'s, which names the field. `resolve_link` turns a
checked setting into the `job_conditions.Link` recorded on every result.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Discriminator, Field, Tag, ValidationError

from app.core.errors import CryptoBenchError
from app.core.records.job_conditions import MAX_QUEUE_BYTES, MAX_QUEUE_PACKETS, BurstLoss, Link
from app.core.resources import resource_path
from app.core.suggest import did_you_mean
from app.core.vocab import LinkEmulation, TcpConnection

#: Longest one-way delay: ten seconds is beyond any link people deploy on (a
#: geostationary hop is 0.3 s) and keeps a mistyped 20000 from stalling a run for minutes.
MAX_DELAY_MS = 10_000.0
#: Fastest rate: 100 Gbit/s, beyond which a user-space delay line is not the bottleneck.
MAX_RATE_KBIT = 100_000_000.0
LINKS_FILE = "links.json"


def _rate_in_range(value: float) -> float:
    if value <= 0:
        raise ValueError("must be > 0 kbit/s (omit it for an unlimited rate)")
    if value > MAX_RATE_KBIT:
        raise ValueError(f"must be at most {MAX_RATE_KBIT:.0f} kbit/s (100 Gbit/s)")
    return value


Rate = Annotated[float, Field(allow_inf_nan=False), AfterValidator(_rate_in_range)]


class RateSpec(BaseModel):
    """A rate per direction; a direction left out is unlimited."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    up: Rate | None = None
    down: Rate | None = None


def _rate_kind(value: Any) -> str | None:
    if isinstance(value, dict | RateSpec):
        return "split"
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "both"
    return None


RateValue = Annotated[
    Annotated[Rate, Tag("both")] | Annotated[RateSpec, Tag("split")],
    Discriminator(
        _rate_kind,
        custom_error_type="rate_type",
        custom_error_message='Input should be a number (kbit/s, both directions) or {"up": .., "down": ..}',
    ),
]


Percent = Annotated[float, Field(ge=0, le=100, allow_inf_nan=False)]


class BurstLossSpec(BaseModel):
    """Bursty loss as Gilbert and Elliott modelled it (and netem's `loss gemodel` takes it):
    a good and a bad state; per packet, `p_percent` the chance the good state turns bad,
    `r_percent` the chance the bad state turns good, then the packet is lost with the
    state's loss (`bad_loss_percent`, `good_loss_percent`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    p_percent: Percent
    r_percent: float = Field(gt=0, le=100, allow_inf_nan=False)
    bad_loss_percent: Percent = 100.0
    good_loss_percent: Percent = 0.0


class LinkSpec(BaseModel):
    """A custom link as a profile writes it (one-way delay per direction)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    delay_ms: float = Field(ge=0, le=MAX_DELAY_MS, allow_inf_nan=False)
    #: Each segment's delay varies uniformly by up to this much, never reordering the stream.
    jitter_ms: float = Field(default=0.0, ge=0, le=MAX_DELAY_MS, allow_inf_nan=False)
    #: None: unlimited.
    rate_kbit: RateValue | None = None
    loss_percent: Percent = 0.0
    #: The packet path only: bursty loss, instead of `loss_percent`'s independent loss.
    burst_loss: BurstLossSpec | None = None
    #: The packet path only: the drop-tail queue's bounds per direction, in packets and in
    #: bytes (at least one full 1500-byte packet); None: 1000 packets, 1.5 MB.
    queue_packets: int | None = Field(default=None, ge=1, le=MAX_QUEUE_PACKETS)
    queue_bytes: int | None = Field(default=None, ge=1500, le=MAX_QUEUE_BYTES)


def _link_kind(value: Any) -> str | None:
    if isinstance(value, str):
        return "preset"
    if isinstance(value, dict | LinkSpec):
        return "custom"
    return None


#: A profile's link: a preset's name or a custom object.
LinkValue = Annotated[
    Annotated[str, Tag("preset")] | Annotated[LinkSpec, Tag("custom")],
    Discriminator(
        _link_kind,
        custom_error_type="link_type",
        custom_error_message="Input should be a link preset's name (see `cryptobench links`) or an object "
        '{"delay_ms", "jitter_ms", "rate_kbit", "loss_percent"}',
    ),
]

#: The branch names pydantic puts in an error's location after these fields (a profile's
#: field paths leave them out: jobs[0].link.delay_ms, not jobs[0].link.custom.delay_ms).
UNION_TAGS: Mapping[str, frozenset[str]] = {
    "link": frozenset({"preset", "custom"}),
    "links": frozenset({"preset", "custom"}),
    "rate_kbit": frozenset({"both", "split"}),
}


def rates(spec: LinkSpec) -> tuple[float | None, float | None]:
    """(up, down) in kbit/s; None is unlimited."""
    rate = spec.rate_kbit
    if rate is None:
        return None, None
    if isinstance(rate, RateSpec):
        return rate.up, rate.down
    return rate, rate


def loss_problem(spec: LinkSpec) -> str | None:
    """Why the loss settings contradict each other, or None."""
    if spec.burst_loss is not None and spec.loss_percent:
        return (
            "give loss_percent (independent loss) or burst_loss (bursty), not both: burst_loss sets the "
            f"long-run loss itself (got loss_percent {number_text(spec.loss_percent)})"
        )
    return None


def jitter_problem(spec: LinkSpec) -> str | None:
    """Why the jitter cannot be emulated, or None: delay +- jitter must stay >= 0."""
    if spec.jitter_ms > spec.delay_ms:
        return (
            f"must not exceed delay_ms ({number_text(spec.delay_ms)} ms): a jitter larger than the delay "
            f"would need negative delays (got {number_text(spec.jitter_ms)})"
        )
    return None


# --- the presets --------------------------------------------------------------------------


class LinkPreset(LinkSpec):
    """A named link: its figures, a title for labels, what it stands for, and their source."""

    title: str = Field(min_length=1, max_length=40)
    description: str = Field(min_length=1)
    #: Where the figures come from: the publication or standard, its address, which figure.
    source: str = Field(min_length=1)


class _PresetFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    format_version: int = Field(ge=1, le=1)
    about: str
    links: dict[str, LinkPreset] = Field(min_length=1)


class LinkPresetError(CryptoBenchError):
    """A link preset that does not exist, or a presets file that cannot be read."""


@functools.cache
def link_presets() -> Mapping[str, LinkPreset]:
    """The named links of resources/links.json, in the file's order (checked once)."""
    path = resource_path(LINKS_FILE)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        presets = _PresetFile.model_validate(data).links
    except (OSError, ValueError, ValidationError) as exc:  # a packaging defect, said in one line
        raise LinkPresetError(f"{path}: not a link presets file: {' '.join(str(exc).split())}") from None
    for name, preset in presets.items():
        problem = jitter_problem(preset)
        if problem is not None:
            raise LinkPresetError(f"{path}: links.{name}.jitter_ms: {problem}")
    return presets


def unknown_preset_message(name: str) -> str:
    hint = did_you_mean(name, link_presets())
    return f"unknown link preset (got {json.dumps(name)}{hint}); presets: {', '.join(link_presets())}"


def resolve_link(spec: str | LinkSpec) -> Link:
    """The link a job runs with: a preset's numbers under its name, or a custom link's
    (name None). LinkPresetError for a name that is not a preset."""
    name: str | None = None
    if isinstance(spec, str):
        presets = link_presets()
        if spec not in presets:
            raise LinkPresetError(unknown_preset_message(spec))
        name, spec = spec, presets[spec]
    up, down = rates(spec)
    bursts = None if spec.burst_loss is None else BurstLoss(**spec.burst_loss.model_dump())
    return Link(
        name=name,
        delay_ms=spec.delay_ms,
        jitter_ms=spec.jitter_ms,
        rate_kbit_up=up,
        rate_kbit_down=down,
        # bursty loss: its long-run mean, which labels show and the relay's refusal reads
        loss_percent=spec.loss_percent if bursts is None else bursts.mean_percent,
        emulation=LinkEmulation.PACKET,  # the default; a job's resolution may choose the stream relay
        burst_loss=bursts,
        queue_packets=spec.queue_packets,
        queue_bytes=spec.queue_bytes,
    )


# --- words --------------------------------------------------------------------------------


def number_text(value: float) -> str:
    """20.0 -> "20", 0.013 -> "0.013", 1000000 -> "1000000" (never 1e+06)."""
    return str(int(value)) if float(value).is_integer() else f"{value:.6g}"


def loss_text(link: Link) -> str:
    """ "1 % loss", "3.85 % bursty loss (bad spells of 4 packets)", or "" without loss."""
    if link.burst_loss is not None:
        bursts = link.burst_loss
        return f"{bursts.mean_percent:.3g} % bursty loss (bad spells of {bursts.mean_burst_packets:.3g} packets)"
    return f"{number_text(link.loss_percent)} % loss" if link.loss_percent else ""


def numbers_text(link: Link) -> str:
    """ "20 ms, 8000 kbit/s", "150 ms, 768 kbit/s up, 1600 kbit/s down", "300 ms, unlimited rate"."""
    text = f"{number_text(link.delay_ms)} ms"
    if link.jitter_ms:
        text += f" ± {number_text(link.jitter_ms)} ms"
    up, down = link.rate_kbit_up, link.rate_kbit_down
    if up is None and down is None:
        text += ", unlimited rate"
    elif up == down:
        text += f", {number_text(up or 0)} kbit/s"
    else:

        def part(rate: float | None) -> str:
            return "unlimited" if rate is None else f"{number_text(rate)} kbit/s"

        text += f", {part(up)} up, {part(down)} down"
    loss = loss_text(link)
    if loss:
        text += f", {loss}"
    if link.queue_packets is not None or link.queue_bytes is not None:
        bounds = [f"{link.queue_packets} packets"] if link.queue_packets is not None else []
        bounds += [f"{number_text(link.queue_bytes / 1000)} kB"] if link.queue_bytes is not None else []
        text += f", queue {' / '.join(bounds)}"
    return text


#: How a figure over the stream relay is told from one over the packet path (the default)
#: in every face: a relay's figures have no TCP dynamics on the path.
RELAY_MARK = " (stream relay)"


def emulation_mark(link: Link) -> str:
    """ " (stream relay)" for the relay; for the packet path nothing, or the TCP settings the
    job chose: " (TCP cubic, no slow start after idle, fresh connections)"."""
    if link.emulation == LinkEmulation.DELAY_LINE:
        return RELAY_MARK
    settings = [f"TCP {link.congestion_control}"] if link.congestion_control else []
    if link.slow_start_after_idle is not None:
        settings.append("slow start after idle" if link.slow_start_after_idle else "no slow start after idle")
    if link.connection == TcpConnection.FRESH:
        settings.append("fresh connections")
    return f" ({', '.join(settings)})" if settings else ""


def link_text(link: Link) -> str:
    """One cell for a table or CSV: the preset's name, or "custom: 20 ms, 8000 kbit/s"."""
    return (link.name if link.name else f"custom: {numbers_text(link)}") + emulation_mark(link)


def link_title(link: Link) -> str:
    """For a job's label ("... over LTE"): the preset's title, or the custom link's numbers."""
    preset = link_presets().get(link.name) if link.name else None
    return (preset.title if preset is not None else numbers_text(link)) + emulation_mark(link)


def names_link(label: str, link: Link) -> bool:
    """Whether a job's label already says its link ("... over LTE"): a link sweep puts it there."""
    return label.endswith(f" over {link_title(link)}")


def over_link(label: str, link: Link | None) -> str:
    """A job's label with its link said exactly once: "X25519 ... over LTE", never
    "... over LTE over lte" (every face names a linked job through this)."""
    if link is None or names_link(label, link):
        return label
    return f"{label} over {link_title(link)}"


#: What the packet path serializes beyond a segment's payload: its IPv4 (20) and TCP (20,
#: plus 12 of timestamps) headers; the largest payload of a 1500-byte packet.
PACKET_HEADER_BYTES, SEGMENT_BYTES = 52, 1448


def wire_bytes(link: Link, payload: int) -> int:
    """The bytes the link serializes for `payload` bytes of a stream: on the packet path
    each segment's headers too; the stream relay serializes the stream alone."""
    if link.emulation != LinkEmulation.PACKET:
        return payload
    return payload + PACKET_HEADER_BYTES * max(1, -(-payload // SEGMENT_BYTES))


def round_trip_ms(link: Link, up_bytes: int = 1024, down_bytes: int = 64) -> float:
    """What one exchange costs on this link in the model: both delays, and the message and
    its reply serialized at their rates (milliseconds), in the packets that carry them on
    the packet path (a warm connection; a fresh one adds a round trip per slow-start round
    beyond the initial window). Ranks links by cost (`reduced`)."""
    cost = 2 * link.delay_ms
    for size, rate in ((up_bytes, link.rate_kbit_up), (down_bytes, link.rate_kbit_down)):
        if rate is not None:
            cost += 8 * wire_bytes(link, size) / rate  # kbit/s = bits per millisecond
    return cost

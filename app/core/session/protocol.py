"""What a session's frames carry, shared by the sender and the receiver.

A job description is plain JSON naming a scheme from the registry, checked with
pydantic on arrival: a remote receiver never runs code or unpickles anything a
peer sends. Acknowledgements are fixed binary structs so that the round trip
measures the network and the scheme, not a JSON encoder.
"""

from __future__ import annotations

import enum
import hashlib
import json
import math
import struct
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from app.core.errors import RegistryError, SessionError, UnknownScheme
from app.core.escaping import escape_control
from app.core.records.job_tcp_info import TCP_INFO_COUNTS, TcpInfo
from app.core.schemes import registry
from app.core.schemes.base import Scheme
from app.core.transport.wire import (
    HARD_MAX_FRAME,
    MAX_CONTROL_FRAME,
    MAX_SESSION_MESSAGE,
    PEER_TEXT_LIMIT,
    MalformedBody,
    frame_limit,
)
from app.core.vocab import LEGACY_EXCHANGE, Exchange

SEED_BYTES = 16
#: The most load server processes a sender may ask `serve` for (settings.load.MAX_SERVER_WORKERS),
#: and the nonce its JOB_OK carries for the load server's derived secrets (serve.load_serve).
MAX_LOAD_SERVER_WORKERS = 64
LOAD_NONCE_BYTES = 16
#: u64 nanoseconds (or bytes) + u8 verdict; a reason text follows only on failure.
ACK = struct.Struct(">QB")
U64 = struct.Struct(">Q")
SIZE_FRAME = struct.Struct(f">Q{SEED_BYTES}s")
U32 = struct.Struct(">I")

# What a receiver may report and still be believed (see `PeerLied`).
#: No receiver has this much memory (16 TiB): a larger RSS or traced peak is a lie.
MAX_REPORTED_BYTES = 1 << 44
#: CPU seconds may exceed wall seconds only by this many cores' worth.
MAX_RECEIVER_CPUS = 4096
#: A queue position or retry interval beyond these is not a server's honest answer.
MAX_QUEUE_POSITION = 10_000
MAX_RETRY_MS = 60_000
#: The kernel keeps its RTT estimates as u32 microseconds: nothing longer is its value.
MAX_KERNEL_RTT_S = (2**32 - 1) / 1e6
#: TCP_INFO counts over one size: u32 counters give differences below 2**32; bytes are
#: bounded as any reported byte count; TCP's MSS option is 16 bits.
_TCP_COUNT_LIMITS = dict.fromkeys(TCP_INFO_COUNTS, 2**32 - 1) | {
    "bytes_acked": MAX_REPORTED_BYTES,
    "bytes_received": MAX_REPORTED_BYTES,
    "mss_bytes": 2**16 - 1,
}

# How much longer an honest receiver's time can read than the sender's interval around it.
# Its interval (frame received .. answer sent) lies inside the sender's (request sent ..
# answer read), so what remains is how the two are read:
# - the same clock (loopback and link jobs: one machine, one CLOCK_MONOTONIC, also across
#   network namespaces): nested intervals read from one monotonic clock nest exactly.
#   No slack at all; a receiver time 1 ns beyond its round trip is a lie.
# - two machines' clocks (a remote `serve`): each reading is quantised to its clock's tick,
#   which can lengthen the receiver's interval by one of its ticks and shorten the sender's
#   by one of its own; and the clocks run at rates that differ. Linux steers CLOCK_MONOTONIC
#   by at most 500 ppm (the NTP frequency limit, MAXFREQ), so two disciplined clocks differ
#   by under 1000 ppm; the slack is that share of the round trip plus two ticks.
#: The rate two machines' monotonic clocks may differ by (1000 ppm, see above).
REMOTE_CLOCK_RATE = 1e-3
#: A tick of either machine's `perf_counter_ns`, at its coarsest: 1 ns on Linux, ~42 ns on
#: Apple silicon, 100 ns on Windows; 1 µs bounds them all.
REMOTE_CLOCK_TICK_NS = 1_000
#: CPU time is counted in USER_HZ ticks (1/100 s on Linux); user and system time, each
#: read twice, can overstate a difference by two ticks.
CPU_TIME_GRANULARITY_S = 0.02
#: `time.monotonic()` seconds as floats: the difference of two readings is exact to far below this.
FLOAT_SECONDS_SLACK = 1e-6
#: A message's network time (round trip minus the receiver's open) below this fraction of
#: the fastest floor ping-pong of the same bytes on the same path cannot be: the bytes could
#: not have crossed (the receiver answered early, or slowed its floor pongs). The floor is a
#: measured minimum, and noisy: on a busy 2-core machine, with 3 floor samples, an honest
#: network time came out at 0.22 of it (all 3 pings slowed by other processes) and commonly
#: at 0.6-0.7 (a size's first exchanges are its slowest); with 30 samples, above 1.1; with a
#: receiver thread in the sender's process, 0.0085 (both pings waited out the 5 ms GIL switch
#: interval). So a message under a tenth of the floor is not refused at once: the sender pings
#: again, then and there (`FLOOR_RECHECKS` times), and refuses only if the path is still
#: that much slower for pings than it was for the message.
FLOOR_TOLERANCE = 0.1
FLOOR_RECHECKS = 3


def clock_slack_ns(round_trip_ns: int, *, shared_clock: bool) -> int:
    """How much longer than `round_trip_ns` an honest receiver's time can read (see above)."""
    if shared_clock:
        return 0
    return math.ceil(round_trip_ns * REMOTE_CLOCK_RATE) + 2 * REMOTE_CLOCK_TICK_NS


class Verdict(enum.IntEnum):
    OK = 0  # opened and equal to the expected plaintext
    REJECTED = 1  # the scheme raised its typed error (tag, signature, format)
    WRONG_PLAINTEXT = 2  # opened without error, but to a different plaintext
    ERROR = 3  # an untyped exception: a bug in the scheme wrapper or the library


class LoadServe(BaseModel):
    """A load job's server, as a sender asks `serve` for it (app.core.serve.load_serve)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    server_workers: StrictInt = Field(ge=1, le=MAX_LOAD_SERVER_WORKERS)


class JobDescription(BaseModel):
    """What a sender asks a receiver to serve. Strict types: JSON only, no coercion."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scheme: StrictStr = Field(min_length=1, max_length=100)
    backend: StrictStr = Field(min_length=1, max_length=100)
    params: dict[StrictStr, StrictInt | StrictStr | StrictBool] = Field(default_factory=dict, max_length=32)
    message_sizes: list[StrictInt] = Field(min_length=1, max_length=256)
    #: False: the receiver turns Nagle's algorithm back on for this connection.
    tcp_nodelay: StrictBool = True
    #: True: every timed exchange (floor ping, message) arrives on a fresh connection of its
    #: own, announced by FRESH and proven by the ticket JOB_OK gave (a loopback receiver only).
    fresh_connections: StrictBool = False
    #: A load job: `serve` starts a load server for it instead of serving a session, and
    #: the sender's generators drive it. Absent from the JSON for a session job.
    load: LoadServe | None = None
    #: A key-establishing scheme's exchange pattern (always sent for one). Absent: a sender
    #: from before jobs named it, which ran the family's legacy pattern (`pattern`).
    exchange: Exchange | None = None

    def pattern(self) -> Exchange | None:
        """The exchange to serve: the one asked for, else what a sender that did not name
        one ran (`vocab.LEGACY_EXCHANGE`: a hybrid per message); None elsewhere."""
        if self.exchange is not None:
            return self.exchange
        try:
            family = registry.get_spec(self.scheme).family
        except UnknownScheme:
            return None
        return LEGACY_EXCHANGE.get(family)

    def encode(self) -> bytes:
        return json.dumps(self.model_dump(mode="json", exclude_none=True), sort_keys=True).encode("utf-8")


class PeerLied(MalformedBody):
    """A number from the peer that cannot be true: not finite, negative, beyond any real
    machine, or a duration longer than the round trip that contains it. str() names the
    field and the value; the job fails with it."""


class FasterThanFloor(PeerLied):
    """A message's network time far under the floor ping-pong (`check_network`)."""


class NotJSONNumber(ValueError):
    """NaN, Infinity or -Infinity in JSON (Python's json reads them, no other tool does), or
    a number too large for a float (1e400, which Python reads as inf). str() names the
    field and the text as sent: `rss_bytes = Infinity is not a finite JSON number`."""

    def __init__(self, field: str, text: str) -> None:
        self.field, self.text = field, text
        super().__init__(f"{field} = {escape_control(text, 40)} is not a finite JSON number")


class _NotFinite:
    """Where a parsed document held a non-finite number; found and named after parsing
    (json's hooks see the text, not where it sits)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _finite_float(text: str) -> float | _NotFinite:
    value = float(text)
    return value if math.isfinite(value) else _NotFinite(text)


def _where_not_finite(data: Any) -> tuple[str, str] | None:
    """The path ("rss_bytes", "tcp_info.rtt_var_s", "message_sizes[0]") and text of the first
    non-finite number in `data`, or None. Iterative: a peer's document may nest deeply."""
    stack: list[tuple[Any, str]] = [(data, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, _NotFinite):
            return path or "the document", item.text
        if isinstance(item, dict):
            stack.extend((value, f"{path}.{key}" if path else str(key)) for key, value in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((value, f"{path}[{i}]") for i, value in reversed(list(enumerate(item))))
    return None


def loads_strict(text: str) -> Any:
    """json.loads that refuses NaN, ±Infinity and numbers beyond a float (1e400), naming the
    field that holds one (NotJSONNumber)."""
    data = json.loads(text, parse_constant=_NotFinite, parse_float=_finite_float)
    found = _where_not_finite(data)
    if found is not None:
        raise NotJSONNumber(escape_control(found[0], 80), found[1])
    return data


class JobRejected(SessionError):
    """A job description the receiver will not serve; str() is sent back to the peer."""


def parse_job(body: bytes | memoryview, max_message: int = MAX_SESSION_MESSAGE) -> tuple[JobDescription, Scheme, int]:
    """Check a JOB frame; return the job, the scheme it names and the frame capacity it needs."""
    try:
        data = loads_strict(bytes(body).decode("utf-8"))
    except NotJSONNumber as exc:
        raise JobRejected(f"job description {exc}") from None
    except (ValueError, RecursionError) as exc:
        # ValueError, not only JSONDecodeError: an integer literal over Python's 4300-digit
        # limit raises a plain ValueError; and "[[[[..." nested past the recursion limit
        # raises RecursionError. Both are a peer's bad input, not a receiver bug.
        raise JobRejected(f"job description is not UTF-8 JSON ({exc})") from None
    try:
        job = JobDescription.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "job"
        raise JobRejected(f"job description {where}: {error['msg']}") from None
    try:
        scheme = registry.create(job.scheme, job.backend, job.params, job.pattern())
    except UnknownScheme:  # the peer's message need not list every scheme this side knows
        raise JobRejected(f"unknown scheme {job.scheme!r}") from None
    except RegistryError as exc:
        raise JobRejected(str(exc)) from None
    for size in job.message_sizes:
        if not 0 <= size <= max_message:
            raise JobRejected(f"message size {size} is outside 0..{max_message} bytes")
        limit = scheme.info.max_plaintext
        if limit is not None and size > limit:
            raise JobRejected(f"a {size}-byte message does not fit one {scheme.info.label} block (at most {limit})")
    capacity = job_capacity(scheme, job.message_sizes)
    if capacity > HARD_MAX_FRAME:
        raise JobRejected(f"the job needs {capacity}-byte frames; the hard cap is {HARD_MAX_FRAME}")
    return job, scheme, capacity


def job_capacity(scheme: Scheme, message_sizes: list[int]) -> int:
    """The largest frame body a job can legitimately send."""
    largest = max(message_sizes)
    return frame_limit(largest, scheme.payload_overhead(largest))


def plaintext_for(seed: bytes, size: int) -> bytes:
    """The message both ends derive from a seed, so the receiver can validate what it
    opens without the plaintext ever crossing the wire twice."""
    return hashlib.shake_128(seed).digest(size) if size else b""


def encode_ack(value: int, verdict: Verdict, reason: str = "") -> list[bytes]:
    parts = [ACK.pack(value, verdict)]
    if reason:
        parts.append(reason.encode("utf-8")[: MAX_CONTROL_FRAME - ACK.size])
    return parts


def decode_ack(body: memoryview | bytes) -> tuple[int, Verdict, str]:
    if len(body) < ACK.size:
        raise MalformedBody(f"acknowledgement of {len(body)} bytes is shorter than {ACK.size}")
    value, verdict = ACK.unpack_from(body)
    try:
        kind = Verdict(verdict)
    except ValueError:
        raise MalformedBody(f"unknown verdict {verdict}") from None
    # The reason is the peer's text: escaped (no terminal control) and shortened here, once.
    reason = escape_control(bytes(body[ACK.size :]).decode("utf-8", "replace"), PEER_TEXT_LIMIT)
    return value, kind, reason


def decode_json(body: memoryview | bytes, what: str) -> dict[str, Any]:
    try:
        data = loads_strict(bytes(body).decode("utf-8"))
    except NotJSONNumber as exc:
        raise PeerLied(f"{what} {exc}") from None
    except (ValueError, RecursionError):  # see parse_job: over-long integers, too-deep nesting
        raise MalformedBody(f"{what} is not UTF-8 JSON") from None
    if not isinstance(data, dict):
        raise MalformedBody(f"{what} is not a JSON object")
    return data


# --- believing a receiver's numbers ----------------------------------------------------------


def check_within(what: str, value_ns: int, round_trip_ns: int, *, shared_clock: bool) -> int:
    """A receiver's time for work inside a round trip the sender measured: at most that
    round trip, plus what two machines' clocks can disagree by (`clock_slack_ns`)."""
    slack = clock_slack_ns(round_trip_ns, shared_clock=shared_clock)
    if value_ns > round_trip_ns + slack:
        beyond = "" if shared_clock else f" by more than two clocks can disagree ({slack} ns)"
        raise PeerLied(
            f"receiver reported {what} = {value_ns} ns, longer than the {round_trip_ns} ns round trip "
            f"that contains it{beyond}"
        )
    return value_ns


def check_network(receiver_ns: int, round_trip_ns: int, floor_ns: int | None) -> int:
    """A message's network time, `round_trip_ns - receiver_ns`, checked: never negative (a
    remote receiver's time may pass `check_within` by the clocks' disagreement, but a
    network time below zero is not a measurement), and not far under the fastest floor
    ping-pong `floor_ns` (FLOOR_TOLERANCE). Returns it."""
    network_ns = round_trip_ns - receiver_ns
    if network_ns < 0:
        raise PeerLied(
            f"receiver reported open time = {receiver_ns} ns, longer than the {round_trip_ns} ns round trip "
            f"that contains it: the network time would be {network_ns} ns (the two machines' clocks "
            "disagree more than the network takes; check that both keep time with NTP)"
        )
    if floor_ns is not None and network_ns < floor_ns * FLOOR_TOLERANCE:
        raise FasterThanFloor(
            f"a message's network time of {network_ns} ns (round trip {round_trip_ns} ns, receiver "
            f"{receiver_ns} ns) is under {FLOOR_TOLERANCE:.0%} of the fastest floor ping-pong of the same "
            f"bytes, {floor_ns} ns: faster than the path carries them"
        )
    return network_ns


def check_bytes(what: str, value: int) -> int:
    if value > MAX_REPORTED_BYTES:
        raise PeerLied(
            f"receiver reported {what} = {value} bytes, more than any machine has (limit {MAX_REPORTED_BYTES})"
        )
    return value


def _number(report: dict[str, Any], key: str, what: str) -> float:
    value = report.get(key)
    if not isinstance(value, (int, float)) or isinstance(value, bool):  # not a string, not missing
        raise PeerLied(f"{what} {key} = {escape_control(repr(value), 80)} is not a number")
    number = float(value) if abs(value) < 1e300 else math.inf
    if not math.isfinite(number) or number < 0:
        raise PeerLied(f"{what} {key} = {escape_control(repr(value), 80)} is not a finite non-negative number")
    return number


def parse_resources(body: memoryview | bytes, elapsed: float, *, shared_clock: bool) -> dict[str, float]:
    """The receiver's SIZE_END_OK report, checked against `elapsed`, the seconds the sender
    measured from its SIZE request to this reply (the receiver's interval lies inside it)."""
    what = "SIZE_END_OK"
    report = decode_json(body, what)
    cpu = _number(report, "cpu_seconds", what)
    wall = _number(report, "wall_seconds", what)
    percent = _number(report, "cpu_percent_mean", what)
    rss = _number(report, "rss_bytes", what)
    slack = FLOAT_SECONDS_SLACK + clock_slack_ns(math.ceil(elapsed * 1e9), shared_clock=shared_clock) / 1e9
    if wall > elapsed + slack:
        raise PeerLied(
            f"{what} wall_seconds = {wall!r} is longer than the {elapsed:.6f} s the sender measured around it"
        )
    if cpu > wall * MAX_RECEIVER_CPUS + CPU_TIME_GRANULARITY_S:
        raise PeerLied(f"{what} cpu_seconds = {cpu!r} is more than {MAX_RECEIVER_CPUS} CPUs can use in {wall!r} s")
    if percent > 100.0 * MAX_RECEIVER_CPUS:
        raise PeerLied(f"{what} cpu_percent_mean = {percent!r} is more than {MAX_RECEIVER_CPUS} CPUs")
    if rss > MAX_REPORTED_BYTES or rss != int(rss):
        raise PeerLied(f"{what} rss_bytes = {report['rss_bytes']!r} is not a possible resident size")
    return {"cpu_seconds": cpu, "wall_seconds": wall, "cpu_percent_mean": percent, "rss_bytes": rss}


def parse_tcp_info(
    report: dict[str, Any], exchanges: int, sender: TcpInfo | None = None, longest_round_trip_s: float | None = None
) -> TcpInfo | None:
    """The receiver's TCP_INFO over the size, from its decoded SIZE_END_OK `report` (None: it
    sent none, as receivers before it did). `exchanges` is the sender's own count, which the
    receiver's record takes; with the sender's record, the receiver cannot have received more
    stream bytes in its (shorter) window than the sender saw acknowledged in its own, nor have
    had more acknowledged than the sender received, nor sent or received more segments than
    those bytes and exchanges can make (`_check_segments`); with the longest round trip the
    sender timed, its smoothed RTT cannot be longer than that round trip and an acknowledgement
    held back (`_check_rtt`). A peer that proves it holds the token is still a peer: kernel
    maxima (a 4,000 s RTT, 2**32 - 1 segments after ten 64-byte exchanges) passed every
    bound the kernel's own types set, and were stored in an ok job."""
    what = "SIZE_END_OK tcp_info"
    if report.get("tcp_info") is None:
        return None
    block = report["tcp_info"]
    if not isinstance(block, dict):
        raise PeerLied(f"{what} = {escape_control(repr(block), 80)} is not an object")
    if "unavailable" in block:
        reason = block["unavailable"]
        if not isinstance(reason, str):
            raise PeerLied(f"{what} unavailable = {escape_control(repr(reason), 80)} is not a text")
        return TcpInfo(unavailable=escape_control(reason, PEER_TEXT_LIMIT))
    rtt: dict[str, float | None] = {}
    for key in ("smoothed_rtt_s", "rtt_var_s"):
        rtt[key] = None if block.get(key) is None else _number(block, key, what)
        if (rtt[key] or 0) > MAX_KERNEL_RTT_S:
            raise PeerLied(f"{what} {key} = {block[key]!r} is longer than the kernel can hold ({MAX_KERNEL_RTT_S:g} s)")
    counts: dict[str, int | None] = {}
    for key, limit in _TCP_COUNT_LIMITS.items():
        value = block.get(key)
        if key == "exchanges" or value is None:
            counts[key] = None
            continue
        if type(value) is not int or not 0 <= value <= limit:
            raise PeerLied(f"{what} {key} = {escape_control(repr(value), 80)} is not a count 0..{limit}")
        counts[key] = value
    for part, whole in (
        ("retransmits_total", "segments_out"),
        ("data_segments_out", "segments_out"),
        ("data_segments_in", "segments_in"),
    ):
        some, of = counts[part], counts[whole]
        if some is not None and of is not None and some > of:
            raise PeerLied(f"{what} {part} = {some} is more than its {whole} = {of}")
    received, acked = counts["bytes_received"], sender.bytes_acked if sender is not None else None
    if received is not None and acked is not None and received > acked:
        raise PeerLied(
            f"{what} bytes_received = {received} is more than the {acked} bytes the sender's kernel "
            "saw acknowledged meanwhile"
        )
    theirs, got = counts["bytes_acked"], sender.bytes_received if sender is not None else None
    if theirs is not None and got is not None and theirs > got:
        raise PeerLied(
            f"{what} bytes_acked = {theirs} is more than the {got} bytes the sender's kernel received meanwhile"
        )
    if sender is not None and sender.bytes_acked is not None and sender.bytes_received is not None:
        _check_segments(counts, sender.bytes_acked, sender.bytes_received, exchanges, what)
    if longest_round_trip_s is not None:
        _check_rtt(rtt, longest_round_trip_s, what)
    counts["exchanges"] = exchanges
    return TcpInfo.of(rtt["smoothed_rtt_s"], rtt["rtt_var_s"], counts)


#: How often TCP sends one byte at most before it gives the connection up (the first
#: send and tcp_retries2's 15 retransmissions): a data segment carries at least one byte.
SENDS_PER_BYTE = 16
#: Segments without data an end may send per segment it receives (an acknowledgement, a
#: duplicate one), and per exchange besides (window updates, a tail loss probe, timers).
ACKS_PER_SEGMENT = 2
CONTROL_PER_EXCHANGE = 8
#: The longest an end's kernel holds an acknowledgement back (TCP_DELACK_MAX): an RTT sample
#: spans the path's round trip and at most this.
DELAYED_ACK_MAX_S = 0.2


def _check_segments(counts: dict[str, int | None], up_bytes: int, down_bytes: int, exchanges: int, what: str) -> None:
    """The receiver's segment counts against what the size's bytes could make: `up_bytes`
    the stream the sender's kernel saw acknowledged (all the receiver could receive),
    `down_bytes` what it received (all the receiver sent)."""
    data_in = SENDS_PER_BYTE * up_bytes + 1
    data_out = SENDS_PER_BYTE * down_bytes + 1
    control = CONTROL_PER_EXCHANGE * max(exchanges, 1)
    most = {
        "data_segments_in": data_in,
        "data_segments_out": data_out,
        "segments_in": data_in + ACKS_PER_SEGMENT * data_out + control,
        "segments_out": data_out + ACKS_PER_SEGMENT * data_in + control,
        "retransmits_total": data_out,
    }
    for key, bound in most.items():
        value = counts[key]
        if value is not None and value > bound:
            raise PeerLied(
                f"{what} {key} = {value} is more than the {exchanges} exchanges could make ({up_bytes} bytes up, "
                f"{down_bytes} down: at most {bound})"
            )


def _check_rtt(rtt: dict[str, float | None], longest_s: float, what: str) -> None:
    """The receiver's smoothed RTT (and its variation) against the longest round trip the
    sender timed on the connection: a smoothed RTT is an average of samples, each the
    path's round trip plus an acknowledgement held back at most `DELAYED_ACK_MAX_S`; twice
    that, for the samples' scatter."""
    bound = 2 * (longest_s + DELAYED_ACK_MAX_S)
    for key in ("smoothed_rtt_s", "rtt_var_s"):
        value = rtt[key]
        if value is not None and value > bound:
            raise PeerLied(
                f"{what} {key} = {value:g} s is longer than the exchanges could make: the longest round trip "
                f"timed on the connection was {longest_s:.6g} s (at most {bound:.6g} s with acknowledgements "
                "held back)"
            )


def decode_u32(body: memoryview | bytes, what: str, low: int, high: int) -> int:
    if len(body) != U32.size:
        raise MalformedBody(f"{what} frame of {len(body)} bytes, expected {U32.size}")
    value: int
    (value,) = U32.unpack(body)
    if not low <= value <= high:
        raise PeerLied(f"{what} value {value} is outside {low}..{high}")
    return value

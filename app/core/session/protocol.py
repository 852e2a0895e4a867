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
import struct
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr, ValidationError

from app.core.schemes import registry
from app.core.schemes.base import Scheme
from app.core.wire import HARD_MAX_FRAME, MAX_CONTROL_FRAME, MAX_SESSION_MESSAGE, MalformedBody, frame_limit

TOKEN_BYTES = 32
SEED_BYTES = 16
#: u64 nanoseconds (or bytes) + u8 verdict; a reason text follows only on failure.
ACK = struct.Struct(">QB")
U64 = struct.Struct(">Q")
SIZE_FRAME = struct.Struct(f">Q{SEED_BYTES}s")


class Verdict(enum.IntEnum):
    OK = 0  # opened and equal to the expected plaintext
    REJECTED = 1  # the scheme raised its typed error (tag, signature, format)
    WRONG_PLAINTEXT = 2  # opened without error, but to a different plaintext
    ERROR = 3  # an untyped exception: a bug in the scheme wrapper or the library


class JobDescription(BaseModel):
    """What a sender asks a receiver to serve. Strict types: JSON only, no coercion."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    scheme: StrictStr = Field(min_length=1, max_length=100)
    backend: StrictStr = Field(min_length=1, max_length=100)
    params: dict[StrictStr, StrictInt | StrictStr | StrictBool] = Field(default_factory=dict, max_length=32)
    message_sizes: list[StrictInt] = Field(min_length=1, max_length=256)
    #: False: the receiver turns Nagle's algorithm back on for this connection.
    tcp_nodelay: StrictBool = True

    def encode(self) -> bytes:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True).encode("utf-8")


class JobRejected(Exception):
    """A job description the receiver will not serve; str() is sent back to the peer."""


def parse_job(body: bytes | memoryview, max_message: int = MAX_SESSION_MESSAGE) -> tuple[JobDescription, Scheme, int]:
    """Check a JOB frame; return the job, the scheme it names and the frame capacity it needs."""
    try:
        data = json.loads(bytes(body).decode("utf-8"))
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
        scheme = registry.create(job.scheme, job.backend, job.params)
    except KeyError:
        raise JobRejected(f"unknown scheme {job.scheme!r}") from None
    except ValueError as exc:
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
    return value, kind, bytes(body[ACK.size:]).decode("utf-8", "replace")


def decode_json(body: memoryview | bytes, what: str) -> dict[str, Any]:
    try:
        data = json.loads(bytes(body).decode("utf-8"))
    except (ValueError, RecursionError):  # see parse_job: over-long integers, too-deep nesting
        raise MalformedBody(f"{what} is not UTF-8 JSON") from None
    if not isinstance(data, dict):
        raise MalformedBody(f"{what} is not a JSON object")
    return data

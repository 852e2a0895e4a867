"""Fuzzing the frame layer and the session protocol's parsers.

Whatever bytes a peer sends, the code that reads them either returns what a correct
reader would, or raises the typed error its docstring promises, with a message: never
another exception, never a hang (every read has a short deadline here), never an
allocation sized by a length the peer claims beyond the reader's limit.

The FrameReader properties compare the reader with a small reference model written
here from the frame format (magic, version, type, 64-bit length), so a reader that
misparses, reads past a rejected header or swallows a frame fails, not only one that
crashes. The atheris test at the end runs a coverage-guided fuzzer over the same
targets in a subprocess; it is skipped where atheris is not installed.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import socket
import subprocess
import sys
import textwrap
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from app.core.escaping import escape_control
from app.core.schemes import registry
from app.core.session.protocol import (
    ACK,
    JobRejected,
    Verdict,
    decode_ack,
    decode_json,
    encode_ack,
    parse_job,
)
from app.core.transport.wire import (
    HARD_MAX_FRAME,
    HEADER,
    HEADER_SIZE,
    MAGIC,
    MAX_CONTROL_FRAME,
    MAX_SESSION_MESSAGE,
    PEER_TEXT_LIMIT,
    VERSION,
    BadMagic,
    ConnectionClosed,
    FrameReader,
    FrameTooLarge,
    FrameType,
    Header,
    MalformedBody,
    PeerError,
    PeerTimeout,
    TruncatedFrame,
    UnknownFrameType,
    UnsupportedVersion,
    WireError,
    decode_header,
    encode_header,
    send_frame,
)
from tests.helpers.paths import ROOT

#: Examples per property (the file stays well under 20 s on the 2-core machine).
EXAMPLES = 200
FUZZ = settings(
    max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
#: The socket properties wait out a short idle timeout in about half of their examples.
SOCKET_FUZZ = settings(FUZZ, max_examples=120)

KNOWN_KINDS = {int(t) for t in FrameType}
FRAME_TYPES = st.sampled_from(list(FrameType))
NON_ERROR_TYPES = st.sampled_from([t for t in FrameType if t is not FrameType.ERROR])
#: A reader capacity above the control-frame size, so the lazily allocated large buffer is exercised.
BIG_CAPACITY = 4 * MAX_CONTROL_FRAME
CAPACITIES = st.sampled_from([0, 32, MAX_CONTROL_FRAME, BIG_CAPACITY])
#: Lengths at and around every limit the reader knows, then anything a u64 holds.
EDGE_LENGTHS = [
    0,
    1,
    31,
    32,
    33,
    MAX_CONTROL_FRAME,
    MAX_CONTROL_FRAME + 1,
    BIG_CAPACITY,
    BIG_CAPACITY + 1,
    HARD_MAX_FRAME,
    HARD_MAX_FRAME + 1,
    2**63,
    2**64 - 1,
]
LENGTHS = st.sampled_from(EDGE_LENGTHS) | st.integers(0, 2**64 - 1)
IDLE = 0.02  # seconds: how long a stalled stream is waited for


def frame(kind: FrameType | int, body: bytes = b"") -> bytes:
    return HEADER.pack(MAGIC, VERSION, int(kind), len(body)) + body


HEADERS = st.builds(
    HEADER.pack,
    st.just(MAGIC) | st.binary(min_size=2, max_size=2),
    st.just(VERSION) | st.integers(0, 255),
    st.sampled_from(sorted(KNOWN_KINDS)) | st.integers(0, 255),
    LENGTHS,
)
#: Streams a hostile or broken peer might send: valid frames, lying headers, garbage.
PIECES = st.one_of(
    st.builds(frame, NON_ERROR_TYPES, st.binary(max_size=200)),
    st.builds(frame, st.just(FrameType.ERROR), st.binary(max_size=40)),
    HEADERS,
    st.binary(max_size=40),
)
STREAMS = st.lists(PIECES, max_size=10).map(b"".join)


def reference(data: bytes, capacity: int, eof: bool) -> tuple[list[tuple[FrameType, bytes]], type, int, int]:
    """What a correct reader makes of `data`, written from the frame format alone.

    Returns the frames, the type of the error that ends the stream, how many bytes the
    reader may consume (never a byte of a body whose header it rejected) and the
    largest body length it accepted (-1 if none).
    """
    frames: list[tuple[FrameType, bytes]] = []
    pos, largest = 0, -1
    while True:
        rest = len(data) - pos
        if rest == 0:
            return frames, ConnectionClosed if eof else PeerTimeout, pos, largest
        if rest < HEADER_SIZE:
            return frames, TruncatedFrame if eof else PeerTimeout, len(data), largest
        magic, version, kind, length = HEADER.unpack_from(data, pos)
        rejected = (
            BadMagic
            if magic != MAGIC
            else UnsupportedVersion
            if version != VERSION
            else UnknownFrameType
            if kind not in KNOWN_KINDS
            else FrameTooLarge
            if length > capacity
            else None
        )
        if rejected is not None:
            return frames, rejected, pos + HEADER_SIZE, largest
        largest = max(largest, length)
        if rest - HEADER_SIZE < length:
            return frames, TruncatedFrame if eof else PeerTimeout, len(data), largest
        body = data[pos + HEADER_SIZE : pos + HEADER_SIZE + length]
        pos += HEADER_SIZE + length
        if kind == FrameType.ERROR:
            return frames, PeerError, pos, largest
        frames.append((FrameType(kind), body))


def read_until_error(reader: FrameReader, bound: int) -> tuple[list[tuple[FrameType, bytes]], WireError]:
    """Frames (bodies copied) until the reader raises; any non-WireError fails the test."""
    frames: list[tuple[FrameType, bytes]] = []
    for _ in range(bound):
        try:
            kind, body = reader.read()
        except WireError as exc:
            return frames, exc
        frames.append((kind, bytes(body)))
    raise AssertionError(f"the reader returned more than {bound} frames from a finite stream")


def drain(sock: socket.socket) -> bytes:
    """Whatever the reader left in the socket (without blocking)."""
    sock.setblocking(False)
    left = bytearray()
    while True:
        try:
            chunk = sock.recv(65536)
        except BlockingIOError:
            break
        if not chunk:
            break
        left += chunk
    return bytes(left)


class ChunkStream:
    """An in-memory Stream that never returns bytes across one of the given cut points, then EOF."""

    def __init__(self, data: bytes, cuts: list[int]) -> None:
        self.data, self.pos, self.calls = data, 0, 0
        self.cuts = sorted({c for c in cuts if 0 < c < len(data)}) + [len(data)]

    def settimeout(self, value: float | None) -> None:
        pass

    def recv_into(self, view: memoryview, nbytes: int = 0) -> int:
        assert 0 <= nbytes <= len(view), "the reader asked for more than its view holds"
        self.calls += 1
        want = nbytes or len(view)
        stop = next(c for c in self.cuts if c > self.pos) if self.pos < len(self.data) else self.pos
        n = min(want, stop - self.pos)
        view[:n] = self.data[self.pos : self.pos + n]
        self.pos += n
        return n


# --- decode_header --------------------------------------------------------------------


@FUZZ
@given(data=HEADERS | st.binary(max_size=2 * HEADER_SIZE), limit=LENGTHS)
def test_decode_header_returns_a_checked_header_or_a_wire_error(data: bytes, limit: int) -> None:
    try:
        header = decode_header(data, limit)
    except WireError as exc:
        assert str(exc), f"{type(exc).__name__} without a message"
        if len(data) != HEADER_SIZE:
            assert type(exc) is TruncatedFrame
        return
    assert isinstance(header, Header)
    assert len(data) == HEADER_SIZE
    assert header.frame_type in FrameType and 0 <= header.length <= limit
    assert encode_header(header.frame_type, header.length) == data


# --- FrameReader over a real socket: arbitrary streams, closed or stalled ---------------


@SOCKET_FUZZ
@given(data=STREAMS | st.binary(max_size=300), capacity=CAPACITIES, eof=st.booleans())
def test_reader_over_a_socket_matches_the_reference_and_never_hangs(data: bytes, capacity: int, eof: bool) -> None:
    expected_frames, expected_error, consumed, largest = reference(data, capacity, eof)
    a, b = socket.socketpair()
    with a, b:
        a.sendall(data)  # a few KiB at most: fits the socket buffer, no writer thread needed
        if eof:
            a.shutdown(socket.SHUT_WR)
        reader = FrameReader(b, capacity, idle_timeout=IDLE, min_rate=1e9)
        start = time.monotonic()
        frames, error = read_until_error(reader, len(data) // HEADER_SIZE + 2)
        elapsed = time.monotonic() - start
        left = drain(b)
    assert frames == expected_frames
    assert type(error) is expected_error, f"{type(error).__name__}: {error}"
    assert str(error)
    # A hang, not speed: each read waits at most IDLE, so a few hundred bytes take well under
    # a second here; 10 s leaves room for a loaded CI machine and still catches a reader
    # that waits for bytes that never come.
    assert elapsed < 10.0, f"the reader took {elapsed:.2f} s on a {len(data)}-byte stream"
    # Never a byte past a rejected header (a FrameTooLarge body stays unread).
    assert left == data[consumed:]
    assert reader.bytes_received <= consumed
    # The large buffer exists only if a frame above the control size was accepted, and is the capacity.
    if largest > MAX_CONTROL_FRAME:
        assert reader._large is not None and len(reader._large) == capacity
    else:
        assert reader._large is None


@settings(FUZZ, max_examples=100)
@given(
    kind=FRAME_TYPES,
    capacity=st.sampled_from([0, 32, MAX_CONTROL_FRAME, BIG_CAPACITY, HARD_MAX_FRAME]),
    excess=st.sampled_from([1, 2**20, 2**63]) | st.integers(1, 2**64 - 1),
)
def test_huge_length_claim_is_too_large_before_any_body_byte_or_allocation(
    kind: FrameType, capacity: int, excess: int
) -> None:
    length = min(capacity + excess, 2**64 - 1)
    trailing = b"\xab" * 1024  # a reader that trusted the header would start reading these
    a, b = socket.socketpair()
    with a, b:
        a.sendall(encode_header(kind, length) + trailing)
        reader = FrameReader(b, capacity, idle_timeout=1)
        error: BaseException | None = None
        tracemalloc.start()
        try:
            try:
                reader.read()
            except BaseException as exc:  # noqa: BLE001 - checked below, outside the traced region
                error = exc
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        left = drain(b)
    assert isinstance(error, FrameTooLarge), repr(error)
    assert f"claims {length} bytes; the limit is {capacity}" in str(error)
    assert peak < 64 * 1024, f"reading a rejected header allocated {peak} bytes"
    assert reader._large is None
    assert left == trailing
    assert reader.bytes_received == HEADER_SIZE  # the header, not one byte of the claimed body


# --- valid frames round-trip ------------------------------------------------------------

LARGE_LIMIT = 300_000
LARGE_BODIES = st.builds(
    lambda n, seed: random.Random(seed).randbytes(n),
    st.integers(MAX_CONTROL_FRAME + 1, LARGE_LIMIT),
    st.integers(0, 2**32),
)
BODIES = st.binary(max_size=2000) | LARGE_BODIES


def split(body: bytes, cuts: list[int]) -> list[bytes | bytearray | memoryview]:
    """`body` as send_frame parts cut at `cuts`, in the three buffer types a sender uses."""
    points = [0, *sorted({c % (len(body) + 1) for c in cuts}), len(body)]
    kinds = (bytes, bytearray, memoryview)
    return [kinds[i % 3](body[lo:hi]) for i, (lo, hi) in enumerate(itertools.pairwise(points))]


@settings(FUZZ, max_examples=80)
@given(
    frames=st.lists(
        st.tuples(NON_ERROR_TYPES, BODIES, st.lists(st.integers(0, 2**32), max_size=5)), min_size=1, max_size=4
    )
)
def test_send_frame_then_reader_round_trips_exactly(frames: list[tuple[FrameType, bytes, list[int]]]) -> None:
    a, b = socket.socketpair()
    sent: dict[str, Any] = {}

    def write() -> None:
        try:
            sent["bytes"] = sum(send_frame(a, kind, split(body, cuts)) for kind, body, cuts in frames)
            a.shutdown(socket.SHUT_WR)
        except BaseException as exc:  # noqa: BLE001 - surfaced by the assertions below
            sent["error"] = exc

    with a, b:
        a.settimeout(10)
        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        try:
            reader = FrameReader(b, LARGE_LIMIT, idle_timeout=10)
            got, error = read_until_error(reader, len(frames) + 1)
        finally:
            writer.join(10)
    assert not writer.is_alive()
    assert "error" not in sent, sent.get("error")
    assert got == [(kind, body) for kind, body, _ in frames]
    assert type(error) is ConnectionClosed
    assert reader.bytes_received == sent["bytes"] == sum(HEADER_SIZE + len(body) for _, body, _ in frames)


@FUZZ
@given(frames=st.lists(st.tuples(NON_ERROR_TYPES, BODIES), max_size=4), data=st.data())
def test_frames_cut_at_arbitrary_chunk_boundaries_decode_identically(
    frames: list[tuple[FrameType, bytes]], data: st.DataObject
) -> None:
    stream = b"".join(frame(kind, body) for kind, body in frames)
    if len(stream) < 3000 and data.draw(st.booleans(), label="one byte at a time"):
        cuts = list(range(len(stream)))
    else:
        cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=40), label="cuts")
    source = ChunkStream(stream, cuts)
    reader = FrameReader(source, LARGE_LIMIT, idle_timeout=5)
    got, error = read_until_error(reader, len(frames) + 1)
    assert got == frames
    assert type(error) is ConnectionClosed
    assert reader.bytes_received == len(stream) == source.pos


# --- the protocol's parsers -------------------------------------------------------------

JSON_SCALARS = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=20)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)
SPECS = list(registry.all_specs())
SCHEME_IDS = [spec.scheme_id for spec in SPECS]
BACKENDS = sorted({backend for spec in SPECS for backend in spec.backends})
PARAM_NAMES = sorted({param.name for spec in SPECS for param in spec.params})
PARAM_VALUES = sorted({repr(c): c for spec in SPECS for p in spec.params for c in p.choices}.values(), key=repr)
SIZES = (
    st.sampled_from([0, 1, 16, 64, 1024, 4096, MAX_SESSION_MESSAGE, MAX_SESSION_MESSAGE + 1, 2**63, -1])
    | st.integers(-(2**64), 2**64)
    | JSON_VALUES
)
JOB_DICTS = st.fixed_dictionaries(
    {"scheme": st.sampled_from(SCHEME_IDS), "backend": st.sampled_from(BACKENDS)},
    optional={
        "params": st.dictionaries(
            st.sampled_from(PARAM_NAMES) | st.text(max_size=8),
            st.sampled_from(PARAM_VALUES) | st.integers(-5, 5000) | JSON_VALUES,
            max_size=3,
        )
        | JSON_VALUES,
        "message_sizes": st.lists(SIZES, max_size=5) | JSON_VALUES,
        "tcp_nodelay": st.booleans() | JSON_VALUES,
        "evil": JSON_VALUES,
    },
)


@st.composite
def plausible_jobs(draw: st.DrawFn) -> dict[str, Any]:
    """Jobs a real sender could send (so the accepting branch runs), sometimes with one field spoiled."""
    spec = draw(st.sampled_from(SPECS))
    params: dict[str, Any] = {}
    for param in spec.params:
        if draw(st.booleans()):
            if param.choices:
                values = st.sampled_from(param.choices)
            elif isinstance(param.default, bool):
                values = st.booleans()
            else:
                values = st.integers((param.minimum or 0) - 2, (param.maximum or 10**6) + 2)
            params[param.name] = draw(values)
    job: dict[str, Any] = {
        "scheme": spec.scheme_id,
        "backend": draw(st.sampled_from(spec.backends)),
        "params": params,
        "message_sizes": draw(
            st.lists(st.sampled_from([0, 1, 16, 64, 190, 1024, 4096]) | st.integers(-2, 2**40), min_size=1, max_size=4)
        ),
    }
    if draw(st.booleans()):
        job["tcp_nodelay"] = draw(st.booleans())
    if draw(st.integers(0, 3)) == 0:
        job[draw(st.sampled_from([*job, "evil"]))] = draw(JSON_VALUES)
    return job


ANY_JOB_DICT = plausible_jobs() | JOB_DICTS | st.dictionaries(st.text(max_size=12), JSON_VALUES, max_size=5)


def spoil(text: bytes, index: int, byte: int) -> bytes:
    """`text` with the byte at `index` (wrapped) replaced by `byte`."""
    i = index % (len(text) + 1)
    return text[:i] + bytes([byte]) + text[i + 1 :]


#: JSON texts that trip decoders in ways random bytes rarely do: nesting deeper than the
#: recursion limit, integers longer than Python's 4300-digit conversion limit, NaN.
NASTY_JSON = st.one_of(
    st.integers(1, 20_000).map(lambda n: "[" * n),
    st.integers(1, 10_000).map(lambda n: '{"a":' * n + "1" + "}" * n),
    st.integers(1, 30_000).map(lambda n: "9" * n),
    st.integers(1, 30_000).map(
        lambda n: '{"scheme": "aes-gcm", "backend": "cryptography", "message_sizes": [' + "1" * n + "]}"
    ),
    st.integers(1, 30_000).map(
        lambda n: (
            '{"scheme": "aes-gcm", "backend": "cryptography", "message_sizes": [1],'
            ' "params": {"key_bits": ' + "2" * n + "}}"
        )
    ),
    st.sampled_from(["NaN", "-Infinity", "[1e999]", '"\\ud800"', "{}", "[]", "null", '{"scheme": null}', ""]),
)
RAW_BODIES = st.one_of(
    st.binary(max_size=300),
    NASTY_JSON.map(str.encode),
    st.builds(json.dumps, ANY_JOB_DICT).map(str.encode),
    # A valid-looking job with one byte replaced: bad UTF-8, broken syntax.
    st.builds(lambda d, i, c: spoil(json.dumps(d).encode(), i, c), JOB_DICTS, st.integers(0, 500), st.integers(0, 255)),
)
MAX_MESSAGES = st.sampled_from([0, 1024, MAX_SESSION_MESSAGE])


def check_job(body: bytes, max_message: int) -> None:
    """parse_job accepts a consistent job or raises JobRejected with a reason; nothing else."""
    try:
        job, scheme, capacity = parse_job(body, max_message)
    except JobRejected as exc:
        assert str(exc).strip(), "JobRejected without a reason"
        assert len(str(exc)) < 2 * MAX_CONTROL_FRAME  # the reason goes back in one ERROR frame
        event("rejected")
        return
    event("accepted")
    data = json.loads(body)
    assert (job.scheme, job.backend) == (data["scheme"], data["backend"])
    assert scheme.info is not None
    assert job.message_sizes and all(0 <= size <= max_message for size in job.message_sizes)
    assert MAX_CONTROL_FRAME <= capacity <= HARD_MAX_FRAME
    assert capacity >= max(job.message_sizes)


@FUZZ
@given(body=RAW_BODIES, max_message=MAX_MESSAGES)
def test_parse_job_over_arbitrary_bytes_raises_only_job_rejected(body: bytes, max_message: int) -> None:
    check_job(body, max_message)


@FUZZ
@given(job=ANY_JOB_DICT, max_message=MAX_MESSAGES)
def test_parse_job_over_json_ish_dicts_raises_only_job_rejected(job: dict[str, Any], max_message: int) -> None:
    check_job(json.dumps(job).encode(), max_message)


@FUZZ
@given(
    body=RAW_BODIES | st.builds(json.dumps, JSON_VALUES).map(str.encode),
    what=st.sampled_from(["JOB_OK", "SIZE_END_OK"]),
)
def test_decode_json_returns_a_dict_or_raises_malformed_body(body: bytes, what: str) -> None:
    try:
        data = decode_json(memoryview(body), what)
    except MalformedBody as exc:
        assert str(exc).startswith(what)
        return
    assert isinstance(data, dict)
    assert data == json.loads(body) or json.dumps(data) == json.dumps(json.loads(body))  # NaN != NaN


@FUZZ
@given(body=st.binary(max_size=64))
def test_decode_ack_over_arbitrary_bytes(body: bytes) -> None:
    try:
        value, verdict, reason = decode_ack(memoryview(body))
    except MalformedBody as exc:
        assert str(exc)
        assert len(body) < ACK.size or body[8] not in {int(v) for v in Verdict}
        return
    assert (value, int(verdict)) == ACK.unpack_from(body)
    assert isinstance(verdict, Verdict) and isinstance(reason, str)


@FUZZ
@given(value=st.integers(0, 2**64 - 1), verdict=st.sampled_from(list(Verdict)), reason=st.text(max_size=100))
def test_ack_round_trips(value: int, verdict: Verdict, reason: str) -> None:
    # The reason is the peer's text: it comes back with control characters escaped.
    assert decode_ack(b"".join(encode_ack(value, verdict, reason))) == (
        value,
        verdict,
        escape_control(reason, PEER_TEXT_LIMIT),
    )


# --- regressions found by the properties above --------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 5000,  # RecursionError inside json.loads
        b'{"a":' * 5000 + b"1" + b"}" * 5000,
        b"9" * 5000,  # ValueError: exceeds the 4300-digit int conversion limit
        b'{"scheme": "aes-gcm", "backend": "cryptography", "message_sizes": [' + b"1" * 5000 + b"]}",
    ],
    ids=["deep-array", "deep-object", "long-int", "long-int-size"],
)
def test_job_json_that_trips_the_decoder_is_rejected_with_a_reason(body: bytes) -> None:
    with pytest.raises(JobRejected, match="not UTF-8 JSON"):
        parse_job(body)
    with pytest.raises(MalformedBody, match="JOB_OK is not UTF-8 JSON"):
        decode_json(body, "JOB_OK")


def test_a_valid_job_is_accepted() -> None:
    """Positive control for the properties: the success branch of check_job is reachable."""
    body = json.dumps({"scheme": "aes-gcm", "backend": "cryptography", "message_sizes": [64, 4096]}).encode()
    job, _, capacity = parse_job(body)
    assert job.message_sizes == [64, 4096] and capacity >= 4096


# --- atheris: coverage-guided fuzzing in a subprocess ---------------------------------------

ATHERIS_RUNS = 50_000
ATHERIS_HARNESS = textwrap.dedent('''
    """Coverage-guided fuzz targets: the first byte picks one, the rest is the input."""
    import sys

    import atheris

    with atheris.instrument_imports(include=["app.core.transport.wire", "app.core.session.protocol"]):
        from app.core.transport import wire
        from app.core.session import protocol

    CAPACITIES = (0, 32, wire.MAX_CONTROL_FRAME, 4 * wire.MAX_CONTROL_FRAME)


    class Stream:
        def __init__(self, data, chunk):
            self.data, self.pos, self.chunk = data, 0, chunk

        def settimeout(self, value):
            pass

        def recv_into(self, view, nbytes=0):
            n = min(nbytes or len(view), self.chunk, len(self.data) - self.pos)
            view[:n] = self.data[self.pos:self.pos + n]
            self.pos += n
            return n


    def one_input(data):
        if len(data) < 3:
            return
        target, knob, chunk, rest = data[0] % 5, data[1], data[2] % 64 + 1, data[3:]
        if target == 0:
            limit = int.from_bytes(rest[12:20].ljust(8, b"\\0"), "big") if knob & 1 else CAPACITIES[knob % 4]
            try:
                header = wire.decode_header(rest[:12], limit)
            except wire.WireError as exc:
                assert str(exc)
            else:
                assert header.length <= limit
        elif target == 1:
            capacity = CAPACITIES[knob % 4]
            reader = wire.FrameReader(Stream(rest, chunk), capacity, idle_timeout=1)
            for _ in range(len(rest) // wire.HEADER_SIZE + 2):
                try:
                    reader.read()
                except wire.WireError as exc:
                    assert str(exc)
                    break
            else:
                raise AssertionError("more frames than the stream holds")
            assert reader.bytes_received <= len(rest)
            assert reader._large is None or len(reader._large) == capacity
        elif target == 2:
            try:
                protocol.parse_job(rest, (0, 1024, wire.MAX_SESSION_MESSAGE)[knob % 3])
            except protocol.JobRejected as exc:
                assert str(exc)
        elif target == 3:
            try:
                protocol.decode_ack(rest)
            except wire.MalformedBody as exc:
                assert str(exc)
        else:
            try:
                assert isinstance(protocol.decode_json(rest, "X"), dict)
            except wire.MalformedBody as exc:
                assert str(exc)


    atheris.Setup(sys.argv, one_input)
    atheris.Fuzz()
''')
ATHERIS_SEEDS = [
    b"\x00\x01\x00" + frame(FrameType.PING, b""),
    b"\x01\x02\x07" + frame(FrameType.PING, b"abc") + frame(FrameType.MESSAGE, b"x" * 100) + frame(FrameType.ERROR),
    b"\x02\x02\x00" + json.dumps({"scheme": "aes-gcm", "backend": "cryptography", "message_sizes": [64]}).encode(),
    b"\x02\x02\x00"
    + json.dumps(
        {"scheme": "hkdf", "backend": "pycryptodome", "params": {"output_length": 64}, "message_sizes": [0]}
    ).encode(),
    b"\x03\x00\x00" + ACK.pack(5, 1) + b"reason",
    b"\x04\x00\x00" + b'{"cpu_seconds": 1.5}',
    # Known decoder traps as starting points: nesting past the recursion limit, a 5000-digit integer.
    b"\x02\x02\x00" + b"[" * 3000,
    b"\x04\x00\x00" + b'{"a":' * 3000,
    b"\x02\x02\x00" + b'{"scheme": "aes-gcm", "backend": "cryptography", "message_sizes": [' + b"7" * 5000 + b"]}",
]


@pytest.mark.exhaustive  # make test: the Hypothesis properties above, over the same parsers
def test_atheris_finds_no_crash_in_the_parsers(tmp_path: Path) -> None:
    pytest.importorskip("atheris")
    harness = tmp_path / "fuzz_wire.py"
    harness.write_text(ATHERIS_HARNESS)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i, seed in enumerate(ATHERIS_SEEDS):
        (corpus / f"seed-{i}").write_bytes(seed)
    root = ROOT
    # Through a shell that forks it, not straight from here: Linux carries a process's peak
    # resident size across exec, and libFuzzer's 2 GB memory limit reads that peak, so a
    # harness started by a pytest process that once held 2.2 GB (the whole suite in one
    # process) was reported out of memory on its first input. A fork starts the count afresh.
    process = subprocess.run(
        [
            "/bin/sh",
            "-c",
            '"$@"; exit $?',
            "fuzz",
            sys.executable,
            str(harness),
            f"-runs={ATHERIS_RUNS}",
            "-seed=20240601",
            "-max_total_time=20",
            "-timeout=10",
            "-max_len=8192",
            "-len_control=0",
            f"-artifact_prefix={tmp_path}/",
            str(corpus),
        ],
        check=False,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(root)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = process.stdout + process.stderr
    assert process.returncode == 0, output[-4000:]
    assert "Done" in output, output[-4000:]

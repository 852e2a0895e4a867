"""The frame layer: header codec, FrameReader over hostile streams, send_frame over sockets."""

from __future__ import annotations

import array
import socket
import struct
import threading
import time
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.transport.wire import (
    HARD_MAX_FRAME,
    HEADER,
    HEADER_SIZE,
    MAGIC,
    MAX_CONTROL_FRAME,
    READ_AHEAD,
    SMALL_FRAME,
    VERSION,
    BadMagic,
    ConnectionClosed,
    FrameReader,
    FrameTooLarge,
    FrameType,
    Header,
    PeerError,
    PeerTimeout,
    TruncatedFrame,
    UnexpectedFrame,
    UnknownFrameType,
    UnsupportedVersion,
    WireError,
    decode_header,
    encode_header,
    send_frame,
)

FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KNOWN_TYPES = {int(t) for t in FrameType}
FRAME_TYPES = st.sampled_from(list(FrameType))
NON_ERROR_TYPES = st.sampled_from([t for t in FrameType if t is not FrameType.ERROR])


def raw_header(magic: bytes = MAGIC, version: int = VERSION, kind: int = int(FrameType.PING), length: int = 0) -> bytes:
    return HEADER.pack(magic, version, kind, length)


def frame(kind: FrameType, body: bytes = b"") -> bytes:
    return encode_header(kind, len(body)) + body


class FakeStream:
    """An in-memory stream: delivers `data` in chunks of the given sizes (cycled), then EOF."""

    def __init__(self, data: bytes, chunks: list[int] | None = None) -> None:
        self.data = data
        self.pos = 0
        self.chunks = chunks or [len(data) or 1]
        self.calls = 0
        self.timeouts: list[float | None] = []

    def settimeout(self, value: float | None) -> None:
        self.timeouts.append(value)

    def recv_into(self, view: memoryview, nbytes: int = 0) -> int:
        assert nbytes >= 0 and len(view) >= nbytes, "reader asked for more than its view holds"
        want = nbytes or len(view)
        chunk = self.chunks[self.calls % len(self.chunks)]
        self.calls += 1
        n = min(want, chunk, len(self.data) - self.pos)
        view[:n] = self.data[self.pos : self.pos + n]
        self.pos += n
        return n


class RaisingStream:
    """A stream whose recv_into raises what a socket would."""

    def __init__(self, exc: BaseException, prefix: bytes = b"") -> None:
        self.exc = exc
        self.inner = FakeStream(prefix)

    def settimeout(self, value: float | None) -> None:
        pass

    def recv_into(self, view: memoryview, nbytes: int = 0) -> int:
        if self.inner.pos < len(self.inner.data):
            return self.inner.recv_into(view, nbytes)
        raise self.exc


def read_all(reader: FrameReader) -> tuple[list[tuple[FrameType, bytes]], WireError]:
    """Read frames until the reader raises; bodies are copied (views die on the next read)."""
    frames: list[tuple[FrameType, bytes]] = []
    while True:
        try:
            kind, body = reader.read()
        except WireError as exc:
            return frames, exc
        frames.append((kind, bytes(body)))


# --- header codec -------------------------------------------------------------------


@FAST
@given(data=st.binary(min_size=HEADER_SIZE, max_size=HEADER_SIZE), limit=st.integers(0, 2**64 - 1))
def test_decode_header_of_any_12_bytes_returns_a_header_or_a_wire_error(data: bytes, limit: int) -> None:
    try:
        header = decode_header(data, limit)
    except WireError as exc:
        magic, version, kind, _length = struct.unpack(">2sBBQ", data)
        expected = (
            BadMagic
            if magic != MAGIC
            else UnsupportedVersion
            if version != VERSION
            else UnknownFrameType
            if kind not in KNOWN_TYPES
            else FrameTooLarge
        )
        assert type(exc) is expected
        assert str(exc)
    else:
        assert isinstance(header, Header)
        assert header.length <= limit
        assert encode_header(header.frame_type, header.length) == data


@FAST
@given(data=st.binary(max_size=40).filter(lambda d: len(d) != HEADER_SIZE))
def test_decode_header_of_the_wrong_size_is_truncated(data: bytes) -> None:
    with pytest.raises(TruncatedFrame):
        decode_header(data, HARD_MAX_FRAME)


@FAST
@given(kind=FRAME_TYPES, length=st.integers(0, HARD_MAX_FRAME), view=st.sampled_from([bytes, bytearray, memoryview]))
def test_encode_decode_round_trip(kind: FrameType, length: int, view: type) -> None:
    encoded = encode_header(kind, length)
    assert len(encoded) == HEADER_SIZE
    assert decode_header(view(encoded), HARD_MAX_FRAME) == Header(kind, length)
    assert decode_header(encoded, length) == Header(kind, length)  # the limit is inclusive


@FAST
@given(kind=FRAME_TYPES, limit=st.integers(0, HARD_MAX_FRAME), excess=st.integers(1, 2**64 - 1))
def test_length_above_the_limit_is_too_large(kind: FrameType, limit: int, excess: int) -> None:
    length = min(limit + excess, 2**64 - 1)
    with pytest.raises(FrameTooLarge, match=str(length)):
        decode_header(encode_header(kind, length), limit)


@FAST
@given(magic=st.binary(min_size=2, max_size=2).filter(lambda m: m != MAGIC), length=st.integers(0, 2**64 - 1))
def test_wrong_magic(magic: bytes, length: int) -> None:
    with pytest.raises(BadMagic):
        decode_header(raw_header(magic=magic, length=length), HARD_MAX_FRAME)


@FAST
@given(version=st.integers(0, 255).filter(lambda v: v != VERSION))
def test_wrong_version(version: int) -> None:
    with pytest.raises(UnsupportedVersion, match=str(version)):
        decode_header(raw_header(version=version), HARD_MAX_FRAME)


@FAST
@given(kind=st.integers(0, 255).filter(lambda k: k not in KNOWN_TYPES))
def test_unknown_frame_type(kind: int) -> None:
    with pytest.raises(UnknownFrameType, match=str(kind)):
        decode_header(raw_header(kind=kind), HARD_MAX_FRAME)


def test_header_checks_run_in_order_magic_version_type_length() -> None:
    # Everything wrong at once: the first check wins, and nothing is sized by the length.
    with pytest.raises(BadMagic):
        decode_header(raw_header(magic=b"HT", version=9, kind=0, length=2**63), 10)
    with pytest.raises(UnsupportedVersion):
        decode_header(raw_header(version=9, kind=0, length=2**63), 10)
    with pytest.raises(UnknownFrameType):
        decode_header(raw_header(kind=0, length=2**63), 10)


# --- FrameReader over in-memory streams ----------------------------------------------


CHUNKS = st.lists(st.integers(1, 64), min_size=1, max_size=20)
#: Every reader test runs with and without read-ahead (a session's readers after authentication).
AHEAD = pytest.mark.parametrize("ahead", [False, True], ids=["exact", "read-ahead"])


@AHEAD
@FAST
@given(data=st.binary(max_size=600), chunks=CHUNKS, capacity=st.sampled_from([0, 32, 1024, MAX_CONTROL_FRAME]))
def test_reader_on_arbitrary_bytes_raises_only_wire_errors(
    data: bytes, chunks: list[int], capacity: int, ahead: bool
) -> None:
    stream = FakeStream(data, chunks)
    reader = FrameReader(stream, capacity, idle_timeout=5, read_ahead=ahead)
    frames, error = read_all(reader)
    assert isinstance(error, WireError)
    assert all(len(body) <= capacity for _, body in frames)
    assert reader.bytes_received <= len(data)
    assert reader._large is None  # nothing above the control-frame size was ever accepted


@st.composite
def frame_sequences(draw: st.DrawFn) -> list[tuple[FrameType, bytes]]:
    return draw(st.lists(st.tuples(NON_ERROR_TYPES, st.binary(max_size=300)), max_size=8))


@AHEAD
@FAST
@given(frames=frame_sequences(), chunks=CHUNKS)
def test_valid_frames_split_anywhere_read_back_identically(
    frames: list[tuple[FrameType, bytes]], chunks: list[int], ahead: bool
) -> None:
    data = b"".join(frame(kind, body) for kind, body in frames)
    stream = FakeStream(data, chunks)
    reader = FrameReader(stream, 1024, idle_timeout=5, read_ahead=ahead)
    got, error = read_all(reader)
    assert got == frames
    assert type(error) is ConnectionClosed  # EOF exactly at a frame boundary
    assert reader.bytes_received == len(data) == stream.pos


@AHEAD
@FAST
@given(frames=frame_sequences().filter(bool), chunks=CHUNKS, data=st.data())
def test_eof_mid_frame_is_truncated(
    frames: list[tuple[FrameType, bytes]], chunks: list[int], data: st.DataObject, ahead: bool
) -> None:
    encoded = [frame(kind, body) for kind, body in frames]
    whole = b"".join(encoded)
    boundaries = {sum(len(e) for e in encoded[:i]) for i in range(len(encoded) + 1)}
    cut = data.draw(st.integers(1, len(whole) - 1).filter(lambda c: c not in boundaries), label="cut")
    reader = FrameReader(FakeStream(whole[:cut], chunks), 1024, idle_timeout=5, read_ahead=ahead)
    got, error = read_all(reader)
    complete = max(i for i in range(len(encoded) + 1) if sum(len(e) for e in encoded[:i]) <= cut)
    assert got == frames[:complete]
    assert type(error) is TruncatedFrame


@AHEAD
def test_large_body_lands_in_the_buffer_allocated_once(ahead: bool) -> None:
    capacity = MAX_CONTROL_FRAME + 5000
    big1, big2 = bytes(range(256)) * 260, b"\x5a" * capacity
    data = frame(FrameType.MESSAGE, big1) + frame(FrameType.PING, b"small") + frame(FrameType.MESSAGE, big2)
    reader = FrameReader(FakeStream(data, [7919]), capacity, idle_timeout=5, read_ahead=ahead)
    assert reader.read()[1] == big1
    large = reader._large
    assert large is not None and len(large) == capacity
    assert reader.read() == (FrameType.PING, memoryview(b"small"))
    kind, body = reader.read()
    assert (kind, bytes(body)) == (FrameType.MESSAGE, big2)
    assert reader._large is large  # reused, not reallocated
    with pytest.raises(ConnectionClosed):
        reader.read()


@AHEAD
@pytest.mark.parametrize("length", [2**63, 2**64 - 1, MAX_CONTROL_FRAME + 1])
def test_header_claiming_huge_length_allocates_and_reads_nothing(length: int, ahead: bool) -> None:
    # Plenty of body bytes follow: a reader that trusted the header would consume them.
    stream = FakeStream(encode_header(FrameType.MESSAGE, length) + b"\x00" * (4 * READ_AHEAD), [3, 5000])
    reader = FrameReader(stream, MAX_CONTROL_FRAME, idle_timeout=5, read_ahead=ahead)
    with pytest.raises(FrameTooLarge, match=str(length)):
        reader.read()
    assert reader._large is None
    # Exactly the header; read ahead, the receives that brought it (3 bytes, then READ_AHEAD)
    # and not one more: nothing is awaited for a body that was refused.
    assert stream.pos == (3 + READ_AHEAD if ahead else HEADER_SIZE)
    assert reader.bytes_received == HEADER_SIZE


def test_per_read_limit_narrows_the_capacity() -> None:
    stream = FakeStream(frame(FrameType.HELLO, b"x" * 33))
    reader = FrameReader(stream, MAX_CONTROL_FRAME, idle_timeout=5)
    with pytest.raises(FrameTooLarge, match="limit is 32"):
        reader.read(32)
    assert stream.pos == HEADER_SIZE  # exactly the header: authentication reads no byte more


def test_read_ahead_takes_small_frames_in_one_receive_and_keeps_what_follows() -> None:
    frames = [(FrameType.ACK, b"a" * 9), (FrameType.PONG, b""), (FrameType.MESSAGE, b"m" * 3000)]
    data = b"".join(frame(kind, body) for kind, body in frames)
    stream = FakeStream(data, [len(data)])
    reader = FrameReader(stream, 1024 * 4, idle_timeout=5, read_ahead=True)
    got, error = read_all(reader)
    assert got == frames and type(error) is ConnectionClosed
    assert stream.calls == 2  # one receive for the three frames, one for the end of the stream
    exact = FakeStream(data, [len(data)])
    assert read_all(FrameReader(exact, 1024 * 4, idle_timeout=5))[0] == frames
    assert exact.calls == 2 * len(frames) - 1 + 1  # header and body each (an empty body: none), then EOF


def test_capacity_above_the_hard_cap_is_refused() -> None:
    with pytest.raises(ValueError, match="hard cap"):
        FrameReader(FakeStream(b""), HARD_MAX_FRAME + 1)


@pytest.mark.parametrize("text", ["job rejected: unknown scheme 'rot13'", "ünïcödé ✓", ""])
def test_error_frame_raises_peer_error_with_its_text(text: str) -> None:
    stream = FakeStream(frame(FrameType.ERROR, text.encode()), [5])
    with pytest.raises(PeerError) as info:
        FrameReader(stream, 1024).read()
    assert str(info.value) == "peer reported: " + text


def test_error_frame_with_invalid_utf8_still_raises_peer_error() -> None:
    with pytest.raises(PeerError, match="bad \ufffd bytes"):
        FrameReader(FakeStream(frame(FrameType.ERROR, b"bad \xff bytes")), 1024).read()


def test_expect_rejects_other_frame_types() -> None:
    reader = FrameReader(FakeStream(frame(FrameType.PONG, b"") + frame(FrameType.ACK, b"ok")), 1024)
    with pytest.raises(UnexpectedFrame, match="expected ACK or TRACE_OK, got PONG"):
        reader.expect(FrameType.ACK, FrameType.TRACE_OK)
    assert bytes(reader.expect(FrameType.ACK, FrameType.TRACE_OK)) == b"ok"


@pytest.mark.parametrize(
    ("exc", "prefix", "expected"),
    [
        (TimeoutError("timed out"), b"", PeerTimeout),
        (TimeoutError(), frame(FrameType.PING, b"abc")[:9], PeerTimeout),
        (ConnectionResetError(), b"", TruncatedFrame),
        (ConnectionResetError(), frame(FrameType.PING, b"abc")[:14], TruncatedFrame),
    ],
)
@AHEAD
def test_socket_exceptions_become_wire_errors(exc: BaseException, prefix: bytes, expected: type, ahead: bool) -> None:
    with pytest.raises(expected):
        FrameReader(RaisingStream(exc, prefix), 1024, idle_timeout=5, read_ahead=ahead).read()


# --- send_frame ------------------------------------------------------------------------


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    a, b = socket.socketpair()
    with a, b:
        yield a, b


class CappedSocket:
    """Records what send_frame hands sendmsg, sending at most `caps[i]` bytes per call."""

    def __init__(self, caps: list[int]) -> None:
        self.caps = caps
        self.calls = 0
        self.wire = bytearray()

    def send(self, data: bytes) -> int:  # a small frame, joined
        return self.sendmsg([memoryview(data)])

    def sendmsg(self, buffers: list[memoryview]) -> int:
        cap = self.caps[self.calls % len(self.caps)]
        self.calls += 1
        sent = 0
        for buf in buffers:
            take = min(len(buf), cap - sent)
            self.wire += bytes(buf[:take])
            sent += take
            if sent == cap:
                break
        return sent


class CountingSocket:
    """Delegates sendmsg to a real socket and records how much each call sent."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.offered: list[int] = []
        self.sent: list[int] = []

    def sendmsg(self, buffers: list[memoryview]) -> int:
        self.offered.append(sum(len(b) for b in buffers))
        n = self.sock.sendmsg(buffers)
        self.sent.append(n)
        return n


PARTS = st.lists(
    st.tuples(st.binary(max_size=200), st.sampled_from([bytes, bytearray, memoryview])).map(lambda t: t[1](t[0])),
    max_size=80,  # more than the 64 buffers handed to sendmsg per call
)


@FAST
@given(kind=FRAME_TYPES, parts=PARTS, caps=st.lists(st.integers(1, 300), min_size=1, max_size=10))
def test_send_frame_resumes_partial_sends_exactly(kind: FrameType, parts: list, caps: list[int]) -> None:
    sock = CappedSocket(caps)
    body = b"".join(bytes(p) for p in parts)
    assert send_frame(sock, kind, parts) == HEADER_SIZE + len(body)  # type: ignore[arg-type]
    assert bytes(sock.wire) == encode_header(kind, len(body)) + body


class RecordingSocket:
    """Delegates to a real socket and records which call sent each frame."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.calls: list[str] = []

    def send(self, data: bytes) -> int:
        self.calls.append("send")
        return self.sock.send(data)

    def sendmsg(self, buffers: list[memoryview]) -> int:
        self.calls.append("sendmsg")
        return self.sock.sendmsg(buffers)


def test_small_frames_are_sent_joined_larger_ones_gathered(pair: tuple[socket.socket, socket.socket]) -> None:
    a, b = pair
    recording = RecordingSocket(a)
    small = [b"n" * 12, bytearray(b"s" * (SMALL_FRAME - 12))]
    large = [b"n" * 12, b"L" * (SMALL_FRAME - 11)]
    assert send_frame(recording, FrameType.MESSAGE, small) == HEADER_SIZE + SMALL_FRAME  # type: ignore[arg-type]
    assert send_frame(recording, FrameType.ACK, large) == HEADER_SIZE + SMALL_FRAME + 1  # type: ignore[arg-type]
    assert recording.calls == ["send", "sendmsg"]
    reader = FrameReader(b, 2 * SMALL_FRAME, idle_timeout=5, read_ahead=True)
    kind, body = reader.read()
    assert (kind, bytes(body)) == (FrameType.MESSAGE, b"".join(small))
    kind, body = reader.read()
    assert (kind, bytes(body)) == (FrameType.ACK, b"".join(large))


def test_send_frame_joins_parts_on_the_wire(pair: tuple[socket.socket, socket.socket]) -> None:
    a, b = pair
    parts = [b"head-", bytearray(b"middle-"), memoryview(b"xxtailxx")[2:6], b"", array.array("H", [0x4142, 0x4344])]
    expected = b"head-middle-tail" + array.array("H", [0x4142, 0x4344]).tobytes()
    assert send_frame(a, FrameType.MESSAGE, parts) == HEADER_SIZE + len(expected)
    assert send_frame(a, FrameType.BYE) == HEADER_SIZE
    reader = FrameReader(b, 1024, idle_timeout=5)
    kind, body = reader.read()
    assert (kind, bytes(body)) == (FrameType.MESSAGE, expected)
    kind, body = reader.read()
    assert (kind, bytes(body)) == (FrameType.BYE, b"")


def test_send_frame_large_body_arrives_intact(pair: tuple[socket.socket, socket.socket]) -> None:
    a, b = pair
    a.settimeout(30)  # a socket with a timeout is non-blocking inside: sendmsg sends what fits
    size = 8 * 1024 * 1024
    pattern = bytes(range(251))  # a prime period: any misplaced chunk shows
    body = (pattern * (size // len(pattern) + 1))[:size]
    parts = [memoryview(body)[:3], bytearray(body[3 : size // 2]), memoryview(body)[size // 2 :]]
    received: dict[str, object] = {}

    def read() -> None:
        try:
            reader = FrameReader(b, size, idle_timeout=10)
            kind, view = reader.read()
            received["frame"] = (kind, bytes(view))
            received["bytes"] = reader.bytes_received
        except BaseException as exc:  # noqa: BLE001 - surfaced by the assertion below
            received["error"] = exc

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    counting = CountingSocket(a)
    sent = send_frame(counting, FrameType.MESSAGE, parts)  # type: ignore[arg-type]
    thread.join(30)
    assert not thread.is_alive()
    assert "error" not in received, received.get("error")
    assert sent == HEADER_SIZE + size
    assert received["frame"] == (FrameType.MESSAGE, body)
    assert received["bytes"] == HEADER_SIZE + size
    assert sum(counting.sent) == HEADER_SIZE + size
    assert any(n < offered for n, offered in zip(counting.sent, counting.offered)), "sendmsg never sent partially"


def test_send_frame_to_a_closed_peer_is_connection_closed(pair: tuple[socket.socket, socket.socket]) -> None:
    a, b = pair
    b.close()
    with pytest.raises(ConnectionClosed):
        send_frame(a, FrameType.MESSAGE, [b"x" * 100_000])


def test_send_frame_to_a_peer_that_stops_reading_times_out(pair: tuple[socket.socket, socket.socket]) -> None:
    a, _b = pair
    a.settimeout(0.2)
    with pytest.raises(PeerTimeout, match="stopped reading"):
        send_frame(a, FrameType.MESSAGE, [bytes(16 * 1024 * 1024)])


# --- timeouts over real sockets --------------------------------------------------------


def test_silent_peer_times_out(pair: tuple[socket.socket, socket.socket]) -> None:
    _a, b = pair
    reader = FrameReader(b, 1024, idle_timeout=0.2)
    start = time.monotonic()
    with pytest.raises(PeerTimeout, match="sent nothing"):
        reader.read()
    elapsed = time.monotonic() - start
    assert 0.15 <= elapsed < 5


def test_peer_stalling_mid_body_times_out(pair: tuple[socket.socket, socket.socket]) -> None:
    a, b = pair
    a.sendall(encode_header(FrameType.MESSAGE, 100) + b"y" * 10)
    reader = FrameReader(b, 1024, idle_timeout=0.2)
    with pytest.raises(PeerTimeout, match="10 of 100 bytes"):
        reader.read()


def test_peer_stalling_mid_header_times_out(pair: tuple[socket.socket, socket.socket]) -> None:
    a, b = pair
    a.sendall(encode_header(FrameType.MESSAGE, 100)[:5])
    with pytest.raises(PeerTimeout, match=f"5 of {HEADER_SIZE} bytes"):
        FrameReader(b, 1024, idle_timeout=0.2).read()


def test_closing_peer_over_a_socket(pair: tuple[socket.socket, socket.socket]) -> None:
    a, b = pair
    a.sendall(frame(FrameType.PING, b"abc") + frame(FrameType.PING, b"defgh")[:8])
    a.close()
    reader = FrameReader(b, 1024, idle_timeout=5)
    kind, body = reader.read()
    assert (kind, bytes(body)) == (FrameType.PING, b"abc")
    with pytest.raises(TruncatedFrame, match=f"8 of {HEADER_SIZE}"):
        reader.read()

"""Length-prefixed frames between a session's sender and receiver.

Every frame is a fixed 12-byte header followed by a body:

    magic "CB" | version (1 byte) | frame type (1 byte) | body length (8 bytes, big endian)

The length field is 64 bits wide so that no claim a peer can make overflows; what
protects the reader is the limit it is given, not the width of the field. The
reader checks the header against that limit before it reads or allocates anything
for the body, so a header claiming 2^63 bytes costs nothing but the 12 bytes read.
Bodies land in a buffer the reader allocated once for the job (a 128 MiB message is
received in place, never accumulated chunk by chunk), and senders pass the scheme's
payload parts straight to `sendmsg`, so neither side joins large payloads. Small frames
cost as few system calls as possible: joined and sent with one `send`, and a session's
readers read ahead (`read_ahead`), so header and body arrive in one receive.

Every blocking call has a deadline: an idle or slow peer raises `PeerTimeout`.
"""

from __future__ import annotations

import enum
import select
import socket
import struct
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from app.core.errors import CryptoBenchError
from app.core.escaping import escape_control

MAGIC = b"CB"
#: 2: mutual HMAC challenge-response (the token never crosses the wire) and the
#: serve queue (QUEUED / READY / BUSY). A version-1 peer is refused at its first header.
VERSION = 2
HEADER = struct.Struct(">2sBBQ")
HEADER_SIZE = HEADER.size  # 12
#: No frame is ever larger than this, whatever a job asks for: a 128 MiB message
#: plus the expansion of the most verbose scheme (a chunked public-key scheme can
#: double a message), plus room for the scheme's fixed overhead.
HARD_MAX_FRAME = 256 * 1024 * 1024 + 64 * 1024
#: Largest message a session job may send (the issue's 128 MiB).
MAX_SESSION_MESSAGE = 128 * 1024 * 1024
#: Control frames (job descriptions, acknowledgements, errors) stay under this.
MAX_CONTROL_FRAME = 64 * 1024
#: A read-ahead reader asks each receive for at least this many bytes: a frame this
#: size or smaller arrives in one call, and a large body's first bytes are copied once.
READ_AHEAD = 4096
#: At most this many characters of a peer's error text reach a message.
PEER_TEXT_LIMIT = 500


class FrameType(enum.IntEnum):
    HELLO = 1  # sender -> receiver: the sender's 32-byte nonce, nothing else
    WELCOME = 2  # receiver -> sender: the receiver's proof (HMAC) that it holds the token
    JOB = 3  # sender -> receiver: JSON job description
    JOB_OK = 4  # receiver -> sender: JSON limits the receiver accepted
    SETUP = 5  # sender -> receiver: generate keys (one handshake round)
    PUBLIC = 6  # receiver -> sender: keygen time + public material
    HANDSHAKE = 7  # sender -> receiver: the sender's handshake message
    HANDSHAKE_OK = 8  # receiver -> sender: receiver handshake time + verdict
    SIZE = 9  # sender -> receiver: next message size and the plaintext seed
    SIZE_OK = 10
    PING = 11  # sender -> receiver: raw frame of the payload's size (network floor)
    PONG = 12  # receiver -> sender: a frame the size of an acknowledgement
    MESSAGE = 13  # sender -> receiver: a sealed payload to open and validate
    ACK = 14  # receiver -> sender: open time + verdict
    TAMPER = 15  # sender -> receiver: a tampered payload that must be rejected
    TRACE = 16  # sender -> receiver: a payload to open under tracemalloc
    TRACE_OK = 17  # receiver -> sender: traced peak + verdict
    SIZE_END = 18  # sender -> receiver: the size is done; report resources
    SIZE_END_OK = 19  # receiver -> sender: JSON resource summary
    BYE = 20  # sender -> receiver: the job is complete
    ERROR = 21  # either way: UTF-8 reason; the connection closes after it
    CHALLENGE = 22  # receiver -> sender: the receiver's 32-byte nonce
    PROOF = 23  # sender -> receiver: the sender's proof (HMAC) that it holds the token
    QUEUED = 24  # receiver -> sender: u32 clients ahead of this one; repeated as a keepalive
    READY = 25  # receiver -> sender: the receiver is free; send the JOB
    BUSY = 26  # receiver -> sender: u32 milliseconds to wait before retrying; the connection closes
    # Fresh connections (a job's "tcp_connection": "fresh"): each timed exchange on a new one.
    FRESH = 27  # sender -> receiver, on the session's connection: accept my next connection
    ATTACH = 28  # sender -> receiver, opening a fresh connection: the ticket, in the timed frame's write
    # 29 was ATTACHED (the receiver's go-ahead on a fresh connection, an exchange before the
    # timed frame): no longer sent, and its number is not reused.


#: Frame type by its byte: a dict lookup instead of an IntEnum call on every frame.
_FRAME_TYPES = {int(t): t for t in FrameType}
#: Each type's first four header bytes (magic, version, type), and the length's packer.
_PREFIXES = {t: HEADER.pack(MAGIC, VERSION, t, 0)[:4] for t in FrameType}
_LENGTH = struct.Struct(">Q")
#: Frames of byte strings up to this size are sent joined, with one send(): a copy of a
#: few KiB costs less than sendmsg gathering separate buffers (measured: benchmarks/README.md,
#: "Loopback round trip").
SMALL_FRAME = 4096
_ERROR = FrameType.ERROR
#: Linux honours SO_RCVTIMEO / SO_SNDTIMEO on TCP sockets: a blocking socket with a
#: kernel timeout needs no poll() before each call (CPython polls first whenever a
#: socket has a Python-level timeout).
_KERNEL_TIMEOUTS = sys.platform.startswith("linux") and hasattr(socket, "SO_RCVTIMEO")


class WireError(CryptoBenchError):
    """Any problem reading or writing frames; str() says what, for the job's error."""


class ConnectionClosed(WireError):
    """The peer closed the connection cleanly between frames."""


class TruncatedFrame(WireError):
    """The peer closed the connection in the middle of a frame."""


class BadMagic(WireError):
    """The bytes are not a CryptoBench frame (a different protocol, or garbage)."""


class UnsupportedVersion(WireError):
    """A frame from a different protocol version."""


class UnknownFrameType(WireError):
    """A frame type this version does not know."""


class FrameTooLarge(WireError):
    """The header claims a body larger than the reader's limit."""


class UnexpectedFrame(WireError):
    """A valid frame that the protocol does not allow at this point; `got` is its type, where
    a read told it (None once the error has crossed a pipe)."""

    def __init__(self, message: str, got: FrameType | None = None) -> None:
        super().__init__(message)
        self.got = got


class MalformedBody(WireError):
    """A frame whose body does not parse for its type."""


class PeerTimeout(WireError):
    """The peer sent nothing (or too little) within the deadline."""


class PeerError(WireError):
    """The peer reported an error in an ERROR frame and closed the connection."""


@dataclass(frozen=True)
class Header:
    frame_type: FrameType
    length: int


def encode_header(frame_type: FrameType, length: int) -> bytes:
    return HEADER.pack(MAGIC, VERSION, int(frame_type), length)


def decode_header(data: bytes | bytearray | memoryview, limit: int) -> Header:
    """Parse and check a 12-byte header against `limit` (the largest body allowed).

    Raises the typed `WireError` subclasses; never allocates anything sized by the
    claimed length.
    """
    if len(data) != HEADER_SIZE:
        raise TruncatedFrame(f"frame header is {HEADER_SIZE} bytes, got {len(data)}")
    magic, version, kind, length = HEADER.unpack(data)
    if magic != MAGIC:
        raise BadMagic(f"not a CryptoBench frame (magic {bytes(magic)!r}, expected {MAGIC!r})")
    if version != VERSION:
        raise UnsupportedVersion(f"frame version {version}; this CryptoBench speaks version {VERSION}")
    try:
        frame_type = FrameType(kind)
    except ValueError:
        raise UnknownFrameType(f"unknown frame type {kind}") from None
    if length > limit:
        raise FrameTooLarge(f"{frame_type.name} frame claims {length} bytes; the limit is {limit}")
    return Header(frame_type, length)


class Stream(Protocol):
    """What the reader needs from a socket (tests substitute in-memory streams)."""

    def recv_into(self, buffer: memoryview, nbytes: int = 0, /) -> int: ...

    def settimeout(self, value: float | None, /) -> None: ...


def frame_deadline(length: int, idle_timeout: float, min_rate: float) -> float:
    """Seconds allowed for a body: the idle timeout plus time at the slowest accepted rate."""
    return idle_timeout + length / min_rate


class FrameReader:
    """Reads frames from one connection into a buffer allocated once.

    Args:
        stream: a connected socket (or anything with recv_into/settimeout).
        capacity: the largest body this reader will ever accept; the buffer is
            allocated lazily at this size when the first large body arrives
            (`bytearray` is calloc'd, so untouched pages cost no memory).
        idle_timeout: seconds to wait for the first byte of a frame, and for each
            further chunk.
        min_rate: bytes per second below which a peer counts as stalled while
            sending a body.
    """

    def __init__(
        self,
        stream: Stream,
        capacity: int,
        *,
        idle_timeout: float = 30.0,
        min_rate: float = 1_000_000.0,
        read_ahead: bool = False,
    ) -> None:
        if capacity > HARD_MAX_FRAME:
            raise ValueError(f"frame capacity {capacity} exceeds the hard cap {HARD_MAX_FRAME}")
        self.stream = stream
        self.capacity = capacity
        self.idle_timeout = idle_timeout
        self.min_rate = min_rate
        self._header = bytearray(HEADER_SIZE)
        self._header_view = memoryview(self._header)
        self._small = bytearray(MAX_CONTROL_FRAME)
        self._small_view = memoryview(self._small)
        self._large: memoryview | None = None
        self.bytes_received = 0
        # Real sockets keep a standing timeout (set again only when it changes) and,
        # on Linux, stay blocking with the timeout in the kernel.
        self._kernel = _KERNEL_TIMEOUTS and isinstance(stream, socket.socket)
        self._armed: float | None = None
        #: Read-ahead (`read_ahead=True`): each receive asks for at least READ_AHEAD bytes,
        #: so a small frame's header and body arrive in one system call instead of two;
        #: bytes past the frame wait in `_ahead[_start:_end]` for the next read. Only for
        #: a reader that alone reads its connection from then on (a session after its
        #: authentication): bytes read ahead are invisible to any other reader of the socket.
        self.read_ahead = read_ahead
        self._ahead = memoryview(bytearray(HEADER_SIZE + MAX_CONTROL_FRAME if read_ahead else 0))
        self._start = self._end = 0
        self._poll: Any = None  # select.poll for `unsolicited`, made on first use

    @property
    def idle_timeout(self) -> float:
        return self._idle_timeout

    @idle_timeout.setter
    def idle_timeout(self, value: float) -> None:
        self._idle_timeout = value
        self._armed = None

    def _arm(self, seconds: float) -> None:
        """Make `seconds` the timeout of the next calls on the stream (no-op if it already is)."""
        if seconds == self._armed:
            return
        if self._kernel:
            sock: socket.socket = self.stream  # type: ignore[assignment]
            if sock.gettimeout() is not None:
                sock.settimeout(None)
            whole = int(seconds)
            micro = max(int((seconds - whole) * 1_000_000), 0 if whole else 1)  # 0 s 0 us means "forever"
            timeval = struct.pack("@ll", whole, micro)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, timeval)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, timeval)  # send_frame's deadline too
        else:
            self.stream.settimeout(seconds)
        self._armed = seconds

    def _failure(self, exc: Exception, got: int, total: int, at_boundary: bool) -> WireError:
        """The WireError for a receive that raised `exc` after `got` of `total` bytes."""
        if isinstance(exc, ConnectionResetError):
            return TruncatedFrame("connection reset by the peer")
        what = "nothing" if got == 0 and at_boundary else f"{got} of {total} bytes"
        return PeerTimeout(f"peer sent {what} within {self.idle_timeout:g} s")

    def _fill(self, view: memoryview, deadline: float, *, at_boundary: bool) -> None:
        got = 0
        total = len(view)
        while got < total:
            if got == 0:
                # The first call of a header or body: its deadline is at least the idle
                # timeout away, so the standing timeout applies (no syscall to re-set it).
                self._arm(self.idle_timeout)
            else:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise PeerTimeout(f"peer sent {got} of {total} bytes within the deadline")
                self._arm(min(remaining, self.idle_timeout))
            try:
                n = self.stream.recv_into(view[got:] if got else view, total - got)
            except (TimeoutError, BlockingIOError, ConnectionResetError) as exc:
                raise self._failure(exc, got, total, at_boundary) from None
            if n == 0:
                if got == 0 and at_boundary:
                    raise ConnectionClosed("peer closed the connection")
                raise TruncatedFrame(f"peer closed the connection after {got} of {total} bytes")
            got += n
        self.bytes_received += total

    def _buffer(self, need: int, deadline: float, *, at_boundary: bool) -> None:
        """Receive into the read-ahead buffer until `need` bytes past `_start` are there."""
        buffer = self._ahead
        if self._start + need > len(buffer):  # move what is left to the front
            left = self._end - self._start
            buffer[:left] = buffer[self._start : self._end]
            self._start, self._end = 0, left
        first = self._end - self._start
        while self._end - self._start < need:
            got = self._end - self._start
            if got == first:
                self._arm(self.idle_timeout)
            else:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise PeerTimeout(f"peer sent {got} of {need} bytes within the deadline")
                self._arm(min(remaining, self.idle_timeout))
            wanted = min(len(buffer) - self._end, max(need - got, READ_AHEAD))
            try:
                n = self.stream.recv_into(buffer[self._end :], wanted)
            except (TimeoutError, BlockingIOError, ConnectionResetError) as exc:
                raise self._failure(exc, got, need, at_boundary) from None
            if n == 0:
                if got == 0 and at_boundary:
                    raise ConnectionClosed("peer closed the connection")
                raise TruncatedFrame(f"peer closed the connection after {got} of {need} bytes")
            self._end += n

    def _read_ahead(self, limit: int) -> tuple[FrameType, memoryview]:
        """`read` with read-ahead: the same checks in the same order, fewer receives."""
        if self._start == self._end:
            # Nothing buffered, as after every reply: one receive, which usually brings the
            # whole frame (the standing idle timeout applies; no deadline to compute).
            if self._armed != self._idle_timeout:
                self._arm(self._idle_timeout)
            try:
                n = self.stream.recv_into(self._ahead, READ_AHEAD)
            except (TimeoutError, BlockingIOError, ConnectionResetError) as exc:
                raise self._failure(exc, 0, HEADER_SIZE, True) from None
            if n == 0:
                raise ConnectionClosed("peer closed the connection")
            self._start, self._end = 0, n
        if self._end - self._start < HEADER_SIZE:
            self._buffer(HEADER_SIZE, time.monotonic() + self.idle_timeout, at_boundary=True)
        buffer, start = self._ahead, self._start
        magic, version, kind, length = HEADER.unpack_from(buffer, start)
        start = self._start = start + HEADER_SIZE
        self.bytes_received += HEADER_SIZE
        frame_type = _FRAME_TYPES.get(kind)
        if magic != MAGIC or version != VERSION or frame_type is None or length > limit:
            # The header is checked before any body byte is awaited or any buffer sized.
            decode_header(buffer[start - HEADER_SIZE : start], limit)  # raises the precise error
            raise AssertionError("unreachable")
        if length <= MAX_CONTROL_FRAME:
            if self._end - start < length:
                self._buffer(
                    length,
                    time.monotonic() + frame_deadline(length, self.idle_timeout, self.min_rate),
                    at_boundary=False,
                )
                start = self._start
            view = buffer[start : start + length]
            self._start = start + length
        else:  # a large body: what came with the header, then the rest straight into place
            if self._large is None:
                self._large = memoryview(bytearray(self.capacity))
            view = self._large[:length]
            have = min(self._end - start, length)
            view[:have] = buffer[start : start + have]
            self._start = start + have
            if have < length:
                deadline = time.monotonic() + frame_deadline(length, self.idle_timeout, self.min_rate)
                self._fill(view[have:], deadline, at_boundary=False)
        if self._start == self._end:
            self._start = self._end = 0
        self.bytes_received += length
        if frame_type is _ERROR:
            raise PeerError("peer reported: " + escape_control(bytes(view).decode("utf-8", "replace"), PEER_TEXT_LIMIT))
        return frame_type, view

    def read(self, limit: int | None = None) -> tuple[FrameType, memoryview]:
        """The next frame's type and body (a view valid until the next read).

        `limit` narrows the capacity for this frame (e.g. 32 bytes before the peer
        is authenticated).
        """
        limit = self.capacity if limit is None else min(limit, self.capacity)
        if self.read_ahead:
            return self._read_ahead(limit)
        self._fill(self._header_view, time.monotonic() + self.idle_timeout, at_boundary=True)
        magic, version, kind, length = HEADER.unpack(self._header)
        frame_type = _FRAME_TYPES.get(kind)
        if magic != MAGIC or version != VERSION or frame_type is None or length > limit:
            decode_header(self._header, limit)  # raises the precise error
            raise AssertionError("unreachable")
        if length <= MAX_CONTROL_FRAME:
            view = self._small_view[:length]
        else:
            if self._large is None:
                self._large = memoryview(bytearray(self.capacity))
            view = self._large[:length]
        if length:
            deadline = time.monotonic() + frame_deadline(length, self.idle_timeout, self.min_rate)
            self._fill(view, deadline, at_boundary=False)
        if frame_type is _ERROR:
            # The peer chose this text: shown escaped (no terminal control) and shortened.
            raise PeerError("peer reported: " + escape_control(bytes(view).decode("utf-8", "replace"), PEER_TEXT_LIMIT))
        return frame_type, view

    def unsolicited(self) -> bytes:
        """The first bytes (up to a header) the peer has sent that no read has asked for yet:
        what this reader read ahead, else what waits in the socket (a zero-timeout poll, then
        a peek); b"" when nothing does. Called before a request of a strict request-and-answer
        protocol, anything here is an answer to a request not yet made. A closed or reset
        connection is not reported here: the next read says so."""
        if self._end > self._start:
            return bytes(self._ahead[self._start : min(self._end, self._start + HEADER_SIZE)])
        if not isinstance(self.stream, socket.socket):
            return b""
        sock: socket.socket = self.stream
        try:
            if hasattr(select, "poll"):
                if self._poll is None:
                    self._poll = select.poll()
                    self._poll.register(sock, select.POLLIN)
                if not self._poll.poll(0):
                    return b""
            elif not select.select([sock], [], [], 0)[0]:
                return b""
            # Readable: the peek cannot block (the socket is blocking with a kernel timeout, or
            # has a Python-level one, which polls first and finds it readable too).
            return sock.recv(HEADER_SIZE, socket.MSG_PEEK)
        except (OSError, ValueError):
            return b""

    def expect(self, *types: FrameType, limit: int | None = None) -> memoryview:
        """Read a frame that must be one of `types`."""
        kind, body = self.read(limit)
        if kind not in types:
            wanted = " or ".join(t.name for t in types)
            raise UnexpectedFrame(f"expected {wanted}, got {kind.name}", got=kind)
        return body


def describe_unsolicited(data: bytes) -> str:
    """What unsolicited bytes (`FrameReader.unsolicited`) are: "ACK frame", or "12 bytes"."""
    if len(data) >= 4 and data[:3] == MAGIC + bytes([VERSION]) and data[3] in _FRAME_TYPES:
        return f"{_FRAME_TYPES[data[3]].name} frame"
    return f"{len(data)} bytes"


def send_frame(
    sock: socket.socket,
    frame_type: FrameType,
    parts: Sequence[bytes | bytearray | memoryview] = (),
    *,
    before: bytes = b"",
) -> int:
    """Send one frame made of `parts`, with `before` (a whole frame of its own) in the same
    write; returns bytes on the wire.

    A frame of byte strings up to SMALL_FRAME bytes (every control frame, acknowledgement
    and small message) is joined and sent with one `send`. Larger ones are not joined:
    `sendmsg` may send part of what it is given, and the loop resumes where it stopped,
    slicing views so that nothing is copied; a few byte strings that fit the socket
    buffer take one `sendmsg` with no views made at all.
    """
    length = 0
    for part in parts:  # byte strings (a scheme's parts): lengths are byte counts
        if type(part) is not bytes and type(part) is not bytearray:
            length = -1
            break
        length += len(part)
    if 0 <= length <= SMALL_FRAME:
        # A small frame: joined (a copy of at most a few KiB) and sent with one send(),
        # cheaper than sendmsg's gathering of separate buffers.
        data = b"".join((before, _PREFIXES[frame_type], _LENGTH.pack(length), *parts))
        try:
            sent = sock.send(data)
        except (TimeoutError, BlockingIOError):
            raise PeerTimeout("peer stopped reading (send timed out)") from None
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise ConnectionClosed(f"peer closed the connection ({exc.strerror or exc})") from None
        total = len(data)
        if sent == total:
            return total
        pending = [memoryview(data)]
    elif 0 <= length and len(parts) < 64:
        header = before + encode_header(frame_type, length)
        sent = _sendmsg(sock, [header, *parts])
        total = len(header) + length
        if sent == total:
            return total
        pending = [memoryview(header), *(memoryview(p) for p in parts if len(p))]
    else:
        views = [memoryview(p).cast("B") for p in parts if len(p)]
        length = sum(len(v) for v in views)
        pending = [memoryview(before + encode_header(frame_type, length)), *views]
        total = len(before) + HEADER_SIZE + length
        sent = 0
    while True:
        while sent and pending:
            head = pending[0]
            if sent >= len(head):
                sent -= len(head)
                pending.pop(0)
            else:
                pending[0] = head[sent:]
                sent = 0
        if not pending:
            return total
        sent = _sendmsg(sock, pending[:64])  # IOV_MAX is 1024; a few parts in practice


def _sendmsg(sock: socket.socket, buffers: list[Any]) -> int:
    try:
        return sock.sendmsg(buffers)
    except (TimeoutError, BlockingIOError):  # BlockingIOError: SO_SNDTIMEO expired
        raise PeerTimeout("peer stopped reading (send timed out)") from None
    except (BrokenPipeError, ConnectionResetError) as exc:
        raise ConnectionClosed(f"peer closed the connection ({exc.strerror or exc})") from None


def send_error(sock: socket.socket, reason: str) -> None:
    """Best effort: tell the peer why the connection is closing."""
    try:
        send_frame(sock, FrameType.ERROR, [reason.encode("utf-8")[:MAX_CONTROL_FRAME]])
    except (WireError, OSError):
        pass


def tune(sock: socket.socket, nodelay: bool = True) -> None:
    """TCP_NODELAY: a small frame leaves at once instead of waiting for Nagle's timer
    (the difference between ~0.05 ms and ~40 ms per round trip on loopback when a
    message leaves in more than one write). `nodelay=False` turns Nagle back on, for
    jobs that measure what a default socket does (experiment E1's client).
    Other socket families (a Unix socketpair in tests) have no Nagle to turn off."""
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1 if nodelay else 0)


def frame_limit(message_size: int, overhead: int) -> int:
    """Largest body a job can send: its largest message plus the scheme's overhead."""
    return max(MAX_CONTROL_FRAME, message_size + overhead + 64)

"""Telling the job's own TLS connections from strangers' by their first flight alone.

A TLS ClientHello must be the first thing on its connection, so the job cannot present a
ticket before it (as its other connections do) without putting one more exchange into the
timed region. Instead its client names the job's ALPN protocol id (app.core.tls.control's
`alpn_for`, which only the holders of the job's token can make) inside its ClientHello.
The server's doorway (app.core.transport.doorway) reads each new connection's first record
with `ClientHelloCheck`: a handshake record of at most 2^14 bytes holding one whole
ClientHello that names the id. The bytes it read are handed to OpenSSL with the
connection, so nothing of the job's is lost; anything else is closed and named:

- not a TLS handshake record (garbage; an HTTP request, named as one);
- a record longer than TLS allows, or a ClientHello spanning more than one record (one of
  64 KB): the job's own fits one;
- a ClientHello offering more key shares than any client sends (`MAX_KEY_SHARES`), or one
  that does not parse;
- a ClientHello without the job's id (any other client: a browser, a scanner);
- a connection that closes or goes silent before its first record is whole.

Each costs the server its first record's bytes at most, side by side with the job's own
connections (the doorway's deadline and bound on waiting connections), never a wait.

A tls13 load server takes its generator's control connections on the same port as the
handshakes (app.core.load.tls_server): `ClientHelloOr` tells the two apart by the first
byte, a TLS handshake record's (22) or the admission a control connection opens with
(app.core.transport.doorway's magic, or a frame's: both start with "C"), and holds each to
its own check.
"""

from __future__ import annotations

import hmac

from app.core.schemes.tls_messages import (
    CLIENT_HELLO,
    HANDSHAKE_RECORD,
    MAX_RECORD_PLAINTEXT,
    RECORD_HEADER,
    HandshakeFormatError,
    read_client_hello,
)
from app.core.transport.doorway import ADMISSION_MAGIC, AdmissionCheck
from app.core.transport.wire import ConnectionClosed, PeerTimeout, TruncatedFrame, WireError

#: Key shares a ClientHello may offer: browsers send one or two (a hybrid and X25519); a
#: thousand is a flood aimed at the server's key-share parsing.
MAX_KEY_SHARES = 8
#: How a few well-known protocols start, to name a stray connection for what it is.
_PROTOCOLS = {
    b"GET ": "an HTTP request",
    b"POST": "an HTTP request",
    b"HEAD": "an HTTP request",
    b"PUT ": "an HTTP request",
    b"OPTI": "an HTTP request",
    b"PRI ": "an HTTP/2 preface",
    b"SSH-": "an SSH greeting",
}


class NotTheJobs(WireError):
    """A connection whose first flight is not the job's ClientHello; str() says what it was."""


def _describe(start: bytes) -> str:
    named = _PROTOCOLS.get(start[:4])
    if named is not None:
        line = start.split(b"\r\n", 1)[0][:40].decode("ascii", "replace")
        return f"it sent {named} ({line!r}), not a TLS ClientHello"
    return f"its first bytes ({start[:8].hex()}) are not a TLS handshake record"


class ClientHelloCheck:
    """A doorway's admission check for the TLS port: the first record, whole, must be a
    ClientHello naming `alpn`. `hello` is then what was read, for OpenSSL."""

    def __init__(self, alpn: bytes) -> None:
        self.alpn = alpn
        self.buffer = bytearray()
        self.record_length: int | None = None
        self.done = False
        #: It named the job's id: the job's own, never evicted for a stranger.
        self.vouched = False

    @property
    def hello(self) -> bytes:
        return bytes(self.buffer)

    def wanted(self) -> int:
        if self.record_length is None:
            return RECORD_HEADER - len(self.buffer)
        return RECORD_HEADER + self.record_length - len(self.buffer)

    def feed(self, data: bytes) -> bytes:
        self.buffer += data
        if self.record_length is None and len(self.buffer) >= RECORD_HEADER:
            self._header()
        if self.record_length is not None and not self.wanted():
            self._hello()
        return b""

    def _header(self) -> None:
        header = bytes(self.buffer[:RECORD_HEADER])
        if header[0] != HANDSHAKE_RECORD or header[1] != 3:
            raise NotTheJobs(_describe(header))
        length = int.from_bytes(header[3:5], "big")
        if length > MAX_RECORD_PLAINTEXT:
            raise NotTheJobs(f"it announced a record of {length:,} bytes; TLS allows {MAX_RECORD_PLAINTEXT:,}")
        if length < 4:
            raise NotTheJobs(f"it announced a handshake record of {length} bytes: no message fits")
        self.record_length = length

    def _hello(self) -> None:
        body = memoryview(self.buffer)[RECORD_HEADER:]
        kind, size = body[0], int.from_bytes(body[1:4], "big")
        if kind != CLIENT_HELLO:
            raise NotTheJobs(f"its first handshake message is of type {kind}, not a ClientHello")
        if size > len(body) - 4:
            raise NotTheJobs(
                f"its ClientHello of {size:,} bytes spans more than one record: the job's fits one "
                f"({MAX_RECORD_PLAINTEXT:,} bytes)"
            )
        try:
            hello = read_client_hello(body[4 : 4 + size])
        except HandshakeFormatError as exc:
            raise NotTheJobs(f"its ClientHello does not parse: {exc}") from None
        if len(hello.key_shares) > MAX_KEY_SHARES:
            raise NotTheJobs(f"its ClientHello offers {len(hello.key_shares):,} key shares (at most {MAX_KEY_SHARES})")
        if not any(hmac.compare_digest(name, self.alpn) for name in hello.alpn):
            raise NotTheJobs("its ClientHello does not name the job's ALPN id: another client")
        self.done = self.vouched = True

    def closed_error(self) -> WireError:
        if not self.buffer:
            return ConnectionClosed("it closed the connection without a word")
        whole = RECORD_HEADER + (self.record_length or 0)
        return TruncatedFrame(f"it closed the connection after {len(self.buffer)} of the {whole} bytes of its record")

    def timeout_error(self, timeout: float) -> PeerTimeout:
        return PeerTimeout(f"it sent {len(self.buffer)} bytes of its first record within {timeout:g} s and stopped")


#: The first byte of a control connection: app.core.transport.doorway's ADMISSION_MAGIC and
#: app.core.transport.wire's frame MAGIC both start with it; a TLS record starts with 22.
CONTROL_START = ADMISSION_MAGIC[:1]


class ClientHelloOr:
    """A port that takes the job's TLS connections and its control connections: the first
    byte chooses the check (`CONTROL_START`: `other`, the control connection's ticket and
    token proof; anything else: `ClientHelloCheck`), and that check decides."""

    def __init__(self, alpn: bytes, other: AdmissionCheck) -> None:
        self.hello = ClientHelloCheck(alpn)
        self.other = other
        #: The check the first byte chose (None until a byte came).
        self.chosen: ClientHelloCheck | AdmissionCheck | None = None

    @property
    def is_tls(self) -> bool:
        return self.chosen is self.hello

    @property
    def done(self) -> bool:
        return self.chosen is not None and self.chosen.done

    @property
    def vouched(self) -> bool:
        return self.chosen is not None and bool(getattr(self.chosen, "vouched", False))

    def wanted(self) -> int:
        if self.chosen is None:  # no more than either check takes first
            return min(RECORD_HEADER, self.other.wanted())
        return self.chosen.wanted()

    def feed(self, data: bytes) -> bytes:
        if self.chosen is None and data:
            # "C": CryptoBench's admission magic or frame magic. Anything else is held to the
            # ClientHello check, which names what it is (an HTTP request, an SSH greeting).
            self.chosen = self.other if data[:1] == CONTROL_START else self.hello
        return self.chosen.feed(data) if self.chosen is not None else b""

    def closed_error(self) -> WireError:
        return (self.chosen or self.other).closed_error()

    def timeout_error(self, timeout: float) -> PeerTimeout:
        return (self.chosen or self.other).timeout_error(timeout)

"""One request of a tls13 load job from the client's side: a new TCP connection, a full TLS
handshake, the request and its response, the close.

`TlsRequest` holds the connection's state and never blocks: the generator's loop
(app.core.load.tls_generator) tells it when its socket connected, hands it what arrived,
and sends what it owes. Its `ClientSide` (app.core.tls.sides) verifies the server's chain
and host name with OpenSSL and bounds what it takes; what the handshake negotiated is read
from its messages once it is done (`finished`), for the generator to check and count; the
response is compared with what the server must send. The server closes first: the request
waits for its end of the stream before its socket is closed, so no TIME_WAIT is left here
(thousands of connections a second would use up the ports), and sends no close_notify.

`request_once` is the same exchange on a blocking socket, one at a time: a step's setup
(a resumed job's first tickets, the tamper checks, the capacity estimate).
"""

from __future__ import annotations

import enum
import socket
import time
from dataclasses import dataclass

from OpenSSL import SSL

from app.core.tls import stack
from app.core.tls.certificates import SERVER_NAME
from app.core.tls.client import handshake_over
from app.core.tls.data import RECORD_DATA, DataMismatch
from app.core.tls.handshake import HandshakeFailed, drain
from app.core.tls.sides import ClientSide, Finished
from app.core.transport.connect import connect

#: Bytes one receive takes.
RECEIVE = 64 * 1024


class Stage(enum.Enum):
    CONNECTING = "connecting"
    HANDSHAKE = "handshake"
    RESPONSE = "response"
    CLOSING = "closing"


@dataclass(frozen=True)
class Exchange:
    """What one request carries after its handshake, and what must come back."""

    request: bytes
    response: bytes


class TlsRequest:
    """One request's connection, driven from outside (see the module's docstring)."""

    __slots__ = ("ident", "sock", "side", "stage", "out", "finished", "got", "exchange", "counted", "mask")

    def __init__(self, ident: int, sock: socket.socket, exchange: Exchange) -> None:
        self.ident, self.sock, self.exchange = ident, sock, exchange
        self.side: ClientSide | None = None
        self.stage = Stage.CONNECTING
        self.out = bytearray()
        #: What the handshake negotiated and its flights, once it is done.
        self.finished: Finished | None = None
        #: Bytes of the response decrypted so far, compared as they come.
        self.got = 0
        #: Whether the generator has counted the handshake (it is done once).
        self.counted = False
        #: The events its socket is watched for (the generator's epoll mask).
        self.mask = 0

    def connected(self, context: SSL.Context, alpn: bytes, session: SSL.Session | None) -> None:
        """The TCP connection is up: the ClientHello is owed (and with it the client's part
        of the key exchange, made now: a client's handshake is live work)."""
        self.side = ClientSide(context, SERVER_NAME, alpn, session)
        self.out += self.side.hello()
        self.stage = Stage.HANDSHAKE

    def feed(self, data: bytes) -> bool:
        """What the server sent; True once the whole response has arrived and is what the
        server must send (HandshakeFailed, SSL.Error, DataMismatch otherwise)."""
        side = self.side
        assert side is not None, "nothing arrives before the ClientHello is sent"
        if self.stage is Stage.HANDSHAKE:
            flight = side.receive(data)
            if not side.done:
                self.out += flight
                return False
            self.finished = side.finish()
            side.connection.sendall(self.exchange.request)
            self.out += flight + drain(side.connection)  # the Finished and the request, one write
            self.stage = Stage.RESPONSE
        elif self.stage is Stage.RESPONSE:
            side.connection.bio_write(data)
        else:
            return False
        return self.read_response()

    def read_response(self) -> bool:
        """The response as far as it has come (the TLS connection's records already read in)."""
        side, expected = self.side, self.exchange.response
        assert side is not None
        while self.got < len(expected):
            try:
                chunk = side.connection.recv(min(RECORD_DATA, len(expected) - self.got))
            except SSL.WantReadError:
                return False
            except SSL.ZeroReturnError:
                raise DataMismatch(
                    f"the server closed the connection after {self.got:,} of {len(expected):,} bytes of its response"
                ) from None
            if chunk != expected[self.got : self.got + len(chunk)]:
                raise DataMismatch("the response arrived other than the server must send it")
            self.got += len(chunk)
        return True

    def close(self) -> SSL.Session | None:
        """The response is in: the session (its ticket, for a resumed job's next request); the socket
        stays open until the server closes its end. The connection is shut down (OpenSSL
        drops the session of one freed without it), but its close_notify is not sent: the
        server, which closes first, has gone, and would answer it with a reset."""
        side = self.side
        assert side is not None
        session = side.connection.get_session()
        side.close()
        self.stage = Stage.CLOSING
        return session

    def send(self) -> bool:
        """Hand what is owed to the kernel; True when nothing is left owed."""
        if self.out:
            try:
                sent = self.sock.send(self.out)
            except (BlockingIOError, InterruptedError):
                return False
            del self.out[:sent]
        return not self.out

    def where(self) -> str:
        """Where the request stands, for a failure's words."""
        return self.stage.value


@dataclass
class Once:
    """One blocking request's outcome: its handshake, its time and the session it leaves; a
    tampered one's refusal (what the server did instead of answering), None if it answered."""

    finished: Finished
    seconds: float
    session: SSL.Session | None
    refused: str | None = None


def request_once(
    host: str,
    port: int,
    timeout: float,
    congestion_control: str | None,
    context: SSL.Context,
    alpn: bytes,
    session: SSL.Session | None,
    exchange: Exchange,
    tamper: int | None = None,
) -> Once:
    """One request on a blocking socket, from connect to the server's close (HandshakeFailed,
    SSL.Error, DataMismatch or OSError when it fails). With `tamper` (an offset into the
    request's records), that bit goes flipped and the server must refuse the request: how
    it did is `refused`, and only a failure before the tampered records left is raised."""
    start = time.perf_counter()
    sock = connect(host, port, timeout, True, congestion_control)
    side: ClientSide | None = None
    try:
        sock.settimeout(timeout)
        side = ClientSide(context, SERVER_NAME, alpn, session)
        try:
            sock.sendall(side.hello())
            flight = handshake_over(sock, side)
            finished = side.finish()
            side.connection.sendall(exchange.request)
            records = bytearray(drain(side.connection))
            if tamper is not None:
                records[tamper] ^= 0x01
            sock.sendall(flight + bytes(records))
        except TimeoutError:
            raise HandshakeFailed(f"the server sent nothing for {timeout:g} s") from None
        request = TlsRequest(0, sock, exchange)
        request.side, request.stage, request.finished = side, Stage.RESPONSE, finished
        try:
            while not request.read_response():
                data = sock.recv(RECEIVE)
                if not data:
                    raise DataMismatch("the server closed the connection before its response")
                side.connection.bio_write(data)
        except (SSL.Error, DataMismatch, OSError) as exc:
            if tamper is None:
                raise
            return Once(finished, time.perf_counter() - start, None, refused=f"{type(exc).__name__}: {exc}")
        seconds = time.perf_counter() - start
        kept = request.close()
        try:
            while sock.recv(RECEIVE):  # the server closes first
                pass
        except OSError:
            pass  # it closed before our close_notify reached it: a reset, after the response
        return Once(finished, seconds, kept)
    finally:
        if side is not None:
            stack.forget(side.connection)  # a transcript left by a failure is let go too
        sock.close()

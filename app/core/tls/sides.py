"""Each end of one TLS connection without its socket: bytes in, bytes out.

`ClientSide` and `ServerSide` hold an `SSL.Connection` over memory BIOs and are fed what
arrived from the network; each answers with the bytes to send, counts every byte each
way per flight (`FlightLog`), bounds what it accepts, and says when its handshake is done.
A side is watched (every handshake message kept and read) or not (what it negotiated read
after the handshake from the wire and OpenSSL: app.core.tls.handshake), as its caller says.
Who moves the bytes is the caller's: the job's client and server (app.core.tls.client,
app.core.tls.server) on blocking sockets, one connection at a time; a load generator or a
load server could drive many from one event loop, as they hold no socket and never block.

Bounds: a server's handshake flights may take at most `MAX_HANDSHAKE_BYTES` (a 100 KB
certificate chain is refused, named, before OpenSSL parses it whole), and so may a
client's; application data at most what the job's message size makes.
"""

from __future__ import annotations

from dataclasses import dataclass

from OpenSSL import SSL

from app.core.schemes.tls_messages import Negotiated
from app.core.tls import stack
from app.core.tls.handshake import (
    FlightLog,
    HandshakeFailed,
    describe_error,
    drain,
    negotiated,
    negotiated_unwatched,
    step,
)

#: The most handshake bytes either end takes from the other: the largest chain a job makes
#: (ML-DSA-87 with an intermediate, and the client's too when mutual) needs under 40 KB.
MAX_HANDSHAKE_BYTES = 64 * 1024


class TooLarge(HandshakeFailed):
    """The peer sent more than a handshake of this job can hold."""


@dataclass
class Finished:
    """What one side's handshake came to: what its messages negotiated and its flights."""

    negotiated: Negotiated
    log: FlightLog


class ClientSide:
    """The client's end of one connection."""

    def __init__(
        self,
        context: SSL.Context,
        host: str,
        alpn: bytes | None,
        session: SSL.Session | None,
        watched: bool = True,
    ) -> None:
        self.connection = stack.client_connection(context, host, alpn, watched)
        if session is not None:
            self.connection.set_session(session)
        self.transcript = stack.watch(self.connection) if watched else None
        self.log = FlightLog(
            None if self.transcript is None else {"client": (self.transcript, True), "server": (self.transcript, False)}
        )
        self.received = 0
        self.done = False

    def hello(self) -> bytes:
        """The ClientHello's flight: what the connection sends first."""
        try:
            step(self.connection)
        except SSL.Error as exc:
            raise HandshakeFailed(f"client: {describe_error(exc)}") from None
        out = drain(self.connection)
        self.log.add("client", out)
        return out

    def receive(self, data: bytes) -> bytes:
        """The server's bytes in; the client's answer out (its Finished once done)."""
        self.received += len(data)
        if self.received > MAX_HANDSHAKE_BYTES:
            raise TooLarge(
                f"the server's handshake passed {MAX_HANDSHAKE_BYTES:,} bytes ({self.received:,}): no chain this "
                "job makes is that large"
            )
        self.connection.bio_write(data)
        try:
            self.done = step(self.connection)
        except SSL.Error as exc:
            raise HandshakeFailed(f"client: {describe_error(exc)}") from None
        self.log.add("server", data)
        out = drain(self.connection)
        self.log.add("client", out)
        return out

    def finish(self) -> Finished:
        """What the handshake negotiated (after `done`); the connection's transcript let go."""
        stack.forget(self.connection)
        if self.transcript is None:
            return Finished(negotiated_unwatched(self.log, self.connection), self.log)
        if self.transcript.overflowed:
            raise HandshakeFailed("the server's handshake messages passed what a transcript keeps")
        return Finished(negotiated(self.transcript, self.transcript), self.log)

    def close(self) -> bytes:
        """close_notify (OpenSSL drops the session of a connection freed without it)."""
        stack.forget(self.connection)
        try:
            self.connection.shutdown()
        except SSL.Error:
            return b""
        return drain(self.connection)


class ServerSide:
    """The server's end of one connection, from the ClientHello its admission read."""

    def __init__(self, context: SSL.Context, watched: bool = True) -> None:
        self.connection = stack.server_connection(context, watched)
        self.transcript = stack.watch(self.connection) if watched else None
        self.log = FlightLog(
            None if self.transcript is None else {"client": (self.transcript, False), "server": (self.transcript, True)}
        )
        self.received = 0
        self.done = False
        #: What OpenSSL wrote when it refused the handshake (its alert), for the client to see.
        self.alert = b""

    def receive(self, data: bytes) -> bytes:
        """The client's bytes in; the server's flight out. Once done, what it writes is its
        NewSessionTickets, counted apart (`log.after`)."""
        self.received += len(data)
        if self.received > MAX_HANDSHAKE_BYTES:
            raise TooLarge(f"the client's handshake passed {MAX_HANDSHAKE_BYTES:,} bytes ({self.received:,})")
        self.connection.bio_write(data)
        self.log.add("client", data)
        try:
            self.done = step(self.connection)
        except SSL.Error as exc:
            self.alert = drain(self.connection)
            raise HandshakeFailed(f"server: {describe_error(exc)}") from None
        out = drain(self.connection)
        if self.done:
            self.log.after += len(out)
        else:
            self.log.add("server", out)
        return out

    def finish(self) -> Negotiated:
        """What the client's messages and the server's said (the client's certificate, when mutual)."""
        stack.forget(self.connection)
        if self.transcript is None:  # unwatched: the client's chain as OpenSSL received and verified it
            chain = stack.peer_chain(self.connection, server=True)
            return Negotiated(client_chain=tuple(len(der) for der in chain), signatures_read=False)
        if self.transcript.overflowed:
            raise HandshakeFailed("the client's handshake messages passed what a transcript keeps")
        # The server read the client's messages and wrote its own: its transcript, seen from the client.
        return negotiated_as_client(self.transcript)


def negotiated_as_client(transcript: stack.Transcript) -> Negotiated:
    """A server's transcript read as its client would: the server's messages are what it
    wrote, the client's what it read."""
    mirrored = stack.Transcript([(not written, kind, data) for written, kind, data in transcript.messages])
    return negotiated(mirrored, mirrored)

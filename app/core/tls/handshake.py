"""One TLS 1.3 handshake driven over memory BIOs, flight by flight, for every tls13 body.

OpenSSL never touches a socket here: each end is an `SSL.Connection` over memory BIOs, and
its caller moves the bytes (between two ends in one process in operations mode; over TCP
in the client and the server). So every byte each end writes is seen and counted as it
leaves (`drain`), each flight is a run of one end's writes before the other answers, and
the messages in it are named from the end's transcript (app.core.tls.stack). What the
handshake negotiated is read from those messages (`negotiated`), never assumed.

A timed handshake runs unwatched (no transcript: OpenSSL's message callback would call
into Python some 50 times inside the timed calls): what it negotiated is then read after
the clock stops from the server's ServerHellos as they crossed the wire and the chain the
client received (`negotiated_unwatched`), and its flights are counted but not named.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from OpenSSL import SSL

from app.core.records.tls_record import Flight
from app.core.schemes.tls_messages import HANDSHAKE_TYPES, Negotiated, negotiated_from, negotiated_on_wire
from app.core.tls import stack
from app.core.tls.stack import Transcript

#: A handshake takes two flights each way, three with a HelloRetryRequest; past this many
#: turns without both ends done it is not a handshake that will finish.
MAX_TURNS = 12
#: Bytes one `bio_read` takes from an end's outgoing BIO.
CHUNK = 64 * 1024


class HandshakeFailed(Exception):
    """A handshake that did not complete or did not verify; str() says where and why."""


def drain(connection: SSL.Connection) -> bytes:
    """Everything `connection` has written and nobody has sent yet."""
    chunks = []
    while True:
        try:
            chunks.append(connection.bio_read(CHUNK))
        except SSL.WantReadError:
            return b"".join(chunks)


def step(connection: SSL.Connection) -> bool:
    """One `do_handshake` call: True when this end's handshake is done."""
    try:
        connection.do_handshake()
    except SSL.WantReadError:
        return False
    return True


def describe_error(exc: SSL.Error) -> str:
    """OpenSSL's error queue as one line (its reasons, not its internal codes)."""
    reasons = []
    for entry in exc.args[0] if exc.args and isinstance(exc.args[0], list) else []:
        if isinstance(entry, tuple) and entry:
            reasons.append(str(entry[-1]))
    return "; ".join(reasons) or str(exc) or type(exc).__name__


class FlightLog:
    """The flights of one connection as this process saw them leave and arrive: a new flight
    starts whenever the other end speaks. Each flight's messages are named from a
    transcript: `sources` gives, per sender, the transcript that holds its messages and
    whether that transcript's end wrote them (the two ends' own transcripts in operations
    mode; one end's, written and read, over TCP); None for an unwatched handshake, whose
    flights are counted and kept (`sent`) but not named."""

    def __init__(self, sources: dict[str, tuple[Transcript, bool]] | None) -> None:
        self.sources = sources
        self.flights: list[Flight] = []
        #: Bytes the server wrote once its handshake was done: its NewSessionTickets.
        self.after = 0
        self._seen = {"client": 0, "server": 0}
        self._sent: dict[str, list[bytes]] = {"client": [], "server": []}

    def add(self, sender: str, data: bytes) -> None:
        """`data` from `sender` ("client" or "server"), with its messages not yet named."""
        if not data:
            return
        size = len(data)
        self._sent[sender].append(data)
        names: tuple[str, ...] = ()
        if self.sources is not None:
            transcript, written = self.sources[sender]
            mine = [kind for w, kind, _ in transcript.messages if w is written]
            names = tuple(HANDSHAKE_TYPES.get(kind, f"type {kind}") for kind in mine[self._seen[sender] :])
            self._seen[sender] = len(mine)
        if self.flights and self.flights[-1].sender == sender:
            last = self.flights[-1]
            self.flights[-1] = Flight(sender, last.bytes + size, last.messages + names)
        else:
            self.flights.append(Flight(sender, size, names))

    def sent(self, sender: str) -> bytes:
        """Every handshake byte `sender` sent, in order (its records as they crossed the wire)."""
        return b"".join(self._sent[sender])

    def round_trips(self) -> int:
        """The client's waits for the server within the handshake: each client flight the
        server answered (1 for a full handshake, 2 after a HelloRetryRequest)."""
        return sum(
            1
            for before, after in zip(self.flights, self.flights[1:])
            if before.sender == "client" and after.sender == "server"
        )


def negotiated(client: Transcript, server: Transcript) -> Negotiated:
    """What a handshake negotiated: from what the client read (the server's messages) and
    what it wrote (its own certificate, when mutual). Refused when a transcript overflowed."""
    for name, transcript in (("client", client), ("server", server)):
        if transcript.overflowed:
            raise HandshakeFailed(f"the {name}'s handshake messages passed what a transcript keeps")
    return negotiated_from(client.bodies(written=False), client.bodies(written=True))


def negotiated_unwatched(log: FlightLog, client: SSL.Connection) -> Negotiated:
    """What an unwatched handshake negotiated, read after it: the server's ServerHellos as
    they crossed the wire (HelloRetryRequests counted), the chain its client received."""
    return negotiated_on_wire(log.sent("server"), stack.peer_chain(client))


@dataclass
class PairTimes:
    """Each end's time inside its handshake calls (ns), the two ends in one process."""

    client_ns: int = 0
    server_ns: int = 0


def pair_handshake(
    client: SSL.Connection, server: SSL.Connection, log: FlightLog, clock: Callable[[], int] = time.perf_counter_ns
) -> PairTimes:
    """Run a handshake between two ends in one process: each end's `do_handshake` calls are
    timed, the bytes between them moved (and counted) outside the timed calls. Ends when
    the client is done and the server has read its Finished."""
    times = PairTimes()
    client_done = server_done = False
    for _ in range(MAX_TURNS):
        start = clock()
        try:
            client_done = step(client) or client_done
        except SSL.Error as exc:
            raise HandshakeFailed(f"client: {describe_error(exc)}") from None
        times.client_ns += clock() - start
        out = drain(client)
        log.add("client", out)
        if out:
            server.bio_write(out)
        if client_done and server_done:
            return times
        start = clock()
        try:
            server_done = step(server) or server_done
        except SSL.Error as exc:
            raise HandshakeFailed(f"server: {describe_error(exc)}") from None
        times.server_ns += clock() - start
        out = drain(server)
        if server_done:  # written by the call that read the client's Finished: its tickets
            log.after += len(out)
        else:
            log.add("server", out)
        if out:
            client.bio_write(out)
        if client_done and server_done:
            return times
    raise HandshakeFailed(f"the handshake did not finish within {MAX_TURNS} turns")

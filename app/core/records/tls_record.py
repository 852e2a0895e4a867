"""What a tls13 job's handshakes negotiated and put on the wire: `JobResult.tls`.

Per message size: the version, group, cipher suite and signature schemes the handshakes
negotiated, as their own messages said (app.core.schemes.tls_messages), each checked
against what the job asked before any figure was kept; the certificates the server sent
(each one's DER size and signature algorithm, the end-entity's first) and the client's
when it authenticated too; whether the handshakes resumed a session; the
HelloRetryRequests seen (a job fails on one, so a kept record says 0); how many handshakes
the byte figures cover, the fewest and most bytes each way per handshake, one handshake's
flights (who sent them, their bytes, the messages in them) and round trips; and the
NewSessionTicket bytes the server sent after each handshake. The same record holds a load
job's handshakes (many per step): the counts and ranges are over all of them, and `steps`
says per load step how many of its measured requests completed a handshake, resumed one
or failed (`TlsStep`). Absent from the JSON of every other job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Who sends a flight.
SENDERS = ("client", "server")


@dataclass(frozen=True)
class Flight:
    """One run of one end's handshake bytes before the other end answered."""

    sender: str
    bytes: int
    #: The handshake messages in it, by name (ChangeCipherSpec and alerts are not messages).
    messages: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"sender": self.sender, "bytes": self.bytes, "messages": list(self.messages)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Flight:
        return cls(str(data["sender"]), int(data["bytes"]), tuple(str(m) for m in data.get("messages", ())))


@dataclass(frozen=True)
class ByteRange:
    """The fewest and most bytes of one direction over the handshakes (an ECDSA signature's
    DER varies by a byte or two; ML-DSA's and RSA's do not)."""

    low: int
    high: int

    def to_dict(self) -> list[int]:
        return [self.low, self.high]

    @classmethod
    def of(cls, values: Sequence[int]) -> ByteRange:
        return cls(min(values), max(values))

    @classmethod
    def from_dict(cls, data: Sequence[Any]) -> ByteRange:
        return cls(int(data[0]), int(data[1]))


@dataclass(frozen=True)
class TlsStep:
    """One load step's handshakes (a tls13 load job), over the requests of its measured
    window: how many completed a handshake (verified, and what the job asked), how many of
    those resumed a session, how many failed before their response (refused, reset, cut
    short), and the HelloRetryRequests seen (a job fails on one, so a kept step says 0)."""

    handshakes: int = 0
    resumed: int = 0
    failed: int = 0
    retries: int = 0

    def plus(self, other: TlsStep) -> TlsStep:
        """Two generators' counts of one step, added."""
        return TlsStep(
            self.handshakes + other.handshakes,
            self.resumed + other.resumed,
            self.failed + other.failed,
            self.retries + other.retries,
        )

    def to_dict(self) -> dict[str, int]:
        return {"handshakes": self.handshakes, "resumed": self.resumed, "failed": self.failed, "retries": self.retries}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TlsStep:
        return cls(int(data["handshakes"]), int(data["resumed"]), int(data["failed"]), int(data.get("retries", 0)))


@dataclass(frozen=True)
class TlsRecord:
    """A size's handshakes: what they negotiated and what they cost on the wire."""

    version: str
    group: str
    cipher: str
    #: The server's CertificateVerify scheme (None: resumed handshakes send none).
    signature: str | None
    #: The client's, when it authenticated too (mutual); None otherwise.
    client_signature: str | None
    resumed: bool
    #: HelloRetryRequests over the size's handshakes.
    retries: int
    #: Handshakes the byte figures cover.
    handshakes: int
    #: Handshake bytes per handshake, client to server and server to client: every record
    #: byte of the handshake (headers, ChangeCipherSpec included), not the application data.
    client_bytes: ByteRange
    server_bytes: ByteRange
    #: One handshake's flights, in order (the size's last).
    flights: tuple[Flight, ...]
    #: The client's waits for the server within a handshake (1: a full TLS 1.3 handshake).
    round_trips: int
    #: Each certificate the server sent: its DER size, and the algorithm it is signed with.
    chain_bytes: tuple[int, ...] = ()
    chain_signatures: tuple[str, ...] = ()
    client_chain_bytes: tuple[int, ...] = ()
    #: NewSessionTicket bytes the server sent after one handshake (as deployed servers do).
    ticket_bytes: int = 0
    #: The linked OpenSSL that ran the handshakes ("OpenSSL 4.0.3 ...").
    library: str = ""
    #: A load job's: each step's handshakes, in the order of its `Load.steps` (empty for
    #: every other job; absent from the JSON then).
    steps: tuple[TlsStep, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "version": self.version,
            "group": self.group,
            "cipher": self.cipher,
            "signature": self.signature,
            "client_signature": self.client_signature,
            "resumed": self.resumed,
            "retries": self.retries,
            "handshakes": self.handshakes,
            "client_bytes": self.client_bytes.to_dict(),
            "server_bytes": self.server_bytes.to_dict(),
            "flights": [flight.to_dict() for flight in self.flights],
            "round_trips": self.round_trips,
            "chain_bytes": list(self.chain_bytes),
            "chain_signatures": list(self.chain_signatures),
            "client_chain_bytes": list(self.client_chain_bytes),
            "ticket_bytes": self.ticket_bytes,
            "library": self.library,
        }
        if self.steps:
            data["steps"] = [step.to_dict() for step in self.steps]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TlsRecord:
        return cls(
            version=str(data["version"]),
            group=str(data["group"]),
            cipher=str(data["cipher"]),
            signature=None if data.get("signature") is None else str(data["signature"]),
            client_signature=None if data.get("client_signature") is None else str(data["client_signature"]),
            resumed=bool(data["resumed"]),
            retries=int(data.get("retries", 0)),
            handshakes=int(data["handshakes"]),
            client_bytes=ByteRange.from_dict(data["client_bytes"]),
            server_bytes=ByteRange.from_dict(data["server_bytes"]),
            flights=tuple(Flight.from_dict(flight) for flight in data.get("flights", ())),
            round_trips=int(data["round_trips"]),
            chain_bytes=tuple(int(size) for size in data.get("chain_bytes", ())),
            chain_signatures=tuple(str(name) for name in data.get("chain_signatures", ())),
            client_chain_bytes=tuple(int(size) for size in data.get("client_chain_bytes", ())),
            ticket_bytes=int(data.get("ticket_bytes", 0)),
            library=str(data.get("library", "")),
            steps=tuple(TlsStep.from_dict(step) for step in data.get("steps") or ()),
        )

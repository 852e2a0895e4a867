"""A size's handshakes added up into its `TlsRecord`, each checked as it is added.

Every body of the tls13 job (operations, the client over TCP; a load generator later) hands
each finished handshake here: what its messages say it negotiated (refused at once, naming
both, when it is not what the job asked), its flights and its bytes each way. `record()`
then gives the size's `TlsRecord`: the negotiated names, the byte range per handshake over
all of them, the last one's round trips; the signature schemes, chains and named flights of
the last watched handshake (a timed one is unwatched: its encrypted messages are not read,
app.core.tls.handshake), else of the last one.
"""

from __future__ import annotations

from cryptography import x509

from app.core.records.tls_record import ByteRange, Flight, TlsRecord
from app.core.schemes.tls13 import (
    CIPHER_NAMES,
    GROUP_NAMES,
    SIGNATURE_NAMES,
    VERSION_NAMES,
    Tls13Scheme,
    name_of,
)
from app.core.schemes.tls_messages import Negotiated

#: Certificate signature algorithms by OID (RFC 4055, RFC 5758, RFC 8410, FIPS 204's OIDs in
#: NIST's registry): what each certificate sent is signed with.
CERTIFICATE_SIGNATURES = {
    "1.2.840.113549.1.1.11": "sha256WithRSAEncryption",
    "1.2.840.113549.1.1.12": "sha384WithRSAEncryption",
    "1.2.840.113549.1.1.10": "RSASSA-PSS",
    "1.2.840.10045.4.3.2": "ecdsa-with-SHA256",
    "1.2.840.10045.4.3.3": "ecdsa-with-SHA384",
    "1.3.101.112": "Ed25519",
    "1.3.101.113": "Ed448",
    "2.16.840.1.101.3.4.3.17": "ML-DSA-44",
    "2.16.840.1.101.3.4.3.18": "ML-DSA-65",
    "2.16.840.1.101.3.4.3.19": "ML-DSA-87",
}


class NegotiationMismatch(Exception):
    """A handshake negotiated something other than what the job asked; str() names both."""


def signature_algorithm(der: bytes) -> str:
    """The algorithm a certificate is signed with, by name (its OID where unnamed)."""
    try:
        oid = x509.load_der_x509_certificate(der).signature_algorithm_oid.dotted_string
    except ValueError:
        return "unreadable certificate"
    return CERTIFICATE_SIGNATURES.get(oid, oid)


class HandshakeTally:
    """The handshakes of one size, checked and added up."""

    def __init__(self, scheme: Tls13Scheme, library: str) -> None:
        self.scheme, self.library = scheme, library
        self.client_bytes: list[int] = []
        self.server_bytes: list[int] = []
        self.last: Negotiated | None = None
        #: The last handshake whose messages were all read, and its flights (named).
        self.watched: tuple[Negotiated, tuple[Flight, ...]] | None = None
        self.flights: tuple[Flight, ...] = ()
        self.round_trips = 0
        self.ticket_bytes = 0
        self.retries = 0

    def check(self, negotiated: Negotiated, checked_as: Tls13Scheme | None = None) -> None:
        """NegotiationMismatch unless `negotiated` is what the job asked (or `checked_as`: a
        resumed load job's first visits are full handshakes)."""
        problem = (checked_as or self.scheme).negotiation_problem(negotiated)
        if problem is not None:
            raise NegotiationMismatch(f"the handshake negotiated {problem}")

    def add(
        self,
        negotiated: Negotiated,
        flights: list[Flight],
        round_trips: int,
        ticket_bytes: int,
        checked_as: Tls13Scheme | None = None,
    ) -> None:
        """One finished handshake, counted, then checked: NegotiationMismatch when it is not
        what the job asked (the record then says what it was, HelloRetryRequests counted)."""
        self.retries += negotiated.retries
        self.client_bytes.append(sum(f.bytes for f in flights if f.sender == "client"))
        self.server_bytes.append(sum(f.bytes for f in flights if f.sender == "server"))
        self.last, self.flights, self.round_trips, self.ticket_bytes = (
            negotiated,
            tuple(flights),
            round_trips,
            ticket_bytes,
        )
        if negotiated.signatures_read:
            self.watched = (negotiated, self.flights)
        self.check(negotiated, checked_as)

    def record(self) -> TlsRecord | None:
        """The size's record (None: no handshake was added)."""
        last = self.last
        if last is None:
            return None
        read, flights = self.watched if self.watched is not None else (last, self.flights)
        return TlsRecord(
            version=name_of(VERSION_NAMES, last.version),
            group=name_of(GROUP_NAMES, last.group),
            cipher=name_of(CIPHER_NAMES, last.cipher),
            signature=None if read.signature is None else name_of(SIGNATURE_NAMES, read.signature),
            client_signature=(
                None if read.client_signature is None else name_of(SIGNATURE_NAMES, read.client_signature)
            ),
            resumed=last.resumed,
            retries=self.retries,
            handshakes=len(self.client_bytes),
            client_bytes=ByteRange.of(self.client_bytes),
            server_bytes=ByteRange.of(self.server_bytes),
            flights=flights,
            round_trips=self.round_trips,
            chain_bytes=read.chain,
            chain_signatures=tuple(signature_algorithm(der) for der in read.chain_der),
            client_chain_bytes=read.client_chain,
            ticket_bytes=self.ticket_bytes,
            library=self.library,
        )

"""What a TLS 1.3 handshake's messages say, read from their bytes (RFC 8446 §4).

The tls13 job never takes OpenSSL's word alone for what was negotiated: it reads the
handshake messages themselves, as OpenSSL's message callback hands them over in the
clear (app.core.tls.stack), and as a stranger's ClientHello arrives on the job's port
(app.core.tls.admission). From them: the ServerHello's cipher suite, key-share group and
version, whether it was a HelloRetryRequest; the Certificate message's chain (each
certificate's DER, as sent); the CertificateVerify's signature scheme; a ClientHello's
ALPN protocols, key shares and groups. Everything is codepoints here; their names are
app.core.schemes.tls13's vocabulary.

Every length is checked against what holds it before it is used, so a hostile message
costs at most its own bytes and ends in one `HandshakeFormatError` naming the field.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from app.core.schemes.base import PayloadFormatError

#: Handshake message types (RFC 8446 §4), by number: their names in flights and errors.
HANDSHAKE_TYPES = {
    1: "ClientHello",
    2: "ServerHello",
    4: "NewSessionTicket",
    5: "EndOfEarlyData",
    8: "EncryptedExtensions",
    11: "Certificate",
    13: "CertificateRequest",
    15: "CertificateVerify",
    20: "Finished",
    24: "KeyUpdate",
    254: "MessageHash",
}
CLIENT_HELLO, SERVER_HELLO, CERTIFICATE, CERTIFICATE_VERIFY = 1, 2, 11, 15
#: A HelloRetryRequest is a ServerHello whose random is SHA-256("HelloRetryRequest") (RFC 8446 §4.1.3).
HRR_RANDOM = hashlib.sha256(b"HelloRetryRequest").digest()
#: Extension numbers read here (RFC 8446 §4.2, RFC 7301 for ALPN, RFC 6066 for SNI).
EXT_SERVER_NAME, EXT_SUPPORTED_GROUPS, EXT_ALPN, EXT_PRE_SHARED_KEY, EXT_SUPPORTED_VERSIONS, EXT_KEY_SHARE = (
    0,
    10,
    16,
    41,
    43,
    51,
)
#: The version TLS 1.3 names itself by in supported_versions.
TLS13 = 0x0304
#: A record's plaintext is at most 2^14 bytes (RFC 8446 §5.1); a record's header is 5 bytes.
MAX_RECORD_PLAINTEXT = 1 << 14
RECORD_HEADER = 5
#: The handshake record's content type (RFC 8446 §5.1).
HANDSHAKE_RECORD = 22

_U16 = struct.Struct(">H")


class HandshakeFormatError(PayloadFormatError):
    """A handshake message that does not parse; str() names the message and the field."""


class _Reader:
    """Reads a message's fields front to back, every length checked against what is left."""

    def __init__(self, data: bytes | memoryview, what: str) -> None:
        self.data, self.at, self.what = memoryview(data), 0, what

    def left(self) -> int:
        return len(self.data) - self.at

    def take(self, count: int, name: str) -> memoryview:
        if count > self.left():
            raise HandshakeFormatError(f"{self.what}: {name} needs {count} bytes, {self.left()} are left")
        chunk = self.data[self.at : self.at + count]
        self.at += count
        return chunk

    def number(self, width: int, name: str) -> int:
        return int.from_bytes(self.take(width, name), "big")

    def vector(self, width: int, name: str) -> _Reader:
        """The next vector with a `width`-byte length, as a reader of its own."""
        return _Reader(self.take(self.number(width, f"{name} length"), name), f"{self.what} {name}")


def messages(data: bytes | memoryview, what: str = "handshake") -> Iterator[tuple[int, memoryview]]:
    """Each (type, body) of a run of whole handshake messages (type, 3-byte length, body)."""
    reader = _Reader(data, what)
    while reader.left():
        kind = reader.number(1, "message type")
        yield kind, reader.take(reader.number(3, f"{HANDSHAKE_TYPES.get(kind, kind)} length"), "message body")


def _extensions(reader: _Reader, where: str) -> dict[int, memoryview]:
    """A message's extensions by number; a number twice is refused (RFC 8446 §4.2)."""
    found: dict[int, memoryview] = {}
    if not reader.left():
        return found
    block = reader.vector(2, "extensions")
    while block.left():
        number = block.number(2, "extension type")
        if number in found:
            raise HandshakeFormatError(f"{where}: extension {number} appears twice")
        found[number] = block.take(block.number(2, f"extension {number} length"), f"extension {number}")
    return found


@dataclass(frozen=True)
class ServerHello:
    """What a ServerHello (or a HelloRetryRequest) says."""

    cipher: int
    #: The key share's group (the group asked for, in a HelloRetryRequest); None: no key share.
    group: int | None
    #: supported_versions' choice (0x0304 for TLS 1.3); None: the extension is absent (TLS 1.2 or older).
    version: int | None
    retry: bool
    #: Whether the server accepted a pre-shared key (resumption): the pre_shared_key extension.
    psk: bool


def read_server_hello(body: bytes | memoryview) -> ServerHello:
    """RFC 8446 §4.1.3: legacy_version, random, session id echo, cipher, compression, extensions."""
    reader = _Reader(body, "ServerHello")
    reader.take(2, "legacy_version")
    random = bytes(reader.take(32, "random"))
    reader.vector(1, "legacy_session_id_echo")
    cipher = reader.number(2, "cipher_suite")
    reader.take(1, "legacy_compression_method")
    extensions = _extensions(reader, "ServerHello")
    version = None
    if EXT_SUPPORTED_VERSIONS in extensions:
        version = _Reader(extensions[EXT_SUPPORTED_VERSIONS], "ServerHello supported_versions").number(2, "version")
    group = None
    if EXT_KEY_SHARE in extensions:  # a HelloRetryRequest's is the group alone; a ServerHello's a whole share
        group = _Reader(extensions[EXT_KEY_SHARE], "ServerHello key_share").number(2, "group")
    return ServerHello(cipher, group, version, random == HRR_RANDOM, EXT_PRE_SHARED_KEY in extensions)


def read_certificate(body: bytes | memoryview) -> list[bytes]:
    """RFC 8446 §4.4.2: each certificate's DER, in the order sent (the end-entity's first)."""
    reader = _Reader(body, "Certificate")
    reader.vector(1, "certificate_request_context")
    entries = reader.vector(3, "certificate_list")
    chain = []
    while entries.left():
        chain.append(bytes(entries.take(entries.number(3, "cert_data length"), "cert_data")))
        entries.vector(2, "extensions")
    return chain


def read_certificate_verify(body: bytes | memoryview) -> int:
    """RFC 8446 §4.4.3: the signature scheme the signer used (the signature follows)."""
    reader = _Reader(body, "CertificateVerify")
    scheme = reader.number(2, "algorithm")
    reader.vector(2, "signature")
    return scheme


@dataclass(frozen=True)
class ClientHello:
    """What a ClientHello offers (RFC 8446 §4.1.2) that the job checks."""

    alpn: tuple[bytes, ...]
    key_shares: tuple[int, ...]
    groups: tuple[int, ...]
    server_name: bytes | None
    versions: tuple[int, ...] = field(default=())


def read_client_hello(body: bytes | memoryview) -> ClientHello:
    """Its ALPN protocols, key-share groups, supported groups, server name and versions."""
    reader = _Reader(body, "ClientHello")
    reader.take(2, "legacy_version")
    reader.take(32, "random")
    reader.vector(1, "legacy_session_id")
    reader.vector(2, "cipher_suites")
    reader.vector(1, "legacy_compression_methods")
    extensions = _extensions(reader, "ClientHello")
    alpn: list[bytes] = []
    if EXT_ALPN in extensions:
        names = _Reader(extensions[EXT_ALPN], "ClientHello ALPN").vector(2, "protocol_name_list")
        while names.left():
            alpn.append(bytes(names.vector(1, "protocol name").data))
    shares: list[int] = []
    if EXT_KEY_SHARE in extensions:
        entries = _Reader(extensions[EXT_KEY_SHARE], "ClientHello key_share").vector(2, "client_shares")
        while entries.left():
            shares.append(entries.number(2, "group"))
            entries.vector(2, "key_exchange")
    groups = _u16_list(extensions.get(EXT_SUPPORTED_GROUPS), "supported_groups", 2)
    versions = _u16_list(extensions.get(EXT_SUPPORTED_VERSIONS), "supported_versions", 1)
    name = None
    if EXT_SERVER_NAME in extensions:
        names = _Reader(extensions[EXT_SERVER_NAME], "ClientHello server_name").vector(2, "server_name_list")
        names.take(1, "name_type")
        name = bytes(names.vector(2, "host_name").data)
    return ClientHello(tuple(alpn), tuple(shares), groups, name, versions)


def _u16_list(data: memoryview | None, name: str, width: int) -> tuple[int, ...]:
    if data is None:
        return ()
    block = _Reader(data, f"ClientHello {name}").vector(width, name)
    if block.left() % 2:
        raise HandshakeFormatError(f"ClientHello {name}: an odd number of bytes ({block.left()})")
    return tuple(_U16.unpack_from(block.data, k)[0] for k in range(0, block.left(), 2))


@dataclass(frozen=True)
class Negotiated:
    """What one handshake negotiated, as its messages said (codepoints; None: not seen)."""

    version: int | None = None
    cipher: int | None = None
    group: int | None = None
    #: The server's CertificateVerify scheme (None when it sent none: a resumed handshake).
    signature: int | None = None
    #: The client's, when the server asked for its certificate (mutual authentication).
    client_signature: int | None = None
    #: HelloRetryRequests the server sent before its ServerHello.
    retries: int = 0
    #: Each certificate's DER size as the server sent its chain (the end-entity's first).
    chain: tuple[int, ...] = ()
    #: The chain's DER, as sent, for the names of their signature algorithms.
    chain_der: tuple[bytes, ...] = field(default=(), repr=False)
    #: Each certificate's DER size as the client sent its chain (mutual authentication).
    client_chain: tuple[int, ...] = ()
    resumed: bool = False
    #: Whether the encrypted messages were read (a watched handshake's transcript). False: an
    #: unwatched one, read from its ServerHellos on the wire and the chain OpenSSL received;
    #: its CertificateVerify schemes were not seen (`signature` and `client_signature` None).
    signatures_read: bool = True


def plaintext_handshake(records: bytes | memoryview) -> bytes:
    """The handshake messages sent in the clear in a run of TLS records: a TLS 1.3 server's
    HelloRetryRequest and ServerHello (everything after the ServerHello is encrypted, and
    skipped). A record cut short at the end (a flight still arriving) ends the run."""
    data, at, found = memoryview(records), 0, []
    while len(data) - at >= RECORD_HEADER:
        length = _U16.unpack_from(data, at + 3)[0]
        if len(data) - at - RECORD_HEADER < length:
            break
        if data[at] == HANDSHAKE_RECORD:
            found.append(data[at + RECORD_HEADER : at + RECORD_HEADER + length])
        at += RECORD_HEADER + length
    return b"".join(found)


def negotiated_on_wire(server_records: bytes | memoryview, chain: tuple[bytes, ...]) -> Negotiated:
    """What an unwatched handshake negotiated: the version, cipher, group, resumption and
    HelloRetryRequests from the ServerHellos in the server's records as they crossed the
    wire, the chain from the certificates the client received (its CertificateVerify is
    encrypted, and not read: `signatures_read` False)."""
    said = negotiated_from(list(messages(plaintext_handshake(server_records), "server's records")), [])
    return Negotiated(
        version=said.version,
        cipher=said.cipher,
        group=said.group,
        retries=said.retries,
        chain=tuple(len(der) for der in chain),
        chain_der=chain,
        resumed=said.resumed,
        signatures_read=False,
    )


def negotiated_from(
    server_messages: Sequence[tuple[int, bytes | memoryview]], client_messages: Sequence[tuple[int, bytes | memoryview]]
) -> Negotiated:
    """What a handshake negotiated, from each side's handshake messages in the order sent
    (the server's: ServerHello, ..., Certificate, CertificateVerify; the client's own
    Certificate and CertificateVerify when it authenticated too)."""
    version = cipher = group = signature = client_signature = None
    retries, resumed = 0, False
    chain: list[bytes] = []
    client_chain: list[bytes] = []
    for kind, body in server_messages:
        if kind == SERVER_HELLO:
            hello = read_server_hello(body)
            if hello.retry:
                retries += 1
                continue
            version, cipher, group, resumed = hello.version, hello.cipher, hello.group, hello.psk
        elif kind == CERTIFICATE:
            chain = read_certificate(body)
        elif kind == CERTIFICATE_VERIFY:
            signature = read_certificate_verify(body)
    for kind, body in client_messages:
        if kind == CERTIFICATE:
            client_chain = read_certificate(body)
        elif kind == CERTIFICATE_VERIFY:
            client_signature = read_certificate_verify(body)
    return Negotiated(
        version=version,
        cipher=cipher,
        group=group,
        signature=signature,
        client_signature=client_signature,
        retries=retries,
        chain=tuple(len(der) for der in chain),
        chain_der=tuple(chain),
        client_chain=tuple(len(der) for der in client_chain),
        resumed=resumed,
    )

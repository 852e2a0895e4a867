"""The one adapter that owns the TLS stack: OpenSSL as cryptography's wheel bundles it,
through pyOpenSSL (never Python's `ssl`, which links the system's OpenSSL: 3.0 here, with
no ML-KEM group).

Everything the tls13 job asks of OpenSSL goes through here, and is feature-detected rather
than assumed from a version number:

- **Groups.** pyOpenSSL's own `Context.set_groups` where a release offers it; else
  `SSL_CTX_set1_curves_list`, the older name of OpenSSL's groups-list call, which
  cryptography's binding exposes for pyOpenSSL (no other group call is bound today).
  A group the linked OpenSSL does not offer makes that call fail: `refusal` says so,
  naming the version and what would offer it.
- **Keys.** A classical key loads with `PKey.from_cryptography_key`; an ML-DSA key, which
  that call refuses, from its PKCS #8 DER through `load_privatekey` (in memory: a key file
  is never written).
- **Signature algorithms and cipher suites**: `SSL_CTX_set1_sigalgs_list` and
  `set_tls13_ciphersuites`, so a handshake can only negotiate what the job asked.
- **What was said.** `SSL_CTX_set_msg_callback` hands over every handshake message in the
  clear, decrypted: the job reads its ServerHello, Certificate and CertificateVerify
  itself (app.core.schemes.tls_messages), detects a HelloRetryRequest, and names each
  flight's messages (`Transcript`). Only on a *watched* connection: OpenSSL calls the
  callback about 50 times per handshake (record headers, inner content types, messages),
  each a call into Python inside the timed `do_handshake` calls (measured: 1.14-1.18
  times the bare handshake; an empty Python callback alone 1.06-1.09), so timed
  handshakes run unwatched and are checked from what is read outside them: their
  ServerHellos on the wire, the peer's chain from OpenSSL (`peer_chain`).
- **Host name**: `X509_VERIFY_PARAM_set1_host` on the client's connection, so a chain that
  verifies for another name is refused.

Below OpenSSL 3.5 the post-quantum groups and certificates are refused with the reason
(`refusal`); the classical ones still run.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

from cryptography import x509
from cryptography.hazmat.bindings.openssl.binding import Binding
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.hazmat.primitives.asymmetric.types import CertificateIssuerPrivateKeyTypes
from OpenSSL import SSL, crypto

from app.core.schemes.tls13 import CERTIFICATES, GROUPS, OPENSSL_PQ, Asked
from app.core.schemes.tls_messages import HANDSHAKE_RECORD

_binding = Binding()
_lib: Any = _binding.lib
_ffi: Any = _binding.ffi

#: Handshake bytes one connection's transcript keeps (every message of the largest chain
#: a job makes, ML-DSA-87 with an intermediate, is under 40 KB); beyond it the transcript
#: says it overflowed and the handshake is failed by its reader, never trusted half read.
TRANSCRIPT_BYTES = 256 * 1024


class TlsStackError(Exception):
    """The TLS stack cannot do what the job asks; str() says what and why."""


def openssl_version() -> tuple[int, str]:
    """The linked OpenSSL's version number (OPENSSL_VERSION_NUMBER) and its text."""
    text = SSL.OpenSSL_version(SSL.OPENSSL_VERSION).decode("ascii", "replace")
    return int(_lib.OpenSSL_version_num()), text


def _offers_group(name: str) -> bool:
    context = SSL.Context(SSL.TLS_METHOD)
    try:
        set_groups(context, [name])
    except TlsStackError:
        return False
    return True


def refusal(asked: Asked) -> str | None:
    """Why the linked OpenSSL cannot run `asked` (None: it can), and what would."""
    number, text = openssl_version()
    group = GROUPS[asked.group]
    if not _offers_group(group.openssl):
        return f"group {asked.group} is not offered by the linked {text}" + (
            "; OpenSSL 3.5 or newer offers it (cryptography's own wheels bundle one: pip install -U cryptography)"
            if group.since >= OPENSSL_PQ
            else ""
        )
    certificate = CERTIFICATES[asked.certificate]
    if certificate.since > number:
        return (
            f"certificate {asked.certificate} needs OpenSSL 3.5 or newer (ML-DSA in TLS); the linked one is {text} "
            "(cryptography's own wheels bundle a newer one: pip install -U cryptography)"
        )
    return None


def set_groups(context: SSL.Context, names: list[str]) -> None:
    """Offer exactly these groups (OpenSSL's names), the first one's key share sent."""
    joined = ":".join(names).encode("ascii")
    own = getattr(context, "set_groups", None)
    if own is not None:  # a pyOpenSSL release with its own call
        try:
            own(joined)
        except SSL.Error as exc:
            raise TlsStackError(f"OpenSSL refused the groups {':'.join(names)}: {exc}") from None
        return
    if _lib.SSL_CTX_set1_curves_list(context._context, joined) != 1:
        _clear_errors()
        raise TlsStackError(f"OpenSSL refused the groups {':'.join(names)}")


def set_signature_schemes(context: SSL.Context, names: list[str]) -> None:
    """Sign and accept only these signature schemes (IANA names, OpenSSL's too)."""
    joined = ":".join(names).encode("ascii")
    if _lib.SSL_CTX_set1_sigalgs_list(context._context, joined) != 1:
        _clear_errors()
        raise TlsStackError(f"OpenSSL refused the signature algorithms {':'.join(names)}")


def _clear_errors() -> None:
    while _lib.ERR_get_error():
        pass


#: A private key as a context takes it: cryptography's where pyOpenSSL takes it, else its own.
PrivateKey = (
    rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey | ed25519.Ed25519PrivateKey | ed448.Ed448PrivateKey | crypto.PKey
)


def private_key(key: CertificateIssuerPrivateKeyTypes) -> PrivateKey:
    """A private key as the TLS stack takes it, in memory: the key types pyOpenSSL takes as
    they are, else (ML-DSA, which `PKey.from_cryptography_key` refuses) loaded through its
    PKCS #8 DER, as pyOpenSSL's own PKey."""
    if isinstance(
        key, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey, ed25519.Ed25519PrivateKey, ed448.Ed448PrivateKey)
    ):
        return key
    der = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    try:
        return crypto.load_privatekey(crypto.FILETYPE_ASN1, der)
    except crypto.Error as exc:
        raise TlsStackError(f"the linked OpenSSL cannot load a {type(key).__name__}: {exc}") from None
    finally:
        del der


# --- what each connection says: the message callback ----------------------------------------


@dataclass
class Transcript:
    """One connection's handshake messages as they were written and read, in order: (sent by
    this end, type, message) with each message's 4-byte header."""

    messages: list[tuple[bool, int, bytes]] = field(default_factory=list)
    size: int = 0
    overflowed: bool = False

    def add(self, written: bool, data: bytes) -> None:
        if self.size + len(data) > TRANSCRIPT_BYTES:
            self.overflowed = True
            return
        self.size += len(data)
        self.messages.append((written, data[0] if data else -1, data))

    def bodies(self, written: bool) -> list[tuple[int, bytes]]:
        """(type, body) of the messages this end wrote (True) or read (False)."""
        return [(kind, data[4:]) for w, kind, data in self.messages if w is written]


#: The transcript of each live connection, by its SSL pointer (the callback is per context).
_transcripts: dict[int, Transcript] = {}


def _on_message(write_p: int, version: int, content_type: int, buf: Any, length: int, ssl: Any, _arg: Any) -> None:
    # Called by OpenSSL inside a handshake call: it must not raise, and does nothing but copy.
    if content_type != HANDSHAKE_RECORD:
        return
    transcript = _transcripts.get(int(_ffi.cast("uintptr_t", ssl)))
    if transcript is not None:
        transcript.add(bool(write_p), bytes(_ffi.buffer(buf, length)))


_callback = _ffi.callback("void(int, int, int, const void *, size_t, SSL *, void *)", _on_message)


def watch(connection: SSL.Connection) -> Transcript:
    """Start keeping `connection`'s handshake messages (its context must be this module's)."""
    transcript = Transcript()
    _transcripts[int(_ffi.cast("uintptr_t", connection._ssl))] = transcript
    return transcript


def forget(connection: SSL.Connection) -> None:
    _transcripts.pop(int(_ffi.cast("uintptr_t", connection._ssl)), None)


# --- contexts --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Identity:
    """A chain one end presents: its certificates (the end-entity's first, as sent) and key."""

    certificates: tuple[x509.Certificate, ...]
    key: PrivateKey = field(repr=False)


def _context(
    asked: Asked, identity: Identity | None, anchor: x509.Certificate | None, groups: list[str] | None
) -> SSL.Context:
    context = SSL.Context(SSL.TLS_METHOD)
    context.set_min_proto_version(SSL.TLS1_3_VERSION)
    context.set_max_proto_version(SSL.TLS1_3_VERSION)
    set_groups(context, groups or [GROUPS[asked.group].openssl])
    context.set_tls13_ciphersuites(asked.cipher.encode("ascii"))
    certificate = CERTIFICATES[asked.certificate]
    # The handshake signature, and the chain's own (RSA certificates are signed PKCS #1 v1.5,
    # as CAs sign them; TLS 1.3 accepts it in certificates, never in a CertificateVerify).
    schemes = [certificate.scheme] + (["rsa_pkcs1_sha256"] if certificate.scheme.startswith("rsa") else [])
    set_signature_schemes(context, schemes)
    if identity is not None:
        context.use_certificate(identity.certificates[0])
        for extra in identity.certificates[1:]:
            context.add_extra_chain_cert(extra)
        with warnings.catch_warnings():
            # An ML-DSA key can only be pyOpenSSL's own PKey, which pyOpenSSL deprecates
            # passing (it takes cryptography's keys, which do not include ML-DSA's).
            warnings.simplefilter("ignore", DeprecationWarning)
            context.use_privatekey(identity.key)
        context.check_privatekey()
    if anchor is not None:
        store = context.get_cert_store()
        assert store is not None, "a context always has a certificate store"
        store.add_cert(crypto.X509.from_cryptography(anchor))
    return context


def server_context(
    asked: Asked, identity: Identity, client_anchor: x509.Certificate | None = None, groups: list[str] | None = None
) -> SSL.Context:
    """The server's context: its chain, exactly the asked group, signature scheme and cipher;
    with `client_anchor` it requires and verifies the client's certificate (mutual)."""
    context = _context(asked, identity, client_anchor, groups)
    if client_anchor is not None:
        context.set_verify(SSL.VERIFY_PEER | SSL.VERIFY_FAIL_IF_NO_PEER_CERT)
    context.set_session_id(b"cryptobench-tls13")
    return context


def client_context(
    asked: Asked, anchor: x509.Certificate, identity: Identity | None = None, groups: list[str] | None = None
) -> SSL.Context:
    """The client's context: it trusts `anchor` alone and verifies the server's chain with
    OpenSSL's own verification; `identity` for mutual authentication."""
    context = _context(asked, identity, anchor, groups)
    context.set_verify(SSL.VERIFY_PEER)
    if asked.resumption == "ticket":
        context.set_session_cache_mode(SSL.SESS_CACHE_CLIENT)
    return context


def _new_connection(context: SSL.Context, watched: bool) -> SSL.Connection:
    """A connection with the message callback (`watched`) or none: OpenSSL copies the
    context's callback into each connection it makes (SSL_new), and cryptography's binding
    has no per-connection call, so the context's is set just before."""
    _lib.SSL_CTX_set_msg_callback(context._context, _callback if watched else _ffi.NULL)
    return SSL.Connection(context, None)


def client_connection(context: SSL.Context, host: str, alpn: bytes | None, watched: bool = True) -> SSL.Connection:
    """A client connection over memory BIOs that sends `host` and verifies the chain names it;
    `watched`: OpenSSL hands its handshake messages to its transcript (`watch`)."""
    connection = _new_connection(context, watched)
    connection.set_connect_state()
    connection.set_tlsext_host_name(host.encode("ascii"))
    param = _lib.SSL_get0_param(connection._ssl)
    if _lib.X509_VERIFY_PARAM_set1_host(param, host.encode("ascii"), len(host)) != 1:
        raise TlsStackError(f"OpenSSL refused the host name {host!r} to verify")
    if alpn is not None:
        connection.set_alpn_protos([alpn])
    return connection


def server_connection(context: SSL.Context, watched: bool = True) -> SSL.Connection:
    connection = _new_connection(context, watched)
    connection.set_accept_state()
    return connection


def peer_chain(connection: SSL.Connection, server: bool = False) -> tuple[bytes, ...]:
    """The certificates the peer sent, as DER, the end-entity's first, after the handshake.
    A server's OpenSSL keeps the client's end-entity apart from the rest of its chain."""
    chain = connection.get_peer_cert_chain(as_cryptography=True) or []
    if server:
        leaf = connection.get_peer_certificate(as_cryptography=True)
        chain = [] if leaf is None else [leaf, *chain]
    return tuple(certificate.public_bytes(serialization.Encoding.DER) for certificate in chain)

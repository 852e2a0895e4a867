"""The tls13 scheme: its registry entry, its metadata, and what a handshake's messages say
(app/core/schemes/tls13.py, tls_messages.py)."""

from __future__ import annotations

import struct

import pytest

from app.core.errors import BadParameter
from app.core.schemes import registry
from app.core.schemes.base import SchemeError
from app.core.schemes.tls13 import Tls13Scheme
from app.core.schemes.tls_messages import (
    HandshakeFormatError,
    Negotiated,
    messages,
    negotiated_from,
    read_certificate,
    read_client_hello,
    read_server_hello,
)
from app.core.selftest import vectors
from app.core.vocab import Family

ASKED = {"group": "X25519MLKEM768", "certificate": "ml-dsa-65", "chain": 2}
#: What a full handshake of ASKED negotiates (the codepoints of IANA's registries).
RIGHT = Negotiated(version=0x0304, cipher=0x1301, group=0x11EC, signature=0x0905, chain=(5652,))


def test_tls13_is_a_registered_scheme_of_its_own_family() -> None:
    spec = registry.get_spec("tls13")
    assert spec.family is Family.TLS and spec.backends == ("pyopenssl",)
    assert [p.name for p in spec.params] == ["group", "certificate", "chain", "cipher", "resumption", "mutual"]
    assert "tls13" in [s.scheme_id for s in registry.by_family()[Family.TLS]]
    with pytest.raises(BadParameter, match=r"parameter 'group' of tls13 must be one of .*got 'X25519Kyber768'"):
        registry.create("tls13", "pyopenssl", {"group": "X25519Kyber768"})


def test_its_security_is_the_weaker_of_key_exchange_and_authentication() -> None:
    hybrid_classical = registry.create("tls13", "pyopenssl", {"group": "X25519MLKEM768", "certificate": "ecdsa-p256"})
    assert (hybrid_classical.info.security.classical_bits, hybrid_classical.info.security.pq_category) == (128, 0)
    post_quantum = registry.create("tls13", "pyopenssl", ASKED)
    assert (post_quantum.info.security.classical_bits, post_quantum.info.security.pq_category) == (192, 3)
    assert post_quantum.info.label == "TLS 1.3 X25519MLKEM768 + ML-DSA-65 (chain 2)"


def test_its_job_bodies_are_tls_s_own_not_a_session_s() -> None:
    scheme = registry.create("tls13", "pyopenssl", ASKED)
    with pytest.raises(SchemeError, match="runs TLS's own client and server"):
        scheme.new_sender()


def test_a_handshake_that_negotiated_what_was_asked_passes() -> None:
    scheme = registry.create("tls13", "pyopenssl", ASKED)
    assert isinstance(scheme, Tls13Scheme) and scheme.negotiation_problem(RIGHT) is None


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"version": 0x0303}, "version TLSv1.2 (asked TLSv1.3)"),
        ({"group": 0x001D}, "group x25519 (asked X25519MLKEM768)"),
        ({"cipher": 0x1303}, "cipher TLS_CHACHA20_POLY1305_SHA256 (asked TLS_AES_128_GCM_SHA256)"),
        ({"signature": 0x0403}, "server signature ecdsa_secp256r1_sha256 (asked mldsa65)"),
        ({"retries": 1}, "1 HelloRetryRequest(s)"),
        ({"resumed": True}, "a resumed handshake (asked a full one)"),
        ({"chain": (5652, 5000)}, "2 certificate(s) sent (asked 1)"),
        ({"group": 0x4242}, "group 0x4242"),
    ],
)
def test_a_handshake_that_negotiated_something_else_is_named_beside_what_was_asked(
    change: dict[str, object], named: str
) -> None:
    scheme = registry.create("tls13", "pyopenssl", ASKED)
    assert isinstance(scheme, Tls13Scheme)
    problem = scheme.negotiation_problem(Negotiated(**{**RIGHT.__dict__, **change}))  # type: ignore[arg-type]
    assert problem is not None and named in problem


def test_rfc_8448_s_trace_reads_as_published() -> None:
    trace = vectors.TLS13_TRACES["simple-1-rtt"]
    ((_, body),) = messages(trace.server_hello)
    hello = read_server_hello(body)
    assert (hello.cipher, hello.group, hello.version, hello.retry) == (0x1301, 0x001D, 0x0304, False)
    flight = dict(messages(trace.server_flight))
    assert [len(der) for der in read_certificate(flight[11])] == [432]
    said = negotiated_from([(2, bytes(body))] + [(k, bytes(b)) for k, b in messages(trace.server_flight)], [])
    assert said.signature == 0x0804 and said.chain == (432,)
    ((_, client_body),) = messages(trace.client_hello)
    client = read_client_hello(client_body)
    assert client.server_name == b"server" and client.key_shares == (0x001D,) and client.alpn == ()


@pytest.mark.parametrize(
    ("data", "named"),
    [
        (b"\x02\x00\x00\x10" + bytes(4), "message body needs 16 bytes, 4 are left"),
        (b"\x02", "ServerHello length needs 3 bytes"),
    ],
)
def test_a_malformed_message_is_refused_naming_the_field(data: bytes, named: str) -> None:
    with pytest.raises(HandshakeFormatError, match=named):
        list(messages(data))


def test_a_server_hello_cut_short_or_with_an_extension_twice_is_refused() -> None:
    trace = vectors.TLS13_TRACES["simple-1-rtt"]
    ((_, body),) = messages(trace.server_hello)
    with pytest.raises(HandshakeFormatError, match="ServerHello: random needs 32 bytes"):
        read_server_hello(bytes(body)[:20])
    doubled = bytes(body)[:-6] + struct.pack(">HH", 43, 2) + b"\x03\x04" + struct.pack(">HH", 43, 2) + b"\x03\x04"
    head = bytearray(doubled)
    extensions_at = 2 + 32 + 1 + head[34] + 2 + 1
    struct.pack_into(">H", head, extensions_at, len(head) - extensions_at - 2)
    with pytest.raises(HandshakeFormatError, match="extension 43 appears twice"):
        read_server_hello(bytes(head))

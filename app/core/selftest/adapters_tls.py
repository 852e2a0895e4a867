"""Checks through the tls13 scheme's adapter (app/core/schemes/tls13.py, tls_messages.py).

Part of the checks through the scheme adapters (:mod:`.adapters`, whose ``ADAPTER_CHECKS``
ends with these). A tls13 job's handshakes run in OpenSSL; what the app itself decides is
what they negotiated, read from their messages and held against what the job asked. So
the published trace of RFC 8448 §3 goes through the scheme the registry builds: its
reader must find the trace's group, cipher suite, signature scheme and certificate, a
job asking for exactly those must find nothing wrong, one asking for another signature
must be told both, and a ServerHello carrying RFC 8446's HelloRetryRequest random must be
taken for one.
"""

from __future__ import annotations

from app.core.selftest import vectors
from app.core.selftest.adapter_parts import adder, create, via
from app.core.selftest.framework import KAT, PYOPENSSL, SelftestCheck, expect, expect_equal

__all__ = ["CHECKS"]

CHECKS: list[SelftestCheck] = []
_add = adder(CHECKS)

#: The parameters RFC 8448 §3's handshake negotiated, as a tls13 job would ask for them
#: (its 1024-bit RSA certificate signs with rsa_pss_rsae_sha256, as rsa-2048's does).
_RFC8448_JOB = {"group": "x25519", "certificate": "rsa-2048", "chain": 1, "cipher": "TLS_AES_128_GCM_SHA256"}


def _rfc8448_trace() -> None:
    from app.core.schemes.tls13 import Tls13Scheme
    from app.core.schemes.tls_messages import (
        HRR_RANDOM,
        SERVER_HELLO,
        messages,
        negotiated_from,
        read_client_hello,
        read_server_hello,
    )

    trace = vectors.TLS13_TRACES["simple-1-rtt"]
    scheme = create(Tls13Scheme, "tls13", PYOPENSSL, _RFC8448_JOB)
    server = list(messages(trace.server_hello)) + list(messages(trace.server_flight))
    said = negotiated_from([(kind, bytes(body)) for kind, body in server], [])
    expect_equal("negotiated group", said.group, trace.group)
    expect_equal("negotiated cipher suite", said.cipher, trace.cipher)
    expect_equal("CertificateVerify's signature scheme", said.signature, trace.signature)
    expect_equal("certificate sizes", said.chain, (trace.certificate_bytes,))
    expect_equal("HelloRetryRequests", said.retries, 0)
    expect_equal("what the job asked, against the trace", scheme.negotiation_problem(said), None)
    other = create(Tls13Scheme, "tls13", PYOPENSSL, {**_RFC8448_JOB, "certificate": "ecdsa-p256"})
    problem = other.negotiation_problem(said) or ""
    expect("rsa_pss_rsae_sha256" in problem and "ecdsa_secp256r1_sha256" in problem, f"mismatch named: {problem!r}")
    ((_, hello_body),) = messages(trace.client_hello)
    hello = read_client_hello(hello_body)
    expect_equal("ClientHello server_name", hello.server_name, trace.server_name)
    expect_equal("ClientHello key shares", hello.key_shares, (trace.group,))
    expect_equal("HelloRetryRequest random", HRR_RANDOM, trace.hello_retry_random)
    ((kind, body),) = messages(trace.server_hello)
    retry = bytearray(body)
    retry[2:34] = trace.hello_retry_random  # after legacy_version
    expect_equal("ServerHello type", kind, SERVER_HELLO)
    expect(read_server_hello(bytes(retry)).retry, "a ServerHello with the HelloRetryRequest random read as one")
    retried = negotiated_from([(SERVER_HELLO, bytes(retry))] + [(k, bytes(b)) for k, b in server], [])
    expect("HelloRetryRequest" in (scheme.negotiation_problem(retried) or ""), "a HelloRetryRequest refused, named")


_add(
    "TLS 1.3 handshake messages read as RFC 8448 §3's trace says",
    PYOPENSSL,
    KAT,
    via("tls13", "RFC 8448 §3 (Simple 1-RTT Handshake); RFC 8446 §4.1.3 (HelloRetryRequest random)"),
    _rfc8448_trace,
    schemes=("tls13",),
)

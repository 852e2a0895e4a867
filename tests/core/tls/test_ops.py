"""The tls13 job in operations mode, and the stack adapter under it (app/core/tls/ops.py,
stack.py, certificates.py): both ends in one process over memory BIOs."""

from __future__ import annotations

from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization

from app.core.contracts.events import SizeMeasured
from app.core.schemes.tls13 import Asked, Tls13Scheme
from app.core.tls import stack
from app.core.tls.certificates import CLIENT_NAME, SERVER_NAME, make_chain
from app.core.tls.handshake import FlightLog, HandshakeFailed, negotiated, negotiated_unwatched, pair_handshake
from app.core.tls.ops import TlsOperations
from app.core.tls.tally import HandshakeTally, NegotiationMismatch
from tests.helpers.plans import job_plan

PQ = {"group": "X25519MLKEM768", "certificate": "ml-dsa-65", "chain": 2}


def _run(params: dict[str, Any], sizes: list[int] | None = None, **settings: Any) -> list[SizeMeasured]:
    events: list[Any] = []
    plan = job_plan("tls13", "pyopenssl", params, sizes=sizes or [1024], samples=4, warmup=1, tamper=3, **settings)
    TlsOperations(plan, events.append).run()
    return [event for event in events if isinstance(event, SizeMeasured)]


def test_a_hybrid_handshake_with_an_ml_dsa_chain_records_what_it_negotiated_and_sent() -> None:
    (measured,) = _run(PQ)
    assert measured.error is None, measured.error
    assert set(measured.metrics) == {"handshake_client", "handshake_server", "encrypt", "decrypt"}
    assert len(measured.metrics["handshake_client"].samples) == 4
    assert (measured.tamper_tried, measured.tamper_rejected, measured.tamper_failures) == (3, 3, [])
    record = measured.tls
    assert record is not None
    assert (record.version, record.group, record.cipher, record.signature) == (
        "TLSv1.3",
        "X25519MLKEM768",
        "TLS_AES_128_GCM_SHA256",
        "mldsa65",
    )
    assert record.chain_signatures == ("ML-DSA-65",) and len(record.chain_bytes) == 1
    assert 5_000 < record.chain_bytes[0] < 6_500  # an ML-DSA-65 leaf: a 1,952-byte key, a 3,309-byte signature
    assert record.round_trips == 1 and record.retries == 0 and not record.resumed
    assert [f.sender for f in record.flights] == ["client", "server", "client"]
    assert record.flights[1].messages[-2:] == ("CertificateVerify", "Finished")
    # An ML-KEM-768 share (1,184 bytes) and an X25519 one in the ClientHello; the chain and
    # a 3,309-byte signature in the server's flight.
    assert record.client_bytes.low > 1_300 and record.server_bytes.low > 9_000
    assert record.handshakes == 6  # the size's watched handshake, warm-up included


def test_a_chain_of_three_sends_two_certificates_and_mutual_authentication_the_client_s() -> None:
    (measured,) = _run({"group": "x25519", "certificate": "ed25519", "chain": 3, "mutual": True})
    record = measured.tls
    assert measured.error is None and record is not None
    assert len(record.chain_bytes) == 2 and record.chain_signatures == ("Ed25519", "Ed25519")
    assert record.client_signature == "ed25519" and len(record.client_chain_bytes) == 2
    assert "CertificateRequest" in record.flights[1].messages


def test_resumed_handshakes_send_no_certificate() -> None:
    measured, second = _run({"group": "x25519", "certificate": "rsa-2048", "resumption": "ticket"}, sizes=[64, 2048])
    record = measured.tls
    assert measured.error is None and record is not None and record.resumed
    assert second.error is None and second.tls is not None and second.tls.resumed  # each size resumes
    assert record.signature is None and record.chain_bytes == ()
    assert record.flights[1].messages == ("ServerHello", "EncryptedExtensions", "Finished")


@pytest.mark.parametrize("watched", [True, False], ids=["watched", "unwatched"])
def test_a_hello_retry_request_fails_the_job_naming_both_and_is_counted(watched: bool) -> None:
    """A client that offers the job's group only second (its key share for x25519 first)
    gets a HelloRetryRequest from a server of secp256r1: the handshake completes, and the
    job refuses it, counted in the record it keeps of what happened. Watched, from the
    transcript; unwatched (as timed handshakes run), from the ServerHellos on the wire."""
    scheme = Tls13Scheme(
        {
            "group": "secp256r1",
            "certificate": "ecdsa-p256",
            "chain": 2,
            "cipher": "TLS_AES_128_GCM_SHA256",
            "resumption": "none",
            "mutual": False,
        }
    )
    chain = make_chain("ecdsa-p256", 2, SERVER_NAME)
    server_context = stack.server_context(scheme.asked, chain.identity)
    client_context = stack.client_context(scheme.asked, chain.anchor, groups=["x25519", "secp256r1"])
    client = stack.client_connection(client_context, SERVER_NAME, None, watched)
    server = stack.server_connection(server_context, watched)
    if watched:
        client_transcript, server_transcript = stack.watch(client), stack.watch(server)
        log = FlightLog({"client": (client_transcript, True), "server": (server_transcript, True)})
        pair_handshake(client, server, log)
        said = negotiated(client_transcript, server_transcript)
    else:
        log = FlightLog(None)
        pair_handshake(client, server, log)
        said = negotiated_unwatched(log, client)
    assert said.signatures_read is watched
    tally = HandshakeTally(scheme, "")
    with pytest.raises(NegotiationMismatch, match=r"1 HelloRetryRequest\(s\): the server asked for another key share"):
        tally.add(said, log.flights, log.round_trips(), 0)
    record = tally.record()
    assert record is not None and record.retries == 1 and record.round_trips == 2 and record.group == "secp256r1"


def test_an_unwatched_handshake_calls_no_python_and_reads_what_the_wire_and_openssl_say() -> None:
    """A timed handshake runs without OpenSSL's message callback (its transcript stays empty
    though registered), and what it negotiated is read after it: the ServerHello's group and
    cipher from the wire, the chain as the client received it, the scheme left unread."""
    scheme = Tls13Scheme(
        {
            "group": "x25519",
            "certificate": "ecdsa-p256",
            "chain": 3,
            "cipher": "TLS_AES_256_GCM_SHA384",
            "resumption": "none",
            "mutual": False,
        }
    )
    chain = make_chain("ecdsa-p256", 3, SERVER_NAME)
    client_context = stack.client_context(scheme.asked, chain.anchor)
    server_context = stack.server_context(scheme.asked, chain.identity)
    # A watched pair made first: the callback is chosen per connection, not per context.
    watched = stack.client_connection(client_context, SERVER_NAME, None), stack.server_connection(server_context)
    client = stack.client_connection(client_context, SERVER_NAME, None, watched=False)
    server = stack.server_connection(server_context, watched=False)
    transcripts = stack.watch(client), stack.watch(server)
    log = FlightLog(None)
    pair_handshake(client, server, log)
    said = negotiated_unwatched(log, client)
    stack.forget(client)
    stack.forget(server)
    assert [t.messages for t in transcripts] == [[], []]
    assert (said.version, said.group, said.cipher, said.retries, said.resumed) == (0x0304, 0x001D, 0x1302, 0, False)
    assert said.chain == tuple(len(c.public_bytes(serialization.Encoding.DER)) for c in chain.sent)
    assert said.signature is None and not said.signatures_read
    assert [f.sender for f in log.flights] == ["client", "server", "client"] and log.flights[1].messages == ()
    assert scheme.negotiation_problem(said) is None
    watched_log = FlightLog({"client": (stack.watch(watched[0]), True), "server": (stack.watch(watched[1]), True)})
    pair_handshake(*watched, watched_log)
    assert watched_log.flights[1].messages[-2:] == ("CertificateVerify", "Finished")


def test_a_server_signing_with_another_scheme_is_refused_by_openssl_itself() -> None:
    """Why an unwatched handshake's unread CertificateVerify is still the job's scheme: each
    end's context allows that one alone, and the client refuses any other."""
    ecdsa = Asked("x25519", "ecdsa-p256", 2, "TLS_AES_128_GCM_SHA256", "none", False)
    chain = make_chain("ed25519", 2, SERVER_NAME)
    other = stack.server_context(Asked("x25519", "ed25519", 2, "TLS_AES_128_GCM_SHA256", "none", False), chain.identity)
    client = stack.client_connection(stack.client_context(ecdsa, chain.anchor), SERVER_NAME, None, watched=False)
    with pytest.raises(HandshakeFailed):
        pair_handshake(client, stack.server_connection(other, watched=False), FlightLog(None))


def test_a_chain_for_another_host_or_from_another_anchor_is_refused() -> None:
    asked = Asked("x25519", "ecdsa-p256", 2, "TLS_AES_128_GCM_SHA256", "none", False)
    chain = make_chain("ecdsa-p256", 2, CLIENT_NAME)  # issued for another name
    stranger = make_chain("ecdsa-p256", 2, SERVER_NAME)
    for anchor, reason in ((chain.anchor, "certificate verify failed"), (stranger.anchor, "certificate verify failed")):
        client = stack.client_connection(stack.client_context(asked, anchor), SERVER_NAME, None)
        server = stack.server_connection(stack.server_context(asked, chain.identity))
        log = FlightLog({"client": (stack.watch(client), True), "server": (stack.watch(server), True)})
        with pytest.raises(HandshakeFailed, match=reason):
            pair_handshake(client, server, log)


def test_the_stack_refuses_a_group_or_certificate_the_linked_openssl_lacks(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = Asked("MLKEM768", "ml-dsa-44", 2, "TLS_AES_128_GCM_SHA256", "none", False)
    assert stack.refusal(asked) is None  # OpenSSL 4 here
    monkeypatch.setattr(stack, "_offers_group", lambda name: False)
    refusal = stack.refusal(asked)
    assert refusal is not None and "group MLKEM768 is not offered by the linked OpenSSL" in refusal
    assert "OpenSSL 3.5 or newer offers it" in refusal
    monkeypatch.setattr(stack, "_offers_group", lambda name: True)
    monkeypatch.setattr(stack, "openssl_version", lambda: (0x30000130, "OpenSSL 3.0.19 27 Jan 2026"))
    refusal = stack.refusal(asked)
    assert refusal is not None and "certificate ml-dsa-44 needs OpenSSL 3.5 or newer" in refusal
    assert "the linked one is OpenSSL 3.0.19" in refusal


def test_groups_go_through_pyopenssl_s_own_call_where_a_release_has_one() -> None:
    class WithItsOwn:
        def __init__(self) -> None:
            self.asked: list[bytes] = []

        def set_groups(self, groups: bytes) -> None:
            self.asked.append(groups)

    context = WithItsOwn()
    stack.set_groups(context, ["X25519MLKEM768", "x25519"])  # type: ignore[arg-type]
    assert context.asked == [b"X25519MLKEM768:x25519"]
    from OpenSSL import SSL

    with pytest.raises(stack.TlsStackError, match="OpenSSL refused the groups nonsense"):
        stack.set_groups(SSL.Context(SSL.TLS_METHOD), ["nonsense"])

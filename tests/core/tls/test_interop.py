"""The tls13 job's ends against independent TLS implementations.

- Python's `ssl` (the system's OpenSSL, another version: 3.0 here) as a client of the
  job's server, and as a server for the job's client, on the classical groups;
- tlslite-ng (pure Python, its own X25519MLKEM768: codepoint 0x11EC) as a client of the
  hybrid group: a handshake it completes proves the job's hybrid is the standard one.

Each completes a real handshake (chain and host name verified where the library verifies)
and exchanges the size's application data, compared at both ends."""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from app.core.schemes.tls13 import Tls13Scheme
from app.core.tls import stack
from app.core.tls.certificates import SERVER_NAME, anchor_from_der, make_chain
from app.core.tls.data import request_for
from app.core.tls.sides import ClientSide
from tests.core.tls import parties


def _stdlib_client(port: int, anchor_der: bytes) -> bytes:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.load_verify_locations(cadata=anchor_der)  # in memory: DER bytes
    context.set_alpn_protocols([parties.ALPN.decode()])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
        with context.wrap_socket(raw, server_hostname=SERVER_NAME) as tls:
            assert tls.version() == "TLSv1.3"
            tls.sendall(request_for(parties.SEED, parties.SIZE))
            got = b""
            while len(got) < parties.SIZE:
                chunk = tls.recv(parties.SIZE - len(got))
                assert chunk
                got += chunk
            return got


@pytest.mark.parametrize(
    ("group", "certificate"),
    [("x25519", "ecdsa-p256"), ("x25519", "rsa-2048"), ("x25519", "ed25519"), ("x448", "ecdsa-p384")],
)
def test_python_s_ssl_completes_handshakes_with_the_job_s_server(group: str, certificate: str) -> None:
    # Python's ssl has no groups call: its OpenSSL 3.0 sends an x25519 key share, so for x448
    # the job's server asks for its own group first (a HelloRetryRequest), as any server may.
    server = parties.server(parties.job(group, certificate))
    with parties.serving(server) as (port, dropped, _):
        response = _stdlib_client(port, server.chain.anchor_der())
    assert response == parties.expected_response()
    assert [c.verdict for c in server.connections] == ["ok"], server.connections
    assert not dropped


@pytest.fixture
def stdlib_server(tmp_path: Path) -> Iterator[tuple[int, bytes, list[bytes]]]:
    """Python's ssl as a TLS 1.3 server with the job's own ECDSA P-256 chain of 2 (its key in
    a file of the test's temporary folder: Python's ssl loads keys from files only). Yields
    its port, the chain's anchor (DER) and what it received."""
    chain = make_chain("ecdsa-p256", 2, SERVER_NAME)
    key = chain.identity.key
    assert isinstance(key, ec.EllipticCurvePrivateKey)
    (tmp_path / "chain.pem").write_bytes(chain.sent[0].public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    context.load_cert_chain(tmp_path / "chain.pem", tmp_path / "key.pem")
    listener = socket.create_server(("127.0.0.1", 0))
    received: list[bytes] = []

    def serve() -> None:
        raw, _ = listener.accept()
        with context.wrap_socket(raw, server_side=True) as tls:
            got = b""
            while len(got) < parties.SIZE:
                chunk = tls.recv(parties.SIZE - len(got))
                if not chunk:
                    break
                got += chunk
            received.append(got)
            tls.sendall(parties.expected_response())

    thread = threading.Thread(target=serve)
    thread.start()
    try:
        yield listener.getsockname()[1], chain.anchor_der(), received
    finally:
        thread.join(15)
        listener.close()
        assert not thread.is_alive()


def test_the_job_s_client_completes_a_handshake_with_python_s_ssl_server(
    stdlib_server: tuple[int, bytes, list[bytes]],
) -> None:
    port, anchor, received = stdlib_server
    scheme = Tls13Scheme(parties.job("x25519", "ecdsa-p256").params)
    context = stack.client_context(scheme.asked, anchor_from_der(anchor))
    side = ClientSide(context, SERVER_NAME, None, None)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        response = parties.client_exchange(sock, side)
    assert response == parties.expected_response()
    assert received == [request_for(parties.SEED, parties.SIZE)]
    said = side.finish().negotiated
    assert scheme.negotiation_problem(said) is None, said


def test_tlslite_ng_s_own_x25519mlkem768_completes_a_handshake_with_the_job_s_server() -> None:
    tlslite = pytest.importorskip("tlslite")
    from tlslite.utils.compat import ML_KEM_AVAILABLE

    if not ML_KEM_AVAILABLE:
        pytest.skip("tlslite-ng's ML-KEM backend (kyber-py) is not installed")
    server = parties.server(parties.job("X25519MLKEM768", "ecdsa-p256"))
    settings = tlslite.HandshakeSettings()
    settings.minVersion = settings.maxVersion = (3, 4)
    settings.eccCurves = ["x25519mlkem768"]
    settings.keyShares = ["x25519mlkem768"]
    settings.cipherNames = ["aes128gcm"]
    with parties.serving(server) as (port, dropped, _):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            connection = tlslite.TLSConnection(raw)
            connection.handshakeClientCert(settings=settings, serverName=SERVER_NAME, alpn=[parties.ALPN])
            assert connection.version == (3, 4)
            connection.write(request_for(parties.SEED, parties.SIZE))
            got = b""
            while len(got) < parties.SIZE:
                got += connection.read(max=parties.SIZE - len(got))
            chain = connection.session.serverCertChain
            connection.close()
    assert got == parties.expected_response()
    assert [c.verdict for c in server.connections] == ["ok"], server.connections
    assert chain is not None and chain.getNumCerts() == 1  # the leaf: the root is the anchor, never sent
    assert not dropped

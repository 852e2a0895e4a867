"""Hostile and faulty peers of the tls13 job: every one gets a bounded, counted, named
outcome, never a hang or a traceback, and the job's own connections go on.

On the server's TLS port (its doorway and ClientHello check, app/core/tls/admission.py):
garbage, a plain HTTP request, a record longer than TLS allows, a ClientHello of 64 KB, one
with 1,000 key shares, a truncated record, a stranger that stops mid-record, a flood of
silent strangers while the job's own client connects, and the job's own client stopping
mid-handshake; the same strangers, a flood and a peer stopping mid-handshake on a tls13 load
server's port (app/core/load/tls_server.py). Against the job's client (app/core/tls/sides.py, client.py): a server that
sends a 100 KB certificate chain, one that stops mid-handshake, one that closes mid-flight.
And the job's keys: made in memory, never written to a file, never in a result.
"""

from __future__ import annotations

import builtins
import os
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization

from app.core.contracts.events import SizeMeasured
from app.core.load import tls_server
from app.core.load.server import listeners
from app.core.load.tls_request import Exchange, Once, request_once
from app.core.schemes.tls13 import Tls13Scheme
from app.core.tls import certificates, stack
from app.core.tls import client as tls_client
from app.core.tls.certificates import SERVER_NAME, anchor_from_der, make_chain
from app.core.tls.client import handshake_over
from app.core.tls.control import ServerConnection, ServerReport
from app.core.tls.data import response_for
from app.core.tls.handshake import HandshakeFailed
from app.core.tls.ops import TlsOperations
from app.core.tls.server import TlsServer
from app.core.tls.sides import ClientSide, ServerSide, TooLarge
from app.core.tls.tally import HandshakeTally
from app.core.transport.doorway import MAX_PENDING
from app.core.transport.wire import WireError
from tests.core.tls import parties
from tests.helpers.plans import job_plan


def _hello(alpn: bytes | None, key_shares: int = 1, share_bytes: int = 32, padding: int = 0) -> bytes:
    """A ClientHello handshake message built by hand: TLS 1.3 offered, `key_shares` shares of
    `share_bytes` each, the job's ALPN id (or none), `padding` bytes of a padding extension."""

    def extension(number: int, body: bytes) -> bytes:
        return struct.pack(">HH", number, len(body)) + body

    shares = b"".join(struct.pack(">HH", 0x001D, share_bytes) + bytes(share_bytes) for _ in range(key_shares))
    extensions = extension(43, b"\x02\x03\x04") + extension(10, b"\x00\x02\x00\x1d")
    extensions += extension(51, struct.pack(">H", len(shares)) + shares)
    if alpn is not None:
        names = bytes([len(alpn)]) + alpn
        extensions += extension(16, struct.pack(">H", len(names)) + names)
    for k, start in enumerate(range(0, padding, 60_000)):  # an extension holds at most 65,535 bytes
        extensions += extension(0xFF00 + k, bytes(min(60_000, padding - start)))
    body = b"\x03\x03" + bytes(32) + b"\x00" + b"\x00\x02\x13\x01" + b"\x01\x00"
    body += struct.pack(">H", len(extensions)) + extensions
    return b"\x01" + len(body).to_bytes(3, "big") + body


def _records(message: bytes) -> bytes:
    """`message` cut into handshake records of at most 2^14 bytes, as TLS sends it."""
    out = b""
    for start in range(0, len(message), 1 << 14):
        chunk = message[start : start + (1 << 14)]
        out += b"\x16\x03\x01" + struct.pack(">H", len(chunk)) + chunk
    return out


def _stranger_then_the_job(send: bytes, *, close: bool = True, timeout: float = 5.0) -> tuple[list[str], TlsServer]:
    """A stranger sends `send` on the TLS port (then closes, or stays silent), then the job's
    own client makes a whole connection: what the doorway dropped, and the server."""
    server = parties.server(parties.job())
    with parties.serving(server, hello_timeout=timeout) as (port, dropped, _):
        stranger = socket.create_connection(("127.0.0.1", port))
        try:
            stranger.sendall(send)
            if close:
                stranger.close()
            assert dropped.any.wait(10), "the stranger was never dropped"
            _job_s_client(port, server)
        finally:
            stranger.close()
    return dropped, server


def _job_s_client(port: int, server: TlsServer) -> None:
    scheme = Tls13Scheme(parties.job().params)
    context = stack.client_context(scheme.asked, anchor_from_der(server.chain.anchor_der()))
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        response = parties.client_exchange(sock, ClientSide(context, SERVER_NAME, parties.ALPN, None))
    assert response == parties.expected_response()


@pytest.mark.parametrize(
    ("send", "named"),
    [
        (os.urandom(64).replace(b"\x16", b"\x17"), "are not a TLS handshake record"),
        (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "it sent an HTTP request ('GET /'), not a TLS ClientHello"),
        (b"\x16\x03\x01\xff\xff" + bytes(100), "announced a record of 65,535 bytes; TLS allows 16,384"),
        (_records(_hello(parties.ALPN, padding=65_000)), "spans more than one record"),
        (_records(_hello(parties.ALPN, key_shares=1000, share_bytes=0)), "offers 1,000 key shares (at most 8)"),
        (_records(_hello(None)), "does not name the job's ALPN id"),
        (_records(_hello(b"cb-" + bytes(32).hex().encode())), "does not name the job's ALPN id"),
        (b"\x16\x03\x01\x00\xc8" + bytes(50), "closed the connection after 55 of the 205 bytes"),
        (b"\x16\x03\x01\x00\x08\x02\x00\x00\x04" + bytes(4), "is of type 2, not a ClientHello"),
    ],
    ids=[
        "garbage",
        "http",
        "long record",
        "64 KB hello",
        "1000 key shares",
        "no alpn",
        "wrong alpn",
        "truncated",
        "not a hello",
    ],
)
def test_a_stranger_on_the_tls_port_is_named_and_the_job_goes_on(send: bytes, named: str) -> None:
    dropped, server = _stranger_then_the_job(send)
    assert len(dropped) == 1 and named in dropped[0], dropped
    assert [c.verdict for c in server.connections] == ["ok"]


def test_a_stranger_that_stops_mid_record_is_dropped_at_its_deadline() -> None:
    dropped, server = _stranger_then_the_job(b"\x16\x03\x01\x00", close=False, timeout=0.5)
    assert dropped == [
        "TLS server closed a connection from 127.0.0.1: it sent 4 bytes of its first record within 0.5 s and stopped"
    ]
    assert [c.verdict for c in server.connections] == ["ok"]


def test_a_flood_of_silent_strangers_never_evicts_the_job_s_connection() -> None:
    server = parties.server(parties.job())
    with parties.serving(server) as (port, dropped, _):
        strangers = [socket.create_connection(("127.0.0.1", port)) for _ in range(MAX_PENDING + 16)]
        try:
            for stranger in strangers[:8]:
                stranger.sendall(b"\x16\x03")  # half a header: waiting, and not vouched for
            _job_s_client(port, server)
        finally:
            for stranger in strangers:
                stranger.close()
    assert [c.verdict for c in server.connections] == ["ok"]
    assert len(dropped) >= 16 and all("TLS server closed a connection" in line for line in dropped)


def test_the_job_s_own_client_stopping_mid_handshake_is_a_named_failure_of_that_connection() -> None:
    server = parties.server(parties.job(), timeout=0.5)
    scheme = Tls13Scheme(parties.job().params)
    context = stack.client_context(scheme.asked, anchor_from_der(server.chain.anchor_der()))
    with parties.serving(server) as (port, _dropped, _):
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(ClientSide(context, SERVER_NAME, parties.ALPN, None).hello())
            sock.recv(65536)  # the server's flight; the client never answers it
            sock.shutdown(socket.SHUT_WR)
    (connection,) = server.connections
    # Unfinished, not failed: neither served nor refused (a tamper try's says nothing of the check).
    assert connection.verdict.startswith("unfinished: the client closed the connection mid-handshake"), connection


# --- hostile servers against the job's client -------------------------------------------------


@pytest.fixture
def hostile_server() -> Iterator[Any]:
    """A server thread that runs `behave(sock)` on the one connection it accepts."""
    listener = socket.create_server(("127.0.0.1", 0))
    behaviour: list[Any] = []
    done = threading.Event()

    def run() -> None:
        try:
            sock, _ = listener.accept()
        except OSError:
            return
        with sock:
            behaviour[0](sock)
        done.set()

    thread = threading.Thread(target=run)

    def start(behave: Any) -> int:
        behaviour.append(behave)
        thread.start()
        return int(listener.getsockname()[1])

    yield start
    listener.close()
    thread.join(15)
    assert not thread.is_alive()


def _client(port: int, anchor: x509.Certificate, timeout: float = 5.0) -> None:
    scheme = Tls13Scheme(parties.job().params)
    side = ClientSide(stack.client_context(scheme.asked, anchor), SERVER_NAME, parties.ALPN, None)
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.settimeout(timeout)
        sock.sendall(side.hello())
        handshake_over(sock, side)


def test_a_server_s_100_kb_certificate_chain_is_refused_before_it_is_read_whole(hostile_server: Any) -> None:
    scheme = Tls13Scheme(parties.job().params)
    key = certificates.new_key("ecdsa-p256")
    chain = make_chain("ecdsa-p256", 2, SERVER_NAME)
    bloated = (
        x509.CertificateBuilder()
        .subject_name(chain.sent[0].subject)
        .issuer_name(chain.sent[0].subject)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(chain.sent[0].not_valid_before_utc)
        .not_valid_after(chain.sent[0].not_valid_after_utc)
        .add_extension(x509.UnrecognizedExtension(x509.ObjectIdentifier("1.3.6.1.4.1.55555.1"), bytes(100_000)), False)
        .sign(key, hashes.SHA256())
    )
    context = stack.server_context(scheme.asked, stack.Identity((bloated,), stack.private_key(key)))

    def serve(sock: socket.socket) -> None:
        side = ServerSide(context)
        try:
            sock.sendall(side.receive(sock.recv(65536)))
        except OSError:
            pass  # the client hung up mid-flight, as it must

    port = hostile_server(serve)
    with pytest.raises(TooLarge, match=r"the server's handshake passed 65,536 bytes"):
        _client(port, bloated)


def test_a_server_that_stops_mid_handshake_is_a_named_timeout(hostile_server: Any) -> None:
    release = threading.Event()

    def stall(sock: socket.socket) -> None:
        sock.recv(65536)
        sock.sendall(b"\x16\x03\x03\x00\x40" + bytes(10))  # part of a ServerHello record, then nothing
        release.wait(10)

    port = hostile_server(stall)
    try:
        with pytest.raises(HandshakeFailed, match=r"the server sent nothing for 0.5 s"):
            _client(port, make_chain("ecdsa-p256", 2, SERVER_NAME).anchor, timeout=0.5)
    finally:
        release.set()


def test_a_server_that_closes_mid_flight_is_named(hostile_server: Any) -> None:
    def truncate(sock: socket.socket) -> None:
        sock.recv(65536)
        sock.sendall(b"\x16\x03\x03\x00\x40" + bytes(10))

    port = hostile_server(truncate)
    with pytest.raises(HandshakeFailed, match=r"closed the connection mid-handshake, after 15 bytes"):
        _client(port, make_chain("ecdsa-p256", 2, SERVER_NAME).anchor)


# --- the job's keys ----------------------------------------------------------------------------


def test_keys_are_made_in_memory_never_written_and_never_in_a_result(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tls13 job's whole operations body (its chains, both ends, mutual authentication)
    runs with every file open for writing refused; no private key it made appears in what
    it reports."""
    made: list[Any] = []
    real_new_key = certificates.new_key
    monkeypatch.setattr(certificates, "new_key", lambda kind: made.append(real_new_key(kind)) or made[-1])
    real_open, real_os_open = builtins.open, os.open

    def no_writes(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        assert not set(mode) & set("wax+"), f"the job opened {file!r} for writing"
        return real_open(file, mode, *args, **kwargs)

    def no_os_writes(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        assert not flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT), f"the job opened {path!r} for writing"
        return real_os_open(path, flags, *args, **kwargs)

    params = {"group": "X25519MLKEM768", "certificate": "ml-dsa-44", "chain": 3, "mutual": True}
    events: list[Any] = []
    monkeypatch.setattr(builtins, "open", no_writes)
    monkeypatch.setattr(os, "open", no_os_writes)
    TlsOperations(
        job_plan("tls13", "pyopenssl", params, sizes=[64], samples=2, warmup=0, tamper=1), events.append
    ).run()
    monkeypatch.undo()
    (measured,) = [e for e in events if isinstance(e, SizeMeasured)]
    assert measured.error is None and measured.tls is not None and measured.tls.client_chain_bytes
    assert len(made) == 6  # root, intermediate and leaf, for each end
    reported = repr(events)
    for key in made:
        der = key.private_bytes(
            serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        assert der.hex() not in reported and der[-32:].hex() not in reported and repr(der[-32:]) not in reported


# --- a lossy link ------------------------------------------------------------------------------


def test_a_tamper_try_whose_connection_never_opened_is_named_not_blamed_on_the_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Over 30 % loss a tamper try's SYNs ran out (no answer within the connect timeout):
    the client took it for the server's refusal and counted the connection, which the server
    never saw, and the job failed as "TlsPeerError: SIZE_END_OK reports 15 connections; the
    client made 16", blaming the server. A try that never reached it now fails the job so."""
    plan = job_plan("tls13", "pyopenssl", dict(parties.job().params), [64], token=parties.TOKEN, tamper=1)
    client = tls_client.TlsClient(plan, lambda message: None)

    def no_answer(host: str, port: int, timeout: float, *rest: Any) -> socket.socket:
        raise WireError(f"no answer from {host}:{port} within {timeout:g} s")

    monkeypatch.setattr(tls_client, "connect", no_answer)
    monkeypatch.setattr(client, "_request", lambda *args: memoryview(b""))  # the control connection's TAMPER/ACK
    client.context = stack.client_context(client.scheme.asked, make_chain("ecdsa-p256", 2, SERVER_NAME).anchor)
    with pytest.raises(tls_client.NotOpened, match=r"could not be opened: no answer from 127\.0\.0\.1:0 within 10 s"):
        client._tamper(SizeMeasured(0, 64, metrics={}), 64, bytes(16), HandshakeTally(client.scheme, ""))


def test_a_tamper_try_the_server_never_judged_is_named_not_counted_as_let_through() -> None:
    """Over 50 % loss the server waited out its 300 s for a tamper try's records and the job
    failed "tampered payload not rejected: record's middle byte: failed: the client sent
    nothing for 300.02 s", as if its check had let a tampered record through. A connection
    that ended before its records were judged is now said to be that."""
    plan = job_plan("tls13", "pyopenssl", dict(parties.job().params), [64], token=parties.TOKEN, tamper=2, warmup=0)
    client = tls_client.TlsClient(plan, lambda message: None)
    genuine = tuple(ServerConnection(1000, "ok") for _ in range(1 + plan.job.samples))  # the watched one first
    refused = ServerConnection(1000, "refused: bad record mac")
    unfinished = ServerConnection(0, "unfinished: the client sent nothing for 300.02 s")
    result = SizeMeasured(0, 64, metrics={})
    with pytest.raises(
        HandshakeFailed,
        match=r"tamper try 2 \(.+\) never reached the server's check of its records: the client sent nothing for 300\.02 s",
    ):
        client._server_side(result, ServerReport((*genuine, refused, unfinished), None), len(genuine) + 2, 1)
    assert result.tamper_failures == []  # never "not rejected"


# --- the tls13 load server's port (app/core/load/tls_server.py) ---------------------------------

#: The load server's job: the request's size, its chain made once for the module.
LOAD_PARAMS: dict[str, Any] = {"group": "x25519", "certificate": "ecdsa-p256"}
LOAD_SIZE = 64


@pytest.fixture(scope="module")
def load_serving() -> tls_server.TlsServing:
    return tls_server.prepare(parties.TOKEN, b"", LOAD_PARAMS, (LOAD_SIZE,), accept_timeout=30.0)


@contextmanager
def _load_server(serving: tls_server.TlsServing) -> Iterator[tuple[int, parties.Dropped, Callable[[], Once]]]:
    """The load server's loop in a thread on a fresh port; yields the port, what it dropped
    (its door's strangers and its own closes), and one request of the job's own."""
    (listener,) = listeners("127.0.0.1", 1)
    port = listener.getsockname()[1]
    dropped = parties.Dropped()
    worker = tls_server.TlsWorker(listener, serving, dropped.add, tls_server.CpuClocks(1))
    ended: list[str | None] = []
    thread = threading.Thread(target=lambda: ended.append(worker.run()))
    thread.start()
    scheme = Tls13Scheme(parties.job(**LOAD_PARAMS).params)
    context = stack.client_context(scheme.asked, anchor_from_der(serving.anchor))
    seed = tls_server.data_seed(parties.TOKEN, LOAD_SIZE)
    exchange = Exchange(tls_server.request_bytes(parties.TOKEN, LOAD_SIZE), response_for(seed, LOAD_SIZE))
    try:
        yield port, dropped, lambda: request_once("127.0.0.1", port, 5.0, None, context, parties.ALPN, None, exchange)
    finally:
        worker.took_control = True  # with no control connection left: the loop ends at its next turn
        thread.join(10)
    assert not thread.is_alive() and ended == [None], ended


@pytest.mark.parametrize(
    ("send", "named"),
    [
        (os.urandom(64).replace(b"\x16", b"\x17").replace(b"C", b"D"), "are not a TLS handshake record"),
        (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", "it sent an HTTP request ('GET /'), not a TLS ClientHello"),
        (_records(_hello(parties.ALPN, padding=65_000)), "spans more than one record"),
        (_records(_hello(parties.ALPN, key_shares=1000, share_bytes=0)), "offers 1,000 key shares (at most 8)"),
        (b"\x16\x03\x01\x00\xc8" + bytes(50), "closed the connection after 55 of the 205 bytes"),
        (b"CONNECT x:443 HTTP/1.1\r\n\r\n", "not a CryptoBench frame (magic b'CO'"),
    ],
    ids=["garbage", "http", "64 KB hello", "1000 key shares", "truncated", "C like a control connection"],
)
def test_a_stranger_on_the_load_server_s_port_is_named_and_the_job_s_handshakes_go_on(
    load_serving: tls_server.TlsServing, send: bytes, named: str
) -> None:
    with _load_server(load_serving) as (port, dropped, request):
        with socket.create_connection(("127.0.0.1", port)) as stranger:
            stranger.sendall(send)
        assert dropped.any.wait(10), "the stranger was never dropped"
        once = request()
    assert len(dropped) == 1 and "TLS load server closed a connection" in dropped[0] and named in dropped[0], dropped
    assert once.refused is None and not once.finished.negotiated.resumed


def test_a_flood_of_silent_strangers_never_evicts_the_load_job_s_connections(
    load_serving: tls_server.TlsServing, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every request is a new connection waiting at the door for its ClientHello: past 64
    waiting, the door used to close the oldest, the job's own among them."""
    monkeypatch.setattr(tls_server, "HELLO_S", 0.5)
    with _load_server(load_serving) as (port, dropped, request):
        strangers = [socket.create_connection(("127.0.0.1", port)) for _ in range(MAX_PENDING + 16)]
        try:
            outcomes = [request() for _ in range(3)]
            assert dropped.any.wait(10)
        finally:
            for stranger in strangers:
                stranger.close()
    assert all(once.refused is None for once in outcomes)
    assert all(line.startswith("TLS load server closed a connection from 127.0.0.1: ") for line in dropped)
    assert not [line for line in dropped if "newer connections were waiting" in line], "a connection was evicted"
    assert any("sent nothing within the 0.5 s hello timeout" in line for line in dropped), dropped[:3]


def test_a_peer_that_stops_mid_handshake_on_the_load_server_is_closed_and_named(
    load_serving: tls_server.TlsServing, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tls_server, "IDLE_S", 0.3)
    scheme = Tls13Scheme(parties.job(**LOAD_PARAMS).params)
    context = stack.client_context(scheme.asked, anchor_from_der(load_serving.anchor))
    with _load_server(load_serving) as (port, dropped, request):
        with socket.create_connection(("127.0.0.1", port)) as sock:
            sock.sendall(ClientSide(context, SERVER_NAME, parties.ALPN, None).hello())
            sock.recv(65536)  # the server's flight; the client never answers it
            assert dropped.any.wait(10), "the stalled peer was never closed"
            assert sock.recv(65536) == b""  # closed by the server
        once = request()
    assert dropped == ["TLS load server closed a connection silent for 0.3 s during its handshake"]
    assert once.refused is None

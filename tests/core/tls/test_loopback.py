"""The tls13 job's server and client over loopback: their own code, each in a thread, the
control connection and one TLS connection per handshake (app/core/tls/server.py, client.py).
The processes around them run in tests/reliability/test_round_trip.py and the packet path
in tests/core/link/test_packet_path.py."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from app.core.contracts.events import ChildFailed, Listening, PeerDropped, ReceiverDone, SizeMeasured
from app.core.tls.client import run_client
from app.core.tls.server import TlsServerPlan, serve_job
from app.core.transport.doorway import TICKET_BYTES, admission
from app.core.vocab import Role
from tests.helpers.plans import job_plan

TOKEN = os.urandom(32)
TICKET = os.urandom(TICKET_BYTES)


class Server:
    """The job's server in a thread: its events, and its port once it listens."""

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.listening = threading.Event()
        self.port = 0
        plan = TlsServerPlan(TOKEN, TICKET, hello_timeout=5, timeout=10, accept_timeout=3)
        self.thread = threading.Thread(target=serve_job, args=(plan, self._emit))

    def _emit(self, event: Any) -> None:
        self.events.append(event)
        if isinstance(event, Listening):
            self.port = event.port
            self.listening.set()


@pytest.fixture
def server() -> Iterator[Server]:
    running = Server()
    running.thread.start()
    assert running.listening.wait(10), running.events
    yield running
    running.thread.join(20)
    assert not running.thread.is_alive()


def _client(port: int, params: dict[str, Any], sizes: list[int], **settings: Any) -> list[Any]:
    plan = job_plan(
        "tls13", "pyopenssl", params, sizes=sizes, token=TOKEN, port=port, admission=admission(TICKET), **settings
    )
    events: list[Any] = []
    run_client(plan, events.append)
    return events


def test_each_sample_is_a_connection_and_a_handshake_of_its_own(server: Server) -> None:
    events = _client(server.port, {"group": "X25519MLKEM768", "certificate": "ecdsa-p256"}, [256, 20_000])
    measured = [event for event in events if isinstance(event, SizeMeasured)]
    assert [m.message_size for m in measured] == [256, 20_000]
    server.thread.join(20)
    assert isinstance(server.events[-1], ReceiverDone), server.events
    for size in measured:
        # The size's watched connection, warm-up and samples, each answered and compared.
        assert size.error is None and size.checked == 6
        assert set(size.metrics) == {
            "connect",
            "handshake",
            "connect_handshake",
            "first_byte",
            "handshake_cpu_client",
            "handshake_cpu_server",
        }
        for name, metric in size.metrics.items():
            assert len(metric.samples) == 4 and all(value > 0 for value in metric.samples), name
        first, handshake = size.metrics["first_byte"].samples, size.metrics["handshake"].samples
        assert all(a > b for a, b in zip(first, handshake))  # the first byte comes after the handshake
        setup, connect = size.metrics["connect_handshake"].samples, size.metrics["connect"].samples
        assert all(s > c + h for s, c, h in zip(setup, connect, handshake))  # both, and the ClientHello's making
        assert all(f > s for f, s in zip(first, setup))
        assert (size.tamper_tried, size.tamper_rejected) == (3, 3), size.tamper_failures
        assert size.tls is not None and size.tls.group == "X25519MLKEM768" and size.tls.handshakes == 6
        sender, receiver = size.tcp_info[Role.SENDER], size.tcp_info[Role.RECEIVER]
        # A connection each: the watched one, warm-up, samples, tamper tries.
        assert sender.exchanges == receiver.exchanges == 9
        assert sender.data_segments_out is not None and sender.data_segments_out >= 8


def test_strangers_on_the_port_during_the_job_are_named_and_never_in_its_way(server: Server) -> None:
    with socket.create_connection(("127.0.0.1", server.port)) as control_stranger:
        control_stranger.sendall(b"GET / HTTP/1.1\r\n\r\n")
        events = _client(server.port, {"group": "x25519", "certificate": "ecdsa-p256"}, [64])
    measured = [event for event in events if isinstance(event, SizeMeasured)]
    assert measured[0].error is None
    dropped = [event.text for event in server.events if isinstance(event, PeerDropped)]
    assert dropped and all(text.startswith("TLS server closed a connection") for text in dropped)


def test_a_client_without_the_token_never_gets_the_job(server: Server) -> None:
    plan = job_plan(
        "tls13", "pyopenssl", {}, sizes=[64], token=bytes(32), port=server.port, admission=admission(TICKET)
    )
    with pytest.raises(Exception, match="token"):
        run_client(plan, lambda event: None)
    server.thread.join(20)  # the real client never comes: the server gives up at its deadline
    assert isinstance(server.events[-1], ChildFailed), server.events


def test_a_resumed_job_counts_its_full_first_and_its_watched_handshakes_with_the_server_s(server: Server) -> None:
    """Untimed connections (a resumed job's first, full handshake; each size's watched one)
    are in the server's report too: the client counts them, and keeps their CPU out of the
    samples."""
    params = {"group": "x25519", "certificate": "rsa-2048", "resumption": "ticket"}
    measured = [e for e in _client(server.port, params, [256, 512], tamper=0) if isinstance(e, SizeMeasured)]
    for size in measured:
        record = size.tls
        assert size.error is None and record is not None and record.resumed, size.error
        assert len(size.metrics["handshake_cpu_server"].samples) == 4 and record.handshakes == 6
        assert record.flights[1].messages == ("ServerHello", "EncryptedExtensions", "Finished")


def test_a_resumed_job_s_tamper_tries_are_refused_and_the_job_goes_on(server: Server) -> None:
    """A refused tamper try spends the ticket it offered (a TLS 1.3 ticket resumes once):
    the next try made a full handshake, which was checked as a mismatch with the resumed
    job, and every resumed job with tamper tries failed."""
    params = {"group": "x25519", "certificate": "ecdsa-p256", "resumption": "ticket"}
    (size,) = [e for e in _client(server.port, params, [256], tamper=2) if isinstance(e, SizeMeasured)]
    assert size.error is None and size.tls is not None and size.tls.resumed, size.error
    assert size.tamper_tried == size.tamper_rejected == 2 and not size.tamper_failures

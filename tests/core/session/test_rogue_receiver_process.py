"""A real loopback receiver process (`receiver_main`) attacked by rogues, then serving a
genuine sender; the in-process attacks are in test_rogue_clients.py."""

from __future__ import annotations

import multiprocessing
import os
import socket
from collections.abc import Callable
from typing import Any

import psutil
import pytest

from app.core.contracts.events import Listening, PeerDropped, ReceiverDone, SizeMeasured
from app.core.session.receiver import ReceiverLimits, ReceiverPlan, receiver_main
from app.core.session.sender import SenderSession
from app.core.transport.auth import NONCE_BYTES, TOKEN_BYTES, client_proof
from app.core.transport.connect import connect
from app.core.transport.wire import FrameReader, FrameType, WireError, encode_header
from tests.core.session.rogue_harness import TOKEN, frame
from tests.helpers.plans import job_plan


def _expect_closed_by_receiver(sock: socket.socket) -> None:
    """The receiver ends the connection: EOF (or a reset if it left bytes unread), never a reply."""
    sock.settimeout(10)
    try:
        data = sock.recv(4096)
    except ConnectionResetError:
        return
    assert data == b"", f"the receiver answered a rogue with {data!r}"


def _rogue_wrong_token(sock: socket.socket) -> None:
    nonce = os.urandom(NONCE_BYTES)
    sock.sendall(frame(FrameType.HELLO, nonce))
    server_nonce = bytes(FrameReader(sock, NONCE_BYTES, idle_timeout=10).expect(FrameType.CHALLENGE))
    sock.sendall(frame(FrameType.PROOF, client_proof(bytes(TOKEN_BYTES), nonce, server_nonce)))
    _expect_closed_by_receiver(sock)


def _rogue_garbage(sock: socket.socket) -> None:
    sock.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    _expect_closed_by_receiver(sock)


def _rogue_huge_claim(sock: socket.socket) -> None:
    sock.sendall(encode_header(FrameType.HELLO, 2**63) + b"\x00" * 1024)
    _expect_closed_by_receiver(sock)


def _rogue_error_first(sock: socket.socket) -> None:
    sock.sendall(frame(FrameType.ERROR, b"let me in"))
    _expect_closed_by_receiver(sock)


def _rogue_connect_and_close(sock: socket.socket) -> None:
    pass  # the with-block closes it at once


def _rogue_silent(sock: socket.socket) -> None:
    _expect_closed_by_receiver(sock)  # after hello_timeout


ROGUES: list[tuple[str, Callable[[socket.socket], None]]] = [
    ("wrong token", _rogue_wrong_token),
    ("garbage", _rogue_garbage),
    ("2**63-byte header", _rogue_huge_claim),
    ("ERROR frame first", _rogue_error_first),
    ("connect and close", _rogue_connect_and_close),
    ("connect and say nothing", _rogue_silent),
]
RSS_CEILING = 200 * 1024 * 1024


def test_receiver_process_survives_rogues_then_serves_a_sender() -> None:
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe()
    plan = ReceiverPlan(TOKEN, limits=ReceiverLimits(hello_timeout=0.5), accept_timeout=20)
    process = ctx.Process(target=receiver_main, args=(child, plan), daemon=True)
    process.start()
    child.close()

    def receiver_report() -> str:
        reports = []
        while parent.poll(0.5):
            try:
                reports.append(parent.recv())
            except EOFError:
                break
        return f"receiver reported {reports}"

    try:
        assert parent.poll(30), "the receiver never reported its port"
        listening = parent.recv()
        assert isinstance(listening, Listening) and listening.port > 0, listening
        port = listening.port
        receiver = psutil.Process(process.pid)
        rss_before = receiver.memory_info().rss

        for name, rogue in ROGUES:
            try:
                sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            except OSError as exc:
                pytest.fail(f"cannot connect for rogue {name!r} ({exc}); {receiver_report()}")
            with sock:
                rogue(sock)
            assert process.is_alive(), f"the receiver died after rogue {name!r}; {receiver_report()}"
            rss = receiver.memory_info().rss
            assert rss < RSS_CEILING, f"receiver RSS {rss} after rogue {name!r}"
            assert rss - rss_before < 64 * 1024 * 1024, f"receiver grew by {rss - rss_before} bytes after {name!r}"

        session = job_plan(
            "aes-gcm",
            "cryptography",
            {},
            [64],
            samples=5,
            warmup=1,
            keygen_samples=2,
            pause_ms=0,
            tamper=3,
            host="127.0.0.1",
            port=port,
            token=TOKEN,
            reply_timeout=20,
        )
        events: list[Any] = []
        try:
            with connect("127.0.0.1", port, 10) as sock:
                SenderSession(sock, session, events.append).run()
        except WireError as exc:
            pytest.fail(f"the genuine sender failed: {type(exc).__name__}: {exc}; {receiver_report()}")

        measured = [e for e in events if isinstance(e, SizeMeasured)]
        assert len(measured) == 1
        result = measured[0]
        assert result.error is None
        assert result.checked > 0 and result.failed == 0
        assert result.tamper_tried == result.tamper_rejected == 3
        assert result.tamper_failures == []
        for metric in ("compute", "rtt", "receiver", "network", "floor_rtt"):
            assert metric in result.metrics, metric
            assert len(result.metrics[metric].samples) == 5, metric

        messages = []
        while True:
            assert parent.poll(30), f"the receiver went quiet after {messages}"
            message = parent.recv()
            messages.append(message)
            if not isinstance(message, PeerDropped):
                break
        assert messages[-1] == ReceiverDone(), messages
        logs = [message.text for message in messages[:-1]]
        assert len(logs) == len(ROGUES), logs
        assert all("receiver closed a connection from 127.0.0.1" in text for text in logs), logs
        process.join(20)
        assert process.exitcode == 0
    finally:
        if process.is_alive():
            process.kill()
        process.join(10)
        parent.close()

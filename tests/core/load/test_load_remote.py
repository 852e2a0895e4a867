"""A load job against `cryptobench serve` (`run --remote`): the serve starts the job's load
server, the generator drives it with secrets derived on both sides, and BYE ends it.
What a peer may ask for is bounded; a load server nobody drives is never left behind."""

from __future__ import annotations

import json
import os
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from hdrh.histogram import HdrHistogram

from app.core.profile.files import parse_profile
from app.core.run.runner import Runner
from app.core.serve.server import Server
from app.core.session.protocol import JobDescription, LoadServe
from app.core.transport.auth import authenticate_server, load_secrets
from app.core.transport.connect import RemoteTarget
from app.core.transport.wire import MAX_CONTROL_FRAME, FrameReader, FrameType, PeerError, send_frame
from app.core.vocab import JobStatus
from tests.helpers.load_counts import assert_every_request_answered


@pytest.fixture
def serve() -> Iterator[tuple[Server, list[str]]]:
    logs: list[str] = []
    server = Server(os.urandom(32), "127.0.0.1", 0, log=logs.append)
    stop = threading.Event()
    thread = threading.Thread(target=server.serve_forever, args=(stop,))
    thread.start()
    try:
        yield server, logs
    finally:
        stop.set()
        thread.join(15)
    assert not thread.is_alive()


def _served(server: Server, count: int) -> None:
    """Wait until the serve has counted `count` jobs served (it counts after the sender's BYE)."""
    with server._lock:
        assert server._lock.wait_for(lambda: server.served >= count, 10), (server.served, server.refused)


def _run(server: Server, jobs: list[dict[str, object]]) -> Any:
    profile = parse_profile({"name": "remote load", "jobs": jobs})
    host, port = server.address
    return Runner(profile, remote=RemoteTarget(host, port, server.token)).run()


def test_a_load_job_drives_the_server_serve_started(serve: tuple[Server, list[str]]) -> None:
    server, logs = serve
    run = _run(
        server,
        [{"scheme": "x25519", "mode": "load", "clients": 2, "rates": [200], "duration_s": 0.3, "warmup_s": 0}],
    )
    (job,) = run.jobs
    assert job.status == JobStatus.OK, job.error
    assert job.mode == "load"
    (step,) = job.load.steps
    assert_every_request_answered(step, sent=60)
    assert HdrHistogram.decode(step.histogram).get_total_count() == step.completed
    # The server's CPU comes from its own marks, from the other machine.
    assert step.server_cpu_percent is not None
    assert job.validation.tamper_rejected == job.validation.tamper_tried > 0
    _served(server, 1)
    assert any("load server for x25519" in line for line in logs)
    assert any("finished x25519" in line for line in logs)


def test_the_derived_secrets_differ_per_job_and_never_equal_the_token() -> None:
    token = os.urandom(32)
    first, second = load_secrets(token, b"a" * 16), load_secrets(token, b"b" * 16)
    assert first != second and token not in first and len(first[0]) == 32 and len(first[1]) == 32
    assert load_secrets(token, b"a" * 16) == first  # both sides derive the same


def _ask(server: Server, description: bytes) -> tuple[FrameType, bytes, socket.socket, FrameReader]:
    host, port = server.address
    sock = socket.create_connection((host, port), timeout=10)
    reader = FrameReader(sock, MAX_CONTROL_FRAME, idle_timeout=10)
    authenticate_server(sock, reader, server.token, "test serve")
    kind, _ = reader.read()
    assert kind is FrameType.READY
    send_frame(sock, FrameType.JOB, [description])
    try:
        kind, body = reader.read()
    except PeerError as exc:  # the serve's ERROR frame, as the reader raises it
        return FrameType.ERROR, str(exc).encode(), sock, reader
    return kind, bytes(body), sock, reader


@pytest.mark.parametrize(
    ("load", "message"),
    [
        ({"server_workers": 0}, "load.server_workers"),
        ({"server_workers": 65}, "load.server_workers"),
        ({"server_workers": "2"}, "load.server_workers"),
        ({"server_workers": 1, "extra": 1}, "load.extra"),
        ({}, "load.server_workers"),
    ],
)
def test_a_load_request_out_of_bounds_is_refused_naming_the_field(
    serve: tuple[Server, list[str]], load: dict[str, object], message: str
) -> None:
    server, _ = serve
    body = json.dumps({"scheme": "x25519", "backend": "cryptography", "message_sizes": [32], "load": load}).encode()
    kind, reply, sock, _ = _ask(server, body)
    sock.close()
    assert kind is FrameType.ERROR and message in reply.decode()


def test_a_load_server_nobody_drives_ends_with_its_control_connection(serve: tuple[Server, list[str]]) -> None:
    import psutil

    server, _ = serve
    description = JobDescription(
        scheme="x25519", backend="cryptography", message_sizes=[32], load=LoadServe(server_workers=1)
    )
    kind, reply, sock, _ = _ask(server, description.encode())
    assert kind is FrameType.JOB_OK
    accepted = json.loads(reply)
    port = accepted["load_port"]
    listening = [c for c in psutil.net_connections("tcp") if c.laddr and c.laddr.port == port]
    assert listening  # the load server is up
    sock.close()  # the sender leaves without BYE and without driving it
    # The serve stops that load server and takes the next job.
    run = _run(
        server,
        [{"scheme": "x25519", "mode": "load", "clients": 1, "rates": [100], "duration_s": 0.2, "warmup_s": 0}],
    )
    assert run.jobs[0].status == JobStatus.OK, run.jobs[0].error
    assert not [c for c in psutil.net_connections("tcp") if c.laddr and c.laddr.port == port and c.status == "LISTEN"]

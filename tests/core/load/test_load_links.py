"""A load job's clients over one emulated link: one bottleneck they all share."""

from __future__ import annotations

import random
import socket
import threading

from app.core.link.delay_line import DelayLine
from app.core.link.shared import SharedRelay
from app.core.profile.files import parse_profile
from app.core.run.runner import Runner
from app.core.transport.doorway import TICKET_BYTES, Doorway, TicketCheck, admission
from app.core.vocab import JobStatus, Role
from tests.helpers.load_counts import assert_every_request_answered


def _echo_server(listener: socket.socket, connections: int) -> None:
    """Echo every byte back on each of `connections` connections, then end."""
    socks = [listener.accept()[0] for _ in range(connections)]
    for sock in socks:
        while data := sock.recv(65536):
            sock.sendall(data)
        sock.close()


def test_every_connection_gets_its_own_bytes_back_through_the_shared_lines() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    link = socket.create_server(("127.0.0.1", 0), backlog=16)
    echo = threading.Thread(target=_echo_server, args=(server, 3))
    echo.start()
    up = DelayLine(0.002, 0.0, 8_000_000, random.Random(1))
    down = DelayLine(0.002, 0.0, None, random.Random(2))
    ticket = b"t" * TICKET_BYTES
    doorway = Doorway(link, lambda: TicketCheck(ticket), 10.0, lambda text: None, who="link")
    relay = SharedRelay(doorway, lambda: socket.create_connection(server.getsockname(), timeout=10), up, down, 3)
    runner = threading.Thread(target=relay.run, args=(10.0,))
    runner.start()
    try:
        clients = [socket.create_connection(link.getsockname(), timeout=10) for _ in range(3)]
        for client in clients:
            client.sendall(admission(ticket))
        messages = [bytes([k]) * (5000 + 1000 * k) for k in range(3)]
        for client, message in zip(clients, messages):
            client.sendall(message)
            client.shutdown(socket.SHUT_WR)
        for client, message in zip(clients, messages):
            got = bytearray()
            while chunk := client.recv(65536):
                got += chunk
            assert bytes(got) == message  # its own bytes, whole, in order
            client.close()
    finally:
        runner.join(15)
        echo.join(15)
        server.close()
        link.close()
    assert not runner.is_alive() and not relay.pairs and relay.taken == 3 and not relay.broken
    # All of it crossed one line each way: the bottleneck is shared, not one per connection.
    assert up.bytes_in == sum(len(m) for m in messages) == down.bytes_in


def test_a_load_job_over_a_link_waits_out_its_round_trip() -> None:
    profile = parse_profile(
        {
            "name": "t",
            "jobs": [
                {
                    "scheme": "x25519",
                    "mode": "load",
                    "clients": 2,
                    "rates": [50],
                    "duration_s": 0.2,
                    "warmup_s": 0,
                    "link": {"delay_ms": 5},
                }
            ],
        }
    )
    (job,) = Runner(profile).run().jobs
    assert job.status == JobStatus.OK, job.error
    assert job.link is not None and job.link.delay_ms == 5
    assert job.load is not None
    (step,) = job.load.steps
    assert_every_request_answered(step, sent=10)
    # 5 ms each way: no reply can come sooner than 10 ms after its request was due.
    assert step.latency_s["p50"] >= 0.010
    assert job.placement is not None and str(Role.LINK) in job.placement.processes

"""The relay over real sockets, and the link process: timing bounds, order, end of stream, stop."""

from __future__ import annotations

import os
import random
import signal
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psutil
import pytest

from app.core.contracts.events import LinkDone, Listening
from app.core.link.delay_line import DelayLine
from app.core.link.relay import LinkPlan, Relay, delay_lines, link_main
from app.core.link.timeouts import limits_over_link
from app.core.processes.jobstart import child_context, stop_signals_blocked
from app.core.records.job_conditions import Link
from app.core.run.supervisor import stop_process
from app.core.session.receiver import ReceiverLimits
from app.core.transport.doorway import TICKET_BYTES, admission
from app.core.transport.wire import FrameReader, FrameType, PeerTimeout, send_frame
from app.core.vocab import LinkEmulation

#: A bound that only catches a hang: a loaded CI machine may be slow, never this slow.
HANG_SECONDS = 5.0


def _line(delay_ms: float, rate_kbit: float | None, jitter_ms: float = 0.0) -> DelayLine:
    return DelayLine(
        delay_ms / 1000, jitter_ms / 1000, None if rate_kbit is None else rate_kbit * 1000, random.Random(0)
    )


def _link(delay_ms: float, rate_kbit: float | None = None) -> Link:
    return Link(
        name=None,
        delay_ms=delay_ms,
        jitter_ms=0.0,
        rate_kbit_up=rate_kbit,
        rate_kbit_down=rate_kbit,
        loss_percent=0.0,
        emulation=LinkEmulation.DELAY_LINE,
    )


@contextmanager
def _relayed(up: DelayLine, down: DelayLine) -> Iterator[tuple[socket.socket, socket.socket, Relay]]:
    """(sender end, receiver end, relay): the relay runs on a thread between two socket pairs;
    closing both ends lets it finish, and the thread is joined before the test goes on."""
    sender, link_client = socket.socketpair()
    link_server, receiver = socket.socketpair()
    relay = Relay(link_client, link_server, up, down)
    outcome: list[str | None] = []
    thread = threading.Thread(target=lambda: outcome.append(relay.run()), name="test-relay")
    thread.start()
    try:
        for end in (sender, receiver):
            end.settimeout(HANG_SECONDS)
        yield sender, receiver, relay
    finally:
        sender.close()
        receiver.close()
        thread.join(HANG_SECONDS)
        link_client.close()
        link_server.close()
    assert not thread.is_alive(), "the relay did not end after both ends closed"


def _receive(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            break
        data += chunk
    return bytes(data)


def test_a_round_trip_takes_both_delays_and_both_serializations() -> None:
    delay_ms, up_kbit, down_kbit = 2.0, 1000.0, 500.0
    request, reply = os.urandom(1000), os.urandom(100)
    model = 2 * delay_ms / 1000 + 8 * len(request) / (up_kbit * 1000) + 8 * len(reply) / (down_kbit * 1000)
    with _relayed(_line(delay_ms, up_kbit), _line(delay_ms, down_kbit)) as (sender, receiver, relay):
        for _ in range(3):
            start = time.monotonic()
            sender.sendall(request)
            assert _receive(receiver, len(request)) == request
            receiver.sendall(reply)
            assert _receive(sender, len(reply)) == reply
            rtt = time.monotonic() - start
            assert model <= rtt < model + HANG_SECONDS  # never early; late only by the machine's wake-ups
    assert relay.up.line.bytes_in == 3000 and relay.down.line.bytes_in == 300


def test_a_jittered_stream_arrives_whole_and_in_order() -> None:
    stream = os.urandom(200_000)
    with _relayed(_line(1.0, None, jitter_ms=1.0), _line(1.0, None)) as (sender, receiver, _):
        writer = threading.Thread(
            target=lambda: [sender.sendall(stream[k : k + 997]) for k in range(0, len(stream), 997)]
        )
        writer.start()
        try:
            assert _receive(receiver, len(stream)) == stream
        finally:
            writer.join(HANG_SECONDS)


def test_the_end_of_stream_crosses_the_link_and_the_relay_ends() -> None:
    with _relayed(_line(2.0, 800.0), _line(2.0, None)) as (sender, receiver, relay):
        sender.sendall(b"last words")
        sender.shutdown(socket.SHUT_WR)
        assert _receive(receiver, 100) == b"last words"  # then EOF: the end followed the bytes
        receiver.shutdown(socket.SHUT_WR)
        assert sender.recv(1) == b""
    assert relay.up.done and relay.down.done


@pytest.mark.parametrize("stretched", [False, True])
def test_a_slow_body_is_only_in_time_for_a_receiver_whose_limits_know_the_link(stretched: bool) -> None:
    """50 kB at 800 kbit/s takes at least 0.5 s: loopback's 1 MB/s floor calls that a stall."""
    link = _link(0.0, rate_kbit=800.0)
    limits = ReceiverLimits(idle_timeout=0.3)
    if stretched:
        limits = limits_over_link(limits, link)
    body = os.urandom(50_000)
    up, down = delay_lines(link, seed=0)
    with _relayed(up, down) as (sender, receiver, _):
        reader = FrameReader(receiver, 64 * 1024, idle_timeout=limits.idle_timeout, min_rate=limits.min_rate)
        send_frame(sender, FrameType.MESSAGE, [body])
        if stretched:
            assert bytes(reader.expect(FrameType.MESSAGE)) == body
        else:
            with pytest.raises(PeerTimeout):
                reader.read()


# --- the link process -------------------------------------------------------------------------


@contextmanager
def _link_process(delay_ms: float) -> Iterator[tuple[Any, Any, socket.socket]]:
    """(process, its pipe, the fake receiver's listening socket) for a link to that socket."""
    receiver = socket.create_server(("127.0.0.1", 0))
    receiver.settimeout(HANG_SECONDS)
    context = child_context()
    pipe, send = context.Pipe(duplex=False)
    process = context.Process(
        target=link_main,
        args=(send, LinkPlan(_link(delay_ms), receiver.getsockname()[1], 1, ticket=TICKET)),
        daemon=True,
    )
    with stop_signals_blocked():
        process.start()
    send.close()
    try:
        yield process, pipe, receiver
    finally:
        stop_process(process)
        pipe.close()
        receiver.close()


TICKET = b"t" * TICKET_BYTES


def _admitted(port: int) -> socket.socket:
    """A connection to the link that presents the job's ticket, as the job's sender does."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=HANG_SECONDS)
    sock.sendall(admission(TICKET))
    return sock


def _listening_port(pipe: Any) -> int:
    assert pipe.poll(30), "the link never reported its port"
    message = pipe.recv()
    assert isinstance(message, Listening)
    return message.port


def test_the_link_process_relays_one_connection_and_reports_its_end() -> None:
    with _link_process(delay_ms=1.0) as (process, pipe, receiver):
        with _admitted(_listening_port(pipe)) as sender:
            accepted, _ = receiver.accept()
            with accepted:
                accepted.settimeout(HANG_SECONDS)
                sender.sendall(b"hello")
                assert _receive(accepted, 5) == b"hello"
                accepted.sendall(b"ok")
                assert _receive(sender, 2) == b"ok"
                sender.shutdown(socket.SHUT_WR)
                assert accepted.recv(1) == b""
        assert pipe.poll(HANG_SECONDS)
        done = pipe.recv()
        assert isinstance(done, LinkDone)
        assert (done.bytes_up, done.bytes_down, done.broken) == (5, 2, None)
        assert done.segments >= 2 and 0.0 <= done.late_mean_s <= done.late_max_s and done.cpu_s > 0
        process.join(HANG_SECONDS)
        assert process.exitcode == 0


def test_stopping_the_link_with_bytes_in_flight_delivers_none_and_leaves_no_process() -> None:
    with _link_process(delay_ms=60_000.0) as (process, pipe, receiver):
        with _admitted(_listening_port(pipe)) as sender:
            accepted, _ = receiver.accept()  # the link took the sender and connected onwards
            with accepted:
                accepted.settimeout(HANG_SECONDS)
                sender.sendall(b"x" * 10_000)  # a minute from the far end
                pid = process.pid
                process.terminate()  # what the supervisor's stop_process sends first
                process.join(HANG_SECONDS)
                assert process.exitcode == -signal.SIGTERM  # stopped, not finished
                assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
                try:
                    assert accepted.recv(1) == b""  # nothing ever delivered: the link's end closed
                except ConnectionResetError:
                    pass


@pytest.mark.parametrize("what", ["no sender", "no receiver"])
def test_a_link_that_cannot_connect_fails_with_the_reason(what: str) -> None:
    receiver = socket.create_server(("127.0.0.1", 0))
    port = receiver.getsockname()[1]
    receiver.close()  # nothing listens there any more
    context = child_context()
    pipe, send = context.Pipe(duplex=False)
    plan = LinkPlan(_link(1.0), port, 1, accept_timeout=0.2 if what == "no sender" else 30.0, ticket=TICKET)
    process = context.Process(target=link_main, args=(send, plan), daemon=True)
    with stop_signals_blocked():
        process.start()
    send.close()
    try:
        link_port = _listening_port(pipe)
        if what == "no receiver":
            _admitted(link_port).close()
        assert pipe.poll(HANG_SECONDS)
        error = pipe.recv().error
        expected = "no sender connected within 0.2 s" if what == "no sender" else "cannot connect to the receiver"
        assert error.startswith(f"link: {expected}")
    finally:
        stop_process(process)
        pipe.close()

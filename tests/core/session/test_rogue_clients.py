"""A rogue client never crashes the receiver nor makes it allocate a length it claims.

In-process tests run `ReceiverSession.serve()` in a thread on one end of a loopback
TCP connection and play the rogue on the other; test_rogue_receiver_process.py attacks a
real loopback receiver process.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.contracts.events import SizeMeasured
from app.core.schemes import registry
from app.core.session import receiver as receiver_module
from app.core.session.protocol import SEED_BYTES, SIZE_FRAME, JobDescription, JobRejected, decode_ack
from app.core.session.receiver import ReceiverLimits, ReceiverSession
from app.core.session.sender import SenderSession
from app.core.transport.auth import NONCE_BYTES, TOKEN_BYTES, AuthenticationFailed, authenticate_server, client_proof
from app.core.transport.wire import (
    HEADER_SIZE,
    MAX_CONTROL_FRAME,
    READ_AHEAD,
    BadMagic,
    ConnectionClosed,
    FrameReader,
    FrameTooLarge,
    FrameType,
    MalformedBody,
    PeerError,
    PeerTimeout,
    TruncatedFrame,
    UnexpectedFrame,
    WireError,
    decode_header,
    encode_header,
)
from tests.core.session.rogue_harness import JOB, JOB_CAPACITY, LIMITS, RECEIVER_TO_SENDER, TOKEN, frame, job_body
from tests.helpers.plans import job_plan

# --- in-process harness --------------------------------------------------------------


class Connection:
    """A loopback TCP connection whose server end runs ReceiverSession.serve() in a thread."""

    def __init__(self, limits: ReceiverLimits = LIMITS, token: bytes = TOKEN) -> None:
        with socket.create_server(("127.0.0.1", 0)) as listener:
            self.client = socket.create_connection(listener.getsockname(), timeout=5)
            self.server, _ = listener.accept()
        self.result: JobDescription | None = None
        self.error: BaseException | None = None
        self.started = time.monotonic()
        self.finished_at = 0.0
        self.reader = FrameReader(self.client, MAX_CONTROL_FRAME, idle_timeout=5)
        self.thread = threading.Thread(target=self._serve, args=(limits, token), daemon=True)
        self.thread.start()

    def _serve(self, limits: ReceiverLimits, token: bytes) -> None:
        try:
            self.result = ReceiverSession(self.server, token, limits).serve()
        except BaseException as exc:  # noqa: BLE001 - inspected by the test
            self.error = exc
        finally:
            self.finished_at = time.monotonic()

    def send(self, kind: FrameType, body: bytes = b"") -> None:
        self.client.sendall(frame(kind, body))

    def outcome(self, timeout: float = 10) -> BaseException | None:
        """Wait for serve() to end; its exception (None after a clean BYE)."""
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "the receiver is still serving"
        try:  # hang up as receiver_main does, but keep the read side to inspect what was left unread
            self.server.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        return self.error

    def authenticate(self) -> None:
        authenticate_server(self.client, self.reader, TOKEN, "test receiver")
        assert bytes(self.reader.expect(FrameType.READY)) == b""

    def challenge(self, nonce: bytes = bytes(NONCE_BYTES)) -> bytes:
        """Send a HELLO; the receiver's nonce from its CHALLENGE."""
        self.send(FrameType.HELLO, nonce)
        return bytes(self.reader.expect(FrameType.CHALLENGE))

    def start_job(self) -> int:
        self.authenticate()
        self.send(FrameType.JOB, JOB.encode())
        return int(json.loads(bytes(self.reader.expect(FrameType.JOB_OK)))["capacity"])

    def unread_on_server(self, expected: int) -> bytes:
        """After serve() ended: what it left unread (read up to `expected` bytes, then check for more)."""
        self.server.settimeout(5)
        data = bytearray()
        while len(data) < expected:
            chunk = self.server.recv(expected - len(data))
            if not chunk:
                break
            data += chunk
        self.server.setblocking(False)
        try:
            more = self.server.recv(65536)
        except BlockingIOError:
            more = b""
        return bytes(data + more)

    def left_of(self, after: bytes) -> bytes:
        """What serve() left unread of `after`, the bytes sent behind the frame that ended the
        session. After the job its reader reads ahead (wire.READ_AHEAD bytes per receive),
        so a head of `after` may have been taken with that frame, never more than that, and
        never acted on (the session ended with the frame's error)."""
        self.client.shutdown(socket.SHUT_WR)  # the end of what the rogue sends
        left = self.unread_on_server(len(after))
        assert after.endswith(left) and len(after) - len(left) <= READ_AHEAD
        return left

    def close(self) -> None:
        for sock in (self.client, self.server):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.thread.join(10)
        self.client.close()
        self.server.close()


@pytest.fixture
def open_connection() -> Iterator[Callable[..., Connection]]:
    connections: list[Connection] = []

    def make(limits: ReceiverLimits = LIMITS, token: bytes = TOKEN) -> Connection:
        connection = Connection(limits, token)
        connections.append(connection)
        return connection

    yield make
    for connection in connections:
        connection.close()
        assert not connection.thread.is_alive()


def assert_server_closed_silently(conn: Connection) -> None:
    """The receiver answered nothing: once its end closes, the rogue reads only EOF."""
    conn.server.close()
    conn.client.settimeout(5)
    assert conn.client.recv(4096) == b""


# --- before authentication -----------------------------------------------------------


def test_the_harness_serves_a_genuine_sender(open_connection: Callable[..., Connection]) -> None:
    """Positive control: the same harness completes a real session."""
    conn = open_connection()
    plan = job_plan(
        "aes-gcm",
        "cryptography",
        {},
        [64],
        samples=3,
        warmup=1,
        keygen_samples=1,
        pause_ms=0,
        tamper=2,
        host="127.0.0.1",
        port=0,
        token=TOKEN,
        reply_timeout=10,
    )
    events: list[Any] = []
    SenderSession(conn.client, plan, events.append).run()
    assert conn.outcome() is None
    assert conn.result == JOB
    measured = [e for e in events if isinstance(e, SizeMeasured)]
    assert len(measured) == 1 and measured[0].checked == 4 and measured[0].tamper_rejected == 2


@pytest.mark.parametrize(
    "token",
    [
        bytes(TOKEN_BYTES),  # right length, wrong bytes
        TOKEN[:-1] + bytes([TOKEN[-1] ^ 1]),  # one bit off
        TOKEN[:-1],  # a prefix of the right token
        b"",
    ],
    ids=["zeros", "one-bit", "prefix", "empty"],
)
def test_wrong_token_is_refused_without_reading_further(
    open_connection: Callable[..., Connection], token: bytes
) -> None:
    conn = open_connection()
    nonce = os.urandom(NONCE_BYTES)
    server_nonce = conn.challenge(nonce)
    after = frame(FrameType.JOB, JOB.encode()) + frame(FrameType.SETUP) + frame(FrameType.BYE)
    conn.client.sendall(frame(FrameType.PROOF, client_proof(token, nonce, server_nonce)) + after)
    error = conn.outcome()
    assert isinstance(error, AuthenticationFailed)
    assert "wrong token" in str(error)
    assert conn.unread_on_server(len(after)) == after  # not one byte past the PROOF was read
    assert_server_closed_silently(conn)  # no WELCOME, no ERROR


def test_a_proof_replayed_from_another_connection_is_refused(open_connection: Callable[..., Connection]) -> None:
    """A proof covers the receiver's fresh nonce: one seen on the wire opens no other connection."""
    nonce = bytes(NONCE_BYTES)
    first = open_connection()
    proof = client_proof(TOKEN, nonce, first.challenge(nonce))
    first.send(FrameType.PROOF, proof)
    assert len(bytes(first.reader.expect(FrameType.WELCOME))) == 32
    second = open_connection()
    assert second.challenge(nonce) != bytes(NONCE_BYTES)  # a fresh nonce, so the old proof is stale
    second.send(FrameType.PROOF, proof)
    error = second.outcome()
    assert isinstance(error, AuthenticationFailed) and "wrong token" in str(error)
    assert_server_closed_silently(second)


def test_the_token_never_crosses_the_wire(open_connection: Callable[..., Connection]) -> None:
    """Everything either end sends in a genuine session holds neither the token nor its hex."""
    conn = open_connection()
    sent = bytearray()
    received = bytearray()
    real_send, real_sendmsg, real_recv_into = conn.client.send, conn.client.sendmsg, conn.client.recv_into

    class Tap:
        family = conn.client.family

        def send(self, data: bytes) -> int:  # small frames, joined
            n = real_send(data)
            sent.extend(data[:n])
            return n

        def sendmsg(self, buffers: list[Any]) -> int:
            n = real_sendmsg(buffers)
            sent.extend(b"".join(bytes(b) for b in buffers)[:n])
            return n

        def recv_into(self, view: memoryview, nbytes: int = 0) -> int:
            n = real_recv_into(view, nbytes)
            received.extend(view[:n])
            return n

        def __getattr__(self, name: str) -> Any:
            return getattr(conn.client, name)

    plan = job_plan(
        "aes-gcm",
        "cryptography",
        {},
        [64],
        samples=2,
        warmup=0,
        keygen_samples=1,
        pause_ms=0,
        tamper=1,
        host="127.0.0.1",
        port=0,
        token=TOKEN,
        reply_timeout=10,
    )
    SenderSession(Tap(), plan, lambda event: None).run()  # type: ignore[arg-type]
    assert conn.outcome() is None
    assert len(sent) > 100 and len(received) > 100  # the tap saw the session
    for secret in (TOKEN, TOKEN.hex().encode(), TOKEN[:16], TOKEN[16:]):
        assert secret not in sent and secret not in received


@pytest.mark.parametrize("nonce", [b"", bytes(NONCE_BYTES - 1)], ids=["empty", "short"])
def test_hello_of_the_wrong_length_is_refused(open_connection: Callable[..., Connection], nonce: bytes) -> None:
    conn = open_connection()
    conn.send(FrameType.HELLO, nonce)
    error = conn.outcome()
    assert isinstance(error, AuthenticationFailed)
    assert f"HELLO of {len(nonce)} bytes, expected {NONCE_BYTES}" in str(error)
    assert_server_closed_silently(conn)


def test_a_frame_other_than_proof_after_the_challenge_is_refused(open_connection: Callable[..., Connection]) -> None:
    conn = open_connection()
    conn.challenge()
    conn.send(FrameType.JOB, JOB.encode()[:NONCE_BYTES])
    error = conn.outcome()
    assert isinstance(error, AuthenticationFailed)
    assert "frame after CHALLENGE was JOB, not PROOF" in str(error)
    assert_server_closed_silently(conn)


def test_a_dribbled_handshake_is_dropped_at_the_hello_timeout_in_total(
    open_connection: Callable[..., Connection],
) -> None:
    """Regression: each frame had its own deadline, so a peer pacing its HELLO just under the
    timeout per frame held the receiver for about twice the hello timeout (19 s of a 10 s one).
    The handshake now has one deadline. Paced so that each frame alone would beat the timeout."""
    limits = ReceiverLimits(hello_timeout=1.0, idle_timeout=2)
    conn = open_connection(limits)
    data = frame(FrameType.HELLO, bytes(NONCE_BYTES))
    pace = threading.Event()  # never set: wait() paces the dribble
    sent = 0
    for part in (data[:HEADER_SIZE], data[HEADER_SIZE:]):
        step = 0.8 * limits.hello_timeout / len(part)  # each frame part within 0.8 of the timeout
        for byte in part:
            if not conn.thread.is_alive():
                break
            try:
                conn.client.sendall(bytes([byte]))
            except OSError:
                break
            sent += 1
            pace.wait(step)
    error = conn.outcome(timeout=10)
    assert isinstance(error, PeerTimeout), repr(error)
    assert sent < len(data), "the whole HELLO dribbled in: the deadline was per frame"
    assert conn.finished_at - conn.started < limits.hello_timeout + 0.5


@pytest.mark.parametrize("kind", [FrameType.JOB, FrameType.SETUP, FrameType.WELCOME, FrameType.BYE, FrameType.MESSAGE])
def test_first_frame_must_be_hello(open_connection: Callable[..., Connection], kind: FrameType) -> None:
    conn = open_connection()
    after = frame(FrameType.HELLO, TOKEN)  # a genuine HELLO, too late
    conn.client.sendall(frame(kind, TOKEN[:10]) + after)
    error = conn.outcome()
    assert isinstance(error, AuthenticationFailed)
    assert f"first frame was {kind.name}, not HELLO" in str(error)
    # Refused at its header: not even that frame's body was read.
    assert conn.unread_on_server(10 + len(after)) == TOKEN[:10] + after
    assert_server_closed_silently(conn)


def test_error_frame_first_is_a_wire_error_and_nothing_more_is_read(open_connection: Callable[..., Connection]) -> None:
    conn = open_connection()
    after = frame(FrameType.HELLO, TOKEN)
    conn.client.sendall(frame(FrameType.ERROR, b"hi") + after)
    error = conn.outcome()
    assert isinstance(error, AuthenticationFailed)
    assert conn.unread_on_server(2 + len(after)) == b"hi" + after  # refused at its header
    assert_server_closed_silently(conn)


@pytest.mark.parametrize(
    "garbage",
    [
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + os.urandom(64),  # a TLS ClientHello
        b"SSH-2.0-OpenSSH_9.6\r\n",
    ],
    ids=["http", "tls", "ssh"],
)  # stable ids: the TLS random would differ per collection
def test_garbage_is_bad_magic(open_connection: Callable[..., Connection], garbage: bytes) -> None:
    conn = open_connection()
    conn.client.sendall(garbage)
    error = conn.outcome()
    assert isinstance(error, BadMagic)
    assert conn.unread_on_server(len(garbage) - HEADER_SIZE) == garbage[HEADER_SIZE:]
    assert_server_closed_silently(conn)


@pytest.mark.parametrize("kind", [FrameType.HELLO, FrameType.MESSAGE, FrameType.JOB])
@pytest.mark.parametrize("length", [2**63, 2**64 - 1, TOKEN_BYTES + 1])
def test_huge_claim_before_auth_is_too_large(
    open_connection: Callable[..., Connection], kind: FrameType, length: int
) -> None:
    conn = open_connection()
    body = b"\xaa" * 4096
    conn.client.sendall(encode_header(kind, length) + body)
    error = conn.outcome()
    assert isinstance(error, FrameTooLarge)
    assert f"claims {length} bytes; the limit is {TOKEN_BYTES}" in str(error)
    assert conn.unread_on_server(len(body)) == body  # the claimed body was never read
    assert_server_closed_silently(conn)


@pytest.mark.parametrize(
    ("sent", "message"),
    [
        (b"", "closed the connection"),
        (frame(FrameType.HELLO, TOKEN)[:7], f"after 7 of {HEADER_SIZE} bytes"),
        (frame(FrameType.HELLO, TOKEN)[: HEADER_SIZE + 10], f"after 10 of {TOKEN_BYTES} bytes"),
    ],
    ids=["nothing", "half-header", "half-token"],
)
def test_truncated_then_closed(open_connection: Callable[..., Connection], sent: bytes, message: str) -> None:
    conn = open_connection()
    conn.client.sendall(sent)
    conn.client.shutdown(socket.SHUT_WR)
    error = conn.outcome()
    assert isinstance(error, ConnectionClosed if not sent else TruncatedFrame)
    assert message in str(error)
    assert_server_closed_silently(conn)


def test_silent_peer_times_out_after_hello_timeout(open_connection: Callable[..., Connection]) -> None:
    conn = open_connection()
    error = conn.outcome(timeout=10)
    assert isinstance(error, PeerTimeout)
    waited = conn.finished_at - conn.started
    assert LIMITS.hello_timeout * 0.9 <= waited < LIMITS.hello_timeout + 3
    assert_server_closed_silently(conn)


def test_silent_peer_after_welcome_times_out(open_connection: Callable[..., Connection]) -> None:
    conn = open_connection()
    conn.authenticate()
    assert isinstance(conn.outcome(timeout=10), PeerTimeout)


# --- the job description -------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "named"),
    [
        (b"not json {", "not UTF-8 JSON"),
        (b"\xff\xfe{}", "not UTF-8 JSON"),
        (b"[1, 2, 3]", "job description job"),
        (job_body(scheme="rot13"), "unknown scheme 'rot13'"),
        (job_body(evil=True), "job description evil: Extra inputs are not permitted"),
        (job_body(message_sizes=[64, 1025]), "message size 1025 is outside 0..1024 bytes"),
        (job_body(message_sizes=[-1]), "message size -1 is outside"),
        (job_body(message_sizes=[]), "message_sizes"),
        (job_body(message_sizes=["64"]), "message_sizes.0"),
        (job_body(params={"key_bits": 1.5}), "params.key_bits"),
        (job_body(params={"key_bits": "big"}), "parameter 'key_bits' of aes-gcm must be one of 128, 192, 256"),
        (job_body(params={"key_bits": [256]}), "params.key_bits"),
        (job_body(params=[256]), "params"),
        (job_body(params={"rounds": 3}), "rounds"),
        (job_body(backend="openssl-9"), "openssl-9"),
    ],
    ids=lambda v: v[:24].decode("utf-8", "replace") if isinstance(v, bytes) else None,
)
def test_malformed_job_is_reported_and_rejected(
    open_connection: Callable[..., Connection], body: bytes, named: str
) -> None:
    conn = open_connection(ReceiverLimits(max_message=1024, hello_timeout=0.5, idle_timeout=2))
    conn.authenticate()
    conn.send(FrameType.JOB, body)
    with pytest.raises(PeerError) as reported:
        conn.reader.read()
    error = conn.outcome()
    assert isinstance(error, JobRejected)
    assert named in str(error)
    assert str(reported.value) == f"peer reported: {error}"


def test_job_larger_than_a_control_frame_is_too_large(open_connection: Callable[..., Connection]) -> None:
    conn = open_connection()
    conn.authenticate()
    conn.client.sendall(encode_header(FrameType.JOB, 2**63) + b"{" * 1000)
    error = conn.outcome()
    assert isinstance(error, FrameTooLarge)
    assert f"the limit is {MAX_CONTROL_FRAME}" in str(error)
    assert conn.unread_on_server(1000) == b"{" * 1000


def test_frame_other_than_job_after_welcome_is_reported(open_connection: Callable[..., Connection]) -> None:
    conn = open_connection()
    conn.authenticate()
    conn.send(FrameType.SETUP)
    error = conn.outcome()
    assert isinstance(error, UnexpectedFrame)
    assert "expected JOB, got SETUP" in str(error)
    with pytest.raises(PeerError, match="expected JOB, got SETUP"):
        conn.reader.read()


# --- after the job: frames out of order ------------------------------------------------


def handshake(conn: Connection) -> None:
    conn.send(FrameType.SETUP)
    public = bytes(conn.reader.expect(FrameType.PUBLIC))[8:]
    message = registry.create("aes-gcm", "cryptography", {}).new_sender().handshake(public)
    conn.send(FrameType.HANDSHAKE, message)
    _, verdict, _ = decode_ack(conn.reader.expect(FrameType.HANDSHAKE_OK))
    assert verdict == 0


@pytest.mark.parametrize(
    ("prelude", "kind", "body", "named"),
    [
        (None, FrameType.MESSAGE, b"\x00" * 60, "payload before a completed handshake"),
        (None, FrameType.TAMPER, b"\x00" * 60, "payload before a completed handshake"),
        (None, FrameType.TRACE, b"\x00" * 60, "payload before a completed handshake"),
        (None, FrameType.HANDSHAKE, b"", "HANDSHAKE before SETUP"),
        (handshake, FrameType.MESSAGE, b"\x00" * 60, "payload before SIZE"),
        (None, FrameType.SIZE, SIZE_FRAME.pack(65, bytes(SEED_BYTES)), "message size 65 is not one of the job's sizes"),
        (None, FrameType.JOB, JOB.encode(), "JOB is not allowed from a sender"),
        (None, FrameType.HELLO, TOKEN, "HELLO is not allowed from a sender"),
        (None, FrameType.ACK, b"\x00" * 9, "ACK is not allowed from a sender"),
    ],
    ids=[
        "message",
        "tamper",
        "trace",
        "handshake",
        "message-before-size",
        "unknown-size",
        "job-again",
        "hello-again",
        "ack",
    ],
)
def test_out_of_order_frame_is_reported_and_ends_the_session(
    open_connection: Callable[..., Connection],
    prelude: Callable[[Connection], None] | None,
    kind: FrameType,
    body: bytes,
    named: str,
) -> None:
    conn = open_connection()
    conn.start_job()
    if prelude is not None:
        prelude(conn)
    after = frame(FrameType.BYE)
    conn.client.sendall(frame(kind, body) + after)
    with pytest.raises(PeerError, match=named):
        conn.reader.read()
    error = conn.outcome()
    assert isinstance(error, UnexpectedFrame)
    assert named in str(error)
    conn.left_of(after)  # the session ended at the bad frame: the BYE behind it was not served


def test_malformed_size_frame_is_reported(open_connection: Callable[..., Connection]) -> None:
    conn = open_connection()
    conn.start_job()
    conn.send(FrameType.SIZE, b"\x00" * 5)
    error = conn.outcome()
    assert isinstance(error, MalformedBody)
    with pytest.raises(PeerError, match="SIZE frame of 5 bytes"):
        conn.reader.read()


@pytest.mark.parametrize("length", [JOB_CAPACITY + 1, 2**63])
def test_ping_larger_than_the_job_capacity_is_too_large(
    open_connection: Callable[..., Connection], length: int
) -> None:
    conn = open_connection()
    capacity = conn.start_job()
    assert capacity == JOB_CAPACITY
    conn.send(FrameType.PING, b"\x01" * 64)  # a ping within the job's capacity is answered
    assert bytes(conn.reader.expect(FrameType.PONG)) == bytes(9)
    body = b"\x02" * 8192
    conn.client.sendall(encode_header(FrameType.PING, length) + body)
    error = conn.outcome()
    assert isinstance(error, FrameTooLarge)
    assert f"PING frame claims {length} bytes; the limit is {capacity}" in str(error)
    assert len(conn.left_of(body)) >= len(body) - READ_AHEAD  # the claimed body was not awaited


# --- property: whatever follows a valid job, serve() ends in a WireError or a BYE -------


class ScriptedSocket:
    """Plays a scripted byte stream to serve(); records what the receiver sends back."""

    family = socket.AF_UNIX  # not TCP: tune() leaves it alone

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0
        self.sent = bytearray()

    def settimeout(self, value: float | None) -> None:
        pass

    def setsockopt(self, *args: Any) -> None:
        pass

    def recv_into(self, view: memoryview, nbytes: int = 0) -> int:
        n = min(nbytes or len(view), len(self.data) - self.pos, 7)
        view[:n] = self.data[self.pos : self.pos + n]
        self.pos += n
        return n

    def send(self, data: bytes) -> int:
        self.sent += data
        return len(data)

    def sendmsg(self, buffers: list[memoryview]) -> int:
        for buf in buffers:
            self.sent += buf
        return sum(len(b) for b in buffers)


ROGUE_FRAMES = st.one_of(
    st.tuples(st.sampled_from(list(FrameType)), st.binary(max_size=48)),
    st.tuples(
        st.just(FrameType.SIZE),
        st.binary(min_size=SEED_BYTES, max_size=SEED_BYTES).map(lambda seed: SIZE_FRAME.pack(64, seed)),
    ),
    st.tuples(
        st.sampled_from([FrameType.SETUP, FrameType.HANDSHAKE, FrameType.PING, FrameType.SIZE_END, FrameType.BYE]),
        st.just(b""),
    ),
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(frames=st.lists(ROGUE_FRAMES, max_size=12), tail=st.binary(max_size=20))
def test_any_frames_after_a_valid_job_end_in_a_wire_error_or_bye(
    frames: list[tuple[FrameType, bytes]], tail: bytes
) -> None:
    # The handshake is a fresh-nonce exchange (tested above); the script starts after it.
    script = frame(FrameType.JOB, JOB.encode())
    script += b"".join(frame(kind, body) for kind, body in frames) + tail
    sock = ScriptedSocket(script)
    try:
        # The receiver collects garbage between sizes (its own process has a small heap);
        # in the test process that is a full collection of pytest's heap per example,
        # ~15 s over the run, and no part of what this test checks.
        with mock.patch.object(receiver_module.gc, "collect", lambda: 0):
            result = ReceiverSession(sock, TOKEN, LIMITS).serve_authenticated()  # type: ignore[arg-type]
    except WireError:
        pass
    else:
        assert result == JOB
        assert FrameType.BYE in [kind for kind, _ in frames]
    # Everything the receiver sent is well-formed frames of the types a receiver may send.
    sent, pos = bytes(sock.sent), 0
    while pos < len(sent):
        header = decode_header(sent[pos : pos + HEADER_SIZE], MAX_CONTROL_FRAME)
        assert header.frame_type in RECEIVER_TO_SENDER
        pos += HEADER_SIZE + header.length
    assert pos == len(sent)

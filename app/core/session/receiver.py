"""The receiver (server) side of a session: authenticate, serve one job, report.

`ReceiverSession` handles one connection: the mutual token handshake of
app.core.transport.auth (a peer that does not prove it holds the token is closed
without a single further byte read or any answer but the challenge), READY, a JOB
frame naming a registry scheme, then the sender's frames in the order the protocol
allows. It times key generation, its handshake and every
open, validates each plaintext against the one derived from the size's seed, and
returns time and verdict in the acknowledgement.

The same class serves the loopback receiver process (`receiver_main`) and
`cryptobench serve` (app.core.serve.server); neither runs a thread beside the
timed code.
"""

from __future__ import annotations

import gc
import hmac
import json
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Protocol

import psutil

from app.core.contracts.events import ChildFailed, Listening, PeerDropped, ReceiverDone, ReceiverMessage
from app.core.measure.harness import child_entry, traced_peak
from app.core.records.job_tcp_info import TcpInfo
from app.core.schemes.base import Receiver, Scheme, SchemeError
from app.core.session.protocol import (
    ACK,
    SIZE_FRAME,
    U64,
    JobDescription,
    JobRejected,
    Verdict,
    encode_ack,
    parse_job,
    plaintext_for,
)
from app.core.transport import tcpinfo
from app.core.transport.auth import ServerHandshake, authenticate_peer
from app.core.transport.doorway import TICKET_BYTES, DescriptorsExhausted, Doorway, TicketThen, admit_one
from app.core.transport.netns import NamespaceError, enter_namespace
from app.core.transport.wire import (
    MAX_CONTROL_FRAME,
    MAX_SESSION_MESSAGE,
    FrameReader,
    FrameTooLarge,
    FrameType,
    MalformedBody,
    PeerTimeout,
    UnexpectedFrame,
    WireError,
    send_error,
    send_frame,
    tune,
)
from app.core.vocab import Family

Log = Callable[[str], None]
PONG_BODY = bytes(ACK.size)  # a pong is as long as an acknowledgement


__all__ = ["LoadServers", "ReceiverLimits", "ReceiverPlan", "ReceiverSession", "RunningLoad", "listen", "receiver_main"]


@dataclass(frozen=True)
class ReceiverLimits:
    """What a receiver accepts from a peer, and how long it waits for one."""

    max_message: int = MAX_SESSION_MESSAGE
    #: The whole handshake (and then the JOB) must arrive within this: a silent or dribbling peer is dropped.
    hello_timeout: float = 10.0
    idle_timeout: float = 300.0  # between frames once the job runs (a sender may seal slowly)
    min_rate: float = 1_000_000.0  # bytes/s below which a peer sending a body is stalled


class RunningLoad(Protocol):
    """A load job's server, started for the job and driven by its generators."""

    def accepted(self) -> dict[str, object]:
        """What JOB_OK tells the sender about it (its port, the nonce of its secrets)."""
        ...

    def await_end(self, sock: socket.socket, reader: FrameReader, log: Log) -> None:
        """Wait until the generators are done and the sender said BYE (or left)."""
        ...

    def stop(self) -> None: ...


class LoadServers(Protocol):
    """Starts a load job's server: handed to the receivers of `serve`, which serve load jobs
    (app.core.serve.load_serve's `LoadServersAt`)."""

    def start(self, token: bytes, job: JobDescription, log: Log) -> RunningLoad: ...


class ReceiverSession:
    """Serves one connection. `serve()` returns the job on a clean BYE, else raises."""

    def __init__(
        self,
        sock: socket.socket,
        token: bytes,
        limits: ReceiverLimits = ReceiverLimits(),
        log: Log | None = None,
        listener: socket.socket | None = None,
        dropped: Log | None = None,
        load_servers: LoadServers | None = None,
    ) -> None:
        self.sock = sock
        #: Starts a load job's server (`serve`'s, app.core.serve.load_serve); None: this receiver
        #: serves no load job (a loopback job's receiver: load jobs start their own server).
        self.load_servers = load_servers
        self.load_server: RunningLoad | None = None
        self.token = token
        self.limits = limits
        self.log = log or (lambda text: None)
        #: Told of each connection closed unserved while a fresh one was awaited (default: log).
        self.dropped = dropped or self.log
        #: Where a fresh-connection job's connections arrive (the loopback receiver's own
        #: listening socket); None: this receiver serves warm connections only.
        self.listener = listener
        self.ticket: bytes | None = None
        self.capacity = MAX_CONTROL_FRAME
        #: TCP_INFO of the size's fresh connections, each from its first segment to its close.
        self._fresh_tcp: list[TcpInfo] = []
        self.job: JobDescription | None = None
        self.scheme: Scheme | None = None
        self.authenticated = False  # True once the peer proved it holds the token (WELCOME sent)
        self.receiver: Receiver | None = None
        self.handshaken = False
        self.expected: bytes | None = None
        self._process = psutil.Process()
        self._cpu_start = 0.0
        self._wall_start = 0.0
        self._tcp_start: tcpinfo.Reading | None = None

    # --- connection phases ----------------------------------------------------------

    def authenticate(self) -> None:
        """The mutual handshake within the hello timeout, or the connection is closed."""
        authenticate_peer(self.sock, self.token, self.limits.hello_timeout)
        self.authenticated = True

    def accept_job(self) -> FrameReader:
        reader = FrameReader(self.sock, MAX_CONTROL_FRAME, idle_timeout=self.limits.hello_timeout)
        body = reader.expect(FrameType.JOB)
        job, scheme, capacity = parse_job(body, self.limits.max_message)
        accepted: dict[str, object] = {"capacity": capacity}
        if job.fresh_connections:
            if self.listener is None:
                raise JobRejected(
                    "fresh connections are served by a loopback job's own receiver; this one serves every "
                    "job on its session's connection"
                )
            self.ticket = secrets.token_bytes(TICKET_BYTES)
            accepted["ticket"] = self.ticket.hex()
        if job.load is not None or scheme.info.family == Family.TLS:  # a server of the job's own
            if self.load_servers is None or job.fresh_connections:
                raise JobRejected(
                    "this receiver serves no load or tls13 job (`cryptobench serve` does, without fresh connections)"
                )
            self.load_server = self.load_servers.start(self.token, job, self.log)
            accepted.update(self.load_server.accepted())
        self.job, self.scheme, self.capacity = job, scheme, capacity
        if not job.tcp_nodelay:
            tune(self.sock, nodelay=False)
        try:
            send_frame(self.sock, FrameType.JOB_OK, [json.dumps(accepted).encode()])
        except BaseException:
            if self.load_server is not None:  # nobody will drive it: not left listening
                self.load_server.stop()
            raise
        self.log(f"serving {scheme.info.label} [{job.backend}], sizes {job.message_sizes}")
        # The job's frames: this reader alone reads the connection from now on, so it may
        # read ahead (header and body of a small frame in one receive).
        return FrameReader(
            self.sock, capacity, idle_timeout=self.limits.idle_timeout, min_rate=self.limits.min_rate, read_ahead=True
        )

    def serve(self) -> JobDescription:
        tune(self.sock)
        self.authenticate()
        return self.serve_authenticated()

    def serve_authenticated(self) -> JobDescription:
        """READY, then the job, on a connection whose peer has proven itself."""
        self.authenticated = True
        send_frame(self.sock, FrameType.READY)
        try:
            reader = self.accept_job()
        except (JobRejected, MalformedBody, UnexpectedFrame) as exc:
            send_error(self.sock, str(exc))
            raise
        if self.load_server is not None:
            assert self.job is not None
            self.load_server.await_end(self.sock, reader, self.log)
            return self.job
        was_enabled = gc.isenabled()
        gc.disable()  # no collector pause inside a timed open; sessions make no cycles
        try:
            while True:
                kind, body = reader.read()
                if kind is FrameType.BYE:
                    assert self.job is not None
                    return self.job
                self._dispatch(kind, body)
        except SchemeError as exc:  # setup or handshake failed in the scheme itself
            send_error(self.sock, f"{type(exc).__name__}: {exc}")
            raise
        except (UnexpectedFrame, MalformedBody, FrameTooLarge) as exc:
            send_error(self.sock, str(exc))
            raise
        finally:
            if was_enabled:
                gc.enable()

    # --- frames -----------------------------------------------------------------------

    def _dispatch(self, kind: FrameType, body: memoryview) -> None:
        handler = self._handlers.get(kind)
        if handler is None:
            raise UnexpectedFrame(f"{kind.name} is not allowed from a sender")
        handler(self, body)

    def _setup(self, body: memoryview) -> None:
        assert self.scheme is not None
        self.receiver = self.scheme.new_receiver()
        self.handshaken = False
        clock = time.perf_counter_ns
        start = clock()
        public = self.receiver.setup()
        elapsed = clock() - start
        send_frame(self.sock, FrameType.PUBLIC, [U64.pack(elapsed), public])

    def _handshake(self, body: memoryview) -> None:
        if self.receiver is None:
            raise UnexpectedFrame("HANDSHAKE before SETUP")
        message = bytes(body)
        clock = time.perf_counter_ns
        start = clock()
        try:
            self.receiver.handshake(message)
        except SchemeError as exc:
            elapsed = clock() - start
            send_frame(
                self.sock, FrameType.HANDSHAKE_OK, encode_ack(elapsed, Verdict.REJECTED, f"{type(exc).__name__}: {exc}")
            )
            return
        elapsed = clock() - start
        self.handshaken = True
        send_frame(self.sock, FrameType.HANDSHAKE_OK, encode_ack(elapsed, Verdict.OK))

    def _size(self, body: memoryview) -> None:
        assert self.job is not None
        if len(body) != SIZE_FRAME.size:
            raise MalformedBody(f"SIZE frame of {len(body)} bytes, expected {SIZE_FRAME.size}")
        size, seed = SIZE_FRAME.unpack(body)
        if size not in self.job.message_sizes:
            raise UnexpectedFrame(f"message size {size} is not one of the job's sizes")
        self.expected = None
        gc.collect()  # between sizes, outside any timed region
        self.expected = plaintext_for(seed, size)
        self._cpu_start = sum(self._process.cpu_times()[:2])
        self._wall_start = time.monotonic()
        self._tcp_start = tcpinfo.read(self.sock)
        self._fresh_tcp = []
        send_frame(self.sock, FrameType.SIZE_OK)

    def _ping(self, body: memoryview) -> None:
        send_frame(self.sock, FrameType.PONG, [PONG_BODY])

    def _open(self, body: memoryview) -> tuple[int, Verdict, str]:
        """Open one payload, timed; validate outside the timed region."""
        if not self.handshaken or self.receiver is None:
            raise UnexpectedFrame("payload before a completed handshake")
        if self.expected is None:
            raise UnexpectedFrame("payload before SIZE")
        clock = time.perf_counter_ns
        start = clock()
        try:
            opened = self.receiver.open(body)
        except SchemeError as exc:
            return clock() - start, Verdict.REJECTED, f"{type(exc).__name__}: {exc}"
        except Exception as exc:  # noqa: BLE001 - reported to the sender, which fails the job
            return clock() - start, Verdict.ERROR, f"{type(exc).__name__}: {exc}"
        elapsed = clock() - start
        if opened != self.expected:
            return elapsed, Verdict.WRONG_PLAINTEXT, "opened plaintext differs from the original"
        return elapsed, Verdict.OK, ""

    def _message(self, body: memoryview) -> None:
        elapsed, verdict, reason = self._open(body)
        send_frame(self.sock, FrameType.ACK, encode_ack(elapsed, verdict, reason))

    def _trace(self, body: memoryview) -> None:
        """A separate, untimed pass: peak Python-heap allocation of one open."""
        peak, (_, verdict, reason) = traced_peak(lambda: self._open(body))
        send_frame(self.sock, FrameType.TRACE_OK, encode_ack(peak, verdict, reason))

    def _size_end(self, body: memoryview) -> None:
        """Report this process's CPU and memory over the size (used by remote runs,
        where the sender's machine cannot watch this process), and its kernel's TCP_INFO
        over the size (used by every session: no other process can read it)."""
        wall = max(1e-9, time.monotonic() - self._wall_start)
        cpu = sum(self._process.cpu_times()[:2]) - self._cpu_start
        summary: dict[str, object] = {
            "cpu_seconds": cpu,
            "wall_seconds": wall,
            "cpu_percent_mean": 100.0 * cpu / wall,
            "rss_bytes": self._process.memory_info().rss,
        }
        if self._tcp_start is not None:  # and what this end's kernel saw meanwhile (TCP_INFO)
            seen = tcpinfo.window(self._tcp_start, tcpinfo.read(self.sock))
            for fresh in self._fresh_tcp:
                seen = tcpinfo.add(seen, fresh)
            summary["tcp_info"] = seen.to_dict()
        send_frame(self.sock, FrameType.SIZE_END_OK, [json.dumps(summary).encode()])

    def _fresh(self, body: memoryview) -> None:
        """One timed exchange on a connection of its own: accept it, check its ticket, answer
        its one frame (a floor ping or a message) on it, count what its kernel saw, close it.

        This end closes first, so the TIME_WAIT of thousands of fresh connections stays
        here, where the listening port needs no new ports, not in the sender's port range.
        """
        if self.ticket is None or self.listener is None:
            raise UnexpectedFrame("FRESH in a job that did not ask for fresh connections")
        side = self._attach(self.listener, self.ticket)
        with side:
            reader = FrameReader(
                side, self.capacity, idle_timeout=self.limits.idle_timeout, min_rate=self.limits.min_rate
            )
            kind, frame = reader.read()
            if kind not in (FrameType.MESSAGE, FrameType.PING):
                raise UnexpectedFrame(f"{kind.name} on a fresh connection (a floor PING or a MESSAGE only)")
            session_sock, self.sock = self.sock, side  # the handler answers on the fresh connection
            try:
                self._dispatch(kind, frame)
            finally:
                self.sock = session_sock
            self._fresh_tcp.append(tcpinfo.window(tcpinfo.NEW_CONNECTION, tcpinfo.read(side)))

    def _attach(self, listener: socket.socket, ticket: bytes) -> socket.socket:
        """The next connection that presents the session's ticket within the hello timeout;
        any other (a stranger, a wrong ticket, silence) is closed and logged. A packet path's
        receiver listens in a namespace only the job's sender can reach, so in practice the
        next connection is the sender's. Its ticket (ATTACH) comes in the same write as the
        timed frame, which stays in the socket for the caller to read: nothing is answered
        before it, so the connection's first flight is the timed one."""
        deadline = time.monotonic() + self.limits.hello_timeout
        while (left := deadline - time.monotonic()) > 0:
            listener.settimeout(left)
            try:
                side, address = listener.accept()
            except TimeoutError:
                break
            try:
                tune(side, nodelay=self.job is None or self.job.tcp_nodelay)
                presented = FrameReader(side, TICKET_BYTES, idle_timeout=max(0.01, left)).expect(FrameType.ATTACH)
                if not hmac.compare_digest(bytes(presented), ticket):
                    raise MalformedBody("a fresh connection presented the wrong ticket")
            except (WireError, OSError) as exc:
                side.close()
                self.dropped(f"closed a connection from {address[0]}: {exc}")
                continue
            return side
        raise PeerTimeout(f"the sender's fresh connection did not arrive within {self.limits.hello_timeout:g} s")

    _handlers: dict[FrameType, Callable[[ReceiverSession, memoryview], None]] = {
        FrameType.SETUP: _setup,
        FrameType.HANDSHAKE: _handshake,
        FrameType.SIZE: _size,
        FrameType.PING: _ping,
        FrameType.MESSAGE: _message,
        FrameType.TAMPER: _message,
        FrameType.TRACE: _trace,
        FrameType.SIZE_END: _size_end,
        FrameType.FRESH: _fresh,
    }


# --- the loopback receiver process ----------------------------------------------------


@dataclass(frozen=True)
class ReceiverPlan:
    """What the runner hands the loopback receiver process."""

    token: bytes
    limits: ReceiverLimits = ReceiverLimits()
    #: How long to wait for the sender's connection before giving up.
    accept_timeout: float = 60.0
    bind: str = "127.0.0.1"
    #: A packet link's receiver end (app.core.transport.netns): the network namespace to listen
    #: in, at `bind` on its device. None: the receiver's own namespace.
    namespace: str | None = None
    #: The congestion control the receiver's sockets use (TCP_CONGESTION); None: the default.
    congestion_control: str | None = None
    #: What the job's sender presents first (app.core.transport.doorway's admission), before
    #: the token handshake: it marks the sender's connection as the job's own at once, so no
    #: stranger's flood can push it out. Empty: the handshake alone (a packet path's receiver,
    #: in a namespace only the job's sender reaches).
    ticket: bytes = field(default=b"", repr=False)
    #: The job opens a connection per timed exchange (app.core.session.protocol's FRESH):
    #: the listener stays open for them once the sender is in. Otherwise it closes then.
    fresh_connections: bool = False


def listen(bind: str, port: int, congestion_control: str | None = None, backlog: int = 16) -> socket.socket:
    """A listening socket. `backlog` bounds the connections the kernel holds until accept():
    a loopback receiver has one client; a server open to many passes more (`serve`)."""
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    server = socket.socket(family, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if congestion_control is not None:  # an accepted connection inherits it
        server.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, congestion_control.encode())
    server.bind((bind, port))
    server.listen(backlog)
    return server


def receiver_main(conn: Connection, plan: ReceiverPlan) -> None:
    """Entry point of a loopback receiver process (multiprocessing spawn target).

    Sends `Listening(port)` once listening, then `ReceiverDone()` after a clean job or
    `ChildFailed(text)`; each connection with a wrong token is closed with a
    `PeerDropped` line, and the receiver keeps waiting for the right one, until
    `accept_timeout`.
    """
    child_entry(
        conn, lambda emit: serve_one_sender(plan, emit), describe=lambda exc: f"receiver: {type(exc).__name__}: {exc}"
    )


def serve_one_sender(plan: ReceiverPlan, emit: Callable[[ReceiverMessage], None]) -> None:
    """Listen on a free port, serve the first connection that proves it holds the token,
    and report the outcome (the body of `receiver_main`)."""
    if plan.namespace is not None:
        try:
            enter_namespace(plan.namespace)
        except NamespaceError as exc:
            emit(ChildFailed(f"receiver could not enter the packet link's namespace: {exc}"))
            return
    try:
        server = listen(plan.bind, 0, plan.congestion_control)
    except OSError as exc:
        emit(ChildFailed(f"receiver could not listen on {plan.bind}: {exc.strerror or exc}"))
        return
    with server:
        emit(Listening(server.getsockname()[1]))
        emit(_serve_until_done(server, plan, emit))


def _serve_until_done(
    server: socket.socket, plan: ReceiverPlan, emit: Callable[[ReceiverMessage], None]
) -> ReceiverDone | ChildFailed:
    """Admit the first connection that proves it holds the token, side by side with any
    others (a stranger's silence delays no one), then serve it. The door closes once the
    sender is in: the listener goes away, so no later connection reaches this job. A job
    of fresh connections keeps it for them (they run over a packet link, whose receiver
    listens in a namespace only the job's sender can reach; each presents the session's
    ticket)."""
    doorway = Doorway(
        server,
        lambda: TicketThen(plan.ticket, ServerHandshake(plan.token)) if plan.ticket else ServerHandshake(plan.token),
        plan.limits.hello_timeout,
        lambda text: emit(PeerDropped(text)),
        who="receiver",
    )
    try:
        sock = admit_one(doorway, time.monotonic() + plan.accept_timeout)
    except DescriptorsExhausted as exc:
        doorway.close()
        return ChildFailed(exc.strerror or str(exc))
    if plan.fresh_connections:
        doorway.drop_pending()
    else:
        doorway.close()
    if sock is None:
        return ChildFailed(f"no sender connected within {plan.accept_timeout:g} s")
    with sock:
        session = ReceiverSession(
            sock,
            plan.token,
            plan.limits,
            listener=server if plan.fresh_connections else None,
            dropped=lambda text: emit(PeerDropped(f"receiver {text}")),
        )
        try:
            tune(sock)
            session.serve_authenticated()
        except (WireError, JobRejected, SchemeError, OSError) as exc:
            return ChildFailed(f"receiver: {type(exc).__name__}: {exc}")
        return ReceiverDone()

"""The tls13 job's server process: a control connection, then one TLS connection per handshake.

It listens on one port (on loopback, or in the receiver's namespace of a packet path),
admits the job's client on its control connection (the admission ticket where the port
is reachable by others, then the token proof: app.core.transport.doorway), learns the job
(JOB: the parameters, through the registry), makes its certificate chain in memory and
answers with its trust anchor. From then on every new connection is a TLS one: the
doorway reads its first record and admits it only when it is the job's ClientHello
(app.core.tls.admission), side by side with strangers, which are closed and named
(`PeerDropped`). An admitted connection is served at once, whole: the handshake (the
server's CPU time in it counted: its thread's CPU clock, which waiting does not advance),
the size's request read and compared, the response written, close_notify, and the server
closes first (its TIME_WAIT stays here). SIZE_END returns what it saw of each connection.

`TlsServer` holds no socket of its own but the ones it is handed, so a load server could
serve the job's connections from its own loop with `ServerSide` (app.core.tls.sides).
"""

from __future__ import annotations

import json
import selectors
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from OpenSSL import SSL

from app.core.contracts.events import ChildFailed, Listening, PeerDropped, ReceiverDone, ReceiverMessage
from app.core.measure.harness import child_entry
from app.core.records.job_tcp_info import TcpInfo
from app.core.schemes.tls13 import Tls13Scheme
from app.core.tls import stack
from app.core.tls.admission import ClientHelloCheck
from app.core.tls.certificates import SERVER_NAME, Chain, anchor_from_der, make_chain
from app.core.tls.control import (
    SIZE_FRAME,
    UNFINISHED,
    ServerConnection,
    ServerReport,
    TlsJob,
    TlsPeerError,
    alpn_for,
    parse_job,
)
from app.core.tls.data import DataMismatch, read_exact, request_for, response_for
from app.core.tls.handshake import HandshakeFailed, describe_error, drain
from app.core.tls.sides import ServerSide
from app.core.transport import tcpinfo
from app.core.transport.auth import ServerHandshake
from app.core.transport.doorway import DescriptorsExhausted, Doorway, TicketThen, admit_one
from app.core.transport.netns import NamespaceError, enter_namespace
from app.core.transport.wire import (
    MAX_CONTROL_FRAME,
    FrameReader,
    FrameType,
    UnexpectedFrame,
    WireError,
    send_error,
    send_frame,
    tune,
)

#: Bytes one receive takes from a TLS connection.
RECEIVE = 64 * 1024


@dataclass(frozen=True)
class TlsServerPlan:
    """What the supervisor hands the tls13 server process."""

    token: bytes = field(repr=False)
    #: The job's admission ticket on its control connection (empty: the port is in a
    #: namespace only the job's client reaches).
    ticket: bytes = field(default=b"", repr=False)
    bind: str = "127.0.0.1"
    namespace: str | None = None
    congestion_control: str | None = None
    #: The control connection's token proof and JOB; each TLS connection's first record.
    hello_timeout: float = 10.0
    #: Any one wait within a TLS connection, and between control frames.
    timeout: float = 300.0
    #: How long to wait for the client's control connection.
    accept_timeout: float = 60.0
    #: Where `cryptobench serve` reads when the client last reached this server (a shared
    #: double of CLOCK_MONOTONIC, as a load server's): a job whose control connection is quiet
    #: while its handshakes run is not taken for a silent client. None: nobody reads it.
    heard: Any = field(default=None, repr=False, compare=False)


def listen(bind: str, congestion_control: str | None) -> socket.socket:
    """A listening socket on a free port of `bind` (its connections inherit the congestion control)."""
    server = socket.socket(socket.AF_INET6 if ":" in bind else socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if congestion_control is not None:
        server.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, congestion_control.encode())
    server.bind((bind, 0))
    server.listen(64)
    return server


class TlsServer:
    """Serves one tls13 job's TLS connections, one at a time, as the control connection says."""

    def __init__(self, job: TlsJob, timeout: float) -> None:
        scheme: Tls13Scheme = job.scheme()
        asked = scheme.asked
        refusal = stack.refusal(asked)
        if refusal is not None:
            raise stack.TlsStackError(refusal)
        self.job, self.timeout = job, timeout
        self.chain: Chain = make_chain(asked.certificate, asked.chain, SERVER_NAME)
        client_anchor = None if job.client_anchor is None else anchor_from_der(bytes.fromhex(job.client_anchor))
        self.context = stack.server_context(asked, self.chain.identity, client_anchor)
        self.size = 0
        self.seed = b""
        self.tamper_next = False
        #: The first connection of each size is watched (every message read); the rest, timed
        #: by the client and by this server's CPU clock, run without OpenSSL's message callback.
        self.watch_next = False
        self.connections: list[ServerConnection] = []
        self.tcp: TcpInfo | None = None

    def start_size(self, body: memoryview) -> None:
        if len(body) != SIZE_FRAME.size:
            raise TlsPeerError(f"SIZE frame of {len(body)} bytes, expected {SIZE_FRAME.size}")
        size, seed = SIZE_FRAME.unpack(body)
        if size not in self.job.message_sizes:
            raise TlsPeerError(f"SIZE {size} is not one of the job's sizes")
        self.size, self.seed, self.connections, self.tcp = size, seed, [], None
        self.watch_next = True

    def serve(self, sock: socket.socket, hello: bytes) -> None:
        """One admitted connection, whole: its handshake, the request, the response, closed."""
        tamper, self.tamper_next = self.tamper_next, False
        watched, self.watch_next = self.watch_next, False
        side = ServerSide(self.context, watched)
        sock.settimeout(self.timeout)
        verdict, cpu_ns = "ok", 0
        try:
            cpu_ns = self._handshake(sock, side, hello)
            request = read_exact(side.connection, self.size, lambda: _receive(sock))
            if request != request_for(self.seed, self.size):
                raise DataMismatch("the request arrived other than the client sent it")
            side.connection.sendall(response_for(self.seed, self.size))
            side.connection.shutdown()
            sock.sendall(drain(side.connection))
        except SSL.Error as exc:
            verdict = f"refused: {describe_error(exc)}"
            _send_quietly(sock, drain(side.connection))  # its alert
        except DataMismatch as exc:
            verdict = f"failed: {exc}"
            _send_quietly(sock, side.alert)
        except (HandshakeFailed, OSError) as exc:
            # The connection ended before its records were judged (a peer gone or silent, a
            # lossy link): a tamper try's says nothing of the check, which it never reached.
            verdict = f"{UNFINISHED}{exc}"
            _send_quietly(sock, side.alert)
        finally:
            stack.forget(side.connection)
            seen = tcpinfo.window(tcpinfo.NEW_CONNECTION, tcpinfo.read(sock))
            self.tcp = seen if self.tcp is None else tcpinfo.add(self.tcp, seen)
            sock.close()
        if tamper and verdict == "ok":
            verdict = "accepted a tampered record"
        self.connections.append(ServerConnection(cpu_ns, verdict))

    def _handshake(self, sock: socket.socket, side: ServerSide, hello: bytes) -> int:
        """The handshake from the ClientHello read at admission; the server's CPU time in it (ns)."""
        start = time.thread_time_ns()
        data = hello
        while True:
            out = side.receive(data)
            if out:
                sock.sendall(out)
            if side.done:
                spent = time.thread_time_ns() - start
                self._check(side)
                return spent
            data = _receive(sock)
            if not data:
                raise HandshakeFailed(f"the client closed the connection mid-handshake, after {side.received:,} bytes")

    def _check(self, side: ServerSide) -> None:
        negotiated = side.finish()
        if self.job.client_anchor is not None and not negotiated.client_chain:
            raise HandshakeFailed("the client sent no certificate (mutual authentication)")

    def report(self) -> ServerReport:
        return ServerReport(tuple(self.connections), self.tcp)


def _receive(sock: socket.socket) -> bytes:
    try:
        return sock.recv(RECEIVE)
    except TimeoutError:
        raise HandshakeFailed(f"the client sent nothing for {sock.gettimeout():g} s") from None


def _send_quietly(sock: socket.socket, data: bytes) -> None:
    if data:
        try:
            sock.sendall(data)
        except OSError:
            pass  # the client is gone: its verdict stands


# --- the process ------------------------------------------------------------------------------


def tls_server_main(conn: Connection, plan: TlsServerPlan) -> None:
    """Entry point of a tls13 job's server process (the topology's receiver)."""
    child_entry(
        conn, lambda emit: serve_job(plan, emit), describe=lambda exc: f"TLS server: {type(exc).__name__}: {exc}"
    )


def serve_job(plan: TlsServerPlan, emit: Callable[[ReceiverMessage], None]) -> None:
    """Listen, report the port, serve the job, report how it ended (`tls_server_main`'s body)."""
    if plan.namespace is not None:
        try:
            enter_namespace(plan.namespace)
        except NamespaceError as exc:
            emit(ChildFailed(f"TLS server could not enter the packet link's namespace: {exc}"))
            return
    try:
        listener = listen(plan.bind, plan.congestion_control)
    except OSError as exc:
        emit(ChildFailed(f"TLS server could not listen on {plan.bind}: {exc.strerror or exc}"))
        return
    with listener:
        emit(Listening(listener.getsockname()[1]))
        emit(_run(listener, plan, emit))


def _run(
    listener: socket.socket, plan: TlsServerPlan, emit: Callable[[ReceiverMessage], None]
) -> ReceiverDone | ChildFailed:
    def dropped(text: str) -> None:
        emit(PeerDropped(text))

    door = Doorway(
        listener,
        lambda: TicketThen(plan.ticket, ServerHandshake(plan.token)) if plan.ticket else ServerHandshake(plan.token),
        plan.hello_timeout,
        dropped,
        who="TLS server",
    )
    try:
        control = admit_one(door, time.monotonic() + plan.accept_timeout)
    except DescriptorsExhausted as exc:
        return ChildFailed(exc.strerror or str(exc))
    door.drop_pending()
    if control is None:
        return ChildFailed(f"no client connected within {plan.accept_timeout:g} s")
    with control:
        try:
            tune(control)
            _control_loop(control, listener, plan, dropped)
        except (WireError, TlsPeerError, stack.TlsStackError, OSError) as exc:
            send_error(control, str(exc))
            return ChildFailed(f"TLS server: {exc}")
    return ReceiverDone()


def _control_loop(
    control: socket.socket, listener: socket.socket, plan: TlsServerPlan, dropped: Callable[[str], None]
) -> None:
    """JOB first, then the control frames and the TLS connections as they come, until BYE."""
    reader = FrameReader(control, MAX_CONTROL_FRAME, idle_timeout=plan.hello_timeout)
    job = parse_job(reader.expect(FrameType.JOB))
    server = TlsServer(job, plan.timeout)
    send_frame(control, FrameType.JOB_OK, [_accepted(server)])
    reader.idle_timeout = plan.timeout
    door = Doorway(
        listener, lambda: ClientHelloCheck(alpn_for(plan.token)), plan.hello_timeout, dropped, who="TLS server"
    )
    with selectors.DefaultSelector() as selector:
        while True:
            wake = door.next_deadline()
            selector.register(control, selectors.EVENT_READ)
            for sock in door.sockets():
                selector.register(sock, selectors.EVENT_READ)
            ready = selector.select(None if wake is None else max(0.0, wake - door.clock()))
            if ready and plan.heard is not None:
                plan.heard.value = time.monotonic()
            for key in list(selector.get_map().values()):
                selector.unregister(key.fileobj)
            accept = False
            for key, _ in ready:
                if key.fileobj is control:
                    if not _control_frame(reader, control, server):
                        door.close()
                        return
                elif key.fileobj is door.listener:
                    accept = True
                else:
                    pending = key.fileobj
                    assert isinstance(pending, socket.socket)
                    admitted = door.read(pending)
                    if admitted is not None:
                        check = door.admitted_check
                        assert isinstance(check, ClientHelloCheck)
                        server.serve(admitted, check.hello)
            if accept:
                door.accept()
            door.expire()


def _accepted(server: TlsServer) -> bytes:
    return json.dumps({"anchor": server.chain.anchor_der().hex()}).encode("utf-8")


def _control_frame(reader: FrameReader, control: socket.socket, server: TlsServer) -> bool:
    """One control frame answered; False after BYE."""
    kind, body = reader.read()
    if kind is FrameType.BYE:
        return False
    if kind is FrameType.SIZE:
        server.start_size(body)
        send_frame(control, FrameType.SIZE_OK)
    elif kind is FrameType.TAMPER:
        server.tamper_next = True
        send_frame(control, FrameType.ACK)
    elif kind is FrameType.SIZE_END:
        send_frame(control, FrameType.SIZE_END_OK, [server.report().encode()])
    else:
        raise UnexpectedFrame(f"{kind.name} is not a tls13 control frame")
    return True

"""A tls13 load job's server: every request a new TCP connection and a full TLS handshake.

One process (or `server_workers` forked from it, each with its own listening socket on the
port, SO_REUSEPORT: app.core.load.server forks them) serves every connection from one event
loop, side by side, without blocking on any: each connection is a `ServerSide`
(app.core.tls.sides) fed what arrives and drained into the socket as it takes it. A request
is the whole of a connection: the handshake (the chain and key made once, before the
workers fork, so a ticket one worker issued resumes at any other), the request read and
compared, the response written, close_notify, and the server closes first (its TIME_WAIT
stays here, as a deployed server's does).

The generator's control connections (app.core.load.framing's records, after the token
proof) come to the same port: MARK (every worker's CPU time, summed: a handshake may land
on any worker), PUBLIC_PLEASE (the trust anchor the clients verify the chain against) and
BYE. The doorway tells the two kinds apart by their first byte and admits a TLS connection
only when its first record is the job's ClientHello (app.core.tls.admission: the ALPN id
only the token's holders can make, read from the connection's first flight, no extra round
trip). Unlike a scheme's load server, the port stays open through the steps (every request
is a new connection): a stranger's connection there is read side by side with the job's,
closed and named, counted by the doorway, and never evicts one of the job's.

The request and response of a size derive from the job's token (`data_seed`), so every
worker checks any request without being told the size: the request names its size in its
first 8 bytes.
"""

from __future__ import annotations

import gc
import hashlib
import hmac
import mmap
import os
import resource
import selectors
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from OpenSSL import SSL

from app.core.load.framing import REPLY, Kind, LoadProtocolError, RecordBuffer
from app.core.schemes import registry
from app.core.schemes.tls13 import Tls13Scheme
from app.core.session.protocol import SEED_BYTES, U64, Verdict
from app.core.tls import stack
from app.core.tls.admission import ClientHelloCheck, ClientHelloOr
from app.core.tls.certificates import SERVER_NAME, make_chain
from app.core.tls.control import alpn_for
from app.core.tls.data import RECORD_DATA, request_for, response_for
from app.core.tls.handshake import HandshakeFailed, drain
from app.core.tls.sides import ServerSide
from app.core.transport.auth import ServerHandshake
from app.core.transport.doorway import MAX_ACCEPTS_PER_TURN, DescriptorsExhausted, Doorway, TicketThen
from app.core.transport.wire import tune

#: Bytes one receive takes from a connection.
RECEIVE = 64 * 1024
#: A control record's body: a PUBLIC_PLEASE's seed and size is the largest.
CONTROL_LIMIT = 64
#: Connections a worker serves at once (a deployed server's worker_connections): beyond
#: them it stops accepting, and new ones wait in the kernel's accept queue (their SYNs
#: retried once it is full), as they would at an overloaded server.
MAX_OPEN = 4096
#: Descriptors a worker keeps besides its connections (its listener, pipes, the selector).
SPARE_DESCRIPTORS = 64
#: A connection idle this long (the client stopped mid-handshake or mid-request) is closed.
IDLE_S = 30.0
#: How long a new connection may take to send its whole first record (a ClientHello, or a
#: control connection's ticket and token proof) before the door closes it.
HELLO_S = 10.0
#: How often idle connections are looked for.
EXPIRE_EVERY_S = 0.25
#: The listen backlog of a TLS load server: nginx's default, what a deployed server holds.
BACKLOG = 511


def data_seed(token: bytes, size: int) -> bytes:
    """The seed of a size's request and response (app.core.tls.data), from the job's token:
    every worker and every generator derive it alone."""
    return hmac.new(token, b"cryptobench tls13 load data\0" + U64.pack(size), hashlib.sha256).digest()[:SEED_BYTES]


def request_bytes(token: bytes, size: int) -> bytes:
    """What a request's connection sends after its handshake: its size, then the request."""
    return U64.pack(size) + request_for(data_seed(token, size), size)


def raise_descriptor_limit() -> int:
    """Raise this process's open-file limit to its hard limit (thousands of connections may
    be open at once); the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        wanted = 1 << 20 if hard == resource.RLIM_INFINITY else hard
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
            soft = wanted
        except (ValueError, OSError):
            pass
    return soft


@dataclass(frozen=True)
class TlsServing:
    """What every worker serves with, made once before they fork."""

    context: SSL.Context
    anchor: bytes
    alpn: bytes
    token: bytes = field(repr=False)
    ticket: bytes = field(repr=False)
    #: Each size's request (as `request_bytes` makes it) and response.
    requests: dict[int, bytes] = field(repr=False)
    responses: dict[int, bytes] = field(repr=False)
    accept_timeout: float = 60.0


def prepare(
    token: bytes, ticket: bytes, params: dict[str, int | str | bool], sizes: tuple[int, ...], accept_timeout: float
) -> TlsServing:
    """The job's chain, made in memory, and the server's context (TlsStackError when the
    linked OpenSSL cannot serve it, or the job asks for what a load server does not do)."""
    scheme = registry.create("tls13", "pyopenssl", params)
    assert isinstance(scheme, Tls13Scheme), "a TLS load server serves tls13 jobs only"
    asked = scheme.asked
    refusal = stack.refusal(asked)
    if refusal is not None:
        raise stack.TlsStackError(refusal)
    if asked.mutual:
        raise stack.TlsStackError("a tls13 load job authenticates the server only (mutual is not built for load)")
    chain = make_chain(asked.certificate, asked.chain, SERVER_NAME)
    return TlsServing(
        context=stack.server_context(asked, chain.identity),
        anchor=chain.anchor_der(),
        alpn=alpn_for(token),
        token=token,
        ticket=ticket,
        requests={size: request_bytes(token, size) for size in sizes},
        responses={size: response_for(data_seed(token, size), size) for size in sizes},
        accept_timeout=accept_timeout,
    )


class CpuClocks:
    """Every worker's CPU time, for whichever worker a MARK reaches: a handshake may land on
    any worker, so a step's server CPU is all of theirs. The worker pids live in memory the
    workers share (the process that forks them writes each as it forks it), and each
    process's CPU clock is read by its clock id (Linux: any process's may be read)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.area = mmap.mmap(-1, 8 * max(1, workers))
        #: What a MARK's reply names: one id for the whole server, so the generator adds
        #: nothing twice (the process that forked the workers, or the one worker).
        self.ident = os.getpid()

    def set(self, slot: int, pid: int) -> None:
        self.area[8 * slot : 8 * slot + 8] = pid.to_bytes(8, "little")

    def pids(self) -> list[int]:
        return [int.from_bytes(self.area[8 * k : 8 * k + 8], "little") for k in range(self.workers)]

    def total_ns(self) -> int:
        if self.workers == 1:
            return time.process_time_ns()
        total = 0
        for pid in self.pids():
            if pid == os.getpid():
                total += time.process_time_ns()
            elif pid:
                try:  # a process's CPU clock: MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)
                    total += time.clock_gettime_ns(((~pid) << 3) | 2)
                except OSError:
                    pass  # a worker that has ended: the others' figures stand
        return total


@dataclass
class _Control:
    """A generator's control connection."""

    sock: socket.socket
    buffer: RecordBuffer


@dataclass
class _Served:
    """One TLS connection being served: the handshake, then the request, then the close."""

    sock: socket.socket
    side: ServerSide
    deadline: float
    out: bytearray = field(default_factory=bytearray)
    data: bytearray = field(default_factory=bytearray)
    size: int | None = None
    closing: bool = False
    writing: bool = False


class _Listener:
    """The `data` of the listening socket in the selector."""


_LISTENER = _Listener()


class TlsWorker:
    """One server process's event loop: its listener, the connections proving themselves at
    its doorway, the generator's control connections and the TLS connections in service."""

    def __init__(
        self, listener: socket.socket, serving: TlsServing, dropped: Callable[[str], None], clocks: CpuClocks
    ) -> None:
        self.serving, self.dropped, self.clocks = serving, dropped, clocks
        ticket = serving.ticket

        def check() -> ClientHelloOr:
            control = ServerHandshake(serving.token)
            return ClientHelloOr(serving.alpn, TicketThen(ticket, control) if ticket else control)

        self.open_limit = min(MAX_OPEN, max(16, raise_descriptor_limit() - SPARE_DESCRIPTORS))
        # Every request is a new connection, waiting at the door until its ClientHello comes:
        # under load hundreds of the job's own wait at once, none yet vouched for. So the
        # door evicts nobody: it may hold as many as the worker has room for (the listener is
        # watched only while there is room, `_watch_door`, and a turn accepts at most
        # MAX_ACCEPTS_PER_TURN), beyond which newcomers wait in the kernel's accept queue, as
        # at a deployed server; a stranger leaves at its deadline, named.
        self.doorway = Doorway(
            listener, check, HELLO_S, dropped, who="TLS load server", max_pending=self.open_limit + MAX_ACCEPTS_PER_TURN
        )
        self.listener = listener
        self.selector = selectors.DefaultSelector()
        self.controls: dict[socket.socket, _Control] = {}
        self.connections: dict[socket.socket, _Served] = {}
        self._watched: set[socket.socket] = set()
        self.took_control = False
        self.served = 0

    def run(self) -> str | None:
        """Serve until every control connection this worker took has closed (the generator
        keeps them open to its end); the error that ended it, if any."""
        deadline = time.monotonic() + self.serving.accept_timeout
        next_expiry = time.monotonic() + EXPIRE_EVERY_S
        # The heap inherited from the preloaded fork server frozen out of the collector's
        # reach (a full collection of it would stall every connection in service).
        gc.collect()
        gc.freeze()
        try:
            while not (self.took_control and not self.controls):
                now = time.monotonic()
                if not self.took_control and not self.served and now > deadline:
                    return f"no load client connected within {self.serving.accept_timeout:g} s"
                self._watch_door()
                wake = min(0.5, max(0.0, next_expiry - now))
                due = self.doorway.next_deadline()
                if due is not None:
                    wake = min(wake, max(0.0, due - now))
                listener_ready = False
                for key, events in self.selector.select(timeout=wake):
                    data = key.data
                    if data is _LISTENER:
                        listener_ready = True  # newcomers after what already waits
                    elif data is None:
                        self._at_door(key.fileobj)
                    elif isinstance(data, _Control):
                        self._control(data)
                    else:
                        self._serve(data, events)
                if listener_ready and self.doorway.listener is not None:
                    try:
                        self.doorway.accept()
                    except DescriptorsExhausted as exc:
                        return exc.strerror or str(exc)
                self.doorway.expire()
                if time.monotonic() >= next_expiry:
                    next_expiry = time.monotonic() + EXPIRE_EVERY_S
                    self._expire()
        finally:
            for control in list(self.controls.values()):
                self._close_control(control)
            for served in list(self.connections.values()):
                self._close(served)
            self.doorway.close()
            self.selector.close()
        return None

    # --- the door --------------------------------------------------------------------

    def _watch_door(self) -> None:
        """Watch the connections proving themselves, and the listener while there is room
        for more connections (else they wait in the kernel's accept queue)."""
        room = len(self.connections) + len(self.doorway.pending) < self.open_limit
        now = set(self.doorway.pending)
        if room and self.doorway.listener is not None:
            now.add(self.doorway.listener)
        for sock in self._watched - now:
            try:
                self.selector.unregister(sock)
            except (KeyError, ValueError):
                pass
        for sock in now - self._watched:
            self.selector.register(sock, selectors.EVENT_READ, _LISTENER if sock is self.listener else None)
        self._watched = now

    def _at_door(self, sock: object) -> None:
        assert isinstance(sock, socket.socket)
        admitted = self.doorway.read(sock)
        if admitted is None:
            return
        self.selector.unregister(admitted)  # watched as what it proved to be from now on
        self._watched.discard(admitted)
        check = self.doorway.admitted_check
        assert isinstance(check, ClientHelloOr)
        tune(admitted, True)
        if check.is_tls:
            self._admit_tls(admitted, check.hello)
        else:
            admitted.settimeout(IDLE_S)
            control = _Control(admitted, RecordBuffer(CONTROL_LIMIT))
            self.controls[admitted] = control
            self.selector.register(admitted, selectors.EVENT_READ, control)
            self.took_control = True

    # --- the control connections -----------------------------------------------------

    def _control(self, control: _Control) -> None:
        try:
            chunk = control.sock.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._close_control(control)
            return
        try:
            out = b"".join(self._record(kind, ident, body) for kind, ident, body in control.buffer.feed(chunk))
            if out:
                control.sock.sendall(out)
        except (LoadProtocolError, OSError) as exc:
            self.dropped(f"TLS load server closed a control connection: {exc}")
            self._close_control(control)
        except _Bye:
            self._close_control(control)

    def _record(self, kind: Kind, ident: int, body: memoryview) -> bytes:
        if kind == Kind.MARK:
            return REPLY.pack(kind, self.clocks.ident, self.clocks.total_ns(), Verdict.OK)
        if kind == Kind.PUBLIC_PLEASE:
            if len(body) != SEED_BYTES + U64.size:
                raise LoadProtocolError(f"PUBLIC_PLEASE of {len(body)} bytes, expected {SEED_BYTES + U64.size}")
            (size,) = U64.unpack_from(body, SEED_BYTES)
            if size not in self.serving.requests:
                raise LoadProtocolError(f"message size {size} is not one of the job's sizes")
            anchor = self.serving.anchor
            return REPLY.pack(kind, ident, len(anchor), Verdict.OK) + anchor
        if kind == Kind.BYE:
            raise _Bye
        raise LoadProtocolError(f"{kind.name} is not a record of a tls13 load job's control connection")

    def _close_control(self, control: _Control) -> None:
        self.controls.pop(control.sock, None)
        try:
            self.selector.unregister(control.sock)
        except (KeyError, ValueError):
            pass
        control.sock.close()

    # --- the TLS connections ---------------------------------------------------------

    def _admit_tls(self, sock: socket.socket, check: ClientHelloCheck) -> None:
        sock.setblocking(False)
        served = _Served(sock, ServerSide(self.serving.context), time.monotonic() + IDLE_S)
        self.connections[sock] = served
        self.selector.register(sock, selectors.EVENT_READ, served)
        self.served += 1
        self._feed(served, check.hello)

    def _serve(self, served: _Served, events: int) -> None:
        if events & selectors.EVENT_WRITE:
            self._send(served)
            if served.sock.fileno() < 0:
                return
        if not events & selectors.EVENT_READ:
            return
        try:
            data = served.sock.recv(RECEIVE)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:  # the client closed (after our close_notify, or cut its request short)
            self._close(served)
            return
        self._feed(served, data)

    def _feed(self, served: _Served, data: bytes) -> None:
        """What arrived, into the handshake and then the request; what is owed, sent."""
        side = served.side
        try:
            if not side.done:
                served.out += side.receive(data)
                if not side.done:
                    self._send(served)
                    return
                stack.forget(side.connection)  # the client checks what was negotiated
            elif not served.closing:
                side.connection.bio_write(data)
            if not served.closing:
                self._read_request(served)
        except HandshakeFailed:
            served.out += side.alert
            served.closing = True
        except SSL.Error:  # a record that does not open (a tampered one): the alert, then close
            served.out += drain(side.connection)
            served.closing = True
        except _Refused:
            served.closing = True
        served.deadline = time.monotonic() + IDLE_S
        self._send(served)

    def _read_request(self, served: _Served) -> None:
        """The request as far as it has come; once whole and checked, the response and
        close_notify (SSL.Error or _Refused when it is not what the client must send)."""
        connection = served.side.connection
        while True:
            try:
                served.data += connection.recv(RECORD_DATA)
            except SSL.WantReadError:
                break
            except SSL.ZeroReturnError:
                raise _Refused from None
            if len(served.data) > 2 * RECORD_DATA + max(self.serving.requests):
                raise _Refused
        if served.size is None and len(served.data) >= U64.size:
            (served.size,) = U64.unpack_from(served.data)
            if served.size not in self.serving.requests:
                raise _Refused
        if served.size is None:
            return
        wanted = self.serving.requests[served.size]
        if len(served.data) < len(wanted):
            return
        if bytes(served.data) != wanted:
            raise _Refused
        connection.sendall(self.serving.responses[served.size])
        connection.shutdown()
        served.out += drain(connection)
        served.closing = True

    def _send(self, served: _Served) -> None:
        """Hand what is owed to the kernel; watch for room while some is left; close once a
        closing connection has sent everything (the server closes first)."""
        if served.out:
            try:
                sent = served.sock.send(served.out)
                del served.out[:sent]
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                self._close(served)
                return
        if served.closing and not served.out:
            self._close(served)
            return
        writing = bool(served.out)
        if writing != served.writing:
            served.writing = writing
            events = selectors.EVENT_READ | (selectors.EVENT_WRITE if writing else 0)
            self.selector.modify(served.sock, events, served)

    def _close(self, served: _Served) -> None:
        if self.connections.pop(served.sock, None) is None:
            return
        stack.forget(served.side.connection)
        try:
            self.selector.unregister(served.sock)
        except (KeyError, ValueError):
            pass
        served.sock.close()

    def _expire(self) -> None:
        """Close the connections silent past IDLE_S (a peer that stopped mid-handshake or
        mid-request: the job's own never do, so each is named)."""
        now = time.monotonic()
        for served in [s for s in self.connections.values() if s.deadline <= now]:
            stage = "its request" if served.side.done else "its handshake"
            self.dropped(f"TLS load server closed a connection silent for {IDLE_S:g} s during {stage}")
            self._close(served)


class _Bye(Exception):
    """The generator said BYE on a control connection: close it."""


class _Refused(Exception):
    """A request that is not what the job's client sends: the connection is closed."""

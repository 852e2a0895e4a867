"""A load job's server: serves every client connection from one event loop per process.

One process (or `server_workers` processes, each with its own listening socket on the
same port, SO_REUSEPORT: the kernel spreads new connections over them) answers requests
in arrival order, one at a time: the server's single core is what a load job measures.
Each connection is a client of its own: the receiver side of the scheme with its own
long-term keys, published when the client asks (`Kind.PUBLIC_PLEASE`).

Every request is checked, outside the timed region: the opened plaintext must equal the
connection's expected plaintext, or the reply carries the verdict that fails it.

A tls13 job's server is the same processes with another loop in each
(app.core.load.tls_server: a request is a new connection and a TLS handshake). Over the
packet path the server listens in the receiver's network namespace, entered first.
"""

from __future__ import annotations

import ctypes
import gc
import os
import select
import selectors
import signal
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from app.core.contracts.events import ChildFailed, Listening, PeerDropped, ReceiverDone, ReceiverMessage
from app.core.load import tls_server
from app.core.load.framing import (
    HANDSHAKE_LENGTH,
    MAX_HANDSHAKE,
    REPLY,
    Kind,
    LoadProtocolError,
    RecordBuffer,
    split_request,
)
from app.core.measure.harness import child_entry
from app.core.schemes import registry
from app.core.schemes.base import KEYGEN_ON_SENDER, Receiver, Scheme, SchemeError
from app.core.session.protocol import SEED_BYTES, U64, Verdict, job_capacity, plaintext_for
from app.core.tls.stack import TlsStackError
from app.core.transport.auth import ServerHandshake
from app.core.transport.doorway import DescriptorsExhausted, Doorway, TicketThen
from app.core.transport.netns import NamespaceError, enter_namespace
from app.core.transport.wire import tune
from app.core.vocab import Exchange, Family

#: How long a connection may take to prove it holds the token.
HELLO_TIMEOUT_S = 10.0
#: A reply that cannot be written within this long means the client stopped reading.
SEND_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class LoadServerPlan:
    """What the runner hands the load server process."""

    token: bytes = field(repr=False)
    scheme: str
    backend: str
    params: dict[str, int | str | bool]
    message_sizes: tuple[int, ...]
    workers: int = 1
    #: Benchmarks only (benchmarks/bench_load_harness.py): instead of the scheme's work, spin
    #: this many nanoseconds per request (0: none at all): a server of known cost.
    spin_ns: int | None = None
    accept_timeout: float = 60.0
    bind: str = "127.0.0.1"
    #: What each of the generator's clients presents first (app.core.transport.doorway's
    #: admission), before the token handshake: the job's own are known at once and never
    #: pushed out by a stranger's flood. Empty: the handshake alone.
    ticket: bytes = field(default=b"", repr=False)
    #: Where `cryptobench serve` reads when a client last sent anything (a shared double of
    #: CLOCK_MONOTONIC, which every process of the machine reads alike): its promise to drop
    #: a client silent too long covers the load job's own connections (app.core.serve.load_serve).
    #: None: nobody reads it (a local job, whose supervisor watches its generator itself).
    heard: Any = field(default=None, repr=False, compare=False)
    #: A key-establishing scheme's exchange pattern (None: the default, or no key to establish).
    exchange: Exchange | None = None
    #: The packet path's receiver end (app.core.transport.netns): the network namespace the
    #: server enters before it listens, and the congestion control its connections use.
    namespace: str | None = None
    congestion_control: str | None = None


@dataclass
class _Client:
    sock: socket.socket
    buffer: RecordBuffer
    receiver: Receiver | None = None
    expected: bytes | None = None
    keyed: bool = False


class _Door:
    """Where a worker learns that the generator's clients are all in (`data` of the door
    signal in the selector)."""


_DOOR_SIGNAL = _Door()


class _Worker:
    """One server process's event loop over its listening socket and its clients.

    Connections are admitted by a `Doorway`: each proves it holds the token side by side
    with the others, without a wait in the loop that serves the clients already in, so a
    stranger's silent connection costs the requests in flight nothing. The generator's
    first MARK comes once all its clients are in: the worker then stops listening (and
    tells its sibling workers through `door_signal`, a pipe whose write end any of them
    may write), so no connection reaches the server during a step.
    """

    def __init__(
        self,
        listener: socket.socket,
        plan: LoadServerPlan,
        scheme: Scheme,
        dropped: Callable[[str], None],
        door_signal: tuple[int, int] | None = None,
    ) -> None:
        self.plan, self.scheme, self.dropped = plan, scheme, dropped
        self.doorway = Doorway(
            listener,
            lambda: (
                TicketThen(plan.ticket, ServerHandshake(plan.token)) if plan.ticket else ServerHandshake(plan.token)
            ),
            HELLO_TIMEOUT_S,
            dropped,
            who="load server",
        )
        self.door_signal = door_signal
        self._watched: set[socket.socket] = set()
        self.per_session_handshake = scheme.info.family not in KEYGEN_ON_SENDER
        self.limit = (
            job_capacity(scheme, list(plan.message_sizes))
            + MAX_HANDSHAKE
            + HANDSHAKE_LENGTH.size
            + SEED_BYTES
            + U64.size
        )
        self.selector = selectors.DefaultSelector()
        self.clients: dict[socket.socket, _Client] = {}
        self.served = 0

    def run(self) -> str | None:
        """Serve until every connection this worker took has closed (the generator keeps
        them all open to its end); the error that ended it, if any."""
        self._watch_door()
        if self.door_signal is not None:
            self.selector.register(self.door_signal[0], selectors.EVENT_READ, _DOOR_SIGNAL)
        deadline = time.monotonic() + self.plan.accept_timeout
        # No full collection of the heap this process inherited from the preloaded fork
        # server (tens of milliseconds, which every request queued meanwhile would wait
        # out): frozen, the collector never walks it again. The collector stays on: opening
        # a request leaves reference cycles in the crypto wrappers (about 11 objects, 1 to
        # 3.5 KiB a request with X25519), which with the collector off grew the server by
        # hundreds of MiB over a few seconds at a high rate, without bound over a long step;
        # its young-generation passes over what the requests left take ~0.1 ms each.
        gc.collect()
        gc.freeze()
        try:
            while not (self.served and not self.clients):
                if not self.clients and not self.served and time.monotonic() > deadline:
                    return f"no load client connected within {self.plan.accept_timeout:g} s"
                wake = 0.5
                due = self.doorway.next_deadline()
                if due is not None:
                    wake = min(wake, max(0.0, due - time.monotonic()))
                listener_ready = heard = False
                for key, _ in self.selector.select(timeout=wake):
                    if key.data is None and key.fileobj is self.doorway.listener:
                        listener_ready = True  # newcomers after what already waits
                    elif key.data is None:
                        self._at_door(key.fileobj)
                    elif key.data is _DOOR_SIGNAL:
                        self._close_door()
                    else:
                        self._read(key.data)
                        heard = True
                if heard and self.plan.heard is not None:  # once a wake-up, not once a request
                    self.plan.heard.value = time.monotonic()
                if listener_ready and self.doorway.listener is not None:
                    try:
                        self.doorway.accept()
                    except DescriptorsExhausted as exc:
                        return exc.strerror or str(exc)  # "load server cannot accept a connection: …"
                self.doorway.expire()
                self._watch_door()
        finally:
            for client in list(self.clients.values()):
                self._close(client)
            self.doorway.close()
            self.selector.close()
        return None

    def _watch_door(self) -> None:
        """Watch the listener and every connection still proving itself, and nothing else
        of the doorway's (it closes what fails, and hands over what passes)."""
        now = set(self.doorway.sockets())
        for sock in self._watched - now:
            try:
                self.selector.unregister(sock)
            except (KeyError, ValueError):
                pass
        for sock in now - self._watched:
            self.selector.register(sock, selectors.EVENT_READ, None)
        self._watched = now

    def _close_door(self) -> None:
        """The generator's clients are all in: stop listening, here and in every worker."""
        if self.door_signal is not None:
            try:
                self.selector.unregister(self.door_signal[0])
            except (KeyError, ValueError):
                pass
            try:
                os.write(self.door_signal[1], b"x")  # never read: it stays readable for every worker
            except OSError:
                pass
        if self.doorway.is_open:
            self.doorway.close()
            self._watch_door()

    def _at_door(self, sock: object) -> None:
        assert isinstance(sock, socket.socket)
        admitted = self.doorway.read(sock)
        if admitted is not None:
            self.selector.unregister(admitted)  # watched as a client from now on
            self._watched.discard(admitted)
            self._admit(admitted)

    def _admit(self, sock: socket.socket) -> None:
        tune(sock, True)
        sock.settimeout(SEND_TIMEOUT_S)
        client = _Client(sock, RecordBuffer(self.limit))
        self.clients[sock] = client
        self.selector.register(sock, selectors.EVENT_READ, client)
        self.served += 1

    def _close(self, client: _Client) -> None:
        self.clients.pop(client.sock, None)
        try:
            self.selector.unregister(client.sock)
        except (KeyError, ValueError):
            pass
        client.sock.close()

    def _read(self, client: _Client) -> None:
        try:
            chunk = client.sock.recv(1 << 16)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._close(client)
            return
        try:
            replies = [self._handle(client, kind, ident, body) for kind, ident, body in client.buffer.feed(chunk)]
            out = b"".join(reply for reply in replies if reply is not None)
            if out:
                client.sock.sendall(out)
        except (LoadProtocolError, OSError) as exc:
            self.dropped(f"load server closed a client connection: {exc}")
            self._close(client)
        except _Done:
            self._close(client)

    def _handle(self, client: _Client, kind: Kind, ident: int, body: memoryview) -> bytes | None:
        if kind == Kind.REQUEST:
            return self._request(client, ident, body)
        if kind == Kind.MARK:
            self._close_door()  # the generator marks only once all its clients are in
            return REPLY.pack(kind, os.getpid(), time.process_time_ns(), Verdict.OK)
        if kind == Kind.PUBLIC_PLEASE:
            return self._publish(client, ident, body)
        if kind == Kind.KEY:
            if client.receiver is None:
                raise LoadProtocolError("KEY before PUBLIC_PLEASE")
            verdict = Verdict.OK
            try:
                client.receiver.handshake(bytes(body))
                client.keyed = True
            except SchemeError:
                verdict = Verdict.REJECTED
            return REPLY.pack(kind, ident, 0, verdict)
        raise _Done  # BYE: this connection is over

    def _publish(self, client: _Client, ident: int, body: memoryview) -> bytes:
        if len(body) != SEED_BYTES + U64.size:
            raise LoadProtocolError(f"PUBLIC_PLEASE of {len(body)} bytes, expected {SEED_BYTES + U64.size}")
        (size,) = U64.unpack_from(body, SEED_BYTES)
        if size not in self.plan.message_sizes:
            raise LoadProtocolError(f"message size {size} is not one of the job's sizes")
        client.expected = plaintext_for(bytes(body[:SEED_BYTES]), size)
        client.receiver = self.scheme.new_receiver()
        public = client.receiver.setup()
        return REPLY.pack(Kind.PUBLIC_PLEASE, ident, len(public), Verdict.OK) + public

    def _request(self, client: _Client, ident: int, body: memoryview) -> bytes:
        receiver, expected = client.receiver, client.expected
        if receiver is None or expected is None:
            raise LoadProtocolError("REQUEST before PUBLIC_PLEASE")
        handshake, payload = split_request(body)
        clock = time.perf_counter_ns
        if self.plan.spin_ns is not None:
            start = clock()
            while clock() - start < self.plan.spin_ns:
                pass
            return REPLY.pack(Kind.REQUEST, ident, clock() - start, Verdict.OK)
        if not self.per_session_handshake and (handshake or not client.keyed):
            raise LoadProtocolError("a signed message carries no handshake; the key comes once, in KEY")
        start = clock()
        try:
            if self.per_session_handshake:
                receiver.handshake(handshake)
            opened = receiver.open(payload)
        except SchemeError:
            return REPLY.pack(Kind.REQUEST, ident, clock() - start, Verdict.REJECTED)
        except Exception:  # noqa: BLE001 - a bug in a wrapper or library fails the request, not the server
            return REPLY.pack(Kind.REQUEST, ident, clock() - start, Verdict.ERROR)
        elapsed = clock() - start
        verdict = Verdict.OK if bytes(opened) == expected else Verdict.WRONG_PLAINTEXT
        return REPLY.pack(Kind.REQUEST, ident, elapsed, verdict)


class _Done(Exception):
    """The client said BYE: close its connection."""


def listeners(
    bind: str, workers: int, backlog: int = 256, congestion_control: str | None = None
) -> list[socket.socket]:
    """`workers` listening sockets on one free port (SO_REUSEPORT beyond the first); their
    connections inherit `congestion_control`."""
    family = socket.AF_INET6 if ":" in bind else socket.AF_INET
    sockets: list[socket.socket] = []
    port = 0
    try:
        for _ in range(workers):
            sock = socket.socket(family, socket.SOCK_STREAM)
            sockets.append(sock)
            if workers > 1:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            if congestion_control is not None:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, congestion_control.encode())
            sock.bind((bind, port))
            sock.listen(backlog)
            port = sock.getsockname()[1]
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def workers_problem(workers: int) -> str | None:
    """Why `workers` server processes cannot run here, or None."""
    if workers <= 1:
        return None
    if not sys.platform.startswith("linux"):
        return (
            f"server_workers {workers} needs Linux (SO_REUSEPORT spreading connections over processes, "
            "and a parent-death signal for each worker); this is " + sys.platform
        )
    return None


def _named(error: str) -> str:
    """A worker's error as the job reports it: led by the process it came from, once (a
    door's refusal already names the load server)."""
    return error if error.startswith("load server") else f"load server: {error}"


def _die_with_parent() -> None:
    """A forked worker gets SIGKILL when the server process that forked it dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    pr_set_pdeathsig = 1
    libc.prctl(pr_set_pdeathsig, signal.SIGKILL)


def serve(plan: LoadServerPlan, emit: Callable[[ReceiverMessage], None]) -> None:
    """Listen, report the port, serve until the generator is done (the body of `load_server_main`).

    One worker: this process serves. Several: this process forks them, each with its own
    listening socket on the port, and waits; a worker ends once the connections it took
    have closed, which the generator does all at once at its end, so when the first one
    ends the others get a moment to follow (one that took no connection never would).
    """
    problem = workers_problem(plan.workers)
    if problem is not None:
        emit(ChildFailed(problem))
        return
    if plan.namespace is not None:
        try:
            enter_namespace(plan.namespace)
        except NamespaceError as exc:
            emit(ChildFailed(f"load server could not enter the packet link's namespace: {exc}"))
            return
    scheme = registry.create(plan.scheme, plan.backend, plan.params, plan.exchange)
    try:
        run_worker = _WorkerMaker(plan, scheme)
    except TlsStackError as exc:
        emit(ChildFailed(f"load server: {exc}"))
        return
    backlog = tls_server.BACKLOG if scheme.info.family == Family.TLS else 256
    try:
        sockets = listeners(plan.bind, plan.workers, backlog, plan.congestion_control)
    except OSError as exc:
        emit(ChildFailed(f"load server could not listen on {plan.bind}: {exc.strerror or exc}"))
        return
    port = sockets[0].getsockname()[1]
    if plan.workers == 1:
        with sockets[0] as listener:
            emit(Listening(port))
            error = run_worker(listener, lambda text: emit(PeerDropped(text)), None)
        emit(ChildFailed(_named(error)) if error else ReceiverDone())
        return
    children: list[int] = []
    door = os.pipe()
    # What the workers have to say (a stranger turned away) comes up one pipe, a line each,
    # for this process to pass on: only it writes to the supervisor.
    said_read, said_write = os.pipe()
    try:
        for slot, sock in enumerate(sockets):
            pid = os.fork()
            if pid == 0:  # a worker: its own socket, its own loop
                _die_with_parent()
                for other in sockets:
                    if other is not sock:
                        other.close()
                os.close(said_read)
                code = 1 if run_worker(sock, _line_writer(said_write), door) else 0
                os._exit(code)
            children.append(pid)
            if run_worker.clocks is not None:
                run_worker.clocks.set(slot, pid)
    finally:
        for sock in sockets:
            sock.close()
        os.close(said_write)
    emit(Listening(port))
    try:
        failed = _reap(children, lambda: _pass_on(said_read, emit))
        _pass_on(said_read, emit)
    finally:
        for fd in (*door, said_read):
            os.close(fd)
    emit(ChildFailed(f"load server: {failed} of {plan.workers} workers failed") if failed else ReceiverDone())


class _WorkerMaker:
    """Runs one worker's loop in the process it is called in: a scheme's (`_Worker`) or, for
    a tls13 job, a TLS server's, whose chain and context were made before the workers fork
    and whose CPU clocks (`clocks`) every worker reads."""

    def __init__(self, plan: LoadServerPlan, scheme: Scheme) -> None:
        self.plan, self.scheme = plan, scheme
        self.serving: tls_server.TlsServing | None = None
        self.clocks: tls_server.CpuClocks | None = None
        if scheme.info.family == Family.TLS:
            self.serving = tls_server.prepare(
                plan.token, plan.ticket, plan.params, plan.message_sizes, plan.accept_timeout
            )
            self.clocks = tls_server.CpuClocks(plan.workers)

    def __call__(
        self, listener: socket.socket, dropped: Callable[[str], None], door: tuple[int, int] | None
    ) -> str | None:
        if self.serving is not None and self.clocks is not None:
            return tls_server.TlsWorker(listener, self.serving, dropped, self.clocks).run()
        return _Worker(listener, self.plan, self.scheme, dropped, door).run()


def _line_writer(fd: int) -> Callable[[str], None]:
    def write(text: str) -> None:
        try:  # one write of under PIPE_BUF bytes: whole, never interleaved with a sibling's
            os.write(fd, (text.replace("\n", " ")[:500] + "\n").encode("utf-8", "replace"))
        except OSError:
            pass

    return write


def _pass_on(fd: int, emit: Callable[[ReceiverMessage], None]) -> None:
    """Emit what the workers wrote since last time (without waiting for more)."""
    while select.select([fd], [], [], 0)[0]:
        data = os.read(fd, 65536)
        if not data:
            return
        for line in data.decode("utf-8", "replace").splitlines():
            emit(PeerDropped(line))


#: After the first worker ends, how long the others get to end on their own.
_FOLLOW_S = 0.5


def _reap(children: list[int], meanwhile: Callable[[], None] = lambda: None) -> int:
    """Wait for the forked workers (calling `meanwhile` as it goes); once one has ended,
    kill those still there after `_FOLLOW_S`. Returns how many ended with an error."""
    waiting = set(children)
    failed = 0
    deadline: float | None = None
    while waiting:
        meanwhile()
        for pid in list(waiting):
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                waiting.discard(pid)
                failed += os.waitstatus_to_exitcode(status) != 0
                deadline = deadline or time.monotonic() + _FOLLOW_S
        if waiting and deadline is not None and time.monotonic() > deadline:
            for pid in waiting:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            break
        if waiting:
            time.sleep(0.01)  # a process's own wait loop, not a test waiting for a signal
    return failed


def load_server_main(conn: Connection, plan: LoadServerPlan) -> None:
    """Entry point of a load server process (multiprocessing target)."""
    child_entry(conn, lambda emit: serve(plan, emit), describe=lambda exc: f"load server: {type(exc).__name__}: {exc}")

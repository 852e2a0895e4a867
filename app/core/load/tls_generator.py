"""A tls13 load job's generator: open-loop handshakes, each a new connection of its own.

It is a `LoadGenerator` (app.core.load.generator) with the same schedule, step records,
marks and limits: request k of a step is due at `t0 + k / rate`, its latency runs from
then to its response, into the step's HdrHistogram, and the generator's own lateness and
misses mark the step. What differs is the request: instead of a prepared record on a
warm connection, a new TCP connection is opened when it is due and carries a full TLS 1.3
handshake, the request and its response (app.core.load.tls_request). So the client's side
of every handshake (its key share, the chain's verification, the host name) is done live
and is in the latency, as a browser's is; there is no pool of prepared requests.

The job's `clients` are its control connections to the server (the marks, the trust
anchor). When the job resumes (`resumption: ticket`), each request is a return visit: it
resumes with a session ticket no other request used (a TLS 1.3 ticket is single-use: a
second use gets a full handshake), taken from a pool that the size's first visits fill,
untimed, and that each completed request refills with the ticket it got. A request due
while every ticket is in use by requests still in flight makes a first visit instead; so
does one whose ticket the server declined. Each is counted: a step's `resumed` of its
`handshakes` says how many returned. Every handshake's messages are read and checked
against what it was (a full or a resumed handshake) as it completes: a HelloRetryRequest
or another group fails the job, naming both; per step the handshakes completed, resumed
and failed are counted.

The connections are watched through an epoll of their own, itself watched by the
generator's select() (which keeps the microsecond timeouts the schedule needs, and takes
no descriptor past 1,024): at most as many at once as the descriptor limit allows; a
request due beyond that is missed, as one due with a full backlog is.
"""

from __future__ import annotations

import errno
import os
import select
import selectors
import socket
import statistics
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from OpenSSL import SSL

from app.core.contracts.events import SizeMeasured
from app.core.contracts.plan import JobPlan
from app.core.load.framing import Kind, record
from app.core.load.generator import (
    CALIBRATION_BUDGET_S,
    CALIBRATION_REQUESTS,
    SETUP_TIMEOUT_S,
    SO_TIMESTAMPNS,
    TIMESTAMP_SPACE,
    ClientConnection,
    Emit,
    LoadFailed,
    LoadGenerator,
    StepState,
    schedule_index,
)
from app.core.load.sweep import IN_FLIGHT_MAX
from app.core.load.tls_request import Exchange, Once, Stage, TlsRequest, request_once
from app.core.load.tls_server import SPARE_DESCRIPTORS, data_seed, raise_descriptor_limit, request_bytes
from app.core.measure.harness import Parts, check_tampering
from app.core.records.job_conditions import LoadStep
from app.core.records.tls_record import TlsRecord, TlsStep
from app.core.schemes.tls13 import Tls13Scheme
from app.core.schemes.tls_messages import Negotiated
from app.core.session.protocol import SEED_BYTES, U64, Verdict
from app.core.tls import stack
from app.core.tls.certificates import anchor_from_der
from app.core.tls.control import alpn_for
from app.core.tls.data import DataMismatch, response_for
from app.core.tls.handshake import HandshakeFailed
from app.core.tls.tally import HandshakeTally, NegotiationMismatch

#: The most bytes of a trust anchor the server may send (a certificate a job makes is under 8 KB).
MAX_ANCHOR = 16 * 1024
#: Bytes one receive takes from a connection.
RECEIVE = 64 * 1024
#: What a failed request is counted as, by where it stood (the first failure's reason is
#: added to its name, so the job's error says why).
FAILED = {
    Stage.CONNECTING: "failed connections",
    Stage.HANDSHAKE: "failed handshakes",
    Stage.RESPONSE: "failed responses",
    Stage.CLOSING: "failed closes",
}
#: A failure's reason, as a name carries it, at most this long.
REASON_CHARS = 200


class _Connections:
    """The `data` of the connections' epoll in the generator's selector."""


_CONNECTIONS = _Connections()


@dataclass
class _Counts:
    """A step's handshakes so far (its measured requests')."""

    handshakes: int = 0
    resumed: int = 0
    failed: int = 0
    retries: int = 0

    def frozen(self) -> TlsStep:
        return TlsStep(self.handshakes, self.resumed, self.failed, self.retries)


class TlsLoadGenerator(LoadGenerator):
    """Drives a tls13 load job's handshakes against its server, size by size."""

    def __init__(self, plan: JobPlan, emit: Emit, clock: Callable[[], int] = time.perf_counter_ns) -> None:
        super().__init__(plan, emit, clock)
        scheme = self.scheme
        assert isinstance(scheme, Tls13Scheme), "a TLS generator drives tls13 jobs only"
        self.tls: Tls13Scheme = scheme
        refusal = stack.refusal(scheme.asked)
        if refusal is not None:
            raise stack.TlsStackError(refusal)
        self.resumes = scheme.asked.resumption == "ticket"
        self.alpn = alpn_for(self.peer.token)
        self.address = (self.peer.host, self.peer.port)
        self.family = socket.AF_INET6 if ":" in self.peer.host else socket.AF_INET
        self.context: SSL.Context | None = None
        self.exchange = Exchange(b"", b"")
        self.tally = HandshakeTally(scheme, "")
        #: Unused session tickets, oldest first, when the job resumes (see the module's doc).
        self.tickets: deque[SSL.Session] = deque()
        #: A first visit's handshake is checked as a full one, whatever the job resumes.
        self.full = Tls13Scheme({**scheme.info.params, "resumption": "none"})
        self.requests: dict[int, TlsRequest] = {}
        self.epoll = select.epoll()
        self.selector.register(self.epoll.fileno(), selectors.EVENT_READ, _CONNECTIONS)
        self.open_limit = min(IN_FLIGHT_MAX, max(16, raise_descriptor_limit() - SPARE_DESCRIPTORS))
        #: Requests whose connect failed at once, counted when the loop next reads.
        self.instant: list[tuple[TlsRequest, str]] = []
        #: Each kind of failure's name with its first reason (see FAILED).
        self.failure_names: dict[str, str] = {}
        self.counts = _Counts()

    # --- a size ----------------------------------------------------------------------

    def prepare(self, size: int) -> list[float]:
        """The server's trust anchor (PUBLIC_PLEASE on every control connection), the
        size's request and response, a fresh tally; a resumed job's first tickets. Nothing
        is prepared ahead: each handshake is made when its request is due."""
        anchors = set()
        for client in self.clients:
            (kind, _, _, verdict), anchor = self._exchange(
                client, record(Kind.PUBLIC_PLEASE, 0, os.urandom(SEED_BYTES) + U64.pack(size)), extra=-1
            )
            if kind != Kind.PUBLIC_PLEASE or verdict != Verdict.OK or not 0 < len(anchor) <= MAX_ANCHOR:
                raise LoadFailed(f"the TLS load server did not send its trust anchor (reply {kind}, verdict {verdict})")
            anchors.add(anchor)
            client.sock.setblocking(False)
        if len(anchors) != 1:
            raise LoadFailed("the TLS load server's workers sent different trust anchors")
        try:
            trusted = anchor_from_der(anchors.pop())
        except ValueError as exc:
            raise LoadFailed(f"the TLS load server's trust anchor is not a certificate: {exc}") from None
        self.context = stack.client_context(self.tls.asked, trusted)
        token = self.peer.token
        self.exchange = Exchange(request_bytes(token, size), response_for(data_seed(token, size), size))
        self.tally = HandshakeTally(self.tls, stack.openssl_version()[1])
        self.tickets.clear()
        if self.resumes:  # first visits, untimed: a ticket for each client's first return
            full = HandshakeTally(self.full, "")
            for _ in self.clients:
                once = self._once(None)
                full.add(once.finished.negotiated, once.finished.log.flights, once.finished.log.round_trips(), 0)
                if once.session is not None:
                    self.tickets.append(once.session)
        return []

    def _ticket(self) -> SSL.Session | None:
        """An unused ticket for the next request (None: it makes a first visit)."""
        return self.tickets.popleft() if self.tickets else None

    def _kept(self, session: SSL.Session | None) -> None:
        """A completed request's new ticket, for a later one."""
        if self.resumes and session is not None:
            self.tickets.append(session)

    def _as_what(self, negotiated: Negotiated) -> Tls13Scheme:
        """What a handshake is checked as: a resumed job's first visits as full handshakes."""
        return self.full if self.resumes and not negotiated.resumed else self.tls

    def _once(self, session: SSL.Session | None, tamper: int | None = None) -> Once:
        assert self.context is not None, "prepare gives the context"
        return request_once(
            self.peer.host,
            self.peer.port,
            SETUP_TIMEOUT_S,
            self.peer.congestion_control,
            self.context,
            self.alpn,
            session,
            self.exchange,
            tamper,
        )

    def _checked(self, once: Once) -> None:
        """A setup request's handshake, checked and counted in the size's record; its ticket kept."""
        log, negotiated = once.finished.log, once.finished.negotiated
        self.tally.add(negotiated, log.flights, log.round_trips(), 0, self._as_what(negotiated))
        self._kept(once.session)

    def check_tampering(self, size: int, result: SizeMeasured) -> None:
        """Requests with one bit of their first record flipped, each on a connection of its
        own, which the server must refuse (its alert, or its close without a response)."""

        def deliver(parts: Parts, spot: int) -> str | None:
            once = self._once(self._ticket(), tamper=spot)
            problem = self._as_what(once.finished.negotiated).negotiation_problem(once.finished.negotiated)
            if problem is not None:  # its handshake is checked like every other
                raise NegotiationMismatch(f"the handshake negotiated {problem}")
            return None if once.refused is not None else "the server answered a tampered request"

        check_tampering(
            self.tls,
            self.plan.job.tamper,
            len(self.exchange.request),
            result,
            lambda: (b"",),
            deliver,
            lambda done: None,
        )

    def calibrate(self) -> tuple[float, float]:
        """Handshakes one at a time: (the server's CPU per handshake, by its marks; the median
        time of one request, connect to response)."""
        before = sum(self.server_cpu_ns().values())
        times: list[float] = []
        end = time.monotonic() + CALIBRATION_BUDGET_S
        while len(times) < CALIBRATION_REQUESTS and (len(times) < 5 or time.monotonic() < end):
            once = self._once(self._ticket())
            self._checked(once)
            times.append(once.seconds)
        spent = sum(self.server_cpu_ns().values()) - before
        return max(spent, 0) / 1e9 / len(times), statistics.median(times)

    def tls_record(self) -> TlsRecord | None:
        """The size's handshakes so far (None before any)."""
        return self.tally.record()

    # --- a step ----------------------------------------------------------------------

    def run_step(
        self,
        rate: float,
        progress: Callable[[float], None],
        start_ns: int | None = None,
        generators: int = 1,
        generator: int = 0,
    ) -> tuple[LoadStep, StepState]:
        """The step as every load step runs (`LoadGenerator.run_step`), its handshakes
        counted; the connections still open at its end are closed."""
        self.counts = _Counts()
        try:
            step, step_record = super().run_step(rate, progress, start_ns, generators, generator)
        finally:
            for request in list(self.requests.values()):
                self._drop(request)
        step_record.handshakes = self.counts.frozen()
        return step, step_record

    def _offer(self, client: ClientConnection, ident: int) -> bool:
        """Open request `ident`'s connection (its SYN leaves now); False when as many are
        open as the descriptors allow: the request is missed."""
        if len(self.requests) >= self.open_limit:
            return False
        try:
            sock = socket.socket(self.family, socket.SOCK_STREAM)
        except OSError:
            return False
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.peer.congestion_control is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, self.peer.congestion_control.encode())
        if self.kernel_timestamps:
            sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        request = TlsRequest(ident, sock, self.exchange)
        error = sock.connect_ex(self.address)
        if error not in (0, errno.EINPROGRESS):
            self.instant.append((request, os.strerror(error)))
            return True
        self.requests[sock.fileno()] = request
        request.mask = select.EPOLLOUT
        self.epoll.register(sock.fileno(), request.mask)
        return True

    def _receive(self, timeout: float) -> None:
        """Wait up to `timeout` (until the next request is due) for what the server sent, and
        handle it; the connections' events only while the next request is not yet due (at
        least one each time): a handshake's client side is a millisecond's work, and the
        schedule comes first. What waits is read at the next turn, its lateness recorded."""
        until = self.clock() + int(timeout * 1e9)
        if self.instant:
            for request, reason in self.instant:
                self._fail(request, reason)
            self.instant = []
            timeout = 0.0
        for key, _ in self.selector.select(timeout):
            if key.data is _CONNECTIONS:
                self._connections(until)
            else:
                self._read_client(key.data)

    def _connections(self, until: int) -> None:
        for k, (fd, events) in enumerate(self.epoll.poll(0)):
            if k and self.clock() >= until:
                return  # the next request is due: the rest are read at the next turn
            request = self.requests.get(fd)
            if request is None:
                continue
            try:
                if request.stage is Stage.CONNECTING:
                    error = request.sock.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    if error:
                        raise ConnectionError(os.strerror(error))
                    assert self.context is not None
                    request.connected(self.context, self.alpn, self._ticket())
                    self._send(request)
                    continue
                if events & select.EPOLLOUT:
                    self._send(request)
                if events & (select.EPOLLIN | select.EPOLLERR | select.EPOLLHUP) and request.sock.fileno() >= 0:
                    self._read(request)
            except (HandshakeFailed, SSL.Error, DataMismatch, OSError) as exc:
                self._fail(request, str(exc) or type(exc).__name__)

    def _read(self, request: TlsRequest) -> None:
        try:
            chunk, ancillary, _, _ = request.sock.recvmsg(RECEIVE, TIMESTAMP_SPACE)
        except (BlockingIOError, InterruptedError):
            return
        except ConnectionResetError:
            if request.stage is not Stage.CLOSING:
                raise
            chunk, ancillary = b"", []
        if not chunk:
            if request.stage is Stage.CLOSING:  # the server closed first, as it should
                self._drop(request)
                return
            raise DataMismatch(f"the server closed the connection during the {request.where()}")
        now = self._arrival(ancillary)
        stage = request.stage
        complete = request.feed(chunk)
        if stage is Stage.HANDSHAKE and request.out and self._measured(request):
            # The client's next flight answers what just arrived: handed to the kernel this
            # much after the server's flight reached it (the generator's lateness, as a send's).
            self.lag.record_value(max(1, self.clock() - now))
        if request.finished is not None and not request.counted:
            request.counted = True
            self._handshake(request)
        if complete and request.stage is Stage.RESPONSE:
            self._kept(request.close())
            if self.step is not None:
                self._replied(self.step, request.ident, None, Verdict.OK, now)
        self._send(request)

    def _handshake(self, request: TlsRequest) -> None:
        """A handshake done: checked against what the job asked (NegotiationMismatch ends the
        job, naming both), counted in the size's record and, if measured, in the step's."""
        finished = request.finished
        assert finished is not None
        negotiated = finished.negotiated
        if self._measured(request):
            self.counts.handshakes += 1
            self.counts.resumed += negotiated.resumed
            self.counts.retries += negotiated.retries
        self.tally.add(negotiated, finished.log.flights, finished.log.round_trips(), 0, self._as_what(negotiated))

    def _measured(self, request: TlsRequest) -> bool:
        step = self.step
        return (
            step is not None
            and request.ident in step.outstanding
            and schedule_index(step, request.ident) >= step.first_measured
        )

    def _send(self, request: TlsRequest) -> None:
        try:
            empty = request.send()
        except OSError as exc:
            self._fail(request, exc.strerror or str(exc))
            return
        mask = select.EPOLLIN | (0 if empty else select.EPOLLOUT)
        if mask != request.mask and request.sock.fileno() >= 0:
            request.mask = mask
            self.epoll.modify(request.sock.fileno(), mask)

    def _fail(self, request: TlsRequest, reason: str) -> None:
        """A request that ended before its response (or, closing, before the server's close:
        its response already counts): counted by where it stood, with the first reason."""
        measured = self._measured(request)
        self._drop(request)
        step = self.step
        if step is None or request.stage is Stage.CLOSING or step.outstanding.pop(request.ident, None) is None:
            return
        if not measured:
            return
        self.counts.failed += 1
        kind = FAILED[request.stage]
        name = self.failure_names.setdefault(kind, f"{kind} (the first: {reason[:REASON_CHARS]})")
        step.refused[name] = step.refused.get(name, 0) + 1

    def _drop(self, request: TlsRequest) -> None:
        fd = request.sock.fileno()
        if fd >= 0 and self.requests.pop(fd, None) is not None:
            try:
                self.epoll.unregister(fd)
            except OSError:
                pass
        if request.side is not None:
            stack.forget(request.side.connection)
        request.sock.close()

    def close(self) -> None:
        for request in list(self.requests.values()):
            self._drop(request)
        super().close()
        self.epoll.close()

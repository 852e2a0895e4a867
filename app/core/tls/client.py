"""The tls13 job's client process: what a browser's first visit pays, handshake by handshake.

Over its control connection (app.core.tls.control) it tells the server the job and gets
the server's trust anchor; then, per message size, every sample is a new TCP connection
carrying TLS alone, its ClientHello the first bytes on it:

- `connect`: SYN to the connection being up, before TLS starts;
- `handshake`: the ClientHello sent to the client's handshake done (its Finished written);
- `connect_handshake`: connect's start to the client's handshake done, TCP's handshake and
  TLS's together: what a client waits before it can send, and what Paquin, Stebila and
  Tamvada's s_timer timed (docs/reference-experiments.md, E5);
- `first_byte`: connect's start to the first byte of the server's response decrypted, the
  client's Finished and the request having gone out together in one write;
- `handshake_cpu_client` / `handshake_cpu_server`: each end's CPU time in the handshake
  (this thread's CPU clock here; the server's own, reported in SIZE_END_OK).

The server's chain and host name are verified by OpenSSL on every handshake; what the
handshake negotiated is read from its messages and must be what the job asked
(app.core.tls.tally); the response is compared with what the server must send. Tampered
requests must be refused by the server (counted like every job's tamper checks). Bytes
each way per flight, round trips and each connection's TCP_INFO are recorded.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection

from OpenSSL import SSL

from app.core.contracts.events import RawMetric, SizeMeasured, SizeStarted
from app.core.contracts.plan import JobPlan, SessionPeer
from app.core.measure.harness import Emit, ProgressCounter, SampleRounds, ValidationFailed, child_entry
from app.core.records.job_tcp_info import TcpInfo
from app.core.schemes import registry
from app.core.schemes.tls13 import Tls13Scheme
from app.core.tls import stack
from app.core.tls.certificates import CLIENT_NAME, SERVER_NAME, Chain, anchor_from_der, make_chain
from app.core.tls.control import (
    SIZE_FRAME,
    UNFINISHED,
    ServerReport,
    TlsJob,
    TlsPeerError,
    alpn_for,
    anchor_of,
    decode_object,
    parse_report,
)
from app.core.tls.data import DataMismatch, read_exact, request_for, response_for
from app.core.tls.handshake import HandshakeFailed, drain
from app.core.tls.sides import ClientSide, Finished
from app.core.tls.tally import HandshakeTally, NegotiationMismatch
from app.core.transport import tcpinfo
from app.core.transport.auth import authenticate_server
from app.core.transport.connect import connect
from app.core.transport.netns import enter_namespace
from app.core.transport.wire import MAX_CONTROL_FRAME, FrameReader, FrameType, WireError, send_frame
from app.core.vocab import Role

#: The metrics of a tls13 loopback job, in the order they are timed.
METRICS = ("connect", "handshake", "connect_handshake", "first_byte", "handshake_cpu_client")
#: Bytes one receive takes.
RECEIVE = 64 * 1024


class NotOpened(WireError):
    """A connection of the job that could not be opened: the server never saw it."""


@dataclass
class Sample:
    """One connection's figures (ns), and what its handshake was."""

    connect_ns: int
    handshake_ns: int
    #: connect's start to the handshake done: `connect_ns`, the ClientHello's making and `handshake_ns`.
    setup_ns: int
    first_byte_ns: int
    cpu_ns: int
    tcp: TcpInfo


class TlsClient:
    """Runs one tls13 job against its server, over the plan's peer."""

    def __init__(self, plan: JobPlan, emit: Emit) -> None:
        self.plan, self.job, self.emit = plan, plan.job, emit
        self.peer: SessionPeer = plan.session_peer()
        scheme = registry.create(self.job.scheme, self.job.backend, self.job.params)
        assert isinstance(scheme, Tls13Scheme), "the topologies send only tls13 jobs here"
        self.scheme = scheme
        refusal = stack.refusal(scheme.asked)
        if refusal is not None:
            raise stack.TlsStackError(refusal)
        self.alpn = alpn_for(self.peer.token)
        self.own: Chain | None = (
            make_chain(scheme.asked.certificate, scheme.asked.chain, CLIENT_NAME) if scheme.asked.mutual else None
        )
        self.context: SSL.Context | None = None
        self.session: SSL.Session | None = None
        self.control: socket.socket | None = None
        self.reader: FrameReader | None = None
        job = self.job
        self.progress = ProgressCounter(emit, plan.first_index, (job.samples + job.tamper) * len(job.message_sizes))

    # --- the control connection ---------------------------------------------------------

    def open(self, control: socket.socket) -> None:
        """Prove the token, send the job, trust the server's anchor."""
        peer = self.peer
        reader = FrameReader(control, MAX_CONTROL_FRAME, idle_timeout=peer.connect_timeout)
        authenticate_server(control, reader, peer.token, peer.address)
        job = TlsJob(
            params=dict(self.job.params),
            message_sizes=list(self.job.message_sizes),
            client_anchor=None if self.own is None else self.own.anchor_der().hex(),
        )
        send_frame(control, FrameType.JOB, [job.encode()])
        accepted = decode_object(reader.expect(FrameType.JOB_OK), "JOB_OK")
        anchor = anchor_from_der(anchor_of(accepted, "anchor", "JOB_OK"))
        self.context = stack.client_context(self.scheme.asked, anchor, None if self.own is None else self.own.identity)
        reader.idle_timeout = peer.reply_timeout
        self.control, self.reader = control, reader

    def _request(self, kind: FrameType, body: list[bytes], reply: FrameType) -> memoryview:
        assert self.control is not None and self.reader is not None
        send_frame(self.control, kind, body)
        return self.reader.expect(reply)

    # --- one connection -----------------------------------------------------------------

    def connection(
        self, size: int, seed: bytes, tally: HandshakeTally, tamper: int | None = None, watched: bool = False
    ) -> Sample:
        """One TCP connection, one TLS handshake, the size's request and response; with
        `tamper` (an offset) the request's records go with one bit flipped. `watched`: every
        handshake message read (the size's first connection, untimed), at the cost of
        OpenSSL's message callback inside the handshake; else what it negotiated is read
        from the wire and OpenSSL after the clock stops (app.core.tls.handshake)."""
        assert self.context is not None
        peer, clock = self.peer, time.perf_counter_ns
        start = clock()
        try:
            sock = connect(peer.host, peer.port, peer.connect_timeout, self.job.tcp_nodelay, peer.congestion_control)
        except WireError as exc:
            raise NotOpened(f"a TLS connection could not be opened: {exc}") from None
        connected = clock()
        sock.settimeout(peer.reply_timeout)
        side = ClientSide(self.context, SERVER_NAME, self.alpn, self.session, watched)
        try:
            cpu = time.thread_time_ns()
            hello = side.hello()
            sent = clock()
            sock.sendall(hello)
            finished = handshake_over(sock, side)
            done = clock()
            cpu = time.thread_time_ns() - cpu
            said = side.finish()
            tally.add(said.negotiated, said.log.flights, said.log.round_trips(), 0, self._checked_as(said, tamper))
            side.connection.sendall(request_for(seed, size))
            records = _drain(side)
            if tamper is not None:
                records = _flipped(records, tamper)
            sock.sendall(finished + records)
            first: list[int] = []
            response = read_exact(side.connection, size, lambda: _receive(sock), lambda: first.append(clock()))
            if tamper is None and response != response_for(seed, size):
                raise DataMismatch("the response arrived other than the server must send it")
            if self.scheme.asked.resumption == "ticket":
                self.session = side.connection.get_session()
            sock.sendall(side.close())
            _await_close(sock)
            return Sample(connected - start, done - sent, done - start, first[0] - start, cpu, _tcp(sock))
        finally:
            stack.forget(side.connection)
            sock.close()

    def _checked_as(self, said: Finished, tamper: int | None) -> Tls13Scheme | None:
        """What a tamper try's handshake is checked as: a resumed job's try may offer a ticket
        an earlier, refused try spent (a TLS 1.3 ticket resumes once), and its full
        handshake is then no mismatch. Every other handshake is checked as the job asked."""
        if tamper is None or self.scheme.asked.resumption != "ticket" or said.negotiated.resumed:
            return None
        full = registry.create(self.job.scheme, self.job.backend, {**self.job.params, "resumption": "none"})
        assert isinstance(full, Tls13Scheme)
        return full

    # --- a size -----------------------------------------------------------------------

    def prime(self, size: int, seed: bytes) -> int:
        """A resumed job's first ticket: one full handshake, untimed; the connections it made."""
        if self.scheme.asked.resumption == "ticket" and self.session is None:
            full = HandshakeTally(_full(self.scheme), "")
            self.connection(size, seed, full)
            return 1
        return 0

    def measure_size(self, index: int, size: int) -> SizeMeasured:
        job = self.job
        seed = os.urandom(SIZE_FRAME.size - 8)
        self._request(FrameType.SIZE, [SIZE_FRAME.pack(size, seed)], FrameType.SIZE_OK)
        result = SizeMeasured(index, size, metrics={})
        tally = HandshakeTally(self.scheme, stack.openssl_version()[1])
        untimed = self.prime(size, seed)
        rounds = SampleRounds(
            self.emit, self.plan.first_index, list(METRICS), job.warmup, on_sample=self.progress.advance
        )
        # The size's watched connection, untimed (the server watches the size's first one too).
        tcp: TcpInfo | None = self.connection(size, seed, tally, watched=True).tcp
        result.checked += 1
        untimed += 1
        made = untimed
        # Over the packet path: the link's count of packets it held too long, read around each
        # timed connection, so a stall of the emulator that touched a few handshakes flags the
        # size however few of its packets it held (JobPlan.late_packets).
        late, late_samples = self.plan.late_packets, 0
        try:
            for number in range(job.warmup + job.samples):
                held = late.value if late is not None else 0.0
                sample = self.connection(size, seed, tally)
                if late is not None and late.value != held and number >= job.warmup:
                    late_samples += 1
                made += 1
                result.checked += 1
                tcp = sample.tcp if tcp is None else tcpinfo.add(tcp, sample.tcp)
                rounds.record(
                    {
                        "connect": sample.connect_ns / 1e9,
                        "handshake": sample.handshake_ns / 1e9,
                        "connect_handshake": sample.setup_ns / 1e9,
                        "first_byte": sample.first_byte_ns / 1e9,
                        "handshake_cpu_client": sample.cpu_ns / 1e9,
                    }
                )
                self._pause()
        finally:
            result.tls = tally.record()
        result.metrics.update(rounds.flush())
        if late is not None:
            result.late_samples = late_samples
        # The tamper tries' handshakes are checked too, and kept out of the record's figures.
        made += self._tamper(result, size, seed, HandshakeTally(self.scheme, ""))
        report = parse_report(self._request(FrameType.SIZE_END, [], FrameType.SIZE_END_OK), made)
        self._server_side(result, report, made, untimed)
        if tcp is not None:
            result.tcp_info[Role.SENDER] = _with_exchanges(tcp, made)
        if report.tcp_info is not None:
            result.tcp_info[Role.RECEIVER] = _with_exchanges(report.tcp_info, made)
        record = result.tls
        if record is not None:
            result.wire_bytes = {
                "handshake_client": record.client_bytes.high,
                "handshake_server": record.server_bytes.high,
            }
        return result

    def _tamper(self, result: SizeMeasured, size: int, seed: bytes, tally: HandshakeTally) -> int:
        """`job.tamper` requests with one bit flipped, each on a connection of its own, which
        the server must refuse (its verdict comes with SIZE_END_OK); returns how many were made."""
        spots = self.scheme.tamper_spots(0, size)
        for k in range(self.job.tamper):
            spot = spots[k % len(spots)]
            self._request(FrameType.TAMPER, [], FrameType.ACK)
            try:
                self.connection(size, seed, tally, tamper=spot.offset)
            except NotOpened:
                # Never reached the server, which then reports a connection fewer: named as
                # what it is, not as a server that miscounted (a lossy link's SYNs run out).
                raise
            except (SSL.Error, DataMismatch, HandshakeFailed, OSError, WireError):
                pass  # refused, as it must be: the server's verdict says so
            result.tamper_tried += 1
            self.progress.advance()
        return self.job.tamper

    def _server_side(self, result: SizeMeasured, report: ServerReport, made: int, untimed: int) -> None:
        """The server's CPU per handshake (the genuine connections' after the `untimed` first),
        and its tamper verdicts."""
        job = self.job
        genuine, tampered = report.connections[: made - job.tamper], report.connections[made - job.tamper :]
        for k, entry in enumerate(genuine):
            if entry.verdict != "ok":
                raise ValidationFailed(f"the server failed handshake {k + 1} of the size: {entry.verdict}")
        cpu = [entry.cpu_ns / 1e9 for entry in genuine[untimed:]]
        result.metrics["handshake_cpu_server"] = RawMetric(samples=cpu[job.warmup :], warmup=cpu[: job.warmup])
        spots = self.scheme.tamper_spots(0, result.message_size)
        for k, entry in enumerate(tampered):
            if entry.verdict.startswith(UNFINISHED):
                # Over 50 % loss the server waited out its 300 s for a tamper try's records:
                # "tampered payload not rejected", as if its check had let one through.
                raise HandshakeFailed(
                    f"tamper try {k + 1} ({spots[k % len(spots)].label}) never reached the server's check of its "
                    f"records: {entry.verdict.removeprefix(UNFINISHED)}"
                )
            if entry.verdict.startswith("refused"):
                result.tamper_rejected += 1
            else:
                result.tamper_failures.append(f"{spots[k % len(spots)].label}: {entry.verdict}")

    def _pause(self) -> None:
        if self.job.pause_ms > 0:
            time.sleep(self.job.pause_ms / 1000)

    def run(self, control: socket.socket) -> None:
        self.open(control)
        for index, size in enumerate(self.job.message_sizes):
            self.emit(SizeStarted(index, size))
            try:
                measured = self.measure_size(index, size)
            except (ValidationFailed, HandshakeFailed, NegotiationMismatch, DataMismatch, TlsPeerError) as exc:
                measured = SizeMeasured.failure(index, size, exc)
                self.emit(measured)
                raise
            self.emit(measured.summarize())
        assert self.control is not None
        send_frame(self.control, FrameType.BYE)


def handshake_over(sock: socket.socket, side: ClientSide) -> bytes:
    """Feed the server's flights from `sock` into the client until it is done (its ClientHello
    already sent); its last flight (the Finished), which goes out with the request. Every wait
    is bounded by the socket's timeout, every byte by the side's bound."""
    while True:
        data = _receive(sock)
        if not data:
            raise HandshakeFailed(f"the server closed the connection mid-handshake, after {side.received:,} bytes")
        out = side.receive(data)
        if side.done:
            return out
        if out:
            sock.sendall(out)


def _full(scheme: Tls13Scheme) -> Tls13Scheme:
    """The same job but for resumption: a resumed job's first, full handshake is checked as one."""
    return Tls13Scheme({**scheme.info.params, "resumption": "none"})


def _drain(side: ClientSide) -> bytes:
    return drain(side.connection)


def _flipped(records: bytes, offset: int) -> bytes:
    changed = bytearray(records)
    changed[offset] ^= 0x01
    return bytes(changed)


def _receive(sock: socket.socket) -> bytes:
    try:
        return sock.recv(RECEIVE)
    except TimeoutError:
        raise HandshakeFailed(f"the server sent nothing for {sock.gettimeout():g} s") from None


def _await_close(sock: socket.socket) -> None:
    """Wait for the server to close first (its end keeps the TIME_WAIT of thousands of
    connections), reading what it still sends (its close_notify)."""
    while _receive(sock):
        pass


def _tcp(sock: socket.socket) -> TcpInfo:
    return tcpinfo.window(tcpinfo.NEW_CONNECTION, tcpinfo.read(sock))


def _with_exchanges(info: TcpInfo, count: int) -> TcpInfo:
    return info if info.unavailable is not None else replace(info, exchanges=count)


def tls_client_main(conn: Connection, plan: JobPlan) -> None:
    """Entry point of a tls13 job's client process (the topology's sender)."""
    child_entry(conn, lambda emit: run_client(plan, emit), describe=_describe)


def run_client(plan: JobPlan, emit: Emit) -> None:
    """Enter the plan's namespace, open the control connection, run the job (`tls_client_main`'s body)."""
    peer = plan.session_peer()
    if peer.namespace is not None:  # a packet link's end: before any socket is made
        enter_namespace(peer.namespace)
    client = TlsClient(plan, emit)
    with connect(peer.host, peer.port, peer.connect_timeout, True, peer.congestion_control, peer.admission) as control:
        client.run(control)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, WireError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"

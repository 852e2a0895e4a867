"""The sender (client) side of a session: the process that times what a user's client pays.

Per profile job: connect, present the token, describe the job, then
`keygen_samples` handshake rounds (the receiver times its key generation and its
handshake; the sender times its own handshake and the round trip), and for each
message size: a raw ping-pong of payload-sized frames (the network floor), the
measured messages (seal timed as "compute", send-to-acknowledgement as "rtt", the
receiver's open time from the acknowledgement, "network" = rtt - receiver),
tampered payloads that must be rejected, and an untimed tracemalloc pass.

Everything measured is sent to the supervisor as the same events an operations
child sends, so the runner, CLI and GUI treat both modes alike; the loop's rules
(warm-up apart, samples in batches, the tamper check, the memory pass, the entry
point) are app.core.measure.harness's, shared with the operations worker. The process
around a session (its entry point, reconnecting while the receiver is busy) is
`app.core.session.sender_process`; opening a connection, `app.core.transport.connect`.
"""

from __future__ import annotations

import gc
import os
import socket
import time
from typing import Any

from app.core.contracts.events import RawMetric, SizeMeasured, SizeStarted
from app.core.contracts.plan import JobPlan
from app.core.errors import SessionError
from app.core.measure.harness import (
    FLUSH_INTERVAL,
    Emit,
    Parts,
    ProgressCounter,
    SampleRounds,
    ValidationFailed,
    check_tampering,
    traced_peak,
)
from app.core.records.job_tcp_info import TcpInfo
from app.core.schemes import registry
from app.core.schemes.base import (
    KEYGEN_ON_SENDER,
    NO_KEYGEN,
    Scheme,
    SchemeError,
    Sender,
)
from app.core.session.protocol import (
    ACK,
    FLOOR_RECHECKS,
    FLOOR_TOLERANCE,
    LOAD_NONCE_BYTES,
    MAX_QUEUE_POSITION,
    MAX_RETRY_MS,
    SEED_BYTES,
    SIZE_FRAME,
    U64,
    FasterThanFloor,
    JobDescription,
    LoadServe,
    PeerLied,
    Verdict,
    check_bytes,
    check_network,
    check_within,
    decode_ack,
    decode_json,
    decode_u32,
    parse_resources,
    parse_tcp_info,
    plaintext_for,
)
from app.core.transport import tcpinfo
from app.core.transport.auth import authenticate_server, frame_bytes
from app.core.transport.connect import connect
from app.core.transport.doorway import TICKET_BYTES
from app.core.transport.wire import (
    HARD_MAX_FRAME,
    HEADER_SIZE,
    MAX_CONTROL_FRAME,
    ConnectionClosed,
    FrameReader,
    FrameType,
    MalformedBody,
    UnexpectedFrame,
    WireError,
    describe_unsolicited,
    send_frame,
)
from app.core.vocab import Family, Mode, Role, TcpConnection

#: The floor ping-pong needs far fewer samples than the messages to be stable.
FLOOR_MAX_SAMPLES = 1000
#: The metrics that time a whole exchange on the connection (what a peer's RTT is held to).
ROUND_TRIPS = frozenset({"handshake_rtt", "floor_rtt", "rtt", "connect"})
#: At most this many warm-up handshake rounds (a round may be an RSA-4096 keygen).
HANDSHAKE_WARMUP_MAX = 2
#: Frames that only ever answer a request of the sender's.
ANSWERS = frozenset(
    {
        FrameType.PUBLIC,
        FrameType.HANDSHAKE_OK,
        FrameType.SIZE_OK,
        FrameType.PONG,
        FrameType.ACK,
        FrameType.TRACE_OK,
        FrameType.SIZE_END_OK,
    }
)


def out_of_step(exc: UnexpectedFrame, request: FrameType) -> WireError:
    """What a wrong reply to `request` means. Each request has one answer, in order, so the
    answer to another request where this one's is due means the receiver's answers are out
    of step: one of them answered a request not yet made, and each since the one before.
    `_quiet` catches such an early answer when it is there before the next request goes
    out; one that came a hair later was taken as that request's answer, and the shift
    showed only where the reply's type changed (an ACK where the TRACE_OK was due)."""
    if exc.got in ANSWERS:
        return PeerLied(
            f"the receiver answered the sender's {request.name} with {exc.got.name}, an answer to "
            "another request: its answers are out of step, one of them an answer to a request not yet made"
        )
    return exc


def tampered(parts: Parts, offset: int) -> list[bytes | bytearray | memoryview]:
    """The payload parts with one bit flipped at `offset` of their concatenation,
    copying only the part that holds it."""
    total = sum(len(p) for p in parts)
    if offset < 0:
        offset += total
    out: list[bytes | bytearray | memoryview] = []
    position = 0
    for part in parts:
        if position <= offset < position + len(part):
            changed = bytearray(part)
            changed[offset - position] ^= 0x01
            out.append(changed)
        else:
            out.append(part)
        position += len(part)
    return out


class SessionFailed(SessionError):
    """The session cannot go on (the receiver refused the job or the handshake)."""


class ServerBusy(SessionError):
    """The (authenticated) receiver's queue is full: reconnect after `retry_after` seconds."""

    def __init__(self, retry_after: float) -> None:
        super().__init__(f"the server is busy; retry in {retry_after:g} s")
        self.retry_after = retry_after


def _load_server(accepted: dict[str, Any]) -> tuple[int, bytes]:
    """The port and nonce a serve's JOB_OK gives for a load job, checked."""
    port, nonce = accepted.get("load_port"), accepted.get("load_nonce")
    if type(port) is not int or not 0 < port < 65536:
        raise PeerLied(f"JOB_OK load_port = {port!r:.80} is not a port (1..65535)")
    if not isinstance(nonce, str) or len(nonce) != 2 * LOAD_NONCE_BYTES:
        raise PeerLied(f"JOB_OK load_nonce = {nonce!r:.80} is not {LOAD_NONCE_BYTES} bytes in hex")
    try:
        return port, bytes.fromhex(nonce)
    except ValueError:
        raise PeerLied(f"JOB_OK load_nonce = {nonce!r:.80} is not hex") from None


class SenderSession:
    """One session over a connected socket: the plan's job against the plan's receiver."""

    def __init__(self, sock: socket.socket, plan: JobPlan, emit: Emit) -> None:
        self.sock = sock
        self.plan = plan
        self.job = job = plan.job
        self.peer = plan.session_peer()
        self.emit = emit
        self.scheme: Scheme = registry.create(job.scheme, job.backend, job.params, job.exchange)
        self.family = self.scheme.info.family
        self.reader = FrameReader(sock, MAX_CONTROL_FRAME, idle_timeout=self.peer.reply_timeout)
        #: Each timed exchange on a fresh connection (the job's "tcp_connection": "fresh").
        self.fresh = job.link is not None and job.link.connection == TcpConnection.FRESH
        self.ticket = b""  # what a fresh connection presents: the receiver's, from JOB_OK
        self.attach = b""  # the ATTACH frame that carries it, ahead of the timed frame
        self.fresh_tcp: list[TcpInfo] = []  # the size's fresh connections, as their kernel saw them
        #: A loopback or link receiver reads this machine's monotonic clock: its times nest
        #: inside the sender's exactly (protocol.clock_slack_ns); a remote one reads its own.
        self.shared_clock = job.mode != Mode.REMOTE
        self.extra_exchanges = 0
        #: The longest round trip timed on the connection so far, in seconds (`_kernel`).
        self.longest_round_trip_s: float | None = None
        #: A load job's server on the remote machine: its port and the nonce its secrets derive from.
        self.load_port = 0
        self.load_nonce = b""
        self.floor_samples = min(job.samples, FLOOR_MAX_SAMPLES)
        self.rounds_warmup = min(job.warmup, HANDSHAKE_WARMUP_MAX)
        per_size = self.floor_samples + job.samples + job.tamper
        # At most one progress event per flush interval: each costs a pickle and a
        # pipe write, time the sender would otherwise spend between samples.
        self.progress = ProgressCounter(
            emit, plan.first_index, job.keygen_samples + per_size * len(job.message_sizes), min_interval=FLUSH_INTERVAL
        )

    # --- helpers --------------------------------------------------------------------

    def _rounds(self, names: list[str], warmup: int) -> SampleRounds:
        return SampleRounds(self.emit, self.plan.first_index, names, warmup, on_sample=self.progress.advance)

    def _pause(self) -> None:
        if self.job.pause_ms > 0:
            time.sleep(self.job.pause_ms / 1000)

    def _quiet(self, request: str, reader: FrameReader | None = None) -> None:
        """Nothing may wait to be read before a request: the protocol answers each request
        once, so anything there answers a request not yet made (an acknowledgement for a
        message not yet sent, which would make its round trip look instant). Checked outside
        every timed region; one zero-timeout poll when all is well."""
        early = (reader or self.reader).unsolicited()
        if early:
            raise PeerLied(
                f"the receiver sent {describe_unsolicited(early)} before the sender's {request}: "
                "an answer to a request not yet made"
            )

    def _request(self, kind: FrameType, parts: Parts, reply: FrameType) -> memoryview:
        self._quiet(kind.name)
        send_frame(self.sock, kind, parts)
        return self._answer(self.reader, kind, reply)

    @staticmethod
    def _answer(reader: FrameReader, request: FrameType, reply: FrameType) -> memoryview:
        """The reply to `request`; a wrong one named (`out_of_step`). The timed exchanges
        inline this (one call fewer inside the timing)."""
        try:
            return reader.expect(reply)
        except UnexpectedFrame as exc:
            raise out_of_step(exc, request) from None

    def _open_fresh(self) -> tuple[socket.socket, FrameReader, int]:
        """A new connection to the receiver, announced on the session's connection: the
        socket, its reader and how long the connection took to set up (SYN to SYN-ACK), in
        nanoseconds.

        Nothing crosses it yet: the connection's first flight is the timed one, which carries
        the session's ticket (ATTACH) in the same write as its frame (`_exchange`), as a TLS
        ClientHello opens a first visit. An exchange before it gave the kernel an RTT sample
        and the receiver's first ACK, and took 1.1-3.2 ms off a 16 KiB-1 MiB message at 20 ms,
        8 Mbit/s (docs/links.md, "Fresh or warm connections")."""
        peer = self.peer
        clock = time.perf_counter_ns
        start = clock()
        side = connect(
            peer.host, peer.port, peer.connect_timeout, self.job.tcp_nodelay, peer.congestion_control, peer.admission
        )
        connect_ns = clock() - start
        try:
            send_frame(self.sock, FrameType.FRESH)
            reader = FrameReader(side, MAX_CONTROL_FRAME, idle_timeout=peer.reply_timeout)
        except BaseException:
            side.close()
            raise
        return side, reader, connect_ns

    def _close_fresh(self, side: socket.socket, reader: FrameReader) -> None:
        """Wait for the receiver to close first (its end keeps the TIME_WAIT, so thousands
        of fresh connections never exhaust this end's ports), then keep what this end's
        kernel saw on the connection, from its SYN on."""
        try:
            kind, _ = reader.read()
        except ConnectionClosed:
            self.fresh_tcp.append(tcpinfo.window(tcpinfo.NEW_CONNECTION, tcpinfo.read(side)))
            return
        finally:
            side.close()
        raise UnexpectedFrame(f"{kind.name} on a fresh connection after its answer (the receiver closes it)")

    def _exchange(
        self, kind: FrameType, parts: Parts, reply: FrameType, fresh: tuple[socket.socket, FrameReader] | None
    ) -> memoryview:
        """One timed request and its reply, on the session's connection or a fresh one
        (the caller checked `_quiet` first, outside its timed region)."""
        if fresh is None:
            send_frame(self.sock, kind, parts)
            reader = self.reader
        else:
            send_frame(fresh[0], kind, parts, before=self.attach)
            reader = fresh[1]
        try:
            return reader.expect(reply)
        except UnexpectedFrame as exc:
            raise out_of_step(exc, kind) from None

    # --- phases -----------------------------------------------------------------------

    def open_session(self) -> None:
        # A CryptoBench receiver answers these at once; anything slower is not one.
        self.reader.idle_timeout = self.peer.connect_timeout
        authenticate_server(self.sock, self.reader, self.peer.token, self.peer.address)
        # From here on this reader alone reads the connection: it may read ahead, which
        # saves a receive per frame (header and body in one) on every round trip.
        self.reader = FrameReader(self.sock, MAX_CONTROL_FRAME, idle_timeout=self.reader.idle_timeout, read_ahead=True)
        self.wait_until_ready()
        job = self.job
        description = JobDescription(
            scheme=job.scheme,
            backend=job.backend,
            params=job.params,
            message_sizes=job.message_sizes,
            tcp_nodelay=job.tcp_nodelay,
            fresh_connections=self.fresh,
            load=LoadServe(server_workers=job.load.server_workers) if job.load is not None else None,
            exchange=job.exchange,
        )
        accepted = decode_json(self._request(FrameType.JOB, [description.encode()], FrameType.JOB_OK), "JOB_OK")
        if job.load is not None or self.family == Family.TLS:  # the job's server, started for it
            self.load_port, self.load_nonce = _load_server(accepted)
        capacity = accepted.get("capacity")
        if type(capacity) is not int or not 0 < capacity <= HARD_MAX_FRAME:
            raise PeerLied(f"JOB_OK capacity = {capacity!r:.80} is not a frame size (1..{HARD_MAX_FRAME})")
        if self.fresh:
            ticket = accepted.get("ticket")
            if not isinstance(ticket, str) or len(ticket) != 2 * TICKET_BYTES:
                raise PeerLied(f"JOB_OK ticket = {ticket!r:.80} is not {TICKET_BYTES} bytes in hex")
            try:
                self.ticket = bytes.fromhex(ticket)
            except ValueError:
                raise PeerLied(f"JOB_OK ticket = {ticket!r:.80} is not hex") from None
            self.attach = frame_bytes(FrameType.ATTACH, self.ticket)
        self.reader.idle_timeout = self.peer.reply_timeout

    def wait_until_ready(self) -> None:
        """Wait for READY while the receiver serves other clients' jobs.

        A queued connection gets QUEUED (clients ahead) every few seconds, each within
        the connect timeout; BUSY means the queue is full: `sender_process.sender_main` reconnects.
        """
        deadline = time.monotonic() + self.peer.queue_timeout
        while True:
            kind, body = self.reader.read(MAX_CONTROL_FRAME)
            if kind is FrameType.READY:
                return
            if kind is FrameType.BUSY:
                raise ServerBusy(decode_u32(body, "BUSY", 0, MAX_RETRY_MS) / 1000)
            if kind is not FrameType.QUEUED:
                raise UnexpectedFrame(f"expected READY, QUEUED or BUSY, got {kind.name}")
            ahead = decode_u32(body, "QUEUED", 1, MAX_QUEUE_POSITION)
            if time.monotonic() > deadline:
                raise SessionFailed(
                    f"still queued behind {ahead} job(s) after {self.peer.queue_timeout:g} s; the server is busy"
                )

    def handshakes(self) -> tuple[Sender, dict[str, RawMetric], dict[str, int]]:
        """`keygen_samples` rounds of setup + handshake; the last round's keys carry the messages."""
        rounds = self._rounds(["keygen", "handshake", "handshake_receiver", "handshake_rtt"], self.rounds_warmup)
        clock = time.perf_counter_ns
        sender: Sender | None = None
        wire: dict[str, int] = {}
        for _ in range(self.rounds_warmup + self.job.keygen_samples):
            self._quiet("SETUP")
            start = clock()
            send_frame(self.sock, FrameType.SETUP)
            body = self._answer(self.reader, FrameType.SETUP, FrameType.PUBLIC)
            setup_rtt_ns = clock() - start
            if len(body) < U64.size:
                raise MalformedBody("PUBLIC frame shorter than its keygen time")
            (keygen_ns,) = U64.unpack_from(body)
            check_within("keygen time", keygen_ns, setup_rtt_ns, shared_clock=self.shared_clock)
            public = bytes(body[U64.size :])
            sender = self.scheme.new_sender()
            start = clock()
            message = sender.handshake(public)
            handshake_ns = clock() - start
            self._quiet("HANDSHAKE")
            sent = clock()
            send_frame(self.sock, FrameType.HANDSHAKE, [message])
            receiver_ns, verdict, reason = decode_ack(
                self._answer(self.reader, FrameType.HANDSHAKE, FrameType.HANDSHAKE_OK)
            )
            rtt_ns = clock() - sent
            if verdict is not Verdict.OK:
                raise SessionFailed(f"receiver rejected the handshake: {reason}")
            check_within("handshake time", receiver_ns, rtt_ns, shared_clock=self.shared_clock)
            wire = {
                "public_material": len(public),
                "handshake": len(message),
                "handshake_frames": 4 * HEADER_SIZE + U64.size + len(public) + len(message) + ACK.size,
            }
            values = {"handshake_receiver": receiver_ns, "handshake_rtt": rtt_ns}
            if self.family in KEYGEN_ON_SENDER:
                values["keygen"] = handshake_ns  # the signer's key pair is made in its handshake
            elif self.family not in NO_KEYGEN:
                values["keygen"] = keygen_ns
                values["handshake"] = handshake_ns
            rounds.record({name: value / 1e9 for name, value in values.items()})
        assert sender is not None
        return sender, {name: raw for name, raw in rounds.flush().items() if raw.samples}, wire

    def measure_size(
        self, index: int, size: int, sender: Sender, shared: dict[str, RawMetric], shared_wire: dict[str, int]
    ) -> SizeMeasured:
        job = self.job
        seed = os.urandom(SEED_BYTES)
        plaintext = plaintext_for(seed, size)
        tcp_start = tcpinfo.read(self.sock)  # the kernel's counters before the size's first frame
        self.fresh_tcp = []
        self.extra_exchanges = 0  # floor re-checks (`_floor_now`), which the receiver answers too
        size_start = time.monotonic()  # the receiver's resource report covers less than this
        self._request(FrameType.SIZE, [SIZE_FRAME.pack(size, seed)], FrameType.SIZE_OK)
        result = SizeMeasured(index, size, metrics=dict(shared))
        gc.collect()

        sample = sender.seal(plaintext)
        payload_len = sum(len(p) for p in sample)
        result.wire_bytes = dict(shared_wire)
        result.wire_bytes.update(
            {
                "payload": payload_len,
                "overhead": payload_len - size,
                "frame": HEADER_SIZE + payload_len,
                "ack_frame": HEADER_SIZE + ACK.size,
            }
        )

        # The floor: the same bytes, the same frames, nothing sealed or opened.
        # On fresh connections each exchange opens its own (untimed but for "connect").
        floor = self._rounds(["floor_rtt"], job.warmup)
        clock = time.perf_counter_ns
        fresh: tuple[socket.socket, FrameReader] | None = None
        floor_ns: int | None = None  # the fastest ping-pong, warm-up included: the messages' bound
        late = self.plan.late_packets  # the packet link's count of packets it held too long
        late_samples = 0
        for ping in range(job.warmup + self.floor_samples):
            if self.fresh:
                side, side_reader, _ = self._open_fresh()
                fresh = (side, side_reader)
            self._quiet(f"PING {ping + 1}", fresh[1] if fresh else None)
            held = late.value if late is not None else 0.0
            start = clock()
            self._exchange(FrameType.PING, sample, FrameType.PONG, fresh)
            took = clock() - start
            if late is not None and late.value != held and ping >= job.warmup:
                late_samples += 1
            floor_ns = took if floor_ns is None else min(floor_ns, took)
            floor.record({"floor_rtt": took / 1e9})
            if fresh is not None:
                self._close_fresh(*fresh)
        result.metrics.update(floor.flush())
        del sample

        names = ["compute", "rtt", "receiver", "network"] + (["connect"] if self.fresh else [])
        messages = self._rounds(names, job.warmup)
        seal = sender.seal
        for number in range(job.warmup + job.samples):
            connect_ns = 0
            if self.fresh:
                side, side_reader, connect_ns = self._open_fresh()
                fresh = (side, side_reader)
            self._quiet(f"MESSAGE {number + 1}", fresh[1] if fresh else None)
            held = late.value if late is not None else 0.0
            start = clock()
            parts = seal(plaintext)
            sealed = clock()
            body = self._exchange(FrameType.MESSAGE, parts, FrameType.ACK, fresh)
            done = clock()
            if late is not None and late.value != held and number >= job.warmup:
                late_samples += 1
            del parts
            if fresh is not None:
                self._close_fresh(*fresh)
            receiver_ns, verdict, reason = decode_ack(body)
            if verdict is not Verdict.OK:
                result.failed += 1
                raise ValidationFailed(f"the receiver could not open a genuine message ({verdict.name}): {reason}")
            check_within("open time", receiver_ns, done - sealed, shared_clock=self.shared_clock)
            try:
                network_ns = check_network(receiver_ns, done - sealed, floor_ns)
            except FasterThanFloor:  # the floor may have been slowed by load: ping again, now
                floor_ns = min(floor_ns or 0, self._floor_now(sender, plaintext, receiver_ns, done - sealed))
                network_ns = check_network(receiver_ns, done - sealed, floor_ns)
            result.checked += 1
            values = {
                "compute": (sealed - start) / 1e9,
                "rtt": (done - sealed) / 1e9,
                "receiver": receiver_ns / 1e9,
                "network": network_ns / 1e9,
            }
            if self.fresh:
                values["connect"] = connect_ns / 1e9
            messages.record(values)
            self._pause()
        result.metrics.update(messages.flush())
        if late is not None:
            result.late_samples = late_samples

        self._tamper(result, sender, plaintext)
        self._trace(result, sender, plaintext)
        report = self._request(FrameType.SIZE_END, [], FrameType.SIZE_END_OK)
        result.receiver_resources = parse_resources(
            report, time.monotonic() - size_start, shared_clock=self.shared_clock
        )
        self._kernel(result, tcp_start, report)
        return result

    def _floor_now(self, sender: Sender, plaintext: bytes, receiver_ns: int, round_trip_ns: int) -> int:
        """The fastest of up to FLOOR_RECHECKS floor pings made now, right after a message
        whose network time was far under the size's floor: untimed as results (not added to
        floor_rtt), only to tell a floor slowed by load from a receiver that answers pings
        slowly and messages early. Stops as soon as a ping is fast enough."""
        parts = sender.seal(plaintext)  # a payload of the same size: the same bytes on the wire
        clock = time.perf_counter_ns
        best: int | None = None
        for _ in range(FLOOR_RECHECKS):
            fresh: tuple[socket.socket, FrameReader] | None = None
            if self.fresh:
                side, side_reader, _ = self._open_fresh()
                fresh = (side, side_reader)
            self._quiet("PING (a floor re-check)", fresh[1] if fresh else None)
            start = clock()
            self._exchange(FrameType.PING, parts, FrameType.PONG, fresh)
            took = clock() - start
            if fresh is not None:
                self._close_fresh(*fresh)
            self.extra_exchanges += 1
            best = took if best is None else min(best, took)
            if round_trip_ns - receiver_ns >= best * FLOOR_TOLERANCE:
                break
        assert best is not None
        return best

    def _kernel(self, result: SizeMeasured, start: tcpinfo.Reading, report: memoryview) -> None:
        """Both ends' TCP_INFO over the size: this end's from `start` to now, the receiver's
        from its SIZE_END_OK `report` (checked: it is the peer's)."""
        job = self.job
        # Every request of the size has one reply: SIZE, the floor pings, the messages, the
        # tampered payloads, TRACE and SIZE_END.
        exchanges = 3 + 2 * job.warmup + self.floor_samples + job.samples + result.tamper_tried + self.extra_exchanges
        mine = tcpinfo.window(start, tcpinfo.read(self.sock), exchanges)
        for fresh in self.fresh_tcp:  # and each fresh connection's, the messages' own
            mine = tcpinfo.add(mine, fresh)
        result.tcp_info[Role.SENDER] = mine
        # The longest round trip timed on the connection so far: the receiver's smoothed RTT
        # still carries earlier sizes' samples (it forgets 1/8 of the past per sample).
        timed = [max(raw.samples) for name, raw in result.metrics.items() if name in ROUND_TRIPS and raw.samples]
        if timed:
            self.longest_round_trip_s = max(timed + [self.longest_round_trip_s or 0.0])
        theirs = parse_tcp_info(decode_json(report, "SIZE_END_OK"), exchanges, mine, self.longest_round_trip_s)
        if theirs is not None:
            result.tcp_info[Role.RECEIVER] = theirs

    def _tamper(self, result: SizeMeasured, sender: Sender, plaintext: bytes) -> None:
        """Send payloads with one bit flipped where the scheme must notice; count rejections."""

        def deliver(parts: Parts, offset: int) -> str | None:
            self._quiet("TAMPER")
            send_frame(self.sock, FrameType.TAMPER, tampered(parts, offset))
            _, verdict, reason = decode_ack(self._answer(self.reader, FrameType.TAMPER, FrameType.ACK))
            if verdict is Verdict.REJECTED:
                return None
            if verdict is Verdict.ERROR:
                return f"receiver raised {reason} instead of a typed rejection"
            if verdict is Verdict.WRONG_PLAINTEXT:
                return "tampered payload was ACCEPTED (opened to other bytes)"
            return "tampered payload was ACCEPTED"

        check_tampering(
            self.scheme,
            self.job.tamper,
            len(plaintext),
            result,
            lambda: sender.seal(plaintext),
            deliver,
            self.progress.advance,
        )

    def _trace(self, result: SizeMeasured, sender: Sender, plaintext: bytes) -> None:
        """Peak Python-heap allocation of one seal here and one open there, untimed."""
        peak, parts = traced_peak(lambda: sender.seal(plaintext))
        self._quiet("TRACE")
        send_frame(self.sock, FrameType.TRACE, parts)
        del parts
        receiver_peak, verdict, reason = decode_ack(self._answer(self.reader, FrameType.TRACE, FrameType.TRACE_OK))
        if verdict is not Verdict.OK:
            raise ValidationFailed(f"the receiver could not open the traced message: {reason}")
        result.metrics["compute"].traced_peak_bytes = peak
        result.metrics["receiver"].traced_peak_bytes = check_bytes("traced peak", receiver_peak)

    def run(self) -> None:
        self.open_session()
        was_enabled = gc.isenabled()
        gc.disable()  # no collector pause inside a timed seal or round trip
        try:
            sender, shared, wire = self.handshakes()
            for index, size in enumerate(self.job.message_sizes):
                self.emit(SizeStarted(index, size))
                try:
                    measured = self.measure_size(index, size, sender, shared, wire)
                except (ValidationFailed, SchemeError) as exc:
                    measured = SizeMeasured.failure(index, size, exc)
                    self.emit(measured)
                    # The receiver may be mid-size; the connection's state is unknown.
                    raise SessionFailed(f"stopped after message size {size}: {exc}") from None
                self.emit(measured.summarize())
            send_frame(self.sock, FrameType.BYE)
        finally:
            if was_enabled:
                gc.enable()

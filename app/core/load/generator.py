"""A load job's generator: every client connection, driven open-loop from one process.

Open loop: request k of a step is *intended* to start at `t0 + k / rate`, whatever the
server is doing; it is handed to its connection (round robin over the clients) when
its time comes, and its latency runs from that intended time to its acknowledgement.
A server that stalls therefore shows as latency, and cannot slow the schedule down
(the coordinated omission of closed-loop tools).

The clients' own crypto is done ahead of each message size: each connection prepares
a pool of distinct requests (a fresh sender per request: its handshake and one sealed
message; for signatures, signed messages under the connection's key) and cycles
through it, so that the generator only sends and times, and the server's capacity is
what a step measures. The generator measures itself too: its CPU (which includes polling
for the last `SPIN_S` before each request is due: a virtual CPU that halts when idle
wakes up to a millisecond late), and how late its loop handed requests to the kernel; a
step it could not drive on time is marked.
"""

from __future__ import annotations

import gc
import secrets
import selectors
import socket
import struct
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from hdrh.histogram import HdrHistogram

from app.core.contracts.events import MeasuringMessage, SampleBatch, SizeMeasured
from app.core.contracts.plan import JobPlan, SessionPeer
from app.core.link.relay import fine_timer_slack
from app.core.load import sweep
from app.core.load.framing import RECORD, REPLY, Kind, ReplyBuffer, record, request_body
from app.core.load.sweep import BACKLOG_MAX, BACKLOG_MAX_BYTES, IN_FLIGHT_MAX
from app.core.measure.harness import Parts, check_tampering
from app.core.records.job_conditions import LOAD_PERCENTILES, LoadStep
from app.core.records.load_histogram import HISTOGRAM_RANGE
from app.core.records.tls_record import TlsRecord, TlsStep
from app.core.schemes import registry
from app.core.schemes.base import KEYGEN_ON_SENDER, Scheme, flip_bit
from app.core.session.protocol import SEED_BYTES, U64, Verdict, plaintext_for
from app.core.settings.links import round_trip_ms
from app.core.settings.load import MAX_RATE_PER_S, LoadSettings, schedule_share, split_rate, step_schedule
from app.core.settings.profile import MAX_SAMPLES
from app.core.transport.auth import ServerNotAuthenticated, authenticate_server
from app.core.transport.connect import connect
from app.core.transport.wire import MAX_CONTROL_FRAME, FrameReader, WireError
from app.core.vocab import PlacementPolicy

Emit = Callable[[MeasuringMessage], None]

#: Each connection prepares at most this many distinct requests, within this long.
POOL_MAX = 64
POOL_MIN = 4
POOL_BUDGET_S = 0.5
#: A sweep's closed-loop estimate of the server's capacity: this many requests, at most this long.
CALIBRATION_REQUESTS = 200
CALIBRATION_BUDGET_S = 0.5
#: After a step's last send, how long its outstanding requests get before they count as errors.
MIN_DRAIN_S = 2.0
#: Live samples per batch sent to the window (a subsample of the step's latencies).
LIVE_BATCH = 400
LIVE_EVERY_S = 0.25
#: How long a blocking exchange during setup (public key, calibration, marks) may take.
SETUP_TIMEOUT_S = 30.0
#: The most public material a load server may publish for one connection (an RSA-4096
#: key is ~550 bytes, an ML-KEM-1024 one 1.5 KiB).
MAX_PUBLIC = 64 * 1024
#: The generator polls instead of sleeping for the last this-long before each request is
#: due (on its own CPU: not under placement `same`, where it would take the server's).
SPIN_S = 0.0005
#: Linux's SO_TIMESTAMPNS (and SCM_TIMESTAMPNS): the kernel stamps each received segment
#: with its arrival time (CLOCK_REALTIME, a struct timespec). Python's socket module does
#: not name it.
SO_TIMESTAMPNS = 35
_TIMESPEC = struct.Struct("@qq")
TIMESTAMP_SPACE = socket.CMSG_SPACE(_TIMESPEC.size) if hasattr(socket, "CMSG_SPACE") else 0
#: A request id carries its step in the high bits: a late reply to an earlier step is
#: recognised and ignored instead of being counted in the next one.
STEP_SHIFT = 40


class LoadFailed(WireError):
    """The load job could not go on (a connection broke, the server refused a request)."""


@dataclass
class ClientConnection:
    sock: socket.socket
    replies: ReplyBuffer = field(default_factory=ReplyBuffer)
    out: bytearray = field(default_factory=bytearray)
    pool: list[bytes] = field(default_factory=list)
    cursor: int = 0
    #: The records in `out`, in order: (length, whether it is a request), and how many bytes
    #: of the first have gone to the kernel: which requests are still owed.
    queued: deque[tuple[int, bool]] = field(default_factory=deque)
    head_sent: int = 0


@dataclass
class StepState:
    """What one step's replies add up to while it runs."""

    histogram: HdrHistogram
    window_start: int
    window_end: int
    #: The first measured request's index in the step's schedule (the warm-up's length).
    first_measured: int
    outstanding: dict[int, int] = field(default_factory=dict)
    completed_in_window: int = 0
    #: Requests the server answered with a failed verdict (validation), by verdict name.
    refused: dict[str, int] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)
    server_ns: list[int] = field(default_factory=list)
    live: list[float] = field(default_factory=list)
    #: Requests still unanswered when the drain ran out (warm-up ones included).
    abandoned: int = 0
    #: Per-request samples (`latencies`, `server_ns`) are kept for every this-many-th measured
    #: request of the schedule, so that a step keeps at most `MAX_SAMPLES` of each (the
    #: results' bound on a metric's n), over all its generators; the histogram counts every request.
    sample_every: int = 1
    #: Requests not sent because the backlog (or the requests in flight) was at its cap:
    #: measured ones, and warm-up ones.
    missed: int = 0
    missed_warmup: int = 0
    #: The most requests owed at once during the step (never above the cap).
    backlog_peak: int = 0
    #: Measured requests in the window, and the latencies of those due in its first and in
    #: its last quarter: a latency that grows through the step is a queue without bound.
    measured: int = 0
    first_part: HdrHistogram | None = None
    last_part: HdrHistogram | None = None
    #: How late its loop began against the schedule's start (ns; negative: it was ready early).
    start_lag_ns: int = 0
    #: A tls13 job's: the step's handshakes (app.core.load.tls_generator); None for any other.
    handshakes: TlsStep | None = None
    #: Several generators sharing the step's one schedule: this one sends its requests
    #: j with j mod `generators` = `generator`. Places, quarters and the sample stride are
    #: the schedule's (`measured` and `first_measured` too), so the generators' samples
    #: together are what one generator would keep.
    generators: int = 1
    generator: int = 0


class LoadGenerator:
    """Drives one load job's clients against its server, size by size."""

    #: The most one generator's step may offer: its schedule, not the server, would be the limit.
    max_rate_per_s = MAX_RATE_PER_S

    def __init__(self, plan: JobPlan, emit: Emit, clock: Callable[[], int] = time.perf_counter_ns) -> None:
        self.plan, self.emit, self.clock = plan, emit, clock
        job = plan.job
        assert job.load is not None, "a load plan carries load settings"
        self.settings: LoadSettings = job.load
        self.peer: SessionPeer = plan.session_peer()
        self.scheme: Scheme = registry.create(job.scheme, job.backend, job.params, job.exchange)
        self.signer = self.scheme.info.family in KEYGEN_ON_SENDER
        #: Over an emulated link, a reply takes at least its round trip: the drain waits that too.
        self.link_round_trip_s = round_trip_ms(job.link) / 1000 if job.link is not None else 0.0
        self.spin_s = 0.0 if job.placement == PlacementPolicy.SAME else SPIN_S
        #: Replies timed by the kernel's receive stamps (Linux), else by when they were read.
        self.kernel_timestamps = sys.platform.startswith("linux")
        self.clients: list[ClientConnection] = []
        # select(), not epoll: epoll sleeps in whole milliseconds (CPython rounds its timeout
        # up), which would hand each request to the kernel up to 1 ms late; select() sleeps
        # to the microsecond, with the timer slack cut to 1 us (as the link process does).
        self.selector = selectors.SelectSelector()
        fine_timer_slack()
        self.marks: dict[int, int] = {}
        self.mark_replies = 0
        self.step: StepState | None = None
        self.step_number = 0
        #: The running step's send lag (ns), one value per measured request's send.
        self.lag = HdrHistogram(*HISTOGRAM_RANGE)
        #: Requests owed (queued in the clients' buffers, not yet handed to the kernel), and their bytes.
        self.owed = 0
        self.owed_bytes = 0

    # --- connections -----------------------------------------------------------------

    def connect_all(self, seal: bool = True) -> None:
        """Connect and authenticate every client; with `seal`, then tell the server they are
        all in (several generators sharing a server connect every one first, then seal)."""
        for k in range(self.settings.clients):
            sock = connect(self.peer.host, self.peer.port, self.peer.connect_timeout, admission=self.peer.admission)
            where = f"load server {self.peer.address} (client {k + 1})"
            sock.settimeout(SETUP_TIMEOUT_S)
            try:
                authenticate_server(
                    sock, FrameReader(sock, MAX_CONTROL_FRAME, idle_timeout=SETUP_TIMEOUT_S), self.peer.token, where
                )
            except ServerNotAuthenticated:
                sock.close()
                if not k:
                    raise
                # The server proved it holds the token to the clients before: this is no
                # impostor, but a server that stopped taking connections (out of file
                # descriptors, the usual cause, which it names in its own error).
                raise LoadFailed(
                    f"the load server {self.peer.address} took {k} client connections, then dropped client "
                    f"{k + 1} before its challenge: it stopped taking connections"
                ) from None
            client = ClientConnection(sock)
            self.clients.append(client)
            self.selector.register(sock, selectors.EVENT_READ, client)
            if self.kernel_timestamps:
                sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        # A first mark tells the server every client is in: it stops listening, so no
        # stranger's connection reaches it while a step runs.
        if seal:
            self.server_cpu_ns()

    def pool_size(self) -> int:
        """The fewest distinct requests any connection prepared for this size."""
        return min(len(client.pool) for client in self.clients)

    def tls_record(self) -> TlsRecord | None:
        """A tls13 job's handshakes of the size (app.core.load.tls_generator); None here."""
        return None

    def close(self) -> None:
        for client in self.clients:
            try:
                client.sock.setblocking(True)
                client.sock.sendall(record(Kind.BYE, 0))
            except OSError:
                pass
            client.sock.close()
        self.selector.close()

    def _exchange(
        self, client: ClientConnection, data: bytes, extra: int = 0
    ) -> tuple[tuple[int, int, int, int], bytes]:
        """Send `data` on a blocking socket and read one reply (plus `extra` bytes after it)."""
        client.sock.setblocking(True)
        client.sock.settimeout(SETUP_TIMEOUT_S)
        client.sock.sendall(data)
        head = _recv_exact(client.sock, REPLY.size)
        reply = REPLY.unpack(head)
        if extra < 0 and reply[2] > MAX_PUBLIC:
            raise LoadFailed(f"the load server claims {reply[2]} bytes of public material (at most {MAX_PUBLIC})")
        tail = _recv_exact(client.sock, reply[2]) if extra < 0 else _recv_exact(client.sock, extra)
        return reply, tail

    # --- preparing a size --------------------------------------------------------------

    def prepare(self, size: int) -> list[float]:
        """Give every connection this size's keys and its pool of requests; returns the
        client-side seconds per request spent preparing them."""
        costs: list[float] = []
        clock = self.clock
        for client in self.clients:
            seed = secrets.token_bytes(SEED_BYTES)
            plaintext = plaintext_for(seed, size)
            (kind, _, _, verdict), public = self._exchange(
                client, record(Kind.PUBLIC_PLEASE, 0, seed + U64.pack(size)), extra=-1
            )
            if kind != Kind.PUBLIC_PLEASE or verdict != Verdict.OK:
                raise LoadFailed(f"the load server did not publish its key (reply {kind}, verdict {verdict})")
            client.pool, client.cursor = [], 0
            if self.signer:
                sender = self.scheme.new_sender()
                (_, _, _, verdict), _ = self._exchange(client, record(Kind.KEY, 0, sender.handshake(public)))
                if verdict != Verdict.OK:
                    raise LoadFailed("the load server refused the signer's verification key")
            budget_end = time.monotonic() + POOL_BUDGET_S  # after a signer's key generation, not from before it
            while len(client.pool) < POOL_MAX and (len(client.pool) < POOL_MIN or time.monotonic() < budget_end):
                start = clock()
                if not self.signer:
                    sender = self.scheme.new_sender()
                    handshake = sender.handshake(public)
                else:
                    handshake = b""
                payload = b"".join(bytes(part) for part in sender.seal(plaintext))
                costs.append((clock() - start) / 1e9)
                client.pool.append(request_body(handshake, payload))
            client.sock.setblocking(False)
        return costs

    def check_tampering(self, size: int, result: SizeMeasured) -> None:
        """Send the first client's requests with a bit flipped where the scheme must notice
        (`harness.check_tampering`: the job's `tamper` count, cycling the scheme's spots):
        the server must refuse each, and each is counted in `result`."""
        client = self.clients[0]
        body = client.pool[0]
        offset = 4 + int.from_bytes(body[:4], "big")  # past the handshake: the sealed payload

        def deliver(parts: Parts, spot: int) -> str | None:
            payload = b"".join(bytes(part) for part in parts)
            (_, _, _, verdict), _ = self._exchange(
                client, record(Kind.REQUEST, 0, body[:offset] + flip_bit(payload, spot))
            )
            return None if verdict == Verdict.REJECTED else f"the server answered {Verdict(verdict).name.lower()}"

        check_tampering(
            self.scheme, self.plan.job.tamper, size, result, lambda: (body[offset:],), deliver, lambda done: None
        )
        client.sock.setblocking(False)

    def calibrate(self) -> tuple[float, float]:
        """Requests one at a time on the first connection: (median server seconds, median round trip)."""
        client = self.clients[0]
        server: list[int] = []
        rtts: list[int] = []
        end = time.monotonic() + CALIBRATION_BUDGET_S
        while len(server) < CALIBRATION_REQUESTS and (len(server) < 5 or time.monotonic() < end):
            body = client.pool[len(server) % len(client.pool)]
            start = self.clock()
            (_, _, value, verdict), _ = self._exchange(client, record(Kind.REQUEST, 0, body))
            rtts.append(self.clock() - start)
            if verdict != Verdict.OK:
                raise LoadFailed(f"the load server refused a request ({Verdict(verdict).name.lower()})")
            server.append(value)
        client.sock.setblocking(False)
        return _median(server) / 1e9, _median(rtts) / 1e9

    # --- the event loop ----------------------------------------------------------------

    def _queue(self, client: ClientConnection, data: bytes, request: bool) -> None:
        """Append one record to a client's buffer; a request counts as owed until its last
        byte is handed to the kernel (`_flush`)."""
        client.out += data
        client.queued.append((len(data), request))
        if request:
            self.owed += 1
            self.owed_bytes += len(data)

    def _flush(self) -> None:
        for client in self.clients:
            if client.out:
                try:
                    sent = client.sock.send(client.out)
                except (BlockingIOError, InterruptedError):
                    continue
                del client.out[:sent]
                client.head_sent += sent
                while client.queued and client.head_sent >= client.queued[0][0]:
                    length, request = client.queued.popleft()
                    client.head_sent -= length
                    if request:
                        self.owed -= 1
                        self.owed_bytes -= length

    def _offer(self, client: ClientConnection, ident: int) -> bool:
        """Hand request `ident` to `client`'s connection (its next prepared request, queued);
        False when the backlog is full: the request is missed."""
        body = client.pool[client.cursor % len(client.pool)]
        if self.backlog_full(RECORD.size + len(body)):
            return False
        self._queue(client, record(Kind.REQUEST, ident, body), request=True)
        client.cursor += 1
        return True

    def backlog_full(self, size: int) -> bool:
        """Whether one more request of `size` bytes would pass the backlog's caps (or the
        requests in flight theirs): then it is missed, not queued."""
        if self.owed >= BACKLOG_MAX:
            return True
        if self.owed >= len(self.clients) and self.owed_bytes + size > BACKLOG_MAX_BYTES:
            return True
        step = self.step
        return step is not None and len(step.outstanding) - self.owed >= IN_FLIGHT_MAX

    def _receive(self, timeout: float) -> None:
        """Read and dispatch what the server sent."""
        for key, _ in self.selector.select(timeout):
            self._read_client(key.data)

    def _read_client(self, client: ClientConnection) -> None:
        """What the server sent on one client connection: its replies, dispatched."""
        try:
            chunk, ancillary, _, _ = client.sock.recvmsg(1 << 16, TIMESTAMP_SPACE)
        except (BlockingIOError, InterruptedError):
            return
        if not chunk:
            raise LoadFailed("the load server closed a client connection mid-run")
        now = self._arrival(ancillary)
        for kind, ident, value, verdict in client.replies.feed(chunk):
            if kind == Kind.MARK:
                self.marks[ident] = value
                self.mark_replies += 1
            elif kind == Kind.REQUEST and self.step is not None:
                self._replied(self.step, ident, value, verdict, now)

    def _arrival(self, ancillary: list[tuple[int, int, bytes]]) -> int:
        """When the bytes just read reached this machine's socket, on `clock`'s scale: the
        kernel's receive time of the last segment read (so never early for any reply in
        it), or now where the kernel gave none. Not when this process woke up to read
        them: a halted virtual CPU wakes up to a millisecond late."""
        now = self.clock()
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(data) >= _TIMESPEC.size:
                seconds, nanoseconds = _TIMESPEC.unpack_from(data)
                behind: int = time.time_ns() - (int(seconds) * 1_000_000_000 + int(nanoseconds))
                if 0 <= behind < 1_000_000_000:  # a stepped wall clock gives nonsense: keep now
                    return now - behind
        return now

    def _replied(self, step: StepState, ident: int, value: int | None, verdict: int, now: int) -> None:
        """A request's reply at `now`: its latency, and the server's time for it (`value`;
        None where the server times no request on its own, as a TLS server)."""
        intended = step.outstanding.pop(ident, None)
        if intended is None:
            return  # an earlier step's late reply
        if verdict == Verdict.OK and step.window_start <= now <= step.window_end:
            # Throughput is what the server completed in the window, whichever request it
            # was: under overload it spends the window's start on the warm-up's backlog.
            step.completed_in_window += 1
        index = schedule_index(step, ident)
        if index < step.first_measured:
            return  # warm-up: no latency recorded
        if verdict != Verdict.OK:
            name = Verdict(verdict).name.lower() if verdict in Verdict._value2member_map_ else str(verdict)
            step.refused[name] = step.refused.get(name, 0) + 1
            return
        latency = max(1, now - intended)
        step.histogram.record_value(latency)
        place = index - step.first_measured
        quarter = max(1, step.measured // 4)
        if place < quarter and step.first_part is not None:
            step.first_part.record_value(latency)
        elif place >= step.measured - quarter and step.last_part is not None:
            step.last_part.record_value(latency)
        if place % step.sample_every == 0:
            step.latencies.append(latency / 1e9)
            if value is not None:
                step.server_ns.append(value)
        if len(step.live) < LIVE_BATCH:
            step.live.append(latency / 1e9)

    def server_cpu_ns(self) -> dict[int, int]:
        """Each server process's CPU time now, by pid (a MARK on every connection; several
        connections may share a process, so replies are counted, not pids)."""
        self.marks, self.mark_replies = {}, 0
        for client in self.clients:
            self._queue(client, record(Kind.MARK, 0), request=False)
        deadline = time.monotonic() + SETUP_TIMEOUT_S
        while self.mark_replies < len(self.clients):
            if time.monotonic() > deadline:
                raise LoadFailed(f"the load server did not answer a step mark within {SETUP_TIMEOUT_S:g} s")
            self._flush()
            self._receive(0.05)
        return dict(self.marks)

    def run_step(
        self,
        rate: float,
        progress: Callable[[float], None],
        start_ns: int | None = None,
        generators: int = 1,
        generator: int = 0,
    ) -> tuple[LoadStep, StepState]:
        """Offer `rate` requests/s for warmup + duration; measure the duration's window. The
        schedule starts at `start_ns` on `clock` (several generators start one step together),
        else in a moment.

        With several generators, `rate` is the step's whole rate and this one is number
        `generator` (0-based) of `generators`: the step has one schedule (`step_schedule`),
        request j due at `start_ns + j / rate`, and this generator sends the requests j with
        j mod `generators` = `generator` (`schedule_share`), so together they send exactly
        what one generator would, and measure it over the same window."""
        settings = self.settings
        if not 0 < rate <= MAX_RATE_PER_S * generators:  # the profile's and the sweep's cap; never approximated
            raise LoadFailed(
                f"an offered rate is more than 0 and at most {MAX_RATE_PER_S:,.0f}/s per generator (got {rate:g})"
            )
        self.step_number += 1
        base = self.step_number << STEP_SHIFT
        gap = 1e9 / rate  # between two requests of the step's schedule
        warm_all, measured_all = step_schedule(rate, settings.warmup_s, settings.duration_s)
        # This generator's part of the schedule: its k-th request is the schedule's
        # (k * generators + generator)-th.
        interval = gap * generators
        warm = schedule_share(warm_all, generators, generator)
        total = schedule_share(warm_all + measured_all, generators, generator)
        measured = total - warm
        clock = self.clock
        start = clock() + 20_000_000 if start_ns is None else start_ns  # a moment to set up before the first send
        t0 = start + generator * gap
        step = StepState(
            histogram=HdrHistogram(*HISTOGRAM_RANGE),
            window_start=int(start + warm_all * gap),
            window_end=int(start + (warm_all + measured_all) * gap),
            first_measured=warm_all,
            sample_every=sample_stride(measured_all),
            measured=measured_all,
            first_part=HdrHistogram(*HISTOGRAM_RANGE),
            last_part=HdrHistogram(*HISTOGRAM_RANGE),
            generators=generators,
            generator=generator,
        )
        self.step = step
        # No collector pause in the schedule: a full collection walks the heap this process
        # inherited from the preloaded fork server (tens of milliseconds: every request due
        # meanwhile would go out late). A step makes no reference cycles; collect between steps.
        gc.collect()
        gc.disable()
        # How late each measured request went to the kernel (a TLS request's later flights
        # too: app.core.load.tls_generator records them here).
        lag = self.lag = HdrHistogram(*HISTOGRAM_RANGE)
        cpu_marks = self.server_cpu_ns()
        cpu_start = time.process_time_ns()
        wall_start = clock()
        step.start_lag_ns = int(wall_start - t0)
        n = len(self.clients)
        k = 0
        sent_in_window = 0
        next_live = time.monotonic() + LIVE_EVERY_S
        while k < total:
            now = clock()
            while k < total and t0 + k * interval <= now:
                ident = base | k
                if not self._offer(self.clients[k % n], ident):
                    # Every request due by now that is not queued yet is missed: counted at
                    # once (not one by one: the loop must not fall further behind), and the
                    # buffers go to the kernel before anything more is queued.
                    due = min(total, max(k + 1, int((now - t0) / interval) + 1))
                    step.missed += due - max(k, warm) if due > warm else 0
                    step.missed_warmup += max(0, min(due, warm) - k)
                    k = due
                    break
                intended = int(t0 + k * interval)
                step.outstanding[ident] = intended
                if k >= warm:
                    lag.record_value(max(1, now - intended))
                    if now <= step.window_end:
                        sent_in_window += 1
                k += 1
            step.backlog_peak = max(step.backlog_peak, self.owed)
            self._flush()
            wait = (t0 + k * interval - clock()) / 1e9 if k < total else 0.0
            # Sleep until shortly before the next request is due, then poll: a virtual CPU
            # that halts when idle wakes late (here, up to ~1 ms at p99; polling: ~20 us).
            self._receive(wait - self.spin_s if wait > self.spin_s else 0.0)
            if time.monotonic() >= next_live:
                next_live = time.monotonic() + LIVE_EVERY_S
                self._live(step)
                progress(min(1.0, k / total))
        drain_end = time.monotonic() + max(MIN_DRAIN_S, settings.duration_s) + self.link_round_trip_s
        while step.outstanding and time.monotonic() < drain_end:
            self._flush()
            self._receive(0.01)
        # Unanswered after the drain: errors where they were measured requests. The server
        # still holds them, so the step's closing mark would wait behind them: skipped.
        step.abandoned = len(step.outstanding)
        late = sum(1 for ident in step.outstanding if (ident & ((1 << STEP_SHIFT) - 1)) >= warm)
        step.outstanding.clear()
        wall = (clock() - wall_start) / 1e9
        generator_cpu = 100.0 * (time.process_time_ns() - cpu_start) / 1e9 / max(wall, 1e-9)
        cpu_end = self.server_cpu_ns() if not step.abandoned else {}
        server_cpu = None
        if cpu_marks and cpu_end:
            spent = sum(cpu_end[pid] - cpu_marks.get(pid, cpu_end[pid]) for pid in cpu_end)
            server_cpu = 100.0 * spent / 1e9 / max(wall, 1e-9)
        self._live(step)
        self.step = None
        gc.enable()
        lag_p99 = lag.get_value_at_percentile(99.0) / 1e9 if lag.get_total_count() else None
        reason = sweep.generator_saturation(
            lag_p99, sent_in_window, measured, step.missed, step.missed_warmup, BACKLOG_MAX
        )
        percentiles = {name: step.histogram.get_value_at_percentile(p) / 1e9 for name, p in LOAD_PERCENTILES}
        percentiles["max"] = step.histogram.get_max_value() / 1e9
        window = (step.window_end - step.window_start) / 1e9
        result = LoadStep(
            offered_per_s=split_rate(rate, generators)[generator],
            achieved_per_s=step.completed_in_window / window,
            errors=sum(step.refused.values()) + late,
            latency_s=percentiles if step.histogram.get_total_count() else {},
            generator_saturated=reason is not None,
            sent=measured - step.missed,
            missed=step.missed,
            completed=step.histogram.get_total_count(),
            histogram=step.histogram.encode().decode("ascii"),
            generator_cpu_percent=generator_cpu,
            send_lag_p99_s=lag_p99,
            server_cpu_percent=server_cpu,
            saturation_reason=reason,
            latency_first_p50_s=_p50(step.first_part),
            latency_last_p50_s=_p50(step.last_part),
        )
        return result, step

    def _live(self, step: StepState) -> None:
        if step.live:
            self.emit(SampleBatch(0, "latency", step.live))
            step.live = []


def schedule_index(step: StepState, ident: int) -> int:
    """A request's place in its step's one schedule (this generator sends every
    `generators`-th of it)."""
    return (ident & ((1 << STEP_SHIFT) - 1)) * step.generators + step.generator


def _p50(histogram: HdrHistogram | None) -> float | None:
    if histogram is None or not histogram.get_total_count():
        return None
    return float(histogram.get_value_at_percentile(50.0)) / 1e9


def sample_stride(measured: int) -> int:
    """Keep every this-many-th of `measured` requests' samples: at most `MAX_SAMPLES` of them
    (2,500/s for 404 s measures 1,010,000 requests: every 2nd, 505,000 samples), spread
    evenly over the window rather than its first stretch only."""
    return max(1, -(-measured // MAX_SAMPLES))


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    data = bytearray()
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise LoadFailed("the load server closed the connection during setup")
        data += chunk
    return bytes(data)


def _median(values: list[int]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return float(ordered[mid]) if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2

"""The link process: a delay line in each direction between a session's sender and receiver.

    sender  --up-->  [ link: DelayLine up ]    --> receiver
    sender  <--down- [ link: DelayLine down ]  <-- receiver

`link_main` listens on 127.0.0.1 port 0 and reports the port (`Listening`), accepts
exactly one connection (the sender's), connects to the receiver's port and relays
both directions until both have ended (`LinkDone`). Neither end knows the link is
there: the sender connects to another port, the receiver accepts one more local
connection. Timing is app.core.link.delay_line's; this module only moves bytes.

One thread, one `selectors.SelectSelector`, time.monotonic: the loop sleeps in select()
until the next segment is due or a socket is ready, never spins. select(), not epoll:
epoll's timeout is whole milliseconds (CPython rounds it up), select()'s microseconds,
and a link that delivers up to 1 ms late would miss its 0.2 ms target. The process
also asks the kernel for a 1 us timer slack (the default 50 us would add to every
wake-up). The figures: benchmarks/README.md, "Emulated link fidelity".

A source is read only while its line's unserialized backlog is under
`MAX_BACKLOG_BYTES` (a bottleneck's queue): beyond it the sender's own socket buffer
fills and its send blocks, as behind a real slow link, and the link's memory stays
bounded whatever the message size. A broken connection on either side (reset, or a
peer that stopped reading for good) ends the relay and closes both sides, which each
end then sees as its peer closing: the job fails with the end's own error, and the
supervisor's exit code check names the link if it was the link that died.

Loss is not emulated here: a byte stream cannot lose bytes, and dropping them above
TCP would break the session instead of slowing it. A `Link` with loss (or any
emulation other than the delay line) is refused before a socket is opened.
"""

from __future__ import annotations

import gc
import random
import selectors
import socket
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection

from app.core.contracts.events import LinkDone, LinkMessage, Listening, PeerDropped
from app.core.errors import SessionError
from app.core.link.delay_line import DelayLine
from app.core.measure.harness import child_entry
from app.core.records.job_conditions import Link
from app.core.transport.doorway import DescriptorsExhausted, Doorway, TicketCheck, admit_one
from app.core.vocab import LinkEmulation

#: Most bytes a line holds unserialized before its source is no longer read: 8 ms of a
#: 1 Gbit/s line, so a late wake-up never leaves the line idle, and the link's memory
#: bounded (what is serialized and in flight on top is at most rate x delay).
MAX_BACKLOG_BYTES = 1024 * 1024
#: Bytes read from a source at once.
READ_BYTES = 64 * 1024
#: At most this many buffers per sendmsg (Linux's IOV_MAX is 1024).
MAX_IOV = 64


class LinkError(SessionError):
    """The link cannot be emulated as asked, or could not be set up; str() says why."""


@dataclass(frozen=True)
class LinkPlan:
    """What the supervisor hands the link process."""

    link: Link
    #: Where the loopback receiver listens.
    receiver_port: int
    #: The jitter generator's seed (the job's, so its jitter repeats run after run).
    seed: int
    host: str = "127.0.0.1"
    #: How long to wait for the sender's connection before giving up.
    accept_timeout: float = 60.0
    connect_timeout: float = 10.0
    #: What the job's own clients present first (app.core.transport.doorway's admission):
    #: a connection without it is a stranger's, closed before a byte of it is relayed.
    ticket: bytes = field(default=b"", repr=False)
    #: How many connections the job brings (a shared link's clients; one sender here):
    #: once they are all in, the link stops listening.
    clients: int = 1
    #: How long a connection may take to present its ticket.
    admission_timeout: float = 10.0
    #: What the link presents first on each connection it makes onwards (the receiver's or
    #: load server's own admission: app.core.transport.doorway), for the client it relays.
    upstream_admission: bytes = field(default=b"", repr=False)


def check_link(link: Link) -> None:
    """LinkError unless the delay line can emulate `link` faithfully."""
    if link.loss_percent > 0:
        raise LinkError(
            f"packet loss ({link.loss_percent:g} %) cannot be emulated by the delay line: a byte "
            "stream loses no bytes; loss needs the kernel's netem"
        )
    if link.emulation != LinkEmulation.DELAY_LINE:
        raise LinkError(
            f"link emulation {str(link.emulation)!r} is not the delay line ({str(LinkEmulation.DELAY_LINE)!r})"
        )
    for what, value in (("delay_ms", link.delay_ms), ("jitter_ms", link.jitter_ms)):
        if not value >= 0 or value == float("inf"):
            raise LinkError(f"link {what} = {value!r} is not a finite duration >= 0")
    for what, rate in (("rate_kbit up", link.rate_kbit_up), ("rate_kbit down", link.rate_kbit_down)):
        if rate is not None and (not rate > 0 or rate == float("inf")):
            raise LinkError(f"link {what} = {rate!r} is not a rate > 0 (None: unlimited)")


def delay_lines(link: Link, seed: int) -> tuple[DelayLine, DelayLine]:
    """The link's (up, down) lines, each with its own generator drawn from the job's seed."""
    check_link(link)

    def line(direction: str, rate_kbit: float | None) -> DelayLine:
        rng = random.Random(f"{seed}/{direction}")  # a str seed hashes the same in every process
        return DelayLine(
            link.delay_ms / 1000, link.jitter_ms / 1000, None if rate_kbit is None else rate_kbit * 1000, rng
        )

    return line("up", link.rate_kbit_up), line("down", link.rate_kbit_down)


def write_outbox(dest: socket.socket, outbox: deque[memoryview]) -> int:
    """Write what `dest` takes now from the front of `outbox` (up to MAX_IOV buffers a
    `sendmsg`), dropping what went; the bytes written. OSError other than would-block
    propagates: the destination is broken."""
    written = 0
    while outbox:
        try:
            sent = dest.sendmsg(list(outbox)[:MAX_IOV] if len(outbox) > 1 else [outbox[0]])
        except (BlockingIOError, InterruptedError):
            break
        written += sent
        while sent:
            head = outbox[0]
            if sent >= len(head):
                sent -= len(head)
                outbox.popleft()
            else:
                outbox[0] = head[sent:]
                sent = 0
    return written


def shut_write(dest: socket.socket) -> None:
    """Pass the end of a stream on (the destination may have closed first: nothing to tell)."""
    try:
        dest.shutdown(socket.SHUT_WR)
    except OSError:
        pass


class _Broken(Exception):
    """A side of the connection is gone: the relay ends and closes both."""


class _Direction:
    """One way through the link: read `source`, hold the bytes in `line`, write them to `dest`."""

    def __init__(self, name: str, source: socket.socket, dest: socket.socket, line: DelayLine) -> None:
        self.name, self.source, self.dest, self.line = name, source, dest, line
        self.outbox: deque[memoryview] = deque()
        self.reading = True  # the source has not ended its stream
        self.end_arrived = False  # the end of stream has crossed the line
        self.done = False  # ... and was passed on (the destination's write side shut)
        self.bytes_out = 0
        #: How late segments were released against their `deliver_at`: the link's own
        #: timing error (the wake-up of this process), apart from the ends' costs.
        self.released = 0
        self.late_total = 0.0
        self.late_max = 0.0

    def wants_read(self, now: float) -> bool:
        return self.reading and self.line.backlog_bytes(now) < MAX_BACKLOG_BYTES

    def read(self, now: float, buffer: memoryview) -> None:
        try:
            n = self.source.recv_into(buffer)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:  # reset: the connection is broken, not ended
            raise _Broken(f"{self.name} source: {exc.strerror or exc}") from None
        if n == 0:
            self.reading = False
            self.line.close(now)
        else:
            self.line.push(now, bytes(buffer[:n]))

    def release(self, now: float) -> None:
        """Move what has crossed the line by `now` to the outbox."""
        for segment in self.line.pop_due(now):
            late = now - segment.deliver_at
            self.released += 1
            self.late_total += late
            self.late_max = max(self.late_max, late)
            if segment.data:
                self.outbox.append(memoryview(segment.data))
            else:
                self.end_arrived = True

    def flush(self) -> None:
        """Write what the destination takes now; pass the end on once all is written."""
        try:
            self.bytes_out += write_outbox(self.dest, self.outbox)
        except OSError as exc:
            raise _Broken(f"{self.name} destination: {exc.strerror or exc}") from None
        if self.end_arrived and not self.done and not self.outbox:
            shut_write(self.dest)
            self.done = True


class Relay:
    """Relays two connected sockets through an up and a down `DelayLine` until both
    directions have ended (or the connection broke). `clock` is time.monotonic."""

    def __init__(
        self,
        client: socket.socket,
        server: socket.socket,
        up: DelayLine,
        down: DelayLine,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.up = _Direction("up", client, server, up)
        self.down = _Direction("down", server, client, down)
        self.sockets = (client, server)
        self.clock = clock

    def run(self) -> str | None:
        """Relay until both directions ended; returns None, or why the connection broke."""
        for sock in self.sockets:
            sock.setblocking(False)
        directions = (self.up, self.down)
        source_of = {id(d.source): d for d in directions}
        dest_of = {id(d.dest): d for d in directions}
        buffer = memoryview(bytearray(READ_BYTES))
        masks = {id(s): 0 for s in self.sockets}
        with selectors.SelectSelector() as selector:
            try:
                while not (self.up.done and self.down.done):
                    now = self.clock()
                    wake = float("inf")
                    for direction in directions:
                        direction.release(now)
                        direction.flush()
                        due = direction.line.next_due()
                        if due is not None:
                            wake = min(wake, due)
                        if direction.reading and not direction.wants_read(now):
                            wake = min(wake, direction.line.backlog_below(MAX_BACKLOG_BYTES))
                    for sock in self.sockets:
                        mask = (selectors.EVENT_READ if source_of[id(sock)].wants_read(now) else 0) | (
                            selectors.EVENT_WRITE if dest_of[id(sock)].outbox else 0
                        )
                        if mask != masks[id(sock)]:
                            if masks[id(sock)] == 0:
                                selector.register(sock, mask)
                            elif mask == 0:
                                selector.unregister(sock)
                            else:
                                selector.modify(sock, mask)
                            masks[id(sock)] = mask
                    if self.up.done and self.down.done:
                        break
                    timeout = None if wake == float("inf") else max(0.0, wake - self.clock())
                    if timeout is None and not any(masks.values()):
                        break  # nothing can happen any more (cannot occur while a direction is open)
                    ready = selector.select(timeout) if any(masks.values()) else _sleep(timeout)
                    now = self.clock()
                    for key, events in ready:
                        if events & selectors.EVENT_READ:
                            source_of[id(key.fileobj)].read(now, buffer)
                        if events & selectors.EVENT_WRITE:
                            dest_of[id(key.fileobj)].flush()
            except _Broken as broken:
                return str(broken)
        return None


def _sleep(timeout: float | None) -> list[tuple[selectors.SelectorKey, int]]:
    """Wait with no socket to watch (every line full and every outbox empty): a timer only."""
    if timeout is not None:
        time.sleep(timeout)
    return []


def fine_timer_slack() -> None:
    """Ask Linux to wake this process within 1 us of a timeout instead of the default
    50 us slack (prctl PR_SET_TIMERSLACK); no-op elsewhere."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_timerslack = 29
        libc.prctl(pr_set_timerslack, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def link_doorway(listener: socket.socket, plan: LinkPlan, emit: Callable[[LinkMessage], None]) -> Doorway:
    """What admits a link's clients: the job's ticket first, strangers named as they go."""
    return Doorway(
        listener,
        lambda: TicketCheck(plan.ticket),
        plan.admission_timeout,
        lambda text: emit(PeerDropped(text)),
        who="link",
    )


def connect_upstream(plan: LinkPlan) -> socket.socket:
    """A connection onwards to the receiver (or load server), its admission already sent:
    before any relayed byte, so neither timed nor on the line. OSError when it cannot."""
    sock = socket.create_connection((plan.host, plan.receiver_port), timeout=plan.connect_timeout)
    if plan.upstream_admission:
        try:
            sock.sendall(plan.upstream_admission)
        except BaseException:
            sock.close()
            raise
    return sock


def serve_link(plan: LinkPlan, emit: Callable[[LinkMessage], None]) -> None:
    """Listen, report the port, take one sender, connect it to the receiver and relay
    (the body of `link_main`). Raises LinkError when the link cannot be set up."""
    up, down = delay_lines(plan.link, plan.seed)
    fine_timer_slack()
    # No collector pause while bytes are in flight: a full collection walks the heap this
    # process inherited from the preloaded fork server (tens of milliseconds), and the
    # relay makes no reference cycles for it to find.
    gc.disable()
    try:
        server = socket.create_server((plan.host, 0))
    except OSError as exc:
        raise LinkError(f"cannot listen on {plan.host}: {exc.strerror or exc}") from None
    with server:
        emit(Listening(server.getsockname()[1]))
        doorway = link_doorway(server, plan, emit)
        try:
            admitted = admit_one(doorway, time.monotonic() + plan.accept_timeout)
        except DescriptorsExhausted as exc:
            raise LinkError(exc.strerror or str(exc)) from None
        finally:
            doorway.close()  # the sender is in: the port goes away, and any stranger still waiting
        if admitted is None:
            raise LinkError(f"no sender connected within {plan.accept_timeout:g} s")
        client = admitted
    with client:
        try:
            upstream = connect_upstream(plan)
        except OSError as exc:
            raise LinkError(
                f"cannot connect to the receiver at {plan.host}:{plan.receiver_port}: {exc.strerror or exc}"
            ) from None
        with upstream:
            for sock in (client, upstream):  # the link adds no Nagle wait of its own
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            relay = Relay(client, upstream, up, down)
            broken = relay.run()
    up_dir, down_dir = relay.up, relay.down
    released = up_dir.released + down_dir.released
    emit(
        LinkDone(
            up_dir.line.bytes_in,
            down_dir.line.bytes_in,
            broken,
            released,
            (up_dir.late_total + down_dir.late_total) / released if released else 0.0,
            max(up_dir.late_max, down_dir.late_max),
            time.process_time(),
        )
    )


def link_main(conn: Connection, plan: LinkPlan) -> None:
    """Entry point of a link process (multiprocessing target, like the receiver's)."""
    child_entry(
        conn,
        lambda emit: serve_link(plan, emit),
        describe=lambda exc: f"link: {exc}" if isinstance(exc, LinkError) else f"link: {type(exc).__name__}: {exc}",
    )

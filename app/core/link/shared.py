"""A link shared by many connections: a load job's clients over one emulated bottleneck.

    client 1 ..C  --up-->   [ one DelayLine up ]    --> load server
    client 1 ..C  <--down-  [ one DelayLine down ]  <-- load server

`shared_link_main` listens like the one-connection link (app.core.link.relay), but
admits each of the job's clients (each presents the job's ticket first, checked side by
side with any stranger's connection: app.core.transport.doorway), connects each to the
server, stops listening once all are in, and relays them through one delay line per
direction: their bytes queue for one serializer at the
link's rate, in the order they arrived, as packets of many flows queue at one
bottleneck. Each segment remembers whose it is (the line keeps its order, so a queue of
owners beside it does), and goes to that connection's other end when due. A
connection's end of stream crosses the line behind its last byte; the line stays open
for the others.

The link ends when every connection it took has ended (the generator keeps them all to
its end). A broken connection ends only itself: its two sides are closed, the
generator sees its server go away and fails the job with that.
"""

from __future__ import annotations

import gc
import selectors
import socket
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection

from app.core.contracts.events import LinkDone, LinkMessage, Listening
from app.core.link.delay_line import DelayLine
from app.core.link.relay import (
    MAX_BACKLOG_BYTES,
    READ_BYTES,
    LinkError,
    LinkPlan,
    connect_upstream,
    delay_lines,
    fine_timer_slack,
    link_doorway,
    shut_write,
    write_outbox,
)
from app.core.measure.harness import child_entry
from app.core.transport.doorway import DescriptorsExhausted, Doorway


@dataclass
class _Side:
    """One way of one connection: where its bytes come from and go to once due."""

    source: socket.socket
    dest: socket.socket
    outbox: deque[memoryview] = field(default_factory=deque)
    reading: bool = True
    end_arrived: bool = False
    done: bool = False


@dataclass
class _Pair:
    up: _Side
    down: _Side
    broken: str | None = None

    @property
    def done(self) -> bool:
        return self.broken is not None or (self.up.done and self.down.done)


class _Line:
    """One direction's delay line and, in the same order as its segments, their owners."""

    def __init__(self, name: str, line: DelayLine) -> None:
        self.name, self.line = name, line
        self.owners: deque[_Side] = deque()
        self.released = 0
        self.late_total = 0.0
        self.late_max = 0.0

    def push(self, now: float, side: _Side, data: bytes) -> None:
        self.owners.extend([side] * self.line.push(now, data))

    def push_end(self, now: float, side: _Side) -> None:
        self.line.push_end(now)
        self.owners.append(side)

    def release(self, now: float) -> None:
        for segment in self.line.pop_due(now):
            side = self.owners.popleft()
            late = now - segment.deliver_at
            self.released += 1
            self.late_total += late
            self.late_max = max(self.late_max, late)
            if segment.data:
                side.outbox.append(memoryview(segment.data))
            else:
                side.end_arrived = True


class SharedRelay:
    """Relays every connection `doorway` admits to `connect()`'s socket through one up
    and one down line, until each connection taken has ended. A connection is relayed
    only once it has presented the job's ticket: a stranger's bytes never reach the
    line the job's clients share, and once `clients` are in the link stops listening."""

    def __init__(
        self,
        doorway: Doorway,
        connect: Callable[[], socket.socket],
        up: DelayLine,
        down: DelayLine,
        clients: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.doorway, self.connect, self.clock, self.clients = doorway, connect, clock, clients
        self.up, self.down = _Line("up", up), _Line("down", down)
        self.pairs: list[_Pair] = []
        self.taken = 0
        self.broken: list[str] = []

    def _admit(self, sock: socket.socket) -> None:
        client = self.doorway.read(sock)
        if client is None:
            return
        try:
            server = self.connect()
        except OSError as exc:
            client.close()
            raise LinkError(f"cannot connect to the server: {exc.strerror or exc}") from None
        for end in (client, server):
            end.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no Nagle wait of the link's own
            end.setblocking(False)
        self.pairs.append(_Pair(_Side(client, server), _Side(server, client)))
        self.taken += 1
        if self.taken >= self.clients:
            self.doorway.close()  # every client is in: nobody else gets onto the line

    def _read(self, line: _Line, side: _Side, pair: _Pair, now: float, buffer: memoryview) -> None:
        try:
            n = side.source.recv_into(buffer)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:
            pair.broken = f"{line.name} source: {exc.strerror or exc}"
            return
        if n == 0:
            side.reading = False
            line.push_end(now, side)
        else:
            line.push(now, side, bytes(buffer[:n]))

    @staticmethod
    def _flush(side: _Side, pair: _Pair) -> None:
        try:
            write_outbox(side.dest, side.outbox)
        except OSError as exc:
            pair.broken = f"destination: {exc.strerror or exc}"
            return
        if side.end_arrived and not side.done and not side.outbox:
            shut_write(side.dest)
            side.done = True

    def _retire(self, pair: _Pair) -> None:
        if pair.broken is not None:
            self.broken.append(pair.broken)
        for sock in (pair.up.source, pair.up.dest):
            sock.close()
        self.pairs.remove(pair)

    def run(self, accept_timeout: float) -> None:
        buffer = memoryview(bytearray(READ_BYTES))
        deadline = time.monotonic() + accept_timeout
        lines = (self.up, self.down)
        with selectors.SelectSelector() as selector:  # microsecond timeouts (see app.core.link.relay)
            while not (self.taken and not self.pairs):
                if not self.taken and time.monotonic() > deadline:
                    raise LinkError(f"no client connected within {accept_timeout:g} s")
                now = self.clock()
                for line in lines:
                    line.release(now)
                for pair in list(self.pairs):
                    for side in (pair.up, pair.down):
                        self._flush(side, pair)
                    if pair.done:
                        self._retire(pair)
                self.doorway.expire()
                wake = 0.5
                due_door = self.doorway.next_deadline()
                if due_door is not None:
                    wake = min(wake, max(0.0, due_door - time.monotonic()))
                for line in lines:
                    due = line.line.next_due()
                    if due is not None:
                        wake = min(wake, max(0.0, due - now))
                    if line.line.backlog_bytes(now) >= MAX_BACKLOG_BYTES:
                        wake = min(wake, max(0.0, line.line.backlog_below(MAX_BACKLOG_BYTES) - now))
                for key in list(selector.get_map().values()):
                    selector.unregister(key.fileobj)
                self.doorway.register(selector, None)
                for pair in self.pairs:
                    for line, side, other in ((self.up, pair.up, pair.down), (self.down, pair.down, pair.up)):
                        mask = 0
                        if side.reading and line.line.backlog_bytes(now) < MAX_BACKLOG_BYTES:
                            mask |= selectors.EVENT_READ
                        if other.outbox:
                            mask |= selectors.EVENT_WRITE
                        if mask:
                            selector.register(side.source, mask, (line, side, pair))
                listener_ready = False
                for key, events in selector.select(wake):
                    if key.data is None:
                        if key.fileobj is self.doorway.listener:
                            listener_ready = True  # newcomers after what already waits
                        else:
                            assert isinstance(key.fileobj, socket.socket)
                            self._admit(key.fileobj)
                        continue
                    line, side, pair = key.data
                    if events & selectors.EVENT_READ:
                        self._read(line, side, pair, self.clock(), buffer)
                    if events & selectors.EVENT_WRITE:
                        other = pair.down if side is pair.up else pair.up
                        self._flush(other, pair)
                if listener_ready and self.doorway.listener is not None:
                    try:
                        self.doorway.accept()
                    except DescriptorsExhausted as exc:
                        raise LinkError(exc.strerror or str(exc)) from None


def serve_shared_link(plan: LinkPlan, emit: Callable[[LinkMessage], None]) -> None:
    """Listen, report the port, relay every client to the server (the body of `shared_link_main`)."""
    up, down = delay_lines(plan.link, plan.seed)
    fine_timer_slack()
    gc.disable()  # no collector pause while bytes are in flight (see app.core.link.relay)
    try:
        listener = socket.create_server((plan.host, 0), backlog=256)
    except OSError as exc:
        raise LinkError(f"cannot listen on {plan.host}: {exc.strerror or exc}") from None

    with listener:
        emit(Listening(listener.getsockname()[1]))
        doorway = link_doorway(listener, plan, emit)
        relay = SharedRelay(doorway, lambda: connect_upstream(plan), up, down, plan.clients)
        try:
            relay.run(plan.accept_timeout)
        finally:
            doorway.close()
    released = relay.up.released + relay.down.released
    broken = "; ".join(relay.broken[:3]) + (f" (and {len(relay.broken) - 3} more)" if len(relay.broken) > 3 else "")
    emit(
        LinkDone(
            up.bytes_in,
            down.bytes_in,
            broken or None,
            released,
            (relay.up.late_total + relay.down.late_total) / released if released else 0.0,
            max(relay.up.late_max, relay.down.late_max),
            time.process_time(),
        )
    )


def shared_link_main(conn: Connection, plan: LinkPlan) -> None:
    """Entry point of a shared link process (a load job's clients over one link)."""
    child_entry(
        conn,
        lambda emit: serve_shared_link(plan, emit),
        describe=lambda exc: f"link: {exc}" if isinstance(exc, LinkError) else f"link: {type(exc).__name__}: {exc}",
    )

"""The packet link process: the kernel's own TCP between sender and receiver, over an
emulated path of IP packets.

    sender (its namespace)  --cb0--> [ link: PacketLine up ]   --cb0--> receiver (its namespace)
    sender                  <--cb0-- [ link: PacketLine down ] <--cb0-- receiver

`packet_link_main` makes a network namespace for each end with a TUN device in it
(app.core.transport.netns), reports their paths (`PathReady`), and then forwards every IP
packet that comes out of one device into the other through the direction's
`PacketLine`: drop-tail queue, serialization at the rate, delay and jitter, loss. The
sender and receiver enter their namespaces before they open a socket, so slow start,
ACK clocking and retransmission are the kernel's, acting on the emulated path, and
TCP_INFO at each end describes that path.

The link runs until the supervisor stops it when the job ends (SIGTERM); the namespaces
end with it and with the two ends. What it did is in shared memory
(app.core.link.path_counters), which the supervisor reads at each message size's start
and end; nothing is lost when it is stopped.

One thread, one `selectors.SelectSelector` (select() has microsecond timeouts, epoll
whole milliseconds), a 1 us timer slack and no collector: as the stream relay
(app.core.link.relay), whose measured lateness these choices brought down.
"""

from __future__ import annotations

import gc
import os
import random
import selectors
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from app.core.contracts.events import LinkMessage, PathReady
from app.core.link.packet_line import (
    DEFAULT_QUEUE_BYTES,
    DEFAULT_QUEUE_PACKETS,
    GilbertElliott,
    LossModel,
    PacketLine,
)
from app.core.link.path_counters import CPU, RELEASED, Counters, record_read, record_release, write_lines
from app.core.link.relay import LinkError, fine_timer_slack
from app.core.measure.harness import child_entry
from app.core.records.job_conditions import Link
from app.core.records.link_path import LATE_LIMIT_S, LATE_SHARE
from app.core.settings.links import round_trip_ms
from app.core.transport.netns import RECEIVER_ADDRESS, SENDER_ADDRESS, NamespaceEnd, NamespaceError

#: Largest IP packet a TUN device hands over (the MTU is 1500; room for anything larger).
READ_BYTES = 65536
#: Packets read from one device before the loop looks at what is due again, so a burst
#: on one side never delays the other side's releases by more than a few microseconds.
READ_BURST = 64


@dataclass(frozen=True)
class PacketPathPlan:
    """What the supervisor hands the packet link process."""

    link: Link
    #: The loss and jitter generators' seed (`Link.draw_seed`: the run's link seed and the
    #: job's index, so a run repeated with the same seed loses the same packets).
    seed: int
    #: The shared counters (multiprocessing RawArray of `path_counters.SLOTS` doubles).
    counters: Any
    #: tcp_slow_start_after_idle in both namespaces (None: the kernel's default, recorded).
    slow_start_after_idle: bool | None = None
    #: A shared double counting the packets released later than `late_limit(link)`, or read
    #: later than `LATE_LIMIT_S` after the line could have sent them (JobPlan.late_packets).
    late_packets: Any = None
    #: Tests only: (packets released, seconds) - once that many packets have been
    #: released, the emulator holds everything for that long, as an emulator descheduled
    #: by its machine would (what a stretch of lateness looks like from outside).
    stall: tuple[int, float] | None = None


def queue_bounds(link: Link) -> tuple[int, int]:
    """The drop-tail queue a direction of `link` holds: (packets, bytes), the link's own or
    the defaults."""
    return (
        DEFAULT_QUEUE_PACKETS if link.queue_packets is None else link.queue_packets,
        DEFAULT_QUEUE_BYTES if link.queue_bytes is None else link.queue_bytes,
    )


def late_limit(link: Link) -> float:
    """The release lateness a size over `link` is held to (`LinkPath.late_limit_s`): 2 % of
    the link's round trip for a 1 KiB exchange, at least `LATE_LIMIT_S`."""
    return max(LATE_LIMIT_S, LATE_SHARE * round_trip_ms(link) / 1000)


def loss_model(link: Link) -> LossModel:
    """A direction's loss: the link's bursty model where it has one, else independent."""
    bursts = link.burst_loss
    if bursts is None:
        return LossModel(link.loss_percent / 100)
    return LossModel(
        bursty=GilbertElliott(
            bursts.p_percent / 100,
            bursts.r_percent / 100,
            bursts.good_loss_percent / 100,
            bursts.bad_loss_percent / 100,
        )
    )


def packet_lines(plan: PacketPathPlan) -> tuple[PacketLine, PacketLine]:
    """The (up, down) lines, each with its own generator drawn from the job's seed."""
    link = plan.link
    queue_packets, queue_bytes = queue_bounds(link)

    def line(direction: str, rate_kbit: float | None) -> PacketLine:
        rng = random.Random(f"{plan.seed}/packet/{direction}")  # a str seed hashes the same in every process
        return PacketLine(
            link.delay_ms / 1000,
            link.jitter_ms / 1000,
            None if rate_kbit is None else rate_kbit * 1000,
            loss_model(link),
            rng,
            queue_packets,
            queue_bytes,
        )

    return line("up", link.rate_kbit_up), line("down", link.rate_kbit_down)


class PacketForwarder:
    """Forwards IP packets between the sender's and the receiver's devices through an up
    and a down `PacketLine`, recording what it does in `counters`. `clock` is
    time.monotonic; `read`/`write` default to os.read/os.write (tests pass fakes)."""

    def __init__(
        self,
        sender_fd: int,
        receiver_fd: int,
        up: PacketLine,
        down: PacketLine,
        counters: Counters,
        clock: Callable[[], float] = time.monotonic,
        *,
        late_packets: Any = None,
        late_limit_s: float = LATE_LIMIT_S,
        stall: tuple[int, float] | None = None,
    ) -> None:
        self.ends = {sender_fd: (up, receiver_fd), receiver_fd: (down, sender_fd)}
        self.lines = ((up, receiver_fd), (down, sender_fd))
        self.up, self.down = up, down
        self.counters = counters
        self.clock = clock
        #: Packets released or read beyond the limits, counted where the sender reads them.
        self.late_packets, self.late_limit_s = late_packets, late_limit_s
        self.stall = stall
        self.read: Callable[[int, int], bytes] = os.read
        self.write: Callable[[int, bytes], int] = os.write
        #: When this process last found each device's queue empty (a read that would block).
        self.caught_up = dict.fromkeys(self.ends, clock())

    def release(self, now: float) -> float | None:
        """Write every packet that is due; the time the next one is (None: none in flight)."""
        wake: float | None = None
        for line, dest in self.lines:
            for packet in line.pop_due(now):
                try:
                    self.write(dest, packet.data)
                except BlockingIOError:
                    line.counters.dropped_queue += 1  # the far device's own queue was full
                    continue
                late = self.clock() - packet.deliver_at
                record_release(self.counters, max(0.0, late))
                if late > self.late_limit_s and self.late_packets is not None:
                    self.late_packets.value += 1
            due = line.next_due()
            if due is not None and (wake is None or due < wake):
                wake = due
        return wake

    def drain(self, fd: int, now: float) -> None:
        """Read up to READ_BURST packets from one device into its line.

        A packet waits in the device's queue until this process reads it; the line then
        starts it at `now` at the earliest. If the line was idle before `now` while the
        queue held the packet, the path was slower than the link: by at most `now` less the
        later of the line falling idle and the queue last found empty (the packet arrived
        after that). At rates this process keeps up with the line is busy or the queue was
        just emptied, and the wait is nil; beyond them it grows, and `record_read` counts it.
        """
        line, _ = self.ends[fd]
        for _ in range(READ_BURST):
            try:
                packet = self.read(fd, READ_BYTES)
            except BlockingIOError:
                self.caught_up[fd] = self.clock()
                return
            if not packet:
                return
            waited = now - max(line.line_free_at, self.caught_up[fd])
            record_read(self.counters, waited)
            if waited > LATE_LIMIT_S and self.late_packets is not None:
                self.late_packets.value += 1
            line.push(now, packet)

    def run(self, stop: Callable[[], bool] = lambda: False) -> None:
        """Forward until `stop()` (the process is stopped from outside in practice)."""
        with selectors.SelectSelector() as selector:
            for fd in self.ends:
                selector.register(fd, selectors.EVENT_READ)
            while not stop():
                wake = self.release(self.clock())
                write_lines(self.counters, self.up.counters, self.down.counters)
                self.counters[CPU] = time.process_time()
                polled = self.clock()
                ready = selector.select(0)
                # A device not ready now has an empty queue: what it holds later arrived since.
                waiting = {int(key.fd) for key, _ in ready}
                for fd in self.ends:
                    if fd not in waiting:
                        self.caught_up[fd] = polled
                if not ready:
                    timeout = None if wake is None else max(0.0, wake - self.clock())
                    ready = selector.select(timeout)
                    # A device not ready now is empty now; a packet that arrived during the
                    # wait ended it, so it waited no longer than that either.
                    self.caught_up = dict.fromkeys(self.ends, self.clock())
                now = self.clock()
                for key, _ in ready:
                    self.drain(int(key.fd), now)
                if ready and self.stall is not None and self.counters[RELEASED] >= self.stall[0]:
                    # The tests' stalled emulator (PacketPathPlan.stall), with a packet in hand:
                    # a stall while the line was idle held nothing back, and on a busy machine
                    # the sender's own pauses made that happen (CI saw no late sample).
                    time.sleep(self.stall[1])
                    self.stall = None


def serve_packet_path(plan: PacketPathPlan, emit: Callable[[LinkMessage], None]) -> None:
    """Make both ends, report them, forward until stopped (the body of `packet_link_main`)."""
    up, down = packet_lines(plan)
    fine_timer_slack()
    realtime = _realtime()
    gc.disable()  # no collector pause while packets are in flight (see app.core.link.relay)
    ends: list[NamespaceEnd] = []
    try:
        for address in (SENDER_ADDRESS, RECEIVER_ADDRESS):
            ends.append(NamespaceEnd(address, plan.slow_start_after_idle).open())
    except NamespaceError as exc:
        for end in ends:
            end.close()
        raise LinkError(f"the packet path could not be made: {exc}") from None
    sender, receiver = ends
    emit(
        PathReady(
            sender.path,
            receiver.path,
            RECEIVER_ADDRESS,
            sender.tcp.congestion_control,
            sender.tcp.slow_start_after_idle,
            realtime,
        )
    )
    PacketForwarder(
        sender.fd,
        receiver.fd,
        up,
        down,
        plan.counters,
        late_packets=plan.late_packets,
        late_limit_s=late_limit(plan.link),
        stall=plan.stall,
    ).run()


def _realtime() -> bool:
    """Ask for the lowest real-time priority (SCHED_FIFO 1), so a due packet leaves when it
    is due even when the job's sender or receiver, on the same CPU, is computing: the link
    stands for the network, not for a program competing for the CPU. It sleeps in select()
    between packets, and the kernel's real-time throttling bounds it in any case. False
    where the system refuses (no CAP_SYS_NICE): the path's lateness then shows the cost."""
    if not hasattr(os, "sched_setscheduler"):
        return False
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
    except OSError:
        return False
    return True


def packet_link_main(conn: Connection, plan: PacketPathPlan) -> None:
    """Entry point of a packet link process (multiprocessing target, like the receiver's)."""
    child_entry(
        conn,
        lambda emit: serve_packet_path(plan, emit),
        describe=lambda exc: f"link: {exc}" if isinstance(exc, LinkError) else f"link: {type(exc).__name__}: {exc}",
    )


def check_packet_link(link: Link) -> None:
    """LinkError unless the packet path can emulate `link` as given."""
    for what, value in (("delay_ms", link.delay_ms), ("jitter_ms", link.jitter_ms)):
        if not value >= 0 or value == float("inf"):
            raise LinkError(f"link {what} = {value!r} is not a finite duration >= 0")
    for what, rate in (("rate_kbit up", link.rate_kbit_up), ("rate_kbit down", link.rate_kbit_down)):
        if rate is not None and (not rate > 0 or rate == float("inf")):
            raise LinkError(f"link {what} = {rate!r} is not a rate > 0 (None: unlimited)")
    if not 0 <= link.loss_percent <= 100:
        raise LinkError(f"link loss_percent = {link.loss_percent!r} is not a percentage from 0 to 100")

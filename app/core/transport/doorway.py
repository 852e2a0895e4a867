"""Admitting a job's own peers on a local port, many at once, without waiting on anyone.

Every port a job listens on is visible to every local user (`/proc/net/tcp`), so any
connection may be a stranger's: a port scan, an idle `connect()`, a flood. A listener
that takes one connection and then waits on it for a token lets one silent stranger
hold the job's real peer in the accept queue until the wait runs out. A `Doorway`
accepts every connection at once and runs each one's admission check (the token
handshake of app.core.transport.auth, or a link's admission ticket) side by side on
non-blocking sockets, each with its own deadline: a stranger costs a few microseconds
of the loop, never a wait, and is closed and named (`dropped`) when it fails, goes
silent past its deadline, or the door closes. Nothing a stranger sends is queued,
relayed or timed: a connection is handed to the job only once it proved itself.

A job that knows it has all its peers closes the door (`close`): the listener goes
away, so later connections are refused by the kernel and cost the job nothing.
"""

from __future__ import annotations

import errno
import hmac
import select
import selectors
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from app.core.errors import exhaustion_reason
from app.core.transport.wire import ConnectionClosed, PeerTimeout, TruncatedFrame, WireError

#: At most this many connections wait to prove themselves at once; a newcomer beyond them
#: closes the oldest (a flood costs a bounded amount, not a growing one). A job's own
#: peers connect one at a time and prove themselves within two local round trips.
MAX_PENDING = 64
#: Bytes a link's admission starts with (before the ticket), so a stray protocol's first
#: bytes are named as not ours rather than as a wrong ticket.
ADMISSION_MAGIC = b"CBADMIT1"
#: Connections taken from the listener per turn of a loop: what waits to prove itself is
#: read first, so a flood cannot push a job's own connection out before it is read.
MAX_ACCEPTS_PER_TURN = 16
#: The most a closing door takes from its listener's queue: Linux's somaxconn default, the
#: longest queue the kernel keeps for a listener.
_MAX_QUEUED = 4096
#: A fresh connection proves it belongs to the session with this many random bytes, which
#: the receiver gave in JOB_OK over the authenticated connection.
TICKET_BYTES = 32


class AdmissionCheck(Protocol):
    """What a connection must prove, fed with what it sends (app.core.transport.auth's
    `ServerHandshake` is one)."""

    @property
    def done(self) -> bool: ...

    def wanted(self) -> int: ...

    def feed(self, data: bytes) -> bytes: ...

    def closed_error(self) -> WireError: ...

    def timeout_error(self, timeout: float) -> PeerTimeout: ...


class TicketRefused(WireError):
    """A connection did not present the job's admission ticket."""


def admission(ticket: bytes) -> bytes:
    """What a job's own client sends first on a link's port: magic and the job's ticket
    (nothing where there is no ticket: the port is the receiver's own)."""
    return ADMISSION_MAGIC + ticket if ticket else b""


class TicketCheck:
    """A link's admission: the first bytes must be `admission(ticket)`, nothing is answered."""

    def __init__(self, ticket: bytes) -> None:
        self.expected = admission(ticket)
        self.buffer = bytearray()
        self.done = False
        self.vouched = False  # it presented the job's ticket: the job's own, never evicted

    def wanted(self) -> int:
        return len(self.expected) - len(self.buffer)

    def feed(self, data: bytes) -> bytes:
        self.buffer += data
        magic = len(ADMISSION_MAGIC)
        if len(self.buffer) >= magic and self.buffer[:magic] != ADMISSION_MAGIC:
            raise TicketRefused("its first bytes are not a CryptoBench admission")
        if not self.wanted():
            if not hmac.compare_digest(bytes(self.buffer), self.expected):
                raise TicketRefused("it presented the wrong admission ticket")
            self.done = self.vouched = True
        return b""

    def closed_error(self) -> WireError:
        if not self.buffer:
            return ConnectionClosed("it closed the connection without a word")
        return TruncatedFrame(f"it closed the connection after {len(self.buffer)} of {len(self.expected)} bytes")

    def timeout_error(self, timeout: float) -> PeerTimeout:
        return PeerTimeout(f"it sent {len(self.buffer)} of {len(self.expected)} admission bytes within {timeout:g} s")


class TicketThen:
    """The job's ticket first, then `then` (the token handshake): a job's own client sends
    the ticket the moment it connects, so the doorway knows it for the job's own long
    before its handshake is done, and never evicts it for a stranger."""

    def __init__(self, ticket: bytes, then: AdmissionCheck) -> None:
        self.ticket = TicketCheck(ticket)
        self.then = then

    @property
    def vouched(self) -> bool:
        return self.ticket.done

    @property
    def done(self) -> bool:
        return self.ticket.done and self.then.done

    def wanted(self) -> int:
        return self.ticket.wanted() if not self.ticket.done else self.then.wanted()

    def feed(self, data: bytes) -> bytes:
        return self.ticket.feed(data) if not self.ticket.done else self.then.feed(data)

    def closed_error(self) -> WireError:
        return self.ticket.closed_error() if not self.ticket.done else self.then.closed_error()

    def timeout_error(self, timeout: float) -> PeerTimeout:
        return self.ticket.timeout_error(timeout) if not self.ticket.done else self.then.timeout_error(timeout)


def _silent(sock: socket.socket) -> bool:
    """Whether nothing the peer sent waits to be read (one that closed, or broke, has
    nothing to say either)."""
    try:
        return not sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except OSError:  # BlockingIOError among them: nothing waits
        return True


class DescriptorsExhausted(OSError):
    """No file descriptor is left to accept a connection, and no stranger's to free."""


@dataclass
class _Pending:
    address: str
    check: AdmissionCheck
    deadline: float


class Doorway:
    """Accepts on `listener` and admits the connections whose check passes.

    Drive it from a selector loop: register `listener` and every `pending` socket for
    reading, call `accept()` when the listener is readable, `read(sock)` when a pending
    socket is, and `expire()` each turn (`next_deadline()` says when one is due). An
    admitted socket is returned blocking, with no timeout, and belongs to the caller.
    """

    def __init__(
        self,
        listener: socket.socket,
        make_check: Callable[[], AdmissionCheck],
        timeout: float,
        dropped: Callable[[str], None],
        *,
        who: str,
        clock: Callable[[], float] = time.monotonic,
        max_pending: int = MAX_PENDING,
    ) -> None:
        self.listener: socket.socket | None = listener
        #: Connections that may wait to prove themselves at once (see `accept`): a port whose
        #: every request is a new connection (a tls13 load server's) waits for many of the
        #: job's own at a time, and bounds them by its own room instead.
        self.max_pending = max_pending
        self.make_check, self.timeout, self.dropped, self.who, self.clock = make_check, timeout, dropped, who, clock
        self.pending: dict[socket.socket, _Pending] = {}
        #: The check of the connection `read` admitted last: what it read stays with it (a
        #: TLS port's check holds the ClientHello it read, for OpenSSL).
        self.admitted_check: AdmissionCheck | None = None
        #: Connections closed because they did not prove themselves (they and their bytes
        #: went nowhere), and connections refused at once because too many were waiting.
        self.strangers = 0
        listener.setblocking(False)

    @property
    def is_open(self) -> bool:
        return self.listener is not None

    def sockets(self) -> list[socket.socket]:
        """Everything to watch for reading: the listener while open, and the pending."""
        return ([self.listener] if self.listener is not None else []) + list(self.pending)

    def register(self, selector: selectors.BaseSelector, data: object = None) -> None:
        for sock in self.sockets():
            selector.register(sock, selectors.EVENT_READ, data)

    def accept(self, most: int = MAX_ACCEPTS_PER_TURN) -> None:
        """Take up to `most` connections waiting on the listener (none is waited for).

        Past `max_pending` waiting, the oldest that has not shown the job's ticket goes (it
        has had the longest to prove itself); the job's own (vouched) are never evicted,
        and when only they wait, the newcomer is refused. Out of descriptors, a stranger's
        is freed for the newcomer; with none to free, `DescriptorsExhausted`."""
        for _ in range(most):
            if self.listener is None:
                return
            try:
                sock, address = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                if exc.errno in (errno.EMFILE, errno.ENFILE) and not self._someone_waits():
                    # The kernel looks for a free descriptor before it looks at the queue: with
                    # none left, accept() fails even when nobody waits. Evicting then closed the
                    # job's own connection, still proving itself, for no newcomer at all.
                    return
                if exc.errno in (errno.EMFILE, errno.ENFILE) and self._evict("no file descriptor was left"):
                    continue  # one freed: the queued connection is taken next
                if exc.errno in (errno.EMFILE, errno.ENFILE):
                    raise DescriptorsExhausted(
                        exc.errno, f"{self.who} cannot accept a connection: {exhaustion_reason(exc)}"
                    ) from None
                self.dropped(f"{self.who} could not accept a connection: {exc.strerror or exc}")
                return
            where = str(address[0]) if isinstance(address, tuple) else "a local socket"
            if len(self.pending) >= self.max_pending and not self._evict(
                f"{self.max_pending} newer connections were waiting to prove themselves"
            ):
                sock.close()
                self._stranger(where, f"{self.max_pending} of the job's own connections were already waiting")
                continue
            sock.setblocking(False)
            self.pending[sock] = _Pending(where, self.make_check(), self.clock() + self.timeout)

    def _someone_waits(self) -> bool:
        """Whether a connection waits on the listener to be accepted."""
        assert self.listener is not None
        try:
            return bool(select.select([self.listener], [], [], 0)[0])
        except (OSError, ValueError):
            return True

    def _evict(self, why: str) -> bool:
        """Close the oldest waiting connection not vouched for and silent; False when there
        is none. One that has sent bytes not read yet may be the job's own, its ticket
        waiting to be read: the job's peers send theirs at once, an idle stranger never."""
        strangers = [
            sock for sock, entry in self.pending.items() if not getattr(entry.check, "vouched", False) and _silent(sock)
        ]
        if not strangers:
            return False
        self._drop(min(strangers, key=lambda sock: self.pending[sock].deadline), why)
        return True

    def read(self, sock: socket.socket) -> socket.socket | None:
        """Read what the pending `sock` sent; the socket once it is admitted, else None."""
        entry = self.pending.get(sock)
        if entry is None:
            return None
        try:
            data = sock.recv(entry.check.wanted())
        except (BlockingIOError, InterruptedError):
            return None
        except OSError as exc:
            self._drop(sock, exc.strerror or str(exc))
            return None
        try:
            if not data:
                raise entry.check.closed_error()
            reply = entry.check.feed(data)
            # A fresh connection's send buffer takes a handshake frame whole; one that
            # does not is a peer that stopped reading.
            if reply and sock.send(reply) != len(reply):
                raise PeerTimeout("it stopped reading during the handshake")
        except (WireError, OSError) as exc:
            self._drop(sock, str(exc) if isinstance(exc, WireError) else (exc.strerror or str(exc)))
            return None
        if not entry.check.done:
            return None
        del self.pending[sock]
        self.admitted_check = entry.check
        sock.setblocking(True)
        sock.settimeout(None)
        return sock

    def expire(self) -> None:
        now = self.clock()
        for sock, entry in list(self.pending.items()):
            if now >= entry.deadline:
                self._drop(sock, str(entry.check.timeout_error(self.timeout)))

    def next_deadline(self) -> float | None:
        return min((entry.deadline for entry in self.pending.values()), default=None)

    def drop_pending(self) -> None:
        """Close every connection still waiting: the job has its peers."""
        for sock in list(self.pending):
            self._drop(sock, "it had not proven itself when the job's own peers were all in")

    def close(self) -> None:
        """Stop listening and close every connection still waiting, those the kernel
        queued on the listener included: closing a listener resets its queue unseen, so a
        stranger who connected a moment before the door closed went uncounted."""
        if self.listener is not None:
            self._turn_away_queued()
            self.listener.close()
            self.listener = None
        self.drop_pending()

    def _turn_away_queued(self) -> None:
        """Accept and close what waits in the listener's queue (the job's own peers are all
        in when the door closes, so whatever still waits is a stranger). Bounded by the
        largest queue the kernel keeps (somaxconn), in case connections keep arriving."""
        assert self.listener is not None
        for _ in range(_MAX_QUEUED):
            try:
                sock, address = self.listener.accept()
            except OSError:  # nothing queued (BlockingIOError), or no descriptor left to take it
                return
            sock.close()
            where = str(address[0]) if isinstance(address, tuple) else "a local socket"
            self._stranger(where, "it was still queued when the job's own peers were all in")

    def _drop(self, sock: socket.socket, why: str) -> None:
        entry = self.pending.pop(sock)
        sock.close()
        self._stranger(entry.address, why)

    def _stranger(self, address: str, why: str) -> None:
        self.strangers += 1
        self.dropped(f"{self.who} closed a connection from {address}: {why}")


def admit_one(doorway: Doorway, deadline: float, cancelled: Callable[[], bool] = lambda: False) -> socket.socket | None:
    """Run `doorway` alone until one connection is admitted (returned) or `deadline`
    (monotonic) passes (None)."""
    with selectors.DefaultSelector() as selector:
        while True:
            now = time.monotonic()
            if now >= deadline or cancelled():
                return None
            wake = deadline - now
            due = doorway.next_deadline()
            if due is not None:
                wake = min(wake, max(0.0, due - doorway.clock()))
            for sock in doorway.sockets():
                selector.register(sock, selectors.EVENT_READ)
            ready = selector.select(wake)
            for sock in doorway.sockets():
                selector.unregister(sock)
            listener_ready = False
            for key, _ in ready:  # what waits to prove itself first, then newcomers
                ready_sock = key.fileobj
                assert isinstance(ready_sock, socket.socket)
                if ready_sock is doorway.listener:
                    listener_ready = True
                    continue
                admitted = doorway.read(ready_sock)
                if admitted is not None:
                    return admitted
            if listener_ready:
                doorway.accept()
            doorway.expire()

"""`cryptobench serve`: a receiver that serves session jobs to remote senders, one at a time.

Jobs run in the calling (main) thread, one at a time. A gatekeeper thread accepts
connections and runs the token handshake (app.core.transport.auth) for all of them at
once from a selector, each within one deadline (the hello timeout) however the peer
paces its bytes; it never runs while a connection is quiet, so a job is timed with
the gatekeeper asleep unless someone connects meanwhile. A peer that proves it holds
the token joins a FIFO queue and is told its place (QUEUED, again every keepalive
interval so that it knows the server is alive) until the main thread sends it READY;
when the queue is full it is told BUSY with a retry interval and reconnects later.
Whatever a peer does — a wrong token, garbage, a huge length claim, silence, a
dribble, a malformed job — ends that connection with a log line, and the server goes on.

Tokens live in a file holding 64 hex characters (32 random bytes). The file must
not be readable by other users: anyone who can read it can make this machine run
benchmark jobs.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import secrets
import selectors
import socket
import stat
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from app.core.errors import SessionError
from app.core.fileio import FileReadError, read_limited
from app.core.schemes.base import SchemeError
from app.core.serve import CLIENT_SILENCE_S, DEFAULT_PORT, HELLO_S
from app.core.serve.load_serve import LoadServersAt
from app.core.session.protocol import U32, JobRejected
from app.core.session.receiver import ReceiverLimits, ReceiverSession, listen
from app.core.store.store import data_dir
from app.core.transport.auth import TOKEN_BYTES, AuthenticationFailed, ServerHandshake
from app.core.transport.wire import FrameType, TruncatedFrame, WireError, encode_header

TOKEN_FILENAME = "serve-token"
#: How often the accept loop looks at the stop flag (and lets Ctrl-C through).
ACCEPT_POLL_SECONDS = 0.5
#: Authenticated clients waiting for their turn; one more is told BUSY.
MAX_QUEUE = 8
#: Connections in the middle of the handshake; one more is closed at once.
MAX_PENDING = 64
#: A queued client hears from the server this often (its own wait is the connect timeout, 10 s).
KEEPALIVE_SECONDS = 2.0
#: What a client told BUSY waits before reconnecting (it doubles this on each further BUSY).
BUSY_RETRY_SECONDS = 2.0

Log = Callable[[str], None]


class TokenFileError(SessionError):
    """A token file that cannot be used; str() names the file and the fix."""


def default_token_path() -> Path:
    return data_dir() / TOKEN_FILENAME


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def create_token_file(path: Path) -> bytes:
    """Write a fresh token readable by the owner only; refuse to overwrite."""
    token = secrets.token_bytes(TOKEN_BYTES)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise TokenFileError(f"{path}: already exists") from None
    except OSError as exc:
        raise TokenFileError(f"{path}: cannot create token file: {exc.strerror or exc}") from None
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(token.hex() + "\n")
    return token


#: A token file is 65 bytes; anything much larger is not one (and /dev/zero never ends).
MAX_TOKEN_FILE_BYTES = 4096


def load_token(path: Path) -> bytes:
    """Read a token file, refusing one that other users can read or write.

    Checked before reading: a regular file (a FIFO blocks, /dev/zero has no end),
    private to its owner; then at most MAX_TOKEN_FILE_BYTES are read."""
    try:
        info = path.stat()
    except FileNotFoundError:
        raise TokenFileError(f"{path}: token file not found") from None
    except OSError as exc:
        raise TokenFileError(f"{path}: cannot read token file: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise TokenFileError(f"{path}: not a regular file, so not a token file")
    if os.name == "posix" and info.st_mode & 0o077:
        mode = stat.S_IMODE(info.st_mode)
        raise TokenFileError(
            f"{path}: other users can access this token file (mode {mode:04o}); run `chmod 600 {path}`"
        )
    try:  # bounded and typed again on the open file: a FIFO swapped in after the stat never blocks
        raw = read_limited(path, MAX_TOKEN_FILE_BYTES, "a token file")
        text = raw.decode("ascii")
    except FileReadError as exc:
        raise TokenFileError(f"{path}: {exc.reason} (expected {2 * TOKEN_BYTES} hex characters)") from None
    except UnicodeDecodeError:
        raise TokenFileError(f"{path}: not a token file (expected {2 * TOKEN_BYTES} hex characters)") from None
    value = text.strip()
    try:
        token = bytes.fromhex(value)
    except ValueError:
        token = b""
    if len(token) != TOKEN_BYTES:
        raise TokenFileError(
            f"{path}: not a token file (expected {2 * TOKEN_BYTES} hex characters, got {len(value)} characters)"
        )
    return token


def _never_raising(log: Log | None) -> Log:
    """The server's log, made harmless: a log line that cannot be written (stdout piped
    into `head` and closed) must not end the server, whichever thread writes it."""
    if log is None:
        return lambda text: None

    def safe(text: str) -> None:
        try:
            log(text)
        except Exception:  # noqa: BLE001, S110 - losing a log line is the lesser harm
            pass

    return safe


@dataclass
class _Pending:
    """A connection in the middle of the handshake."""

    sock: socket.socket
    peer: str
    deadline: float
    handshake: ServerHandshake


@dataclass
class _Queued:
    """An authenticated connection waiting for the main thread."""

    sock: socket.socket
    peer: str


def _frame(kind: FrameType, body: bytes = b"") -> bytes:
    return encode_header(kind, len(body)) + body


#: What docs/remote.md promises (app.core.serve): the handshake within `HELLO_S`, and a
#: client silent for `CLIENT_SILENCE_S` in a job is dropped (a load job's too: `LoadServersAt`).
SERVER_LIMITS = ReceiverLimits(hello_timeout=HELLO_S, idle_timeout=CLIENT_SILENCE_S)


class Server:
    """Serves jobs until `stop` is set (or `max_connections` connections were handled).

    Timeouts and sizes are injectable so that tests need not wait the real ones.
    """

    def __init__(
        self,
        token: bytes,
        bind: str = "127.0.0.1",
        port: int = DEFAULT_PORT,
        limits: ReceiverLimits = SERVER_LIMITS,
        log: Log | None = None,
        *,
        max_queue: int = MAX_QUEUE,
        max_pending: int = MAX_PENDING,
        keepalive: float = KEEPALIVE_SECONDS,
        busy_retry: float = BUSY_RETRY_SECONDS,
    ) -> None:
        if len(token) != TOKEN_BYTES:
            raise ValueError(f"a token is {TOKEN_BYTES} bytes")
        self.token = token
        self.limits = limits
        self.log = _never_raising(log)
        self.max_queue = max_queue
        self.max_pending = max_pending
        self.keepalive = keepalive
        self.busy_retry = busy_retry
        # The kernel's whole accept queue (net.core.somaxconn caps it), not a loopback
        # receiver's 16: a burst of clients beyond the backlog was dropped by the kernel before
        # the gatekeeper saw it (the final ACK discarded, the client's data and close lost), so
        # a connection went unlogged and uncounted. Held, each is accepted and refused by the
        # gatekeeper for a stated reason (max_pending bounds what it authenticates at once).
        self.socket = listen(bind, port, backlog=socket.SOMAXCONN)
        self.address = self.socket.getsockname()[:2]
        self.served = 0
        self.refused = 0  # connections closed for what the peer did (or failed to do)
        self.turned_away = 0  # authenticated clients told BUSY
        #: Set once the gatekeeper thread runs (tests wait for it before counting threads).
        self.started = threading.Event()
        self._lock = threading.Condition()
        self._queue: deque[_Queued] = deque()
        self._serving = False
        self._closing = threading.Event()
        self._gatekeeper_error: BaseException | None = None

    @property
    def handled(self) -> int:
        return self.served + self.refused + self.turned_away

    # --- the main thread: one job at a time ---------------------------------------------------

    def serve_forever(self, stop: threading.Event | None = None, max_connections: int | None = None) -> None:
        stop = stop or threading.Event()
        gatekeeper = threading.Thread(target=self._gatekeeper, args=(stop,), name="cryptobench-gatekeeper", daemon=True)
        gatekeeper.start()
        try:
            while not stop.is_set() and (max_connections is None or self.handled < max_connections):
                if self._gatekeeper_error is not None:
                    raise self._gatekeeper_error
                item = self._next(ACCEPT_POLL_SECONDS)
                if item is None:
                    continue
                try:
                    self.handle(item.sock, item.peer)
                finally:
                    item.sock.close()
                    with self._lock:
                        self._serving = False
        finally:
            self._closing.set()
            gatekeeper.join(10 * ACCEPT_POLL_SECONDS + 5)
            with self._lock:
                for item in self._queue:
                    item.sock.close()
                self._queue.clear()
            self.socket.close()

    def _next(self, timeout: float) -> _Queued | None:
        with self._lock:
            if not self._lock.wait_for(lambda: bool(self._queue) or self._closing.is_set(), timeout):
                return None
            if not self._queue:
                return None
            self._serving = True
            return self._queue.popleft()

    def handle(self, sock: socket.socket, peer: str) -> None:
        """Serve one authenticated connection; never raises (a bad client must not stop the server)."""
        try:
            sock.setblocking(True)
            session = ReceiverSession(
                sock,
                self.token,
                self.limits,
                log=lambda text: self.log(f"{peer}: {text}"),
                load_servers=LoadServersAt(self.address[0], silence=self.limits.idle_timeout),
            )
            job = session.serve_authenticated()
        except (WireError, JobRejected, SchemeError, OSError) as exc:
            self._count("refused")
            self.log(f"{peer}: closed, {type(exc).__name__}: {exc}")
        except Exception as exc:  # noqa: BLE001 - a bug must not take the server down
            self._count("refused")
            self.log(f"{peer}: closed after an internal error, {type(exc).__name__}: {exc}")
        else:
            self._count("served")
            self.log(f"{peer}: finished {job.scheme} [{job.backend}] sizes {job.message_sizes}")

    def _count(self, what: str) -> None:
        with self._lock:
            setattr(self, what, getattr(self, what) + 1)
            self._lock.notify_all()

    # --- the gatekeeper thread: accept, authenticate, queue ---------------------------------------

    def _gatekeeper(self, stop: threading.Event) -> None:
        selector = selectors.DefaultSelector()
        pending: dict[socket.socket, _Pending] = {}
        self.socket.setblocking(False)
        selector.register(self.socket, selectors.EVENT_READ)
        accepting = True
        resume_accept = 0.0
        next_keepalive = time.monotonic() + self.keepalive
        self.started.set()
        try:
            while not (stop.is_set() or self._closing.is_set()):
                now = time.monotonic()
                if not accepting and now >= resume_accept:
                    selector.register(self.socket, selectors.EVENT_READ)
                    accepting = True
                timeout = ACCEPT_POLL_SECONDS
                if pending:
                    timeout = min(timeout, min(p.deadline for p in pending.values()) - now)
                if self._queue:
                    timeout = min(timeout, next_keepalive - now)
                if not accepting:
                    timeout = min(timeout, resume_accept - now)
                for key, _ in selector.select(max(timeout, 0.0)):
                    if key.fileobj is self.socket:
                        if not self._accept(selector, pending):
                            selector.unregister(self.socket)  # a failed accept: back off one poll interval
                            accepting, resume_accept = False, time.monotonic() + ACCEPT_POLL_SECONDS
                    else:
                        self._advance(selector, pending, pending[key.fileobj])  # type: ignore[index]
                now = time.monotonic()
                for item in [p for p in pending.values() if p.deadline <= now]:
                    self._drop(selector, pending, item, item.handshake.timeout_error(self.limits.hello_timeout))
                if now >= next_keepalive:
                    self._keepalive()
                    next_keepalive = now + self.keepalive
        except BaseException as exc:  # noqa: BLE001 - serve_forever re-raises it in the main thread
            self._gatekeeper_error = exc
        finally:
            for item in list(pending.values()):
                item.sock.close()
            selector.close()

    def _accept(self, selector: selectors.BaseSelector, pending: dict[socket.socket, _Pending]) -> bool:
        """Accept one connection; False if accept failed for a passing reason (logged)."""
        try:
            sock, address = self.socket.accept()
        except (BlockingIOError, InterruptedError):
            return True  # another wakeup took it, or the peer gave up before we got to it
        except OSError as exc:
            # A failed accept (EMFILE/ENFILE when file descriptors run out, ENOBUFS,
            # ECONNABORTED) is about one connection or a passing shortage. Log it, back
            # off one poll interval, keep serving; the pending connection stays queued.
            if exc.errno in (errno.EBADF, errno.EINVAL, errno.ENOTSOCK):
                raise  # the listening socket itself is gone: nothing to retry
            self.log(f"accept failed, retrying: {exc.strerror or exc}")
            return False
        peer = f"{address[0]}:{address[1]}"
        if len(pending) >= self.max_pending:
            sock.close()
            self._count("refused")
            self.log(f"{peer}: closed, {self.max_pending} connections are already authenticating")
            return True
        sock.setblocking(False)
        item = _Pending(sock, peer, time.monotonic() + self.limits.hello_timeout, ServerHandshake(self.token))
        pending[sock] = item
        selector.register(sock, selectors.EVENT_READ)
        return True

    def _advance(
        self, selector: selectors.BaseSelector, pending: dict[socket.socket, _Pending], item: _Pending
    ) -> None:
        try:
            try:
                data = item.sock.recv(item.handshake.wanted())
            except (BlockingIOError, InterruptedError):
                return
            except ConnectionResetError:
                raise TruncatedFrame("connection reset by the peer") from None
            if not data:
                raise item.handshake.closed_error()
            reply = item.handshake.feed(data)
            if reply:
                self._send_now(item.sock, reply)
        except (WireError, OSError) as exc:
            self._drop(selector, pending, item, exc)
            return
        except Exception as exc:  # noqa: BLE001 - a bug must not take the server down
            self._drop(selector, pending, item, RuntimeError(f"internal error, {type(exc).__name__}: {exc}"))
            return
        if item.handshake.done:
            selector.unregister(item.sock)
            del pending[item.sock]
            self._admit(item.sock, item.peer)

    @staticmethod
    def _send_now(sock: socket.socket, data: bytes) -> None:
        """A few dozen bytes on a non-blocking socket: all at once, or the peer is not reading."""
        try:
            sent = sock.send(data)
        except (BlockingIOError, InterruptedError):
            sent = 0
        except (BrokenPipeError, ConnectionResetError):
            raise TruncatedFrame("connection reset by the peer") from None
        if sent != len(data):
            raise TruncatedFrame("peer stopped reading")

    def _drop(
        self,
        selector: selectors.BaseSelector,
        pending: dict[socket.socket, _Pending],
        item: _Pending,
        exc: BaseException,
    ) -> None:
        selector.unregister(item.sock)
        del pending[item.sock]
        item.sock.close()
        self._count("refused")
        reason = str(exc) if isinstance(exc, AuthenticationFailed) else f"{type(exc).__name__}: {exc}"
        self.log(f"{item.peer}: closed, {reason}")

    def _admit(self, sock: socket.socket, peer: str) -> None:
        """An authenticated client: queue it (telling it its place) or, when the queue is full, BUSY."""
        with self._lock:
            ahead = len(self._queue) + (1 if self._serving else 0)
            if len(self._queue) >= self.max_queue:
                retry_ms = int(self.busy_retry * 1000)
                try:
                    self._send_now(sock, _frame(FrameType.BUSY, U32.pack(retry_ms)))
                except WireError:
                    pass
                sock.close()
                self.turned_away += 1
                self._lock.notify_all()
                self.log(
                    f"{peer}: busy, {len(self._queue)} clients already waiting; told to retry in {self.busy_retry:g} s"
                )
                return
            if ahead:
                try:
                    self._send_now(sock, _frame(FrameType.QUEUED, U32.pack(ahead)))
                except WireError as exc:
                    sock.close()
                    self.refused += 1
                    self._lock.notify_all()
                    self.log(f"{peer}: closed while queued, {exc}")
                    return
                self.log(f"{peer}: authenticated, waiting behind {ahead} job(s)")
            self._queue.append(_Queued(sock, peer))
            self._lock.notify_all()

    def _keepalive(self) -> None:
        """Tell every queued client its place; drop those that stopped reading or left."""
        with self._lock:
            kept: deque[_Queued] = deque()
            for item in self._queue:
                ahead = len(kept) + (1 if self._serving else 0)
                try:
                    if ahead:
                        self._send_now(item.sock, _frame(FrameType.QUEUED, U32.pack(ahead)))
                except WireError as exc:
                    item.sock.close()
                    self.refused += 1
                    self.log(f"{item.peer}: closed while queued, {exc}")
                    continue
                kept.append(item)
            self._queue = kept
            self._lock.notify_all()

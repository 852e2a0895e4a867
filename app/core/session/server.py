"""`cryptobench serve`: a receiver that serves session jobs to remote senders, one at a time.

The server runs the receiver in its own main thread (no thread beside the timed
code) and handles one connection at a time; others wait in the listen backlog.
Whatever a peer does — a wrong token, garbage, a huge length claim, silence, a
malformed job — ends that connection with a log line, and the server goes on.

Tokens live in a file holding 64 hex characters (32 random bytes). The file must
not be readable by other users: anyone who can read it can make this machine run
benchmark jobs.
"""

from __future__ import annotations

import errno
import ipaddress
import os
import secrets
import socket
import stat
import threading
from collections.abc import Callable
from pathlib import Path

from app.core.schemes.base import SchemeError
from app.core.session.protocol import TOKEN_BYTES, JobRejected
from app.core.session.receiver import AuthenticationFailed, ReceiverLimits, ReceiverSession, listen
from app.core.store import data_dir
from app.core.wire import WireError

DEFAULT_PORT = 7979
TOKEN_FILENAME = "serve-token"
#: How often the accept loop looks at the stop flag (and lets Ctrl-C through).
ACCEPT_POLL_SECONDS = 0.5

Log = Callable[[str], None]


class TokenFileError(ValueError):
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


def load_token(path: Path) -> bytes:
    """Read a token file, refusing one that other users can read or write."""
    try:
        info = path.stat()
        text = path.read_text(encoding="ascii")
    except FileNotFoundError:
        raise TokenFileError(f"{path}: token file not found") from None
    except UnicodeDecodeError:
        raise TokenFileError(f"{path}: not a token file (expected {2 * TOKEN_BYTES} hex characters)") from None
    except OSError as exc:
        raise TokenFileError(f"{path}: cannot read token file: {exc.strerror or exc}") from None
    if os.name == "posix" and info.st_mode & 0o077:
        mode = stat.S_IMODE(info.st_mode)
        raise TokenFileError(f"{path}: other users can access this token file (mode {mode:04o}); "
                             f"run `chmod 600 {path}`")
    value = text.strip()
    try:
        token = bytes.fromhex(value)
    except ValueError:
        token = b""
    if len(token) != TOKEN_BYTES:
        raise TokenFileError(f"{path}: not a token file (expected {2 * TOKEN_BYTES} hex characters, "
                             f"got {len(value)} characters)")
    return token


class Server:
    """Serves jobs until `stop` is set (or `max_connections` connections were handled)."""

    def __init__(self, token: bytes, bind: str = "127.0.0.1", port: int = DEFAULT_PORT,
                 limits: ReceiverLimits = ReceiverLimits(hello_timeout=10.0, idle_timeout=120.0),
                 log: Log | None = None) -> None:
        if len(token) != TOKEN_BYTES:
            raise ValueError(f"a token is {TOKEN_BYTES} bytes")
        self.token = token
        self.limits = limits
        self.log = log or (lambda text: None)
        self.socket = listen(bind, port)
        self.address = self.socket.getsockname()[:2]
        self.served = 0
        self.refused = 0

    def serve_forever(self, stop: threading.Event | None = None, max_connections: int | None = None) -> None:
        stop = stop or threading.Event()
        handled = 0
        try:
            while not stop.is_set() and (max_connections is None or handled < max_connections):
                self.socket.settimeout(ACCEPT_POLL_SECONDS)
                try:
                    sock, peer = self.socket.accept()
                except (socket.timeout, TimeoutError):
                    continue
                except OSError as exc:
                    # A failed accept (EMFILE/ENFILE when file descriptors run out, ENOBUFS,
                    # ECONNABORTED) is about one connection or a passing shortage; it used to
                    # end serve_forever. Log it, back off one poll interval, keep serving.
                    # The pending connection stays queued and is accepted once it can be.
                    if exc.errno in (errno.EBADF, errno.EINVAL, errno.ENOTSOCK):
                        raise  # the listening socket itself is gone: nothing to retry
                    self.log(f"accept failed, retrying: {exc.strerror or exc}")
                    stop.wait(ACCEPT_POLL_SECONDS)
                    continue
                handled += 1
                with sock:
                    self.handle(sock, f"{peer[0]}:{peer[1]}")
        finally:
            self.socket.close()

    def handle(self, sock: socket.socket, peer: str) -> None:
        """Serve one connection; never raises (a bad client must not stop the server)."""
        try:
            job = ReceiverSession(sock, self.token, self.limits, log=lambda text: self.log(f"{peer}: {text}")).serve()
        except AuthenticationFailed as exc:
            self.refused += 1
            self.log(f"{peer}: closed, {exc}")
        except (WireError, JobRejected, SchemeError, OSError) as exc:
            self.refused += 1
            self.log(f"{peer}: closed, {type(exc).__name__}: {exc}")
        except Exception as exc:  # noqa: BLE001 - a bug must not take the server down
            self.refused += 1
            self.log(f"{peer}: closed after an internal error, {type(exc).__name__}: {exc}")
        else:
            self.served += 1
            self.log(f"{peer}: finished {job.scheme} [{job.backend}] sizes {job.message_sizes}")

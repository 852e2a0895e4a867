"""Reaching a receiver: where a `cryptobench serve` receiver listens (`RemoteTarget`), and
a tuned TCP connection to a receiver or a link (`connect`), for the session sender and the
load generator alike.
"""

from __future__ import annotations

import errno
import socket
from dataclasses import dataclass, field

from app.core.errors import exhaustion_reason
from app.core.transport.wire import WireError, tune

#: What a connection cannot be opened for when this machine has run out of something:
#: named as such (the errno and the limit), never as the far end's fault.
_EXHAUSTED = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM)


@dataclass(frozen=True)
class RemoteTarget:
    """A `cryptobench serve` receiver: where it listens and the token it expects."""

    host: str
    port: int
    token: bytes = field(repr=False)


def connect(
    host: str,
    port: int,
    timeout: float,
    nodelay: bool = True,
    congestion_control: str | None = None,
    admission: bytes = b"",
) -> socket.socket:
    """A connection to host:port, tuned; `admission` (a link's, app.core.transport.doorway)
    is sent on it first."""
    try:
        if congestion_control is None:
            sock = socket.create_connection((host, port), timeout=timeout)
        else:  # set before the SYN: the connection uses it from its first segment
            sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
            try:
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, congestion_control.encode())
                sock.settimeout(timeout)
                sock.connect((host, port))
            except BaseException:
                sock.close()
                raise
    except TimeoutError:
        raise WireError(f"no answer from {host}:{port} within {timeout:g} s") from None
    except OSError as exc:
        if exc.errno in _EXHAUSTED:
            raise WireError(f"cannot open a connection to {host}:{port}: {exhaustion_reason(exc)}") from None
        raise WireError(f"cannot connect to {host}:{port}: {exc.strerror or exc}") from None
    tune(sock, nodelay)
    if admission:
        try:
            sock.sendall(admission)
        except OSError as exc:
            sock.close()
            raise WireError(f"cannot send the link's admission to {host}:{port}: {exc.strerror or exc}") from None
    return sock

"""Application data after a handshake: what each end sends, and reading it back whole.

Both ends derive the request (client to server) and the response (server to client) of a
message size from the size's seed, so each end checks what it received without the
plaintext crossing the wire twice. A connection over memory BIOs reads what has been
written into it; `read_exact` asks `more` for the next bytes from wherever they come (the
other end in one process, a socket over TCP).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from OpenSSL import SSL

#: The seed of a size's application data, as the control connection carries it.
SEED_BYTES = 16
#: A TLS record carries at most 16 KiB of application data.
RECORD_DATA = 1 << 14


def request_for(seed: bytes, size: int) -> bytes:
    return hashlib.shake_128(seed + b"/request").digest(size) if size else b""


def response_for(seed: bytes, size: int) -> bytes:
    return hashlib.shake_128(seed + b"/response").digest(size) if size else b""


class DataMismatch(Exception):
    """Application data that arrived other than it was sent."""


def read_exact(
    connection: SSL.Connection, size: int, more: Callable[[], bytes], on_first: Callable[[], None] | None = None
) -> bytes:
    """`size` bytes of application data from `connection`, feeding it `more()` whenever it
    needs bytes (`more` returns b"" at the end of the stream: DataMismatch). `on_first` is
    called as the first byte is decrypted (the time to first byte)."""
    chunks: list[bytes] = []
    got = 0
    while got < size:
        try:
            chunk = connection.recv(min(RECORD_DATA, size - got))
        except SSL.WantReadError:
            data = more()
            if not data:
                raise DataMismatch(f"the stream ended after {got:,} of {size:,} bytes of application data") from None
            connection.bio_write(data)
            continue
        except SSL.ZeroReturnError:
            raise DataMismatch(f"the peer closed the connection after {got:,} of {size:,} bytes") from None
        if got == 0 and on_first is not None:
            on_first()
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)

"""What crosses a load job's connections once the token handshake is done.

Each connection starts like a session's (app.core.transport.auth: HELLO, CHALLENGE,
PROOF, WELCOME), so that nothing but our own generator is served. After that the
traffic is fixed binary records, small and cheap to parse, because a load server's
bookkeeping per request is part of what it can sustain:

    client -> server   kind (1 B) | body length (4 B) | id (8 B) | body
    server -> client   kind (1 B) | id (8 B) | value (8 B) | verdict (1 B)

Client records: PUBLIC_PLEASE (body: the plaintext seed; the reply's value is the
length of the public material that follows it), KEY (a signer's verification key, once
per connection), REQUEST (body: handshake length (4 B) | handshake | sealed payload; the
reply's value is the server's crypto time in nanoseconds), MARK (a step boundary; the
reply's id is the server process's pid and its value that process's CPU time in
nanoseconds; the generator's first MARK, once all its clients are in, also tells the
server to stop listening), BYE (this connection is done: a server process exits once every
connection it took is done).
"""

from __future__ import annotations

import enum
import struct

from app.core.transport.wire import WireError

#: Client record header: kind, body length, id.
RECORD = struct.Struct(">BIQ")
#: Server reply: kind, id, value, verdict.
REPLY = struct.Struct(">BQQB")
#: A request body starts with its handshake message's length.
HANDSHAKE_LENGTH = struct.Struct(">I")
#: A handshake message is at most this long (an RSA-4096 or ML-KEM-1024 one is ~1.6 KiB).
MAX_HANDSHAKE = 64 * 1024


class Kind(enum.IntEnum):
    PUBLIC_PLEASE = 1
    KEY = 2
    REQUEST = 3
    MARK = 4
    BYE = 5


class LoadProtocolError(WireError):
    """A peer broke the load protocol (unknown record, oversized body, bad length)."""


def record(kind: Kind, ident: int, body: bytes = b"") -> bytes:
    return RECORD.pack(kind, len(body), ident) + body


def request_body(handshake: bytes, payload: bytes) -> bytes:
    return HANDSHAKE_LENGTH.pack(len(handshake)) + handshake + payload


def split_request(body: memoryview) -> tuple[bytes, memoryview]:
    """(handshake, payload) of a REQUEST body; LoadProtocolError when its length lies."""
    if len(body) < HANDSHAKE_LENGTH.size:
        raise LoadProtocolError(f"a {len(body)}-byte request has no handshake length")
    (length,) = HANDSHAKE_LENGTH.unpack_from(body)
    end = HANDSHAKE_LENGTH.size + length
    if length > MAX_HANDSHAKE or end > len(body):
        raise LoadProtocolError(f"a request claims a {length}-byte handshake in a {len(body)}-byte body")
    return bytes(body[HANDSHAKE_LENGTH.size : end]), body[end:]


class RecordBuffer:
    """Bytes received on one connection, cut into whole client records.

    `limit` bounds a record's body before anything is buffered for it: a header that
    claims more closes the connection instead of growing the buffer.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()

    def feed(self, chunk: bytes) -> list[tuple[Kind, int, memoryview]]:
        self.data += chunk
        records: list[tuple[Kind, int, memoryview]] = []
        view = memoryview(self.data)
        offset = 0
        try:
            while len(view) - offset >= RECORD.size:
                raw_kind, length, ident = RECORD.unpack_from(view, offset)
                try:
                    kind = Kind(raw_kind)
                except ValueError:
                    raise LoadProtocolError(f"unknown record kind {raw_kind}") from None
                if length > self.limit:
                    raise LoadProtocolError(
                        f"a {kind.name} record claims {length} bytes, over this job's {self.limit}-byte limit"
                    )
                end = offset + RECORD.size + length
                if end > len(view):
                    break
                records.append((kind, ident, memoryview(bytes(view[offset + RECORD.size : end]))))
                offset = end
        finally:
            view.release()
        del self.data[:offset]
        return records


class ReplyBuffer:
    """Bytes received from the server, cut into fixed-size replies (and, after a
    PUBLIC_PLEASE reply, the public material that follows it)."""

    def __init__(self) -> None:
        self.data = bytearray()

    def feed(self, chunk: bytes) -> list[tuple[int, int, int, int]]:
        self.data += chunk
        whole = len(self.data) - len(self.data) % REPLY.size
        replies = [REPLY.unpack_from(self.data, at) for at in range(0, whole, REPLY.size)]
        del self.data[:whole]
        return replies

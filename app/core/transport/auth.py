"""Mutual authentication of a session: both ends prove they hold the token, neither sends it.

    sender                                   receiver
    HELLO      client nonce (32 B)     ->
                                       <-    CHALLENGE  server nonce (32 B)
    PROOF      HMAC(token, "client" | cn | sn) ->
                                       <-    WELCOME    HMAC(token, "server" | cn | sn)

Each proof covers both nonces, so it is fresh for both sides and useless for any
other connection; the two labels differ, so a proof cannot be reflected back as the
other side's. A peer without the token learns one random nonce (a squatter posing as
a server learns an HMAC of nonces it cannot reuse); the token itself never crosses the
wire. The receiver says nothing but its CHALLENGE to a peer that has not proven
itself, and the sender uses no frame of a receiver that has not proven itself (not
even an ERROR's text).

`ServerHandshake` is the receiver's side without I/O: it says how many bytes it wants
next (never more than the current frame, so nothing past the PROOF is read) and what
to send back. `authenticate_peer` drives it on a blocking socket (the loopback
receiver); `cryptobench serve` drives it from a selector, many connections at once.
Both enforce one deadline for the whole exchange: a peer dribbling a byte at a time
is dropped when the hello timeout runs out, not when it finishes.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import socket
import time

from app.core.transport.doorway import TICKET_BYTES
from app.core.transport.wire import (
    HEADER_SIZE,
    BadMagic,
    ConnectionClosed,
    FrameReader,
    FrameTooLarge,
    FrameType,
    PeerError,
    PeerTimeout,
    TruncatedFrame,
    UnexpectedFrame,
    UnknownFrameType,
    UnsupportedVersion,
    WireError,
    decode_header,
    encode_header,
    send_frame,
)

#: The serve's token: a job proves it holds it without sending it.
TOKEN_BYTES = 32
NONCE_BYTES = 32
PROOF_BYTES = 32  # HMAC-SHA256
_CLIENT_LABEL = b"CryptoBench session v2: client proof\x00"
_SERVER_LABEL = b"CryptoBench session v2: server proof\x00"


class AuthenticationFailed(WireError):
    """The peer did not prove it holds the token (or did not follow the handshake)."""


class ServerNotAuthenticated(AuthenticationFailed):
    """Sender side: the peer at the address did not prove it is our receiver."""


class TokenRefused(ServerNotAuthenticated):
    """Sender side: the receiver hung up after our proof (it holds a different token)."""


def _proof(label: bytes, token: bytes, client_nonce: bytes, server_nonce: bytes) -> bytes:
    # The token's length is part of the message: HMAC pads a short key with zeros, so
    # without it a token and the same token plus a zero byte would make the same proof.
    message = label + len(token).to_bytes(4, "big") + client_nonce + server_nonce
    return hmac.new(token, message, hashlib.sha256).digest()


def client_proof(token: bytes, client_nonce: bytes, server_nonce: bytes) -> bytes:
    return _proof(_CLIENT_LABEL, token, client_nonce, server_nonce)


def server_proof(token: bytes, client_nonce: bytes, server_nonce: bytes) -> bytes:
    return _proof(_SERVER_LABEL, token, client_nonce, server_nonce)


def frame_bytes(kind: FrameType, body: bytes) -> bytes:
    return encode_header(kind, len(body)) + body


class ServerHandshake:
    """The receiver's side of the handshake as a state machine fed with received bytes."""

    def __init__(self, token: bytes) -> None:
        self.token = token
        self.server_nonce = secrets.token_bytes(NONCE_BYTES)
        self.client_nonce = b""
        self.expecting = FrameType.HELLO
        self.done = False
        self.received = 0  # bytes read from the peer so far
        self._length: int | None = None  # the current frame's body length, once its header is in
        self._buffer = bytearray()

    def wanted(self) -> int:
        """Bytes to read next: the rest of the current header or body, nothing beyond."""
        if self._length is None:
            return HEADER_SIZE - len(self._buffer)
        return self._length - len(self._buffer)

    def feed(self, data: bytes) -> bytes:
        """Take bytes read from the peer; returns bytes to send back (often none).

        Raises a `WireError` (AuthenticationFailed, BadMagic, FrameTooLarge, ...) for a
        peer that does not follow the handshake.
        """
        if self.done or len(data) > self.wanted():
            raise AssertionError("fed more than wanted()")
        self._buffer += data
        self.received += len(data)
        if self.wanted():
            return b""
        if self._length is None:
            header = decode_header(self._buffer, NONCE_BYTES)  # bad magic, version, type, length
            if header.frame_type is not self.expecting:
                first = "first frame" if self.expecting is FrameType.HELLO else "frame after CHALLENGE"
                raise AuthenticationFailed(f"{first} was {header.frame_type.name}, not {self.expecting.name}")
            if header.length != NONCE_BYTES:
                raise AuthenticationFailed(f"{header.frame_type.name} of {header.length} bytes, expected {NONCE_BYTES}")
            self._length = header.length
            self._buffer.clear()
            return b""
        body = bytes(self._buffer)
        self._buffer.clear()
        self._length = None
        if self.expecting is FrameType.HELLO:
            self.client_nonce = body
            self.expecting = FrameType.PROOF
            return frame_bytes(FrameType.CHALLENGE, self.server_nonce)
        if not hmac.compare_digest(body, client_proof(self.token, self.client_nonce, self.server_nonce)):
            raise AuthenticationFailed("wrong token (its proof does not match)")
        self.done = True
        return frame_bytes(FrameType.WELCOME, server_proof(self.token, self.client_nonce, self.server_nonce))

    def closed_error(self) -> WireError:
        """What to raise when the peer closed the connection now."""
        if self._length is None and not self._buffer:
            where = "" if self.received == 0 else f" before its {self.expecting.name}"
            return ConnectionClosed(f"peer closed the connection{where}")
        total = HEADER_SIZE if self._length is None else self._length
        return TruncatedFrame(f"peer closed the connection after {len(self._buffer)} of {total} bytes")

    def timeout_error(self, timeout: float) -> PeerTimeout:
        what = "nothing" if self.received == 0 else f"{self.received} bytes of its handshake"
        return PeerTimeout(f"peer sent {what} within the {timeout:g} s hello timeout")


def authenticate_peer(sock: socket.socket, token: bytes, timeout: float) -> None:
    """Receiver side on a blocking socket: the whole handshake within `timeout` seconds."""
    handshake = ServerHandshake(token)
    deadline = time.monotonic() + timeout
    while not handshake.done:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise handshake.timeout_error(timeout)
        sock.settimeout(remaining)
        try:
            data = sock.recv(handshake.wanted())
        except (TimeoutError, BlockingIOError):
            raise handshake.timeout_error(timeout) from None
        except ConnectionResetError:
            raise TruncatedFrame("connection reset by the peer") from None
        if not data:
            raise handshake.closed_error()
        reply = handshake.feed(data)
        if reply:
            try:
                sock.sendall(reply)
            except (TimeoutError, BlockingIOError):
                raise PeerTimeout("peer stopped reading during the handshake") from None
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise ConnectionClosed(f"peer closed the connection ({exc.strerror or exc})") from None


def authenticate_server(sock: socket.socket, reader: FrameReader, token: bytes, where: str) -> None:
    """Sender side: prove we hold the token and make the receiver prove it too.

    Nothing the peer sends is believed before its WELCOME checks out: an ERROR frame's
    text is not even shown (a squatter at the address could write anything there).
    `reader`'s idle timeout bounds each wait.
    """
    client_nonce = secrets.token_bytes(NONCE_BYTES)
    send_frame(sock, FrameType.HELLO, [client_nonce])
    try:
        server_nonce = bytes(reader.expect(FrameType.CHALLENGE, limit=NONCE_BYTES))
    except PeerError:
        raise ServerNotAuthenticated(
            f"{where} answered with an ERROR instead of a challenge "
            "(text not shown: it has not proven it holds the token)"
        ) from None
    except (BadMagic, UnsupportedVersion, UnknownFrameType, UnexpectedFrame, FrameTooLarge) as exc:
        raise ServerNotAuthenticated(
            f"{where} is not a CryptoBench session receiver of this version ({type(exc).__name__}: {exc})"
        ) from None
    except (ConnectionClosed, TruncatedFrame):
        raise ServerNotAuthenticated(
            f"{where} closed the connection instead of sending a challenge (not a CryptoBench serve of this version?)"
        ) from None
    except PeerTimeout:
        raise ServerNotAuthenticated(
            f"{where} sent no challenge within {reader.idle_timeout:g} s (not a CryptoBench serve?)"
        ) from None
    if len(server_nonce) != NONCE_BYTES:
        raise ServerNotAuthenticated(f"{where} sent a {len(server_nonce)}-byte challenge, expected {NONCE_BYTES}")
    send_frame(sock, FrameType.PROOF, [client_proof(token, client_nonce, server_nonce)])
    try:
        proof = bytes(reader.expect(FrameType.WELCOME, limit=PROOF_BYTES))
    except (ConnectionClosed, TruncatedFrame):
        raise TokenRefused(
            f"{where} closed the connection after our proof: it holds a different token "
            "(both ends must use the same token file)"
        ) from None
    except PeerError:
        raise ServerNotAuthenticated(
            f"{where} answered our proof with an ERROR (text not shown: it has not proven it holds the token)"
        ) from None
    except (UnexpectedFrame, FrameTooLarge, BadMagic, UnsupportedVersion, UnknownFrameType) as exc:
        raise ServerNotAuthenticated(
            f"{where} did not prove it holds the token ({type(exc).__name__}: {exc})"
        ) from None
    except PeerTimeout:
        raise ServerNotAuthenticated(f"{where} sent no proof within {reader.idle_timeout:g} s") from None
    if not hmac.compare_digest(proof, server_proof(token, client_nonce, server_nonce)):
        raise ServerNotAuthenticated(
            f"{where} did not prove it holds the token (wrong proof): "
            "not our CryptoBench serve, or a different token file"
        )


def load_secrets(token: bytes, nonce: bytes) -> tuple[bytes, bytes]:
    """(the load server's token, its admission ticket) for one job: HMAC-SHA256 of the
    serve's token over a label and the job's nonce."""

    def derive(label: bytes, size: int) -> bytes:
        return hmac.new(token, b"cryptobench load " + label + b"\0" + nonce, hashlib.sha256).digest()[:size]

    return derive(b"token", TOKEN_BYTES), derive(b"ticket", TICKET_BYTES)

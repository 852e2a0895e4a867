"""What the rogue-client tests share: the token, the job, and frames built by hand."""

from __future__ import annotations

import json
from typing import Any

from app.core.session.protocol import JobDescription
from app.core.session.receiver import ReceiverLimits
from app.core.transport.auth import TOKEN_BYTES
from app.core.transport.wire import MAX_CONTROL_FRAME, FrameType, encode_header

TOKEN = bytes(range(1, TOKEN_BYTES + 1))
LIMITS = ReceiverLimits(hello_timeout=0.5, idle_timeout=2)
JOB = JobDescription(scheme="aes-gcm", backend="cryptography", params={}, message_sizes=[64])
#: aes-gcm with 64-byte messages needs no more than a control frame.
JOB_CAPACITY = MAX_CONTROL_FRAME
RECEIVER_TO_SENDER = {
    FrameType.WELCOME,
    FrameType.READY,
    FrameType.CHALLENGE,
    FrameType.JOB_OK,
    FrameType.PUBLIC,
    FrameType.HANDSHAKE_OK,
    FrameType.SIZE_OK,
    FrameType.PONG,
    FrameType.ACK,
    FrameType.TRACE_OK,
    FrameType.SIZE_END_OK,
    FrameType.ERROR,
}


def frame(kind: FrameType, body: bytes = b"") -> bytes:
    return encode_header(kind, len(body)) + body


def job_body(**changes: Any) -> bytes:
    data = JOB.model_dump(mode="json")
    data.update(changes)
    return json.dumps(data).encode()

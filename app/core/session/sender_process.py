"""The sender process: its entry point (`sender_main`), its one-line error, and the session
run again while an authenticated receiver answers BUSY (`run_with_retries`).
"""

from __future__ import annotations

import random
import socket
import time
from collections.abc import Callable
from multiprocessing.connection import Connection

from app.core.contracts.plan import JobPlan
from app.core.measure.harness import Emit, child_entry, describe_error
from app.core.schemes.base import SchemeError
from app.core.session.sender import SenderSession, ServerBusy, SessionFailed
from app.core.transport.connect import connect
from app.core.transport.netns import enter_namespace
from app.core.transport.wire import WireError


def sender_main(conn: Connection, plan: JobPlan) -> None:
    """Entry point of a sender process (multiprocessing spawn target)."""
    child_entry(conn, lambda emit: run_with_retries(plan, emit), describe=describe_failure)


def describe_failure(exc: BaseException) -> str:
    """The job's one-line error: a wire error says it all; a session or scheme failure
    is named; anything else is unexpected and shown as Python names it."""
    if isinstance(exc, WireError):
        return str(exc)
    if isinstance(exc, (SessionFailed, SchemeError)):
        return f"{type(exc).__name__}: {exc}"
    return describe_error(exc)


def run_with_retries(
    plan: JobPlan,
    emit: Emit,
    sleep: Callable[[float], None] = time.sleep,
    body: Callable[[socket.socket], None] | None = None,
) -> None:
    """Run the session (or `body` on the connected socket: a remote load job's control
    connection); while an authenticated server answers BUSY, reconnect after the interval
    it asks for (doubling, with jitter, so that waiting clients spread out), for at most
    the peer's `queue_timeout` seconds in all."""
    peer = plan.session_peer()
    if peer.namespace is not None:  # a packet link's end: before any socket is made
        enter_namespace(peer.namespace)
    deadline = time.monotonic() + peer.queue_timeout
    attempt = 0
    while True:
        with connect(
            peer.host, peer.port, peer.connect_timeout, plan.job.tcp_nodelay, peer.congestion_control, peer.admission
        ) as sock:
            try:
                if body is None:
                    SenderSession(sock, plan, emit).run()
                else:
                    body(sock)
                return
            except ServerBusy as busy:
                wait = min(max(busy.retry_after, 0.05) * 2 ** min(attempt, 5), 30.0)
                wait *= 1 + random.random() / 4
        if time.monotonic() + wait > deadline:
            raise SessionFailed(
                f"the server at {peer.address} stayed busy for {peer.queue_timeout:g} s (its queue was full)"
            )
        attempt += 1
        sleep(wait)

"""Load and tls13 jobs against `cryptobench serve`: the server under test on the server machine.

A sender whose job carries `load` (protocol.LoadServe) asks the serve it authenticated with
to start a load server (app.core.load.server) for the job, a tls13 job a TLS server
(app.core.tls.server: its control connection and one TLS connection per handshake); JOB_OK
answers with its port and a fresh nonce. The load server's token and admission ticket are derived from the serve's
token and that nonce on both sides (`load_secrets`), so neither crosses the wire; only
the job's own generators, which were given them, get in. The serve keeps the job's control
connection until the sender says BYE (or leaves), then stops the load server: one job at
a time, as every other job it serves.
"""

from __future__ import annotations

import secrets
import select
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.core.serve import CLIENT_SILENCE_S
from app.core.session.protocol import LOAD_NONCE_BYTES, JobDescription, JobRejected
from app.core.transport.auth import load_secrets
from app.core.transport.wire import FrameReader, FrameType, WireError

#: The load server must listen within this long.
START_TIMEOUT_S = 60.0
#: How often the serve looks at the job's control connection and its load server.
LOOK_S = 1.0
#: After the load server has ended (every generator's connection closed), the sender has
#: this long to say BYE before the serve moves on.
BYE_TIMEOUT_S = 30.0

Log = Callable[[str], None]


@dataclass
class RunningLoadServer:
    """A load server the serve started for one job, and what JOB_OK tells the sender."""

    process: Any
    pipe: Any
    port: int
    nonce: bytes
    #: When the client's generators last reached the load server (CLOCK_MONOTONIC, shared).
    heard: Any = None
    #: A client silent this long, on its connection and to its load server, is dropped.
    silence: float = CLIENT_SILENCE_S

    def accepted(self) -> dict[str, object]:
        return {"load_port": self.port, "load_nonce": self.nonce.hex()}

    def await_end(self, sock: socket.socket, reader: FrameReader, log: Log) -> None:
        await_load_end(sock, reader, self, log)

    def stop(self) -> None:
        stop_load_server(self)


@dataclass(frozen=True)
class LoadServersAt:
    """What a serve's receiver is handed to serve load jobs (`ReceiverSession.load_servers`):
    each job's load server listens on the serve's own address."""

    bind: str
    #: The serve's promise (`CLIENT_SILENCE_S`, or what a test gives the serve).
    silence: float = CLIENT_SILENCE_S

    def start(self, token: bytes, job: JobDescription, log: Log) -> RunningLoadServer:
        return start_load_server(token, job, self.bind, log, self.silence)


def start_load_server(
    token: bytes, job: JobDescription, bind: str, log: Log, silence: float = CLIENT_SILENCE_S
) -> RunningLoadServer:
    """Start the job's load server (a tls13 job's TLS server) on `bind` (the serve's own
    address); JobRejected if it cannot listen."""
    from app.core.contracts.events import ChildFailed, Listening
    from app.core.load.server import LoadServerPlan, load_server_main
    from app.core.processes.deadlines import stop_process
    from app.core.processes.jobstart import child_context
    from app.core.tls.server import TlsServerPlan, tls_server_main

    nonce = secrets.token_bytes(LOAD_NONCE_BYTES)
    load_token, ticket = load_secrets(token, nonce)
    context = child_context()
    heard = context.RawValue("d", time.monotonic())
    target: Any
    plan: LoadServerPlan | TlsServerPlan
    if job.load is not None:
        target, plan = (
            load_server_main,
            LoadServerPlan(
                load_token,
                job.scheme,
                job.backend,
                dict(job.params),
                tuple(job.message_sizes),
                workers=job.load.server_workers,
                bind=bind,
                ticket=ticket,
                heard=heard,
                exchange=job.pattern(),
            ),
        )
    else:  # a tls13 job: its own server, the job's handshakes one at a time
        target, plan = tls_server_main, TlsServerPlan(load_token, ticket, bind, heard=heard)
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=target, args=(send, plan), name="cryptobench-load-server")
    process.start()
    send.close()
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            if not receive.poll(0.2):
                if not process.is_alive():
                    break
                continue
            message = receive.recv()
            if isinstance(message, Listening):
                what = "load server" if job.load is not None else "TLS server"
                log(f"{what} for {job.scheme} [{job.backend}] listening on {bind}:{message.port}")
                return RunningLoadServer(process, receive, message.port, nonce, heard, silence)
            if isinstance(message, ChildFailed):
                raise JobRejected(f"the load server could not start: {message.error}")
    except (EOFError, OSError):
        pass
    except JobRejected:
        stop_process(process)
        raise
    stop_process(process)
    raise JobRejected("the load server did not start listening")


def await_load_end(sock: socket.socket, reader: FrameReader, server: RunningLoadServer, log: Log) -> None:
    """Hold the job until the sender's BYE (or its connection's end), relaying the load
    server's log lines; then stop the load server.

    The client is dropped once it has been silent for `server.silence`: nothing on its
    connection and no request from its generators at the load server. Before, a client
    stopped mid-run (Ctrl-Z) held the serve, and every client queued behind it, for as
    long as it stayed stopped (over 200 s measured, where the page promises 120 s)."""
    from app.core.contracts.events import ChildFailed, PeerDropped, ReceiverDone

    ended_at: float | None = None
    said = time.monotonic()  # the JOB just came
    try:
        while True:
            now = time.monotonic()
            heard = max(said, server.heard.value if server.heard is not None else 0.0)
            if now - heard >= server.silence:
                log(
                    f"the client was silent for {server.silence:g} s (nothing on its connection, no request "
                    "to its load server): dropped"
                )
                return
            if ended_at is not None and now - ended_at > BYE_TIMEOUT_S:
                log(f"the sender said nothing for {BYE_TIMEOUT_S:g} s after its load job ended")
                return
            watched: list[Any] = [sock] + ([server.pipe] if ended_at is None else [])
            wait = min(LOOK_S, max(0.0, heard + server.silence - now))
            ready, _, _ = select.select(watched, [], [], wait)
            if sock in ready:
                try:
                    kind, _ = reader.read()
                except WireError:
                    return  # the sender left: its job is over either way
                said = time.monotonic()
                if kind is FrameType.BYE:
                    return
                log(f"{kind.name} during a load job: ignored")
            if server.pipe in ready:
                try:
                    message = server.pipe.recv()
                except (EOFError, OSError):
                    ended_at = time.monotonic()
                    continue
                if isinstance(message, PeerDropped):
                    log(f"load server: {message.text}")
                elif isinstance(message, ChildFailed):
                    log(message.error)
                elif isinstance(message, ReceiverDone):
                    ended_at = time.monotonic()
    finally:
        stop_load_server(server)


def stop_load_server(server: RunningLoadServer) -> None:
    from app.core.processes.deadlines import stop_process

    stop_process(server.process)
    server.pipe.close()

"""Jobs whose server `cryptobench serve` starts for them on another machine (`run --remote
HOST:PORT`): a load job's load server, a tls13 job's TLS server.

The job's control connection asks the serve for its server (app.core.serve.load_serve),
queued like any remote job; its JOB_OK gives the port and a nonce, from which the server's
token and admission ticket are derived here as the serve derived them. A load job's
generators (this machine's one, or several placed on a Dask cluster) then drive that
server as they drive a local one; a tls13 job's client (app.core.tls.client) runs its
handshakes against it as against a local TLS server; BYE on the control connection ends it.
"""

from __future__ import annotations

import socket
from dataclasses import replace
from multiprocessing.connection import Connection

from app.core.contracts.plan import JobPlan, SessionPeer
from app.core.load.cluster.errors import ClusterError
from app.core.load.generator import Emit
from app.core.load.job import describe_load_failure
from app.core.measure.harness import child_entry
from app.core.session.sender import SenderSession
from app.core.session.sender_process import describe_failure, run_with_retries
from app.core.tls.client import TlsClient
from app.core.tls.data import DataMismatch
from app.core.tls.handshake import HandshakeFailed
from app.core.tls.stack import TlsStackError
from app.core.tls.tally import NegotiationMismatch
from app.core.transport.auth import load_secrets
from app.core.transport.connect import connect
from app.core.transport.doorway import admission
from app.core.transport.wire import FrameType, send_frame


def _server_plan(plan: JobPlan, session: SenderSession) -> JobPlan:
    """The plan against the server the serve started: its port, and the token and ticket
    derived from the serve's token and the nonce JOB_OK gave."""
    peer = plan.session_peer()
    token, ticket = load_secrets(peer.token, session.load_nonce)
    server = SessionPeer(
        peer.host,
        session.load_port,
        token,
        connect_timeout=peer.connect_timeout,
        reply_timeout=peer.reply_timeout,
        admission=admission(ticket),
    )
    return replace(plan, peer=server)


def run_remote_load_job(plan: JobPlan, emit: Emit) -> None:
    """The load job against the serve at `plan.peer`."""
    job = plan.job
    assert job.load is not None

    def body(sock: socket.socket) -> None:
        session = SenderSession(sock, plan, emit)
        session.open_session()
        load_plan = _server_plan(plan, session)
        try:
            if job.load is not None and job.load.cluster is not None:
                from app.core.load.cluster.coordinator import run_cluster_load_job

                run_cluster_load_job(load_plan, emit)
            else:
                from app.core.load.job import run_load_job

                run_load_job(load_plan, emit)
        finally:
            try:
                send_frame(sock, FrameType.BYE)
            except OSError:
                pass  # the serve has gone: it stops its load server itself

    run_with_retries(plan, emit, body=body)


def run_remote_tls_job(plan: JobPlan, emit: Emit) -> None:
    """The tls13 job against the TLS server the serve at `plan.peer` starts for it."""

    def body(sock: socket.socket) -> None:
        session = SenderSession(sock, plan, emit)
        session.open_session()
        server = _server_plan(plan, session).session_peer()
        try:
            client = TlsClient(replace(plan, peer=server), emit)
            with connect(server.host, server.port, server.connect_timeout, True, None, server.admission) as control:
                client.run(control)
        finally:
            try:
                send_frame(sock, FrameType.BYE)
            except OSError:
                pass  # the serve has gone: it stops its TLS server itself

    run_with_retries(plan, emit, body=body)


def remote_tls_main(conn: Connection, plan: JobPlan) -> None:
    """Entry point of a remote tls13 job's client process (multiprocessing target)."""
    child_entry(conn, lambda emit: run_remote_tls_job(plan, emit), describe=_describe_failure)


def _describe_failure(exc: BaseException) -> str:
    if isinstance(exc, ClusterError):
        return str(exc)
    if isinstance(exc, (NegotiationMismatch, HandshakeFailed, DataMismatch, TlsStackError)):
        return describe_load_failure(exc)  # a tls13 job's handshakes, named
    return describe_failure(exc)


def remote_load_main(conn: Connection, plan: JobPlan) -> None:
    """Entry point of a remote load job's generator process (multiprocessing target)."""
    child_entry(conn, lambda emit: run_remote_load_job(plan, emit), describe=_describe_failure)

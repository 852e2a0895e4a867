"""A load job against a server on another machine (`run --remote HOST:PORT`, where
`cryptobench serve` runs).

The job's control connection asks the serve for a load server (app.core.serve.load_serve),
queued like any remote job; its JOB_OK gives the port and a nonce, from which the load
server's token and admission ticket are derived here as the serve derived them. The
generators (this machine's one, or several placed on a Dask cluster) then drive that
server as they drive a local one, and BYE on the control connection ends it.
"""

from __future__ import annotations

import socket
from dataclasses import replace
from multiprocessing.connection import Connection

from app.core.contracts.plan import JobPlan, SessionPeer
from app.core.load.cluster.errors import ClusterError
from app.core.load.generator import Emit
from app.core.measure.harness import child_entry
from app.core.session.sender import SenderSession
from app.core.session.sender_process import describe_failure, run_with_retries
from app.core.transport.auth import load_secrets
from app.core.transport.doorway import admission
from app.core.transport.wire import FrameType, send_frame


def run_remote_load_job(plan: JobPlan, emit: Emit) -> None:
    """The load job against the serve at `plan.peer`."""
    peer = plan.session_peer()
    job = plan.job
    assert job.load is not None

    def body(sock: socket.socket) -> None:
        session = SenderSession(sock, plan, emit)
        session.open_session()
        token, ticket = load_secrets(peer.token, session.load_nonce)
        server = SessionPeer(
            peer.host, session.load_port, token, connect_timeout=peer.connect_timeout, admission=admission(ticket)
        )
        load_plan = replace(plan, peer=server)
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


def _describe_failure(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, ClusterError) else describe_failure(exc)


def remote_load_main(conn: Connection, plan: JobPlan) -> None:
    """Entry point of a remote load job's generator process (multiprocessing target)."""
    child_entry(conn, lambda emit: run_remote_load_job(plan, emit), describe=_describe_failure)

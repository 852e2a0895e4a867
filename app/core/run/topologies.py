"""How each kind of job lays out its processes: one start function per topology.

A job runs as one of fourteen process layouts, decided by its mode, its link, its load
settings and whether a `cryptobench serve` end was given; a tls13 job runs TLS's own
bodies (app.core.tls) in four of them, and its load server and generator
(app.core.load.tls_server, tls_generator) in the load layouts, which choose them by the job. Each layout is a start function
with the same signature (`StartTopology`): it starts the job's processes in their order,
through the supervisor's `Starter` face, and says whether all of them came up; the
supervisor (app/core/run/supervisor.py) then measures, relays and stops them whatever the
layout. `topology_of` picks the layout from the job and `TOPOLOGIES` names its start
function, as mahimahi composes its shells: a new layout is one function and one row.

A job this machine or its setup cannot run (a link it cannot emulate, a cluster without
Dask, a load over a link against a remote server) is refused with `JobRefused` before any
process starts.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import replace
from enum import StrEnum
from multiprocessing.connection import Connection
from typing import Protocol, TypeVar

from app.core.contracts.events import PathReady
from app.core.contracts.plan import JobPlan
from app.core.link.packet_link import PacketPathPlan, check_packet_link
from app.core.link.relay import LinkError, LinkPlan, check_link, link_main
from app.core.link.shared import shared_link_main
from app.core.link.timeouts import exchange_seconds, largest_frame, limits_over_link, loss_seconds
from app.core.load.cluster.coordinator import PLACING_BOUND_S, cluster_generator_main
from app.core.load.cluster.scheduler import cluster_missing, server_address_for
from app.core.load.job import load_generator_main
from app.core.load.remote import remote_load_main, remote_tls_main
from app.core.load.server import LoadServerPlan, load_server_main
from app.core.measure.ops import child_main
from app.core.profile.edits import REMOTE_LOAD_LINK
from app.core.session.receiver import ReceiverLimits, ReceiverPlan, receiver_main
from app.core.session.sender_process import sender_main
from app.core.settings.profile import ResolvedJob
from app.core.tls.client import tls_client_main
from app.core.tls.ops import tls_operations_main
from app.core.tls.server import TlsServerPlan, tls_server_main
from app.core.tls.sides import MAX_HANDSHAKE_BYTES
from app.core.transport.auth import TOKEN_BYTES
from app.core.transport.connect import RemoteTarget
from app.core.transport.doorway import TICKET_BYTES, admission
from app.core.vocab import Family, LinkEmulation, Mode, Role, TcpConnection

#: What a job's child process is handed at its start: one of these plans.
PlanT = TypeVar("PlanT", JobPlan, ReceiverPlan, LinkPlan, PacketPathPlan, LoadServerPlan, TlsServerPlan)
#: A job's generator: where the load's client connections are driven from.
Generator = Callable[[Connection, JobPlan], None]

#: Where a job's local server and the sender that reaches it meet.
LOCALHOST = "127.0.0.1"


class JobRefused(Exception):
    """A job this machine or its setup cannot run, refused before any of its processes
    starts; str() is the job's one-line cause."""


class Starter(Protocol):
    """What a topology asks of the supervisor that runs the job (`ChildSupervisor`)."""

    #: The result index of the job's first message size.
    base: int
    #: The `cryptobench serve` end, for remote jobs (None: everything runs here).
    remote: RemoteTarget | None
    #: Why the measuring process gave no result, when that is known before it starts.
    child_error: str | None

    def start_child(self, role: Role, target: Callable[[Connection, PlanT], None], plan: PlanT) -> None:
        """Start one of the job's processes (StartFailed when the system refuses)."""

    def wait_for_port(self, role: Role) -> int | None:
        """The port a started receiver or link listens on (None: cancelled, or it failed)."""

    def session_plan(
        self,
        host: str,
        port: int,
        token: bytes,
        namespace: str | None = None,
        congestion_control: str | None = None,
        admission: bytes = b"",
    ) -> JobPlan:
        """The plan of a sender that reaches `host:port`, its waits stretched over the job's link."""

    def start_packet_path(self, job: ResolvedJob) -> PathReady | None:
        """Start the packet link and wait for its namespaces (None: it failed, or cancelled)."""


#: Starts a job's processes in one layout; True once every one of them is up, False when
#: one did not come up (the supervisor has recorded why, or the run was cancelled).
StartTopology = Callable[[Starter, ResolvedJob], bool]


class Topology(StrEnum):
    """The process layouts a job can run in."""

    OPERATIONS = "operations"
    LOOPBACK = "loopback"
    RELAY = "relay"
    PACKET_PATH = "packet path"
    LOCAL_LOAD = "local load"
    LOAD_OVER_A_LINK = "load over a link"
    LOAD_OVER_PACKET_PATH = "load over the packet path"
    CLUSTER = "cluster"
    REMOTE_LOAD = "remote load"
    REMOTE = "remote"
    #: A tls13 job (app.core.tls): both ends in one worker; a TLS server and client on
    #: loopback; the two over the packet path.
    TLS_OPERATIONS = "TLS operations"
    TLS_LOOPBACK = "TLS loopback"
    TLS_PACKET_PATH = "TLS over the packet path"
    #: A tls13 job against `cryptobench serve`, which starts its TLS server.
    TLS_REMOTE = "TLS remote"


def topology_of(job: ResolvedJob, remote: RemoteTarget | None) -> Topology:
    """The layout a job runs in: by its mode, then its link, its load and the serve end."""
    if job.family == Family.TLS and job.mode != Mode.LOAD:
        return _tls_topology(job)
    if job.mode == Mode.OPERATIONS:
        return Topology.OPERATIONS
    if job.mode == Mode.LOOPBACK:
        if job.link is None:
            return Topology.LOOPBACK
        return Topology.PACKET_PATH if job.link.emulation == LinkEmulation.PACKET else Topology.RELAY
    if job.mode == Mode.LOAD:
        assert job.load is not None, "resolve_jobs gives every load job its settings"
        if remote is not None:
            return Topology.REMOTE_LOAD
        if job.load.cluster is not None:
            return Topology.CLUSTER
        if job.link is None:
            return Topology.LOCAL_LOAD
        return (
            Topology.LOAD_OVER_PACKET_PATH if job.link.emulation == LinkEmulation.PACKET else Topology.LOAD_OVER_A_LINK
        )
    return Topology.REMOTE


def _tls_topology(job: ResolvedJob) -> Topology:
    """A tls13 job's layout other than load's: its own bodies, in operations, on loopback or
    over the packet path (resolve_jobs refuses the rest; refused here too, before any process
    starts)."""
    if job.mode == Mode.OPERATIONS:
        return Topology.TLS_OPERATIONS
    if job.mode == Mode.LOOPBACK and job.link is None:
        return Topology.TLS_LOOPBACK
    if job.mode == Mode.LOOPBACK and job.link is not None and job.link.emulation == LinkEmulation.PACKET:
        return Topology.TLS_PACKET_PATH
    if job.mode == Mode.REMOTE:
        return Topology.TLS_REMOTE
    raise JobRefused(
        f"a tls13 job runs in operations, loopback, remote or load mode, over no link or the packet path (this one: "
        f"{job.mode}" + ("" if job.link is None else f", {job.link.emulation}") + ")"
    )


# --- the layouts -----------------------------------------------------------------------------


def start_operations(starter: Starter, job: ResolvedJob) -> bool:
    """One worker measures both ends of the scheme in one process."""
    starter.start_child(Role.WORKER, child_main, JobPlan(job, starter.base))
    return True


def start_loopback(starter: Starter, job: ResolvedJob) -> bool:
    """A receiver that reports the port it bound, then a sender that connects to it."""
    token = secrets.token_bytes(TOKEN_BYTES)
    # Tickets mark the job's own connections on its local ports (app.core.transport.doorway).
    ticket = secrets.token_bytes(TICKET_BYTES)
    starter.start_child(Role.RECEIVER, receiver_main, ReceiverPlan(token, _receiver_limits(job), ticket=ticket))
    port = starter.wait_for_port(Role.RECEIVER)
    if port is None:
        return False
    _start_sender(starter, port, token, ticket)
    return True


def start_loopback_over_relay(starter: Starter, job: ResolvedJob) -> bool:
    """A loopback over the stream relay: receiver, then the link process in front of it,
    then the sender, which connects to the link."""
    assert job.link is not None
    _refuse_unemulable_link(job)
    token = secrets.token_bytes(TOKEN_BYTES)
    receiver_ticket = secrets.token_bytes(TICKET_BYTES)
    plan = ReceiverPlan(token, _receiver_limits(job), ticket=receiver_ticket)
    starter.start_child(Role.RECEIVER, receiver_main, plan)
    port = starter.wait_for_port(Role.RECEIVER)
    if port is None:
        return False
    # The sender talks to the link, the link to the receiver; neither end knows.
    ticket = secrets.token_bytes(TICKET_BYTES)
    link_plan = LinkPlan(
        job.link, port, seed=job.link.draw_seed(job.index), ticket=ticket, upstream_admission=admission(receiver_ticket)
    )
    starter.start_child(Role.LINK, link_main, link_plan)
    port = starter.wait_for_port(Role.LINK)
    if port is None:
        return False
    _start_sender(starter, port, token, ticket)
    return True


def start_loopback_over_packet_path(starter: Starter, job: ResolvedJob) -> bool:
    """A loopback over the packet path: the link first (it makes the network namespaces
    both ends enter), then the receiver in its namespace, then the sender in the other."""
    assert job.link is not None
    _refuse_unemulable_link(job)
    token = secrets.token_bytes(TOKEN_BYTES)
    limits = _receiver_limits(job)
    ready = starter.start_packet_path(job)
    if ready is None:
        return False
    plan = ReceiverPlan(
        token,
        limits,
        bind=ready.receiver_address,
        namespace=ready.receiver_namespace,
        congestion_control=job.link.congestion_control,
        fresh_connections=job.link.connection == TcpConnection.FRESH,
    )
    starter.start_child(Role.RECEIVER, receiver_main, plan)
    port = starter.wait_for_port(Role.RECEIVER)
    if port is None:
        return False
    session = starter.session_plan(
        ready.receiver_address, port, token, ready.sender_namespace, job.link.congestion_control
    )
    starter.start_child(Role.SENDER, sender_main, session)
    return True


def start_local_load(starter: Starter, job: ResolvedJob) -> bool:
    """A load server here, then the generator that drives every client connection to it."""
    return _start_load(starter, job, LOCALHOST, load_generator_main)


def start_load_over_a_link(starter: Starter, job: ResolvedJob) -> bool:
    """A load server, one link process in front of it that every client crosses, then
    the generator."""
    _refuse_unemulable_link(job)
    return _start_load(starter, job, LOCALHOST, load_generator_main)


def start_load_over_packet_path(starter: Starter, job: ResolvedJob) -> bool:
    """The packet link first (its namespaces), the load server listening in the receiver's,
    then the generator in the sender's: every client connection (every handshake's, for a
    tls13 job) crosses the emulated path through the kernel's TCP, sharing its queue."""
    assert job.link is not None and job.load is not None
    _refuse_unemulable_link(job)
    ready = starter.start_packet_path(job)
    if ready is None:
        return False
    token = secrets.token_bytes(TOKEN_BYTES)
    server = replace(
        _load_server_plan(job, token, ready.receiver_address),
        namespace=ready.receiver_namespace,
        congestion_control=job.link.congestion_control,
    )
    starter.start_child(Role.RECEIVER, load_server_main, server)
    port = starter.wait_for_port(Role.RECEIVER)
    if port is None:
        return False
    generator = starter.session_plan(
        ready.receiver_address,
        port,
        token,
        ready.sender_namespace,
        job.link.congestion_control,
        admission=admission(server.ticket),
    )
    starter.start_child(Role.SENDER, load_generator_main, generator)
    return True


def start_cluster_load(starter: Starter, job: ResolvedJob) -> bool:
    """A load server on an address the Dask workers reach (through a link, if the job has
    one), then the generator that places the clients on the workers."""
    assert job.load is not None and job.load.cluster is not None
    if job.link is not None:
        _refuse_unemulable_link(job)
    missing = cluster_missing()
    if missing is not None:
        raise JobRefused(missing)
    try:
        bind = server_address_for(job.load.cluster)
    except OSError as exc:
        raise JobRefused(f"no route from this machine to the Dask scheduler at {job.load.cluster}: {exc}") from None
    return _start_load(starter, job, bind, cluster_generator_main, accept_timeout=PLACING_BOUND_S)


def start_remote_load(starter: Starter, job: ResolvedJob) -> bool:
    """The server runs where `cryptobench serve` runs; the job's one process asks it for one."""
    assert job.load is not None and starter.remote is not None
    if job.link is not None:
        _refuse_unemulable_link(job)
        raise JobRefused(REMOTE_LOAD_LINK.format(job=job.index + 1))
    if job.load.cluster is not None:
        missing = cluster_missing()
        if missing is not None:
            raise JobRefused(missing)
    serve = starter.remote
    starter.start_child(Role.SENDER, remote_load_main, starter.session_plan(serve.host, serve.port, serve.token))
    return True


def start_remote(starter: Starter, job: ResolvedJob) -> bool:
    """A sender only, against the receiver `cryptobench serve` starts."""
    remote = starter.remote
    if remote is None:  # resolve_jobs refuses this; kept as a clear error
        starter.child_error = "mode remote needs a server: run with --remote HOST:PORT --token-file FILE"
        return False
    starter.start_child(Role.SENDER, sender_main, starter.session_plan(remote.host, remote.port, remote.token))
    return True


def start_tls_operations(starter: Starter, job: ResolvedJob) -> bool:
    """One worker runs both ends of the TLS handshakes over memory BIOs (app.core.tls.ops)."""
    starter.start_child(Role.WORKER, tls_operations_main, JobPlan(job, starter.base))
    return True


def start_tls_loopback(starter: Starter, job: ResolvedJob) -> bool:
    """The TLS server, which reports its port, then the client: its control connection
    presents the job's ticket, its TLS connections the job's ALPN id (app.core.tls.admission)."""
    token = secrets.token_bytes(TOKEN_BYTES)
    ticket = secrets.token_bytes(TICKET_BYTES)
    starter.start_child(Role.RECEIVER, tls_server_main, tls_server_plan(job, token, ticket=ticket))
    port = starter.wait_for_port(Role.RECEIVER)
    if port is None:
        return False
    starter.start_child(
        Role.SENDER, tls_client_main, starter.session_plan(LOCALHOST, port, token, admission=admission(ticket))
    )
    return True


def start_tls_over_packet_path(starter: Starter, job: ResolvedJob) -> bool:
    """The packet link first (its namespaces), the TLS server in the receiver's, then the
    client in the sender's: the kernel's TCP carries every handshake over the emulated path."""
    assert job.link is not None
    _refuse_unemulable_link(job)
    ready = starter.start_packet_path(job)
    if ready is None:
        return False
    token = secrets.token_bytes(TOKEN_BYTES)
    plan = tls_server_plan(
        job,
        token,
        bind=ready.receiver_address,
        namespace=ready.receiver_namespace,
        congestion_control=job.link.congestion_control,
    )
    starter.start_child(Role.RECEIVER, tls_server_main, plan)
    port = starter.wait_for_port(Role.RECEIVER)
    if port is None:
        return False
    session = starter.session_plan(
        ready.receiver_address, port, token, ready.sender_namespace, job.link.congestion_control
    )
    starter.start_child(Role.SENDER, tls_client_main, session)
    return True


def start_tls_remote(starter: Starter, job: ResolvedJob) -> bool:
    """The client only: its control connection asks `cryptobench serve` for the job's TLS
    server (app.core.load.remote), then runs the handshakes against it."""
    remote = starter.remote
    if remote is None:  # resolve_jobs refuses this; kept as a clear error
        starter.child_error = "mode remote needs a server: run with --remote HOST:PORT --token-file FILE"
        return False
    starter.start_child(Role.SENDER, remote_tls_main, starter.session_plan(remote.host, remote.port, remote.token))
    return True


def tls_server_plan(
    job: ResolvedJob,
    token: bytes,
    *,
    ticket: bytes = b"",
    bind: str = LOCALHOST,
    namespace: str | None = None,
    congestion_control: str | None = None,
) -> TlsServerPlan:
    """The TLS server's plan, its waits stretched over the job's link: a handshake's flights
    and the largest request and response cross it once more, and on a lossy link each may
    wait out TCP's retransmissions (`loss_seconds`)."""
    plan = TlsServerPlan(token, ticket, bind, namespace, congestion_control)
    if job.link is None:
        return plan
    flights = exchange_seconds(job.link, MAX_HANDSHAKE_BYTES, MAX_HANDSHAKE_BYTES) + loss_seconds(job.link)
    data = exchange_seconds(job.link, largest_frame(job.message_sizes), largest_frame(job.message_sizes))
    return replace(plan, hello_timeout=plan.hello_timeout + 2 * flights, timeout=plan.timeout + flights + data)


#: Every layout's start function, chosen by `topology_of`.
TOPOLOGIES: dict[Topology, StartTopology] = {
    Topology.OPERATIONS: start_operations,
    Topology.LOOPBACK: start_loopback,
    Topology.RELAY: start_loopback_over_relay,
    Topology.PACKET_PATH: start_loopback_over_packet_path,
    Topology.LOCAL_LOAD: start_local_load,
    Topology.LOAD_OVER_A_LINK: start_load_over_a_link,
    Topology.LOAD_OVER_PACKET_PATH: start_load_over_packet_path,
    Topology.CLUSTER: start_cluster_load,
    Topology.REMOTE_LOAD: start_remote_load,
    Topology.REMOTE: start_remote,
    Topology.TLS_OPERATIONS: start_tls_operations,
    Topology.TLS_LOOPBACK: start_tls_loopback,
    Topology.TLS_PACKET_PATH: start_tls_over_packet_path,
    Topology.TLS_REMOTE: start_tls_remote,
}


# --- what the layouts share ------------------------------------------------------------------


def _refuse_unemulable_link(job: ResolvedJob) -> None:
    """Refuse a job whose link this machine cannot emulate, before any process starts."""
    assert job.link is not None
    try:
        if job.link.emulation == LinkEmulation.PACKET and job.mode in (Mode.LOOPBACK, Mode.LOAD):
            check_packet_link(job.link)
        else:
            check_link(job.link)
    except LinkError as exc:
        raise JobRefused(str(exc)) from None


def _receiver_limits(job: ResolvedJob) -> ReceiverLimits:
    """A loopback receiver's waits: the defaults, stretched over the job's link if it has one."""
    limits = ReceiverLimits()
    return limits if job.link is None else limits_over_link(limits, job.link)


def _start_sender(starter: Starter, port: int, token: bytes, ticket: bytes) -> None:
    """The sender of a loopback, to the local port of its receiver or of the link before it."""
    starter.start_child(
        Role.SENDER, sender_main, starter.session_plan(LOCALHOST, port, token, admission=admission(ticket))
    )


def _start_load(
    starter: Starter, job: ResolvedJob, bind: str, generator: Generator, accept_timeout: float | None = None
) -> bool:
    """A load job's server at `bind` (waiting `accept_timeout` for its first client, else
    the server's own default), the shared link in front of it if the job has one, then its
    generator; False when the server or the link did not come up."""
    assert job.load is not None
    token = secrets.token_bytes(TOKEN_BYTES)
    server = _load_server_plan(job, token, bind)
    if accept_timeout is not None:
        server = replace(server, accept_timeout=accept_timeout)
    ticket = server.ticket
    starter.start_child(Role.RECEIVER, load_server_main, server)
    port = starter.wait_for_port(Role.RECEIVER)
    if port is not None and job.link is not None:
        # Every client through one link process, one bottleneck they all share.
        server_ticket, ticket = ticket, secrets.token_bytes(TICKET_BYTES)
        link_plan = LinkPlan(
            job.link,
            port,
            seed=job.link.draw_seed(job.index),
            ticket=ticket,
            clients=job.load.clients,
            upstream_admission=admission(server_ticket),
        )
        starter.start_child(Role.LINK, shared_link_main, link_plan)
        port = starter.wait_for_port(Role.LINK)
    if port is None:
        return False
    starter.start_child(Role.SENDER, generator, starter.session_plan(bind, port, token, admission=admission(ticket)))
    return True


def _load_server_plan(job: ResolvedJob, token: bytes, bind: str) -> LoadServerPlan:
    """A load job's server at `bind`, with a fresh admission ticket for its control connections."""
    assert job.load is not None
    return LoadServerPlan(
        token,
        job.scheme,
        job.backend,
        dict(job.params),
        tuple(job.message_sizes),
        workers=job.load.server_workers,
        ticket=secrets.token_bytes(TICKET_BYTES),
        bind=bind,
        exchange=job.exchange,
    )

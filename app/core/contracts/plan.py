"""What the runner hands a measuring child process: one plan type for every mode.

A plan is the profile job as the profile layer resolved it (`ResolvedJob`), the result
index its events start at, and, for a session, the receiver the sender talks to. The
child gets everything up front and asks nothing afterwards; it answers over its pipe
with the messages of app.core.contracts.events. A plan is pickled once per job, so it stays small:
no samples, no results, only the job's settings.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.settings.profile import ResolvedJob


@dataclass(frozen=True)
class SessionPeer:
    """The receiver a session sender talks to: where it listens, the token it expects,
    and how long the sender waits for it."""

    host: str
    port: int
    token: bytes = field(repr=False)
    #: Connecting and the token handshake: a CryptoBench receiver answers at once.
    connect_timeout: float = 10.0
    #: Longest wait for one acknowledgement: a chunked ElGamal-4096 open of a large
    #: message takes minutes; cancel, not this timeout, is the user's way out.
    reply_timeout: float = 600.0
    #: Longest wait for a busy `serve` (queued behind other clients' jobs, or told to
    #: retry) before the job fails; cancel ends it sooner.
    queue_timeout: float = 1800.0
    #: A packet link's sender end (app.core.transport.netns): the network namespace the sender
    #: enters before it connects. None: the sender's own namespace.
    namespace: str | None = None
    #: The congestion control the sender's socket uses (TCP_CONGESTION); None: the default.
    congestion_control: str | None = None
    #: Sent first on every connection, before the token handshake, where the port is a
    #: link's (app.core.transport.doorway's admission): the link relays nothing until it
    #: has it. Empty: the port is the receiver's own.
    admission: bytes = field(default=b"", repr=False)

    @property
    def address(self) -> str:
        """host:port, as messages name the receiver."""
        return f"{self.host}:{self.port}"


@dataclass(frozen=True)
class JobPlan:
    """One profile job, as a measuring child (operations worker or session sender) runs it."""

    job: ResolvedJob
    #: The result index of the job's first message size: the index its events carry.
    first_index: int
    #: The receiver, for a session (loopback or remote); None for an operations job.
    peer: SessionPeer | None = None
    #: Over the packet path: how many packets its emulator has released (or read) later
    #: than the size's limit so far, a shared double the link process counts up
    #: (multiprocessing RawValue). The sender reads it around each timed exchange, so a
    #: sample whose packets crossed a late stretch of the emulator is known. None: no such link.
    late_packets: Any = field(default=None, repr=False, compare=False)

    def session_peer(self) -> SessionPeer:
        """The receiver of a session plan; ValueError for a plan without one."""
        if self.peer is None:
            raise ValueError(f"job {self.job.label!r} has no receiver to talk to (mode {self.job.mode})")
        return self.peer

"""The closed vocabularies of profiles, results and run events, defined once.

Each is a `StrEnum`: a member *is* its JSON value (`JobStatus.OK == "ok"`,
`json.dumps(Mode.LOOPBACK) == '"loopback"'`), so profiles and results files keep the
strings they always had, while code names the member and a type checker catches a
misspelt one. Scheme families (`Family`) are here too, beside the schemes' parameter
values (`ParamValue`): every scheme declares them, and the profile, result and store
records below the schemes name them.
"""

from __future__ import annotations

import enum
from typing import TypeAlias


class Mode(enum.StrEnum):
    """How a job is measured: in one process, or as a sender/receiver session over TCP."""

    OPERATIONS = "operations"
    LOOPBACK = "loopback"
    REMOTE = "remote"
    #: Many client connections driven open-loop at a server on loopback (app.core.load):
    #: handshakes (or signed messages) per second and the latency clients see.
    LOAD = "load"

    @property
    def is_session(self) -> bool:
        """One sender and one receiver timing each message on a TCP connection (loopback
        or remote). A load job has a server and clients too, but measures requests per
        second and latency under load, not one message's costs: not a session."""
        return self in (Mode.LOOPBACK, Mode.REMOTE)

    # `label`, not `title`: a property named like a str method would shadow it (str.title()).
    @property
    def label(self) -> str:
        """The mode's name where one is chosen (the job settings' Mode box)."""
        return _MODE_LABELS[self]

    @property
    def short(self) -> str:
        """A column-width name ("ops")."""
        return _MODE_SHORT[self]


_MODE_LABELS = {
    Mode.OPERATIONS: "Operations (no network)",
    Mode.LOOPBACK: "Loopback client/server",
    # "server": the GUI's remote fields (host, port, token file) are those of `cryptobench serve`.
    Mode.REMOTE: "Remote server",
    Mode.LOAD: "Load: many clients, one server",
}
_MODE_SHORT = {Mode.OPERATIONS: "ops", Mode.LOOPBACK: "loopback", Mode.REMOTE: "remote", Mode.LOAD: "load"}
#: The modes with a sender and a receiver process on TCP.
SESSION_MODES: frozenset[Mode] = frozenset(mode for mode in Mode if mode.is_session)


class JobStatus(enum.StrEnum):
    """How one job (one scheme at one message size) ended."""

    OK = "ok"
    FAILED = "failed"
    CANCELLED = "cancelled"


class RunStatus(enum.StrEnum):
    """Where a run is: still running, or how it ended (interrupted: the app died mid-run)."""

    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"


class Role(enum.StrEnum):
    """The child processes of a job, as named in results (`cpu`, `memory`) and events."""

    #: Operations mode: the one process that times the operations.
    WORKER = "worker"
    #: Sessions: the client that seals and sends, and times the round trips.
    SENDER = "sender"
    #: Sessions: the server that opens and acknowledges.
    RECEIVER = "receiver"
    #: Loopback over an emulated link: the delay line between sender and receiver.
    LINK = "link"


class LogLevel(enum.StrEnum):
    """How much a log line matters, least first (the GUI's log view filters by this order)."""

    DEBUG = "debug"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


#: The process whose timings are the job's figures, by mode: the operations worker, or
#: the session's sender (the receiver's own timings are its own metrics).
#: In a load job the sender is the load generator (all client connections in one process).
MEASURING_ROLE = {
    Mode.OPERATIONS: Role.WORKER,
    Mode.LOOPBACK: Role.SENDER,
    Mode.REMOTE: Role.SENDER,
    Mode.LOAD: Role.SENDER,
}


def measuring_role(mode: str) -> Role:
    return MEASURING_ROLE[Mode(mode)]


class ExportFormat(enum.StrEnum):
    """What a run can be written as (`app.report.exporters` has one exporter per format);
    the value is also the CLI's option name (`--json FILE`)."""

    JSON = "json"
    CSV = "csv"
    MARKDOWN = "markdown"
    PDF = "pdf"


class PageSize(enum.StrEnum):
    """The PDF report's paper."""

    A4 = "A4"
    LETTER = "Letter"


class LinkEmulation(enum.StrEnum):
    """How a session's link was emulated (`job_conditions.Link.emulation`)."""

    #: Plain loopback: no link between sender and receiver.
    NONE = "none"
    #: The stream relay (app.core.link.relay): the sender's bytes relayed through a delay line
    #: per direction (serialization at the rate, then the delay); no TCP dynamics on the path.
    DELAY_LINE = "delay-line"
    #: The packet path (app.core.link.packet_link): sender and receiver in network
    #: namespaces of their own, their IP packets forwarded through a queue, the rate, the
    #: delay and loss; the kernel's own TCP between them.
    PACKET = "packet"
    #: The kernel's sch_netem in a private network namespace (packet level; loss too).
    NETEM = "netem"


class LinkEmulationChoice(enum.StrEnum):
    """Which emulation a job asks of its link (`JobSpec.link_emulation`)."""

    #: The stream relay: runs anywhere; no TCP dynamics on the path and no loss.
    STREAM_RELAY = "stream-relay"
    #: The packet path: the kernel's TCP over emulated packets, loss included; refused where
    #: the machine cannot make network namespaces (app.core.transport.netns says why).
    PACKET = "packet"
    #: The packet path where the machine allows it, else the stream relay (labelled so).
    AUTO = "auto"


class CongestionControl(enum.StrEnum):
    """A TCP congestion control a packet-path job may set (Linux's names)."""

    CUBIC = "cubic"
    BBR = "bbr"
    RENO = "reno"


class TcpConnection(enum.StrEnum):
    """Which TCP connection a packet-path job's messages travel on (`JobSpec.tcp_connection`)."""

    #: The session's one connection, warmed by the handshakes and the messages before: the
    #: congestion window has grown past what one message needs (the default).
    WARM = "warm"
    #: A new connection for every timed message (and floor ping-pong): what first contact
    #: pays, slow start from the initial window (10 segments, 14,480 bytes) included. The
    #: connection's own set-up (SYN to SYN-ACK) is timed apart, as "connect".
    FRESH = "fresh"


#: What a loopback link job runs with when its profile names no emulation (docs/links.md):
#: the packet path, refused where the machine cannot make it unless the job allows the
#: stream relay ("auto").
DEFAULT_LINK_EMULATION = LinkEmulationChoice.PACKET


class PlacementPolicy(enum.StrEnum):
    """Which CPUs a job's processes may run on (`JobSpec.placement`, `job_conditions.Placement`)."""

    #: Every process of the job pinned to one CPU (they take turns: right for a ping-pong).
    SAME = "same"
    #: Sender and receiver pinned to different CPUs (different cores where there are any);
    #: the link process, if any, with the receiver.
    SPLIT = "split"
    #: No pinning: the scheduler decides, and may move a process between CPUs at any time.
    FREE = "free"

    @property
    def label(self) -> str:
        """The policy's name where one is chosen (the job settings' box)."""
        return _PLACEMENT_LABELS[self]


_PLACEMENT_LABELS = {
    PlacementPolicy.SAME: "Same CPU (pinned)",
    PlacementPolicy.SPLIT: "Split across CPUs",
    PlacementPolicy.FREE: "Free (scheduler decides)",
}
#: What a job runs with when its profile names no placement (docs/placement.md).
DEFAULT_PLACEMENT = PlacementPolicy.SAME


def default_placement(mode: str) -> PlacementPolicy:
    """The placement a job in `mode` runs with when its profile names none: a load job's
    server and clients on different CPUs (on one, the clients' work would be counted
    against the server's capacity), every other job's `DEFAULT_PLACEMENT`."""
    return PlacementPolicy.SPLIT if mode == Mode.LOAD else DEFAULT_PLACEMENT


class StabilityCode(enum.StrEnum):
    """What the pre-flight check (`app.core.machine.preflight`) looks at: each machine setting or
    condition that makes timings unstable."""

    GOVERNOR = "governor"
    TURBO = "turbo"
    SMT = "smt"
    VIRTUALIZATION = "virtualization"
    STEAL = "steal"
    OTHER_LOAD = "other-load"
    LOAD_AVERAGE = "load-average"


class StabilityStatus(enum.StrEnum):
    """One pre-flight fact's verdict: fine, a reason to distrust timings, or not readable here."""

    OK = "ok"
    FINDING = "finding"
    UNKNOWN = "unknown"


class Verdict(enum.StrEnum):
    """What one metric of a matched job did between two runs (`app.core.analysis.compare`, the
    report's baseline comparison and the window's Compare dialog): time metrics, so
    higher is slower."""

    #: The 95 % interval of the ratio of medians (new / base) lies entirely below 1.
    FASTER = "faster"
    #: The interval lies entirely above 1.
    SLOWER = "slower"
    #: The interval contains 1: no difference these samples can show.
    WITHIN_NOISE = "within noise"
    #: A ratio perhaps, but not the evidence for a verdict (app.core.analysis.evidence): too
    #: few samples a side, a reduced run, or one run a side with no measured movement.
    NO_VERDICT = "no verdict"
    #: No ratio: a side failed, has no samples of the metric, or its units differ.
    NOT_COMPARABLE = "not comparable"


#: A scheme parameter's value in a profile, a result and the registry (a key size, a curve).
ParamValue: TypeAlias = int | str | bool


class Family(enum.StrEnum):
    """Scheme families; the value is the stable id used in profiles and results.

    The members are in the order reports present the families.
    """

    AEAD = "aead"
    KEY_AGREEMENT = "key-agreement"
    PUBLIC_KEY_ENCRYPTION = "public-key-encryption"
    HYBRID = "hybrid"
    SIGNATURE = "signature"
    HASH = "hash"
    KDF = "kdf"
    #: TLS 1.3 handshakes as deployed (app.core.tls): a key-exchange group and a certificate
    #: chain, run by OpenSSL through pyOpenSSL; its job bodies are TLS's own, not a session's.
    TLS = "tls"

    # `label`, not `title`: a property named like a str method would shadow it (str.title()).
    @property
    def label(self) -> str:
        """The family's name: the report's section titles, chart legends and tables."""
        return _FAMILY_LABELS[self]

    @property
    def long_label(self) -> str:
        """The label plus what else each job of the family runs ("Key agreement + AEAD"):
        for the scheme tree and a job's tooltip, where a reader picks or inspects one job."""
        return f"{self.label} + AEAD" if self in (Family.KEY_AGREEMENT, Family.HYBRID) else self.label


_FAMILY_LABELS = {
    Family.AEAD: "Authenticated encryption (AEAD)",
    Family.KEY_AGREEMENT: "Key agreement",
    Family.PUBLIC_KEY_ENCRYPTION: "Public-key encryption",
    Family.HYBRID: "Hybrid / KEM",
    Family.SIGNATURE: "Signatures",
    Family.HASH: "Hashes",
    Family.KDF: "Key derivation",
    Family.TLS: "TLS 1.3",
}


class Exchange(enum.StrEnum):
    """How a key-establishing job (`KEY_ESTABLISHING`) establishes its AEAD keys
    (`JobSpec.exchange`, the result's `exchange`; docs/profiles.md).

    The same two words in every face: the profile, the results JSON and CSV, the labels,
    the report, the window and `compare`, which pairs only jobs of one pattern."""

    #: One key agreement or encapsulation per session (the handshake), then AEAD per
    #: message under that key: what TLS does, and E1's ECDH + AES-GCM. The default.
    SESSION = "session"
    #: A fresh encapsulation or ephemeral key for every message (KEM-DEM, ECIES-style
    #: public-key encryption): each payload carries its own encapsulated key, as E4 measures.
    PER_MESSAGE = "per-message"

    @property
    def suffix(self) -> str:
        """What a job's label ends with: " (session)", " (per-message)"."""
        return f" ({self.value})"


#: The families that establish a key before their AEAD: only their jobs have an exchange
#: pattern. Elsewhere `exchange` is not applicable: a profile that sets it is refused,
#: naming the field, and results leave it out.
KEY_ESTABLISHING: frozenset[Family] = frozenset({Family.KEY_AGREEMENT, Family.HYBRID})
DEFAULT_EXCHANGE = Exchange.SESSION
#: What each family's jobs did before jobs named their pattern (results without
#: `exchange`, profiles of format 1): key agreement agreed once per session (its
#: operations jobs timed the agreement apart, as `exchange`), a hybrid encapsulated in
#: every message, in every mode. Results read without the field mean this.
LEGACY_EXCHANGE: dict[Family, Exchange] = {
    Family.KEY_AGREEMENT: Exchange.SESSION,
    Family.HYBRID: Exchange.PER_MESSAGE,
}

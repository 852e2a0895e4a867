"""How long a session's waits become over an emulated link.

The sender's and receiver's timeouts are written for loopback and LANs, where a reply
comes within milliseconds and their seconds-long margins are about a slow scheme, not
the wire. Over a link a request waits for its bytes to serialize and to cross the delay
twice: a 1 MiB message over a 50 kbit/s sensor radio takes 168 s before the receiver
has it. Each wait therefore grows by what the link itself can take for the exchange it
covers, computed from the link and the job's message sizes (never a fixed guess), and
keeps its own margin on top.
"""

from __future__ import annotations

from dataclasses import replace

from app.core.contracts.plan import SessionPeer
from app.core.records.job_conditions import Link
from app.core.session.receiver import ReceiverLimits
from app.core.transport.wire import HEADER_SIZE, MAX_CONTROL_FRAME


def one_way_seconds(link: Link, nbytes: int, rate_kbit: float | None) -> float:
    """The longest `nbytes` take across one direction of `link` at `rate_kbit`
    (None: unlimited): serialization, then the delay at its jitter's worst."""
    serialization = 8 * nbytes / (rate_kbit * 1000) if rate_kbit else 0.0
    return serialization + (link.delay_ms + link.jitter_ms) / 1000


def exchange_seconds(link: Link, up_bytes: int, down_bytes: int) -> float:
    """The longest a request of `up_bytes` (sender -> receiver) and its reply of
    `down_bytes` spend on `link`."""
    return one_way_seconds(link, up_bytes, link.rate_kbit_up) + one_way_seconds(link, down_bytes, link.rate_kbit_down)


def largest_frame(message_sizes: list[int]) -> int:
    """An upper bound on a job's largest frame: twice its largest message (the most
    verbose scheme, a chunked public-key one, doubles a message) plus room for a
    control frame's worth of fixed overhead."""
    return HEADER_SIZE + 2 * max(message_sizes, default=0) + MAX_CONTROL_FRAME


def peer_over_link(peer: SessionPeer, link: Link, message_sizes: list[int]) -> SessionPeer:
    """The sender's waits over `link`: each handshake step (control frames both ways)
    and each acknowledgement (the largest frame up, a control frame down) may take
    what the link adds to it, on top of the loopback timeouts."""
    control = exchange_seconds(link, MAX_CONTROL_FRAME, MAX_CONTROL_FRAME)
    reply = exchange_seconds(link, largest_frame(message_sizes), MAX_CONTROL_FRAME)
    return replace(peer, connect_timeout=peer.connect_timeout + control, reply_timeout=peer.reply_timeout + reply)


def limits_over_link(limits: ReceiverLimits, link: Link) -> ReceiverLimits:
    """The receiver's waits over `link`. The hello timeout covers the token handshake
    and the JOB (two exchanges of control frames); the idle timeout, between frames,
    one exchange more (its reply going down, the next frame's first bytes coming up);
    and a body may arrive at half the link's up rate (the slowest a peer may send
    before it counts as stalled), never faster than loopback's floor demands."""
    control = exchange_seconds(link, MAX_CONTROL_FRAME, MAX_CONTROL_FRAME)
    min_rate = limits.min_rate
    if link.rate_kbit_up is not None:
        min_rate = min(min_rate, link.rate_kbit_up * 1000 / 8 / 2)
    return replace(
        limits,
        hello_timeout=limits.hello_timeout + 2 * control,
        idle_timeout=limits.idle_timeout + control,
        min_rate=min_rate,
    )

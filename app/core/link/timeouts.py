"""How long a session's waits become over an emulated link.

The sender's and receiver's timeouts are written for loopback and LANs, where a reply
comes within milliseconds and their seconds-long margins are about a slow scheme, not
the wire. Over a link a request waits for its bytes to serialize and to cross the delay
twice: a 1 MiB message over a 50 kbit/s sensor radio takes 168 s before the receiver
has it. Each wait therefore grows by what the link itself can take for the exchange it
covers, computed from the link and the job's message sizes (never a fixed guess), and
keeps its own margin on top.

A link that loses packets adds TCP's own waits: a lost segment is sent again only when
its retransmission timer expires, and each expiry doubles the next (`loss_seconds`). At
20 % loss each way a ClientHello lost three times in a row after a lost SYN arrives after
21 s (3, 6 and 12 s); Paquin, Stebila and Tamvada's handshakes at that loss took up to
several seconds at the 95th percentile (docs/reference-experiments.md, E5), so a
loopback-sized wait of 10 s failed such a job where its kernel was still retrying.
"""

from __future__ import annotations

import math
from dataclasses import replace

from app.core.contracts.plan import SessionPeer
from app.core.records.job_conditions import Link
from app.core.session.receiver import ReceiverLimits
from app.core.transport.wire import HEADER_SIZE, MAX_CONTROL_FRAME

#: TCP's retransmission timeout once a SYN or SYN-ACK was lost (RFC 6298 §5.7: 3 s), the
#: longest any first retransmission waits; each expiry doubles it, up to Linux's TCP_RTO_MAX.
FIRST_RTO_S = 3.0
RTO_MAX_S = 120.0
#: Linux gives up on a connection after tcp_retries2 (15 by default) retransmissions.
RETRIES_MAX = 15
#: The chance, per segment, that every retransmission `loss_seconds` covers was lost too.
GIVE_UP_CHANCE = 1e-4


def loss_seconds(link: Link) -> float:
    """How long TCP may spend getting one segment and its acknowledgement across a lossy
    `link`: the retransmission timeouts (from FIRST_RTO_S, doubling, each at most
    RTO_MAX_S) of as many tries as it takes for all of them failing to be less likely than
    GIVE_UP_CHANCE, at most RETRIES_MAX. 0 on a link that loses nothing. A try fails when the
    segment or its acknowledgement is lost; under bursty loss, when the bad spell it falls
    in goes on (at worst every packet of a bad spell is lost)."""
    lost = link.loss_percent / 100
    fails = 1 - (1 - lost) ** 2
    if link.burst_loss is not None:
        fails = max(fails, 1 - link.burst_loss.r_percent / 100)
    if fails <= 0:
        return 0.0
    tries = RETRIES_MAX if fails >= 1 else min(RETRIES_MAX, math.ceil(math.log(GIVE_UP_CHANCE) / math.log(fails)))
    return float(sum(min(FIRST_RTO_S * 2.0**k, RTO_MAX_S) for k in range(tries)))


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
    control = exchange_seconds(link, MAX_CONTROL_FRAME, MAX_CONTROL_FRAME) + loss_seconds(link)
    reply = exchange_seconds(link, largest_frame(message_sizes), MAX_CONTROL_FRAME) + loss_seconds(link)
    return replace(peer, connect_timeout=peer.connect_timeout + control, reply_timeout=peer.reply_timeout + reply)


def limits_over_link(limits: ReceiverLimits, link: Link) -> ReceiverLimits:
    """The receiver's waits over `link`. The hello timeout covers the token handshake
    and the JOB (two exchanges of control frames); the idle timeout, between frames,
    one exchange more (its reply going down, the next frame's first bytes coming up);
    and a body may arrive at half the link's up rate (the slowest a peer may send
    before it counts as stalled), never faster than loopback's floor demands."""
    control = exchange_seconds(link, MAX_CONTROL_FRAME, MAX_CONTROL_FRAME) + loss_seconds(link)
    min_rate = limits.min_rate
    if link.rate_kbit_up is not None:
        min_rate = min(min_rate, link.rate_kbit_up * 1000 / 8 / 2)
    return replace(
        limits,
        hello_timeout=limits.hello_timeout + 2 * control,
        idle_timeout=limits.idle_timeout + control,
        min_rate=min_rate,
    )

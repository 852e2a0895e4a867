"""What makes two jobs of different runs the same measurement (`match_key`).

Compare, the trend and the reports pair jobs by it (moved here from analysis/compare.py,
which still offers it, so that the floors below analysis can use it too).
"""

from __future__ import annotations

import json

from app.core.results.model import JobResult
from app.core.vocab import LEGACY_EXCHANGE, Family

__all__ = ["MatchKey", "match_key"]

#: scheme, backend, params (canonical JSON), mode, message size, link figures, placement
#: policy, exchange pattern (`exchange_part`).
MatchKey = tuple[str, str, str, str, int, tuple[str | float | None, ...] | None, str | None, str | None]


def match_key(job: JobResult, *, link: bool = True) -> MatchKey:
    """What makes two jobs of different runs the same measurement.

    The link is its preset name with every figure and how it was emulated (a custom link
    with other figures is another measurement); the placement is the policy asked for,
    None for results from before placement was recorded (which ran unpinned); the exchange
    pattern is `exchange_part`'s: a session's handshake and per-message costs are other
    work than a per-message job's.
    `link=False` leaves the link out (None): the key of a link sweep's jobs.
    """
    link_id = None
    if link and job.link is not None:
        link_id = (
            job.link.name,
            job.link.delay_ms,
            job.link.jitter_ms,
            job.link.rate_kbit_up,
            job.link.rate_kbit_down,
            job.link.loss_percent,
            job.link.emulation,
            job.link.congestion_control,
            job.link.slow_start_after_idle,
            job.link.connection,
        )
    placement = job.placement.policy if job.placement is not None else None
    return (
        job.scheme,
        job.backend,
        json.dumps(job.params, sort_keys=True, default=str),
        job.mode,
        job.message_size,
        link_id,
        placement,
        exchange_part(job),
    )


def exchange_part(job: JobResult) -> str | None:
    """The exchange pattern the job measured (`JobResult.exchange_used`) where it is not the
    one its family's jobs measured before jobs named it, else None (and None without key
    establishment). One scheme has one family, so jobs of one scheme still pair only within
    a pattern; and a job of that earlier pattern keys as it did then, so the identities a
    store kept before (`store.columns.identity_text`) still find it."""
    used = job.exchange_used
    try:
        earlier = LEGACY_EXCHANGE.get(Family(job.family))
    except ValueError:
        earlier = None
    return None if used is None or used == earlier else str(used)

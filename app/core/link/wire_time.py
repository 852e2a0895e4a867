"""How long a job's messages spend on its emulated link at the least, and the bounds past
which a job is refused before it runs.

A link's rate and delays set a floor under every exchange: the message serialized at the
upstream rate, its acknowledgement at the downstream one, and both one-way delays
(`presets.round_trip_ms`). A 10 MiB message over a 1 kbit/s link takes about 23 hours on
the wire: such a job used to be accepted and then run silently for days. The estimate here
is a lower bound (no handshakes, no loss, no retransmission, no slow start), so a job it
refuses cannot run in less time.
"""

from __future__ import annotations

from app.core.records.job_conditions import Link
from app.core.settings.links import numbers_text, round_trip_ms

#: One message over the link may take at most this long on the wire: longer, and a run
#: stops telling its user anything for more than ten minutes a sample (a progress bar that
#: does not move; a cancel that waits for the message in flight).
MAX_MESSAGE_WIRE_S = 600.0
#: A job's messages may take at most this long on the wire altogether (a day): more, and
#: the samples or the sizes are beyond what a run is for; fewer samples say as much.
MAX_JOB_WIRE_S = 24 * 3600.0
#: An acknowledgement's bytes (a session's reply frame, a load reply): small beside a message.
ACK_BYTES = 64


def duration_text(seconds: float) -> str:
    """ "45 s", "12 min", "23 h 18 min", "9 days"."""
    if seconds < 60:
        return f"{seconds:.3g} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    if seconds < 72 * 3600:
        whole = int(seconds // 60)
        return f"{whole // 60} h" + (f" {whole % 60:02d} min" if whole % 60 else "")
    return f"{seconds / 86400:,.0f} days"


def message_wire_s(link: Link, payload: int) -> float:
    """The least one exchange of a `payload`-byte message takes over `link` (seconds)."""
    return round_trip_ms(link, payload, ACK_BYTES) / 1000


def _size_text(size: int) -> str:
    """ "10,485,760-byte (10 MiB)", "512-byte"."""
    if size < 1024:
        return f"{size:,}-byte"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            return f"{size:,}-byte ({size / scale:.3g} {unit})"
    return f"{size:,}-byte"


def wire_time_problem(link: Link, sizes: list[int], exchanges: list[tuple[int, int]] | None) -> tuple[int, str] | None:
    """Why a job over `link` is refused, and the index of the size to blame; None if it may run.

    `exchanges`: per size, (message exchanges, payload-sized echoes) the job runs: a
    loopback session's warm-up, samples, tamper checks and its floor ping-pong (whose echo
    carries the payload back too). None for a load job, whose steps last their own
    duration (a request that cannot cross in time is counted, not waited for): only one
    message's bound applies.
    """
    total = 0.0
    for k, size in enumerate(sizes):
        one = message_wire_s(link, size)
        if one > MAX_MESSAGE_WIRE_S:
            return k, (
                f"a {_size_text(size)} message takes at least {duration_text(one)} over this link "
                f"({numbers_text(link)}): more than the {duration_text(MAX_MESSAGE_WIRE_S)} "
                "one message may take; use a smaller message or a faster link"
            )
        if exchanges is not None:
            messages, echoes = exchanges[k]
            total += messages * one + echoes * round_trip_ms(link, size, size) / 1000
            if total > MAX_JOB_WIRE_S:
                count = sum(m + e for m, e in exchanges[: k + 1])
                return k, (
                    f"the job's {count:,} exchanges of up to {size:,} bytes take at least {duration_text(total)} "
                    f"over this link ({numbers_text(link)}): more than the {duration_text(MAX_JOB_WIRE_S)} a job "
                    "may spend on the wire; use fewer samples, smaller messages or a faster link"
                )
    return None

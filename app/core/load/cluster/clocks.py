"""How far each worker's clock is from this machine's, measured when the generators are
placed and again around every step.

One measurement is a series of ping exchanges (app.core.load.merge `clock_offset`: the
exchange with the least round trip gives the offset, known to within half of it). On a
busy machine most round trips are long (measured on the 2-core VM with other work: a
median of 61 ms, the least of sixty 5.7 ms), so a measurement goes on past its first
exchanges while the offset is known more loosely than the step allows, up to
MOST_EXCHANGES, rather than refusing a run the next exchange would have allowed. After a
step the offset is measured to see whether the clock moved, within what the two
measurements' uncertainties allow, not to place anything: a loose one is no failure there.

A clock can also be stepped later (NTP, an administrator): the offset measured when the
generators were placed then no longer says when a worker's share starts, and the merged
step would hold shares that never ran together. So each step is placed on offsets measured
just before it, and measured again after it: a clock that moved between the two makes the
step incomplete (`moved`), since its start could have been placed either side of the jump.
"""

from __future__ import annotations

from collections.abc import Callable

from app.core.load import merge
from app.core.load.cluster import replies
from app.core.units import format_seconds

#: Exchanges when the generators are placed; before and after each step.
CLOCK_EXCHANGES = 12
RECHECK_EXCHANGES = 4
#: At most this many exchanges in one measurement, while the offset is known too loosely
#: (with seven other test runs and three busy loops on the 2-core VM, the least round trip of
#: 64 was still 50 ms).
MOST_EXCHANGES = 128

#: One exchange: (this machine's clock when it asked, the worker's reading, this machine's
#: clock when the answer came).
Exchange = Callable[[], tuple[float, float, float]]


def measure(exchange: Exchange, least: int, limit_s: float, most: int = MOST_EXCHANGES) -> merge.ClockOffset:
    """A worker's offset from at least `least` exchanges, and more (up to `most`) while it
    is known only more loosely than `limit_s`. Each reading is checked as data
    (`replies.clock_reading`), and so is the offset (`replies.clock_offset`): a BadReply."""
    readings: list[tuple[float, float, float]] = []
    offset: merge.ClockOffset | None = None
    tries = 0
    while tries < most and (offset is None or len(readings) < least or offset.uncertainty_s > limit_s):
        tries += 1
        t0, remote, t1 = exchange()
        reading = replies.clock_reading(remote)
        if t1 < t0:  # this machine's own clock was stepped back meanwhile: the exchange says nothing
            continue
        readings.append((t0, reading, t1))
        offset = merge.clock_offset(readings)
    if offset is None:
        raise replies.BadReply(f"this machine's clock went back during each of {tries} clock exchanges")
    replies.clock_offset(offset.offset_s, offset.uncertainty_s)
    return offset


def loose(offset: merge.ClockOffset, limit_s: float, step_s: float) -> str | None:
    """Why a step cannot be placed on this offset (known more loosely than `limit_s`), or None."""
    if offset.uncertainty_s <= limit_s:
        return None
    return (
        f"its clock is known only to within {format_seconds(offset.uncertainty_s)}, more than "
        f"{merge.MAX_MISALIGNMENT_SHARE:.0%} of the {step_s:g} s step ({format_seconds(limit_s)}): its share "
        "could not be placed in time with the others'"
    )


def moved(before: merge.ClockOffset, after: merge.ClockOffset, limit_s: float) -> str | None:
    """Why a step placed on `before` may not have started when agreed: the clock, measured
    again after the step (`after`), moved by more than `limit_s` beyond what both
    measurements' uncertainties allow. None when it held still."""
    shift = after.offset_s - before.offset_s
    allowed = limit_s + before.uncertainty_s + after.uncertainty_s
    if abs(shift) <= allowed:
        return None
    sign = "-" if shift < 0 else "+"
    return (
        f"its clock moved {sign}{format_seconds(abs(shift))} while the step ran (measured before and after it; "
        f"allowed {format_seconds(allowed)}): its share may have started that far from the agreed moment"
    )

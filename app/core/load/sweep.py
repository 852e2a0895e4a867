"""Which rates a sweep offers, and the thresholds a step is judged by (the judging is
app.core.load.verdict's).

A sweep (`"rate_per_s": "sweep"`) first times requests one at a time (closed loop) to
estimate what the server can take: `workers / median server time`. That is an upper
bound (the server's bookkeeping per request is not in its crypto time), so the sweep
offers fractions of it up to past it, and stops once two steps in a row were not kept
up with: the achieved rate there is the server's, the knee.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from app.core.settings.load import MAX_RATE_PER_S

#: Offered rates of a sweep, as fractions of the estimated capacity.
SWEEP_FRACTIONS = (0.1, 0.25, 0.5, 0.7, 0.8, 0.9, 1.0, 1.15, 1.3, 1.6)
#: A step whose achieved rate is below this share of its offered rate was not kept up with
#: (and below this share of what the generator sent, the server fell behind).
KEPT_UP = 0.95
#: A sweep stops after this many steps in a row that were not kept up with.
OVERLOADED_STEPS_TO_STOP = 2
#: The generator's loop may hand a request to the kernel this late (p99) before it marks
#: the step: beyond it, latency measures the generator too. A mark, not a verdict: a server
#: that falls behind delays the generator's sends by back-pressure too (app.core.load.verdict).
MAX_SEND_LAG_S = 0.001
#: A step is saturated by the generator, not the server, when it could not even send
#: this share of its schedule within the window.
MIN_SENT_SHARE = 0.98

#: The generator's backlog: requests *owed* (their intended time has come) but not yet
#: handed to the kernel, queued in the clients' buffers. It grows when the kernel's socket
#: buffers are full (the server, or the link, does not take requests as fast as they are
#: offered) or when the generator's own loop falls behind its schedule (at 1,000,000/s one
#: Python process cannot keep up). Unbounded, it grew by about 230 MiB a second of step at
#: the allowed maximum rate (every overdue request queued: its bytes and its bookkeeping).
#: Bounded, a request that comes due while the backlog is full is not sent: it is counted
#: as *missed*, and a step with misses is generator-saturated (the rate was not offered, so
#: the step says nothing about the server's capacity). 65,536 requests is at least 65 ms of
#: the schedule at the highest rate a profile may ask (1,000,000/s) and far more than a step
#: the server keeps up with ever owes (a few requests per client at once); with ~200 bytes
#: of bookkeeping each, about 13 MiB beside their bytes.
BACKLOG_MAX = 65_536
#: ... and at most this many bytes of them (a load message may be up to 128 MiB: 65,536 of
#: those would be 8 TiB). At least one request per client is always allowed.
BACKLOG_MAX_BYTES = 64 << 20
#: Requests handed to the kernel and not yet answered, at most (beyond them, a due request
#: is missed too). The kernel's socket buffers bound these anyway, but per connection, and a
#: connection's buffers hold a hundred thousand short requests: 256 clients of them would
#: be gigabytes of bookkeeping here. 524,288 is half a second of the highest rate; a server
#: whose queue holds that many is long past its knee (each request's latency is already
#: the queue's, seconds), and ~100 MiB of bookkeeping at most.
IN_FLIGHT_MAX = 1 << 19


def sweep_rates(
    capacity_per_s: float, fractions: Sequence[float] = SWEEP_FRACTIONS, cap: float = MAX_RATE_PER_S
) -> list[float]:
    """The offered rates of a sweep around an estimated capacity, lowest first: each at
    least 1/s and at most `cap` (MAX_RATE_PER_S per generator), the cap a profile's own rates have (the estimate
    is workers / one request's server time: 64 workers at a microsecond each would ask for
    64,000,000/s). Fractions that reach the cap offer it once, not several times over."""
    if math.isnan(capacity_per_s):  # no estimate at all: offer from the cap down is no plan either
        raise ValueError("a sweep needs an estimated capacity (got NaN)")
    # An estimate beyond the cap is planned as the cap: the steps below it still trace the
    # latency on the way (the knee then lies higher: more than one generator can offer).
    capacity_per_s = min(capacity_per_s, cap)
    rates: list[float] = []
    for fraction in fractions:
        wanted = capacity_per_s * fraction
        rate = cap if wanted >= cap else max(1.0, round(wanted, 1))
        if rate not in rates:
            rates.append(rate)
    return rates


def generator_saturation(
    send_lag_p99_s: float | None,
    sent: int,
    scheduled: int,
    missed: int = 0,
    missed_warmup: int = 0,
    backlog_cap: int = 0,
) -> str | None:
    """What the generator's own figures say against it (`LoadStep.saturation_reason`), or
    None: missed requests (not sent: its backlog was at its cap), a short schedule, or late
    sends. A mark, not the step's verdict: a server that falls behind fills the backlog and
    delays the sends by back-pressure too (app.core.load.verdict weighs them)."""
    if missed or missed_warmup:
        where = f"{missed:,} of the {scheduled:,} requests scheduled in the window" if missed else "none in the window"
        warm = f" and {missed_warmup:,} in the warm-up" if missed_warmup else ""
        cap = f" (at most {backlog_cap:,} requests owed at once)" if backlog_cap else ""
        return (
            f"the generator could not send {where}{warm} in time{cap}: missed, the rate was not offered "
            "(the server or the link did not take requests as fast, or the generator's loop fell behind)"
        )
    if scheduled and sent < MIN_SENT_SHARE * scheduled:
        return f"the generator sent {sent} of the {scheduled} requests scheduled in the window"
    if send_lag_p99_s is not None and send_lag_p99_s > MAX_SEND_LAG_S:
        return (
            f"the generator handed requests to the kernel up to {send_lag_p99_s * 1e3:.2f} ms late (p99, "
            f"limit {MAX_SEND_LAG_S * 1e3:g} ms)"
        )
    return None

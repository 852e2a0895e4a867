"""How long a job spends in its own pauses, and the bound past which it is refused.

`pause_ms` sleeps after every timed round: in an operations job after each warm-up and
sample round of every metric (key generation, the key exchange at each end, each size's seal
and open),
in a session after each warm-up and sample message of every size. Unlike the crypto's
cost, that time is known before the job runs. A profile within each field's own maximum
(1,000,000 samples, a 60 s pause) asked for about two years of sleeping and was started
without a word; it now is refused at resolve time, like a link's endless wire time
(`app.core.link.wire_time`), with the same one-day bound.

The count is a lower bound: a scheme's extra operations (a signature's verify-only
metrics, say) pause too but are known only once the scheme's objects exist.
"""

from __future__ import annotations

from app.core.link.wire_time import MAX_JOB_WIRE_S, duration_text
from app.core.schemes.base import KEYGEN_ON_SENDER, NO_KEYGEN, OPEN_METRIC
from app.core.vocab import KEY_ESTABLISHING, Family, Mode

#: A job's pauses may add up to at most this long (a day, the bound on a job's wire time).
MAX_JOB_PAUSE_S = MAX_JOB_WIRE_S


def pause_count(mode: Mode, family: Family, sizes: int, samples: int, warmup: int, keygen_samples: int) -> int:
    """The pauses a job makes at the least, the way the measuring code applies them
    (`app.core.measure.ops.OperationsBenchmark._measure`, the session sender's messages)."""
    rounds = warmup + samples
    if mode in (Mode.LOOPBACK, Mode.REMOTE):
        return sizes * rounds  # one a message; the floor's pings and the tamper checks pause not
    if mode != Mode.OPERATIONS:
        return 0  # a load job's offered rate sets when requests go (pause_ms is refused there)
    count = 0
    if family not in NO_KEYGEN:
        keygen_warmup = min(warmup, 2)
        if family not in KEYGEN_ON_SENDER and keygen_warmup:
            keygen_warmup -= 1  # the working key pair was the first warm-up round
        count += keygen_samples + keygen_warmup
    if family in KEY_ESTABLISHING:
        count += 2 * rounds  # the exchange at each end, once a job
    per_size = 1 + (OPEN_METRIC[family] is not None)
    return count + sizes * per_size * rounds


def pause_problem(pause_ms: float, count: int) -> str | None:
    """Why a job whose `count` pauses of `pause_ms` each is refused; None if it may run."""
    total = pause_ms / 1000 * count
    if total <= MAX_JOB_PAUSE_S:
        return None
    return (
        f"the job pauses at least {count:,} times ({pause_ms:g} ms after every warm-up and sample round): "
        f"at least {duration_text(total)} of pauses alone, more than the {duration_text(MAX_JOB_PAUSE_S)} "
        "a job may run; use a shorter pause_ms or fewer samples"
    )

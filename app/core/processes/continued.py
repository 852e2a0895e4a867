"""A job's processes count the times they were continued after a stop.

The watch (app.core.processes.watchdog) sees a job process stopped when one of its looks,
every 0.25 s, falls within the stop. It misses a stop that is shorter, one that comes
while its own thread waits for the CPU on a busy machine, and every stop of the whole
process group: Ctrl-Z (or `kill -STOP -PGID`) stops the supervisor with its job, the watch
included, and `fg` continues them all at once. A loopback job measured across such a stop
kept a 4 s round trip in an ok job, with no word.

The kernel sends SIGCONT to a process as it continues it. Every process of a job is
therefore started through `run_counting`, which counts each SIGCONT into its own slot of
an array the whole job shares (shared memory, written by a signal handler); the measuring
process stamps the sum on each size's `SizeStarted` and `SizeMeasured` (app.core.measure.
harness), and a size across which it moved timed a stop of some process of the job, which
the slots name. A SIGCONT sent to a process that was not stopped counts too: nothing tells
them apart afterwards, and someone sent it.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from typing import Any, TypeVar

PlanT = TypeVar("PlanT")

#: The job's shared counts (one slot a process) and this process's slot (None: not
#: started through `run_counting`).
_counts: Any = None
_slot = 0

#: The most processes a job counts (a link, a receiver and a sender need 3).
SLOTS = 8


def _continued(signum: int, frame: object) -> None:
    """SIGCONT's handler: one more continue in this process's slot."""
    if _counts is not None:
        _counts[_slot] += 1


def count_continues(counts: Any, slot: int) -> None:
    """Count this process's continues into `counts[slot]` (call from the main thread).
    What it forks (a load server's workers) counts into the same slot."""
    global _counts, _slot
    _counts, _slot = counts, slot
    if counts is not None and hasattr(signal, "SIGCONT"):
        signal.signal(signal.SIGCONT, _continued)


def continues() -> int:
    """How many times the job's processes have been continued so far (0: not counted)."""
    return sum(_counts) if _counts is not None else 0


def run_counting(target: Callable[[Any, PlanT], None], conn: Any, plan: PlanT, counts: Any, slot: int) -> None:
    """A job process's multiprocessing target: count continues, then run `target`."""
    count_continues(counts, slot)
    target(conn, plan)

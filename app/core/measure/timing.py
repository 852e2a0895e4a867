"""Clocks and batching: how a timed region is timed.

Timing rules (docs/ARCHITECTURE.md, "Measuring rules"): `perf_counter_ns`, the garbage
collector off inside a timed region, operations far below a millisecond timed in
calibrated batches and reported per operation, and resources sampled from outside
the measured process so the sampler never competes with the code it watches.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

#: A batch aims to last this long: long enough that clock resolution and loop
#: overhead vanish (perf_counter_ns resolves well below 1 us), short enough that
#: the machine's noise lands in different samples rather than averaging away.
BATCH_TARGET_NS = 2_000_000
#: Operations faster than this are batched; slower ones are timed one at a time.
BATCH_THRESHOLD_NS = 200_000
MAX_BATCH = 20_000


@contextmanager
def gc_paused() -> Iterator[None]:
    """Disable the cyclic GC for a timed region, restoring its previous state."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def time_calls(run: Callable[[Any], Any], inputs: Sequence[Any]) -> tuple[int, list[Any]]:
    """Call `run` on each input back to back; return (total ns, outputs).

    Outputs are kept so that every operation can be validated afterwards, outside
    the timed region. Storing into a preallocated list costs a few nanoseconds.
    """
    outputs: list[Any] = [None] * len(inputs)
    counter = time.perf_counter_ns
    with gc_paused():
        start = counter()
        for i, value in enumerate(inputs):
            outputs[i] = run(value)
        elapsed = counter() - start
    return elapsed, outputs


#: An operation at least this long needs no untimed call before each sample: whatever
#: caches the previous sample's validation disturbed are refilled within its first 0.1 %.
SLOW_CALL_NS = 10_000_000


@dataclass(frozen=True)
class Calibration:
    """How many calls make one sample, and what one call took when it was measured."""

    count: int
    single_ns: int

    @property
    def slow(self) -> bool:
        """A call of SLOW_CALL_NS or more (a pure-Python RSA key generation, ElGamal-3072)."""
        return self.single_ns >= SLOW_CALL_NS


def known_slow(elapsed_ns: int) -> Calibration | None:
    """The calibration of an operation whose call was already timed (an untimed setup's key
    generation) when that call took SLOW_CALL_NS or more: one call a sample, as
    `calibrate`'s first probe would decide, without the probe. A pure-Python RSA-3072 key
    generation takes 0.2-3 s, and each job made one more for the probe alone."""
    return Calibration(1, elapsed_ns) if elapsed_ns >= SLOW_CALL_NS else None


def calibrate(run: Callable[[Any], Any], make_input: Callable[[], Any]) -> Calibration:
    """How many calls make one sample: 1 for slow operations, else ~BATCH_TARGET_NS worth.

    One probe call first, so a slow operation (an RSA-4096 key generation) costs a
    single extra call; then a larger probe, because the first calls after setup are
    often slower than the steady state.
    """
    elapsed, _ = time_calls(run, [make_input()])
    if BATCH_THRESHOLD_NS <= elapsed < 50 * BATCH_THRESHOLD_NS:
        # Perhaps only a cold first call (lazy imports, caches): look once more.
        elapsed, _ = time_calls(run, [make_input()])
    if elapsed >= BATCH_THRESHOLD_NS:
        return Calibration(1, elapsed)
    count = int(min(MAX_BATCH, max(10, BATCH_TARGET_NS // max(1, elapsed) // 4)))
    elapsed, _ = time_calls(run, [make_input() for _ in range(count)])
    single = max(1, elapsed // count)
    if single >= BATCH_THRESHOLD_NS:
        return Calibration(1, single)
    return Calibration(int(min(MAX_BATCH, max(1, BATCH_TARGET_NS // single))), single)

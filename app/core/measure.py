"""Clocks, batching and the CPU/RSS sampler.

Timing rules (docs/ARCHITECTURE.md, "Measuring rules"): `perf_counter_ns`, the garbage
collector off inside a timed region, operations far below a millisecond timed in
calibrated batches and reported per operation, and resources sampled from outside
the measured process so the sampler never competes with the code it watches.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import psutil

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



@dataclass
class ResourceSeries:
    """CPU % (of one core), RSS and the CPU it was on, over time, for one process."""

    role: str
    times: list[float] = field(default_factory=list)
    cpu_percent: list[float] = field(default_factory=list)
    rss_bytes: list[int] = field(default_factory=list)
    other_cpu_percent: list[float] = field(default_factory=list)
    #: The CPU the process was last seen running on at each reading (psutil cpu_num);
    #: -1 where the platform cannot say (macOS, Windows).
    cpu_nums: list[int] = field(default_factory=list)


class ResourceSampler:
    """Samples CPU % and RSS of a job's processes from the supervising process.

    Runs as one thread of the supervisor, never inside a measured process. It also
    records the CPU used by everything else on the machine (system total minus the
    job's own processes, so a loopback sender does not count its receiver as
    "other load"): the evidence behind the "machine busy" warning. A job shorter
    than one interval gets no CPU sample: the summary then says 0 samples instead
    of inventing a 0 % reading.

    Args:
        processes: role -> pid ("worker", or "sender" and "receiver").
    """

    def __init__(self, processes: dict[str, int], interval: float = 0.1,
                 on_sample: Callable[[str, float, float, int], None] | None = None) -> None:
        if interval < 0.1:
            raise ValueError("sampling interval must be at least 100 ms")
        self.series = {role: ResourceSeries(role) for role in processes}
        self._processes = {role: psutil.Process(pid) for role, pid in processes.items()}
        self._interval = interval
        self._on_sample = on_sample
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="sampler-" + "-".join(processes), daemon=True)
        self._cores = psutil.cpu_count() or 1

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> dict[str, ResourceSeries]:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2)
        return self.series

    def _loop(self) -> None:
        start = time.monotonic()
        alive = dict(self._processes)
        for process in list(alive.values()):
            try:
                process.cpu_percent(None)
            except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                pass
        psutil.cpu_percent(None)
        while alive and not self._stop.wait(self._interval):
            readings: dict[str, tuple[float, int]] = {}
            cpu_nums: dict[str, int] = {}
            for role, process in list(alive.items()):
                try:
                    with process.oneshot():
                        readings[role] = (process.cpu_percent(None), process.memory_info().rss)
                        cpu_nums[role] = _cpu_num(process)
                except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                    del alive[role]  # the process ended; what was sampled stands
            # System-wide percent is of all cores; convert to "one core" units.
            system = psutil.cpu_percent(None) * self._cores
            ours = sum(cpu for cpu, _ in readings.values())
            t = time.monotonic() - start
            for role, (cpu, rss) in readings.items():
                series = self.series[role]
                series.times.append(t)
                series.cpu_percent.append(cpu)
                series.rss_bytes.append(rss)
                series.other_cpu_percent.append(max(0.0, system - ours))
                series.cpu_nums.append(cpu_nums[role])
                if self._on_sample is not None:
                    self._on_sample(role, t, cpu, rss)


def _cpu_num(process: psutil.Process) -> int:
    """The CPU `process` last ran on, or -1 where psutil has no cpu_num (macOS, Windows)."""
    cpu_num = getattr(process, "cpu_num", None)
    return int(cpu_num()) if cpu_num is not None else -1

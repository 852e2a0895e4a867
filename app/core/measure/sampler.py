"""The CPU/RSS sampler: a thread of the supervising process watching a job's processes.

Resources are sampled from outside the measured process (docs/ARCHITECTURE.md,
"Measuring rules"), so the sampler never competes with the code it watches.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import psutil

from app.core.records.job_records import ResourceSeries


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

    def __init__(
        self,
        processes: dict[str, int],
        interval: float = 0.1,
        on_sample: Callable[[str, float, float, int], None] | None = None,
    ) -> None:
        if interval < 0.1:
            raise ValueError("sampling interval must be at least 100 ms")
        self.series = {role: ResourceSeries(role) for role in processes}
        self._processes: dict[str, psutil.Process] = {}
        for role, pid in processes.items():
            try:
                self._processes[role] = psutil.Process(pid)
            except psutil.NoSuchProcess:
                # Ended and reaped before sampling began (a job's child that failed at once):
                # nothing to read, so its figures are not measured. It stopped whole runs
                # ("internal error: NoSuchProcess") before the job could say why it ended.
                pass
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
                        # A process that ended but was not yet reaped (a zombie) reads as 0 %
                        # CPU and 0 bytes resident: not a reading, never a figure.
                        if process.status() == psutil.STATUS_ZOMBIE:
                            raise psutil.ZombieProcess(process.pid)
                        cpu, rss = process.cpu_percent(None), process.memory_info().rss
                        if rss <= 0:
                            raise psutil.ZombieProcess(process.pid)
                        readings[role] = (cpu, rss)
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

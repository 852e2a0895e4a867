"""The CPU/RSS sampler reads only live processes: a process that has exited but was not yet
reaped (a zombie) reads 0 % and 0 bytes resident, which is no reading at all."""

from __future__ import annotations

import os
import subprocess
import sys

from app.core.measure.sampler import ResourceSampler
from app.core.records.job_records import MemoryUsage, ProcessUsage, ResourceSeries


def test_an_exited_unreaped_process_gives_no_reading_never_0_bytes() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # exited, left a zombie
        sampler = ResourceSampler({"worker": child.pid})
        sampler.start()
        sampler._thread.join(timeout=10)  # the loop ends once no process it watches is alive
        series = sampler.stop()["worker"]
    finally:
        child.wait()
    assert series.rss_bytes == [] and series.cpu_percent == []
    usage = ProcessUsage.from_series(series)
    assert usage.samples == 0 and usage.rss_peak_bytes is None and usage.mean_percent is None


def test_a_zero_resident_size_is_not_measured_wherever_it_comes_from() -> None:
    zero = ResourceSeries("worker")
    zero.times, zero.cpu_percent, zero.rss_bytes, zero.other_cpu_percent = [0.1], [0.0], [0], [0.0]
    assert ProcessUsage.from_series(zero).rss_peak_bytes is None
    assert ProcessUsage.from_dict({"samples": 1, "rss_peak_bytes": 0}).rss_peak_bytes is None
    memory = MemoryUsage.from_dict({"rss_peak_bytes": {"worker": 0, "sender": 5 << 20}})
    assert memory.rss_peak_bytes == {"worker": None, "sender": 5 << 20}
    assert memory.measuring_rss("operations") == 5 << 20  # the one read, never the 0


def test_a_process_gone_before_sampling_began_is_not_measured_and_stops_nothing() -> None:
    """A pq-over-links run stopped on "internal error (NoSuchProcess)": a child of a job had
    ended and been reaped before the sampler was made. Its figures are not measured; the
    job goes on to say why its process ended."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # ended and reaped: no such process any more
    sampler = ResourceSampler({"worker": child.pid, "supervisor": os.getpid()})
    sampler.start()
    series = sampler.stop()
    assert series["worker"].rss_bytes == [] and series["worker"].cpu_percent == []
    assert ProcessUsage.from_series(series["worker"]).rss_peak_bytes is None

"""A run whose warnings repeat as a reduced run's do: for the tests of grouped warnings."""

from __future__ import annotations

from app.core.results.model import RunResult
from app.core.statistics.stability_warnings import check_stability, machine_busy_warning
from app.core.statistics.stats import summarize
from tests.helpers import records

RUN_ID = "20261123-192233-abcdef"


def reduced_like_run() -> RunResult:
    """Twenty jobs of three metrics, each metric of 3 samples (60 "Only 3 samples"
    warnings), and job #7 on a busy machine."""
    jobs = []
    for index in range(20):
        job = records.job(
            RUN_ID, index, 1024, {name: [1e-6, 1.01e-6, 0.99e-6] for name in ("keygen", "encrypt", "decrypt")}
        )
        for name, metric in job.metrics.items():
            job.warnings += check_stability(name, summarize(metric.samples), metric.samples)
        jobs.append(job)
    busy = machine_busy_warning(150.0, 2)
    assert busy is not None
    jobs[6].warnings.append(busy)
    return records.run(RUN_ID, jobs, name="reduced-like")

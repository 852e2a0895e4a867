"""A run against a baseline run: jobs paired as `cryptobench compare` pairs them, and their
primary metrics compared by the same code (`app.core.analysis.compare.compare_runs`: ratio
this / baseline, bootstrap interval, and the evidence rule's verdict, so a report never
says "slower" where `compare` says "no verdict")."""

from __future__ import annotations

from dataclasses import dataclass, field

from app.core.analysis.compare import MetricComparison, compare_runs
from app.core.analysis.evidence import MovementSource, reduced_sides
from app.core.analysis.median_ratio import Comparison
from app.core.results.model import JobResult, RunResult
from app.core.vocab import Verdict
from app.report.job_figures import primary_metric


@dataclass
class JobComparison:
    """One job of this run against its match in the baseline, on the primary metric."""

    job: JobResult
    base: JobResult
    metric: str | None
    #: The core's comparison of the metric; None where nothing could be compared.
    measured: MetricComparison | None = None
    reason: str | None = None  # why there is no comparison, or no verdict
    #: No verdict because a side is a reduced run (`reason` says which).
    withheld: bool = False

    @property
    def comparison(self) -> Comparison | None:
        return self.measured.comparison if self.measured is not None else None

    @property
    def verdict(self) -> Verdict:
        return self.measured.verdict if self.measured is not None else Verdict.NOT_COMPARABLE

    @property
    def too_few(self) -> tuple[int, int] | None:
        """Samples a side, where too few for a verdict (app.core.analysis.evidence); else None."""
        m = self.measured
        return (m.base_n, m.new_n) if m is not None and m.too_few and not self.withheld else None

    @property
    def one_run(self) -> bool:
        """A ratio without a verdict: one run a side, and no measured movement of its runs."""
        return self.measured is not None and self.measured.one_run

    @property
    def decided(self) -> bool:
        """The evidence rule gave a verdict: faster or slower."""
        return self.verdict in (Verdict.FASTER, Verdict.SLOWER)


@dataclass
class BaselineMatch:
    pairs: list[JobComparison] = field(default_factory=list)
    only_run: list[JobResult] = field(default_factory=list)
    only_baseline: list[JobResult] = field(default_factory=list)
    #: Why no pair gets a verdict: a reduced run on a side (app.core.analysis.evidence); else None.
    withheld: str | None = None


def match_baseline(run: RunResult, baseline: RunResult, movement: MovementSource | None = None) -> BaselineMatch:
    """Pair jobs by `app.core.analysis.compare.match_key` and compare their primary metric
    (ratio this / baseline) as `cryptobench compare` does, in this run's job order.
    `movement`: how much runs of the baseline's jobs move on its machine, from the store's
    runs (app/core/analysis/spread.py); without it, no pair of one run a side has a verdict."""
    compared = compare_runs(baseline, run, movement=movement)
    match = BaselineMatch(
        only_run=list(compared.only_new),
        only_baseline=list(compared.only_base),
        withheld=reduced_sides([baseline], [run]),
    )
    by_job = {id(pair.new): pair for pair in compared.pairs}
    for job in run.jobs:
        pair = by_job.get(id(job))
        if pair is None:
            continue
        metric = primary_metric(job)
        if pair.reason is not None:
            match.pairs.append(
                JobComparison(job, pair.base, metric, reason=f"this run: {job.status}, baseline: {pair.base.status}")
            )
            continue
        measured = next((m for m in pair.metrics if m.metric == metric), None)
        if measured is None or measured.base_median is None or measured.new_median is None:
            match.pairs.append(
                JobComparison(job, pair.base, metric, reason=f"no {metric or 'per-message'} metric in both runs")
            )
            continue
        withheld = measured.too_few and match.withheld is not None
        match.pairs.append(JobComparison(job, pair.base, metric, measured, measured.reason, withheld))
    return match

"""A run against a baseline run: jobs paired as `cryptobench compare` pairs them, and
their primary metrics compared (ratio this / baseline, bootstrap interval, verdict)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from app.core.analysis.compare import MatchKey, match_key
from app.core.analysis.evidence import reduced_sides, too_few_samples
from app.core.analysis.median_ratio import Comparison, compare
from app.core.results.model import JobResult, RunResult
from app.core.vocab import JobStatus, Verdict
from app.report.job_figures import primary_metric


@dataclass
class JobComparison:
    """One job of this run against its match in the baseline, on the primary metric."""

    job: JobResult
    base: JobResult
    metric: str | None
    comparison: Comparison | None
    reason: str | None = None  # why there is no comparison
    #: Samples a side, where too few for a verdict (app.core.analysis.evidence); else None.
    too_few: tuple[int, int] | None = None
    #: No verdict because a side is a reduced run (`reason` says which).
    withheld: bool = False

    @property
    def verdict(self) -> Verdict:
        if self.comparison is None:
            return Verdict.NOT_COMPARABLE
        if not self.comparison.significant:
            return Verdict.WITHIN_NOISE
        return Verdict.SLOWER if self.comparison.ratio > 1 else Verdict.FASTER


@dataclass
class BaselineMatch:
    pairs: list[JobComparison] = field(default_factory=list)
    only_run: list[JobResult] = field(default_factory=list)
    only_baseline: list[JobResult] = field(default_factory=list)
    #: Why no pair gets a verdict: a reduced run on a side (app.core.analysis.evidence); else None.
    withheld: str | None = None


def match_baseline(run: RunResult, baseline: RunResult) -> BaselineMatch:
    """Pair jobs by `app.core.analysis.compare.match_key` (as `cryptobench compare` does) and compare their primary metric (ratio this / baseline).

    `compare` raises ValueError on empty samples (a failed job, or results saved
    without samples); that becomes "not comparable" with the reason, not a crash.
    """
    waiting: dict[MatchKey, list[JobResult]] = defaultdict(list)
    for base in baseline.jobs:
        waiting[match_key(base)].append(base)
    match = BaselineMatch(withheld=reduced_sides([baseline], [run]))
    for job in run.jobs:
        candidates = waiting.get(match_key(job))
        if not candidates:
            match.only_run.append(job)
            continue
        base = candidates.pop(0)
        metric = primary_metric(job)
        comparison, reason, too_few, withheld = None, None, None, False
        if job.status != JobStatus.OK or base.status != JobStatus.OK:
            reason = f"this run: {job.status}, baseline: {base.status}"
        elif metric is None or metric not in job.metrics or metric not in base.metrics:
            reason = f"no {metric or 'per-message'} metric in both runs"
        elif not len(base.metrics[metric].samples) or not len(job.metrics[metric].samples):
            reason = (
                "raw samples missing ("
                + ("baseline" if not len(base.metrics[metric].samples) else "this run")
                + " saved without them)"
            )
        elif match.withheld is not None:
            reason, withheld = match.withheld, True  # the rule every face keeps (app.core.analysis.evidence)
        elif (thin := too_few_samples(len(base.metrics[metric].samples), len(job.metrics[metric].samples))) is not None:
            reason = thin  # the rule every face keeps (app.core.analysis.evidence)
            too_few = (len(base.metrics[metric].samples), len(job.metrics[metric].samples))
        else:
            try:
                comparison = compare(base.metrics[metric].samples, job.metrics[metric].samples)
            except ValueError as exc:  # e.g. a baseline median of 0: the ratio is undefined
                reason = str(exc)
        match.pairs.append(JobComparison(job, base, metric, comparison, reason, too_few, withheld))
    match.only_baseline = [b for left in waiting.values() for b in left]
    return match

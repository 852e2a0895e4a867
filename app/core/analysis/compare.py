"""Two runs side by side: which jobs are the same measurement, what each metric did, and
what changed between the machines and libraries they ran on.

Jobs pair by `match_key`: scheme, backend, parameters, mode, message size, link and
placement policy. A job repeated in a profile pairs with its n-th repetition; a job
without a partner is listed (`only_base`, `only_new`), never dropped.

For each metric of a pair, `median_ratio.compare` gives the ratio of medians new / base with
its seeded 95 % bootstrap interval, the statistic the report and the window's Compare
dialog use, so the three never disagree on the same runs. The verdict is the evidence
rule's (`evidence.decide`, which every face asks): every metric is a time, so
`Verdict.SLOWER` when the interval lies entirely above 1 (above how much runs move here,
with one run a side), `Verdict.FASTER` entirely below, `Verdict.WITHIN_NOISE` otherwise,
and `Verdict.NO_VERDICT` without the evidence: too few samples, a reduced run, or one run
a side and no measured movement of its runs (app/core/analysis/spread.py).

A *regression* is stricter than "slower": the ratio is above 1 + threshold **and** so
is the interval's low end (docs/comparing.md). "Slower" alone would fail a
build on a 1 % difference measured precisely; the threshold alone would fail it on a
noisy 6 % one. With both, a build fails only when the data show, at 95 %, a slowdown
larger than the threshold.

Several runs a side (`compare_sides`): the mean of the runs' medians, and a two-level
bootstrap over runs and samples (`compare_repeated`), because one run's interval does not
cover how much a whole run moves (docs/comparing.md).

Qt-free: the command line, the report and the window share it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from app.core.analysis.evidence import (
    DEFAULT_THRESHOLD,
    MovementSource,
    RunMovement,
    Sides,
    decide,
    marked_name,
    reduced_sides,
    samples_first,
    too_few_runs,
)
from app.core.analysis.median_ratio import Comparison, bootstrap_medians, compare, finite_comparison
from app.core.analysis.order_statistics import exact_medians_needed
from app.core.machine.environment import CPU_FLAGS
from app.core.results.identity import MatchKey, match_key
from app.core.results.model import JobResult, RunResult
from app.core.vocab import JobStatus, Verdict

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "DEFAULT_THRESHOLD",
    "EnvDifference",
    "JobPair",
    "MatchKey",
    "MetricComparison",
    "RunComparison",
    "compare_repeated",
    "compare_runs",
    "compare_sides",
    "environment_differences",
    "match_key",
]

#: Bootstrap resamples per metric, as the report uses (median_ratio.compare's default).
BOOTSTRAP_RESAMPLES = 2000
#: Fewest resamples a large comparison drops to. Against 20,000 resamples, the farther
#: interval end moved by a median 3 % of the interval's width at 500 (90th percentile
#: 7 %), 1.5 % at 2000 (3 %): lognormal samples, n = 10, 30, 100, 10 seeds each.
MIN_RESAMPLES = 500
#: Samples drawn in all, over every metric of a comparison (resamples x samples of both
#: sides). The bootstrap costs ~30 ns per drawn sample, so this keeps a comparison
#: under a second; beyond it the resamples per metric shrink, down to MIN_RESAMPLES.
DRAW_BUDGET = 25_000_000

# --- the records ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MetricComparison:
    """One metric of a matched pair of jobs; `comparison` is None exactly when the verdict
    is NOT_COMPARABLE, and `reason` then says why."""

    metric: str
    unit: str
    base_median: float | None
    new_median: float | None
    comparison: Comparison | None
    verdict: Verdict
    reason: str | None = None
    base_n: int = 0
    new_n: int = 0
    #: Both sides measured it, but their figures give no finite ratio (a median of 0, or
    #: medians so far apart that the ratio overflows): a gate can neither pass nor fail it.
    undecided: bool = False
    #: A side had too few samples for a verdict (app.core.analysis.evidence): no ranking.
    too_few: bool = False
    #: One run a side and no measured movement of its runs: a ratio, no verdict.
    one_run: bool = False
    #: With one run a side: how much runs of the job moved here (what the verdict cleared).
    movement: RunMovement | None = None

    def regressed(self, threshold: float) -> bool:
        """Slower by more than `threshold` (0.05: 5 %), the interval's low end included; only
        a metric the evidence rule calls slower (never one without a verdict)."""
        c = self.comparison
        return (
            self.verdict == Verdict.SLOWER and c is not None and c.ratio > 1 + threshold and c.ci95_low > 1 + threshold
        )

    @property
    def words(self) -> str:
        """The verdict as every face prints it: "slower", "no verdict: one run a side"."""
        return f"{self.verdict}: {self.reason}" if self.reason else str(self.verdict)

    def to_dict(self) -> dict[str, Any]:
        c = self.comparison
        return {
            "metric": self.metric,
            "unit": self.unit,
            "base_median": self.base_median,
            "new_median": self.new_median,
            "base_n": self.base_n,
            "new_n": self.new_n,
            "ratio": c.ratio if c else None,
            "ci95": [c.ci95_low, c.ci95_high] if c else None,
            "verdict": self.verdict,
            "reason": self.reason,
            "run_movement": (
                None
                if self.movement is None
                else {
                    "runs": self.movement.runs,
                    "max_ratio": self.movement.max_ratio,
                    "bound": self.movement.bound,
                }
            ),
        }


@dataclass(frozen=True)
class JobPair:
    """A job of the base run and its match in the new run. `reason` is set when nothing
    could be compared (a side failed or was cancelled); `metrics` is then empty."""

    base: JobResult
    new: JobResult
    metrics: tuple[MetricComparison, ...]
    reason: str | None = None


@dataclass(frozen=True)
class EnvDifference:
    """One fact of the environment that differs; None where a run did not record it."""

    what: str
    base: str | None
    new: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"what": self.what, "base": self.base, "new": self.new}


@dataclass(frozen=True)
class RunComparison:
    base: RunResult
    new: RunResult
    pairs: tuple[JobPair, ...]
    only_base: tuple[JobResult, ...]
    only_new: tuple[JobResult, ...]
    environment: tuple[EnvDifference, ...]
    threshold: float = DEFAULT_THRESHOLD
    #: Bootstrap resamples each metric got (BOOTSTRAP_RESAMPLES unless the runs are large).
    resamples: int = BOOTSTRAP_RESAMPLES
    #: The medians were drawn from their order statistics, not by resampling (`_resamples`).
    exact_medians: bool = False
    #: Every run of each side: `base` and `new` first, then the repeats (`compare_sides`).
    base_runs: tuple[RunResult, ...] = ()
    new_runs: tuple[RunResult, ...] = ()
    metrics: tuple[tuple[JobPair, MetricComparison], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "metrics", tuple((p, m) for p in self.pairs for m in p.metrics))
        object.__setattr__(self, "base_runs", self.base_runs or (self.base,))
        object.__setattr__(self, "new_runs", self.new_runs or (self.new,))

    @property
    def repeated(self) -> bool:
        """Both sides have several runs: the intervals then cover run-to-run variation too."""
        return len(self.base_runs) > 1 and len(self.new_runs) > 1

    def regressions(self, threshold: float | None = None) -> list[tuple[JobPair, MetricComparison]]:
        """Every metric slower beyond the threshold (this comparison's unless given),
        the interval's low end above 1 + threshold too (see the module docstring)."""
        limit = self.threshold if threshold is None else threshold
        return [(p, m) for p, m in self.metrics if m.regressed(limit)]

    def broken(self) -> list[JobPair]:
        """Jobs that measured in the base run and failed in the new one: a regression too
        (a gate must not pass a release that broke a scheme, only because it has no
        figures to compare). A job cancelled in the new run is not counted: the user stopped it."""
        return [p for p in self.pairs if p.base.status == JobStatus.OK and p.new.status == JobStatus.FAILED]

    def too_few(self) -> list[tuple[JobPair, MetricComparison]]:
        """Metrics without the evidence for a verdict (app.core.analysis.evidence): too few
        samples a side, or a reduced run on a side."""
        return [(p, m) for p, m in self.metrics if m.too_few]

    def one_run(self) -> list[tuple[JobPair, MetricComparison]]:
        """Metrics with a ratio but no verdict: one run a side, and no measured movement."""
        return [(p, m) for p, m in self.metrics if m.one_run]

    def judged_by_movement(self) -> list[tuple[JobPair, MetricComparison]]:
        """Metrics of one run a side judged against how much the store's runs of them moved."""
        return [(p, m) for p, m in self.metrics if m.movement is not None]

    @property
    def gate_reason(self) -> str | None:
        """Why the regression gate checks none of these metrics (too few runs a side), or None."""
        return too_few_runs(len(self.base_runs), len(self.new_runs))

    def undecided(self) -> list[tuple[JobPair, MetricComparison]]:
        """Metrics measured on both sides whose ratio is not a finite number: no verdict."""
        return [(p, m) for p, m in self.metrics if m.undecided]

    def count(self, verdict: Verdict) -> int:
        return sum(1 for _, m in self.metrics if m.verdict == verdict)

    def to_dict(self, threshold: float | None = None) -> dict[str, Any]:
        limit = self.threshold if threshold is None else threshold
        return {
            "base": _run_dict(self.base),
            "new": _run_dict(self.new),
            "base_runs": [run.id for run in self.base_runs],
            "new_runs": [run.id for run in self.new_runs],
            "threshold": limit,
            "resamples": self.resamples,
            "median_draws": "order statistics" if self.exact_medians else "resampling",
            "environment": [d.to_dict() for d in self.environment],
            "pairs": [
                {
                    "job": _job_dict(p.new),
                    "base_job_id": p.base.id,
                    "new_job_id": p.new.id,
                    "reason": p.reason,
                    "metrics": [{**m.to_dict(), "regressed": m.regressed(limit)} for m in p.metrics],
                }
                for p in self.pairs
            ],
            "only_base": [_unmatched_dict(job, self.new.jobs) for job in self.only_base],
            "only_new": [_unmatched_dict(job, self.base.jobs) for job in self.only_new],
            "regressions": len(self.regressions(limit)),
            "gate": {"checked": self.gate_reason is None, "reason": self.gate_reason},
        }


def _unmatched_dict(job: JobResult, other_side: Sequence[JobResult]) -> dict[str, Any]:
    data = _job_dict(job)
    why = unmatched_reason(job, other_side)
    if why is not None:
        data["why_unmatched"] = why
    return data


def unmatched_reason(job: JobResult, other_side: Iterable[JobResult]) -> str | None:
    """Why a job without a partner has none when the other side measured the same job in
    the other exchange pattern (a session's per-message cost is AEAD alone, a per-message
    job's holds a key establishment each time: never compared), or None. Every face that
    lists unmatched jobs says it: `compare`, the report's comparison, the window's Compare."""
    mine = job.exchange_used
    if mine is None:
        return None
    key = match_key(job)[:-1]
    for other in other_side:
        theirs = other.exchange_used
        if theirs is not None and theirs != mine and match_key(other)[:-1] == key:
            return (
                f"the other run measured it with exchange {theirs}, this one {mine}: "
                "jobs of different exchange patterns do different work per message and are not compared"
            )
    return None


def _run_dict(run: RunResult) -> dict[str, Any]:
    view = run.profile_view
    return {
        "id": run.id,
        "name": marked_name(run),
        "started": run.started,
        "machine": run.environment_view.hostname,
        "reduced": view.reduced,
        "overrides": dict(view.overrides),
    }


def _job_dict(job: JobResult) -> dict[str, Any]:
    data = {
        "id": job.id,
        "label": job.label,
        "scheme": job.scheme,
        "backend": job.backend,
        "params": dict(job.params),
        "mode": job.mode,
        "message_size": job.message_size,
        "status": job.status,
    }
    if job.link is not None:
        data["link"] = job.link.to_dict()
    if job.placement is not None:
        data["placement"] = job.placement.policy
    if job.exchange_used is not None:
        data["exchange"] = str(job.exchange_used)
    return data


# --- comparing -----------------------------------------------------------------------------


def compare_runs(
    base: RunResult,
    new: RunResult,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    movement: MovementSource | None = None,
) -> RunComparison:
    """Pair the jobs of `base` and `new` by `match_key` and compare every metric of each pair."""
    return compare_sides([base], [new], threshold=threshold, movement=movement)


def compare_sides(
    base_runs: Sequence[RunResult],
    new_runs: Sequence[RunResult],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    movement: MovementSource | None = None,
) -> RunComparison:
    """Compare runs of the same profile on two sides, each side one run or several.

    Jobs pair by `match_key` between the first run of each side; each repeat contributes
    its own job of the same key (its n-th repetition). One run a side: the ratio of
    medians and `median_ratio.compare`'s interval, which covers the spread of the samples within
    each run only, so no verdict (`evidence.decide`) unless `movement` (the store's runs
    of the same jobs: app/core/analysis/spread.py) measured how much a whole run moves.
    Several a side: the ratio of the mean of the runs' medians, and a two-level bootstrap
    (runs drawn with replacement, then each drawn run's medians resampled), so the interval
    covers how much a whole run moves too.
    """
    base, new = base_runs[0], new_runs[0]
    waiting: dict[MatchKey, list[JobResult]] = {}
    for job in new.jobs:
        waiting.setdefault(match_key(job), []).append(job)
    matched: list[tuple[JobResult, JobResult]] = []
    only_base: list[JobResult] = []
    for job in base.jobs:
        candidates = waiting.get(match_key(job))
        if candidates:
            matched.append((job, candidates.pop(0)))  # a repeated job pairs with its n-th repetition
        else:
            only_base.append(job)
    left = {id(job) for jobs in waiting.values() for job in jobs}
    only_new = [job for job in new.jobs if id(job) in left]  # in the new run's order
    if len(base_runs) == len(new_runs) == 1:
        resamples, exact = _resamples(matched)
    else:  # every run's samples are resampled, the repeats' too
        resamples = MIN_RESAMPLES * 2
        exact = _drawn([*base_runs, *new_runs]) * resamples > DRAW_BUDGET
    base_repeats, new_repeats = _Repeats(base_runs[1:]), _Repeats(new_runs[1:])
    withheld = reduced_sides(base_runs, new_runs)
    shared = _Evidence(withheld, movement)
    pairs = tuple(_pair(b, n, resamples, exact, base_repeats.of(b), new_repeats.of(n), shared) for b, n in matched)
    return RunComparison(
        base=base,
        new=new,
        pairs=pairs,
        only_base=tuple(only_base),
        only_new=tuple(only_new),
        environment=tuple(environment_differences(base.environment, new.environment)),
        threshold=threshold,
        resamples=resamples,
        exact_medians=exact,
        base_runs=tuple(base_runs),
        new_runs=tuple(new_runs),
    )


class _Repeats:
    """The repeat runs of one side, by job key."""

    def __init__(self, runs: Sequence[RunResult]) -> None:
        self.by_key: list[dict[MatchKey, list[JobResult]]] = []
        for run in runs:
            keyed: dict[MatchKey, list[JobResult]] = {}
            for job in run.jobs:
                keyed.setdefault(match_key(job), []).append(job)
            self.by_key.append(keyed)

    def of(self, job: JobResult) -> list[JobResult]:
        """The same job in each repeat run that measured it (a profile cannot hold one job
        twice: `resolve_jobs` refuses repeats, so the first of its key is the one)."""
        return [
            jobs[0] for keyed in self.by_key if (jobs := keyed.get(match_key(job))) and jobs[0].status == JobStatus.OK
        ]


def _comparable(pair: tuple[JobResult, JobResult]) -> Iterable[tuple[Sequence[float], Sequence[float]]]:
    base, new = pair
    if base.status != JobStatus.OK or new.status != JobStatus.OK:
        return []
    return [(base.metrics[m].samples, new.metrics[m].samples) for m in base.metrics if m in new.metrics]


def _resamples(matched: Sequence[tuple[JobResult, JobResult]]) -> tuple[int, bool]:
    """Resamples per metric, and whether the medians are drawn from their order statistics.

    BOOTSTRAP_RESAMPLES per metric, fewer when the whole comparison would draw more than
    DRAW_BUDGET samples, down to MIN_RESAMPLES. Where even MIN_RESAMPLES would pass the
    budget (a million samples a side: 500 resamples drew 2e9 samples, over 40 s), every
    median is drawn from the order statistics instead (`order_statistics.order_statistic_medians`:
    the same distribution, two draws per resample instead of n), BOOTSTRAP_RESAMPLES of
    them unless that passes the budget too (thousands of metrics), never under
    MIN_RESAMPLES. Decided from the sample counts alone, so a comparison always gives the
    same figures whichever machine computes it."""
    sets = [len(x) for pair in matched for a, b in _comparable(pair) for x in (a, b)]
    drawn = sum(sets)
    if drawn * BOOTSTRAP_RESAMPLES <= DRAW_BUDGET:
        return BOOTSTRAP_RESAMPLES, False
    if drawn * MIN_RESAMPLES <= DRAW_BUDGET:
        return DRAW_BUDGET // drawn, False
    exact_drawn = 2 * len(sets)
    return max(MIN_RESAMPLES, min(BOOTSTRAP_RESAMPLES, DRAW_BUDGET // exact_drawn)), True


def _drawn(runs: Sequence[RunResult]) -> int:
    """Every sample of every job of `runs`: what a comparison of them resamples at most."""
    return sum(len(m.samples) for run in runs for job in run.jobs for m in job.metrics.values())


def _status_reason(base: JobResult, new: JobResult) -> str | None:
    parts = [
        f"{side} {job.status}" + (f": {job.error}" if job.error else "")
        for side, job in (("baseline", base), ("new run", new))
        if job.status != JobStatus.OK
    ]
    return "; ".join(parts) or None


@dataclass(frozen=True)
class _Evidence:
    """What every metric of a comparison shares for its verdict: why none at all (a reduced
    run), and where one run a side finds how much runs move."""

    withheld: str | None = None
    movement: MovementSource | None = None


def _pair(
    base: JobResult,
    new: JobResult,
    resamples: int,
    exact: bool = False,
    base_more: Sequence[JobResult] = (),
    new_more: Sequence[JobResult] = (),
    evidence: _Evidence | None = None,
) -> JobPair:
    reason = _status_reason(base, new)
    if reason is not None:
        return JobPair(base, new, (), reason)
    names = list(base.metrics) + [name for name in new.metrics if name not in base.metrics]
    shared = evidence or _Evidence()
    return JobPair(
        base,
        new,
        tuple(_metric(base, new, name, resamples, base_more, new_more, exact=exact, evidence=shared) for name in names),
    )


def _metric(
    base: JobResult,
    new: JobResult,
    name: str,
    resamples: int,
    base_more: Sequence[JobResult] = (),
    new_more: Sequence[JobResult] = (),
    *,
    exact: bool = False,
    evidence: _Evidence | None = None,
) -> MetricComparison:
    """One metric of a pair; its verdict is the evidence rule's (`evidence.decide`)."""
    shared = evidence or _Evidence()
    mb, mn = base.metrics.get(name), new.metrics.get(name)
    present = mb if mb is not None else mn
    unit = present.stats.unit if present is not None else "s"

    def not_comparable(reason: str, undecided: bool = False, too_few: bool = False) -> MetricComparison:
        return MetricComparison(
            name,
            unit,
            mb.stats.median if mb else None,
            mn.stats.median if mn else None,
            None,
            Verdict.NO_VERDICT if too_few else Verdict.NOT_COMPARABLE,
            reason,
            len(mb.samples) if mb else 0,
            len(mn.samples) if mn else 0,
            undecided,
            too_few,
        )

    if mb is None or mn is None:
        return not_comparable(f"measured only in the {'new run' if mb is None else 'baseline'}")
    if mb.stats.unit != mn.stats.unit:
        return not_comparable(f"units differ ({mb.stats.unit} in the baseline, {mn.stats.unit} in the new run)")
    if not len(mb.samples) or not len(mn.samples):
        side = "baseline" if not len(mb.samples) else "new run"
        return not_comparable(f"no raw samples in the {side} (saved without them)")
    base_sets = [mb.samples, *_samples_of(base_more, name, mb.stats.unit)]
    new_sets = [mn.samples, *_samples_of(new_more, name, mb.stats.unit)]
    repeated = len(base_sets) > 1 and len(new_sets) > 1
    sides = Sides(
        min(len(x) for x in base_sets),
        min(len(x) for x in new_sets),
        len(base_sets) if repeated else 1,
        len(new_sets) if repeated else 1,
        shared.withheld,
        shared.movement.of(base, name) if shared.movement is not None and not repeated else None,
    )
    early = samples_first(sides)
    if early is not None:
        return not_comparable(early.reason or "", too_few=True)
    try:
        if repeated:
            result = compare_repeated(base_sets, new_sets, resamples=resamples, exact=exact)
        else:
            result = compare(mb.samples, mn.samples, resamples=resamples, exact=exact)
    except ValueError as exc:  # a baseline median of 0, a ratio that overflows: no finite ratio
        return not_comparable(str(exc), undecided=True)
    decision = decide(result, sides)
    return MetricComparison(
        name,
        mb.stats.unit,
        mb.stats.median,
        mn.stats.median,
        result,
        decision.verdict,
        decision.reason,
        sum(len(x) for x in base_sets),
        sum(len(x) for x in new_sets),
        one_run=decision.one_run,
        movement=sides.movement if decision.verdict != Verdict.NO_VERDICT else None,
    )


def _samples_of(jobs: Sequence[JobResult], name: str, unit: str) -> list[Sequence[float]]:
    """The metric's samples in each repeat that measured it in the same unit."""
    return [
        job.metrics[name].samples
        for job in jobs
        if name in job.metrics and job.metrics[name].stats.unit == unit and len(job.metrics[name].samples)
    ]


def compare_repeated(
    base_runs: Sequence[Sequence[float]],
    new_runs: Sequence[Sequence[float]],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = 0,
    exact: bool | None = None,
) -> Comparison:
    """Ratio new / base of the mean of the runs' medians, with a two-level bootstrap 95 %
    interval: each resample draws as many runs as the side has, with replacement, and
    for each drawn run one of its own bootstrap medians; the side's statistic is their
    mean. Run-to-run variation therefore widens the interval, as it should. Seeded.
    `exact` as for `median_ratio.compare` (None: decided from these runs' sizes)."""
    if exact is None:
        exact = exact_medians_needed([len(run) for run in [*base_runs, *new_runs]], resamples)
    rng = np.random.default_rng(seed)

    def side(runs: Sequence[Sequence[float]]) -> tuple[float, np.ndarray]:
        arrays = [np.asarray(run, dtype=np.float64) for run in runs]
        for array in arrays:
            if array.size == 0 or not np.all(np.isfinite(array)):
                raise ValueError("empty or non-finite samples")
        # Memory-bounded, as the one-run comparison's (a run may hold 100,000 samples).
        medians = np.stack([bootstrap_medians(a, resamples, rng, exact=exact) for a in arrays])  # runs x resamples
        picks = rng.integers(0, len(arrays), size=(resamples, len(arrays)))
        drawn = medians[picks, np.arange(resamples)[:, None]]  # resamples x runs
        return float(np.mean([np.median(a) for a in arrays])), drawn.mean(axis=1)

    with np.errstate(over="ignore"):  # medians near 1e308 overflow to inf: no verdict (finite_comparison)
        base_point, base_boot = side(base_runs)
        new_point, new_boot = side(new_runs)
    if base_point == 0:
        raise ValueError("median of the baseline is 0: the ratio is undefined")
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        ratios = new_boot / base_boot
        ratio = new_point / base_point
    return finite_comparison(ratio, ratios, base_point, new_point)


# --- the environment -------------------------------------------------------------------------


def _get(env: Any, *keys: str) -> Any:
    """A nested value, or None where any level is missing or not an object (older files)."""
    value: Any = env
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _text(value: Any) -> str | None:
    if value is None or value == [] or value == "":
        return None
    if isinstance(value, bool):
        return "present" if value else "absent"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _facts(env: Mapping[str, Any]) -> dict[str, str | None]:
    """The facts a comparison states, by name, in the order they are shown."""
    python = " ".join(
        str(v) for v in (_get(env, "python", "implementation"), _get(env, "python", "version")) if v is not None
    )
    facts: dict[str, str | None] = {
        "machine": _text(env.get("hostname")),
        "CPU model": _text(_get(env, "cpu", "model")),
        "logical cores": _text(_get(env, "cpu", "logical_cores")),
        "physical cores": _text(_get(env, "cpu", "physical_cores")),
        "CPU governor": _text(_get(env, "cpu", "governors")),
    }
    for flag, label in CPU_FLAGS.items():
        facts[f"CPU flag {label}"] = _text(_get(env, "cpu", "flags", flag))
    facts["OS"] = _text(_get(env, "os", "pretty_name") or _get(env, "os", "system"))
    facts["kernel"] = _text(_get(env, "os", "release"))
    facts["Python"] = python or None
    facts["CryptoBench"] = _text(env.get("app_version"))
    libraries = env.get("libraries")
    for name in libraries if isinstance(libraries, Mapping) else ():
        facts[f"{name} version"] = _text(_get(libraries, name, "version"))
        if _get(libraries, name, "openssl") is not None:
            facts[f"{name} OpenSSL"] = _text(_get(libraries, name, "openssl"))
    return facts


def environment_differences(base_env: Mapping[str, Any], new_env: Mapping[str, Any]) -> list[EnvDifference]:
    """Every fact that differs: machine name, CPU model and flags, cores, governor, OS and
    kernel, Python, CryptoBench, each library's version and the OpenSSL it uses.

    A fact one run did not record (an older results file) counts as different, its side
    None: "unknown" is not "the same".
    """
    base, new = _facts(base_env), _facts(new_env)
    names = list(base) + [name for name in new if name not in base]
    return [EnvDifference(name, base.get(name), new.get(name)) for name in names if base.get(name) != new.get(name)]

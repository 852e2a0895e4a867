"""How much whole runs of identical code move on one machine, measured from the store.

One run's bootstrap interval covers the spread of its samples, not how much a whole run
moves: process layout, caches, the clock and the host differ from one run to the next
(two back-to-back runs of `quick` on the development VM: docs/comparing.md). So a
comparison of one run a side has no verdict (app/core/analysis/evidence.py) unless this
module finds, in the store, enough runs of the same job on the same machine with the same
versions to measure that movement.

For each job of the baseline and each metric: the stored runs whose environment does not
differ from the baseline's as far as the store keeps it beside each row (its brief:
machine, CPU model, OS, Python and every library's version), with no mark (not reduced, no override), that measured
the metric with at least `MIN_SAMPLES` samples, started no later than the baseline (a later
run may be other code under the same version strings); the baseline run itself counts,
the new side's runs never do. From at least `MIN_MOVEMENT_RUNS` of them: the largest median over
the smallest (`max_ratio`, what the note quotes), and `bound`, how far a new run of
identical code may lie from one of them 99 times in 100: exp(t · s · √2), s the standard
deviation of the medians' logarithms and t Student's 99.5th percentile for runs − 1
degrees of freedom (few runs, a wide bound). Simulated with normal run effects, a new run
passes the bound in 0.4 to 0.7 % of metrics for 3 to 10 stored runs; the plain largest
over smallest in 29 % with 3 stored runs, 6 % with 8 (so it is what the note quotes, not
what the verdict uses).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from app.core.analysis.compare import MatchKey, environment_differences, match_key
from app.core.analysis.evidence import MIN_MOVEMENT_RUNS, MIN_SAMPLES, RunMovement
from app.core.analysis.trend import job_history
from app.core.results.model import JobResult, RunResult
from app.core.store.columns import read_brief, run_brief
from app.core.store.store import Store, StoredJob
from app.core.vocab import JobStatus

__all__ = ["StoreMovement", "movement_bound", "store_movement"]

#: Student's t, 99.5th percentile, by degrees of freedom (1-30); beyond, the normal's.
_T_995 = (
    63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355, 3.250, 3.169,
    3.106, 3.055, 3.012, 2.977, 2.947, 2.921, 2.898, 2.878, 2.861, 2.845,
    2.831, 2.819, 2.807, 2.797, 2.787, 2.779, 2.771, 2.763, 2.756, 2.750,
)  # fmt: skip
_Z_995 = 2.576


def movement_bound(medians: Sequence[float]) -> RunMovement | None:
    """How much runs whose medians are `medians` move (see the module's docstring); None
    with fewer than MIN_MOVEMENT_RUNS, or a median that is not positive."""
    if len(medians) < MIN_MOVEMENT_RUNS or min(medians) <= 0:
        return None
    logs = [math.log(m) for m in medians]
    mean = sum(logs) / len(logs)
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))
    df = len(logs) - 1
    t = _T_995[df - 1] if df <= len(_T_995) else _Z_995
    return RunMovement(runs=len(medians), max_ratio=max(medians) / min(medians), bound=math.exp(t * sd * math.sqrt(2)))


@dataclass(frozen=True)
class StoreMovement:
    """Per job of a baseline and metric, how much its runs moved (`of`: None where the
    store holds too few runs of it)."""

    machine: str | None
    moved: Mapping[tuple[MatchKey, str], RunMovement] = field(default_factory=dict)

    def of(self, job: JobResult, metric: str) -> RunMovement | None:
        return self.moved.get((match_key(job), metric))


def _medians(rows: Iterable[StoredJob], metric: str) -> list[float]:
    medians: dict[str, float] = {}
    for row in rows:
        figure = row.metrics.get(metric)
        if row.status != JobStatus.OK or figure is None or figure.n < MIN_SAMPLES or row.run_id in medians:
            continue
        medians[row.run_id] = figure.median
    return list(medians.values())


def _own_median(job: JobResult, metric: str) -> list[float]:
    result = job.metrics.get(metric)
    return [result.stats.median] if result is not None and result.stats.n >= MIN_SAMPLES else []


def store_movement(store: Store, base_runs: Sequence[RunResult], new_runs: Sequence[RunResult]) -> StoreMovement:
    """How much the baseline's jobs move between runs on its machine, from `store`'s runs
    (see the module's docstring). Nothing is measured when the two sides ran on different
    machines: one machine's movement says nothing of another's."""
    base = base_runs[0]
    machine = base.environment_view.hostname
    new_ids = {run.id for run in new_runs}
    where = (machine, base.environment_view.cpu_model)
    if any((run.environment_view.hostname, run.environment_view.cpu_model) != where for run in new_runs):
        return StoreMovement(machine)
    until = _moment(base.started)
    # A stored row carries its run's brief (store/columns.py), not its whole environment:
    # machine, CPU model, OS, Python and each library's version. The baseline is held to it
    # in the same shape, so a run that differs only in what the brief leaves out
    # (CryptoBench's version, the kernel, the governor) counts as the same.
    brief = read_brief(run_brief(base.environment, {}))[0]
    moved: dict[tuple[MatchKey, str], RunMovement] = {}
    for job in base.jobs:
        if job.status != JobStatus.OK:
            continue
        key = match_key(job)
        rows = [
            row
            for row in job_history(store, key)
            if row.run_id not in new_ids
            and not row.run_marks
            and _not_after(row.run_started, until)
            and not environment_differences(brief, row.environment)
        ]
        # A baseline read from a file counts as one of its runs.
        own = not any(row.run_id == base.id for row in rows) and not base.profile_view.marks
        for metric in job.metrics:
            movement = movement_bound(_medians(rows, metric) + (_own_median(job, metric) if own else []))
            if movement is not None:
                moved[(key, metric)] = movement
    return StoreMovement(machine, moved)


def _moment(text: str) -> datetime | None:
    """A run's start as an instant (a time without an offset taken as UTC); None if it is none."""
    try:
        moment = datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def _not_after(started: str, until: datetime | None) -> bool:
    """Whether a run that started at `started` started no later than `until`; a start that
    does not read as a time, or a baseline without one, cannot be placed: never counted."""
    moment = _moment(started)
    return moment is not None and until is not None and moment <= until

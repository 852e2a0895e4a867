"""Warnings about the machine or the run, not about one job's numbers: said once per run.

The runner puts the same `frequency-scaling` (the CPU governor is not `performance`) and
`parallel-jobs` warning on every measured job of a run. Each result keeps it: a result read
on its own (its JSON, the store, a CSV row, the results table's Warnings cell) must still
say that its clock was not fixed or that it ran beside other jobs. What shows a whole run
says it once instead of once per job: the CLI's summary, the window's log and the report
list each job's own warnings (`job_only`) and each run-wide one once (`run_wide`), and leave
out those the run already stated before its first job (`stated_before_the_run`: the
pre-flight's governor finding, the parallel-workers line).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from app.core.records.recorded import RecordedEnvironment
from app.core.statistics.stability_warnings import StabilityWarning, WarningCode
from app.core.vocab import StabilityCode, StabilityStatus

__all__ = ["RUN_WIDE_CODES", "RunWide", "job_only", "run_wide", "stated_before_the_run"]

#: The warnings the runner gives every measured job of a run alike.
RUN_WIDE_CODES: frozenset[WarningCode] = frozenset({WarningCode.FREQUENCY_SCALING, WarningCode.PARALLEL_JOBS})

#: Which pre-flight fact (app/core/machine/preflight.py), when it is a finding, says the same as a
#: run-wide warning: a governor other than performance is what frequency-scaling reports.
_PREFLIGHT_FACT: dict[WarningCode, StabilityCode] = {WarningCode.FREQUENCY_SCALING: StabilityCode.GOVERNOR}


@dataclass(frozen=True, slots=True)
class RunWide:
    """One run-wide warning, as the first job carrying it has it, and how many jobs do."""

    warning: StabilityWarning
    jobs: int

    def on(self, measured: int, total: int) -> str:
        """ "all 3 measured jobs" (the runner's rule: every measured job), else "2 of 4 jobs"."""
        return f"all {measured} measured jobs" if self.jobs == measured else f"{self.jobs} of {total} jobs"


def job_only(warnings: Iterable[StabilityWarning]) -> list[StabilityWarning]:
    """A job's warnings without the run-wide ones (those are said once for the run)."""
    return [w for w in warnings if w.code not in RUN_WIDE_CODES]


def run_wide(warnings_by_job: Iterable[Iterable[StabilityWarning]]) -> list[RunWide]:
    """Each run-wide warning once, in the order first met, with the number of jobs carrying it."""
    found: dict[WarningCode, RunWide] = {}
    for warnings in warnings_by_job:
        for code in dict.fromkeys(w.code for w in warnings if w.code in RUN_WIDE_CODES):
            first = found.get(code)
            warning = first.warning if first is not None else next(w for w in warnings if w.code == code)
            found[code] = RunWide(warning, (first.jobs if first is not None else 0) + 1)
    return list(found.values())


def stated_before_the_run(environment: Mapping[str, Any]) -> frozenset[WarningCode]:
    """The run-wide warnings a run's environment already states, and its start logged: the
    pre-flight's governor finding (`environment["stability"]`), and parallel workers
    (`environment["parallel_workers"]` above 1, which the runner records with its warning)."""
    stated: set[WarningCode] = set()
    recorded = RecordedEnvironment.from_dict(environment)
    found = {fact.get("code") for fact in recorded.stability_facts if fact.get("status") == StabilityStatus.FINDING}
    stated.update(code for code, fact in _PREFLIGHT_FACT.items() if fact in found)
    if recorded.parallel_workers is not None and recorded.parallel_workers > 1:
        stated.add(WarningCode.PARALLEL_JOBS)
    return frozenset(stated)

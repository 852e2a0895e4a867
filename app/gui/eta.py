"""How long a run has left, for the status bar.

With the run's estimate (app.core.run.estimate.Refined): the remaining jobs' own
estimates, scaled by how the finished jobs compared with theirs: jobs of different sizes
are not assumed to take the average so far (at 2 of 70 jobs that said "about 19 s left"
for a run of 12 minutes). Without one (a job the estimate could not price): from the
time the finished jobs took and the progress of the running one, never "0 s" while a job
is still running.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.core.run.estimate import MIN_FRACTION, Refined
from app.gui.words import duration


@dataclass(frozen=True)
class Eta:
    seconds: float | None  # None: nothing to base an estimate on yet
    text: str


def time_left(
    refined: Refined | None,
    elapsed: float,
    finished: int,
    total: int,
    current_elapsed: float | None,
    current_fraction: float,
) -> Eta:
    """The status bar's time left: from `refined` where the run has an estimate, else
    `estimate`'s pace of the jobs so far."""
    if refined is None:
        return estimate(elapsed, finished, total, current_elapsed, current_fraction)
    finished_s = elapsed - (current_elapsed or 0.0)
    left = refined.left(finished_s, finished, current_elapsed, current_fraction)
    if not finished and current_elapsed is None:
        return Eta(left, f"about {duration(left)} left (estimated)")
    return Eta(left, f"about {duration(left)} left")


def estimate(elapsed: float, finished: int, total: int, current_elapsed: float | None, current_fraction: float) -> Eta:
    """`elapsed`: since the run started; `finished` of `total` jobs done; the running job
    started `current_elapsed` seconds ago (None: none running) and has done
    `current_fraction` of its samples."""
    if current_elapsed is None:
        remaining_jobs = max(total - finished, 0)
        if not finished or not remaining_jobs:
            return Eta(None, "")
        left = elapsed / finished * remaining_jobs
        return Eta(left, f"about {duration(left)} left")
    per_job = (elapsed - current_elapsed) / finished if finished else None
    after = max(total - finished - 1, 0)  # jobs after the running one
    if current_fraction >= MIN_FRACTION:
        current_left: float | None = current_elapsed * (1 - current_fraction) / current_fraction
    elif per_job is not None and current_elapsed < per_job:
        current_left = per_job - current_elapsed
    else:
        current_left = None  # running longer than the others took, no progress known
    if current_left is None:
        if per_job is None or not after:
            return Eta(None, f"current job running for {duration(current_elapsed)}")
        return Eta(
            None, f"about {duration(per_job * after)} after the current job (running for {duration(current_elapsed)})"
        )
    later = (per_job if per_job is not None else current_elapsed + current_left) * after
    left = current_left + later
    return Eta(left, f"about {duration(left)} left")

"""The minimum evidence for a verdict, one rule for every face that compares.

A comparison of two medians ranks them (faster, slower, a regression) only when each side
has enough samples for its median's 95 % interval to mean something. With n = 1 a side the
bootstrap interval of the ratio has zero width: not certainty, but no spread to measure.
The rule: at least `MIN_SAMPLES` a side. Ten is where the app's own stability check stops
warning about too few samples ("Only 3 samples (< 10)"); below six a distribution-free 95 %
interval of a median does not even exist (the whole sample range covers less than 95 %).

A reduced run (`run --reduced`, the window's Quick check) is a smoke test: whatever its
sample counts, it is never one side of a verdict. A run whose settings the command line
overrode (`--samples 3` on a preset) is compared like any other, but every comparison
names it, so it is never a silent baseline.

The regression gate (`compare --fail-on-regression`) fails a build, so it needs more: one
run's interval covers the spread of its samples, not how much a whole run moves (two runs
of identical code here differed by up to 1.6x on some metrics, intervals well clear of
1: docs/comparing.md). It checks a metric only with `MIN_GATE_RUNS` runs a side, whose
two-level bootstrap interval covers that movement. Three, not two: with two runs, half of
a side's resamples draw the same run twice and hide the movement again; with three, one
in nine.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.results.model import RunResult

#: Samples a side a verdict needs (see the module's docstring).
MIN_SAMPLES = 10
#: Runs a side the regression gate needs (see the module's docstring).
MIN_GATE_RUNS = 3


def too_few_samples(base_n: int, new_n: int) -> str | None:
    """What is said instead of a verdict when a side has too few samples, or None."""
    if base_n >= MIN_SAMPLES and new_n >= MIN_SAMPLES:
        return None
    return f"too few samples: n = {base_n} and {new_n} (a verdict needs {MIN_SAMPLES} a side); no verdict"


def too_few_runs(base_runs: int, new_runs: int) -> str | None:
    """What the gate says instead of checking when a side has too few runs, or None."""
    if base_runs >= MIN_GATE_RUNS and new_runs >= MIN_GATE_RUNS:
        return None
    return (
        f"too few runs for the gate: {base_runs} and {new_runs} (it needs {MIN_GATE_RUNS} a side, "
        "joined with +: A+B+C); not checked"
    )


def reduced_sides(base_runs: Sequence[RunResult], new_runs: Sequence[RunResult]) -> str | None:
    """Why no metric of these sides gets a verdict when a run of either is reduced, or None."""
    for side, runs in (("baseline", base_runs), ("new side", new_runs)):
        reduced = [run.id for run in runs if run.profile_view.reduced]
        if reduced:
            which = "run " + ", ".join(reduced) if len(runs) > 1 else "run"
            return f"the {side}'s {which} is reduced (a smoke test, not for comparison); no verdict"
    return None


def marked_name(run: RunResult) -> str:
    """The run's name as every list and title shows it: with its marks (reduced, overrides)."""
    return run.profile_view.marked_name

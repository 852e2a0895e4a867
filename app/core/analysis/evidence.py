"""The minimum evidence for a verdict, one rule for every face that compares or ranks.

Two questions, one rule each, and every face (the command line, the reports in Markdown
and PDF, the window) asks them here rather than deciding alone:

- **Two figures of one run** (`rank`): is one faster than the other? Only when each has
  `MIN_SAMPLES` samples and their medians' 95 % intervals do not overlap. With too few
  samples the answer is "no verdict: too few samples", whatever the gap: n = 3 and 3
  says nothing about order, however far apart the medians lie. Overlapping intervals are
  "cannot be told apart" only for figures at most `TOLD_APART_MAX`× apart; beyond that
  (a wide interval beside a narrow one) it is "no verdict" too, never "cannot be told
  apart" of a 600× gap. A figure that adds two medians (key generation + encryption) adds
  their intervals' ends too (`Estimate.plus`).
- **One figure in two runs** (`decide`): faster, slower, within noise, or no verdict?
  Only with `MIN_SAMPLES` a side and no reduced run; and a run's interval covers the
  spread of its samples, not how much a whole run moves (process layout, caches, the
  host): two back-to-back full runs of `quick` with identical code on the development VM
  had intervals clear of 1 on 31 of 71 metrics, medians up to 6.9× apart (docs/comparing.md,
  "One run a side"). So with one run on a side there is no
  verdict ("no verdict: one run a side") unless the store holds enough runs of the same
  job on the same machine to measure that movement (`RunMovement`,
  app/core/analysis/spread.py); the interval must then clear what those runs allow. With
  several runs a side (A+B+C) the two-level bootstrap covers the movement itself.

Ten samples is where the app's own stability check stops warning about too few samples
("Only 3 samples (< 10)"); below six a distribution-free 95 % interval of a median does
not even exist (the whole sample range covers less than 95 %).

A reduced run (`run --reduced`, the window's Quick check) is a smoke test: whatever its
sample counts, it is never one side of a verdict. A run whose settings the command line
overrode (`--samples 3` on a preset) is compared like any other, but every comparison
names it, so it is never a silent baseline.

The regression gate (`compare --fail-on-regression`) fails a build, so it needs more: it
checks a metric only with `MIN_GATE_RUNS` runs a side, whose two-level bootstrap interval
covers how much a run moves. Three, not two: with two runs, half of a side's resamples
draw the same run twice and hide the movement again; with three, one in nine.

Every verdict a report or the terminal writes in words carries its evidence in the same
words (`evidence_text`: the samples a side and both intervals), so that a reader, and the
report checker (tests/helpers/report_verdicts.py), can hold the words to the numbers.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from app.core.units import format_seconds
from app.core.vocab import Verdict

if TYPE_CHECKING:  # named in annotations only: the command line's parser reads the rules below
    # without loading the results model, numpy or the statistics
    from app.core.analysis.median_ratio import Comparison
    from app.core.results.model import JobResult, RunResult
    from app.core.statistics.stats import MetricStats

#: Samples a side a verdict needs (see the module's docstring).
MIN_SAMPLES = 10
#: A regression must be slower than this fraction (5 %), interval and all.
DEFAULT_THRESHOLD = 0.05
#: Runs a side the regression gate needs (see the module's docstring).
MIN_GATE_RUNS = 3
#: Stored runs of a job (on one machine, with the same versions) that measure how much a
#: whole run moves: fewer, and one run a side gets no verdict.
MIN_MOVEMENT_RUNS = 3
#: "Cannot be told apart" is said of figures at most this many times apart; overlapping
#: intervals of figures further apart are "no verdict" (one of them is too wide to say).
TOLD_APART_MAX = 3.0


# --- two figures of one run -------------------------------------------------------------------


@dataclass(frozen=True)
class Estimate:
    """A figure with what a verdict on it needs: its median, its 95 % interval (None: too
    few samples for one) and its samples."""

    median: float
    ci95: tuple[float, float] | None
    n: int

    @classmethod
    def of(cls, stats: MetricStats) -> Estimate:
        return cls(stats.median, stats.ci95, stats.n)

    def plus(self, other: Estimate) -> Estimate:
        """The sum of two figures (keygen + encrypt): medians added, and the interval's ends
        added too (at least 90 % coverage, from two 95 % intervals); the fewer samples."""
        ci = None
        if self.ci95 is not None and other.ci95 is not None:
            ci = (self.ci95[0] + other.ci95[0], self.ci95[1] + other.ci95[1])
        return Estimate(self.median + other.median, ci, min(self.n, other.n))


class Standing(enum.StrEnum):
    """How two figures of one run stand (`rank`)."""

    #: Enough samples, and intervals that do not overlap: one is faster.
    ORDERED = "ordered"
    #: A side has fewer than MIN_SAMPLES samples: no verdict, however far apart.
    TOO_FEW = "too few samples"
    #: A side has no interval of its median: no verdict.
    NO_INTERVAL = "no interval"
    #: The intervals overlap, the medians at most TOLD_APART_MAX apart: cannot be told apart.
    OVERLAP = "cannot be told apart"
    #: The intervals overlap, the medians further apart: no verdict.
    WIDE = "wide"


@dataclass(frozen=True)
class Ranking:
    """Two figures of one run, `first` and `second`, as the rule stands them."""

    first: Estimate
    second: Estimate
    standing: Standing

    @property
    def ordered(self) -> bool:
        return self.standing == Standing.ORDERED

    @property
    def ratio(self) -> float:
        """The larger median over the smaller (1 when either is not positive)."""
        low, high = sorted((self.first.median, self.second.median))
        return high / low if low > 0 else 1.0

    def no_verdict(self, fmt: Callable[[float], str] = format_seconds) -> str:
        """Why there is no order, in words that follow the two figures: "cannot be told
        apart (...)" or "no verdict: too few samples (...)"; empty when ordered."""
        counts = f"n = {self.first.n:,} and {self.second.n:,}"
        if self.standing == Standing.ORDERED:
            return ""
        if self.standing == Standing.TOO_FEW:
            return f"no verdict: too few samples ({counts}; a verdict needs {MIN_SAMPLES} a side)"
        if self.standing == Standing.NO_INTERVAL:
            return f"no verdict: no 95 % interval of a median ({counts})"
        if self.standing == Standing.OVERLAP:
            return f"cannot be told apart (their 95 % intervals overlap: {evidence_text(self, fmt)})"
        return f"no verdict: their 95 % intervals overlap ({evidence_text(self, fmt)})"


def rank(first: Estimate, second: Estimate) -> Ranking:
    """How two figures of one run stand: ordered only with MIN_SAMPLES a side and 95 %
    intervals of their medians that do not overlap (see the module's docstring)."""
    if first.n < MIN_SAMPLES or second.n < MIN_SAMPLES:
        return Ranking(first, second, Standing.TOO_FEW)
    if first.ci95 is None or second.ci95 is None:
        return Ranking(first, second, Standing.NO_INTERVAL)
    low, high = (first, second) if first.median <= second.median else (second, first)
    assert low.ci95 is not None and high.ci95 is not None
    if low.ci95[1] < high.ci95[0]:
        return Ranking(first, second, Standing.ORDERED)
    ranking = Ranking(first, second, Standing.OVERLAP)
    return ranking if ranking.ratio <= TOLD_APART_MAX else Ranking(first, second, Standing.WIDE)


def interval_text(estimate: Estimate, fmt: Callable[[float], str] = format_seconds) -> str:
    """An estimate's 95 % interval in words ("2.51 µs to 2.63 µs"; one value where both
    ends read the same), or "none" below six samples."""
    if estimate.ci95 is None:
        return "none"
    low, high = fmt(estimate.ci95[0]), fmt(estimate.ci95[1])
    return low if low == high else f"{low} to {high}"


def evidence_text(ranking: Ranking, fmt: Callable[[float], str] = format_seconds) -> str:
    """What a verdict on two figures rests on, in the words every face writes after it:
    "n = 20 and 20, 95 % intervals 2.51 µs to 2.63 µs and 74 µs to 77.2 µs"."""
    return (
        f"n = {ranking.first.n:,} and {ranking.second.n:,}, 95 % intervals "
        f"{interval_text(ranking.first, fmt)} and {interval_text(ranking.second, fmt)}"
    )


def ratio_interval_text(comparison: Comparison) -> str:
    """A ratio's 95 % interval in words: "1.25× to 1.35×" (one value where both ends read the same)."""
    low, high = f"{comparison.ci95_low:.2f}×", f"{comparison.ci95_high:.2f}×"
    return low if low == high else f"{low} to {high}"


def ratio_evidence_text(comparison: Comparison, base_n: int, new_n: int) -> str:
    """What a verdict on one figure in two runs rests on, in the words every face writes
    after it: "95 % interval 1.25× to 1.35×, n = 40 and 40" (baseline first)."""
    return f"95 % interval {ratio_interval_text(comparison)}, n = {base_n:,} and {new_n:,}"


# --- one figure in two runs -------------------------------------------------------------------


@dataclass(frozen=True)
class RunMovement:
    """How much whole runs of one job moved on one machine with the same versions: the
    spread of their medians of one metric (`max_ratio`, the largest over the smallest),
    over `runs` stored runs, and `bound`, the ratio a new run of identical code stays
    within 99 times in 100 (app/core/analysis/spread.py)."""

    runs: int
    max_ratio: float
    bound: float


class MovementSource(Protocol):
    """Where a comparison of one run a side finds how much runs move (a store's runs)."""

    def of(self, job: JobResult, metric: str) -> RunMovement | None: ...


@dataclass(frozen=True)
class Sides:
    """What a comparison of one metric stands on: the fewest samples of a run on each side,
    how many runs each side has, why no verdict at all (a reduced run), and, with one run
    a side, how much runs of the job move here (None: not measured)."""

    base_n: int
    new_n: int
    base_runs: int = 1
    new_runs: int = 1
    withheld: str | None = None
    movement: RunMovement | None = None

    @property
    def one_run(self) -> bool:
        """A side has one run: its interval covers none of a whole run's movement."""
        return self.base_runs < 2 or self.new_runs < 2


@dataclass(frozen=True)
class Decision:
    """A verdict and why (`reason`: why there is none, or what it was judged against)."""

    verdict: Verdict
    reason: str | None = None
    #: No verdict for want of samples or because a side is a reduced run.
    too_few: bool = False
    #: No verdict because a side has one run and no movement was measured.
    one_run: bool = False


#: What is said instead of a verdict with one run a side and no measured movement.
ONE_RUN = "one run a side"


def samples_first(sides: Sides) -> Decision | None:
    """The decision before any ratio is computed: a reduced run, or too few samples."""
    if sides.withheld is not None:
        return Decision(Verdict.NO_VERDICT, sides.withheld, too_few=True)
    thin = too_few_samples(sides.base_n, sides.new_n)
    if thin is not None:
        return Decision(Verdict.NO_VERDICT, thin, too_few=True)
    return None


def decide(comparison: Comparison, sides: Sides) -> Decision:
    """The verdict on one metric of two runs (see the module's docstring): no verdict with a
    reduced run or too few samples; with one run a side, none unless runs' movement was
    measured, and then only beyond it; with several runs a side, the interval against 1."""
    early = samples_first(sides)
    if early is not None:
        return early
    if sides.one_run:
        movement = sides.movement
        if movement is None:
            return Decision(Verdict.NO_VERDICT, ONE_RUN, one_run=True)
        allowed = f"the {movement.bound:.2f}× its {movement.runs} stored runs here allow"
        if comparison.ci95_low > movement.bound:
            return Decision(Verdict.SLOWER, f"beyond {allowed}")
        if comparison.ci95_high < 1 / movement.bound:
            return Decision(Verdict.FASTER, f"beyond {allowed}")
        return Decision(Verdict.WITHIN_NOISE, f"within {allowed}")
    if not comparison.significant:
        return Decision(Verdict.WITHIN_NOISE)
    return Decision(Verdict.SLOWER if comparison.ratio > 1 else Verdict.FASTER)


def too_few_samples(base_n: int, new_n: int) -> str | None:
    """What is said instead of a verdict when a side has too few samples, or None."""
    if base_n >= MIN_SAMPLES and new_n >= MIN_SAMPLES:
        return None
    return f"too few samples: n = {base_n} and {new_n} (a verdict needs {MIN_SAMPLES} a side)"


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
            return f"the {side}'s {which} is reduced (a smoke test, not for comparison)"
    return None


def marked_name(run: RunResult) -> str:
    """The run's name as every list and title shows it: with its marks (reduced, overrides)."""
    return run.profile_view.marked_name

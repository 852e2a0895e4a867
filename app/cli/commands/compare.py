"""`cryptobench compare`: runs from this machine or others, side by side.

compare BASE NEW [NEW2 ...]: each a stored run's id (or unique prefix) or a results JSON
file. For each NEW, the environment differences first, then every metric of every
matched job (ratio of medians new / base, its 95 % bootstrap interval, the verdict),
then the jobs without a match. The statistics and the regression rule are
`app.core.analysis.compare`'s (docs/comparing.md).

Exit codes: 0 compared (regressions or not, unless --fail-on-regression); 1 with
--fail-on-regression when a metric regressed, or a job that measured in the base run
failed in the new one, named on stderr; 2 bad input (a file that
is not results, an unknown run id, a bad --threshold) and, with --fail-on-regression,
runs without a single matched job (a gate that compared nothing must not pass) or a
metric measured on both sides whose ratio is not a finite number (no verdict: it must
neither pass nor fail the gate), or no metric with the evidence for a verdict: runs
a side for the gate, samples a side, no reduced run (a metric without it neither passes
nor fails: app.core.analysis.evidence)."""

from __future__ import annotations

import argparse
import json
import math
from typing import TYPE_CHECKING, Any

from app.cli.common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    add_store_option,
    is_regular_file,
    load_run_source,
    shown_argument,
    stored_movement,
)
from app.cli.common import console as _console
from app.cli.terminal.console import escape
from app.cli.terminal.lines import say
from app.core.analysis.evidence import (
    DEFAULT_THRESHOLD,
    MIN_GATE_RUNS,
    MIN_MOVEMENT_RUNS,
    MIN_SAMPLES,
    marked_name,
)
from app.core.vocab import Mode, Verdict
from app.report.units import format_bytes, format_seconds

if TYPE_CHECKING:  # the statistics load when the command runs, not when the parser is built
    from app.core.analysis.compare import JobPair, MetricComparison, RunComparison
    from app.core.results.model import JobResult, RunResult

NAME = "compare"
HELP = "compare runs metric by metric (ratio of medians, 95 %% interval, verdict) and state what changed between their machines"
GUIDES = ("docs/comparing.md",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "base",
        metavar="BASE",
        help=f"the baseline: {_RUN_HELP}; several runs of one side joined "
        "with + (a.json+b.json+c.json): the interval then covers how "
        "much a whole run moves too",
    )
    p.add_argument(
        "new", metavar="NEW", nargs="+", help=f"each compared against BASE: {_RUN_HELP}, or runs joined with +"
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="print the comparison to stdout as JSON (every matched metric with its ratio, interval and "
        "verdict) instead of the table",
    )
    p.add_argument(
        "--fail-on-regression",
        action="store_true",
        help="exit 1 when a metric is slower beyond the threshold, interval and all; checked only with "
        f"{MIN_GATE_RUNS} runs a side (BASE1+BASE2+BASE3 NEW1+NEW2+NEW3), {MIN_SAMPLES} samples a side "
        "and no reduced run; exit 2 when no metric could be checked",
    )
    p.add_argument(
        "--threshold",
        metavar="PCT",
        default=None,
        help=f"what counts as a regression: 5%% or 0.05 (default {DEFAULT_THRESHOLD * 100:g}%%)",
    )
    add_store_option(p, "read the runs from (a results JSON file is read directly)")


_RUN_HELP = "a stored run's id (or a unique prefix), or a results JSON file (from any machine)"


def parse_threshold(text: str | None) -> float:
    """ "5%" or "0.05" as 0.05; UsageError naming --threshold for anything else."""
    if text is None:
        return DEFAULT_THRESHOLD
    raw = text.strip()
    percent = raw.endswith("%")
    try:
        value = float(raw[:-1] if percent else raw)
    except ValueError:
        value = math.nan
    if percent:
        value /= 100
    if not math.isfinite(value) or not 0 <= value <= 10:
        raise UsageError(
            f"--threshold: expected a fraction such as 0.05 or a percentage such as 5%, from 0 to 1000%, not {text!r}"
        )
    if value >= 1 and not percent:
        raise UsageError(f"--threshold: {text} would be {value:.0%}; write {text}% for {text} per cent")
    return value


def load_side(text: str, store: str | None) -> list[RunResult]:
    """One side of a comparison: a run, or several joined with + (a file whose name has a
    + in it is still one run)."""
    if "+" not in text or is_regular_file(text):
        return [load_run_source(text, store)]
    parts = text.split("+")
    if not all(parts):
        raise UsageError(f"{shown_argument(text)}: an empty run between the + signs")
    return [load_run_source(part, store) for part in parts]


def run(args: argparse.Namespace) -> int:
    from app.core.analysis.compare import compare_sides

    threshold = parse_threshold(args.threshold)
    base = load_side(args.base, args.store)
    comparisons = []
    for text in args.new:
        new = load_side(text, args.store)
        # One run a side: its verdicts need how much runs move here, from the store's runs.
        movement = stored_movement(args.store, base, new) if len(base) < 2 or len(new) < 2 else None
        comparisons.append(compare_sides(base, new, threshold=threshold, movement=movement))
    if args.json:
        print(
            json.dumps(
                {
                    "threshold": threshold,
                    "comparisons": [c.to_dict() for c in comparisons],
                    "regressions": sum(len(c.regressions()) for c in comparisons),
                },
                indent=2,
                allow_nan=False,  # strict JSON: a ratio that is not finite is null, never Infinity
            )
        )
    else:
        console = _console()
        for i, comparison in enumerate(comparisons):
            if i:
                console.print()
            _print_comparison(console, comparison)
    unmatched = [c for c in comparisons if not c.pairs]
    for c in unmatched:
        say(
            _plain(
                f"cryptobench: warning: no job of run {c.new.id} matches a job of run {c.base.id} "
                "(scheme, backend, parameters, mode, size, link and placement): nothing was compared"
            ),
            err=True,
        )
    if not args.fail_on_regression:
        return EXIT_OK
    return _gate(comparisons, threshold, bool(unmatched))


def _gate(comparisons: list[RunComparison], threshold: float, unmatched: bool) -> int:
    """The regression gate's verdict and what it says on stderr. It fails (1) only on the
    evidence `app.core.analysis.evidence` asks for: a metric of a comparison with fewer
    runs a side than MIN_GATE_RUNS, or too few samples, or a reduced run, is not checked,
    and said so; a gate that checked nothing exits 2."""
    checked = [c for c in comparisons if c.gate_reason is None]
    measured = sum(1 for c in comparisons for _, m in c.metrics if m.base_n and m.new_n)
    unchecked_runs = sum(1 for c in comparisons if c.gate_reason for _, m in c.metrics if m.base_n and m.new_n)
    for c in comparisons:
        if c.gate_reason is not None:
            versus = f" ({c.new.id})" if len(comparisons) > 1 else ""
            say(f"cryptobench: note: --fail-on-regression: {c.gate_reason}{versus}", err=True)
    thin = sum(len(c.too_few()) for c in checked)
    if thin or unchecked_runs:
        # Never a failure: a metric without the evidence for a verdict neither passes nor fails.
        parts = []
        if unchecked_runs:
            parts.append(f"{unchecked_runs} had too few runs a side ({MIN_GATE_RUNS})")
        if thin:
            parts.append(f"{thin} had too few samples ({MIN_SAMPLES} a side) or a reduced run")
        say(
            f"cryptobench: note: --fail-on-regression: of {measured} metric(s) measured on both sides, "
            f"{' and '.join(parts)}, and were not checked",
            err=True,
        )
    regressed = [(c, p, m) for c in checked for p, m in c.regressions()]
    if regressed:
        say(
            f"cryptobench: regression: {len(regressed)} metric(s) slower by more than {_percent(threshold)}, "
            "the 95 % interval's low end above it too:",
            err=True,
        )
        for c, p, m in regressed:
            versus = f" ({c.new.id})" if len(comparisons) > 1 else ""
            say(_plain(f"  {_job_text(p.new)} {m.metric}: {_ratio(m)}{versus}"), err=True)
    # A job that measured in the base run and failed in the new one needs no statistics.
    broken = [(c, p) for c in comparisons for p in c.broken()]
    if broken:
        say(
            f"cryptobench: regression: {len(broken)} job(s) measured in the base run failed in the new one:",
            err=True,
        )
        for c, p in broken:
            versus = f" ({c.new.id})" if len(comparisons) > 1 else ""
            say(_plain(f"  {_job_text(p.new)}: {p.new.error or 'failed'}{versus}"), err=True)
    if regressed or broken:
        return EXIT_FAILED
    undecided = [(c, p, m) for c in checked for p, m in c.undecided()]
    if undecided:
        # Neither pass nor fail: a ratio that is not a finite number decides nothing.
        say(
            f"cryptobench: error: --fail-on-regression: {len(undecided)} metric(s) measured on both sides "
            "have no finite ratio, so the gate cannot decide:",
            err=True,
        )
        for c, p, m in undecided:
            versus = f" ({c.new.id})" if len(comparisons) > 1 else ""
            say(_plain(f"  {_job_text(p.new)} {m.metric}: {m.reason}{versus}"), err=True)
        return EXIT_USAGE
    if unmatched:
        say("cryptobench: error: --fail-on-regression: nothing was compared, so nothing was checked", err=True)
        return EXIT_USAGE
    if measured and thin + unchecked_runs >= measured:
        say(
            "cryptobench: error: --fail-on-regression: no metric had the evidence for a verdict, so nothing was checked",
            err=True,
        )
        return EXIT_USAGE
    return EXIT_OK


def _plain(text: str) -> str:
    from app.core.escaping import escape_control

    return escape_control(text)


def _percent(fraction: float) -> str:
    return f"{fraction * 100:g} %"


def _run_text(run: RunResult) -> str:
    machine = run.environment_view.hostname or "unknown machine"
    return f"{run.id} · {marked_name(run)} · {machine} · {run.started}"


def _job_text(job: JobResult, between: str = " ") -> str:
    return between.join((job.label, format_bytes(job.message_size), str(job.mode)))


def _times(ratio: float) -> str:
    """A ratio as "1.234": three decimals where they tell something, else three significant
    digits ("2.5e+13"), never a 300-digit number or "0.000"."""
    return f"{ratio:.3f}" if 1e-3 <= abs(ratio) < 1e6 else f"{ratio:.3g}"


def _ratio(m: MetricComparison) -> str:
    c = m.comparison
    return "-" if c is None else f"{_times(c.ratio)}× ({_times(c.ci95_low)}–{_times(c.ci95_high)}×)"


def _verdict(m: MetricComparison, threshold: float) -> str:
    """The evidence rule's verdict (app.core.analysis.evidence), "(regression)" after it
    where the gate's rule holds; its reason is said beside it or in a note."""
    return str(m.verdict) + (" (regression)" if m.regressed(threshold) else "")


def _cells(p: JobPair, m: MetricComparison, verdict: str) -> tuple[str, ...]:
    c = m.comparison
    return (
        p.new.label,
        format_bytes(p.new.message_size),
        _mode(p.new.mode),
        m.metric,
        format_seconds(m.base_median),
        format_seconds(m.new_median),
        f"{_times(c.ratio)}×" if c else "-",
        f"{_times(c.ci95_low)}–{_times(c.ci95_high)}×" if c else "-",
        verdict,
    )


def _mode(mode: str) -> str:
    return Mode(mode).short if mode in set(Mode) else mode


_HEADERS = ("job", "size", "mode", "metric", "base median", "new median", "ratio new/base", "95 % interval", "verdict")


_STYLES = {Verdict.SLOWER: "red", Verdict.FASTER: "green", Verdict.NOT_COMPARABLE: "yellow"}


def _print_comparison(console: Any, comparison: RunComparison) -> None:
    from app.core.analysis.compare import unmatched_reason

    for label, runs in (("base:", comparison.base_runs), ("new: ", comparison.new_runs)):
        for k, run in enumerate(runs):
            console.print(escape(f"{label if k == 0 else ' ' * len(label)} {_run_text(run)}"))
    if comparison.environment:
        console.print(f"environment: {len(comparison.environment)} difference(s) (base → new)")
        for d in comparison.environment:
            console.print(escape(f"  {d.what}: {d.base or 'not recorded'} → {d.new or 'not recorded'}"))
    else:
        console.print("environment: no difference in machine, CPU, OS, Python or library versions")
    failed = [p for p in comparison.pairs if p.reason]
    if console.is_terminal:
        _print_metric_table(console, comparison)
    elif comparison.metrics:
        # In a pipe every line is whole, its verdict's reason with it, for grep and cut.
        console.print(" | ".join(_HEADERS))
        for p, m in comparison.metrics:
            verdict = _verdict(m, comparison.threshold) + (f": {m.reason}" if m.reason else "")
            console.print(escape(" | ".join(_cells(p, m, verdict))))
    for p in failed:
        console.print(escape(f"not compared: {_job_text(p.new)}: {p.reason}"))
    for side, jobs, others in (
        ("base", comparison.only_base, comparison.new.jobs),
        ("new", comparison.only_new, comparison.base.jobs),
    ):
        for job in jobs:
            why = unmatched_reason(job, others)
            console.print(escape(f"only in {side}: {_job_text(job)} ({job.id})" + (f": {why}" if why else "")))
    counts = ", ".join(f"{comparison.count(v)} {v}" for v in Verdict)
    method = (
        f"{len(comparison.base_runs)} runs vs {len(comparison.new_runs)}, two-level bootstrap over runs and samples"
        if comparison.repeated
        else "seeded bootstrap"
    )
    if comparison.exact_medians:
        method += ", medians drawn from their order statistics"
    console.print(
        f"{len(comparison.pairs)} matched job(s), {len(comparison.metrics)} metric(s): {counts}; "
        f"{len(comparison.regressions())} regression(s) beyond {_percent(comparison.threshold)}; "
        f"{len(comparison.only_base)} only in base, {len(comparison.only_new)} only in new "
        f"({method}, {comparison.resamples} resamples)"
    )
    for line in one_run_notes(comparison):
        console.print(escape(line))


def one_run_notes(comparison: RunComparison) -> list[str]:
    """What a comparison of one run a side says under its table: which metrics have a ratio
    and no verdict, and what the others were judged against (how much the store's runs of
    their jobs moved on this machine, as measured, never a figure from elsewhere)."""
    if comparison.repeated:
        return []
    lines = []
    machine = comparison.base.environment_view.hostname or "this machine"
    unjudged = len(comparison.one_run())
    if unjudged:
        lines.append(
            f"note: one run a side: each interval covers the spread of the samples within a run, not how much "
            f"a whole run moves, so {unjudged} metric(s) have a ratio and no verdict: the store holds fewer than "
            f"{MIN_MOVEMENT_RUNS} runs of their jobs on {machine} with these versions to measure that movement. "
            "For verdicts, give several runs a side (A+B+C), or keep more runs of the profile in the store"
        )
    judged = [m.movement for _, m in comparison.judged_by_movement() if m.movement is not None]
    if judged:
        fewest, most = min(j.runs for j in judged), max(j.runs for j in judged)
        runs = f"{fewest}" if fewest == most else f"{fewest} to {most}"
        lines.append(
            f"note: one run a side: {len(judged)} metric(s) judged against how much runs of their jobs moved on "
            f"{machine} with the same versions, as the store measured it ({runs} stored runs each): their "
            f"medians differed by up to {max(j.max_ratio for j in judged):.2f}×, and a verdict needs the 95 % "
            f"interval beyond the 99 % bound that gives, {min(j.bound for j in judged):.2f}× to "
            f"{max(j.bound for j in judged):.2f}× per metric"
        )
    if unjudged or judged:
        lines.append("note: for a gate, give several runs a side: A+B+C")
    return lines


def _print_metric_table(console: Any, comparison: RunComparison) -> None:
    """The metrics as a table fitted to the terminal, grouped by job: the job (its label,
    size and mode: what identifies it) heads its metrics once instead of taking three
    columns on each row, the ratio and its interval share a cell, and why a metric has no
    verdict is a note under the table, said once however many rows it explains (a reduced
    run's reason took nine lines on every one of 71 rows at 80 columns); a row carries
    the note's number. Too narrow for all, the two medians go first."""
    from app.cli.terminal.tables import Column, print_fitted_table

    notes: dict[str, int] = {}
    rows, headings = [], []
    previous: JobPair | None = None
    for p, m in comparison.metrics:
        headings.append(escape(_job_text(p.new, " · ")) if p is not previous else None)
        previous = p
        verdict = _verdict(m, comparison.threshold)
        if m.reason:
            verdict += f" [{notes.setdefault(m.reason, len(notes) + 1)}]"
        c = m.comparison
        ratio = f"{_times(c.ratio)}× ({_times(c.ci95_low)}–{_times(c.ci95_high)}×)" if c else "-"
        cells = (m.metric, format_seconds(m.base_median), format_seconds(m.new_median), ratio, verdict)
        rows.append([escape(cell) for cell in cells])
    if not rows:
        return
    columns = [
        Column("metric", key=True),
        Column("base median", "right", drop=1, whole=True),
        Column("new median", "right", drop=1, whole=True),
        Column("ratio new/base (95 % interval)", "right"),
        Column("verdict"),
    ]
    print_fitted_table(
        console,
        columns,
        rows,
        row_styles=[_STYLES.get(m.verdict) for _, m in comparison.metrics],
        headings=headings,
    )
    for reason, number in notes.items():
        count = sum(1 for _, m in comparison.metrics if m.reason == reason)
        every = "every metric" if count == len(comparison.metrics) else f"{count} metric(s)"
        console.print(escape(f"[{number}] {reason} ({every})"))

"""The comparison with a baseline run: a table of matched jobs with the ratio of their
medians and its bootstrap 95 % interval, and a chart of those ratios."""

from __future__ import annotations

from app.core.analysis.compare import unmatched_reason
from app.core.analysis.evidence import MIN_MOVEMENT_RUNS, MIN_SAMPLES
from app.core.results.model import JobResult, RunResult
from app.report.baseline import BaselineMatch
from app.report.content_common import MISSING, aligns, job_name, utc
from app.report.job_figures import median, size_text
from app.report.labels import Labels
from app.report.model import BarChart, Block, Bullets, Chart, Paragraph, Section, Table
from app.report.units import format_seconds, span_text


def comparison_section(run: RunResult, match: BaselineMatch, baseline: RunResult, labels: Labels) -> Section:
    blocks: list[Block] = [
        Paragraph(
            f"This run against baseline run **{baseline.id}** ({utc(baseline.started)}, profile "
            f"{baseline.profile_view.marked_name}). Jobs match on scheme, backend, parameters, mode and message size; each "
            "pair is compared on its per-message metric. The ratio is this run's median over the baseline's "
            "(above 1: slower now). Its 95 % interval comes from a bootstrap: both sets of samples are resampled "
            "2,000 times and the 2.5th and 97.5th percentiles of the resampled ratios are kept. A pair is faster "
            f"or slower only with the evidence for it, as cryptobench compare decides: {MIN_SAMPLES} samples a "
            "side, no reduced run, and an interval clear of 1; with one run a side, clear of how much runs of the "
            "job move on this machine too, as stored runs measure it. Otherwise it is within noise, or has no "
            "verdict."
        ),
        *_sides_notes(run, baseline),
    ]
    rows, emphasis = _pair_rows(match)
    if not rows:
        blocks.append(Paragraph("No job of this run matches a job of the baseline: there is nothing to compare."))
    else:
        chart = _ratio_chart(match, labels)
        if chart is not None:
            blocks.append(chart)
        blocks.append(
            Table(
                [
                    "Job",
                    "Size",
                    "Baseline median",
                    "This run median",
                    "Ratio (this/baseline)",
                    "95 % interval",
                    "n (baseline / this)",
                    "Verdict",
                ],
                rows,
                caption="Bold: a verdict, faster or slower.",
                widths=[3.0, 0.8, 1.1, 1.1, 1.0, 1.2, 1.0, 1.1],
                emphasis=emphasis,
                align=aligns("lrrrrrrl"),
            )
        )
    blocks += _no_verdict_notes(match, baseline)
    unmatched = [_unmatched("Only in this run", j, baseline.jobs) for j in match.only_run]
    unmatched += [_unmatched("Only in the baseline", j, run.jobs) for j in match.only_baseline]
    blocks.append(Bullets(unmatched) if unmatched else Paragraph("Every job has a match in the other run."))
    return Section("Comparison with baseline", blocks)


def _unmatched(where: str, job: JobResult, other_side: list[JobResult]) -> str:
    why = unmatched_reason(job, other_side)  # the same job in the other exchange pattern
    return f"{where}: {job_name(job)} ({job.mode})" + (f": {why}." if why else "")


def _sides_notes(run: RunResult, baseline: RunResult) -> list[Block]:
    """What makes the two runs less alike than they look: another CPU, or settings
    overridden from the command line on either side (never a silent baseline)."""
    notes: list[Block] = []
    base_cpu, this_cpu = baseline.environment_view.cpu_model, run.environment_view.cpu_model
    if base_cpu and this_cpu and base_cpu != this_cpu:
        notes.append(
            Paragraph(
                f"The baseline ran on a different CPU ({base_cpu}; this run: {this_cpu}): "
                "differences measure the machines as much as the software.",
                style="note",
            )
        )
    for which, side in (("The baseline", baseline), ("This run", run)):
        overrides = side.profile_view.overrides
        if overrides:  # never a silent baseline: it is not a full run of the profile it names
            shown = ", ".join(f"{option} {value}" for option, value in overrides)
            notes.append(
                Paragraph(
                    f"{which} ran with settings overridden from the command line ({shown}): it is not a "
                    f"full run of profile {side.profile_view.name or 'unnamed'}.",
                    style="note",
                )
            )
    return notes


def _pair_rows(match: BaselineMatch) -> tuple[list[list[str]], set[int]]:
    """One table row per matched pair, and the rows with a verdict (bold). A pair without a
    comparison gets a short row: why, and "no verdict" or "not comparable"."""
    rows: list[list[str]] = []
    emphasis: set[int] = set()
    for pair in match.pairs:
        c = pair.comparison
        m = pair.measured
        base_m, this_m = median(pair.base, pair.metric), median(pair.job, pair.metric)
        counts = f"{m.base_n:,} / {m.new_n:,}" if m is not None and m.base_n and m.new_n else MISSING
        row = [pair.job.label, size_text(pair.job), format_seconds(base_m), format_seconds(this_m)]
        if c is None:  # where samples or the run are the reason, a sentence below says why
            why = "reduced run" if pair.withheld else MISSING if m is not None and m.too_few else pair.reason or MISSING
            rows.append([*row, MISSING, why, counts, str(pair.verdict)])
            continue
        if pair.decided:
            emphasis.add(len(rows))
        interval = span_text(c.ci95_low, c.ci95_high, "{:.2f}".format, joint="–") + "×"
        rows.append([*row, f"{c.ratio:.2f}×", interval, counts, str(pair.verdict)])
    return rows, emphasis


def _no_verdict_notes(match: BaselineMatch, baseline: RunResult) -> list[Block]:
    """Why pairs got no verdict (too few samples a side, a reduced run, one run a side), and
    what the others were judged against: the movement of stored runs, as measured here."""
    notes: list[Block] = []
    thin = sum(1 for pair in match.pairs if pair.too_few is not None)
    if thin:
        notes.append(
            Paragraph(
                f"No verdict for {thin} of the {len(match.pairs)} pairs: fewer than {MIN_SAMPLES} samples a side "
                "(n = baseline / this run). With so few, an interval of the ratio says little, and with one "
                "sample a side it has no width at all: not certainty, nothing to measure a spread with.",
                style="note",
            )
        )
    if match.withheld is not None and any(pair.withheld for pair in match.pairs):
        notes.append(Paragraph(f"No verdict for any pair: {_sentence(match.withheld)}", style="note"))
    machine = baseline.environment_view.hostname or "this machine"
    one_run = sum(1 for pair in match.pairs if pair.one_run)
    if one_run:
        notes.append(
            Paragraph(
                f"No verdict for {one_run} of the {len(match.pairs)} pairs: one run a side. Each interval covers "
                "the spread of the samples within its run, not how much a whole run moves (process layout, caches, "
                f"the host), and the store holds fewer than {MIN_MOVEMENT_RUNS} runs of these jobs on {machine} "
                "with the same versions to measure that. For verdicts, compare several runs a side "
                "(cryptobench compare A+B+C D+E+F), or keep more runs of the profile in the store.",
                style="note",
            )
        )
    judged = [p.measured.movement for p in match.pairs if p.measured is not None and p.measured.movement is not None]
    if judged:
        fewest, most = min(j.runs for j in judged), max(j.runs for j in judged)
        bounds = span_text(min(j.bound for j in judged), max(j.bound for j in judged), "{:.2f}×".format)
        notes.append(
            Paragraph(
                f"{len(judged)} of the {len(match.pairs)} pairs were judged against how much runs of their jobs "
                f"moved on {machine} with the same versions, as the store measured it "
                f"({span_text(fewest, most, str)} stored runs each): their medians differed by up to "
                f"{max(j.max_ratio for j in judged):.2f}×, and a verdict needs the 95 % interval beyond the 99 % "
                f"bound that gives ({bounds} per job).",
                style="note",
            )
        )
    return notes


def _sentence(reason: str) -> str:
    """The evidence rule's reason as the end of a sentence: "the baseline's run is reduced
    (a smoke test, not for comparison)." without its trailing "; no verdict"."""
    return reason.removesuffix("; no verdict") + "."


def _ratio_chart(match: BaselineMatch, labels: Labels) -> Chart | None:
    """This run over the baseline per matched job, with the bootstrap 95 % interval; the
    axis is logarithmic so 0.5× and 2× lie equally far from 1×."""
    pairs = [p for p in match.pairs if p.comparison is not None and p.comparison.ratio > 0]
    if not pairs:
        return None
    ratios = [p.comparison.ratio for p in pairs]  # type: ignore[union-attr]
    chart = BarChart(
        "Ratio of medians, this run / baseline (1 = no change)",
        [labels.row(p.job) for p in pairs],
        ratios,
        [p.comparison.ci95_low for p in pairs],  # type: ignore[union-attr]
        [p.comparison.ci95_high for p in pairs],  # type: ignore[union-attr]
        unit="×",
        value_label="ratio of medians (this run / baseline)",
        log=max(ratios) / min(ratios) > 4,
        marked=[p.decided for p in pairs],
        marked_label="a verdict: faster or slower",
    )
    return Chart(
        chart,
        caption="Bars: ratio of the medians; whiskers: bootstrap 95 % interval. Above 1: slower "
        "now. Marked bars: a verdict (the table says which).",
        aspect=min(1.4, 0.2 + 0.07 * len(pairs)),
    )

"""What a report must say first when its numbers cannot carry its claims.

A reduced run (`run --reduced`: 3 samples, small messages) or any run with fewer than
10 timed samples per metric exercises every job, but its medians are imprecise, its
first-sample figures are single draws and its ratios to published figures mean little.
Such a report says so in full on its first page, and in one sentence with the real sample
counts at the top of its summary, above every experiment section, and in the caption of
a published-vs-measured table outside them: once per section, never twice in one.
"""

from __future__ import annotations

from app.core.results.model import RunResult
from app.core.vocab import JobStatus, RunStatus
from app.report.model import Paragraph, Section, Table

#: Fewer timed samples than this per metric: no confidence interval worth the name
#: (the stability check's threshold too).
FEW_SAMPLES = 10


def is_reduced(run: RunResult) -> bool:
    return run.profile_view.reduced  # the flag, or for a run from before it, "(reduced)" ending its name


def sample_range(run: RunResult) -> tuple[int, int] | None:
    """The smallest and largest timed sample count of the metrics the report's claims rest
    on: each job's per-message metric (key generation may take fewer on purpose)."""
    from app.report.job_figures import primary_metric

    counts = []
    for job in run.jobs:
        metric = job.metrics.get(primary_metric(job) or "") if job.status == JobStatus.OK else None
        if metric is not None:
            counts.append(metric.stats.n)
    if not counts:  # no per-message metric: every metric counts
        counts = [m.stats.n for job in run.jobs if job.status == JobStatus.OK for m in job.metrics.values()]
    return (min(counts), max(counts)) if counts else None


def _n_text(span: tuple[int, int] | None) -> str:
    if span is None:
        return "no timed samples"
    low, high = span
    return f"n = {low}" if low == high else f"n = {low} to {high}"


def sample_caveat(run: RunResult) -> str | None:
    """The first-page warning, or None when the run has enough samples for its claims."""
    span = sample_range(run)
    n = _n_text(span)
    if is_reduced(run):
        from app.core.profile.edits import REDUCED_MAX_SIZE
        from app.report.units import format_bytes

        return (
            f"Reduced run ({n} timed samples per metric, messages of at most {format_bytes(REDUCED_MAX_SIZE)}): "
            "it checks that every "
            "job runs "
            "end to end. Its numbers are not measurements: do not compare or quote them, and read every "
            "ratio and conclusion below as a check of the pipeline, not a result."
        )
    if span is not None and span[0] < FEW_SAMPLES:
        return (
            f"Few samples ({n} timed samples of the per-message metric, fewer than {FEW_SAMPLES} for some): "
            "medians are "
            "imprecise and some have no confidence interval; treat ratios and conclusions below as "
            "indications, not results."
        )
    return None


def short_caveat(run: RunResult) -> str:
    """One sentence for a table caption."""
    what = "Reduced run" if is_reduced(run) else "Few samples"
    return f"{what}, {_n_text(sample_range(run))} per metric: these figures are not for comparison."


def _is_published_table(table: Table) -> bool:
    return any("published" in column.lower() for column in table.columns)


def apply_caveat(run: RunResult, sections: list[Section]) -> None:
    """Put the caveat where a reader of each part meets it (no-op for a sound run)."""
    text = sample_caveat(run)
    if text is None:
        return
    short = short_caveat(run)
    said = False  # in the current level-1 section and its subsections: said once there, not per table
    for section in sections:
        if section.level == 1:
            said = False
        if section.title == "Summary of findings":
            # The first page has the whole caveat (the report's notice); the summary recalls it
            # in one sentence rather than repeating it word for word.
            section.blocks.insert(0, Paragraph(f"**{short}**", style="finding"))
            said = True
        elif section.level == 1 and section.title.startswith("Experiment "):
            section.blocks.insert(
                0,
                Paragraph(
                    f"**{short}** The comparisons and explanations below are worded "
                    "from this run's numbers and may not hold for a full run.",
                    style="note",
                ),
            )
            said = True
        for block in section.blocks:
            if isinstance(block, Table) and _is_published_table(block) and not said:
                block.caption = f"{short} " + (block.caption or "")
                said = True


def _expected_jobs(run: RunResult) -> int | None:
    """Measured jobs the profile asked for (one per profile job and message size)."""
    from app.core.settings.profile import DEFAULT_MESSAGE_SIZES

    specs = run.profile.get("jobs")
    if not isinstance(specs, list) or not specs:
        return None
    total = 0
    for spec in specs:
        if not isinstance(spec, dict):
            return None
        sizes = spec.get("message_sizes")
        total += (
            len(sizes)
            if isinstance(sizes, list) and sizes
            else (1 if "secret_size" in (spec.get("params") or {}) else len(DEFAULT_MESSAGE_SIZES))
        )
    return total


def missing_notice(run: RunResult) -> str | None:
    """For a run that failed, was stopped or lost jobs: what the report cannot show."""
    failed = [job for job in run.jobs if job.status != JobStatus.OK]
    expected = _expected_jobs(run)
    not_run = max(0, expected - len(run.jobs)) if expected is not None else 0
    if run.status == RunStatus.FINISHED and not failed and not not_run:
        return None
    parts = [f"This run is {run.status}."] if run.status != RunStatus.FINISHED else []
    if not run.jobs:
        parts.append("It recorded no job: there are no numbers to report, only the environment and method.")
    if failed:
        names = "; ".join(f"{job.label} ({job.status})" for job in failed[:4])
        more = f" and {len(failed) - 4} more" if len(failed) > 4 else ""
        parts.append(
            f"{len(failed)} of {len(run.jobs)} recorded jobs have no numbers: {names}{more}; their "
            "errors are in the results by family."
        )
    if not_run:
        parts.append(
            f"{not_run} of the {expected} jobs the profile asks for never ran and are missing from "
            "every table and chart."
        )
    return " ".join(parts)

"""Report sections for runs of the reference-experiment presets (E1-E5).

A profile that reproduces a published experiment names it (`"experiment": "E3"`).
Its report then opens with the experiment: the question it asked, how the original
measured, a table of every published figure beside ours with the ratio, the
experiment's own tables and charts rebuilt from our samples, and a short explanation
wherever our trend differs from the published one. The explanations are conditional
on the measured numbers: a sentence claiming a difference is only written when the
run shows it.

Qt-free, like the rest of the report content.
"""

from __future__ import annotations

from collections.abc import Callable

from app.core.results.model import RunResult
from app.report.experiments import e1, e2, e3, e4, e5
from app.report.experiments.common import comparison_table, experiment_id
from app.report.experiments.published import Experiment, PublishedDataError, load_experiment
from app.report.model import Paragraph, Section

__all__ = ["experiment_sections"]

#: Per experiment, the builder of its own subsections (level 2).
BUILDERS: dict[str, Callable[[RunResult, Experiment], list[Section]]] = {
    "E1": e1.sections,
    "E2": e2.sections,
    "E3": e3.sections,
    "E4": e4.sections,
    "E5": e5.sections,
}


def experiment_sections(run: RunResult) -> list[Section]:
    """The experiment's sections for `run`, or [] when its profile reproduces none."""
    name = experiment_id(run)
    if name is None:
        return []
    title = f"Experiment {name}"
    try:
        experiment = load_experiment(name)
    except PublishedDataError as exc:
        return [
            Section(
                title, [Paragraph(f"The published figures could not be loaded: {exc}", "note")], page_break_before=True
            )
        ]
    source = experiment.source
    data = (
        [Paragraph(f"**The data.** {source.repository} at commit {source.commit}: {source.read}")]
        if source is not None
        else []
    )
    intro = Section(
        f"{title}: {experiment.title}",
        [
            Paragraph(f"**Question.** {experiment.question}"),
            Paragraph(f"**The original.** {experiment.original}"),
            *data,
            Paragraph(
                "**Reading the comparison.** The published figures come from another machine, so absolute "
                "times differ; what should agree is the ratios and trends. Each published figure is set beside "
                "the same statistic of ours (a mean beside our mean, a median beside our median, a single trial "
                "beside our first timed sample), summed over our metrics where the original timed several operations as one; every "
                "call we time is validated. A ratio above 1 means our measurement took longer. A figure "
                "computed from published ones is marked as derived: the source does not print it.",
                "note",
            ),
        ],
        page_break_before=True,
    )
    published = Section("Published and measured", [comparison_table(run, experiment)], level=2)
    builder = BUILDERS.get(name)
    return [intro, published] + (builder(run, experiment) if builder else [])

"""Reports a person can hand on: what a reader must know comes first, units
read alike, scales show every bar, and runs that failed or stopped still render.

The charts-of-every-preset check runs the reduced presets once (shared with
tests/test_preset_runs.py) and is marked slow like them.
"""

from __future__ import annotations

import copy
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from app.core.results.model import RunResult
from app.report.content import _magnitude_groups, build_report
from app.report.families import histogram_of
from app.report.model import BarChart, Bullets, Chart, LineChart, Paragraph, Report, Series, StackedBars, Table
from app.report.pdf import charts
from app.report.pdf.charts.bar import _bar_rows
from app.report.pdf.charts.frame import elide_to_width
from app.report.pdf.text import DPI
from app.report.pdf.writer import write_pdf
from app.report.units import humanize_seconds, parse_seconds
from tests.helpers.report_runs import find_job, metric
from tests.test_preset_runs import preset_params

SESSION = "ECDH brainpoolP256r1 + SHA-256 + AES-256-GCM [cryptography]"


def _page_text(path: Path, page: int) -> str:
    tool = shutil.which("pdftotext")
    if not tool:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    return subprocess.run(
        [tool, "-f", str(page), "-l", str(page), str(path), "-"], capture_output=True, text=True, check=True
    ).stdout


def _section(report: Report, title: str) -> Any:
    return next(s for s in report.sections if s.title == title)


def _reduced(run: RunResult, n: int = 3) -> RunResult:
    """`run` as `run --reduced` leaves it: the name says so and every metric has n samples."""
    small = copy.deepcopy(run)
    small.profile["name"] = f"{run.name} (reduced)"
    for job in small.jobs:
        for name, m in list(job.metrics.items()):
            job.metrics[name] = metric(m.samples[:n], batch=m.batch)
    return small


# --- what the first page says -------------------------------------------------------------


def test_reduced_run_first_page_says_reduced(qapp: object, hand_run: RunResult, tmp_path: Path) -> None:
    report = build_report(_reduced(hand_run))
    assert report.notice is not None and report.notice.startswith("Reduced run (n = 3 timed samples")
    summary = _section(report, "Summary of findings").blocks
    # The summary recalls the first page's caveat in one sentence, with the real n, not word for word.
    assert isinstance(summary[0], Paragraph) and summary[0].text.startswith("**Reduced run, n = 3 per metric")
    assert report.notice not in summary[0].text
    assert "not this reduced run" in summary[1].text  # the description is the full preset's
    path = tmp_path / "reduced.pdf"
    write_pdf(report, path)
    first = " ".join(_page_text(path, 1).split())
    assert "Reduced run (n = 3 timed samples per metric" in first and "not measurements" in first


def test_a_full_run_has_no_caveat(hand_run: RunResult) -> None:
    assert build_report(hand_run).notice is not None  # the hand run has a failed job: said, not a sample caveat
    sound = copy.deepcopy(hand_run)
    sound.jobs = [j for j in sound.jobs if j.status == "ok"]
    sound.profile["jobs"] = []
    assert build_report(sound).notice is None


def test_few_samples_are_said_with_the_real_n(hand_run: RunResult) -> None:
    few = _reduced(hand_run, n=5)
    few.profile["name"] = hand_run.name  # not reduced: just too few samples for the claims
    notice = build_report(few).notice or ""
    assert "Few samples (n = 5 timed samples" in notice


def test_published_tables_carry_the_real_n(hand_run: RunResult) -> None:
    from app.report.caveats import apply_caveat
    from app.report.model import Section

    table = Table(["Case", "Published", "Measured"], [["a", "1 ms", "2 ms"]], caption="E9: published beside ours.")
    other = Table(["Case", "Measured"], [["a", "2 ms"]], caption="Ours only.")
    outside = Table(["Case", "Published", "Measured"], [["b", "1 ms", "2 ms"]], caption="Elsewhere.")
    second = Table(["Case", "Published", "Measured"], [["c", "1 ms", "2 ms"]], caption="Again.")
    sections = [
        Section("Summary of findings", []),
        Section("Experiment E9: x", [table, other]),
        Section("Results by family", [outside, second]),
    ]
    apply_caveat(_reduced(hand_run), sections)
    caveat = "Reduced run, n = 3 per metric: these figures are not for comparison."
    assert sections[1].blocks[0].text.startswith(f"**{caveat}**")
    assert "may not hold for a full run" in sections[1].blocks[0].text
    # Said once per section: the experiment's note covers its table; elsewhere the first
    # published table carries it, and no second one in the same section repeats it.
    assert table.caption == "E9: published beside ours."
    assert other.caption == "Ours only."
    assert outside.caption == f"{caveat} Elsewhere."
    assert second.caption == "Again."


@pytest.mark.parametrize("status", ["cancelled", "failed", "interrupted"])
def test_failed_or_cancelled_runs_render_and_say_what_is_missing(
    qapp: object, hand_run: RunResult, tmp_path: Path, status: str
) -> None:
    stopped = copy.deepcopy(hand_run)
    stopped.status = status
    stopped.profile["jobs"] = [{"scheme": "x", "message_sizes": [1, 2]}] * 7  # asked for 14 jobs; 10 recorded
    report = build_report(stopped)
    assert report.notice is not None and report.notice.startswith(f"This run is {status}.")
    assert "4 of the 14 jobs the profile asks for never ran" in report.notice
    assert "ML-DSA-65 [cryptography] (failed)" in report.notice
    path = tmp_path / f"{status}.pdf"
    write_pdf(report, path)
    assert "never ran" in " ".join(_page_text(path, 1).split())
    empty = copy.deepcopy(stopped)
    empty.jobs = []
    report = build_report(empty)
    assert "recorded no job" in (report.notice or "")
    write_pdf(report, tmp_path / "empty.pdf")


# --- units ----------------------------------------------------------------------------------


def test_every_time_column_has_one_unit(hand_run: RunResult, hand_baseline: RunResult) -> None:
    report = build_report(hand_run, hand_baseline)
    checked = 0
    for section in report.sections:
        for table in (b for b in section.blocks if isinstance(b, Table)):
            for c, header in enumerate(table.columns):
                units = {
                    cell.split()[-1]
                    for row in table.rows
                    if c < len(row)
                    for cell in [row[c]]
                    if parse_seconds(cell) is not None
                }
                assert len(units) <= 1, (section.title, header, units)
                checked += header.endswith(("(ns)", "(µs)", "(ms)", "(s)"))
    assert checked >= 8  # timing, loopback and comparison columns carry their unit in the header


def test_no_raw_seconds_in_prose(hand_run: RunResult) -> None:
    assert (
        humanize_seconds("first sample 1.859e-05 s and 0.000484 s; 2.5 s stays")
        == "first sample 18.6 µs and 484 µs; 2.5 s stays"
    )
    run = copy.deepcopy(hand_run)
    import dataclasses

    job = next(j for j in run.jobs if j.warnings)
    job.warnings[0] = dataclasses.replace(
        job.warnings[0], message="First measured sample 1.859e-05 s is 5.4× the median"
    )
    prose = [
        t
        for s in build_report(run).sections
        for b in s.blocks
        for t in ([b.text] if isinstance(b, Paragraph) else b.items if isinstance(b, Bullets) else [])
    ]
    assert any("18.6 µs is 5.4× the median" in t for t in prose)
    assert not any("e-05 s" in t for t in prose)


# --- scales -----------------------------------------------------------------------------------


def test_loopback_breakdown_gives_each_order_of_magnitude_its_chart(hand_run: RunResult) -> None:
    assert _magnitude_groups([1e-3, 2e-5, 5e-3, 3e-5, 8e-2]) == [[1, 3], [0, 2], [4]]
    run = copy.deepcopy(hand_run)
    slow = copy.deepcopy(find_job(run, SESSION, 18))
    slow.id, slow.index, slow.label = f"{run.id}/99", 99, "ElGamal-2048 [python]"
    for name, m in list(slow.metrics.items()):
        slow.metrics[name] = metric([x * 1000 for x in m.samples])
    run.jobs.append(slow)
    loop = _section(build_report(run), "Loopback breakdown")
    times = [
        b.chart
        for b in loop.blocks
        if isinstance(b, Chart) and isinstance(b.chart, StackedBars) and b.chart.unit == "s"
    ]
    assert len(times) == 2 and [len(c.labels) for c in times] == [1, 1]
    for chart in times:  # within a chart no bar is more than 10× shorter than another
        totals = [sum(v[k] for v in chart.parts.values()) for k in range(len(chart.labels))]
        assert max(totals) <= 10 * min(totals)


def test_histogram_axis_ends_at_the_data() -> None:
    samples = [1e-6 * (1 + 0.01 * i) for i in range(19)] + [5e-3]  # one interruption, 5000× the rest
    hist = histogram_of(metric(samples))
    assert hist is not None
    assert hist.edges[-1] == pytest.approx(max(samples[:19]))  # not an interpolated p99 far past the data
    assert hist.clipped_above == 1 and sum(hist.counts) == 19
    assert max(hist.counts) < 19  # the bulk is spread over bins, not one bin on a wide axis
    assert histogram_of(metric([2e-6] * 10)) is not None  # identical samples still draw
    assert histogram_of(metric([1e-6, 2e-6, 3e-6])) is None  # a reduced run's 3 samples have no shape to draw


def test_sample_number_axis_has_integer_ticks(qapp: object, monkeypatch: pytest.MonkeyPatch) -> None:
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QImage, QPainter

    axes: list[Any] = []
    from app.report.pdf.charts import line

    make = line.make_linear_axis

    def spy(*args: Any, **kwargs: Any) -> Any:
        axis = make(*args, **kwargs)
        axes.append(axis)
        return axis

    monkeypatch.setattr(line, "make_linear_axis", spy)
    chart = LineChart("Per sample", "sample", "", "delay", "s", [Series("a", [1.0, 2.0, 3.0], [1e-3, 2e-3, 1.5e-3])])
    image = QImage(600, 400, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    try:
        charts.paint_chart(painter, QRectF(0, 0, 600, 400), chart)
    finally:
        painter.end()
    x_axis = axes[-1]
    assert x_axis.ticks and all(float(t).is_integer() for t in x_axis.ticks)


# --- labels in every preset's report ------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.xdist_group("preset-runs")  # the preset runs of tests/test_preset_runs.py, run once
@pytest.mark.parametrize("name", preset_params())
def test_every_preset_s_reduced_report_cuts_no_label_and_says_each_thing_once(
    qapp: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    """Every chart of every preset's reduced report, painted where the PDF paints it: no
    row label thinned out, no text cut with "…" (titles, legends, row and point labels),
    no legend that names only some of its series ("+6 more"). And the same reports' words,
    in Markdown and on every PDF page: no sentence twice, no link named twice, no range
    whose ends read the same (tests/report/test_report_words.py; one painting serves both,
    each preset's PDF takes seconds)."""
    from tests.report.test_report_words import word_problems
    from tests.test_preset_runs import _run, skip_unless_runnable

    skip_unless_runnable(name)

    cut: list[tuple[str, str]] = []
    thinned: list[list[str | None]] = []
    elide, rows = elide_to_width, _bar_rows

    def spy_elide(fm: Any, text: str, width: float) -> str:
        shown = elide(fm, text, width)
        if shown != text:
            cut.append((name, text))
        return shown

    def spy_rows(*args: Any, **kwargs: Any) -> Any:
        layout = rows(*args, **kwargs)
        if None in layout.labels:
            thinned.append(layout.labels)
        return layout

    from app.report.pdf.charts import bar, frame, histogram, line

    for module in (frame, line, histogram):  # every module that cuts text does it through elide_to_width
        monkeypatch.setattr(module, "elide_to_width", spy_elide)
    monkeypatch.setattr(bar, "_bar_rows", spy_rows)
    legend = line.column_legend

    def spy_legend(ctx: Any, entries: list[Any], *args: Any) -> int:
        shown = legend(ctx, entries, *args)
        if shown < len(entries):
            cut.append((name, f"legend: {len(entries) - shown} of {len(entries)} series unnamed"))
        return shown

    monkeypatch.setattr(line, "column_legend", spy_legend)
    report = build_report(_run(name))
    assert any(isinstance(b, Chart) for s in report.sections for b in s.blocks), name
    write_pdf(report, tmp_path / f"{name}.pdf")
    words = word_problems(name, report, tmp_path / f"{name}.pdf", _run(name))
    if name == "ecdh-vs-elgamal":
        assert report.notice and report.notice.startswith("Reduced run (n = 2")
        # The experiment's note says it above its published tables, once: not again in their captions.
        caveat = "Reduced run, n = 2 per metric"
        experiment = next(s for s in report.sections if s.title.startswith("Experiment "))
        note = experiment.blocks[0]
        assert isinstance(note, Paragraph) and note.text.startswith(f"**{caveat}")
        said = [note.text] + [b.caption or "" for b in experiment.blocks if isinstance(b, Table)]
        assert sum(caveat in text for text in said) == 1
    assert cut == []
    assert thinned == []
    assert words == []


def test_ratio_chart_uses_ratio_units(hand_run: RunResult, hand_baseline: RunResult) -> None:
    from tests.helpers.comparisons import STILL

    comparison = _section(build_report(hand_run, hand_baseline, movement=STILL), "Comparison with baseline")
    (chart,) = [b.chart for b in comparison.blocks if isinstance(b, Chart) and isinstance(b.chart, BarChart)]
    assert chart.marked and any(chart.marked)  # the 2× slower job is marked: a verdict
    # One run a side, and no stored runs measure how runs move: ratios, and no verdict marked.
    alone = _section(build_report(hand_run, hand_baseline), "Comparison with baseline")
    (bars,) = [b.chart for b in alone.blocks if isinstance(b, Chart) and isinstance(b.chart, BarChart)]
    assert bars.values == chart.values and not any(bars.marked or [])
    assert all(lo is None or lo <= v <= hi for v, lo, hi in zip(chart.values, chart.low, chart.high))


# --- pages ------------------------------------------------------------------------------------


def _laid_out(report: Report) -> Any:
    import os

    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QPageSize, QPdfWriter

    from app.report.pdf import layout as pdf_layout

    writer = QPdfWriter(os.devnull)
    writer.setResolution(DPI)
    writer.setPageSize(QPageSize(QPageSize.PageSizeId.A4))
    return pdf_layout.layout_report(report, writer, QRectF(writer.pageLayout().fullRectPixels(DPI)))


def test_a_page_break_does_not_leave_a_nearly_empty_page(qapp: object) -> None:
    """A section that asks for a new page gets one only after a well-used page."""
    from app.report.model import Section

    def report(words: int) -> Report:
        return Report(
            "T",
            "",
            [],
            [
                Section("Short", [Paragraph("word " * words)]),
                Section("Appendix", [Paragraph("Statistics.")], page_break_before=True),
            ],
        )

    short = _laid_out(report(30))
    assert len(short.pages) == 2  # title page, then both sections on one page
    long = _laid_out(report(900))  # most of a page of text: the appendix starts the next one
    assert len(long.pages) == 3


def test_a_heading_and_its_short_intro_stay_with_the_chart_they_introduce(qapp: object) -> None:
    from app.report.model import Section

    chart = Chart(BarChart("Bars", ["a", "b"], [1e-6, 2e-6], [None, None], [None, None]), aspect=0.6)
    for words in range(300, 1000, 70):  # somewhere the chart no longer fits below the intro
        report = Report(
            "T",
            "",
            [],
            [
                Section("Filler", [Paragraph("word " * words)]),
                Section("Costs", [Paragraph("One short introduction."), chart]),
            ],
        )
        laid = _laid_out(report)
        heading_page = max(n for n, page in enumerate(laid.pages) if any(op.kind == "heading" for op in page))
        chart_page = next(n for n, page in enumerate(laid.pages) if any(op.kind == "chart" for op in page))
        assert heading_page == chart_page, words


def test_a_line_chart_shrinks_a_little_to_fill_a_page_foot_and_bars_never_do(qapp: object) -> None:
    from app.report.model import Section

    line = Chart(LineChart("Lines", "size", "B", "time", "s", [Series("a", [1.0, 2.0], [1e-6, 2e-6])]))
    bars = Chart(BarChart("Bars", [f"row {i}" for i in range(12)], [1e-6] * 12, [None] * 12, [None] * 12))
    heights: dict[str, set[int]] = {"Lines": set(), "Bars": set()}
    shrunk_on_first_page = False
    for words in range(200, 1400, 40):
        for chart in (line, bars):
            laid = _laid_out(Report("T", "", [], [Section("Filler", [Paragraph("word " * words), chart])]))
            ((n, op),) = [(n, op) for n, page in enumerate(laid.pages) for op in page if op.kind == "chart"]
            heights[chart.chart.title].add(round(op.rect.height()))
            shrunk_on_first_page |= chart is line and n == 1 and len(heights["Lines"]) > 1
    assert len(heights["Bars"]) == 1  # bar rows are sized for their labels: never squeezed
    assert shrunk_on_first_page and max(heights["Lines"]) * 0.8 <= min(heights["Lines"]) + 1


def test_jobs_warned_on_the_same_metrics_share_one_bullet(hand_run: RunResult) -> None:
    import dataclasses

    run = copy.deepcopy(hand_run)
    template = next(j for j in run.jobs if j.warnings).warnings[0]
    for job in run.jobs:
        job.warnings = []
    aead = [j for j in run.jobs if j.family == "aead"]
    for job in aead:
        job.warnings = [dataclasses.replace(template, metric=m) for m in ("keygen", "encrypt")]
    warnings = _section(build_report(run), "Warnings")
    bullets = [b for b in warnings.blocks if isinstance(b, Bullets) and b.items[0].startswith("**keygen, encrypt**")]
    assert len(bullets) == 1 and len(bullets[0].items) == 1
    assert bullets[0].items[0].count(";") == len(aead) - 1

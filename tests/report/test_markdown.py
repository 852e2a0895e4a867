"""The Markdown rendering: headings, facts, pipe tables (escaped), charts as data tables."""

from __future__ import annotations

import numpy as np

from app.core.results.model import RunResult
from app.report.content import build_report
from app.report.markdown import render_markdown
from app.report.model import (
    BarChart,
    Chart,
    Histogram,
    Paragraph,
    Report,
    Section,
    StackedBars,
    Table,
)
from app.report.units import format_seconds, format_seconds_in
from tests.helpers.report_runs import FAILED_ERROR, find_job


def test_headings_facts_and_footer(hand_run: RunResult, hand_baseline: RunResult) -> None:
    text = render_markdown(build_report(hand_run, hand_baseline))
    lines = text.splitlines()
    assert lines[0] == "# CryptoBench report: hand-built"
    for title in (
        "Summary of findings",
        "Environment",
        "Method",
        "Results by family",
        "Loopback breakdown",
        "Cost against security level",
        "Warnings",
        "Comparison with baseline",
        "Appendix: full statistics",
    ):
        assert f"## {title}" in lines
    assert "### Hybrid / KEM" in lines
    assert "- **Run id**: 20261121-100400-hand01" in lines
    assert lines[-1] == "*CryptoBench 0.1.0 · run 20261121-100400-hand01*"
    assert text.endswith("\n")


def test_job_rows_are_pipe_table_rows(hand_run: RunResult) -> None:
    text = render_markdown(build_report(hand_run))
    median = format_seconds_in(
        float(np.median(find_job(hand_run, "ChaCha20-Poly1305 [cryptography]", 1024).metrics["encrypt"].samples)), "µs"
    )  # the column's unit
    row = next(
        line for line in text.splitlines() if line.startswith("| ChaCha20-Poly1305 [cryptography] | 1 KiB | encrypt |")
    )
    assert f"| {median} |" in row
    # Every table row has as many cells as its header (escaped pipes do not split).
    assert any(FAILED_ERROR in line and line.startswith("| ML-DSA-65") for line in text.splitlines())
    assert "|:---|---:|:---|" in text


def test_charts_become_data_tables(hand_run: RunResult) -> None:
    report = build_report(hand_run)
    text = render_markdown(report)
    bar = next(
        b.chart
        for s in report.sections
        for b in s.blocks
        if isinstance(b, Chart) and isinstance(b.chart, BarChart) and s.title == "Hybrid / KEM"
    )
    assert f"**Chart: {bar.title}**" in text
    low, high = format_seconds(bar.low[2]), format_seconds(bar.high[2])
    assert f"| {bar.labels[2]} | {format_seconds(bar.values[2])} | {low} – {high} | yes |" in text


def _one_section(*blocks) -> Report:
    return Report("T", "S", [("Date", "today")], [Section("Only", list(blocks))])


def test_pipes_and_newlines_are_escaped_and_emphasis_is_bold() -> None:
    table = Table(["Name", "Value"], [["a|b", "1\n2"], ["fast", "3"]], emphasis={1}, align=["left", "center"])
    text = render_markdown(_one_section(table, Paragraph("careful", style="note")))
    assert "| a\\|b | 1 2 |" in text
    assert "| **fast** | **3** |" in text
    assert "|:---|:---:|" in text
    assert "> careful" in text


def test_other_charts_render_their_data() -> None:
    hist = Histogram("Spread", [1e-6, 2e-6, 3e-6], [4, 5], 1.5e-6, clipped_above=1)
    stacked = StackedBars("Parts", ["job"], {"compute": [1e-6], "network": [3e-6]})
    text = render_markdown(_one_section(Chart(hist, caption="cap"), Chart(stacked)))
    assert "| 1 µs – 2 µs | 4 |" in text
    assert "| beyond 3 µs (not drawn) | 1 |" in text
    assert "*cap*" in text
    assert "| Entry | compute | network | sum |" in text
    assert "| job | 1 µs | 3 µs | 4 µs |" in text

"""The run summary's figures each stand under the heading they belong to, at any width: an
80-column summary showed "encrypt/decrypt │ 610 ns", the encrypt figure alone under both
operations' names, and link jobs lost their round trip."""

from __future__ import annotations

import re

import pytest

from tests.helpers.report_runs import RUN_ID, build_run
from tests.helpers.terminal import printed_summary


def _rows(text: str) -> list[list[str]]:
    """The summary table's rows (terminal form), cells stripped; continuation lines of a
    wrapped label left out."""
    table = text[text.index("Summary (median per operation)") :]
    rows = []
    for line in table.splitlines():
        if line.startswith("│") and re.match(r"│\s*#\d+", line):
            rows.append([cell.strip() for cell in line.strip("│").split("│")])
    return rows


@pytest.mark.parametrize("width", [80, 100, 160])
def test_each_median_is_said_with_the_operation_it_times(width: int) -> None:
    run = build_run(RUN_ID, "2026-11-23T19:22:33+00:00")
    text = printed_summary(run, terminal=True, width=width)
    header = next(line for line in text.splitlines() if line.startswith("┃") and " job " in line)
    columns = [cell.strip() for cell in header.strip("┃").split("┃")]
    assert "operation" not in columns  # no heading naming two operations over one figure
    figures = [r for r in _rows(text) if "failed" not in r[-1]]
    assert figures
    median = columns.index("median")
    for row in figures:  # "encrypt 600 ns", "compute 2.2 µs": the figure names its operation
        assert re.fullmatch(r"[a-z]+ \d[\d.,]* (ns|µs|ms|s)", row[median]), row
    if "reverse" in columns:
        reverse = columns.index("reverse")
        assert all(re.fullmatch(r"([a-z]+ \d[\d.,]* (ns|µs|ms|s))|-", row[reverse]) for row in figures)
    # The session's round trip stays at 80 columns: the reverse operation is left out first.
    assert "rtt" in columns
    session = next(row for row in figures if row[median].startswith("compute "))
    assert re.fullmatch(r"\d[\d.,]* (ns|µs|ms|s)", session[columns.index("rtt")])


def test_a_pipe_keeps_every_field_in_its_place() -> None:
    run = build_run(RUN_ID, "2026-11-23T19:22:33+00:00")
    piped = printed_summary(run, terminal=False)
    assert "Summary (median per operation): job | size | operation | median | reverse | rtt | status" in piped
    assert any(" | encrypt/decrypt | " in line for line in piped.splitlines())

"""A results file's load records, damaged field by field: every mutation is refused with
one line naming the file and field, or the run still renders everywhere it is shown (the
report, the terminal, CSV, JSON, the window's table cells and its Load chart's data)."""

from __future__ import annotations

import io
import json
import math
from typing import Any

import pytest
from rich.console import Console

from app.cli.terminal.printing import print_summary, print_table
from app.core.results import model as results
from app.core.results.model import ResultsFileError, parse_results_text
from app.report.content import build_report
from app.report.markdown import render_markdown
from tests.helpers.loads import load_run

BASE_TEXT = results.to_json(load_run())
MISSING = object()
REPLACEMENTS: dict[str, Any] = {
    "string": "x",
    "null": None,
    "zero": 0,
    "negative": -1,
    "NaN": math.nan,
    "huge float": 1e308,
    "huge int": 10**30,
    "array": [],
    "object": {},
    "boolean": True,
    "missing": MISSING,
}


def _locations() -> list[tuple[Any, ...]]:
    """Every field of the first job's load record and of its first step, and the record itself."""
    data = json.loads(BASE_TEXT)
    load = data["jobs"][0]["load"]
    where: list[tuple[Any, ...]] = [("jobs", 0, "load"), ("jobs", 0, "load", "steps")]
    where += [("jobs", 0, "load", key) for key in load if key != "steps"]
    where += [("jobs", 0, "load", "steps", 0, key) for key in load["steps"][0]]
    where += [("jobs", 0, "load", "steps", 0, "latency_s", key) for key in load["steps"][0]["latency_s"]]
    return where


def _mutated(loc: tuple[Any, ...], value: Any) -> dict[str, Any]:
    data = json.loads(BASE_TEXT)
    parent = data
    for key in loc[:-1]:
        parent = parent[key]
    if value is MISSING:
        parent.pop(loc[-1], None)
    else:
        parent[loc[-1]] = value
    return data


def _shown_everywhere(run: results.RunResult) -> None:
    from app.gui.plots.load import load_curves
    from app.gui.results.load_cells import load_row

    render_markdown(build_report(run))
    results.to_csv(run).encode("utf-8")
    results.to_json(run).encode("utf-8")
    console = Console(file=io.StringIO(), width=120)
    print_table(console, run)
    print_summary(console, run)
    for job in run.jobs:
        load_row(job)
    load_curves(run.jobs)


@pytest.mark.parametrize("loc", _locations(), ids=lambda loc: ".".join(str(k) for k in loc[2:]))
def test_every_mutation_of_a_load_record_is_refused_or_rendered(loc: tuple[Any, ...]) -> None:
    for kind, value in REPLACEMENTS.items():
        try:
            run = parse_results_text(json.dumps(_mutated(loc, value)), "mutated.json")
        except ResultsFileError as exc:
            assert "\n" not in str(exc) and str(exc).startswith("mutated.json: "), (kind, str(exc))
            continue
        _shown_everywhere(run)

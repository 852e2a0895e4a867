"""What the command line prints about load jobs: each job's steps and its verdict, and
a summary of load jobs in place of the session columns (median, reverse, rtt), which a
load job does not have.

Like app/cli/terminal/printing.py: a rich table on a terminal; elsewhere one unwrapped line per
record, fields split by " | ", so `grep` and `cut` see whole rows.
"""

from __future__ import annotations

from typing import Any

from app.cli.terminal.console import escape
from app.core.load.verdict import VerdictKind, load_verdict
from app.core.records.job_conditions import Load
from app.core.results.model import JobResult
from app.core.vocab import JobStatus
from app.report.load_generator_words import (
    GENERATOR_COLUMNS,
    GeneratorRow,
    generator_cells,
    generator_latency_unit,
    generator_mark,
    generator_rows,
    has_generators,
    places_text,
)
from app.report.load_words import (
    LATENCY_COLUMNS,
    STEP_COLUMNS,
    STEP_HEAD,
    conditions,
    latency_cells,
    latency_unit,
    rate_text,
    requests_word,
    step_cells,
    step_marks,
    verdict,
)
from app.report.units import MISSING, format_seconds


def print_load(console: Any, job: JobResult) -> None:
    """A load job's steps (a table, or one line per step), then its verdict and conditions."""
    load = job.load
    if load is None:
        return
    if not console.is_terminal:
        console.print("    steps: " + " | ".join(STEP_COLUMNS) + " | mark")
        for step, mark in zip(load.steps, step_marks(load), strict=True):
            console.print(("    " + " | ".join(step_cells(step)) + f" | {escape(mark)}").rstrip())
    elif load.steps:
        _print_step_table(console, load)
    print_generators(console, load)
    _print_indented(console, f"[bold]verdict: {escape(verdict(job, load))}[/]")
    _print_indented(console, f"[dim]{escape(conditions(job, load))}[/]")


def _print_step_table(console: Any, load: Load) -> None:
    """Latencies in one unit (the header says which), rates per second, CPU in percent of one
    core: narrow enough for 80 columns, a block per step below that (app/cli/terminal/tables.py).
    A step that did not measure the server keeps its reason below the table, marked in the
    table by a dagger."""
    from app.cli.terminal.tables import Column, print_fitted_table

    unit, _ = latency_unit(load.steps)
    # "missed" only where a step missed requests (80 columns hold no column of zeros; the
    # piped lines always have it).
    missed = any(step.missed for step in load.steps)
    headers = ("offered", "achieved", "errors", *(("missed",) if missed else ()), *LATENCY_COLUMNS, "gen %", "srv %")
    _print_indented(
        console,
        f"[dim]steps: requests/s; latency in {unit} from each request's intended start; "
        "CPU of the generator and the server in % of one core[/]",
    )
    notes, rows = [], []
    for step, mark in zip(load.steps, step_marks(load), strict=True):
        cells = step_cells(step)
        if mark:
            notes.append(f"{cells[0]}/s: {mark}")
        cpu = [MISSING if v is None else f"{v:.0f}" for v in (step.generator_cpu_percent, step.server_cpu_percent)]
        shown = [cells[0] + ("†" if mark else " "), *cells[1 : STEP_HEAD if missed else STEP_HEAD - 1]]
        rows.append([escape(cell) for cell in (*shown, *latency_cells(step, unit), *cpu)])
    columns = [Column(header, "right", whole=True, key=header == "offered") for header in headers]
    styles = ["yellow" if mark else None for mark in step_marks(load)]
    print_fitted_table(console, columns, rows, row_styles=styles, indent=4, compact=True)
    for note in notes:
        _print_indented(console, f"[yellow]† {escape(note)}[/]")


def print_generators(console: Any, load: Load) -> None:
    """A cluster job's generators: where each ran (one line), then each one's figures per
    step (a table, or one line per generator and step), then why any step is incomplete.
    Nothing for one generator."""
    if not has_generators(load):
        return
    _print_indented(console, f"[dim]{escape(places_text(load))}[/]")
    rows = generator_rows(load)
    if not console.is_terminal:
        console.print("    per generator: " + " | ".join(GENERATOR_COLUMNS) + " | mark")
        for row in rows:
            console.print(("    " + " | ".join(generator_cells(row)) + f" | {escape(generator_mark(row))}").rstrip())
    else:
        _print_generator_table(console, rows)
    # The step's own mark names why it is incomplete (the verdict's call); said here only
    # where a recorded call did not.
    for step, mark in zip(load.steps, step_marks(load), strict=True):
        if step.incomplete and step.incomplete not in mark:
            note = f"at {rate_text(step.offered_per_s)}/s: {step.incomplete}"
            _print_indented(console, f"[yellow]incomplete step {escape(note)}[/]")


def _print_generator_table(console: Any, rows: list[GeneratorRow]) -> None:
    """One table, a section per step (its rate on its first row): as narrow as the steps
    table; a generator's mark goes below it, by a dagger, as the steps table's do. Where it
    does not fit the terminal, the completed counts are left out first, and a line under
    it says so; narrower still, a block per generator and step."""
    from app.cli.terminal.tables import Column, print_fitted_table

    unit = generator_latency_unit(rows)
    headers = ["step/s", "gen", "offered", "achieved", "completed", f"p50 {unit}", f"p99 {unit}", "lag p99"]
    notes, cells, marks, ends = [], [], [], []
    for k, row in enumerate(rows):
        shown = generator_cells(row, unit)
        mark = generator_mark(row)
        if mark:
            notes.append(f"{shown[0]}/s, generator {shown[1]}: {mark}")
        first = k == 0 or rows[k - 1].step is not row.step
        ends.append(k + 1 == len(rows) or rows[k + 1].step is not row.step)
        marks.append(mark)
        cells.append(
            [
                escape(cell)
                for cell in (
                    shown[0] if first else "",
                    shown[1] + ("†" if mark else " "),
                    *shown[2:-1],
                    shown[-1].replace(" %", ""),
                )
            ]
        )
    columns = [
        *(Column(header, "right", whole=True, key=True) for header in headers[:2]),
        *(Column(header, "right", whole=True, drop=int(header == "completed")) for header in headers[2:]),
        Column("start", "right", whole=True),
        Column("gen %", "right", whole=True),
    ]
    about = (
        "per generator: its share of each step (requests/s), its own latency, how late it sent (p99), "
        "when it began against the agreed start (+ after, - before), its CPU in % of one core"
    )
    _print_indented(console, f"[dim]{escape(about)}[/]")
    styles = ["yellow" if mark else None for mark in marks]
    print_fitted_table(console, columns, cells, row_styles=styles, indent=4, compact=True, sections=ends)
    for note in notes:
        _print_indented(console, f"[yellow]† {escape(note)}[/]")


def _print_indented(console: Any, markup: str) -> None:
    """A line indented like the job's other lines, its wrapped lines too (off a terminal
    nothing wraps, and a Padding would fill the line with spaces to the console's width)."""
    if not console.is_terminal:
        console.print("    " + markup)
        return
    from rich.padding import Padding
    from rich.text import Text

    console.print(Padding(Text.from_markup(markup), (0, 0, 0, 4)))


def load_summary_rows(jobs: list[JobResult]) -> list[tuple[str, str, str, str, str, str]]:
    """Per load job: label, what a request is, sustained rate, its p99, knee, status."""
    rows = []
    for job in jobs:
        load = job.load
        if load is None:
            rows.append((job.named, "-", "-", "-", "-", job.status))
            continue
        judged = load_verdict(load)
        knee = rate_text(judged.knee_per_s) + ("" if judged.kind == VerdictKind.SERVER else " (at least)")
        if judged.knee_per_s is None:
            knee = "none: generator-limited" if load.steps else MISSING
        rows.append(
            (
                job.named,
                requests_word(load),
                rate_text(judged.sustained_per_s),
                format_seconds(judged.sustained_p99_s),
                knee,
                job.status,
            )
        )
    return rows


def print_load_table(console: Any, jobs: list[JobResult]) -> None:
    """The one-glance summary of load jobs (requests per second, not per-operation medians)."""
    if not jobs:
        return
    title = "Load summary (requests/s the server kept up with, p99 latency there, the most it achieved)"
    rows = load_summary_rows(jobs)
    console.print()
    if not console.is_terminal:
        console.print(f"{title}: job | request | sustained/s | p99 | knee/s | status")
        for label, request, sustained, p99, knee, status in rows:
            console.print(
                f"{escape(label)} | {request} | {sustained} | {p99} | {knee} | "
                + (status if status == JobStatus.OK else f"[red]{status}[/]")
            )
        return
    from app.cli.terminal.tables import Column, print_fitted_table

    columns = (
        Column("job", key=True),
        Column("request", drop=1),
        Column("sustained/s", "right", whole=True),
        Column("p99", "right", whole=True),
        Column("knee/s", "right"),
        Column("status"),
    )
    cells = [
        (escape(label), request, sustained, p99, knee, status if status == JobStatus.OK else f"[red]{status}[/]")
        for label, request, sustained, p99, knee, status in rows
    ]
    print_fitted_table(console, columns, cells, title=title)

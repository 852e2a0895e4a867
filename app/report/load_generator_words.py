"""A cluster load job's generators in words and cells, the same in the terminal and the reports.

A load job whose generators ran on Dask workers (load from several machines: `Load.cluster`,
`Load.generators`) keeps, beside each step's merged figures, every generator's own record of
that step (`LoadStep.generators`, numbered by `generator`). This module says where each
generator ran and how its clock stood, and gives each generator's cells for a step: its
share of the rate, what it achieved and completed, its own p50 and p99, how late it sent,
when it began against the agreed start (+ after it, - before it) and its CPU, and its mark
(late or short, or begun too late: the generator's own words). A generator missing
from a step (it died, disconnected or returned late: the step is `incomplete`) gets a row
that says so rather than no row. A one-generator job has none of this: every function
returns nothing for it.

Qt-free: the CLI (app/cli/terminal/load_printing.py) and the report section (app/report/load.py)
use it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from app.core.load.verdict import rate_text
from app.core.records.job_conditions import Load, LoadGeneratorPlace, LoadStep
from app.report.units import MISSING, format_seconds, format_seconds_in

#: A generator's cells for one step: which step (its total offered rate), which generator,
#: its share offered, achieved, completed, its p50 and p99 (in the table's unit), its send
#: lag (p99), its start against the agreed one (`LoadStep.started_late_s`, signed) and CPU.
GENERATOR_COLUMNS: tuple[str, ...] = (
    "step/s",
    "generator",
    "offered/s",
    "achieved/s",
    "completed",
    "p50",
    "p99",
    "send lag",
    "start",
    "generator CPU",
)
#: The percentiles a generator's row gives (the step's own row has all of them).
GENERATOR_PERCENTILES = ("p50", "p99")
#: The mark of a generator that did not return its share of a step.
MISSING_MARK = "missing: it did not return this step"


def has_generators(load: Load) -> bool:
    """The job's load came from generators on Dask workers (each has its own figures)."""
    return bool(load.generators)


def signed_seconds(value: float) -> str:
    """+1.2 ms, -350 µs: a clock offset, its sign kept."""
    return ("-" if value < 0 else "+") + format_seconds(abs(value))


def generator_where(place: LoadGeneratorPlace) -> str:
    """Where one generator ran, told apart from the others: "loadgen-a, worker
    tcp://10.0.0.11:40001". Machines may share a name (every worker on one host, or hosts
    cloned from one image); the worker's address is the scheduler's own, one per worker."""
    return f"{place.host}, worker {place.worker}"


def place_text(number: int, place: LoadGeneratorPlace) -> str:
    """ "#1 loadgen-a (worker tcp://10.0.0.11:40001), 2 clients, clock +1.2 ms ± 400 µs"."""
    clients = f"{place.clients} client{'s' if place.clients != 1 else ''}"
    clock = f"clock {signed_seconds(place.clock_offset_s)} ± {format_seconds(place.clock_uncertainty_s)}"
    return f"#{number} {place.host} (worker {place.worker}), {clients}, {clock}"


def places_text(load: Load) -> str:
    """Where the generators ran, in one line: "2 generators through the Dask scheduler
    tcp://10.0.0.5:8786: #1 ...; #2 ..." (clock: each worker's offset to this machine's,
    ± how well it is known); empty for a one-generator job."""
    if not has_generators(load):
        return ""
    count = len(load.generators)
    through = f" through the Dask scheduler {load.cluster}" if load.cluster else ""
    places = "; ".join(place_text(k + 1, place) for k, place in enumerate(load.generators))
    return f"{count} generator{'s' if count != 1 else ''}{through}: {places}"


@dataclass(frozen=True)
class GeneratorRow:
    """One generator at one step: its record, or None when it did not return the step."""

    step: LoadStep
    number: int
    record: LoadStep | None


def generator_rows(load: Load) -> list[GeneratorRow]:
    """Every generator at every step, steps in offered order, generators by number; a
    generator an incomplete step lacks gets a row without a record."""
    rows = []
    for step in load.steps:
        by_number = {part.generator: part for part in step.generators}
        for number in range(1, len(load.generators) + 1):
            rows.append(GeneratorRow(step, number, by_number.get(number)))
    return rows if has_generators(load) else []


def generator_latency_unit(rows: Sequence[GeneratorRow]) -> str:
    """One unit for the generators' latencies: ms from 1 ms up, µs otherwise."""
    largest = max(
        (r.record.latency_s.get(name, 0.0) for r in rows if r.record for name in GENERATOR_PERCENTILES), default=0.0
    )
    return "ms" if largest >= 1e-3 else "µs"


def generator_cells(row: GeneratorRow, unit: str | None = None) -> list[str]:
    """The GENERATOR_COLUMNS of one row; latencies in `unit` (the header names it), or
    each with its own unit when None (a line of text, not a column)."""
    head = [rate_text(row.step.offered_per_s), f"#{row.number}"]
    part = row.record
    if part is None:
        return head + [MISSING] * (len(GENERATOR_COLUMNS) - len(head))

    def latency(name: str) -> str:
        value = part.latency_s.get(name)
        return format_seconds(value) if unit is None else format_seconds_in(value, unit)

    return head + [
        rate_text(part.offered_per_s),
        rate_text(part.achieved_per_s),
        f"{part.completed:,}",
        *(latency(name) for name in GENERATOR_PERCENTILES),
        format_seconds(part.send_lag_p99_s),
        MISSING if part.started_late_s is None else signed_seconds(part.started_late_s),
        MISSING if part.generator_cpu_percent is None else f"{part.generator_cpu_percent:.0f} %",
    ]


def generator_mark(row: GeneratorRow) -> str:
    """What the generator's own record says against it at this step (late, short, missed
    requests, errors), or that it is missing; empty when it kept its schedule."""
    part = row.record
    if part is None:
        return MISSING_MARK
    marks = []
    if part.saturation_reason:
        marks.append(part.saturation_reason)
    elif part.generator_saturated:
        marks.append("generator-saturated")
    if part.missed:
        marks.append(f"{part.missed:,} missed (never sent)")
    if part.errors:
        marks.append(f"{part.errors:,} error{'s' if part.errors != 1 else ''}")
    return "; ".join(marks)

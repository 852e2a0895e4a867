"""Last pass over a built report: one time unit per table column, no raw seconds in prose.

Tables are filled cell by cell with `format_seconds`, which picks a prefix per value, so a
column could read "955 ns" above "42 ms" and a reader had to compare units before digits.
Here every group of adjacent columns whose cells are all times gets one unit, chosen for
the group (a spread such as Std follows the times beside it, never ns beside µs), named in
each header ("Median (µs)"), and plain numbers in its cells. Prose that quotes seconds as
code prints them ("1.859e-05 s", from a warning's message) gets a prefix ("18.6 µs").

Qt-free: the Markdown and PDF renderers both see the tidied model.
"""

from __future__ import annotations

from app.report.model import Bullets, Chart, Paragraph, Section, Table
from app.report.units import format_seconds_in, humanize_seconds, parse_seconds, time_unit_for

#: Cells that stand for "no value" and may sit in a column of times.
_EMPTY = frozenset({"", "-", "—", "–", "n/a"})


#: Headers of columns that measure a spread, not a time of their own: they take the unit
#: of the times beside them ("Std" in ns beside a µs median made a reader rescale).
_SPREAD = ("std", "mad", "iqr")


def _time_values(table: Table, c: int) -> list[float] | None:
    """The times of column `c`, or None when it is not a column of times."""
    filled = [row[c] for row in table.rows if c < len(row) and row[c].strip() not in _EMPTY]
    values = [parse_seconds(cell) for cell in filled]
    if not filled or any(v is None for v in values):
        return None
    return [v for v in values if v is not None]


def unify_time_columns(table: Table) -> None:
    """Every group of adjacent columns of times (the first column names rows and is left
    alone) in one unit, chosen from its times (spreads follow) and named in each header."""
    times = {c: v for c in range(1, len(table.columns)) if (v := _time_values(table, c)) is not None}
    groups: list[list[int]] = []
    for c in sorted(times):
        if groups and groups[-1][-1] == c - 1:
            groups[-1].append(c)
        else:
            groups.append([c])
    for group in groups:
        centre = [c for c in group if not table.columns[c].strip().lower().startswith(_SPREAD)] or group
        unit, _ = time_unit_for([v for c in centre for v in times[c]])
        for c in group:
            for row in table.rows:
                if c < len(row) and row[c].strip() not in _EMPTY:
                    row[c] = format_seconds_in(parse_seconds(row[c]), unit)
            table.columns[c] = f"{table.columns[c]} ({unit})"
            if table.align is not None and c < len(table.align):
                table.align[c] = "right"


def tidy_sections(sections: list[Section]) -> None:
    for section in sections:
        for block in section.blocks:
            if isinstance(block, Paragraph):
                block.text = humanize_seconds(block.text)
            elif isinstance(block, Bullets):
                block.items = [humanize_seconds(item) for item in block.items]
            elif isinstance(block, Table):
                block.rows = [[humanize_seconds(cell) for cell in row] for row in block.rows]
                if block.caption:
                    block.caption = humanize_seconds(block.caption)
                unify_time_columns(block)
            elif isinstance(block, Chart) and block.caption:
                block.caption = humanize_seconds(block.caption)

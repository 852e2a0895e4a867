"""Last pass over a built report: one time unit per table column, no raw seconds in prose.

Tables are filled cell by cell with `format_seconds`, which picks a prefix per value, so a
column could read "955 ns" above "42 ms" and a reader had to compare units before digits.
Here every column whose cells are all times gets one unit, chosen for the column, named in
its header ("Median (µs)"), and plain numbers in its cells. Prose that quotes seconds as
code prints them ("1.859e-05 s", from a warning's message) gets a prefix ("18.6 µs").

Qt-free: the Markdown and PDF renderers both see the tidied model.
"""

from __future__ import annotations

from app.report.model import Bullets, Chart, Paragraph, Section, Table
from app.report.units import format_seconds_in, humanize_seconds, parse_seconds, time_unit_for

#: Cells that stand for "no value" and may sit in a column of times.
_EMPTY = frozenset({"", "-", "—", "–", "n/a"})


def unify_time_columns(table: Table) -> None:
    """Every column of times (the first column names rows and is left alone) in one unit."""
    for c in range(1, len(table.columns)):
        cells = [row[c] if c < len(row) else "" for row in table.rows]
        filled = [cell for cell in cells if cell.strip() not in _EMPTY]
        values = [parse_seconds(cell) for cell in filled]
        if not filled or any(v is None for v in values):
            continue
        unit, _ = time_unit_for([v for v in values if v is not None])
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

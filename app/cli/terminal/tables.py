"""The one way the command line draws a table on a terminal: it never splits a word.

rich fits a table to the terminal by folding cells wherever the width runs out, so at 80
or 120 columns words came out cut ("slowe r (regr essio n)", "[cryptograph y]", a start
time as "+00:0 / 0"). Here every column is at least as wide as its longest word (as wide
as its whole cell for a column that must not wrap at all: numbers with their unit, ids,
times); when the columns do not fit side by side, the least needed ones are left out, the
table says which, and the rest share the room. Off a terminal no table is drawn at all:
each command prints one line per row there (app/cli/terminal/printing.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Column", "print_fitted_table"]


@dataclass(frozen=True, slots=True)
class Column:
    """A column of a fitted table. `drop`: the order in which columns are left out when the
    table does not fit (1 first; 0: never). `whole`: its cells never wrap (a number and
    its unit, an id, a time)."""

    header: str
    justify: Literal["left", "right"] = "left"
    drop: int = 0
    whole: bool = False


def _plain_lines(markup: str) -> list[str]:
    from rich.text import Text

    return Text.from_markup(markup).plain.split("\n")


def _widths(column: Column, cells: Sequence[str]) -> tuple[int, int]:
    """The narrowest the column can be without splitting a word (or a whole cell) and the
    width that shows every cell on one line."""
    from rich.cells import cell_len

    lines = [line for cell in (column.header, *cells) for line in _plain_lines(cell)]
    widest = max((cell_len(line) for line in lines), default=1)
    if column.whole:
        header_word = max((cell_len(w) for w in column.header.split()), default=1)
        narrowest = max([header_word, *(cell_len(line) for cell in cells for line in _plain_lines(cell))])
    else:
        narrowest = max((cell_len(word) for line in lines for word in line.split()), default=1)
    return max(1, narrowest), max(1, widest)


def _share_room(limits: dict[int, tuple[int, int]], room: int) -> dict[int, int]:
    """Every column at its narrowest, then the room left shared out in proportion to what
    each still lacks to show its cells on one line (a long description gets more than a
    short name), none past that."""
    widths = {i: narrowest for i, (narrowest, _) in limits.items()}
    while room > 0:
        lacking = {i: limits[i][1] - widths[i] for i in widths if widths[i] < limits[i][1]}
        if not lacking:
            break
        total = sum(lacking.values())
        given = 0
        for i, lack in sorted(lacking.items(), key=lambda item: item[1]):
            grant = min(lack, max(1, room * lack // total), room - given)
            widths[i] += grant
            given += grant
        room -= given
    return widths


def print_fitted_table(
    console: Any,
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    row_styles: Sequence[str | None] | None = None,
    show_lines: bool = False,
) -> None:
    """Print `rows` (cells in rich markup) as a table as wide as the terminal at most, no
    word split; columns left out to fit are named below it."""
    from rich.cells import cell_len
    from rich.table import Table

    if title is not None and any(cell_len(word) > console.width for word in _plain_lines(title)[0].split()):
        # A title with a word wider than the terminal (a long store path): a line of its
        # own that rich does not cut, so the path stays whole to copy.
        console.print(title, soft_wrap=True)
        title = None
    limits = [_widths(column, [row[i] for row in rows]) for i, column in enumerate(columns)]
    shown = list(range(len(columns)))

    def build(indices: list[int]) -> Table:
        table = Table(title=title, title_justify="left", show_lines=show_lines, expand=False)
        for i in indices:
            table.add_column(columns[i].header, justify=columns[i].justify, overflow="fold")
        return table

    def overhead(table: Table) -> int:
        # Borders and the padding rich adds around every cell.
        extra: int = table._extra_width
        return extra + sum(table._get_padding_width(k) for k in range(len(table.columns)))

    table = build(shown)
    droppable = sorted((c.drop, i) for i, c in enumerate(columns) if c.drop)
    while sum(limits[i][0] for i in shown) + overhead(table) > console.width and droppable:
        shown.remove(droppable.pop(0)[1])
        table = build(shown)
    widths = _share_room(
        {i: limits[i] for i in shown}, console.width - overhead(table) - sum(limits[i][0] for i in shown)
    )
    for column, i in zip(table.columns, shown):
        column.width = widths[i]
    styles = row_styles or [None] * len(rows)
    for row, style in zip(rows, styles):
        table.add_row(*(row[i] for i in shown), style=style)
    console.print(table)
    left_out = [columns[i].header for i in range(len(columns)) if i not in shown]
    if left_out:
        console.print(
            f"[dim](left out to fit {console.width} columns: {', '.join(left_out)}; a wider terminal shows them, "
            "and so does the output in a pipe)[/]"
        )

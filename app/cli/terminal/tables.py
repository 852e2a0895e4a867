"""The one way the command line draws a table on a terminal: it never splits a word.

rich fits a table to the terminal by folding cells wherever the width runs out, so at 80
or 120 columns words came out cut ("slowe r (regr essio n)", "[cryptograph y]", a start
time as "+00:0 / 0"). Here every column is at least as wide as its longest word (as wide
as its whole cell for a column that must not wrap at all: numbers with their unit, ids,
times). When the columns do not fit side by side, in this order:

1. a column with the same cell on every row is said once under the table instead
   ("mode: ops on every row"), which loses nothing;
2. the least needed columns are left out, those of one rank together (both medians),
   and a line under the table names them; a column that identifies a row (`key`: a job,
   its size, a metric) is never left out;
3. when even that does not fit (40 columns), each row is a block of its own: the cells
   that identify it on one line, the others as "header: cell" after it, wrapped at
   spaces, so nothing is left out and no word is cut.

Off a terminal no table is drawn at all: each command prints one line per row there
(app/cli/terminal/printing.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # rich is imported when a table is drawn, not when the command line starts
    from rich.table import Table

__all__ = ["Column", "print_fitted_table"]


@dataclass(frozen=True, slots=True)
class Column:
    """A column of a fitted table. `drop`: the order in which columns are left out when the
    table does not fit (1 first, columns of one rank together; 0: never). `whole`: its
    cells never wrap (a number and its unit, an id, a time). `key`: it identifies a row (a
    job, its size, a metric), so it is never left out and leads a row's block."""

    header: str
    justify: Literal["left", "right"] = "left"
    drop: int = 0
    whole: bool = False
    key: bool = False

    def __post_init__(self) -> None:
        if self.key and self.drop:
            raise ValueError(f"column {self.header!r} identifies a row: it cannot be left out")


def _plain_lines(markup: str) -> list[str]:
    from rich.text import Text

    return Text.from_markup(markup).plain.split("\n")


def _plain(markup: str) -> str:
    return " ".join(_plain_lines(markup)).strip()


def _widths(column: Column, cells: Sequence[str]) -> tuple[int, int, int]:
    """The narrowest the column can be without splitting a word (or a whole cell), the
    width that shows every cell on one line, and the width that shows its header on one
    line too."""
    from rich.cells import cell_len

    lines = [line for cell in cells for line in _plain_lines(cell)]
    header = _plain_lines(column.header)
    widest = max((cell_len(line) for line in lines), default=1)
    if column.whole:
        header_word = max((cell_len(w) for w in column.header.split()), default=1)
        narrowest = max([header_word, *(cell_len(line) for line in lines)])
    else:
        narrowest = max((cell_len(word) for line in (*header, *lines) for word in line.split()), default=1)
    widest = max(widest, narrowest)
    return max(1, narrowest), max(1, widest), max(1, widest, *(cell_len(line) for line in header))


def _share_room(limits: dict[int, tuple[int, int, int]], room: int) -> dict[int, int]:
    """Every column at its narrowest, then the room left shared out in proportion to what
    each still lacks to show its cells on one line (a long description gets more than a
    short name), none past that; then what is left to show the headers on one line."""
    widths = {i: narrowest for i, (narrowest, _, _) in limits.items()}
    for target in (1, 2):
        while room > 0:
            lacking = {i: limits[i][target] - widths[i] for i in widths if widths[i] < limits[i][target]}
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


@dataclass
class _Fit:
    """How a table fits: the columns shown, those said once under it, those left out, and
    whether each row is a block of its own (even the key columns do not fit side by side)."""

    shown: list[int]
    lifted: list[int]
    left_out: list[int]
    blocks: bool = False


def _fit(columns: Sequence[Column], rows: Sequence[Sequence[str]], fits: Any) -> _Fit:
    """The columns to show (`fits(shown)`: whether they fit side by side)."""
    shown = list(range(len(columns)))
    if fits(shown):
        return _Fit(shown, [], [])
    lifted = []
    if len(rows) > 1:
        lifted = [i for i in shown if len({_plain(row[i]) for row in rows}) == 1]
        shown = [i for i in shown if i not in lifted]
    left_out: list[int] = []
    for rank in sorted({c.drop for c in columns if c.drop}):
        if fits(shown):
            break
        dropped = [i for i in shown if columns[i].drop == rank]
        shown = [i for i in shown if i not in dropped]
        left_out += dropped
    if shown and fits(shown):
        return _Fit(shown, lifted, left_out)
    # Too narrow for a table: a block per row shows every column but those said once.
    return _Fit([i for i in range(len(columns)) if i not in lifted], lifted, [], blocks=True)


def print_fitted_table(
    console: Any,
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    row_styles: Sequence[str | None] | None = None,
    show_lines: bool = False,
    headings: Sequence[str | None] | None = None,
    indent: int = 0,
    compact: bool = False,
    sections: Sequence[bool] | None = None,
) -> None:
    """Print `rows` (cells in rich markup) as a table as wide as the terminal at most, no
    word split: columns said once or left out to fit are named below it, and a terminal
    too narrow for the rest gets a block per row.

    `headings`, one per row: a row with one starts a group, and the heading (what the
    group's rows share: a job's name, size and mode over its metrics) is said once, on a
    line of its own as wide as the terminal, instead of in columns on every row. The
    groups are then drawn as one table without vertical lines, aligned, its header once.
    `indent`: the table and its lines start that many columns in (a job's own lines);
    `compact`: columns two spaces apart, no lines at all (a job's steps); `sections`, one
    per row: a rule under the rows that end one."""
    from rich.cells import cell_len

    out = _Out(console, indent)
    if title is not None and any(cell_len(word) > out.width for word in _plain_lines(title)[0].split()):
        # A title with a word wider than the terminal (a long store path): a line of its
        # own that rich does not cut, so the path stays whole to copy.
        console.print(title, soft_wrap=True)
        title = None
    heads = list(headings or [None] * len(rows))
    limits = [_widths(column, [row[i] for row in rows]) for i, column in enumerate(columns)]
    style = "grouped" if any(heads) else "compact" if compact else "boxed"

    def table(indices: list[int], **options: Any) -> Table:
        return _table(columns, indices, style=style, show_lines=show_lines, **options)

    def overhead(indices: list[int]) -> int:
        # Borders and the padding rich adds around every cell.
        drawn = table(indices)
        extra: int = drawn._extra_width
        padding: int = sum(drawn._get_padding_width(k) for k in range(len(drawn.columns)))
        return extra + padding

    fit = _fit(columns, rows, lambda indices: sum(limits[i][0] for i in indices) + overhead(indices) <= out.width)
    styles = row_styles or [None] * len(rows)
    if title is not None and (fit.blocks or style == "grouped"):
        out.print(title)
    if fit.blocks:
        _print_blocks(out, columns, fit.shown, rows, styles, heads)
        _print_said_once(out, columns, rows, fit)
        return
    room = out.width - overhead(fit.shown) - sum(limits[i][0] for i in fit.shown)
    widths = _share_room({i: limits[i] for i in fit.shown}, room)

    def sized(**options: Any) -> Table:
        drawn = table(fit.shown, **options)
        for column, i in zip(drawn.columns, fit.shown):
            column.width = widths[i]
        return drawn

    cells = [[row[i] for i in fit.shown] for row in rows]
    if style == "grouped":
        out.print(sized())  # the header, once
        _print_groups(out, cells, styles, heads, sized)
    else:
        drawn = sized(title=title)
        for row, row_style, ends in zip(cells, styles, sections or [False] * len(rows)):
            drawn.add_row(*row, style=row_style, end_section=ends)
        out.print(drawn)
    _print_said_once(out, columns, rows, fit)


class _Out:
    """Where a table's lines go: the console, `indent` columns in, `width` wide at most."""

    def __init__(self, console: Any, indent: int) -> None:
        self.console, self.indent = console, indent
        self.width: int = max(1, console.width - indent)

    def print(self, renderable: Any) -> None:
        """A table, or markup that rich wraps to the width left after the indent."""
        from rich.padding import Padding
        from rich.text import Text

        if isinstance(renderable, str):
            renderable = Text.from_markup(renderable)
        self.console.print(Padding(renderable, (0, 0, 0, self.indent), expand=False) if self.indent else renderable)

    def line(self, text: str, style: str) -> None:
        """A line already wrapped: never cut again (one word wider than the terminal, an
        address, stays whole for the terminal to wrap and the reader to copy)."""
        from rich.text import Text

        self.console.print(Text(" " * self.indent + text, style=style), soft_wrap=True)


def _table(columns: Sequence[Column], indices: list[int], *, style: str, show_lines: bool, **options: Any) -> Table:
    """A rich table of `columns[indices]`: boxed; for groups, aligned columns under one
    rule (`show_header=False` for a group's rows: the header is drawn once); compact,
    columns two spaces apart without any line."""
    from rich import box
    from rich.table import Table

    looks: dict[str, dict[str, Any]] = {
        "boxed": {},
        "grouped": {"box": box.SIMPLE_HEAD, "show_edge": False},
        "compact": {"box": None, "padding": (0, 1), "pad_edge": False, "show_edge": False},
    }
    drawn = Table(title_justify="left", show_lines=show_lines, expand=False, **looks[style], **options)
    for i in indices:
        drawn.add_column(columns[i].header, justify=columns[i].justify, overflow="fold")
    return drawn


def _print_groups(
    out: _Out,
    rows: Sequence[Sequence[str]],
    styles: Sequence[str | None],
    headings: Sequence[str | None],
    sized: Any,
) -> None:
    """Each group's heading on its own lines, then its rows in columns as wide as the header's."""
    start = 0
    for end in [*(k for k in range(1, len(rows)) if headings[k]), len(rows)]:
        if headings[start]:
            out.print(f"[bold]{headings[start]}[/]")
        drawn = sized(show_header=False)
        for row, style in zip(rows[start:end], styles[start:end]):
            drawn.add_row(*row, style=style)
        out.print(drawn)
        start = end


def _print_said_once(out: _Out, columns: Sequence[Column], rows: Sequence[Sequence[str]], fit: _Fit) -> None:
    """The lines under a table: the columns with one cell for every row, and those left out."""
    from app.cli.terminal.console import escape

    if fit.lifted:
        same = "; ".join(f"{columns[i].header}: {_plain(rows[0][i]) or '-'}" for i in fit.lifted)
        out.print(f"[dim]({escape(f'the same on every row: {same}')})[/]")
    if fit.left_out:
        out.print(
            f"[dim](left out to fit {out.console.width} columns: {', '.join(columns[i].header for i in fit.left_out)}; "
            "a wider terminal shows them, and so does the output in a pipe)[/]"
        )


def _print_blocks(
    out: _Out,
    columns: Sequence[Column],
    shown: list[int],
    rows: Sequence[Sequence[str]],
    styles: Sequence[str | None],
    headings: Sequence[str | None],
) -> None:
    """Each row as a block, for a terminal too narrow for the table: its key cells on one
    line, the other `shown` cells as "header: cell" under it, indented, wrapped at spaces
    (a whole cell never wrapped), so no cell is left out and no word is cut; a group's
    heading on lines of its own above its rows."""

    keys = [i for i in shown if columns[i].key] or shown[:1]

    def atoms(i: int, cell: str) -> list[str]:
        return [cell] if columns[i].whole else cell.split()

    for row, style, heading in zip(rows, styles, headings):
        if heading:
            for line in _wrap(_plain(heading).split(), out.width, ""):
                out.line(line, "bold underline")
        head: list[str] = []
        for i in keys:
            cell = _plain(row[i])
            if cell:
                if head:
                    head[-1] += " ·"  # the separator ends a line rather than starting one
                head += atoms(i, cell)
        rest: list[str] = []
        for i in shown:
            cell = _plain(row[i])
            if i in keys or not cell:
                continue
            if rest:
                rest[-1] += ";"
            rest += [*f"{columns[i].header}:".split(), *atoms(i, cell)]
        for line in _wrap(head, out.width, ""):
            out.line(line, f"bold {style}" if style else "bold")
        for line in _wrap(rest, out.width, "    "):
            out.line(line, style or "")


def _wrap(words: list[str], width: int, indent: str) -> list[str]:
    """`words` on lines of at most `width` (after `indent`), broken only between them; a
    word too wide for an indented line (an address) starts a line of its own, unindented."""
    from rich.cells import cell_len

    lines: list[str] = []
    line = ""
    for word in words:
        if cell_len(indent + word) > width:
            lines += [indent + line] if line else []
            lines.append(word)
            line = ""
            continue
        candidate = f"{line} {word}" if line else word
        if line and cell_len(indent + candidate) > width:
            lines.append(indent + line)
            candidate = word
        line = candidate
    if line:
        lines.append(indent + line)
    return lines

"""Table planning for the PDF: the font size and column widths that fit a table into
the text width, wrapping inside cells only where whole words cannot fit."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtGui import QFont, QFontMetricsF

from app.report.model import Table
from app.report.pdf.text import CELL_PAD_X, CELL_PAD_Y, TABLE_PTS, Fonts, Wrapped, pt, strip_markup, wrap
from app.report.units import keep_together

# --- tables -------------------------------------------------------------------------


@dataclass
class TablePlan:
    """A table measured and wrapped at its final font size and column widths."""

    size: float
    widths: list[float]
    header: list[Wrapped]
    rows: list[list[Wrapped]]
    header_height: float
    row_heights: list[float]


#: Cells up to this many characters ("52.3 ms", "Wire bytes") are never wrapped; in
#: right-aligned (numeric) columns up to the second number ("1.03 KiB (+28 B)").
ATOMIC_CHARS, ATOMIC_NUMBER_CHARS = 12, 20


def text_widths(fonts: Fonts, texts: list[str], font: QFont, atomic: int = ATOMIC_CHARS) -> tuple[float, float]:
    """(natural width of the widest text, the least width that needs no word broken).
    A short text counts as one word, so a value never parts from its unit."""
    fm = fonts.metrics(font)
    natural = longest = 0.0
    for text in texts:
        plain = keep_together(strip_markup(text))  # as `wrap` will break it: never inside "18 B"
        widths = [fm.horizontalAdvance(part) for part in plain.split("\u2028")]
        natural = max(natural, *widths)
        if len(plain) <= atomic:
            longest = max(longest, *widths)
        else:
            longest = max([longest, *(fm.horizontalAdvance(word) for word in _words(plain))])
    return natural, longest


def _words(text: str) -> list[str]:
    """The pieces a line may break between: not at a non-breaking space (units.keep_together)."""
    return [word for word in text.replace("\u2028", " ").split(" ") if word]


def _line_count(fm: QFontMetricsF, text: str, width: float) -> int:
    """Lines a greedy word wrap needs for `text` in `width` (an estimate for choosing
    the table font; the real wrapping is QTextLayout's)."""
    lines = 0
    space = fm.horizontalAdvance(" ")
    for part in keep_together(strip_markup(text)).split("\u2028"):
        lines += 1
        used = 0.0
        for word in _words(part):
            advance = fm.horizontalAdvance(word)
            if used and used + space + advance > width:
                lines += 1
                used = 0.0
            used += (space if used else 0.0) + advance
            while used > width > 0:  # a word wider than the column breaks inside
                lines += 1
                used -= width
    return lines


def _measure(fonts: Fonts, table: Table, size: float) -> tuple[list[float], list[float]]:
    """Per column (natural width, minimum width) at `size`, padding included."""
    regular, bold = fonts.font(size), fonts.font(size, bold=True)
    naturals, minimums = [], []
    for c, title in enumerate(table.columns):
        head_nat, head_min = text_widths(fonts, [title], bold)
        cells = [row[c] if c < len(row) else "" for i, row in enumerate(table.rows) if i not in table.emphasis]
        strong = [row[c] if c < len(row) else "" for i, row in enumerate(table.rows) if i in table.emphasis]
        atomic = ATOMIC_NUMBER_CHARS if table.alignment(c) == "right" else ATOMIC_CHARS
        nat1, min1 = text_widths(fonts, cells, regular, atomic)
        nat2, min2 = text_widths(fonts, strong, bold, atomic)
        naturals.append(max(head_nat, nat1, nat2) + 2 * CELL_PAD_X)
        minimums.append(max(head_min, min1, min2) + 2 * CELL_PAD_X)
    return naturals, minimums


def _fit_widths(preferred: list[float], minimums: list[float], width: float) -> list[float] | None:
    """`preferred` widths widened where a column cannot hold its longest word, the room
    taken from the columns with room to spare (in proportion to it); None if the words
    cannot all fit. Proportional taking never pushes a column below its own minimum."""
    if sum(minimums) > width:
        return None
    widths = [max(p, m) for p, m in zip(preferred, minimums)]
    need = sum(widths) - width
    if need > 0:
        slack = [w - m for w, m in zip(widths, minimums)]
        widths = [w - need * s / sum(slack) for w, s in zip(widths, slack)]
    return widths


def _extra_lines(fonts: Fonts, table: Table, size: float, widths: list[float]) -> int:
    """Lines added by wrapping at `size` in columns of `widths`, over all rows."""
    regular, bold = fonts.metrics(fonts.font(size)), fonts.metrics(fonts.font(size, bold=True))
    extra = 0
    for index, row in enumerate([table.columns, *table.rows]):
        fm = bold if index == 0 or index - 1 in table.emphasis else regular
        extra += max((_line_count(fm, text, width - 2 * CELL_PAD_X) for text, width in zip(row, widths)), default=1) - 1
    return extra


def _column_widths(fonts: Fonts, table: Table, width: float) -> tuple[float, list[float]]:
    """The font size and column widths. The font shrinks (down to 6.5 pt) before cells
    wrap: relative widths as given, nudged so whole words fit, at the largest size that
    wraps no more lines than the smallest would; or widths from the content, full
    width, at the largest size where nothing wraps."""
    if table.widths and len(table.widths) == len(table.columns):
        total = sum(table.widths) or 1.0
        preferred = [width * w / total for w in table.widths]
        choices = []
        for size in TABLE_PTS:
            minimums = _measure(fonts, table, size)[1]
            fitted = _fit_widths(preferred, minimums, width) or [width * m / sum(minimums) for m in minimums]
            choices.append((_extra_lines(fonts, table, size, fitted), size, fitted))
        least = choices[-1][0]
        return next((size, fitted) for wrapped, size, fitted in choices if wrapped <= least)
    for size in TABLE_PTS:
        naturals, minimums = _measure(fonts, table, size)
        if sum(naturals) <= width:
            extra = width - sum(naturals)
            return size, [n + extra * n / sum(naturals) for n in naturals]
    if sum(minimums) >= width:  # words must break inside: share in proportion
        return size, [width * m / sum(minimums) for m in minimums]
    slack = [n - m for n, m in zip(naturals, minimums)]
    extra = width - sum(minimums)
    return size, [m + extra * s / (sum(slack) or 1.0) for m, s in zip(minimums, slack)]


def plan_table(fonts: Fonts, table: Table, width: float) -> TablePlan:
    size, widths = _column_widths(fonts, table, width)
    regular, bold = fonts.font(size), fonts.font(size, bold=True)
    leading = 0.1 * pt(size)

    def cells(texts: list[str], font: QFont) -> list[Wrapped]:
        return [
            wrap(
                fonts,
                texts[c] if c < len(texts) else "",
                font,
                widths[c] - 2 * CELL_PAD_X,
                align=table.alignment(c),
                leading=leading,
            )
            for c in range(len(table.columns))
        ]

    header = cells(table.columns, bold)
    rows = [cells(row, bold if i in table.emphasis else regular) for i, row in enumerate(table.rows)]

    def row_height(row: list[Wrapped]) -> float:
        return max(cell.height for cell in row) + 2 * CELL_PAD_Y

    return TablePlan(size, widths, header, rows, row_height(header), [row_height(r) for r in rows])

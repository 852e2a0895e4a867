"""Page layout for the PDF report: turns a `Report` into per-page display lists.

Layout and painting are separate passes: the layout places every block with a cursor
and records what to paint as `Op`s on a list of pages, so the page count is known
before anything is painted ("Page 3 of 7" in every footer) and tests can check the
geometry (nothing below the margin, a chart never split) without reading the PDF.

Everything is measured against the PDF device (`QFontMetricsF(font, device)`,
`QTextLayout(..., device)`), in device pixels at `DPI`, so wrapping decisions match
what is painted. Text is laid out with `QTextLayout`: vector text, `**bold**` spans as
format ranges, and a wrap mode that breaks inside a word rather than overflow its box.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontInfo,
    QFontMetricsF,
    QGuiApplication,
    QPaintDevice,
    QPainter,
    QPen,
    QTextCharFormat,
    QTextLayout,
    QTextOption,
)

from app.core.text import escape_control
from app.report.model import Align, Bullets, Chart, Paragraph, Report, Section, Table
from app.report.style import PALETTE

DPI = 1200


def pt(value: float) -> float:
    """Points to device pixels."""
    return value * DPI / 72.0


def mm(value: float) -> float:
    """Millimetres to device pixels."""
    return value * DPI / 25.4


MARGIN = mm(18)
TEXT = QColor(25, 25, 25)
MUTED = QColor(100, 100, 100)
RULE = SUBHEADING = QColor(60, 60, 60)
LIGHT_RULE = QColor(190, 190, 190)
ZEBRA = QColor(245, 245, 245)
ACCENT = QColor(*PALETTE[0])
FINDING_TINT = QColor(239, 245, 251)

BODY_PT, NOTE_PT, H1_PT, H2_PT = 10.0, 8.5, 15.0, 12.0
TITLE_PT, SUBTITLE_PT, CAPTION_PT, FOOTER_PT = 24.0, 13.0, 9.0, 8.0
#: Table font sizes tried in order: a wide table shrinks before its cells wrap.
TABLE_PTS = (8.5, 8.0, 7.5, 7.0, 6.5)
BLOCK_GAP = pt(7)
FIGURE_GAP = pt(12)  # around tables and charts, which would crowd each other otherwise
HEADING_GAP = {1: pt(18), 2: pt(12)}
CELL_PAD_X, CELL_PAD_Y = mm(1.3), mm(0.9)
LEADING = 0.25  # extra space between body lines, as a fraction of the font size
KEEP_LINES = 2  # a paragraph starts a page with at least this many lines
SHORT_TABLE = 6  # tables of up to this many rows are kept on one page
#: A section's page break is honoured only when less than this fraction of the page is
#: left; on a page used less than that, the section follows on it rather than leaving a
#: nearly empty page behind.
NEARLY_EMPTY = 0.6


@dataclass
class Op:
    """One thing painted on a page. `rect` is the area it covers (for tests)."""

    kind: str
    rect: QRectF
    paint: Callable[[QPainter], None]


Page = list[Op]


@dataclass
class LaidOut:
    pages: list[Page]
    page_rect: QRectF
    content_rect: QRectF


class Fonts:
    """Fonts of the application default family, measured against the PDF device."""

    def __init__(self, device: QPaintDevice, family: str | None = None) -> None:
        self.device = device
        # Resolve the alias ("Sans Serif") to the real family, so the charts and the
        # text name the same font and the PDF embeds one family.
        self.family = family or QFontInfo(QGuiApplication.font()).family()

    def font(self, size: float, *, bold: bool = False, italic: bool = False) -> QFont:
        font = QFont(self.family)
        font.setPointSizeF(size)
        font.setBold(bold)
        font.setItalic(italic)
        font.setHintingPreference(QFont.HintingPreference.PreferNoHinting)
        # No "ﬁ"/"ﬂ" ligatures: they would copy and search as one odd character.
        font.setFeature(QFont.Tag("liga"), 0)
        return font

    def metrics(self, font: QFont) -> QFontMetricsF:
        return QFontMetricsF(font, self.device)


_BOLD = re.compile(r"\*\*(.+?)\*\*", re.DOTALL)
_ALIGN = {"left": Qt.AlignmentFlag.AlignLeft, "right": Qt.AlignmentFlag.AlignRight,
          "center": Qt.AlignmentFlag.AlignHCenter}


def parse_markup(text: str) -> tuple[str, list[tuple[int, int]]]:
    """Strip `**bold**` markers: the plain text and the (start, length) of bold spans.
    An unpaired `**` stays as typed. Newlines become Qt line separators; other control
    characters (a job's error, a profile's name) are shown as escapes."""
    text = "\n".join(escape_control(line) for line in text.split("\n"))
    plain: list[str] = []
    spans: list[tuple[int, int]] = []
    position, length = 0, 0
    for match in _BOLD.finditer(text):
        plain.append(text[position:match.start()])
        length += match.start() - position
        spans.append((length, len(match.group(1))))
        plain.append(match.group(1))
        length += len(match.group(1))
        position = match.end()
    plain.append(text[position:])
    return "".join(plain).replace("\n", "\u2028"), spans


def strip_markup(text: str) -> str:
    return parse_markup(text)[0]


@dataclass
class Wrapped:
    """A text laid out into lines of one width; drawn a range of lines at a time so a
    paragraph can continue on the next page."""

    layout: QTextLayout
    tops: list[float]
    heights: list[float]

    @property
    def count(self) -> int:
        return len(self.tops)

    @property
    def height(self) -> float:
        return self.span(0, self.count)

    def span(self, first: int, end: int) -> float:
        """Height of lines first..end-1, without the leading after the last one."""
        return self.tops[end - 1] + self.heights[end - 1] - self.tops[first] if end > first else 0.0

    def lead(self) -> float:
        """Height of the lines that must start on one page: two, or all three of a
        three-line text (splitting that would leave a single line on either page)."""
        return self.span(0, self.count if self.count == 3 else min(KEEP_LINES, self.count))

    def widest_line(self) -> float:
        return max((self.layout.lineAt(i).naturalTextWidth() for i in range(self.layout.lineCount())), default=0.0)

    def painter(self, first: int, end: int, x: float, y: float, color: QColor) -> Callable[[QPainter], None]:
        def paint(p: QPainter) -> None:
            p.setPen(color)
            offset = QPointF(x, y - self.tops[first])
            for i in range(first, min(end, self.layout.lineCount())):
                self.layout.lineAt(i).draw(p, offset)
        return paint


def wrap(fonts: Fonts, text: str, font: QFont, width: float, *, align: Align = "left",
         leading: float = 0.0) -> Wrapped:
    """Lay `text` out in lines of `width` device pixels; `**bold**` spans in bold."""
    plain, spans = parse_markup(text)
    layout = QTextLayout(plain, font, fonts.device)
    option = QTextOption(_ALIGN[align])
    option.setWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
    layout.setTextOption(option)
    if spans:
        ranges = []
        for start, length in spans:
            rng = QTextLayout.FormatRange()
            rng.start, rng.length = start, length
            bold = QTextCharFormat()
            bold.setFontWeight(QFont.Weight.Bold)
            rng.format = bold
            ranges.append(rng)
        layout.setFormats(ranges)
    minimum = fonts.metrics(font).height()
    tops: list[float] = []
    heights: list[float] = []
    y = 0.0
    layout.beginLayout()
    while (line := layout.createLine()).isValid():
        line.setLineWidth(width)
        line.setPosition(QPointF(0, y))
        tops.append(y)
        heights.append(max(line.height(), minimum))
        y += heights[-1] + leading
    layout.endLayout()
    if not tops:  # empty text still takes a line (an empty cell keeps its row height)
        tops, heights = [0.0], [minimum]
    return Wrapped(layout, tops, heights)


def fill_op(kind: str, rect: QRectF, color: QColor) -> Op:
    return Op(kind, rect, lambda p: p.fillRect(rect, color))


def rule_op(x1: float, x2: float, y: float, width_pt: float, color: QColor = RULE, kind: str = "rule") -> Op:
    def paint(p: QPainter) -> None:
        p.setPen(QPen(color, pt(width_pt)))
        p.drawLine(QPointF(x1, y), QPointF(x2, y))
    return Op(kind, QRectF(x1, y - pt(width_pt) / 2, x2 - x1, pt(width_pt)), paint)


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


def _text_widths(fonts: Fonts, texts: list[str], font: QFont, atomic: int = ATOMIC_CHARS) -> tuple[float, float]:
    """(natural width of the widest text, the least width that needs no word broken).
    A short text counts as one word, so a value never parts from its unit."""
    fm = fonts.metrics(font)
    natural = longest = 0.0
    for text in texts:
        plain = strip_markup(text)
        widths = [fm.horizontalAdvance(part) for part in plain.split("\u2028")]
        natural = max(natural, *widths)
        if len(plain) <= atomic:
            longest = max(longest, *widths)
        else:
            longest = max([longest, *(fm.horizontalAdvance(word) for word in plain.split())])
    return natural, longest


def _line_count(fm: QFontMetricsF, text: str, width: float) -> int:
    """Lines a greedy word wrap needs for `text` in `width` (an estimate for choosing
    the table font; the real wrapping is QTextLayout's)."""
    lines = 0
    space = fm.horizontalAdvance(" ")
    for part in strip_markup(text).split("\u2028"):
        lines += 1
        used = 0.0
        for word in part.split():
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
        head_nat, head_min = _text_widths(fonts, [title], bold)
        cells = [row[c] if c < len(row) else "" for i, row in enumerate(table.rows) if i not in table.emphasis]
        strong = [row[c] if c < len(row) else "" for i, row in enumerate(table.rows) if i in table.emphasis]
        atomic = ATOMIC_NUMBER_CHARS if table.alignment(c) == "right" else ATOMIC_CHARS
        nat1, min1 = _text_widths(fonts, cells, regular, atomic)
        nat2, min2 = _text_widths(fonts, strong, bold, atomic)
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
        extra += max((_line_count(fm, text, width - 2 * CELL_PAD_X) for text, width in zip(row, widths)),
                     default=1) - 1
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
        return [wrap(fonts, texts[c] if c < len(texts) else "", font, widths[c] - 2 * CELL_PAD_X,
                     align=table.alignment(c), leading=leading) for c in range(len(table.columns))]

    header = cells(table.columns, bold)
    rows = [cells(row, bold if i in table.emphasis else regular) for i, row in enumerate(table.rows)]
    def row_height(row: list[Wrapped]) -> float:
        return max(cell.height for cell in row) + 2 * CELL_PAD_Y
    return TablePlan(size, widths, header, rows, row_height(header), [row_height(r) for r in rows])


# --- the composer: a cursor over pages ---------------------------------------------


class Composer:
    """Places blocks top to bottom, starting a new page when one does not fit."""

    def __init__(self, fonts: Fonts, page_rect: QRectF) -> None:
        self.fonts = fonts
        self.page_rect = page_rect
        self.content = page_rect.adjusted(MARGIN, MARGIN, -MARGIN, -MARGIN - mm(4))
        self.pages: list[Page] = [[]]
        self.y = self.content.top()
        #: Room the last block wants below it; the next block's gap is at least this.
        self.space_after = 0.0

    # cursor ---------------------------------------------------------------------------
    @property
    def left(self) -> float:
        return self.content.left()

    @property
    def width(self) -> float:
        return self.content.width()

    @property
    def at_top(self) -> bool:
        return self.y <= self.content.top() + 1e-6

    @property
    def remaining(self) -> float:
        return self.content.bottom() - self.y

    def add(self, op: Op) -> None:
        self.pages[-1].append(op)

    def new_page(self) -> None:
        if not (self.at_top and not self.pages[-1]):
            self.pages.append([])
        self.y = self.content.top()
        self.space_after = 0.0

    def start_block(self, gap: float, lead: float) -> None:
        """Leave `gap` above a block whose first `lead` pixels must share a page."""
        gap, self.space_after = max(gap, self.space_after), 0.0
        if not self.at_top and gap + lead > self.remaining:
            self.new_page()
        if not self.at_top:
            self.y += gap

    # text -----------------------------------------------------------------------------
    def place_lines(self, text: Wrapped, x: float, color: QColor,
                    decorate: Callable[[QRectF, int], None] | None = None, kind: str = "text") -> None:
        """Place a wrapped text from the cursor, continuing on new pages by lines. No
        single first line at a page foot, no single last line at a page head.
        `decorate(rect, first_line)` adds what goes under each piece (bar, bullet)."""
        n, i = text.count, 0
        while i < n:
            fit = 0
            while i + fit < n and text.span(i, i + fit + 1) <= self.remaining:
                fit += 1
            if i + fit < n and not self.at_top:
                if fit == 0 or (i == 0 and fit == 1 and n > 1):  # nothing, or an orphan line
                    self.new_page()
                    continue
                if n - (i + fit) == 1:  # would leave a widow line: move one more
                    if fit > 2:
                        fit -= 1
                    elif i == 0:  # three lines: keep them together on the next page
                        self.new_page()
                        continue
            fit = max(fit, 1)  # at the top of a page: place at least one line
            height = text.span(i, i + fit)
            rect = QRectF(x, self.y, text.layout.lineAt(i).width(), height)
            if decorate:
                decorate(rect, i)
            self.add(Op(kind, rect, text.painter(i, i + fit, x, self.y, color)))
            self.y += height
            i += fit
            if i < n:
                self.new_page()

    def wrap(self, text: str, size: float, width: float | None = None, *, bold: bool = False,
             italic: bool = False, align: Align = "left", leading: float = LEADING) -> Wrapped:
        font = self.fonts.font(size, bold=bold, italic=italic)
        return wrap(self.fonts, text, font, self.width if width is None else width, align=align,
                    leading=leading * pt(size))


# --- flowables: blocks that know their height and how to place themselves ----------


class Flow:
    """A block prepared for the page width: measured once, placed once."""

    def lead(self) -> float:
        """Height of the first part that must stay with a heading above it."""
        raise NotImplementedError

    def place(self, page: Composer) -> None:
        raise NotImplementedError


class Heading:
    """A section title; placed only where the start of what follows fits below it."""

    def __init__(self, page: Composer, section: Section) -> None:
        self.level = 1 if section.level <= 1 else 2
        self.text = page.wrap(section.title, H1_PT if self.level == 1 else H2_PT, bold=True, leading=0.1)
        self.page_break = section.page_break_before

    def place(self, page: Composer, following: Flow | None) -> None:
        # A section that starts a page does so only where the page before is well used:
        # a break after a few lines would leave a nearly empty page.
        if self.page_break and page.remaining < NEARLY_EMPTY * page.content.height():
            page.new_page()
        lead = self.text.height + (BLOCK_GAP + following.lead() if following else 0.0)
        page.start_block(HEADING_GAP[self.level], lead)
        page.place_lines(self.text, page.left, TEXT if self.level == 1 else SUBHEADING, kind="heading")


class ParagraphFlow(Flow):
    def __init__(self, page: Composer, block: Paragraph) -> None:
        self.style = block.style
        finding = block.style == "finding"
        self.indent = mm(3.5) if finding else 0.0  # the accent bar, then the text
        size = NOTE_PT if block.style == "note" else BODY_PT
        self.text = page.wrap(block.text, size, page.width - (self.indent + mm(2) if finding else 0.0))

    def lead(self) -> float:
        return self.text.lead() + (mm(2) if self.indent else 0)

    def place(self, page: Composer) -> None:
        page.start_block(BLOCK_GAP, self.lead())
        if self.style != "finding":
            page.place_lines(self.text, page.left, MUTED if self.style == "note" else TEXT)
            return
        pad = mm(1)

        def bar(rect: QRectF, first: int) -> None:
            top = max(rect.top() - pad, page.content.top())
            bottom = min(rect.bottom() + pad, page.content.bottom())
            box = QRectF(page.left, top, page.width, bottom - top)
            page.add(fill_op("finding", box, FINDING_TINT))
            page.add(fill_op("finding", QRectF(page.left, box.top(), pt(2.2), box.height()), ACCENT))

        page.y += pad
        page.place_lines(self.text, page.left + self.indent, TEXT, bar)
        page.y += pad


class BulletsFlow(Flow):
    INDENT = mm(5)

    def __init__(self, page: Composer, block: Bullets) -> None:
        self.items = [page.wrap(item, BODY_PT, page.width - self.INDENT) for item in block.items]
        self.bullet = page.wrap("\u2022", BODY_PT)

    def lead(self) -> float:
        return self.items[0].lead() if self.items else 0.0

    def place(self, page: Composer) -> None:
        for index, item in enumerate(self.items):
            page.start_block(BLOCK_GAP if index == 0 else pt(2.5), item.lead())

            def bullet(rect: QRectF, first: int) -> None:
                if first == 0:
                    box = QRectF(page.left + mm(1.5), rect.top(), self.INDENT, self.bullet.height)
                    page.add(Op("text", box, self.bullet.painter(0, 1, box.left(), box.top(), TEXT)))

            page.place_lines(item, page.left + self.INDENT, TEXT, bullet)


class TableFlow(Flow):
    def __init__(self, page: Composer, block: Table) -> None:
        self.plan = plan_table(page.fonts, block, page.width)
        caption = block.caption or ""
        self.caption = page.wrap(caption, CAPTION_PT, italic=True, leading=0.1) if caption else None
        self.continued = page.wrap(f"{caption} (continued)".strip(), CAPTION_PT, italic=True, leading=0.1)

    def _top_height(self, caption: Wrapped | None) -> float:
        return (caption.height + pt(3) if caption else 0.0) + self.plan.header_height

    def lead(self) -> float:
        """Caption, header and the rows that must start on one page: a short table
        whole, a long one at least three rows (a lone row under a header reads badly)."""
        rows = self.plan.row_heights
        return self._top_height(self.caption) + sum(rows if len(rows) <= SHORT_TABLE else rows[:3])

    def _row(self, page: Composer, cells: list[Wrapped], height: float, kind: str, fill: QColor | None) -> None:
        rect = QRectF(page.left, page.y, sum(self.plan.widths), height)
        if fill is not None:
            page.add(fill_op("table-fill", rect, fill))
        x = page.left
        for cell, width in zip(cells, self.plan.widths):
            box = QRectF(x + CELL_PAD_X, page.y + CELL_PAD_Y, width - 2 * CELL_PAD_X, cell.height)
            page.add(Op(kind, box, cell.painter(0, cell.count, box.left(), box.top(), TEXT)))
            x += width
        page.y += height

    def _top(self, page: Composer, caption: Wrapped | None) -> None:
        if caption:
            page.place_lines(caption, page.left, MUTED)
            page.y += pt(3)
        right = page.left + sum(self.plan.widths)
        page.add(rule_op(page.left, right, page.y, 0.9))
        self._row(page, self.plan.header, self.plan.header_height, "table-header", None)
        page.add(rule_op(page.left, right, page.y, 0.6))

    def place(self, page: Composer) -> None:
        if not self.plan.widths:
            return
        page.start_block(FIGURE_GAP, self.lead())
        self._top(page, self.caption)
        right = page.left + sum(self.plan.widths)
        heights = self.plan.row_heights
        on_page = 0
        for index, (cells, height) in enumerate(zip(self.plan.rows, heights)):
            # Break before the last two rows rather than carry one row over alone.
            last_two = index == len(heights) - 2 and on_page >= 3 and sum(heights[index:]) > page.remaining
            if on_page and (height > page.remaining or last_two):
                page.add(rule_op(page.left, right, page.y, 0.9))
                page.new_page()
                self._top(page, self.continued)
                on_page = 0
            self._row(page, cells, height, "table-cell", ZEBRA if index % 2 else None)
            on_page += 1
        page.add(rule_op(page.left, right, page.y, 0.9))
        page.space_after = FIGURE_GAP


class ChartFlow(Flow):
    def __init__(self, page: Composer, block: Chart) -> None:
        self.block = block
        self.fonts = page.fonts
        self.paint_chart: Callable[..., None] | None = None
        aspect_of: Callable[[Any], float] | None = None
        try:
            from app.report.charts import paint_chart
        except ImportError:  # a build without the chart renderer still writes the report
            pass
        else:
            self.paint_chart = paint_chart
        try:
            from app.report.charts import preferred_aspect
        except ImportError:
            pass
        else:
            aspect_of = preferred_aspect
        aspect = aspect_of(block.chart) if aspect_of is not None else block.aspect
        if not (isinstance(aspect, (int, float)) and math.isfinite(aspect) and aspect > 0):
            aspect = block.aspect
        self.caption = page.wrap(block.caption, CAPTION_PT, italic=True, leading=0.1) if block.caption else None
        caption_height = self.caption.height + pt(4) if self.caption else 0.0
        # Never taller than a page, so a chart is always whole on one page.
        self.height = min(page.width * aspect, page.content.height() - caption_height)
        self.total = self.height + caption_height

    def lead(self) -> float:
        return self.total

    def place(self, page: Composer) -> None:
        page.start_block(FIGURE_GAP, self.total)
        rect = QRectF(page.left, page.y, page.width, self.height)
        page.add(Op("chart", rect, self._painter(rect)))
        page.y += self.height
        if self.caption:
            page.y += pt(4)
            page.place_lines(self.caption, page.left, MUTED)
        page.space_after = FIGURE_GAP

    def _painter(self, rect: QRectF) -> Callable[[QPainter], None]:
        chart, family, paint_chart = self.block.chart, self.fonts.family, self.paint_chart
        if paint_chart is not None:
            def paint_real(p: QPainter) -> None:
                p.setClipRect(rect)  # a chart may not paint over the text around it
                paint_chart(p, rect, chart, font_family=family, base_point_size=8.0)
            return paint_real
        placeholder = wrap(self.fonts, f"{getattr(chart, 'title', 'Chart')} (chart renderer unavailable)",
                           self.fonts.font(BODY_PT), rect.width() - mm(4), align="center")

        def paint(p: QPainter) -> None:
            p.setPen(QPen(LIGHT_RULE, pt(0.8)))
            p.drawRect(rect)
            placeholder.painter(0, placeholder.count, rect.left() + mm(2),
                                rect.center().y() - placeholder.height / 2, MUTED)(p)
        return paint


def _flows(page: Composer, section: Section) -> list[Flow]:
    flows: list[Flow] = []
    for block in section.blocks:
        if isinstance(block, Paragraph):
            flows.append(ParagraphFlow(page, block))
        elif isinstance(block, Bullets):
            flows.append(BulletsFlow(page, block))
        elif isinstance(block, Table):
            flows.append(TableFlow(page, block))
        elif isinstance(block, Chart):
            flows.append(ChartFlow(page, block))
        else:  # pragma: no cover - the model has no other blocks
            raise TypeError(f"unknown report block {type(block).__name__}")
    return flows


# --- title page, footers, the whole report ------------------------------------------


def _title_page(page: Composer, report: Report) -> None:
    page.y += mm(30)
    page.place_lines(page.wrap(report.title, TITLE_PT, bold=True, leading=0.1), page.left, TEXT)
    if report.subtitle:
        page.y += pt(8)
        page.place_lines(page.wrap(report.subtitle, SUBTITLE_PT, leading=0.15), page.left, MUTED)
    page.y += mm(6)
    page.add(rule_op(page.left, page.left + mm(40), page.y, 2.0, ACCENT))
    page.y += mm(10)
    if report.notice:  # before the facts: the first thing read after the title
        ParagraphFlow(page, Paragraph(report.notice, style="finding")).place(page)
        page.y += mm(6)
    if not report.facts:
        return
    key_font = page.fonts.font(BODY_PT - 0.5, bold=True)
    key_width = min(max(_text_widths(page.fonts, [k for k, _ in report.facts], key_font)[0] + mm(6), mm(25)),
                    0.35 * page.width)
    for key, value in report.facts:
        key_text = page.wrap(key, BODY_PT - 0.5, key_width - mm(6), bold=True, leading=0.15)
        value_text = page.wrap(value, BODY_PT - 0.5, page.width - key_width, leading=0.15)
        height = max(key_text.height, value_text.height) + 2 * CELL_PAD_Y
        page.start_block(0.0, height)
        top = page.y + CELL_PAD_Y
        page.add(Op("text", QRectF(page.left, top, key_width, key_text.height),
                    key_text.painter(0, key_text.count, page.left, top, MUTED)))
        page.add(Op("text", QRectF(page.left + key_width, top, page.width - key_width, value_text.height),
                    value_text.painter(0, value_text.count, page.left + key_width, top, TEXT)))
        page.y += height
        page.add(rule_op(page.left, page.left + page.width, page.y, 0.4, LIGHT_RULE))


def _footers(page: Composer, footer: str) -> None:
    """Footer text left, "Page N of M" right, under a thin rule, on every page."""
    fonts = page.fonts
    font = fonts.font(FOOTER_PT)
    fm = fonts.metrics(font)
    total = len(page.pages)
    top = page.content.bottom() + mm(5)
    left, right = page.content.left(), page.content.right()
    for number, ops in enumerate(page.pages, start=1):
        label = f"Page {number} of {total}"
        label_width = fm.horizontalAdvance(label)
        text = fm.elidedText(footer, Qt.TextElideMode.ElideRight, right - left - label_width - mm(6))
        ops.append(rule_op(left, right, top, 0.4, LIGHT_RULE, "footer"))
        baseline = top + mm(1.5) + fm.ascent()

        def paint(p: QPainter, text: str = text, label: str = label, width: float = label_width,
                  baseline: float = baseline) -> None:
            p.setFont(font)
            p.setPen(MUTED)
            p.drawText(QPointF(left, baseline), text)
            p.drawText(QPointF(right - width, baseline), label)
        ops.append(Op("footer", QRectF(left, top, right - left, mm(1.5) + fm.height()), paint))


def layout_report(report: Report, device: QPaintDevice, page_rect: QRectF, *,
                  on_section: Callable[[int], None] | None = None, family: str | None = None) -> LaidOut:
    """Lay the whole report out on pages of `page_rect` (device pixels at `DPI`).
    `on_section(done)` is called after each section is placed."""
    fonts = Fonts(device, family)
    page = Composer(fonts, page_rect)
    _title_page(page, report)
    page.new_page()
    for done, section in enumerate(report.sections, start=1):
        heading = Heading(page, section)
        flows = _flows(page, section)
        heading.place(page, flows[0] if flows else None)
        for flow in flows:
            flow.place(page)
        if on_section:
            on_section(done)
    if not page.pages[-1] and len(page.pages) > 1:
        page.pages.pop()
    _footers(page, report.footer)
    return LaidOut(page.pages, page_rect, page.content)

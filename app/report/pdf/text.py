"""Units, colours, sizes and text for the PDF layout: points and millimetres in device
pixels at `DPI`, the fonts measured against the PDF device, `**bold**` markup, wrapped
text (`QTextLayout`) and the paint operations (`Op`) a page is made of."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

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
    QTextLine,
    QTextOption,
)

from app.core.escaping import escape_control
from app.report.model import Align
from app.report.style import PALETTE
from app.report.units import keep_together

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
_ALIGN = {
    "left": Qt.AlignmentFlag.AlignLeft,
    "right": Qt.AlignmentFlag.AlignRight,
    "center": Qt.AlignmentFlag.AlignHCenter,
}


def parse_markup(text: str) -> tuple[str, list[tuple[int, int]]]:
    """Strip `**bold**` markers: the plain text and the (start, length) of bold spans.
    An unpaired `**` stays as typed. Newlines become Qt line separators; other control
    characters (a job's error, a profile's name) are shown as escapes."""
    text = "\n".join(escape_control(line) for line in text.split("\n"))
    plain: list[str] = []
    spans: list[tuple[int, int]] = []
    position, length = 0, 0
    for match in _BOLD.finditer(text):
        plain.append(text[position : match.start()])
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


def wrap(fonts: Fonts, text: str, font: QFont, width: float, *, align: Align = "left", leading: float = 0.0) -> Wrapped:
    """Lay `text` out in lines of `width` device pixels; `**bold**` spans in bold."""
    plain, spans = parse_markup(text)
    plain = keep_together(plain)  # same length: the bold spans still index it
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
        _not_after_hyphen(line, plain, width)
        line.setPosition(QPointF(0, y))
        tops.append(y)
        heights.append(max(line.height(), minimum))
        y += heights[-1] + leading
    layout.endLayout()
    if not tops:  # empty text still takes a line (an empty cell keeps its row height)
        tops, heights = [0.0], [minimum]
    return Wrapped(layout, tops, heights)


def _not_after_hyphen(line: QTextLine, plain: str, width: float) -> None:
    """Move a break that falls after a hyphen inside a name ("ecdh-vs- / elgamal",
    "ML- / KEM-768") back to the line's last space, where the line has one."""
    start, end = line.textStart(), line.textStart() + line.textLength()
    if not (
        0 < end < len(plain) and plain[end - 1] == "-" and plain[end].isalnum() and plain[end - 2 : end - 1].isalnum()
    ):
        return
    space = max(plain.rfind(" ", start, end - 1), plain.rfind("\u2028", start, end - 1))
    if space > start:
        line.setNumColumns(space + 1 - start, width)  # the width kept: alignment and the line's box


def fill_op(kind: str, rect: QRectF, color: QColor) -> Op:
    return Op(kind, rect, lambda p: p.fillRect(rect, color))


def rule_op(x1: float, x2: float, y: float, width_pt: float, color: QColor = RULE, kind: str = "rule") -> Op:
    def paint(p: QPainter) -> None:
        p.setPen(QPen(color, pt(width_pt)))
        p.drawLine(QPointF(x1, y), QPointF(x2, y))

    return Op(kind, QRectF(x1, y - pt(width_pt) / 2, x2 - x1, pt(width_pt)), paint)

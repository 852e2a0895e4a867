"""The composer: a cursor over pages that places wrapped text line by line, with no
single line left at a page's foot or head."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor

from app.report.model import Align
from app.report.pdf.text import LEADING, MARGIN, Fonts, Op, Page, Wrapped, mm, pt, wrap

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
    def place_lines(
        self,
        text: Wrapped,
        x: float,
        color: QColor,
        decorate: Callable[[QRectF, int], None] | None = None,
        kind: str = "text",
    ) -> None:
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

    def wrap(
        self,
        text: str,
        size: float,
        width: float | None = None,
        *,
        bold: bool = False,
        italic: bool = False,
        align: Align = "left",
        leading: float = LEADING,
    ) -> Wrapped:
        font = self.fonts.font(size, bold=bold, italic=italic)
        return wrap(
            self.fonts, text, font, self.width if width is None else width, align=align, leading=leading * pt(size)
        )

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

from collections.abc import Callable

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QPaintDevice, QPainter

from app.report.model import Paragraph, Report
from app.report.pdf.composer import (
    Composer,
)
from app.report.pdf.flows import (
    Flow,
    Heading,
    ParagraphFlow,
    section_flows,
)
from app.report.pdf.tables import (
    text_widths,
)
from app.report.pdf.text import (
    ACCENT,
    BLOCK_GAP,
    BODY_PT,
    CELL_PAD_Y,
    FOOTER_PT,
    HEADING_GAP,
    LIGHT_RULE,
    MUTED,
    SUBTITLE_PT,
    TEXT,
    TITLE_PT,
    Fonts,
    LaidOut,
    Op,
    mm,
    pt,
    rule_op,
)

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
    key_width = min(
        max(text_widths(page.fonts, [k for k, _ in report.facts], key_font)[0] + mm(6), mm(25)), 0.35 * page.width
    )
    for key, value in report.facts:
        key_text = page.wrap(key, BODY_PT - 0.5, key_width - mm(6), bold=True, leading=0.15)
        value_text = page.wrap(value, BODY_PT - 0.5, page.width - key_width, leading=0.15)
        height = max(key_text.height, value_text.height) + 2 * CELL_PAD_Y
        page.start_block(0.0, height)
        top = page.y + CELL_PAD_Y
        page.add(
            Op(
                "text",
                QRectF(page.left, top, key_width, key_text.height),
                key_text.painter(0, key_text.count, page.left, top, MUTED),
            )
        )
        page.add(
            Op(
                "text",
                QRectF(page.left + key_width, top, page.width - key_width, value_text.height),
                value_text.painter(0, value_text.count, page.left + key_width, top, TEXT),
            )
        )
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

        def paint(
            p: QPainter, text: str = text, label: str = label, width: float = label_width, baseline: float = baseline
        ) -> None:
            p.setFont(font)
            p.setPen(MUTED)
            p.drawText(QPointF(left, baseline), text)
            p.drawText(QPointF(right - width, baseline), label)

        ops.append(Op("footer", QRectF(left, top, right - left, mm(1.5) + fm.height()), paint))


class _Lead(Flow):
    """Only a height to keep with a heading (what follows it belongs to the next section)."""

    def __init__(self, height: float) -> None:
        self.height = height

    def lead(self) -> float:
        return self.height

    def place(self, page: Composer) -> None:
        return None


def layout_report(
    report: Report,
    device: QPaintDevice,
    page_rect: QRectF,
    *,
    on_section: Callable[[int], None] | None = None,
    family: str | None = None,
) -> LaidOut:
    """Lay the whole report out on pages of `page_rect` (device pixels at `DPI`).
    `on_section(done)` is called after each section is placed."""
    fonts = Fonts(device, family)
    page = Composer(fonts, page_rect)
    _title_page(page, report)
    page.new_page()
    headings = [Heading(page, section) for section in report.sections]
    all_flows = [section_flows(page, section) for section in report.sections]
    for done, (heading, flows) in enumerate(zip(headings, all_flows), start=1):
        following: Flow | None = flows[0] if flows else None
        if following is None and done < len(headings):
            # A section with no text of its own (a subsection follows at once): its heading
            # stays with the next heading and the start of what that one introduces.
            after, nxt = all_flows[done], headings[done]
            # (The heading adds a block gap before `following`; the next heading's own gap is larger.)
            gap = HEADING_GAP[nxt.level] - BLOCK_GAP
            following = _Lead(gap + nxt.text.height + BLOCK_GAP + (after[0].lead() if after else 0.0))
        heading.place(page, following, flows[1] if len(flows) > 1 else None)
        for flow in flows:
            flow.place(page)
        if on_section:
            on_section(done)
    if not page.pages[-1] and len(page.pages) > 1:
        page.pages.pop()
    _footers(page, report.footer)
    return LaidOut(page.pages, page_rect, page.content)

"""Flowables: report blocks (paragraphs, bullets, tables, charts, headings) measured
once for the page width and placed once by the composer."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QPainter, QPen

from app.report.model import BarChart, Bullets, Chart, Paragraph, Section, StackedBars, Table
from app.report.pdf.composer import Composer
from app.report.pdf.tables import plan_table
from app.report.pdf.text import (
    ACCENT,
    BLOCK_GAP,
    BODY_PT,
    CAPTION_PT,
    CELL_PAD_X,
    CELL_PAD_Y,
    FIGURE_GAP,
    FINDING_TINT,
    H1_PT,
    H2_PT,
    HEADING_GAP,
    LIGHT_RULE,
    MUTED,
    NEARLY_EMPTY,
    NOTE_PT,
    SHORT_TABLE,
    SUBHEADING,
    TEXT,
    ZEBRA,
    Op,
    Wrapped,
    fill_op,
    mm,
    pt,
    rule_op,
    wrap,
)

# --- flowables: blocks that know their height and how to place themselves ----------


class Flow:
    """A block prepared for the page width: measured once, placed once."""

    def lead(self) -> float:
        """Height of the first part that must stay with a heading above it."""
        raise NotImplementedError

    def place(self, page: Composer) -> None:
        raise NotImplementedError


#: A chart may be drawn down to this fraction of its preferred height to fit the page.
SHRINK = 0.8
#: Lines of a section's first paragraph that count as an introduction to what follows.
SHORT_INTRO = 6


class Heading:
    """A section title; placed only where the start of what follows fits below it."""

    def __init__(self, page: Composer, section: Section) -> None:
        self.level = 1 if section.level <= 1 else 2
        self.text = page.wrap(section.title, H1_PT if self.level == 1 else H2_PT, bold=True, leading=0.1)
        self.page_break = section.page_break_before

    def place(self, page: Composer, following: Flow | None, after: Flow | None = None) -> None:
        """`following`: the section's first block; `after`: the one after it. A short
        introduction (a few lines) is kept with the start of `after` too, so a heading and
        its one-paragraph intro never end a page while the chart they introduce starts the next."""
        # A section that starts a page does so only where the page before is well used:
        # a break after a few lines would leave a nearly empty page.
        if self.page_break and page.remaining < NEARLY_EMPTY * page.content.height():
            page.new_page()
        lead = self.text.height + (BLOCK_GAP + following.lead() if following else 0.0)
        if isinstance(following, ParagraphFlow) and following.text.count <= SHORT_INTRO and after is not None:
            lead += following.text.height - following.lead() + FIGURE_GAP + after.lead()
            lead = min(lead, 0.5 * page.content.height())  # never push more than half a page along
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
            # The closing rule is centred on the row's foot: half its width must fit too.
            room = page.remaining - pt(0.9) / 2
            last_two = index == len(heights) - 2 and on_page >= 3 and sum(heights[index:]) > room
            if on_page and (height > room or last_two):
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
            from app.report.pdf.charts import paint_chart
        except ImportError:  # a build without the chart renderer still writes the report
            pass
        else:
            self.paint_chart = paint_chart
        try:
            from app.report.pdf.charts import preferred_aspect
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
        # A line chart or histogram a little taller than what is left of the page is drawn a
        # little shorter (down to SHRINK of its height) rather than leaving the page's foot
        # empty. Not bars: their rows are sized for their labels, and fewer points per row
        # would leave rows unlabelled.
        height = self.height
        room = page.remaining - max(FIGURE_GAP, page.space_after) - (self.total - self.height)
        if (
            not page.at_top
            and self.total > page.remaining
            and room >= SHRINK * self.height
            and not isinstance(self.block.chart, (BarChart, StackedBars))
        ):
            height = room
        page.start_block(FIGURE_GAP, self.total - self.height + height)
        rect = QRectF(page.left, page.y, page.width, height)
        page.add(Op("chart", rect, self._painter(rect)))
        page.y += height
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
        placeholder = wrap(
            self.fonts,
            f"{getattr(chart, 'title', 'Chart')} (chart renderer unavailable)",
            self.fonts.font(BODY_PT),
            rect.width() - mm(4),
            align="center",
        )

        def paint(p: QPainter) -> None:
            p.setPen(QPen(LIGHT_RULE, pt(0.8)))
            p.drawRect(rect)
            placeholder.painter(
                0, placeholder.count, rect.left() + mm(2), rect.center().y() - placeholder.height / 2, MUTED
            )(p)

        return paint


def section_flows(page: Composer, section: Section) -> list[Flow]:
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

"""What surrounds a plot: the title (wrapped, never cut), legends, "no data", and the
one helper through which chart text is ever elided."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF

from app.report.pdf.charts.context import CENTER, LEFT, MUTED, Ctx, draw_marker
from app.report.units import keep_together

# --------------------------------------------------------------------------- legend


_TOP_LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop


@dataclass
class LegendEntry:
    name: str
    colour: QColor
    kind: str = "box"  # "box" (bars) or "series" (line and/or marker)
    marker: str = "circle"
    line: bool = True
    hollow: bool = False  # an open marker (what it means is the entry's name)


def _swatch_width(ctx: Ctx, entry: LegendEntry) -> float:
    return ctx.pt(7) if entry.kind == "box" else ctx.pt(14)


def _draw_swatch(ctx: Ctx, entry: LegendEntry, x: float, cy: float) -> None:
    if entry.kind == "box":
        s = ctx.pt(7)
        ctx.painter.setPen(Qt.PenStyle.NoPen)
        ctx.painter.setBrush(QBrush(entry.colour))
        ctx.painter.drawRect(QRectF(x, cy - s / 2, s, s))
        ctx.painter.setBrush(Qt.BrushStyle.NoBrush)
        return
    w = ctx.pt(14)
    if entry.line:
        ctx.line(x, cy, x + w, cy, ctx.pen(entry.colour, 1.2))
    draw_marker(ctx, QPointF(x + w / 2, cy), ctx.pt(2.3), entry.marker, entry.colour, hollow=entry.hollow)


def flow_legend(
    ctx: Ctx, entries: list[LegendEntry], font: QFont, left: float, top: float, width: float, *, draw: bool
) -> float:
    """Entries left to right, wrapping; returns the height used."""
    if not entries:
        return 0.0
    fm = ctx.fm(font)
    row_h = fm.height() * 1.15
    gap, spacing = ctx.pt(3), ctx.pt(10)
    x, y = left, top
    for entry in entries:
        sw = _swatch_width(ctx, entry)
        text = elide_to_width(fm, entry.name, max(width - sw - gap, ctx.pt(20)))
        w = sw + gap + fm.horizontalAdvance(text)
        if x > left and x + w > left + width:
            x, y = left, y + row_h
        if draw:
            _draw_swatch(ctx, entry, x, y + row_h / 2)
            ctx.text(QRectF(x + sw + gap, y, w - sw - gap + 1, row_h), LEFT, text, font)
        x += w + spacing
    return y + row_h - top


def column_legend_width(ctx: Ctx, entries: list[LegendEntry], font: QFont, limit: float) -> float:
    fm = ctx.fm(font)
    widest = max((_swatch_width(ctx, e) + ctx.pt(3) + fm.horizontalAdvance(e.name) for e in entries), default=0.0)
    return min(widest, limit)


def column_legend_height(ctx: Ctx, entries: list[LegendEntry], font: QFont, width: float) -> float:
    """The height the column legend needs to show every entry."""
    fm = ctx.fm(font)
    texts = [wrap_label(fm, e.name, width - _swatch_width(ctx, e) - ctx.pt(3)) for e in entries]
    return sum(fm.height() * 1.2 + fm.height() * t.count("\n") for t in texts)


def column_legend(
    ctx: Ctx, entries: list[LegendEntry], font: QFont, left: float, top: float, width: float, height: float
) -> int:
    """Entries in a column, each name wrapped to the column; the ones beyond `height` are
    summarised as "+N more" (callers choose a layout where that does not happen). Returns
    the number of entries shown."""
    fm = ctx.fm(font)
    row_h = fm.height() * 1.2
    texts = [wrap_label(fm, e.name, width - _swatch_width(ctx, e) - ctx.pt(3)) for e in entries]
    heights = [row_h + fm.height() * t.count("\n") for t in texts]
    shown = len(entries)
    while shown and sum(heights[:shown]) + (row_h if shown < len(entries) else 0) > height:
        shown -= 1
    y = top
    for entry, text, h in zip(entries[:shown], texts, heights):
        sw = _swatch_width(ctx, entry)
        _draw_swatch(ctx, entry, left, y + row_h / 2)
        ctx.text(
            QRectF(
                left + sw + ctx.pt(3),
                y + (row_h - fm.height()) / 2,
                width - sw - ctx.pt(3) + 1,
                h - (row_h - fm.height()),
            ),
            _TOP_LEFT,
            text,
            font,
        )
        y += h
    if shown < len(entries):
        ctx.text(
            QRectF(left, y, width, row_h), LEFT, elide_to_width(fm, f"+{len(entries) - shown} more", width), font, MUTED
        )
    return shown


# ------------------------------------------------------------------------ title, empty


def elide_to_width(fm: QFontMetricsF, text: str, width: float) -> str:
    """The one place chart text is cut (tests count the calls that cut)."""
    return fm.elidedText(text, Qt.TextElideMode.ElideRight, width)


def _title_lines(ctx: Ctx, rect: QRectF, title: str) -> str:
    """The title wrapped to the chart's width (a title names the data: it is not cut)."""
    return wrap_label(ctx.fm(ctx.font(1.15, bold=True)), title, rect.width()) if title else ""


def title_height(ctx: Ctx, rect: QRectF, title: str) -> float:
    if not title:
        return 0.0
    fm = ctx.fm(ctx.font(1.15, bold=True))
    return fm.height() * (_title_lines(ctx, rect, title).count("\n") + 1) + ctx.pt(4)


def draw_title(ctx: Ctx, rect: QRectF, title: str) -> float:
    """Draw the title at the top of `rect`; returns the y below it."""
    font = ctx.font(1.15, bold=True)
    height = title_height(ctx, rect, title)
    if not title or height > rect.height():
        return rect.top()
    ctx.text(
        QRectF(rect.left(), rect.top(), rect.width(), height - ctx.pt(4)),
        _TOP_LEFT,
        _title_lines(ctx, rect, title),
        font,
    )
    return rect.top() + height


def too_small(ctx: Ctx, rect: QRectF, title: str) -> None:
    """A rect with no room for the plot: the title alone (where it fits)."""
    draw_title(ctx, rect, title)


def no_data(ctx: Ctx, rect: QRectF, title: str) -> None:
    top = draw_title(ctx, rect, title)
    font = ctx.font(1.0, italic=True)
    fm = ctx.fm(font)
    area = QRectF(rect.left(), top, rect.width(), max(rect.bottom() - top, 0.0))
    if area.height() >= fm.height():
        ctx.text(area, CENTER, fm.elidedText("no data", Qt.TextElideMode.ElideRight, rect.width()), font, MUTED)


def wrap_label(fm: QFontMetricsF, text: str, width: float) -> str:
    """`text` broken at spaces into lines no wider than `width` ("\\n" between them). A
    single word wider than `width` is elided: the only case where a label loses text."""
    lines: list[str] = []
    for word in keep_together(text).split(" "):  # never "18 / B" on two lines
        if lines and fm.horizontalAdvance(f"{lines[-1]} {word}") <= width:
            lines[-1] = f"{lines[-1]} {word}"
        else:
            lines.append(word)
    return "\n".join(
        line if fm.horizontalAdvance(line) <= width + 0.5 else elide_to_width(fm, line, width) for line in lines
    )

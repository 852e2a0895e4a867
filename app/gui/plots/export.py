"""A plot saved as a PNG or an SVG: its caption (app.gui.plots.caption) above the plot,
both drawn by one function, so the two files show the same picture.

Why the SVG once differed from the PNG: pyqtgraph's axes paint from a cached QPicture,
recorded at the screen's logical DPI (96 here), and QPainter replays a QPicture scaled by
the target device's DPI over the picture's (QTBUG-20361). QSvgGenerator's resolution is
72 DPI unless set, so every axis, tick and tick label came out at 72/96 = 0.75 of its size
while the bars (painted directly) did not: a bar label sat beside the wrong bar. Text in
points shrank the same way. The generator is given the DPI the pictures were recorded
at, as pyqtgraph's own SVGExporter does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6 import QtCore, QtGui
from PySide6.QtSvg import QSvgGenerator

from app.gui.plots.caption import PlotCaption

#: A PNG is saved at twice the plot's size on screen: sharp when printed or zoomed.
PNG_SCALE = 2
#: Pixels around the caption's text, and between its lines.
MARGIN, LINE_GAP = 10.0, 2.0
_WRAP = int(QtCore.Qt.AlignmentFlag.AlignLeft | QtCore.Qt.TextFlag.TextWordWrap)


def recorded_dpi() -> int:
    """The DPI QPicture records at (the primary screen's logical DPI): the resolution a
    paint device needs for pyqtgraph's cached pictures and point-sized text to come out at
    the size they have on screen."""
    screen = QtGui.QGuiApplication.primaryScreen()
    return round(screen.logicalDotsPerInchX()) if screen is not None else 96


def _fonts(base: QtGui.QFont) -> tuple[QtGui.QFont, QtGui.QFont]:
    title = QtGui.QFont(base)
    title.setBold(True)
    title.setPointSizeF(base.pointSizeF() * 1.15 if base.pointSizeF() > 0 else 11.0)
    return title, QtGui.QFont(base)


def _blocks(caption: PlotCaption, base: QtGui.QFont) -> list[tuple[QtGui.QFont, str]]:
    title, body = _fonts(base)
    return [(title, caption.title)] + [(body, line) for line in caption.lines()]


def caption_height(caption: PlotCaption, width: float, base: QtGui.QFont) -> float:
    """The height the caption takes above a plot `width` pixels wide, lines wrapped."""
    height = MARGIN
    for font, text in _blocks(caption, base):
        metrics = QtGui.QFontMetricsF(font)
        rect = metrics.boundingRect(QtCore.QRectF(0, 0, width - 2 * MARGIN, 1e6), _WRAP, text)
        height += rect.height() + LINE_GAP
    return height + MARGIN / 2


def paint_caption(painter: QtGui.QPainter, caption: PlotCaption, width: float, base: QtGui.QFont) -> None:
    y = MARGIN
    for font, text in _blocks(caption, base):
        painter.setFont(font)
        rect = painter.boundingRect(QtCore.QRectF(MARGIN, y, width - 2 * MARGIN, 1e6), _WRAP, text)
        painter.drawText(QtCore.QRectF(MARGIN, y, width - 2 * MARGIN, rect.height()), _WRAP, text)
        y += rect.height() + LINE_GAP


def _export_mode(item: Any, on: bool, opts: dict[str, Any]) -> None:
    """pyqtgraph's export mode on the item and its children (as its exporters set it): the
    plot's "A" auto-range button is not drawn, points are drawn without their screen cache."""
    stack = [item]
    while stack:
        current = stack.pop()
        if hasattr(current, "setExportMode"):
            current.setExportMode(on, opts if on else None)
        stack.extend(current.childItems())


def _paint(
    painter: QtGui.QPainter, item: Any, caption: PlotCaption, base: QtGui.QFont, colours: tuple[QtGui.QColor, ...]
) -> None:
    """The caption, then the plot under it, in the plot's own pixels (the painter may scale)."""
    background, foreground = colours
    source = item.sceneBoundingRect()
    top = caption_height(caption, source.width(), base)
    painter.fillRect(QtCore.QRectF(0, 0, source.width(), top + source.height()), background)
    painter.setPen(foreground)
    paint_caption(painter, caption, source.width(), base)
    _export_mode(item, True, {"antialias": True, "background": background, "painter": painter})
    try:
        item.scene().render(painter, QtCore.QRectF(0, top, source.width(), source.height()), source)
    finally:
        _export_mode(item, False, {})


def picture_size(item: Any, caption: PlotCaption, base: QtGui.QFont) -> QtCore.QSizeF:
    """The saved picture's size in the plot's pixels: the plot with its caption above."""
    source = item.sceneBoundingRect()
    return QtCore.QSizeF(source.width(), caption_height(caption, source.width(), base) + source.height())


def save_png(
    item: Any, caption: PlotCaption, path: Path, base: QtGui.QFont, colours: tuple[QtGui.QColor, QtGui.QColor]
) -> None:
    size = picture_size(item, caption, base)
    image = QtGui.QImage(
        round(size.width() * PNG_SCALE), round(size.height() * PNG_SCALE), QtGui.QImage.Format.Format_ARGB32
    )
    image.fill(colours[0])
    dots_per_metre = round(recorded_dpi() / 0.0254)  # the DPI the axes' pictures were recorded at
    image.setDotsPerMeterX(dots_per_metre)
    image.setDotsPerMeterY(dots_per_metre)
    painter = QtGui.QPainter(image)
    try:
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QtGui.QPainter.RenderHint.TextAntialiasing)
        painter.scale(PNG_SCALE, PNG_SCALE)
        _paint(painter, item, caption, base, colours)
    finally:
        painter.end()
    if not image.save(str(path)):  # the format from the suffix, .png
        raise OSError(f"{path}: the plot could not be written")


def save_svg(
    item: Any, caption: PlotCaption, path: Path, base: QtGui.QFont, colours: tuple[QtGui.QColor, QtGui.QColor]
) -> None:
    """(pyqtgraph's SVGExporter fails on the path data Qt 6.11 writes: "not enough values
    to unpack"; this draws the scene into a QSvgGenerator instead.)"""
    size = picture_size(item, caption, base)
    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setResolution(recorded_dpi())  # not the default 72: see the module's docstring
    generator.setSize(size.toSize())
    generator.setViewBox(QtCore.QRectF(0, 0, size.width(), size.height()))
    generator.setTitle(caption.title)
    generator.setDescription("\n".join(caption.lines()))
    painter = QtGui.QPainter(generator)
    try:
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        _paint(painter, item, caption, base, colours)
    finally:
        painter.end()

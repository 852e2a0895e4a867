"""The painting context shared by every chart kind: colours, a painter sized in points,
alignments and point markers."""

from __future__ import annotations

import math

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen, QPolygonF

# ------------------------------------------------------------------------- constants

TEXT = QColor(34, 34, 34)
MUTED = QColor(96, 96, 96)
AXIS = QColor(85, 85, 85)
GRID = QColor(0xE0, 0xE0, 0xE0)  # opaque: translucent lines are slow and print badly
MINOR_GRID = QColor(0xF0, 0xF0, 0xF0)
WHISKER = QColor(51, 51, 51)
WHITE = QColor(255, 255, 255)

#: Units whose numbers are shown plainly (no SI prefix).

# ------------------------------------------------------------------------- painting


class Ctx:
    """A painter with sizes in points: `u` logical units per point."""

    def __init__(self, painter: QPainter, font_family: str | None, base_point_size: float) -> None:
        self.painter = painter
        self.device = painter.device()
        dpi = float(self.device.logicalDpiY()) if self.device is not None else 96.0
        if not dpi > 0:
            dpi = 96.0
        det = painter.worldTransform().determinant()
        scale = math.sqrt(abs(det)) if math.isfinite(det) and det != 0 else 1.0
        self.scale = scale  # device units per logical unit
        self.u = dpi / 72.0 / scale
        self.base = float(base_point_size) if base_point_size > 0 else 8.0
        self._font = QFont(font_family) if font_family else QFont()
        # No "ﬁ"/"ﬂ" ligatures: in a PDF they copy and search as one odd character.
        self._font.setFeature(QFont.Tag("liga"), 0)

    def font(self, rel: float = 1.0, *, bold: bool = False, italic: bool = False) -> QFont:
        font = QFont(self._font)
        font.setPointSizeF(max(self.base * rel / self.scale, 0.1))
        font.setBold(bold)
        font.setItalic(italic)
        return font

    def fm(self, font: QFont) -> QFontMetricsF:
        if self.device is not None:
            return QFontMetricsF(font, self.device)
        return QFontMetricsF(font)

    def pt(self, points: float) -> float:
        return points * self.u

    def pen(self, colour: QColor, width_pt: float, style: Qt.PenStyle = Qt.PenStyle.SolidLine) -> QPen:
        pen = QPen(QColor(colour), width_pt * self.u, style)
        pen.setCapStyle(Qt.PenCapStyle.FlatCap)
        pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
        return pen

    def text(self, rect: QRectF, flags: Qt.AlignmentFlag, text: str, font: QFont, colour: QColor = TEXT) -> None:
        p = self.painter
        p.setFont(font)
        p.setPen(QPen(colour))
        p.drawText(rect, flags, text)

    def line(self, x1: float, y1: float, x2: float, y2: float, pen: QPen) -> None:
        self.painter.setPen(pen)
        self.painter.drawLine(QPointF(x1, y1), QPointF(x2, y2))


LEFT = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
CENTER = Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignVCenter


def rgb(colour: tuple[int, int, int]) -> QColor:
    return QColor(*colour)


def mix(colour: QColor, other: QColor, t: float) -> QColor:
    """`colour` moved a fraction `t` towards `other` (opaque)."""
    return QColor(
        round(colour.red() + (other.red() - colour.red()) * t),
        round(colour.green() + (other.green() - colour.green()) * t),
        round(colour.blue() + (other.blue() - colour.blue()) * t),
    )


def all_finite(*values: float | None) -> bool:
    return all(v is not None and math.isfinite(v) for v in values)


# -------------------------------------------------------------------------- markers


def _marker_path(centre: QPointF, r: float, shape: str) -> QPainterPath:
    path = QPainterPath()
    x, y = centre.x(), centre.y()
    if shape == "diamond":
        r *= 1.3
        path.addPolygon(QPolygonF([QPointF(x, y - r), QPointF(x + r, y), QPointF(x, y + r), QPointF(x - r, y)]))
        path.closeSubpath()
    elif shape == "square":
        r *= 0.9
        path.addRect(QRectF(x - r, y - r, 2 * r, 2 * r))
    elif shape == "triangle":
        r *= 1.2
        path.addPolygon(QPolygonF([QPointF(x, y - r), QPointF(x + r, y + r * 0.8), QPointF(x - r, y + r * 0.8)]))
        path.closeSubpath()
    else:
        path.addEllipse(centre, r, r)
    return path


def draw_marker(ctx: Ctx, centre: QPointF, r: float, shape: str, colour: QColor, *, hollow: bool = False) -> None:
    """A filled marker with a thin white rim; `hollow`: white inside, outlined in `colour`."""
    p = ctx.painter
    p.setPen(ctx.pen(colour, 1.0) if hollow else ctx.pen(WHITE, 0.4))
    p.setBrush(QBrush(WHITE if hollow else colour))
    p.drawPath(_marker_path(centre, r, shape))
    p.setBrush(Qt.BrushStyle.NoBrush)

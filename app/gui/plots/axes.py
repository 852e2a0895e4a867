"""Axis items of the plots: opaque grids, whole-number indices, SI and log ticks, categories."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from app.gui.plots.common import HOVER_RATE

#: What a hover proxy passes its slot: the arguments of the scene's sigMouseMoved.
HoverEvent = tuple[QtCore.QPointF]
#: A tick label as AxisItem.generateDrawSpecs lays it out: (rectangle, text flags, text).
TextSpec = tuple[QtCore.QRectF, Any, str]
#: Tick positions as AxisItem.tickValues gives them: (spacing, values) per tick level.
TickLevels = list[tuple[float, list[float]]]


# pyqtgraph ships no types, so its classes are Any to mypy: this module is exempt from
# strict's disallow_subclassing_any ([tool.mypy] in pyproject.toml lists it).
class GridAxis(pg.AxisItem):
    """An axis whose grid lines are drawn in opaque colours blended onto the plot
    background. pyqtgraph draws them translucent (alpha 0.25, fainter for minor
    ticks), and Qt's raster engine draws a translucent line ~40x slower than an
    opaque one: with the grid on, repainting a live plot took 65 ms instead of 38."""

    def __init__(self, orientation: str, **kwargs: Any) -> None:
        super().__init__(orientation, **kwargs)
        self.background = QtGui.QColor(255, 255, 255)

    def set_background(self, colour: QtGui.QColor) -> None:
        self.background = QtGui.QColor(colour)
        self.picture = None
        self.update()

    def generateDrawSpecs(self, p: QtGui.QPainter) -> Any:
        specs = super().generateDrawSpecs(p)
        if specs is None:
            return specs
        axis_spec, tick_specs, text_specs = specs
        bg = self.background
        opaque = []
        for pen, p1, p2 in tick_specs:
            colour = pen.color()
            a = colour.alphaF()
            if a < 1.0:
                pen = QtGui.QPen(pen)
                pen.setColor(
                    QtGui.QColor.fromRgbF(
                        colour.redF() * a + bg.redF() * (1 - a),
                        colour.greenF() * a + bg.greenF() * (1 - a),
                        colour.blueF() * a + bg.blueF() * (1 - a),
                    )
                )
            opaque.append((pen, p1, p2))
        return axis_spec, opaque, _without_collisions(text_specs)


#: Pixels kept free between two tick labels side by side (stacked ones may touch:
#: a text rectangle already holds the line's leading).
LABEL_GAP = 6


def _without_collisions(text_specs: list[TextSpec]) -> list[TextSpec]:
    """The tick labels that fit: pyqtgraph draws every level's labels (a log axis's
    "30 B40 B 50 60 70"); kept in the order given (major ticks first), a label is
    dropped when its rectangle, widened by LABEL_GAP, overlaps one already kept."""
    kept: list[TextSpec] = []
    half = LABEL_GAP / 2
    for spec in text_specs:
        rect = spec[0].adjusted(-half, 0, half, 0)
        if not any(rect.intersects(other[0].adjusted(-half, 0, half, 0)) for other in kept):
            kept.append(spec)
    return kept


class IndexAxis(GridAxis):
    """Sample indices: whole numbers only (pyqtgraph would tick 0.5 steps over a few samples)."""

    def tickValues(self, minVal: float, maxVal: float, size: float) -> TickLevels:
        levels = []
        for spacing, values in super().tickValues(minVal, maxVal, size):
            if spacing >= 1:
                levels.append((spacing, values))
        return levels or [(1.0, [float(v) for v in range(math.ceil(minVal), math.floor(maxVal) + 1)])]


def grid_axes(**given: pg.AxisItem) -> dict[str, pg.AxisItem]:
    """The left and bottom axis items of a plot (the ones that draw the grid): the
    given ones, `GridAxis` for the rest. Right and top stay pyqtgraph's, hidden: an
    axis passed in here is shown."""
    return {name: given.get(name) or GridAxis(name) for name in ("left", "bottom")}


class SIAxis(GridAxis):
    """Linear: pyqtgraph's automatic SI prefix in the label ("time (µs)").
    Log: every tick carries its own prefix and unit ("10 µs", "1 ms", "1 kB"), since
    one prefix cannot fit a range from nanoseconds to seconds."""

    def setLogMode(self, *args: Any, **kwargs: Any) -> None:
        super().setLogMode(*args, **kwargs)
        self.updateAutoSIPrefix()

    def updateAutoSIPrefix(self) -> None:
        if getattr(self, "logMode", False):
            self.autoSIPrefixScale = 1.0
            self.labelUnitPrefix = ""
            self._updateLabel()
            return
        super().updateAutoSIPrefix()

    def labelString(self) -> str:
        if getattr(self, "logMode", False) and self.labelUnits:
            style = ";".join(f"{k}: {v}" for k, v in self.labelStyle.items())
            return f"<span style='{style}'>{self.labelText} (log scale)</span>"
        text: str = super().labelString()
        return text

    def logTickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        out = []
        for v in values:
            value = 10.0 ** float(v) * scale
            out.append(pg.siFormat(value, precision=3, suffix=self.labelUnits) if math.isfinite(value) else "")
        return out


def binary_size(size: float) -> str:
    """2**k bytes in binary units: "512 B", "4 KiB", "1 MiB" (as the rest of the app)."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if value == round(value) else f"{value:.3g} {unit}"
    return f"{size:.0f} B"


class BytesAxis(GridAxis):
    """A message-size axis in log mode: ticks at powers of two, labelled in binary
    units (KiB, MiB), never SI's decimal kB."""

    _LOG2 = math.log10(2.0)

    def tickValues(self, minVal: float, maxVal: float, size: float) -> TickLevels:
        linear: TickLevels
        if not getattr(self, "logMode", False):
            linear = super().tickValues(minVal, maxVal, size)
            return linear
        lo, hi = sorted((minVal, maxVal))
        first, last = math.ceil(lo / self._LOG2), math.floor(hi / self._LOG2)
        if last < first:
            linear = super().tickValues(minVal, maxVal, size)
            return linear
        # At most one label per ~70 px: "512 KiB" is about that wide.
        step = 1
        while (last - first) / step > max(1.0, size / 70):
            step *= 2
        start = math.ceil(first / step) * step
        return [(step * self._LOG2, [k * self._LOG2 for k in range(start, last + 1, step)])]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        if not getattr(self, "logMode", False):
            strings: list[str] = super().tickStrings(values, scale, spacing)
            return strings
        return [binary_size(2.0 ** round(v / self._LOG2)) for v in values]


class CategoryAxis(GridAxis):
    """Text labels at integer positions; thins them out when they would overlap."""

    def __init__(self, orientation: str) -> None:
        super().__init__(orientation)
        self._labels: list[str] = []

    def set_labels(self, labels: Sequence[str]) -> None:
        self._labels = list(labels)
        self.picture = None
        self.update()

    def labels(self) -> list[str]:
        return list(self._labels)

    def tickValues(self, minVal: float, maxVal: float, size: float) -> TickLevels:
        n = len(self._labels)
        if not n:
            return []
        lo_v, hi_v = sorted((minVal, maxVal))
        lo, hi = max(0, math.ceil(lo_v)), min(n - 1, math.floor(hi_v))
        if hi < lo:
            return []
        font = self.style.get("tickFont") or QtGui.QFont()
        metrics = QtGui.QFontMetricsF(font)
        pitch = (
            metrics.height() * 1.05
            if self.orientation in ("left", "right")
            else (max(metrics.horizontalAdvance(s) for s in self._labels[lo : hi + 1]) + 8) * 1.3
        )
        stride = max(1, math.ceil((hi - lo + 1) * pitch / max(size, 1.0)))
        return [(float(stride), [float(i) for i in range(lo, hi + 1, stride)])]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        out = []
        for v in values:
            i = round(v)
            out.append(self._labels[i] if 0 <= i < len(self._labels) else "")
        return out


def grid_behind(plot: pg.PlotItem) -> None:
    """Axes (which draw the grid) below the view box (z -100): the grid goes behind bars,
    curves and value labels instead of through them; tick labels are outside the box.
    PlotItem puts its axes at z 0.5, so this is set after it is built."""
    for name in ("left", "bottom", "right", "top"):
        plot.getAxis(name).setZValue(-200)


def new_plot(left: pg.AxisItem | None = None, bottom: pg.AxisItem | None = None) -> pg.PlotWidget:
    given = {name: axis for name, axis in (("left", left), ("bottom", bottom)) if axis is not None}
    widget = pg.PlotWidget(axisItems=grid_axes(**given))
    widget.getPlotItem().showGrid(x=True, y=True, alpha=0.25)
    grid_behind(widget.getPlotItem())
    widget.setMenuEnabled(True)
    return widget


def hover_proxy(widget: pg.PlotWidget, slot: Any) -> pg.SignalProxy:
    return pg.SignalProxy(widget.scene().sigMouseMoved, rateLimit=HOVER_RATE, slot=slot)


def view_point(widget: pg.PlotWidget, event: HoverEvent) -> QtCore.QPointF | None:
    """The mouse position in data coordinates, or None outside the view box."""
    pos = event[0]
    vb = widget.getPlotItem().vb
    if not vb.sceneBoundingRect().contains(pos):
        return None
    point: QtCore.QPointF = vb.mapSceneToView(pos)
    return point


def _one(value: Any) -> Any:
    """One point's style of a per-point list (pyqtgraph takes a list or an array as one
    value per point; a tuple is one colour): its first, else the value itself."""
    if isinstance(value, list | np.ndarray):
        return value[0] if len(value) else None
    return value


class _OneSymbolSample(pg.ItemSample):
    """A legend entry that draws one symbol, whatever the curve gives each point.

    WORKAROUND for pyqtgraph 0.14's ItemSample.paint: it hands a PlotDataItem's `symbol`
    option to drawSymbol as it is, and a curve with a symbol per point holds a list there;
    QPainter.drawPath(list) ends the process with a segmentation fault (History, Trend…
    did, at its first paint). A PlotDataItem's entry is drawn here from its first point's
    style; any other item (a ScatterPlotItem keeps its per-point symbols in its data and
    one in its options) is drawn by pyqtgraph."""

    def paint(self, p: QtGui.QPainter, *args: Any) -> None:
        item = self.item
        if not isinstance(item, pg.PlotDataItem) or not item.isVisible():
            super().paint(p, *args)
            return
        opts = item.opts
        if opts.get("antialias"):
            p.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        p.setPen(pg.mkPen(opts["pen"]))
        p.drawLine(0, 11, 20, 11)
        if opts.get("fillLevel") is not None and opts.get("fillBrush") is not None:
            p.setBrush(pg.mkBrush(opts["fillBrush"]))
            p.drawPolygon(QtGui.QPolygonF([QtCore.QPointF(2, 18), QtCore.QPointF(18, 2), QtCore.QPointF(18, 18)]))
        symbol = _one(opts.get("symbol"))
        if symbol is not None:
            p.translate(10, 10)
            pen, brush = pg.mkPen(_one(opts["symbolPen"])), pg.mkBrush(_one(opts["symbolBrush"]))
            # Reached through the package: pyqtgraph's submodules are untyped to mypy.
            pg.graphicsItems.ScatterPlotItem.drawSymbol(p, symbol, _one(opts["symbolSize"]), pen, brush)


class _OutsideLegend(pg.LegendItem):
    """A legend in the plot item's layout, beside (or under) the view box: it never
    covers a curve and no grid line crosses its text. pyqtgraph's own legend floats
    over the data."""

    def updateSize(self) -> None:
        # The base class sets its geometry from its labels' current sizes (0 before they
        # are laid out), and a layout overrides a geometry anyway: the size its own
        # layout asks for is what the plot's layout must reserve.
        self.layout.invalidate()
        size = self.layout.effectiveSizeHint(QtCore.Qt.SizeHint.PreferredSize) if self.items else QtCore.QSizeF(0, 0)
        # Its width is reserved; its height never squeezes the axes out of the plot (a
        # legend taller than the plot loses its last lines, read on hover instead).
        self.setMinimumSize(QtCore.QSizeF(size.width(), 0))
        self.setPreferredSize(size)
        self.setMaximumSize(size)
        self.setVisible(bool(self.items))  # no empty frame
        self.updateGeometry()

    def mouseDragEvent(self, ev: Any) -> None:
        ev.ignore()  # its place is in the layout


def outside_legend(plot: pg.PlotItem, where: str = "right", columns: int = 1) -> _OutsideLegend:
    """A legend right of the view box (`where="right"`) or under the bottom axis."""
    legend = _OutsideLegend(colCount=columns, labelTextSize="8pt", sampleType=_OneSymbolSample)
    if where == "right":
        plot.layout.addItem(legend, 1, 3, 3, 1)  # beside the view box and its axes
        plot.layout.setAlignment(legend, QtCore.Qt.AlignmentFlag.AlignTop)
    else:
        plot.layout.addItem(legend, 4, 1)
    legend.setParentItem(plot)
    plot.legend = legend  # PlotItem.addItem(name=...) and clear() find it here
    legend.updateSize()  # empty: hidden, no width reserved
    return legend

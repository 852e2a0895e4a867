"""The plots panel: live sample stream, histogram, comparison, scaling and resources.

Everything here runs in the GUI thread. Live data arrives in batches through
`add_samples` / `add_resource`, which only copy numbers into growable numpy buffers;
the main window's timer calls `refresh`, which pushes the buffers that changed into
long-lived pyqtgraph items with `setData`. Curves are created once per metric (or
role) and reused for every later job, so the number of graphics items never grows
with the number of batches.

Times are passed to pyqtgraph in seconds with the unit "s", so axes pick the SI
prefix (ns, µs, ms) themselves; log axes label every tick with its own prefix.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from app.core.results import JobResult
from app.report.style import PALETTE

pg.setConfigOptions(antialias=False)

__all__ = ["PlotsPanel", "default_metric"]

#: Metrics timing one message, in order of preference, for the comparison default.
PER_MESSAGE_METRICS = ("encrypt", "sign", "hash", "derive", "exchange")
SESSION_MODES = ("loopback", "remote")
ROLES = ("sender", "receiver", "worker")

#: Qualitative colours (Tableau 10) readable on light and dark backgrounds.
_COLOURS = PALETTE
_ROLE_COLOURS = {"sender": _COLOURS[0], "receiver": _COLOURS[1], "worker": _COLOURS[2]}
_MIB = float(1 << 20)
_HOVER_RATE = 30  # hover read-outs are recomputed at most this many times a second
_MAX_LABEL = 48  # characters of a job label on the comparison axis


def _colour(index: int) -> QtGui.QColor:
    if index < len(_COLOURS):
        return QtGui.QColor(*_COLOURS[index])
    return pg.intColor(index, hues=13, values=1, minValue=200)


def _fmt_time(seconds: float) -> str:
    return pg.siFormat(float(seconds), precision=4, suffix="s")


def _fmt_bytes(size: int) -> str:
    for unit, factor in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    if size >= 1 << 20:
        return f"{size / (1 << 20):.1f} MiB"
    if size >= 1 << 10:
        return f"{size / (1 << 10):.1f} KiB"
    return f"{size} B"


def _elide(text: str, limit: int = _MAX_LABEL) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _usable(results: Iterable[JobResult]) -> list[JobResult]:
    return [r for r in results if r.status == "ok" and r.metrics]


def _metric_names(results: Iterable[JobResult]) -> list[str]:
    names: dict[str, None] = {}
    for result in results:
        for name in result.metrics:
            names.setdefault(name, None)
    return list(names)


def default_metric(results: Sequence[JobResult]) -> str | None:
    """The per-message metric to show first: "compute" for session jobs, else the
    first of encrypt/sign/hash/derive/exchange present, else the first metric."""
    names = _metric_names(results)
    if "compute" in names and any(r.mode in SESSION_MODES and "compute" in r.metrics for r in results):
        return "compute"
    for name in PER_MESSAGE_METRICS:
        if name in names:
            return name
    return names[0] if names else None


def _style(text: str, muted: bool = False) -> str:
    return f"<i>{text}</i>" if muted else text


# --------------------------------------------------------------------------- buffers


class _Buffer:
    """Append-only float64 columns, grown by doubling (amortised O(1) per value)."""

    __slots__ = ("data", "n")

    def __init__(self, columns: int = 1, capacity: int = 1024) -> None:
        self.data = np.empty((columns, capacity), dtype=np.float64)
        self.n = 0

    def _reserve(self, extra: int) -> None:
        needed = self.n + extra
        capacity = self.data.shape[1]
        if needed <= capacity:
            return
        while capacity < needed:
            capacity *= 2
        grown = np.empty((self.data.shape[0], capacity), dtype=np.float64)
        grown[:, : self.n] = self.data[:, : self.n]
        self.data = grown

    def extend(self, values: np.ndarray) -> None:
        """Append a 1-D array (one-column buffers)."""
        self._reserve(values.size)
        self.data[0, self.n : self.n + values.size] = values
        self.n += values.size

    def append_row(self, *row: float) -> None:
        self._reserve(1)
        self.data[:, self.n] = row
        self.n += 1

    def column(self, k: int = 0) -> np.ndarray:
        return self.data[k, : self.n]

    def clear(self) -> None:
        self.n = 0


# ------------------------------------------------------------------------------ axes


class _GridAxis(pg.AxisItem):
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
                pen.setColor(QtGui.QColor.fromRgbF(colour.redF() * a + bg.redF() * (1 - a),
                                                   colour.greenF() * a + bg.greenF() * (1 - a),
                                                   colour.blueF() * a + bg.blueF() * (1 - a)))
            opaque.append((pen, p1, p2))
        return axis_spec, opaque, text_specs


class _IndexAxis(_GridAxis):
    """Sample indices: whole numbers only (pyqtgraph would tick 0.5 steps over a few samples)."""

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list:
        levels = []
        for spacing, values in super().tickValues(minVal, maxVal, size):
            if spacing >= 1:
                levels.append((spacing, values))
        return levels or [(1.0, [float(v) for v in range(math.ceil(minVal), math.floor(maxVal) + 1)])]


def _grid_axes(**given: pg.AxisItem) -> dict[str, pg.AxisItem]:
    """The left and bottom axis items of a plot (the ones that draw the grid): the
    given ones, `_GridAxis` for the rest. Right and top stay pyqtgraph's, hidden: an
    axis passed in here is shown."""
    return {name: given.get(name) or _GridAxis(name) for name in ("left", "bottom")}


class _SIAxis(_GridAxis):
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
        return super().labelString()

    def logTickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        out = []
        for v in values:
            value = 10.0 ** float(v) * scale
            out.append(pg.siFormat(value, precision=3, suffix=self.labelUnits) if math.isfinite(value) else "")
        return out


class _CategoryAxis(_GridAxis):
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

    def tickValues(self, minVal: float, maxVal: float, size: float) -> list:
        n = len(self._labels)
        if not n:
            return []
        lo_v, hi_v = sorted((minVal, maxVal))
        lo, hi = max(0, math.ceil(lo_v)), min(n - 1, math.floor(hi_v))
        if hi < lo:
            return []
        font = self.style.get("tickFont") or QtGui.QFont()
        metrics = QtGui.QFontMetricsF(font)
        pitch = (metrics.height() if self.orientation in ("left", "right") else
                 max(metrics.horizontalAdvance(s) for s in self._labels[lo:hi + 1]) + 8) * 1.3
        stride = max(1, math.ceil((hi - lo + 1) * pitch / max(size, 1.0)))
        return [(float(stride), [float(i) for i in range(lo, hi + 1, stride)])]

    def tickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        out = []
        for v in values:
            i = round(v)
            out.append(self._labels[i] if 0 <= i < len(self._labels) else "")
        return out


def _new_plot(left: pg.AxisItem | None = None, bottom: pg.AxisItem | None = None) -> pg.PlotWidget:
    given = {name: axis for name, axis in (("left", left), ("bottom", bottom)) if axis is not None}
    widget = pg.PlotWidget(axisItems=_grid_axes(**given))
    widget.getPlotItem().showGrid(x=True, y=True, alpha=0.25)
    widget.setMenuEnabled(True)
    return widget


def _hover_proxy(widget: pg.PlotWidget, slot: Any) -> pg.SignalProxy:
    return pg.SignalProxy(widget.scene().sigMouseMoved, rateLimit=_HOVER_RATE, slot=slot)


def _view_point(widget: pg.PlotWidget, event: tuple) -> QtCore.QPointF | None:
    """The mouse position in data coordinates, or None outside the view box."""
    pos = event[0]
    vb = widget.getPlotItem().vb
    if not vb.sceneBoundingRect().contains(pos):
        return None
    return vb.mapSceneToView(pos)


# ----------------------------------------------------------------------------- panel


class PlotsPanel(QtWidgets.QWidget):
    """Tabs of pyqtgraph plots for live samples and finished results."""

    TAB_NAMES = ("Samples", "Histogram", "Comparison", "Scaling", "Resources")

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self._ready = False
        # live state
        self._live_job: int | None = None
        self._live_label = ""
        self._live: dict[str, _Buffer] = {}
        self._live_dirty: set[str] = set()
        self._index = np.arange(1024, dtype=np.float64)
        self._res: dict[str, _Buffer] = {}
        self._res_dirty: set[str] = set()
        # selection and results
        self._selected: JobResult | None = None
        self._selected_arrays: dict[str, np.ndarray] = {}
        self._results: list[JobResult] = []
        self._comparison_rows: list[tuple[JobResult, float, tuple[float, float] | None]] = []
        self._scaling_groups: list[tuple[str, np.ndarray, np.ndarray, list[JobResult]]] = []
        self._hist_edges = np.empty(0)
        self._hist_counts = np.empty(0)

        self.tabs = QtWidgets.QTabWidget(self)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

        self._build_samples_tab()
        self._build_histogram_tab()
        self._build_comparison_tab()
        self._build_scaling_tab()
        self._build_resources_tab()
        self.tabs.currentChanged.connect(self._on_tab_changed)

        self._ready = True
        self.apply_palette()
        self._update_samples_header()
        self._update_resources_header()
        self._clear_histogram()
        self._draw_comparison()
        self._draw_scaling()

    # ------------------------------------------------------------------ construction

    @staticmethod
    def _page(*rows: QtWidgets.QWidget | QtWidgets.QLayout) -> QtWidgets.QWidget:
        page = QtWidgets.QWidget()
        box = QtWidgets.QVBoxLayout(page)
        box.setContentsMargins(6, 6, 6, 6)
        box.setSpacing(4)
        for row in rows:
            if isinstance(row, QtWidgets.QLayout):
                box.addLayout(row)
            else:
                box.addWidget(row, 1 if isinstance(row, pg.GraphicsView) else 0)
        return page

    @staticmethod
    def _readout() -> QtWidgets.QLabel:
        label = QtWidgets.QLabel()
        label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setMinimumHeight(label.fontMetrics().height() + 4)
        return label

    def _build_samples_tab(self) -> None:
        self._samples_plot = _new_plot(left=_SIAxis("left"), bottom=_IndexAxis("bottom"))
        item = self._samples_plot.getPlotItem()
        item.setLabel("bottom", "sample index")
        item.setLabel("left", "time", units="s")
        item.setDownsampling(auto=True, mode="peak")  # the context menu shows what the curves do
        item.setClipToView(True)
        self._samples_legend = item.addLegend(offset=(-10, 10))
        self._samples_curves: dict[str, pg.PlotDataItem] = {}
        self._samples_in_legend: list[str] = []  # legend order, which also picks the colours
        self._samples_cursor = pg.InfiniteLine(angle=90, movable=False)
        self._samples_cursor.setVisible(False)
        item.addItem(self._samples_cursor, ignoreBounds=True)

        self._samples_header = QtWidgets.QLabel()
        self._samples_log = QtWidgets.QCheckBox("Log scale")
        self._samples_log.setToolTip("A log time axis keeps fast metrics readable beside round trips and stalls")
        self._samples_log.toggled.connect(lambda on: self._samples_plot.getPlotItem().setLogMode(x=False, y=on))
        self._live_button = QtWidgets.QPushButton("Back to live")
        self._live_button.setToolTip("Show the running job's samples instead of the selected result")
        self._live_button.clicked.connect(lambda: self.select_result(None))
        self._live_button.setVisible(False)
        top = QtWidgets.QHBoxLayout()
        top.addWidget(self._samples_header, 1)
        top.addWidget(self._samples_log)
        top.addWidget(self._live_button)
        self._samples_readout = self._readout()
        self._samples_page = self._page(top, self._samples_plot, self._samples_readout)
        self.tabs.addTab(self._samples_page, "Samples")
        self._samples_proxy = _hover_proxy(self._samples_plot, self._on_samples_hover)

    def _build_histogram_tab(self) -> None:
        self._hist_plot = _new_plot()
        item = self._hist_plot.getPlotItem()
        item.setLabel("bottom", "time", units="s")
        item.setLabel("left", "samples")
        self._hist_curve = pg.PlotDataItem(stepMode="center", fillLevel=0, fillOutline=True)
        item.addItem(self._hist_curve)
        self._hist_median = pg.InfiniteLine(angle=90, movable=False, label="median",
                                            labelOpts={"position": 0.93, "movable": False})
        self._hist_median.setVisible(False)
        item.addItem(self._hist_median, ignoreBounds=True)

        self._hist_combo = QtWidgets.QComboBox()
        self._hist_combo.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToContents)
        self._hist_combo.currentTextChanged.connect(lambda _text: self._draw_histogram())
        self._hist_header = QtWidgets.QLabel()
        self._hist_header.setWordWrap(True)
        top = QtWidgets.QHBoxLayout()
        top.addWidget(QtWidgets.QLabel("Metric:"))
        top.addWidget(self._hist_combo)
        top.addWidget(self._hist_header, 1)
        self._hist_readout = self._readout()
        self.tabs.addTab(self._page(top, self._hist_plot, self._hist_readout), "Histogram")
        self._hist_proxy = _hover_proxy(self._hist_plot, self._on_hist_hover)

    def _build_comparison_tab(self) -> None:
        self._cmp_axis = _CategoryAxis("left")
        self._cmp_value_axis = _SIAxis("bottom")
        self._cmp_plot = _new_plot(left=self._cmp_axis, bottom=self._cmp_value_axis)
        item = self._cmp_plot.getPlotItem()
        item.setLabel("bottom", "median time", units="s")
        item.showGrid(x=True, y=False, alpha=0.25)
        item.vb.invertY(True)  # first job at the top
        item.vb.setMouseEnabled(x=True, y=True)
        self._cmp_bars = pg.BarGraphItem(x0=[0.0], y=[0.0], width=[0.0], height=0.6)
        self._cmp_bars.setVisible(False)
        self._cmp_whiskers = pg.ErrorBarItem(beam=0.3)
        item.addItem(self._cmp_bars)
        item.addItem(self._cmp_whiskers)
        self._cmp_texts: list[pg.TextItem] = []  # value labels at the bar ends, reused across redraws

        self._cmp_combo = QtWidgets.QComboBox()
        self._cmp_combo.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToContents)
        self._cmp_combo.currentTextChanged.connect(lambda _text: self._draw_comparison())
        self._cmp_log = QtWidgets.QCheckBox("Log scale")
        self._cmp_log.setToolTip("Medians span nanoseconds to seconds: a log axis shows them all")
        self._cmp_log.toggled.connect(lambda _on: self._draw_comparison())
        self._cmp_header = QtWidgets.QLabel()
        top = QtWidgets.QHBoxLayout()
        top.addWidget(QtWidgets.QLabel("Metric:"))
        top.addWidget(self._cmp_combo)
        top.addWidget(self._cmp_log)
        top.addWidget(self._cmp_header, 1)
        self._cmp_readout = self._readout()
        self.tabs.addTab(self._page(top, self._cmp_plot, self._cmp_readout), "Comparison")
        self._cmp_proxy = _hover_proxy(self._cmp_plot, self._on_cmp_hover)

    def _build_scaling_tab(self) -> None:
        self._scl_plot = _new_plot(left=_SIAxis("left"), bottom=_SIAxis("bottom"))
        item = self._scl_plot.getPlotItem()
        item.setLabel("bottom", "message size", units="B")
        item.setLabel("left", "median time", units="s")
        item.setLogMode(x=True, y=True)
        self._scl_legend = item.addLegend(offset=(-10, -10))  # bottom right: usually empty on log-log
        self._scl_curves: list[pg.PlotDataItem] = []

        self._scl_combo = QtWidgets.QComboBox()
        self._scl_combo.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToContents)
        self._scl_combo.currentTextChanged.connect(lambda _text: self._draw_scaling())
        self._scl_header = QtWidgets.QLabel()
        top = QtWidgets.QHBoxLayout()
        top.addWidget(QtWidgets.QLabel("Metric:"))
        top.addWidget(self._scl_combo)
        top.addWidget(self._scl_header, 1)
        self._scl_readout = self._readout()
        self.tabs.addTab(self._page(top, self._scl_plot, self._scl_readout), "Scaling")
        self._scl_proxy = _hover_proxy(self._scl_plot, self._on_scl_hover)

    def _build_resources_tab(self) -> None:
        self._res_view = pg.GraphicsLayoutWidget()
        self._cpu_plot = self._res_view.addPlot(row=0, col=0, axisItems=_grid_axes())
        self._rss_plot = self._res_view.addPlot(row=1, col=0, axisItems=_grid_axes())
        for plot in (self._cpu_plot, self._rss_plot):
            plot.showGrid(x=True, y=True, alpha=0.25)
            plot.setLabel("bottom", "time since job start", units="s")
        self._cpu_plot.setLabel("left", "CPU", units="%")
        self._rss_plot.setLabel("left", "RSS", units="MiB")
        for plot in (self._cpu_plot, self._rss_plot):
            plot.getAxis("left").enableAutoSIPrefix(False)
            plot.getAxis("left").setWidth(60)
        self._rss_plot.setXLink(self._cpu_plot)
        self._cpu_legend = self._cpu_plot.addLegend(offset=(-10, 10))
        self._rss_legend = self._rss_plot.addLegend(offset=(-10, 10))
        self._res_curves: dict[str, tuple[pg.PlotDataItem, pg.PlotDataItem]] = {}
        self._res_in_legend: set[str] = set()
        self._res_header = QtWidgets.QLabel()
        self._res_page = self._page(self._res_header, self._res_view)
        self.tabs.addTab(self._res_page, "Resources")

    # ------------------------------------------------------------------ palette

    def apply_palette(self) -> None:
        """Re-read this widget's palette (window / text colours) into every plot."""
        palette = self.palette()
        bg = palette.color(QtGui.QPalette.ColorRole.Window)
        fg = palette.color(QtGui.QPalette.ColorRole.WindowText)
        self._fg = QtGui.QColor(fg)
        self._bg = QtGui.QColor(bg)
        legend_bg = QtGui.QColor(bg)  # opaque: no curve shows through the labels
        legend_pen = QtGui.QColor(fg)
        legend_pen.setAlpha(90)
        muted = QtGui.QColor(fg)
        muted.setAlpha(150)

        for view in (self._samples_plot, self._hist_plot, self._cmp_plot, self._scl_plot, self._res_view):
            view.setBackground(bg)
        for plot in self._plot_items():
            for name in ("left", "bottom", "right", "top"):
                axis = plot.getAxis(name)
                if isinstance(axis, _GridAxis):
                    axis.set_background(bg)
                axis.setPen(fg)
                axis.setTextPen(fg)
        for legend in (self._samples_legend, self._scl_legend, self._cpu_legend, self._rss_legend):
            legend.setLabelTextColor(fg)
            legend.setBrush(legend_bg)
            legend.setPen(legend_pen)

        self._samples_cursor.setPen(pg.mkPen(muted, style=QtCore.Qt.PenStyle.DashLine))
        self._hist_median.setPen(pg.mkPen(fg, width=2, style=QtCore.Qt.PenStyle.DashLine))
        self._hist_median.label.setColor(fg)
        accent = QtGui.QColor(*_COLOURS[0])
        fill = QtGui.QColor(accent)
        fill.setAlpha(120)
        self._hist_curve.setPen(pg.mkPen(accent, width=1))
        self._hist_curve.setBrush(pg.mkBrush(fill))
        self._cmp_bars.setOpts(pen=pg.mkPen(accent), brush=pg.mkBrush(fill))
        self._cmp_whiskers.setData(pen=pg.mkPen(fg, width=1.5))
        for label in self._cmp_texts:
            label.setColor(fg)

    def _plot_items(self) -> list[pg.PlotItem]:
        return [self._samples_plot.getPlotItem(), self._hist_plot.getPlotItem(), self._cmp_plot.getPlotItem(),
                self._scl_plot.getPlotItem(), self._cpu_plot, self._rss_plot]

    def changeEvent(self, event: QtCore.QEvent) -> None:
        super().changeEvent(event)
        if self._ready and event.type() == QtCore.QEvent.Type.PaletteChange:
            self.apply_palette()

    # ------------------------------------------------------------------ public API

    def reset(self) -> None:
        """Clear everything for a new run (items are kept, their data is dropped)."""
        self._live_job = None
        self._live_label = ""
        for buf in self._live.values():
            buf.clear()
        self._live_dirty.clear()
        for buf in self._res.values():
            buf.clear()
        self._res_dirty.clear()
        self._selected = None
        self._selected_arrays = {}
        for metric in list(self._samples_curves):
            self._set_curve(metric, None)
        self._clear_resource_curves()
        self._live_button.setVisible(False)
        self._samples_cursor.setVisible(False)
        self._samples_readout.clear()
        self._update_samples_header()
        self._update_resources_header()
        self._clear_histogram()
        self.show_results([])

    def begin_job(self, job_index: int, label: str) -> None:
        """Point the live stream and the resource plots at a new job (data cleared)."""
        self._live_job = job_index
        self._live_label = label
        for buf in self._live.values():
            buf.clear()
        self._live_dirty.clear()
        for buf in self._res.values():
            buf.clear()
        self._res_dirty.clear()
        if self._selected is None:
            for metric in list(self._samples_curves):
                self._set_curve(metric, None)
            self._samples_readout.clear()
        self._clear_resource_curves()
        self._update_samples_header()
        self._update_resources_header()

    def add_samples(self, job_index: int, metric: str, values: Sequence[float]) -> None:
        """Buffer a batch of samples (seconds). Batches of other jobs are ignored."""
        if self._live_job is None:
            self._live_job = job_index
        if job_index != self._live_job:
            return
        arr = np.array(values, dtype=np.float64).ravel()
        if arr.size == 0:
            return
        if not np.isfinite(arr).all():
            arr = arr[np.isfinite(arr)]
        buf = self._live.get(metric)
        if buf is None:
            buf = self._live[metric] = _Buffer(1)
        buf.extend(arr)
        self._live_dirty.add(metric)

    def add_resource(self, job_index: int, role: str, t: float, cpu_percent: float, rss_bytes: int) -> None:
        """Buffer one CPU / RSS reading of a job's process. Other jobs are ignored."""
        if self._live_job is None:
            self._live_job = job_index
        if job_index != self._live_job:
            return
        buf = self._res.get(role)
        if buf is None:
            buf = self._res[role] = _Buffer(3, capacity=256)
        buf.append_row(float(t), float(cpu_percent), float(rss_bytes) / _MIB)
        self._res_dirty.add(role)

    def refresh(self) -> None:
        """Push buffered live data into the curves of the visible tab (cheap if none)."""
        current = self.tabs.currentWidget()
        if self._live_dirty and current is self._samples_page and self._selected is None:
            for metric in sorted(self._live_dirty, key=list(self._live).index):
                buf = self._live[metric]
                self._set_curve(metric, self._index_view(buf.n), buf.column())
            self._live_dirty.clear()
            self._update_samples_header()
        if self._res_dirty and current is self._res_page:
            for role in sorted(self._res_dirty, key=list(self._res).index):
                buf = self._res[role]
                cpu, rss = self._resource_curves(role)
                t = buf.column(0)
                cpu.setData(t, buf.column(1))
                rss.setData(t, buf.column(2))
                if role not in self._res_in_legend:
                    self._cpu_legend.addItem(cpu, role)
                    self._rss_legend.addItem(rss, role)
                    self._res_in_legend.add(role)
            self._res_dirty.clear()

    def show_results(self, results: Sequence[JobResult]) -> None:
        """(Re)draw the Comparison and Scaling tabs from finished results."""
        self._results = _usable(results)
        names = _metric_names(self._results)
        default = default_metric(self._results)
        for combo in (self._cmp_combo, self._scl_combo):
            self._fill_combo(combo, names, default)
        self._draw_comparison()
        self._draw_scaling()

    def select_result(self, result: JobResult | None) -> None:
        """Show a finished job's raw samples and histogram; None goes back to live."""
        self._selected = result
        self._samples_cursor.setVisible(False)
        self._samples_readout.clear()
        if result is None:
            self._selected_arrays = {}
            self._live_button.setVisible(False)
            for metric in list(self._samples_curves):
                if metric not in self._live or self._live[metric].n == 0:
                    self._set_curve(metric, None)
            self._live_dirty.update(m for m, buf in self._live.items() if buf.n)
            self._update_samples_header()
            self._clear_histogram()
            self.refresh()
            return
        arrays = {name: np.asarray(m.samples, dtype=np.float64).ravel() for name, m in result.metrics.items()}
        self._selected_arrays = {name: arr[np.isfinite(arr)] for name, arr in arrays.items()
                                 if arr.size and np.isfinite(arr).any()}
        self._live_button.setVisible(True)
        for metric in list(self._samples_curves):
            if metric not in self._selected_arrays:
                self._set_curve(metric, None)
        for metric, arr in self._selected_arrays.items():
            self._set_curve(metric, self._index_view(arr.size), arr)
        # A session's handshake (ms) beside its messages (µs) flattens the messages to a
        # line at zero on a linear axis: switch to log when the medians span 100x.
        medians = [float(np.median(arr)) for arr in self._selected_arrays.values() if np.median(arr) > 0]
        if medians and max(medians) > 100 * min(medians):
            self._samples_log.setChecked(True)
        self._samples_plot.getPlotItem().enableAutoRange()
        self._update_samples_header()
        self._fill_combo(self._hist_combo, list(result.metrics), default_metric([result]))
        self._draw_histogram()

    def sample_count(self) -> int:
        """Live samples buffered for the current job, all metrics together."""
        return sum(buf.n for buf in self._live.values())

    # ------------------------------------------------------------------ samples tab

    def _index_view(self, n: int) -> np.ndarray:
        if n > self._index.size:
            size = self._index.size
            while size < n:
                size *= 2
            self._index = np.arange(size, dtype=np.float64)
        return self._index[:n]

    def _curve(self, metric: str) -> pg.PlotDataItem:
        curve = self._samples_curves.get(metric)
        if curve is None:
            # Peak downsampling to ~2 points per pixel column (min and max: the exact
            # envelope); pyqtgraph's default of 5 per pixel drew 5x the points for nothing.
            curve = pg.PlotDataItem(pen=pg.mkPen(_colour(len(self._samples_in_legend)), width=1),
                                    skipFiniteCheck=True, autoDownsampleFactor=1.0)
            # After addItem: PlotItem.addItem imposes the plot's own (context menu) settings.
            self._samples_plot.getPlotItem().addItem(curve)
            curve.setDownsampling(auto=True, method="peak")
            curve.setClipToView(True)
            self._samples_curves[metric] = curve
        return curve

    def _set_curve(self, metric: str, x: np.ndarray | None, y: np.ndarray | None = None) -> None:
        """Show data on a metric's curve (None: empty it and take it off the legend)."""
        if x is None or y is None or y.size == 0:
            curve = self._samples_curves.get(metric)
            if curve is None:
                return
            curve.setData(np.empty(0), np.empty(0))
            if metric in self._samples_in_legend:
                self._samples_legend.removeItem(curve)
                self._samples_in_legend.remove(metric)
                self._recolour_samples()
            return
        curve = self._curve(metric)
        curve.setData(x, y)
        if metric not in self._samples_in_legend:
            self._samples_legend.addItem(curve, metric)
            self._samples_in_legend.append(metric)
            self._recolour_samples()

    def _recolour_samples(self) -> None:
        """Colours follow the legend order, so each view starts with blue, orange, green."""
        for k, metric in enumerate(self._samples_in_legend):
            curve = self._samples_curves[metric]
            colour = _colour(k)
            if curve.opts["pen"].color() != colour:
                curve.setPen(pg.mkPen(colour, width=1))
        self._samples_legend.update()

    def _update_samples_header(self) -> None:
        result = self._selected
        if result is not None:
            n = sum(arr.size for arr in self._selected_arrays.values())
            state = f"{n:,} samples" if n else f"{result.status}, no samples"
            text = (f"<b>Job #{result.index + 1}: {result.label}</b> · {_fmt_bytes(result.message_size)} · "
                    f"{state} (finished)")
        elif self._live_job is not None:
            text = (f"<b>Live: job #{self._live_job + 1}</b> {self._live_label} · "
                    f"{self.sample_count():,} samples")
        else:
            text = _style("No job running. Select a finished job to see its samples.", muted=True)
        self._samples_header.setText(text)

    def _samples_source(self) -> dict[str, np.ndarray]:
        if self._selected is not None:
            return self._selected_arrays
        return {m: buf.column() for m, buf in self._live.items() if buf.n}

    def _on_samples_hover(self, event: tuple) -> None:
        point = _view_point(self._samples_plot, event)
        source = self._samples_source()
        if point is None or not source:
            self._samples_cursor.setVisible(False)
            return
        i = round(point.x())
        parts = []
        for metric, arr in source.items():
            curve = self._samples_curves.get(metric)
            if curve is not None and curve.isVisible() and 0 <= i < arr.size:
                parts.append(f"{metric} {_fmt_time(arr[i])}")
        if not parts:
            self._samples_cursor.setVisible(False)
            self._samples_readout.clear()
            return
        self._samples_cursor.setPos(i)
        self._samples_cursor.setVisible(True)
        self._samples_readout.setText(f"sample #{i}: " + " · ".join(parts))

    # ------------------------------------------------------------------ histogram tab

    def _clear_histogram(self) -> None:
        self._hist_combo.blockSignals(True)
        self._hist_combo.clear()
        self._hist_combo.blockSignals(False)
        self._hist_edges = np.empty(0)
        self._hist_counts = np.empty(0)
        self._hist_curve.setData(np.empty(0), np.empty(0))
        self._hist_median.setVisible(False)
        self._hist_readout.clear()
        self._hist_header.setText(_style("Select a finished job to see its histogram.", muted=True))

    def _draw_histogram(self) -> None:
        result = self._selected
        metric = self._hist_combo.currentText()
        arr = self._selected_arrays.get(metric) if result is not None else None
        if result is None or arr is None or arr.size == 0:
            self._hist_edges = np.empty(0)
            self._hist_counts = np.empty(0)
            self._hist_curve.setData(np.empty(0), np.empty(0))
            self._hist_median.setVisible(False)
            if result is not None:
                self._hist_header.setText(f"<b>#{result.index + 1} {result.label}</b>: no samples")
            return
        counts, edges, folded, upper = _histogram(arr)
        self._hist_counts, self._hist_edges = counts, edges
        self._hist_curve.setData(edges, counts)
        stats = result.metrics[metric].stats
        median = float(stats.median) if stats.n else float(np.median(arr))
        self._hist_median.setVisible(True)
        self._hist_median.setPos(median)
        self._hist_median.label.setFormat(f"median {_fmt_time(median)}")
        text = (f"<b>#{result.index + 1} {result.label}</b> · {_fmt_bytes(result.message_size)} · "
                f"n = {arr.size:,} · {len(counts)} bins")
        if folded:
            text += f" · {folded:,} samples above {_fmt_time(upper)} counted in the last bin"
        self._hist_header.setText(text)
        self._hist_plot.getPlotItem().enableAutoRange()

    def _on_hist_hover(self, event: tuple) -> None:
        point = _view_point(self._hist_plot, event)
        if point is None or self._hist_counts.size == 0:
            return
        k = int(np.searchsorted(self._hist_edges, point.x(), side="right")) - 1
        if 0 <= k < self._hist_counts.size:
            lo, hi = self._hist_edges[k], self._hist_edges[k + 1]
            self._hist_readout.setText(f"{_fmt_time(lo)} – {_fmt_time(hi)}: {int(self._hist_counts[k]):,} samples")
        else:
            self._hist_readout.clear()

    # ------------------------------------------------------------------ comparison tab

    @staticmethod
    def _fill_combo(combo: QtWidgets.QComboBox, names: list[str], default: str | None) -> None:
        previous = combo.currentText()
        combo.blockSignals(True)
        combo.clear()
        combo.addItems(names)
        choice = previous if previous in names else default
        if choice is not None and choice in names:
            combo.setCurrentIndex(names.index(choice))
        combo.blockSignals(False)

    def _draw_comparison(self) -> None:
        metric = self._cmp_combo.currentText()
        log = self._cmp_log.isChecked()
        rows = []
        for result in self._results:
            m = result.metrics.get(metric)
            if m is None or m.stats.n == 0:
                continue
            median = float(m.stats.median)
            if log and median <= 0:
                continue
            ci = m.stats.ci95
            rows.append((result, median, (float(ci[0]), float(ci[1])) if ci is not None else None))
        self._comparison_rows = rows
        plot = self._cmp_plot.getPlotItem()
        plot.setLogMode(x=log, y=False)
        self._cmp_axis.set_labels([_elide(f"#{r.index + 1} {r.label} · {_fmt_bytes(r.message_size)}")
                                   for r, _, _ in rows])
        self._cmp_readout.clear()
        if not rows:
            self._cmp_bars.setVisible(False)
            self._cmp_whiskers.setData(x=None, y=None)
            self._set_value_labels([], np.empty(0), np.empty(0))
            self._cmp_header.setText(_style("Finished jobs appear here." if not self._results else
                                            f"No job has {metric!r}.", muted=True))
            return
        y = np.arange(len(rows), dtype=np.float64)
        medians = np.array([med for _, med, _ in rows])
        with_ci = [(i, med, ci) for i, (_, med, ci) in enumerate(rows) if ci is not None]
        base = 0.0
        if log:
            lows = [ci[0] for _, _, ci in with_ci if ci[0] > 0] + list(medians)
            base = float(math.floor(math.log10(min(lows))))
            self._cmp_bars.setOpts(x0=np.full(len(rows), float(base)), width=np.log10(medians) - base, y=y,
                                   height=0.6)
        else:
            self._cmp_bars.setOpts(x0=np.zeros(len(rows)), width=medians, y=y, height=0.6)
        self._cmp_bars.setVisible(True)
        if with_ci:
            idx = np.array([i for i, _, _ in with_ci], dtype=np.float64)
            med = np.array([m for _, m, _ in with_ci])
            lo = np.array([c[0] for _, _, c in with_ci])
            hi = np.array([c[1] for _, _, c in with_ci])
            if log:
                lo = np.where(lo > 0, lo, med)
                left, right = np.log10(med) - np.log10(lo), np.log10(hi) - np.log10(med)
                xs = np.log10(med)
            else:
                left, right, xs = med - lo, hi - med, med
            self._cmp_whiskers.setData(x=xs, y=idx, left=np.maximum(left, 0), right=np.maximum(right, 0),
                                       top=None, bottom=None, height=None, width=None, beam=0.3)
        else:
            self._cmp_whiskers.setData(x=None, y=None)
        ends = np.log10(medians) if log else medians.copy()
        for i, _, ci in with_ci:
            ends[i] = max(ends[i], math.log10(ci[1]) if log else ci[1])
        self._set_value_labels([_fmt_time(m) for m in medians], ends, y)
        right = float(ends.max())
        plot.setXRange(base, right + 0.22 * max(right - base, 1e-300), padding=0)  # room for the labels
        plot.setYRange(-0.6, len(rows) - 0.4, padding=0)
        missing = len(self._results) - len(rows)
        text = f"{len(rows)} jobs · bars: median {metric} · whiskers: 95 % CI of the median"
        if missing:
            text += f" · {missing} without {metric!r} not shown"
        self._cmp_header.setText(text)

    def _set_value_labels(self, texts: list[str], xs: np.ndarray, ys: np.ndarray) -> None:
        plot = self._cmp_plot.getPlotItem()
        while len(self._cmp_texts) < len(texts):
            label = pg.TextItem(anchor=(0, 0.5), color=self._fg)
            plot.addItem(label, ignoreBounds=True)
            self._cmp_texts.append(label)
        for k, label in enumerate(self._cmp_texts):
            if k < len(texts):
                label.setText(" " + texts[k])
                label.setPos(float(xs[k]), float(ys[k]))
            label.setVisible(k < len(texts))

    def _on_cmp_hover(self, event: tuple) -> None:
        point = _view_point(self._cmp_plot, event)
        if point is None or not self._comparison_rows:
            return
        i = round(point.y())
        if not 0 <= i < len(self._comparison_rows):
            self._cmp_readout.clear()
            return
        result, median, ci = self._comparison_rows[i]
        m = result.metrics[self._cmp_combo.currentText()]
        ci_text = f"95 % CI {_fmt_time(ci[0])} – {_fmt_time(ci[1])}" if ci else "no CI (n < 6)"
        self._cmp_readout.setText(f"#{result.index + 1} {result.label} · {_fmt_bytes(result.message_size)}: "
                                  f"median {_fmt_time(median)}, {ci_text}, n = {m.stats.n:,}")

    # ------------------------------------------------------------------ scaling tab

    def _draw_scaling(self) -> None:
        metric = self._scl_combo.currentText()
        plot = self._scl_plot.getPlotItem()
        for curve in self._scl_curves:
            plot.removeItem(curve)
        self._scl_curves = []
        self._scl_legend.clear()
        self._scl_readout.clear()
        groups: dict[tuple[str, str, str, str], list[JobResult]] = {}
        skipped = 0
        for result in self._results:
            m = result.metrics.get(metric)
            if m is None or m.stats.n == 0:
                continue
            if result.message_size <= 0 or m.stats.median <= 0:
                skipped += 1  # nowhere to put it on log axes
                continue
            key = (result.scheme, result.backend, json.dumps(result.params, sort_keys=True, default=str),
                   result.mode)
            groups.setdefault(key, []).append(result)
        labels = [members[0].label for members in groups.values()]
        several_modes = len({key[3] for key in groups}) > 1
        self._scaling_groups = []
        for k, (key, members) in enumerate(groups.items()):
            by_size: dict[int, JobResult] = {}
            for result in members:
                by_size[result.message_size] = result  # a later result of the same size wins
            ordered = [by_size[s] for s in sorted(by_size)]
            xs = np.array([r.message_size for r in ordered], dtype=np.float64)
            ys = np.array([r.metrics[metric].stats.median for r in ordered], dtype=np.float64)
            name = labels[k]
            if labels.count(name) > 1 and key[2] != "{}":
                name = f"{name} {key[2]}"
            if several_modes:
                name = f"{name} · {key[3]}"
            colour = _colour(k)
            curve = pg.PlotDataItem(xs, ys, pen=pg.mkPen(colour, width=2), symbol="o", symbolSize=8,
                                    symbolBrush=pg.mkBrush(colour), symbolPen=pg.mkPen(colour))
            curve.setLogMode(True, True)
            plot.addItem(curve)
            self._scl_legend.addItem(curve, _elide(name, 60))
            self._scl_curves.append(curve)
            self._scaling_groups.append((name, xs, ys, ordered))
        if not self._scaling_groups:
            self._scl_header.setText(_style("Finished jobs appear here." if not self._results else
                                            f"No job has {metric!r}.", muted=True))
        else:
            text = f"{len(self._scaling_groups)} curves · median {metric} against message size"
            if skipped:
                text += f" · {skipped} jobs with size or median 0 not shown"
            self._scl_header.setText(text)
        plot.enableAutoRange()

    def _on_scl_hover(self, event: tuple) -> None:
        point = _view_point(self._scl_plot, event)
        if point is None or not self._scaling_groups:
            return
        vb = self._scl_plot.getPlotItem().vb
        (x0, x1), (y0, y1) = vb.viewRange()
        sx, sy = max(x1 - x0, 1e-12), max(y1 - y0, 1e-12)
        best: tuple[float, str, JobResult] | None = None
        for name, xs, ys, members in self._scaling_groups:
            d = np.hypot((np.log10(xs) - point.x()) / sx, (np.log10(ys) - point.y()) / sy)
            j = int(np.argmin(d))
            if best is None or d[j] < best[0]:
                best = (float(d[j]), name, members[j])
        if best is None or best[0] > 0.04:
            self._scl_readout.clear()
            return
        _, name, result = best
        median = result.metrics[self._scl_combo.currentText()].stats.median
        self._scl_readout.setText(f"{name} · {result.message_size:,} bytes: median {_fmt_time(median)}")

    # ------------------------------------------------------------------ resources tab

    def _resource_curves(self, role: str) -> tuple[pg.PlotDataItem, pg.PlotDataItem]:
        pair = self._res_curves.get(role)
        if pair is None:
            colour = _ROLE_COLOURS.get(role) or _COLOURS[(3 + len(self._res_curves)) % len(_COLOURS)]
            pen = pg.mkPen(QtGui.QColor(*colour), width=2)
            pair = (pg.PlotDataItem(pen=pen), pg.PlotDataItem(pen=pen))
            self._cpu_plot.addItem(pair[0])
            self._rss_plot.addItem(pair[1])
            self._res_curves[role] = pair
        return pair

    def _clear_resource_curves(self) -> None:
        for role, (cpu, rss) in self._res_curves.items():
            cpu.setData(np.empty(0), np.empty(0))
            rss.setData(np.empty(0), np.empty(0))
            if role in self._res_in_legend:
                self._cpu_legend.removeItem(cpu)
                self._rss_legend.removeItem(rss)
        self._res_in_legend.clear()

    def _update_resources_header(self) -> None:
        if self._live_job is None:
            self._res_header.setText(_style("CPU and memory of the running job's processes appear here.",
                                            muted=True))
        else:
            self._res_header.setText(f"<b>Live: job #{self._live_job + 1}</b> {self._live_label} · "
                                     "CPU in % of one core, resident memory in MiB")

    def _on_tab_changed(self, _index: int) -> None:
        self.refresh()


def _histogram(arr: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, float]:
    """Counts and edges for timing samples; a heavy right tail is folded into the last
    bin (so the bulk stays readable) and the counts still sum to len(arr).

    Returns (counts, edges, folded, upper): `folded` samples above `upper` were
    counted in the last bin.
    """
    n = arr.size
    lo, hi = float(arr.min()), float(arr.max())
    if n == 1 or hi <= lo:
        half = abs(lo) * 0.01 or 1e-9
        return np.array([float(n)]), np.array([lo - half, lo + half]), 0, hi
    p25, p75, p95 = (float(v) for v in np.percentile(arr, [25, 75, 95]))
    iqr = p75 - p25
    upper = hi
    if n >= 50 and iqr > 0:
        fence = max(p95, p75 + 6 * iqr)  # stalls far beyond the bulk would squeeze it into a few bins
        if fence < hi:
            upper = fence
    folded = int(np.count_nonzero(arr > upper))
    width = 2 * iqr / n ** (1 / 3) if iqr > 0 else 0.0  # Freedman–Diaconis
    bins = math.ceil((upper - lo) / width) if width > 0 else math.ceil(math.log2(n)) + 1  # else Sturges
    bins = int(min(max(bins, 10 if n >= 20 else 5), 150))
    counts, edges = np.histogram(np.clip(arr, lo, upper), bins=bins, range=(lo, upper))
    return counts.astype(np.float64), edges, folded, upper

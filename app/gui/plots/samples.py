"""The Samples tab: the live (or selected) job's samples, one curve per metric.

A mixin of `PlotsPanel`: its state lives on the panel."""

from __future__ import annotations

from collections import Counter
from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6 import QtWidgets

from app.gui.plots.axes import HoverEvent, IndexAxis, SIAxis, hover_proxy, new_plot, outside_legend, view_point
from app.gui.plots.caption import PlotCaption, metric_list
from app.gui.plots.common import FloatArray, fmt_bytes, fmt_time, label_style, series_colour
from app.gui.plots.state import PanelState
from app.gui.vocab import PlotTab


def samples_per_metric(counts: dict[str, int]) -> str:
    """How many samples each metric has, as the header says it: "20 samples" for one
    metric, "20 samples a metric" when all have as many, and the others named when some
    have fewer or more ("20 samples a metric (keygen 10)"). The sum over metrics read as
    "50 samples" for a job whose plot shows 20 rounds."""
    counts = {metric: n for metric, n in counts.items() if n}
    if not counts:
        return ""
    tally = Counter(counts.values())
    usual = max(tally, key=lambda n: (tally[n], n))  # the count most metrics have (the larger on a tie)
    if len(counts) == 1:
        return f"{usual:,} samples"
    others = [f"{escape(metric)} {n:,}" for metric, n in counts.items() if n != usual]
    return f"{usual:,} samples a metric" + (f" ({', '.join(others)})" if others else "")


class SamplesTab(PanelState):
    def _build_samples_tab(self) -> None:
        self._samples_plot = new_plot(left=SIAxis("left"), bottom=IndexAxis("bottom"))
        item = self._samples_plot.getPlotItem()
        item.setLabel("bottom", "sample index")
        item.setLabel("left", "time", units="s")
        item.setDownsampling(auto=True, mode="peak")  # the context menu shows what the curves do
        item.setClipToView(True)
        self._samples_legend = outside_legend(item)
        self._samples_curves: dict[str, pg.PlotDataItem] = {}
        self._samples_in_legend: list[str] = []  # legend order, which also picks the colours
        self._samples_cursor = pg.InfiniteLine(angle=90, movable=False)
        self._samples_cursor.setVisible(False)
        item.addItem(self._samples_cursor, ignoreBounds=True)

        self._samples_header = QtWidgets.QLabel()
        self._samples_header.setWordWrap(True)  # a long header must not widen the window
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
        self.tabs.addTab(self._samples_page, PlotTab.SAMPLES.label)
        self._samples_proxy = hover_proxy(self._samples_plot, self._on_samples_hover)

    def _index_view(self, n: int) -> FloatArray:
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
            curve = pg.PlotDataItem(
                pen=pg.mkPen(series_colour(len(self._samples_in_legend)), width=1),
                skipFiniteCheck=True,
                autoDownsampleFactor=1.0,
            )
            # After addItem: PlotItem.addItem imposes the plot's own (context menu) settings.
            self._samples_plot.getPlotItem().addItem(curve)
            curve.setDownsampling(auto=True, method="peak")
            curve.setClipToView(True)
            self._samples_curves[metric] = curve
        return curve

    def _set_curve(self, metric: str, x: FloatArray | None, y: FloatArray | None = None) -> None:
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
            colour = series_colour(k)
            if curve.opts["pen"].color() != colour:
                curve.setPen(pg.mkPen(colour, width=1))
        self._samples_legend.update()

    def _update_samples_header(self) -> None:
        result = self._selected
        if result is not None:
            counted = samples_per_metric({metric: arr.size for metric, arr in self._selected_arrays.items()})
            state = counted or f"{result.status}, no samples"
            text = (
                f"<b>Job #{result.index + 1}: {result.named}</b> · {fmt_bytes(result.message_size)} · "
                f"{state} (finished)"
            )
        elif self._live_job is not None:
            counted = samples_per_metric({metric: buf.n for metric, buf in self._live.items()}) or "0 samples"
            text = f"{self._stream_title()} {escape(self._live_label)} · {counted}"
        else:
            text = label_style("No job running. Select a finished job to see its samples.", muted=True)
        self._samples_header.setText(text)

    def _samples_caption(self) -> PlotCaption:
        """The exported plot's title: the metrics and their unit (the header names the job)."""
        names = [name for name in self._samples_in_legend if name in self._samples_source()]
        return PlotCaption(f"Samples of {metric_list(names)}: time per operation (s), in the order taken")

    def _samples_source(self) -> dict[str, FloatArray]:
        if self._selected is not None:
            return self._selected_arrays
        return {m: buf.column() for m, buf in self._live.items() if buf.n}

    def _on_samples_hover(self, event: HoverEvent) -> None:
        point = view_point(self._samples_plot, event)
        source = self._samples_source()
        if point is None or not source:
            self._samples_cursor.setVisible(False)
            return
        i = round(point.x())
        parts = []
        for metric, arr in source.items():
            curve = self._samples_curves.get(metric)
            if curve is not None and curve.isVisible() and 0 <= i < arr.size:
                parts.append(f"{metric} {fmt_time(arr[i])}")
        if not parts:
            self._samples_cursor.setVisible(False)
            self._samples_readout.clear()
            return
        self._samples_cursor.setPos(i)
        self._samples_cursor.setVisible(True)
        self._samples_readout.setText(f"sample #{i}: " + " · ".join(parts))

"""The Histogram tab: the selected job's samples of one metric.

A mixin of `PlotsPanel`: its state lives on the panel."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtWidgets

from app.gui.plots.axes import HoverEvent, hover_proxy, new_plot, view_point
from app.gui.plots.caption import PlotCaption
from app.gui.plots.common import FloatArray, fmt_bytes, fmt_time, label_style
from app.gui.plots.state import PanelState
from app.gui.vocab import PlotTab


class HistogramTab(PanelState):
    def _build_histogram_tab(self) -> None:
        self._hist_plot = new_plot()
        item = self._hist_plot.getPlotItem()
        item.setLabel("bottom", "time", units="s")
        item.setLabel("left", "samples")
        self._hist_curve = pg.PlotDataItem(stepMode="center", fillLevel=0, fillOutline=True)
        item.addItem(self._hist_curve)
        self._hist_median = pg.InfiniteLine(
            angle=90, movable=False, label="median", labelOpts={"position": 0.93, "movable": False}
        )
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
        self.tabs.addTab(self._page(top, self._hist_plot, self._hist_readout), PlotTab.HISTOGRAM.label)
        self._hist_proxy = hover_proxy(self._hist_plot, self._on_hist_hover)

    def _clear_histogram(self) -> None:
        self._hist_combo.blockSignals(True)
        self._hist_combo.clear()
        self._hist_combo.blockSignals(False)
        self._hist_edges = np.empty(0)
        self._hist_counts = np.empty(0)
        self._hist_curve.setData(np.empty(0), np.empty(0))
        self._hist_median.setVisible(False)
        self._hist_readout.clear()
        self._hist_header.setText(label_style("Select a finished job to see its histogram.", muted=True))

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
                self._hist_header.setText(f"<b>#{result.index + 1} {result.named}</b>: no samples")
            return
        counts, edges, folded, upper = _histogram(arr)
        self._hist_counts, self._hist_edges = counts, edges
        self._hist_curve.setData(edges, counts)
        stats = result.metrics[metric].stats
        median = float(stats.median) if stats.n else float(np.median(arr))
        self._hist_median.setVisible(True)
        self._hist_median.setPos(median)
        self._hist_median.label.setFormat(f"median {fmt_time(median)}")
        text = (
            f"<b>#{result.index + 1} {result.named}</b> · {fmt_bytes(result.message_size)} · "
            f"n = {arr.size:,} · {len(counts)} bins"
        )
        if folded:
            text += f" · {folded:,} samples above {fmt_time(upper)} counted in the last bin"
        self._hist_header.setText(text)
        self._hist_plot.getPlotItem().enableAutoRange()

    def _histogram_caption(self) -> PlotCaption:
        """The exported plot's title: the metric and its unit (the header names the job)."""
        metric = self._hist_combo.currentText()
        return PlotCaption(f"Histogram of {metric or 'no metric'}: samples per bin of time per operation (s)")

    def _on_hist_hover(self, event: HoverEvent) -> None:
        point = view_point(self._hist_plot, event)
        if point is None or self._hist_counts.size == 0:
            return
        k = int(np.searchsorted(self._hist_edges, point.x(), side="right")) - 1
        if 0 <= k < self._hist_counts.size:
            lo, hi = self._hist_edges[k], self._hist_edges[k + 1]
            self._hist_readout.setText(f"{fmt_time(lo)} – {fmt_time(hi)}: {int(self._hist_counts[k]):,} samples")
        else:
            self._hist_readout.clear()


def _histogram(arr: FloatArray) -> tuple[FloatArray, FloatArray, int, float]:
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

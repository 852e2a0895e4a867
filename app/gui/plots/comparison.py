"""The Comparison tab: one bar per job, the median of one metric with its 95 % CI.

A mixin of `PlotsPanel`: its state lives on the panel."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtWidgets

from app.gui.plots.axes import _CategoryAxis, _hover_proxy, _new_plot, _SIAxis, _view_point
from app.gui.plots.common import _elide, _fmt_bytes, _fmt_time, _style


class ComparisonTab:
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

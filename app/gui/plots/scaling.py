"""The Scaling tab: median time against message size, one curve per job group.

A mixin of `PlotsPanel`: its state lives on the panel."""

from __future__ import annotations

import json

import numpy as np
import pyqtgraph as pg
from PySide6 import QtWidgets

from app.core.results.model import JobResult
from app.core.settings.links import link_text
from app.gui.plots.axes import (
    BytesAxis,
    HoverEvent,
    SIAxis,
    binary_size,
    hover_proxy,
    new_plot,
    outside_legend,
    view_point,
)
from app.gui.plots.caption import PlotCaption, left_out
from app.gui.plots.common import fmt_time, label_style, series_colour, short_distinct
from app.gui.plots.state import PanelState
from app.gui.vocab import PlotTab
from app.gui.words import plural

#: Legend entries are shortened to this many characters (the hover read-out names the
#: whole job): a legend wider than that would squeeze the plot beside it.
LEGEND_CHARS = 26


class ScalingTab(PanelState):
    def _build_scaling_tab(self) -> None:
        self._scl_plot = new_plot(left=SIAxis("left"), bottom=BytesAxis("bottom"))
        item = self._scl_plot.getPlotItem()
        item.setLabel("bottom", "message size (log scale, binary units)")
        item.setLabel("left", "median time", units="s")
        item.setLogMode(x=True, y=True)
        self._scl_legend = outside_legend(item)
        self._scl_curves: list[pg.PlotDataItem] = []

        self._scl_combo = QtWidgets.QComboBox()
        self._scl_combo.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToContents)
        self._scl_combo.currentTextChanged.connect(lambda _text: self._draw_scaling())
        self._scl_header = QtWidgets.QLabel()
        self._scl_header.setWordWrap(True)  # a long header must not widen the window
        top = QtWidgets.QHBoxLayout()
        top.addWidget(QtWidgets.QLabel("Metric:"))
        top.addWidget(self._scl_combo)
        top.addWidget(self._scl_header, 1)
        self._scl_readout = self._readout()
        self.tabs.addTab(self._page(top, self._scl_plot, self._scl_readout), PlotTab.SCALING.label)
        self._scl_proxy = hover_proxy(self._scl_plot, self._on_scl_hover)

    def _draw_scaling(self) -> None:
        metric = self._scl_combo.currentText()
        plot = self._scl_plot.getPlotItem()
        for curve in self._scl_curves:
            plot.removeItem(curve)
        self._scl_curves = []
        self._scl_legend.clear()
        self._scl_readout.clear()
        groups: dict[tuple[str, str, str, str, str, str], list[JobResult]] = {}
        skipped = 0
        for result in self._results:
            m = result.metrics.get(metric)
            if m is None or m.stats.n == 0:
                continue
            if result.message_size <= 0 or m.stats.median <= 0:
                skipped += 1  # nowhere to put it on log axes
                continue
            # A sweep's jobs differ only in their link: one curve per link.
            key = (
                result.scheme,
                result.backend,
                json.dumps(result.params, sort_keys=True, default=str),
                result.mode,
                link_text(result.link) if result.link is not None else "",
                str(result.exchange_used or ""),  # a session and a per-message job: two curves
            )
            groups.setdefault(key, []).append(result)
        labels = [members[0].named for members in groups.values()]
        several_modes = len({key[3] for key in groups}) > 1
        self._scaling_groups = []
        entries: list[tuple[pg.PlotDataItem, str]] = []
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
            colour = series_colour(k)
            curve = pg.PlotDataItem(
                xs,
                ys,
                pen=pg.mkPen(colour, width=2),
                symbol="o",
                symbolSize=8,
                symbolBrush=pg.mkBrush(colour),
                symbolPen=pg.mkPen(colour),
            )
            curve.setLogMode(True, True)
            plot.addItem(curve)
            entries.append((curve, name))
            self._scl_curves.append(curve)
            self._scaling_groups.append((name, xs, ys, ordered))
        # Shortened, the backend and mode at the end stay whole and no two entries read alike.
        for (curve, _name), shown in zip(entries, short_distinct([name for _, name in entries], LEGEND_CHARS)):
            self._scl_legend.addItem(curve, shown)
        if not self._scaling_groups:
            self._scl_header.setText(
                label_style(
                    "Finished jobs appear here." if not self._results else f"No job has {metric!r}.", muted=True
                )
            )
        else:
            text = f"{plural(len(self._scaling_groups), 'curve')} · median {metric} against message size"
            if skipped:
                text += f" · {plural(skipped, 'job')} with size or median 0 not shown"
            self._scl_header.setText(text)
        plot.enableAutoRange()

    def _scaling_caption(self) -> PlotCaption:
        """The exported plot's title: the metric and its unit, and each job left out."""
        metric = self._scl_combo.currentText()
        title = (
            f"Median {metric} time per operation (s) against message size, one curve per scheme and settings"
            if metric
            else "Median times against message size: no metric"
        )
        jobs = left_out(self._all_results, metric, log_values=True, log_sizes=True)
        return PlotCaption(title, ("Both axes on a log scale",), left_out=tuple(jobs))

    def _on_scl_hover(self, event: HoverEvent) -> None:
        point = view_point(self._scl_plot, event)
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
        self._scl_readout.setText(
            f"{name} · {binary_size(result.message_size)} ({result.message_size:,} bytes): median {fmt_time(median)}"
        )

"""The Resources tab: CPU and resident memory of a job's processes over time.

A mixin of `PlotsPanel`: its state lives on the panel."""

from __future__ import annotations


import numpy as np
import pyqtgraph as pg
from PySide6 import QtGui, QtWidgets

from app.gui.plots.axes import _grid_axes
from app.gui.plots.common import _COLOURS, _ROLE_COLOURS, _style


class ResourcesTab:
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

"""The Resources tab: CPU and resident memory of a job's processes over time.

A mixin of `PlotsPanel`: its state lives on the panel."""

from __future__ import annotations

from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6 import QtGui, QtWidgets

from app.core.results.model import JobResult
from app.gui.plots.axes import grid_axes, grid_behind, outside_legend
from app.gui.plots.caption import PlotCaption
from app.gui.plots.common import COLOURS, ROLE_COLOURS, SampleBuffer, fmt_bytes, label_style
from app.gui.plots.state import PanelState
from app.gui.vocab import PlotTab

#: The resource sampler's interval (app.core.measure.timing.ResourceSampler): a job shorter
#: than this has no CPU sample at all.
SAMPLE_INTERVAL_MS = 100


class ResourcesTab(PanelState):
    def _build_resources_tab(self) -> None:
        self._res_view = pg.GraphicsLayoutWidget()
        self._cpu_plot = self._res_view.addPlot(row=0, col=0, axisItems=grid_axes())
        self._rss_plot = self._res_view.addPlot(row=1, col=0, axisItems=grid_axes())
        for plot in (self._cpu_plot, self._rss_plot):
            plot.showGrid(x=True, y=True, alpha=0.25)
            grid_behind(plot)
            plot.setLabel("bottom", "time since job start", units="s")
        self._cpu_plot.setLabel("left", "CPU", units="%")
        self._rss_plot.setLabel("left", "RSS", units="MiB")
        for plot in (self._cpu_plot, self._rss_plot):
            plot.getAxis("left").enableAutoSIPrefix(False)
            plot.getAxis("left").setWidth(60)
        self._rss_plot.setXLink(self._cpu_plot)
        self._cpu_legend = outside_legend(self._cpu_plot)
        self._rss_legend = outside_legend(self._rss_plot)
        self._res_curves: dict[str, tuple[pg.PlotDataItem, pg.PlotDataItem]] = {}
        self._res_in_legend: set[str] = set()
        self._res_header = QtWidgets.QLabel()
        self._res_header.setWordWrap(True)  # a long header must not widen the window
        self._res_page = self._page(self._res_header, self._res_view)
        self.tabs.addTab(self._res_page, PlotTab.RESOURCES.label)

    def _resource_curves(self, role: str) -> tuple[pg.PlotDataItem, pg.PlotDataItem]:
        pair = self._res_curves.get(role)
        if pair is None:
            colour = ROLE_COLOURS.get(role) or COLOURS[(3 + len(self._res_curves)) % len(COLOURS)]
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

    def _shown_resources(self) -> tuple[int | None, dict[str, SampleBuffer] | None]:
        """The job whose resources the tab shows (the selected one, else the live one)
        and its series (None when this window did not record that job)."""
        if self._selected is not None:
            return self._selected.index, self._res_by_job.get(self._selected.index)
        return self._live_job, self._res if self._live_job is not None else None

    def _show_resources(self) -> None:
        """Redraw the tab for the job it follows."""
        self._clear_resource_curves()
        _, series = self._shown_resources()
        for role, buf in (series or {}).items():
            if buf.n == 0:
                continue
            cpu, rss = self._resource_curves(role)
            cpu.setData(buf.column(0), buf.column(1))
            rss.setData(buf.column(0), buf.column(2))
            self._cpu_legend.addItem(cpu, role)
            self._rss_legend.addItem(rss, role)
            self._res_in_legend.add(role)
        self._res_dirty.clear()
        self._update_resources_header()

    def _resources_caption(self) -> PlotCaption:
        """The exported plot's title: what and in which units (the header names the job)."""
        return PlotCaption(
            "CPU (% of one core) and resident memory (MiB) of a job's processes, against time since it started (s)"
        )

    def _update_resources_header(self) -> None:
        index, series = self._shown_resources()
        sampled = any(buf.n for buf in (series or {}).values())
        # Empty axes say nothing: without a sample the plots make way for the reason.
        self._res_view.setVisible(sampled or (self._selected is None and index is not None))
        if index is None:
            self._res_header.setText(
                label_style(
                    "CPU and memory of the running job's processes appear here; select a finished job to see its own.",
                    muted=True,
                )
            )
            return
        result = self._selected
        if result is None:
            name = f"{self._stream_title()} {escape(self._live_label)}"
            if not sampled:
                self._res_header.setText(
                    f"{name} · waiting for the first CPU sample (one every {SAMPLE_INTERVAL_MS} ms)"
                )
                return
        else:
            name = f"<b>Job #{index + 1}</b> {escape(result.label)} · {fmt_bytes(result.message_size)}"
            if series is None:
                self._res_header.setText(
                    f"{name}: CPU and memory over time are kept only for runs made in "
                    f"this window.<br>{escape(_cpu_summary(result))}"
                )
                return
            if not sampled:
                self._res_header.setText(
                    f"{name}: no CPU sample: job shorter than {SAMPLE_INTERVAL_MS} ms "
                    f"(one sample every {SAMPLE_INTERVAL_MS} ms).<br>"
                    f"{escape(_cpu_summary(result))}"
                )
                return
        self._res_header.setText(f"{name} · CPU in % of one core, resident memory in MiB")


def _cpu_summary(result: JobResult) -> str:
    """The job's stored CPU and memory summary in one line."""
    parts = [
        f"{role} CPU mean {usage.mean_percent:.0f} %"
        for role, usage in result.cpu.processes.items()
        if usage is not None and usage.mean_percent is not None
    ]
    parts += [
        f"{role} peak RSS {value / (1 << 20):.1f} MiB"
        for role, value in result.memory.rss_peak_bytes.items()
        if value is not None
    ]
    return "Summary: " + ", ".join(parts) if parts else "No CPU or memory summary was recorded."

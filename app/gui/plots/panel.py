"""The plots panel: live sample stream, histogram, comparison, scaling, resources and load.

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

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from app.core.results.model import JobResult, RunResult
from app.gui.plots.axes import GridAxis
from app.gui.plots.caption import PlotCaption
from app.gui.plots.common import COLOURS, MIB, SampleBuffer, default_metric, metric_names, usable
from app.gui.plots.comparison import ComparisonTab
from app.gui.plots.export import save_png, save_svg
from app.gui.plots.histogram import HistogramTab
from app.gui.plots.load import LoadTab
from app.gui.plots.plot_data import (
    PlotTable,
    comparison_table,
    histogram_table,
    load_table,
    resources_table,
    samples_table,
    save_csv,
    scaling_table,
)
from app.gui.plots.resources import ResourcesTab
from app.gui.plots.samples import SamplesTab
from app.gui.plots.scaling import ScalingTab
from app.gui.plots.state import LIVE_BUTTON


class PlotsPanel(SamplesTab, HistogramTab, ComparisonTab, ScalingTab, LoadTab, ResourcesTab, QtWidgets.QWidget):
    """Tabs of pyqtgraph plots for live samples and finished results."""

    def __init__(self, parent: QtWidgets.QWidget | None = None) -> None:
        super().__init__(parent)
        self._ready = False
        # The state the tabs share: its types and meaning are in state.PanelState.
        self._live_job = None
        self._live_label = ""
        self._ended = None
        self._live = {}
        self._live_dirty = set()
        self._index = np.arange(1024, dtype=np.float64)
        self._res = {}
        self._res_by_job = {}
        self._res_dirty = set()
        self._selected = None
        self._selected_arrays = {}
        self._results = []
        self._all_results = []
        self._run = None
        self._comparison_rows = []
        self._scaling_groups = []
        self._hist_edges = np.empty(0)
        self._hist_counts = np.empty(0)
        self._load_results = []
        self._load_curves = []

        self.tabs = QtWidgets.QTabWidget(self)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

        self._build_samples_tab()
        self._build_histogram_tab()
        self._build_comparison_tab()
        self._build_scaling_tab()
        self._build_resources_tab()
        self._build_load_tab()  # PlotTab's order
        self.tabs.currentChanged.connect(self._on_tab_changed)
        # Right-click on any plot: save it. pyqtgraph's own "Export..." is replaced: its
        # files carry no caption, and its SVG exporter fails on Qt 6.11's path data.
        for view in (
            self._samples_plot,
            self._hist_plot,
            self._cmp_plot,
            self._scl_plot,
            self._load_plot,
            self._res_view,
        ):
            action = QtGui.QAction("Save plot as PNG, SVG or CSV…", view.scene())
            action.triggered.connect(self.save_plot_dialog)
            view.scene().contextMenu[:] = [action]

        self._ready = True
        self.apply_palette()
        self._update_samples_header()
        self._update_resources_header()
        self._clear_histogram()
        self._draw_comparison()
        self._draw_scaling()

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

        for view in (
            self._samples_plot,
            self._hist_plot,
            self._cmp_plot,
            self._scl_plot,
            self._load_plot,
            self._res_view,
        ):
            view.setBackground(bg)
        for plot in self._plot_items():
            for name in ("left", "bottom", "right", "top"):
                axis = plot.getAxis(name)
                if isinstance(axis, GridAxis):
                    axis.set_background(bg)
                axis.setPen(fg)
                axis.setTextPen(fg)
        for legend in (self._samples_legend, self._scl_legend, self._load_legend, self._cpu_legend, self._rss_legend):
            legend.setLabelTextColor(fg)
            legend.setBrush(legend_bg)
            legend.setPen(legend_pen)

        self._samples_cursor.setPen(pg.mkPen(muted, style=QtCore.Qt.PenStyle.DashLine))
        self._hist_median.setPen(pg.mkPen(fg, width=2, style=QtCore.Qt.PenStyle.DashLine))
        self._hist_median.label.setColor(fg)
        accent = QtGui.QColor(*COLOURS[0])
        fill = QtGui.QColor(accent)
        fill.setAlpha(120)
        self._hist_curve.setPen(pg.mkPen(accent, width=1))
        self._hist_curve.setBrush(pg.mkBrush(fill))
        self._cmp_bars.setOpts(pen=pg.mkPen(accent), brush=pg.mkBrush(fill))
        self._cmp_whiskers.setData(pen=pg.mkPen(fg, width=1.5))
        self._cmp_divider.setPen(pg.mkPen(muted, style=QtCore.Qt.PenStyle.DashLine))
        for label in self._cmp_texts:
            label.setColor(fg)
        self._draw_load()  # hollow points are filled with the background

    def _plot_items(self) -> list[pg.PlotItem]:
        return [
            self._samples_plot.getPlotItem(),
            self._hist_plot.getPlotItem(),
            self._cmp_plot.getPlotItem(),
            self._scl_plot.getPlotItem(),
            self._load_plot.getPlotItem(),
            self._cpu_plot,
            self._rss_plot,
        ]

    def changeEvent(self, event: QtCore.QEvent) -> None:
        super().changeEvent(event)
        if self._ready and event.type() == QtCore.QEvent.Type.PaletteChange:
            self.apply_palette()

    def reset(self) -> None:
        """Clear everything for a new run (items are kept, their data is dropped)."""
        self._live_job = None
        self._live_label = ""
        self._set_ended(None)
        for buf in self._live.values():
            buf.clear()
        self._live_dirty.clear()
        self._res = {}
        self._res_by_job = {}
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
        self._set_ended(None)
        for buf in self._live.values():
            buf.clear()
        self._live_dirty.clear()
        # Each job keeps its own series: selecting a finished job shows its resources.
        self._res = self._res_by_job[job_index] = {}
        self._res_dirty.clear()
        if self._selected is None:
            for metric in list(self._samples_curves):
                self._set_curve(metric, None)
            self._samples_readout.clear()
            self._show_resources()
        self._update_samples_header()

    def end_run(self, status: str) -> None:
        """The run ended (a RunStatus): its last job's plots stay, titled as what they now are."""
        self._set_ended(status)
        self._update_samples_header()
        self._update_resources_header()

    def _set_ended(self, status: str | None) -> None:
        self._ended = status
        self._live_button.setText(LIVE_BUTTON[status is not None])
        self._live_button.setToolTip(
            "Show the running job's samples instead of the selected result"
            if status is None
            else "Show the samples of the job that ran last instead of the selected result"
        )

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
            buf = self._live[metric] = SampleBuffer(1)
        buf.extend(arr)
        self._live_dirty.add(metric)

    def add_resource(self, job_index: int, role: str, t: float, cpu_percent: float, rss_bytes: int) -> None:
        """Buffer one CPU / RSS reading of a job's process. Other jobs are ignored."""
        if self._live_job is None:
            self._live_job = job_index
            self._res = self._res_by_job.setdefault(job_index, self._res)
        if job_index != self._live_job:
            return
        buf = self._res.get(role)
        if buf is None:
            buf = self._res[role] = SampleBuffer(3, capacity=256)
        buf.append_row(float(t), float(cpu_percent), float(rss_bytes) / MIB)
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
        if self._res_dirty and current is self._res_page and self._selected is None:
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
            self._update_resources_header()

    def show_results(self, results: Sequence[JobResult]) -> None:
        """(Re)draw the Comparison, Scaling and Load tabs from finished results."""
        self._all_results = list(results)
        self._results = usable(results)
        names = metric_names(self._results)
        default = default_metric(self._results)
        for combo in (self._cmp_combo, self._scl_combo):
            counts = {name: sum(name in r.metrics for r in self._results) for name in names}
            self._fill_combo(combo, names, default, counts, len(self._results))
        # Medians 100x apart leave the short bars at zero on a linear axis: start on log.
        medians = [
            m.stats.median
            for r in self._results
            for m in r.metrics.values()
            if m.stats.n and m.stats.median > 0 and m is r.metrics.get(self._cmp_combo.currentText())
        ]
        self._cmp_log.blockSignals(True)
        self._cmp_log.setChecked(bool(medians) and max(medians) > 100 * min(medians))
        self._cmp_log.blockSignals(False)
        self._draw_comparison()
        self._draw_scaling()
        self._set_load_results(list(results))

    def set_run(self, run: RunResult | None) -> None:
        """The run the plots show (the running one, or one opened from History): an
        exported plot names it and the machine it measured on."""
        self._run = run

    def plot_caption(self) -> PlotCaption:
        """What the visible tab's plot shows, the run, the machine and the jobs it left out."""
        current = self.tabs.currentWidget()
        # A tab of one job takes its header line (it names the job, and what was folded or
        # skipped); the Comparison and Scaling tabs name what they left out themselves.
        header: QtWidgets.QLabel | None = None
        if current is self._res_page:
            caption, header = self._resources_caption(), self._res_header
        elif current is self._samples_page:
            caption, header = self._samples_caption(), self._samples_header
        elif current.isAncestorOf(self._hist_plot):
            caption, header = self._histogram_caption(), self._hist_header
        elif current.isAncestorOf(self._cmp_plot):
            caption = self._comparison_caption()
        elif current.isAncestorOf(self._scl_plot):
            caption = self._scaling_caption()
        else:
            caption, header = self._load_caption(), self._load_header
        shown = _plain(header.text()) if header is not None else ""
        if shown:
            caption = replace(caption, details=(*caption.details, shown))
        return caption.with_context(self._run)

    def plot_table(self) -> PlotTable:
        """The numbers the visible tab draws (what a CSV of the plot holds)."""
        current = self.tabs.currentWidget()
        if current is self._res_page:
            return resources_table(self._shown_resources()[1])
        if current is self._samples_page:
            return samples_table(self._samples_source())
        if current.isAncestorOf(self._hist_plot):
            return histogram_table(self._hist_combo.currentText(), self._hist_edges, self._hist_counts)
        if current.isAncestorOf(self._cmp_plot):
            return comparison_table(self._cmp_combo.currentText(), self._comparison_rows)
        if current.isAncestorOf(self._scl_plot):
            return scaling_table(self._scl_combo.currentText(), self._scaling_groups)
        return load_table(self._load_curves, self.load_generators_shown())

    def select_result(self, result: JobResult | None) -> None:
        """Show a finished job's raw samples and histogram; None goes back to live."""
        self._selected = result
        self._samples_cursor.setVisible(False)
        self._samples_readout.clear()
        self._show_resources()
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
        self._selected_arrays = {
            name: arr[np.isfinite(arr)] for name, arr in arrays.items() if arr.size and np.isfinite(arr).any()
        }
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

    def current_plot_item(self) -> Any:
        """The graphics item of the visible tab (for the Resources tab, both plots)."""
        current = self.tabs.currentWidget()
        if current is self._res_page:
            return self._res_view.ci
        for widget in (self._samples_plot, self._hist_plot, self._cmp_plot, self._scl_plot, self._load_plot):
            if current.isAncestorOf(widget):
                return widget.getPlotItem()
        return None

    def save_plot_dialog(self) -> None:
        tab = self.tabs.tabText(self.tabs.currentIndex()).lower()
        path, _ = QtWidgets.QFileDialog.getSaveFileName(
            self,
            "Save the plot",
            f"{tab}.png",
            "PNG image (*.png);;SVG drawing (*.svg);;CSV of the plot's numbers (*.csv)",
        )
        if not path:
            return
        try:
            self.export_plot(path)
        except (OSError, ValueError) as exc:
            QtWidgets.QMessageBox.warning(self, "Cannot save the plot", str(exc))

    def export_plot(self, path: str | Path) -> None:
        """Save the visible tab's plot as PNG (at twice the screen size, for print) or SVG
        with its caption above it (`plot_caption`), or its numbers as CSV under the same
        caption, by the file's suffix; OSError or ValueError naming the file when it cannot."""
        path = Path(path)
        item = self.current_plot_item()
        suffix = path.suffix.lower()
        if item is None or suffix not in (".png", ".svg", ".csv"):
            raise ValueError(f"{path}: a plot is saved as .png, .svg or .csv")
        self.refresh()
        caption = self.plot_caption()
        if suffix == ".csv":
            save_csv(caption, self.plot_table(), path)
            return
        colours = (QtGui.QColor(self._bg), QtGui.QColor(self._fg))
        if suffix == ".svg":
            save_svg(item, caption, path, self.font(), colours)
        else:
            save_png(item, caption, path, self.font(), colours)
        if not path.is_file() or path.stat().st_size == 0:
            raise OSError(f"{path}: the plot could not be written")

    def _on_tab_changed(self, _index: int) -> None:
        self.refresh()


def _plain(text: str) -> str:
    """A header label's text without its markup (bold, italics, escapes)."""
    if QtGui.Qt.mightBeRichText(text):  # Qt (the namespace) of QtGui holds the rich-text helpers
        return QtGui.QTextDocumentFragment.fromHtml(text).toPlainText().strip()
    return text.strip()

"""History as a trend: one job's median, with its 95 % interval, across every stored run.

`TrendDialog` offers the jobs of one run (History's "Trend…" on a selected run); for the
job picked it reads the job's history from the store (`trend.job_history`: every run
with a job `compare.match_key` calls the same) and draws one point per run in the order
the runs started, coloured by machine, with error bars for the interval. A dashed
vertical line marks where the machine or a relevant library version (`trend.
relevant_versions`) changed between two points, labelled with what changed. The table
under the plot lists the same points with their conditions. With fewer than two points
there is no trend to draw, and the dialog says so instead of showing an empty plot.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QSplitter,
    QStackedWidget,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.analysis.compare import MatchKey, match_key
from app.core.analysis.trend import TrendPoint, job_history, trend_metrics, trend_points
from app.core.escaping import escape_control
from app.core.results.model import JobResult
from app.core.settings.links import over_link
from app.core.store.store import Store, StoredJob, StoreError
from app.core.store.target import StoreLike, store_target
from app.gui.history.compare_dialog import local_time
from app.gui.plots.axes import CategoryAxis, GridAxis, SIAxis, new_plot, outside_legend
from app.gui.plots.common import default_metric, fmt_time, series_colour
from app.gui.words import plural
from app.report.units import format_bytes

__all__ = ["TrendDialog", "job_title"]

#: Room above the highest interval for the change labels, as a share of the plotted range.
LABEL_HEADROOM = 0.22
#: The points table's columns, in order.
TREND_HEADERS = (
    "Started",
    "Run",
    "Machine",
    "Versions",
    "Median",
    "95 % CI",
    "n",
    "Changed since the previous run",
)
#: The Run column of a full run of its profile; a reduced or overridden one names its marks.
FULL_RUN = "full"


def job_title(job: JobResult) -> str:
    """A job as the trend names it: label, message size, mode, and its link if any."""
    # The link said once: a sweep's label already ends "over LTE".
    parts = [escape_control(over_link(job.label, job.link)), format_bytes(job.message_size), job.mode]
    return " · ".join(parts)


def _value(value: float, unit: str) -> str:
    """Four significant digits: two close medians and an interval's ends stay apart."""
    return fmt_time(value) if unit == "s" else f"{value:.4g} {unit}"


class TrendDialog(QDialog):
    """The trend of one job of `jobs` (a run's jobs) over the store at `store_path`.
    Non-blocking: use show() or open()."""

    def __init__(
        self, store_path: StoreLike, jobs: Sequence[JobResult], parent: QWidget | None = None, current: int = 0
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Trend across runs")
        self.resize(1000, 660)
        self.store_path = store_target(store_path)
        self.history: list[StoredJob] = []
        self.points: list[TrendPoint] = []
        self.message: str | None = None  # what the dialog says instead of a plot, if anything
        self._keys: list[MatchKey] = []
        self._jobs: list[JobResult] = []
        for job in jobs:  # a job repeated in the run is one trend
            key = match_key(job)
            if key not in self._keys:
                self._keys.append(key)
                self._jobs.append(job)

        self.job_combo = QComboBox(self)
        self.job_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.job_combo.setMinimumContentsLength(40)
        for job in self._jobs:
            self.job_combo.addItem(job_title(job))
        self.metric_combo = QComboBox(self)
        self.metric_combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        top = QHBoxLayout()
        top.addWidget(QLabel("Job:", self))
        top.addWidget(self.job_combo, 1)
        top.addWidget(QLabel("Metric:", self))
        top.addWidget(self.metric_combo)

        self.header = QLabel(self)
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.PlainText)  # labels and host names are stored text

        self.axis = CategoryAxis("bottom")
        self.plot = new_plot(left=SIAxis("left"), bottom=self.axis)
        item = self.plot.getPlotItem()
        item.setLabel("bottom", "run (in the order the runs started)")
        self.legend = outside_legend(item)
        self.line = pg.PlotDataItem([], [])
        self.error_bars = pg.ErrorBarItem(beam=0.2)
        item.addItem(self.line)
        item.addItem(self.error_bars)
        self.machine_curves: dict[str, pg.ScatterPlotItem] = {}
        self.change_lines: list[pg.InfiniteLine] = []

        self.table = QTreeWidget(self)
        self.table.setColumnCount(len(TREND_HEADERS))
        self.table.setHeaderLabels(list(TREND_HEADERS))
        self.table.setRootIsDecorated(False)
        self.table.setUniformRowHeights(True)
        self.table.setAlternatingRowColors(True)
        self.table.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.header().setStretchLastSection(True)

        splitter = QSplitter(Qt.Orientation.Vertical, self)
        splitter.addWidget(self.plot)
        splitter.addWidget(self.table)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([420, 170])  # the table shows about six runs before it scrolls
        self.message_label = QLabel(self)
        self.message_label.setWordWrap(True)
        self.message_label.setTextFormat(Qt.TextFormat.PlainText)
        self.message_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.message_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.pages = QStackedWidget(self)
        self.pages.addWidget(splitter)
        self.pages.addWidget(self.message_label)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.header)
        layout.addWidget(self.pages, 1)
        layout.addWidget(buttons)

        self._apply_palette()
        self.job_combo.currentIndexChanged.connect(lambda _index: self._load())
        self.metric_combo.currentTextChanged.connect(lambda _text: self._draw())
        if self._jobs:
            self.job_combo.setCurrentIndex(min(max(current, 0), len(self._jobs) - 1))
            self._load()
        else:
            self._say("This run has no jobs, so there is no job to follow across runs.")

    # --- API ---

    def job(self) -> JobResult | None:
        index = self.job_combo.currentIndex()
        return self._jobs[index] if 0 <= index < len(self._jobs) else None

    def select_job(self, index: int) -> None:
        self.job_combo.setCurrentIndex(index)

    # --- internals ---

    def _load(self) -> None:
        """Read the chosen job's history (the store opened and closed again) and draw it."""
        index = self.job_combo.currentIndex()
        if not 0 <= index < len(self._keys):
            return
        try:
            with Store(self.store_path) as store:
                self.history = job_history(store, self._keys[index])
        except StoreError as exc:
            self.history = []
            self._fill_metrics([])
            self._say(f"Cannot read the run history: {exc}")
            return
        self._fill_metrics(trend_metrics(self.history))
        self._draw()

    def _fill_metrics(self, names: list[str]) -> None:
        wanted = default_metric([row for row in self.history if row.metrics]) if names else None
        self.metric_combo.blockSignals(True)
        self.metric_combo.clear()
        self.metric_combo.addItems(names)
        if wanted in names:
            self.metric_combo.setCurrentText(wanted)
        self.metric_combo.blockSignals(False)

    def _clear_plot(self) -> None:
        item = self.plot.getPlotItem()
        for curve in self.machine_curves.values():
            item.removeItem(curve)
        for line in self.change_lines:
            item.removeItem(line)
        self.machine_curves = {}
        self.change_lines = []
        self.legend.clear()
        self.line.setData([], [])
        self.error_bars.setData(x=np.zeros(0), y=np.zeros(0), top=np.zeros(0), bottom=np.zeros(0))
        self.table.clear()

    def _say(self, text: str) -> None:
        self._clear_plot()
        self.points = []
        self.message = text
        self.header.clear()
        self.message_label.setText(text)
        self.pages.setCurrentWidget(self.message_label)

    def _draw(self) -> None:
        job = self.job()
        metric = self.metric_combo.currentText()
        if job is None:
            return
        title = job_title(job)
        runs = len({row.run_id for row in self.history})
        if not metric:
            self._say(
                f"No stored run has a finished result of {title}."
                + (f" It is in {plural(runs, 'run')}, failed or without figures each time." if runs else "")
            )
            return
        points = trend_points(self.history, metric)
        if len(points) < 2:
            only = points[0]
            self._say(
                f"Only one stored run has {title} with {metric}: {local_time(only.started)} on "
                f"{escape_control(only.machine)}, median {_value(only.median, only.unit)}. A trend needs two runs or more: "
                "run the same job again, or import a results file from another run (History, Import "
                "results…)."
            )
            return
        self._clear_plot()
        self.points = points
        self.message = None
        self.pages.setCurrentIndex(0)
        self._plot(points, metric)
        self._fill_table(points)
        machines = len({point.machine for point in points})
        changes = sum(1 for point in points if point.changed_from_previous)
        dropped = len(self.history) - len(points)
        text = (
            f"{title}: median {metric} with its 95 % interval in {plural(len(points), 'run')} "
            f"({local_time(points[0].started)} to {local_time(points[-1].started)}) on "
            f"{plural(machines, 'machine')}; {plural(changes, 'change')} of machine or library marked."
        )
        marked = sum(1 for point in points if point.marks)
        if marked:  # never mixed in silently: their figures are not the profile's
            text += (
                f" {plural(marked, 'run')} reduced or with command-line overrides: drawn as ×, named in the "
                "Run column; not comparable with the full runs."
            )
        if dropped:
            text += f" Not drawn: {plural(dropped, 'run')} where the job failed or has no {metric}."
        self.header.setText(text)

    def _plot(self, points: list[TrendPoint], metric: str) -> None:
        item = self.plot.getPlotItem()
        xs = np.arange(len(points), dtype=np.float64)
        ys = np.array([point.median for point in points], dtype=np.float64)
        self.axis.set_labels([local_time(point.started)[:16] for point in points])
        unit = points[0].unit
        item.setLabel("left", f"median {metric}", units=unit)
        # Points of one machine are joined; a line from one machine to another would read
        # as a trend where there is only other hardware.
        same_machine = np.array([a.machine == b.machine for a, b in zip(points, points[1:])] + [False])
        self.line.setData(xs, ys, connect=same_machine)
        with_ci = [i for i, point in enumerate(points) if point.ci95_low is not None and point.ci95_high is not None]
        lows = np.array([points[i].ci95_low for i in with_ci], dtype=np.float64)
        highs = np.array([points[i].ci95_high for i in with_ci], dtype=np.float64)
        self.error_bars.setData(x=xs[with_ci], y=ys[with_ci], top=highs - ys[with_ci], bottom=ys[with_ci] - lows)
        machines: dict[str, list[int]] = {}
        for i, point in enumerate(points):
            machines.setdefault(point.machine, []).append(i)
        for k, (machine, members) in enumerate(machines.items()):
            colour = series_colour(k)
            # A reduced or overridden run's point is a ×, its machine's colour kept. Each
            # point's symbol and size live in the scatter's data; its options keep the full
            # run's one symbol, which is what the legend draws for the machine.
            curve = pg.ScatterPlotItem(symbol="o", size=9, brush=pg.mkBrush(colour), pen=pg.mkPen(colour))
            curve.setData(
                x=xs[members],
                y=ys[members],
                symbol=["x" if points[i].marks else "o" for i in members],
                size=[13 if points[i].marks else 9 for i in members],
            )
            item.addItem(curve)
            self.legend.addItem(curve, escape_control(machine))
            self.machine_curves[machine] = curve
        for i, point in enumerate(points):
            if point.changed_from_previous:
                # Versions and host names are stored text, from any results file imported.
                changes = [escape_control(change) for change in point.changed_from_previous]
                line = pg.InfiniteLine(
                    pos=i - 0.5,
                    angle=90,
                    movable=False,
                    label="\n".join(changes),
                    labelOpts={"position": 0.95, "anchors": [(0, 0), (0, 0)]},
                )
                line.setToolTip("Changed between these runs:\n" + "\n".join(changes))
                item.addItem(line)
                self.change_lines.append(line)
        self._style_marks()
        item.setXRange(-0.6, len(points) - 0.4, padding=0)
        low = min(min(ys), min(lows, default=ys.min()))
        high = max(max(ys), max(highs, default=ys.max()))
        span = (high - low) or abs(high) or 1.0
        room = LABEL_HEADROOM if self.change_lines else 0.05
        item.setYRange(low - 0.05 * span, high + room * span, padding=0)

    def _fill_table(self, points: list[TrendPoint]) -> None:
        for point in points:
            ci = (
                f"[{_value(point.ci95_low, point.unit)}, {_value(point.ci95_high, point.unit)}]"
                if point.ci95_low is not None and point.ci95_high is not None
                else "n < 6: none"
            )
            row = QTreeWidgetItem(
                [
                    local_time(point.started),
                    escape_control("; ".join(point.marks)) if point.marks else FULL_RUN,
                    escape_control(point.machine),
                    escape_control(point.versions),
                    _value(point.median, point.unit),
                    ci,
                    str(point.n),
                    escape_control("; ".join(point.changed_from_previous)),
                ]
            )
            row.setToolTip(0, f"Run {point.run_id}, job {point.job_id}")
            for column in (4, 5, 6):
                row.setTextAlignment(column, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.table.addTopLevelItem(row)

    def _apply_palette(self) -> None:
        palette = self.palette()
        bg, fg = palette.color(QPalette.ColorRole.Window), palette.color(QPalette.ColorRole.WindowText)
        self.plot.setBackground(bg)
        item = self.plot.getPlotItem()
        for name in ("left", "bottom"):
            axis = item.getAxis(name)
            if isinstance(axis, GridAxis):
                axis.set_background(bg)
            axis.setPen(fg)
            axis.setTextPen(fg)
        self.legend.setLabelTextColor(fg)
        self.legend.setBrush(QColor(bg))
        border = QColor(fg)
        border.setAlpha(90)
        self.legend.setPen(border)
        self._style_marks()

    def _style_marks(self) -> None:
        fg = self.palette().color(QPalette.ColorRole.WindowText)
        muted = QColor(fg)
        muted.setAlpha(140)
        self.line.setPen(pg.mkPen(muted, width=1))
        self.error_bars.setData(pen=pg.mkPen(fg, width=1.5))
        for line in self.change_lines:
            line.setPen(pg.mkPen(fg, width=1, style=Qt.PenStyle.DashLine))
            line.label.setColor(fg)

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "legend"):
            self._apply_palette()

"""The panel's state that the tab mixins share, declared once so a type checker sees it.

Each tab (samples.py, histogram.py, ...) is a mixin of `PlotsPanel`; what a tab reads
from the panel, or from another tab, is declared here and set in `PlotsPanel.__init__`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from app.core.results.model import JobResult, RunResult
from app.core.vocab import RunStatus
from app.gui.plots.common import FloatArray, SampleBuffer

#: How a run ended, in a plot's title: a cancelled run is one the user stopped.
ENDED_WORDS: dict[str, str] = {
    RunStatus.FINISHED: "finished",
    RunStatus.CANCELLED: "stopped",
    RunStatus.FAILED: "failed",
    RunStatus.INTERRUPTED: "interrupted",
}
#: The button back to the stream's job: while the run runs, and after it ended.
LIVE_BUTTON = ("Back to live", "Back to the run's last job")

#: A comparison bar: the job, its median and the 95 % CI of the median (None: n < 6).
ComparisonRow = tuple[JobResult, float, tuple[float, float] | None]
#: A scaling curve: its legend name, sizes, medians and the job of each point.
ScalingGroup = tuple[str, FloatArray, FloatArray, list[JobResult]]


class PanelState:
    """Declarations only (no values): `PlotsPanel.__init__` sets every one of these
    before it builds the tabs, except `_fg` and `_bg`, which `apply_palette` sets."""

    tabs: QtWidgets.QTabWidget
    _fg: QtGui.QColor  #: text colour of the current palette
    _bg: QtGui.QColor  #: background colour of the current palette
    # The live stream: the running job and its buffered samples, per metric.
    _live_job: int | None
    _live_label: str
    #: How the run of the live job ended (a RunStatus), None while it runs: a title says
    #: "Live" only while samples can still arrive.
    _ended: str | None
    _live: dict[str, SampleBuffer]
    _live_dirty: set[str]  # metrics with samples not yet drawn
    _index: FloatArray  # 0, 1, 2, ...: the sample index axis, shared by the curves
    # CPU and memory per process role: columns (t, CPU %, RSS MiB).
    _res: dict[str, SampleBuffer]  # the live job's series (one of _res_by_job)
    _res_by_job: dict[int, dict[str, SampleBuffer]]  # every job of this run, for selection
    _res_dirty: set[str]
    # The finished job selected in the results table, and its samples per metric.
    _selected: JobResult | None
    _selected_arrays: dict[str, FloatArray]
    # The finished jobs (ok, with metrics) that the Comparison and Scaling tabs draw, and
    # every job they were given (an exported plot names the ones it left out).
    _results: list[JobResult]
    _all_results: list[JobResult]
    # The run the plots show (an exported plot names it and its machine); None: unknown.
    _run: RunResult | None
    _comparison_rows: list[ComparisonRow]
    _scaling_groups: list[ScalingGroup]
    _hist_edges: FloatArray
    _hist_counts: FloatArray
    # The finished load jobs the Load tab draws (any status; it draws the ok ones).
    _load_results: list[JobResult]
    _load_curves: list[Any]  # app.gui.plots.load.LoadCurve, one per drawn load job

    if TYPE_CHECKING:  # defined by PlotsPanel

        def select_result(self, result: JobResult | None) -> None: ...

        def sample_count(self) -> int: ...

    def _stream_title(self) -> str:
        """The title of the live stream's job, as its run's state has it (HTML)."""
        number = -1 if self._live_job is None else self._live_job + 1
        if self._ended is None:
            return f"<b>Live: job #{number}</b>"
        return f"<b>Job #{number}</b> (run {ENDED_WORDS.get(self._ended, self._ended)})"

    @staticmethod
    def _page(*rows: QtWidgets.QWidget | QtWidgets.QLayout) -> QtWidgets.QWidget:
        """A tab's page: the rows top to bottom, the plot taking the height left."""
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
        """The line under a plot that its hover read-out writes to (selectable text)."""
        label = QtWidgets.QLabel()
        label.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setMinimumHeight(label.fontMetrics().height() + 4)
        return label

"""The results table: one row per job result (one scheme at one message size).

`ResultsModel` turns `JobResult`s into rows of display text plus a numeric sort key
per cell (`SORT_ROLE`), so that "2 µs" sorts before "10 µs" and "64 B" before
"1 KiB" although their texts do not. `ResultsTable` shows the model through a
`QSortFilterProxyModel` that sorts on those keys; rows stay in job order until a
header is clicked (a third click on the same header restores job order).

A picker above the table chooses what the rows show: each job's headline metric (the
one the CLI summary leads with: "compute", the sender sealing one message, for
sessions, the family's seal metric for operations), every metric of every job (a row
each: exchange and keygen of a key agreement, handshake, rtt and network of a
session), or one named metric for every job. The picker always reads what the rows
show: a metric chosen by name is kept when new results arrive, and a job without it says
so in its own row ("no rtt", the reason in the tooltip), never a row of "-". A load job's headline row is its requests
per second and p99 (`app.gui.results.load_cells`), not a metric. Rows copy as tab-separated text
(Ctrl+C, or the context menu) for a spreadsheet.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSignalBlocker,
    QSortFilterProxyModel,
    Qt,
    Signal,
)
from PySide6.QtGui import QAction, QBrush, QColor, QGuiApplication, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from app.core.escaping import escape_control
from app.core.results.model import JobResult
from app.core.vocab import JobStatus
from app.gui.results.cells import (
    CANCELLED_TEXT,
    HEADER_TIPS,
    HEADERS,
    HEADLINE_CHOICE,
    NUMERIC_COLUMNS,
    Cell,
    Column,
    build_row,
    html_tip,
)
from app.gui.results.load_cells import LOAD_ROW, is_load, load_row
from app.gui.theme import status_qcolor
from app.gui.words import plural
from app.report.job_figures import primary_metric  # one rule for the table and the reports

__all__ = ["RESULT_ROLE", "SORT_ROLE", "ResultsModel", "ResultsTable"]

#: Role holding each cell's sort key (a float or a string; None sorts last ascending).
SORT_ROLE = int(Qt.ItemDataRole.UserRole)
#: Role holding the row's JobResult (any column).
RESULT_ROLE = int(Qt.ItemDataRole.UserRole) + 1

#: What the rows show (besides one metric's name): each job's headline metric, or every metric.
HEADLINE, EVERY_METRIC = "", "*"
_ROOT = QModelIndex()
_MISSING = "-"


_FAILED_BACKGROUND = QBrush(QColor(220, 50, 47, 56))  # translucent: reads on light and dark themes


# --- model ------------------------------------------------------------------------------------


class ResultsModel(QAbstractTableModel):
    """Job results as table rows (one per job, or one per metric of each job); cell
    texts are computed once per row."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._results: list[JobResult] = []
        self._metric = HEADLINE
        self._row_results: list[JobResult] = []
        self._rows: list[list[Cell]] = []

    # --- API ---

    def _metrics_of(self, job: JobResult) -> list[str | None]:
        """The metric of each row a job gets under the current choice; a load job's
        headline is its requests per second (LOAD_ROW), before its metrics under "every"."""
        if self._metric == HEADLINE:
            return [LOAD_ROW if is_load(job) else primary_metric(job)]
        if self._metric == EVERY_METRIC:
            if is_load(job):
                return [LOAD_ROW, *job.metrics]
            return list(job.metrics) or [primary_metric(job)]
        return [self._metric]

    @staticmethod
    def _row(job: JobResult, name: str | None) -> list[Cell]:
        return load_row(job) if name == LOAD_ROW else build_row(job, name)

    def _rebuild(self) -> None:
        self._row_results, self._rows = [], []
        for job in self._results:
            for name in self._metrics_of(job):
                self._row_results.append(job)
                self._rows.append(self._row(job, name))

    def set_results(self, results: Sequence[JobResult]) -> None:
        self.beginResetModel()
        self._results = list(results)
        self._rebuild()
        self.endResetModel()

    def set_metric(self, metric: str) -> None:
        """HEADLINE, EVERY_METRIC or a metric name: what the rows show. Always re-applied,
        so choosing the entry already shown redraws the rows from it."""
        self.beginResetModel()
        self._metric = metric
        self._rebuild()
        self.endResetModel()

    def metric(self) -> str:
        return self._metric

    def shows_absent_metric(self) -> bool:
        """Whether the rows show a metric by name that no job here has (each row says so)."""
        named = self._metric not in (HEADLINE, EVERY_METRIC)
        return named and bool(self._results) and self._metric not in self.metric_names()

    def metric_names(self) -> list[str]:
        """Every metric of the results, in order of first appearance."""
        names: dict[str, None] = {}
        for job in self._results:
            names.update(dict.fromkeys(job.metrics))
        return list(names)

    def add_result(self, result: JobResult) -> None:
        """Append a result, or replace the one with the same `index` (a job re-run or updated)."""
        for k, old in enumerate(self._results):
            if old.index == result.index:
                self._results[k] = result
                rows = [row for row, job in enumerate(self._row_results) if job is old]
                new_rows = [self._row(result, name) for name in self._metrics_of(result)]
                if len(rows) == len(new_rows) and rows == list(range(rows[0], rows[0] + len(rows))):
                    for row, cells in zip(rows, new_rows):
                        self._row_results[row], self._rows[row] = result, cells
                    self.dataChanged.emit(self.index(rows[0], 0), self.index(rows[-1], len(Column) - 1))
                else:
                    self.set_results(self._results)
                return
        new_rows = [self._row(result, name) for name in self._metrics_of(result)]
        first = len(self._rows)
        self.beginInsertRows(QModelIndex(), first, first + len(new_rows) - 1)
        self._results.append(result)
        self._row_results += [result] * len(new_rows)
        self._rows += new_rows
        self.endInsertRows()

    def result_at(self, row: int) -> JobResult:
        """The result of a source-model row (map proxy rows with `mapToSource` first)."""
        return self._row_results[row]

    def row_of(self, job_index: int) -> int | None:
        """The first source row of the result whose `index` is `job_index`, or None."""
        for row, result in enumerate(self._row_results):
            if result.index == job_index:
                return row
        return None

    def results(self) -> list[JobResult]:
        return list(self._results)

    def clear(self) -> None:
        self.set_results([])

    # --- QAbstractTableModel ---

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = _ROOT) -> int:
        return 0 if parent.isValid() else len(Column)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(Column):
            return None
        column = Column(section)
        if role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            return HEADER_TIPS.get(column)
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        column = Column(index.column())
        cell = self._rows[index.row()][column]
        result = self._row_results[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            # Labels and errors may come from a store or a remote peer: shown, never obeyed.
            return escape_control(cell.text) if isinstance(cell.text, str) else cell.text
        if role == SORT_ROLE:
            return cell.key
        if role == Qt.ItemDataRole.ToolTipRole:
            if cell.tip:
                return html_tip(cell.tip)
            if result.error and result.status != JobStatus.OK:
                return f"{result.status}: {escape_control(result.error)}"  # one line, whatever it holds
            if column in WIDTH_CAPS and isinstance(cell.text, str) and cell.text:
                return escape_control(cell.text)  # the whole text of a cell its width cap may cut
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            horizontal = Qt.AlignmentFlag.AlignRight if column in NUMERIC_COLUMNS else Qt.AlignmentFlag.AlignLeft
            return int(horizontal | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.BackgroundRole:
            return _FAILED_BACKGROUND if result.status == JobStatus.FAILED else None
        if role == Qt.ItemDataRole.ForegroundRole:
            if cell.foreground is not None:
                return status_qcolor(cell.foreground)
            return status_qcolor(CANCELLED_TEXT) if result.status == JobStatus.CANCELLED else None
        if role == RESULT_ROLE:
            return result
        return None


# --- view -------------------------------------------------------------------------------------


def sortable_view(model: Any, sort_role: int, parent: QWidget) -> tuple[QSortFilterProxyModel, QTableView]:
    """A read-only, row-selecting table over `model`, sorted by `sort_role` keys (numbers
    sort as numbers), kept in the model's order until the user clicks a header."""
    proxy = QSortFilterProxyModel(parent)
    proxy.setSourceModel(model)
    proxy.setSortRole(sort_role)
    proxy.setSortCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
    view = QTableView(parent)
    view.setModel(proxy)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setAlternatingRowColors(True)
    view.setWordWrap(False)
    rows = view.verticalHeader()
    rows.setVisible(False)
    rows.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
    rows.setDefaultSectionSize(view.fontMetrics().height() + 8)
    header = view.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setStretchLastSection(True)
    header.setSortIndicatorClearable(True)
    view.setSortingEnabled(True)
    # setSortingEnabled sorts by column 0 at once; go back to the model's order.
    header.setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
    proxy.sort(-1)
    return proxy, view


#: The widest a descriptive column opens, in average characters: a long label ("ECDH P-256
#: + HKDF-SHA256 + AES-256-GCM") is cut with "…" (its tooltip has it whole) so that the
#: figures (Size, Metric, Median, p95, 95 % CI) fit a 1024-pixel window without a sideways
#: scroll. The user can still widen a column by dragging its edge.
WIDTH_CAPS: dict[Column, int] = {
    Column.SCHEME: 22,
    Column.BACKEND: 13,
    Column.PARAMETERS: 16,
    Column.MODE: 35,  # "operations · same · per-message": the exchange pattern is never cut
    Column.LINK: 12,
}


class ResultsTable(QWidget):
    """A sortable, copyable table of job results with a metric picker; emits
    `result_selected(JobResult | None)`."""

    result_selected = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = ResultsModel(self)
        self.proxy, self.view = sortable_view(self.model, SORT_ROLE, self)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)

        self.metric_picker = QComboBox()
        self.metric_picker.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.metric_picker.setToolTip("What each row shows: every metric of every job is one choice away")
        # `activated`, not `currentIndexChanged`: the user's choice, even of the entry
        # already shown, is applied; the picker is only ever set to what the model shows.
        self.metric_picker.activated.connect(lambda _: self.set_metric(self.metric_picker.currentData() or HEADLINE))
        self.copy_action = QAction("Copy rows", self)
        self.copy_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.copy_action.setToolTip(
            "Copy the selected rows (all rows when none is selected) as tab-separated text, with the header"
        )
        self.copy_action.triggered.connect(self.copy)
        self.view.addAction(self.copy_action)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        copy_button = QPushButton("Copy")
        copy_button.setToolTip(self.copy_action.toolTip())
        copy_button.clicked.connect(self.copy)
        self.count_label = QLabel()
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 0)
        bar.addWidget(QLabel("Show:"))
        bar.addWidget(self.metric_picker)
        bar.addWidget(self.count_label, 1)
        bar.addWidget(copy_button)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.view)
        self._fill_picker()

        self._last: JobResult | None = None
        self.view.selectionModel().selectionChanged.connect(self._sync_selection)
        for signal in (self.proxy.modelReset, self.proxy.dataChanged, self.proxy.rowsRemoved, self.proxy.layoutChanged):
            signal.connect(self._sync_selection)
        for signal in (self.model.modelReset, self.model.rowsInserted):
            signal.connect(self._fill_picker)
        # Sized by _fit_columns, not by Qt's ResizeToContents (which has no cap, and fits the
        # rows there when the model resets, not rows inserted later): refit on every change.
        self.view.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        for signal in (self.model.modelReset, self.model.rowsInserted, self.model.layoutChanged):
            signal.connect(self._fit_columns)
        self._fit_columns()

    def _fill_picker(self, *_: object) -> None:
        """Headline, every metric, then each metric the results have, and the picker set to
        what the rows show. A metric chosen by name stays an entry when the results change
        (a new run, a stored run), marked when no job here has it: the picker never says
        one thing while the rows show another."""
        names = self.model.metric_names()
        choice = self.model.metric()
        absent = self.model.shows_absent_metric()
        wanted: list[tuple[str, str]] = [(HEADLINE_CHOICE, HEADLINE), ("Every metric (a row each)", EVERY_METRIC)]
        wanted += [(name, name) for name in names]
        if choice not in (HEADLINE, EVERY_METRIC) and choice not in names:
            wanted.append((f"{choice} (no job here has it)" if absent else choice, choice))
        current = [
            (self.metric_picker.itemText(k), self.metric_picker.itemData(k)) for k in range(self.metric_picker.count())
        ]
        with QSignalBlocker(self.metric_picker):
            if current != wanted:
                self.metric_picker.clear()
                for text, data in wanted:
                    self.metric_picker.addItem(text, data)
            self.metric_picker.setCurrentIndex(self.metric_picker.findData(choice))
        jobs, rows = len(self.model.results()), self.model.rowCount()
        text = plural(jobs, "job")
        if rows != jobs:
            text += f", {plural(rows, 'row')}"
        text += f" · {plural(len(names), 'metric')}"
        if absent:
            text += f" · no job has {choice}: choose another above"
        self.count_label.setText(text if jobs else "")

    def _fit_columns(self, *_: object) -> None:
        """Every column as wide as its contents, the descriptive ones up to their cap."""
        self.view.resizeColumnsToContents()
        char = self.view.fontMetrics().averageCharWidth()
        for column, chars in WIDTH_CAPS.items():
            cap = chars * char + 16  # the cell's margins
            if self.view.columnWidth(column) > cap:
                self.view.setColumnWidth(column, cap)

    def set_metric(self, metric: str) -> None:
        """Show HEADLINE, EVERY_METRIC or one metric's name (as choosing it in the picker
        does); the picker follows through the model's reset."""
        self.model.set_metric(metric)

    def table_text(self, selected_only: bool = True) -> str:
        """The rows as shown (sorted as shown), tab-separated, with the header line."""
        rows = sorted({index.row() for index in self.view.selectionModel().selectedRows()}) if selected_only else []
        if not rows:
            rows = list(range(self.proxy.rowCount()))
        lines = ["\t".join(HEADERS[column] for column in Column)]
        for row in rows:
            cells = [str(self.proxy.data(self.proxy.index(row, column)) or "") for column in Column]
            lines.append("\t".join(cell.replace("\t", " ").replace("\n", " ") for cell in cells))
        return "\n".join(lines) + "\n"

    def copy(self) -> str:
        text = self.table_text()
        QGuiApplication.clipboard().setText(text)
        return text

    # --- API ---

    def set_results(self, results: Sequence[JobResult]) -> None:
        self.model.set_results(results)

    def add_result(self, result: JobResult) -> None:
        self.model.add_result(result)

    def clear(self) -> None:
        self.model.clear()

    def results(self) -> list[JobResult]:
        """All results in job (source) order, whatever the sorting."""
        return self.model.results()

    def selected_result(self) -> JobResult | None:
        rows = self.view.selectionModel().selectedRows()
        if not rows:
            return None
        return self.model.result_at(self.proxy.mapToSource(rows[0]).row())

    def select_index(self, job_index: int) -> bool:
        """Select the row of the result whose `index` is `job_index`; False (and no selection) if absent."""
        row = self.model.row_of(job_index)
        if row is None:
            self.view.clearSelection()
            return False
        proxy_index = self.proxy.mapFromSource(self.model.index(row, 0))
        self.view.selectRow(proxy_index.row())
        self.view.scrollTo(proxy_index)
        return True

    # --- internals ---

    def _sync_selection(self, *_: object) -> None:
        """Emit result_selected when the selected result changes (by identity: a replaced
        result at the selected row is emitted again, so detail views follow updates)."""
        result = self.selected_result()
        if result is not self._last:
            self._last = result
            self.result_selected.emit(result)

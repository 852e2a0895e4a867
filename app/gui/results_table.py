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
session), or one named metric for every job. Rows copy as tab-separated text
(Ctrl+C, or the context menu) for a spreadsheet.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
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

from app.core.link.presets import link_title, numbers_text, round_trip_ms
from app.core.placement import anomalies as placement_anomalies
from app.core.placement import describe as describe_placement
from app.core.results import METRIC_DESCRIPTIONS, JobResult, MetricResult
from app.core.schemes.base import OPEN_METRIC, Family
from app.core.text import escape_control
from app.core.vocab import SESSION_MODES, JobStatus, LinkEmulation, Role
from app.gui.theme import status_qcolor
from app.gui.vocab import Tone
from app.gui.words import plural
from app.report.findings import primary_metric  # one rule for the table and the reports
from app.report.kernel import kernel_lines
from app.report.units import format_bytes, format_rate, format_seconds

__all__ = [
    "HEADERS",
    "RESULT_ROLE",
    "SORT_ROLE",
    "Column",
    "ResultsModel",
    "ResultsTable",
    "format_bytes",
    "format_rate",
    "format_seconds",
    "primary_metric",
    "scheme_text",
]

#: Role holding each cell's sort key (a float or a string; None sorts last ascending).
SORT_ROLE = int(Qt.ItemDataRole.UserRole)
#: Role holding the row's JobResult (any column).
RESULT_ROLE = int(Qt.ItemDataRole.UserRole) + 1

#: What the rows show (besides one metric's name): each job's headline metric, or every metric.
HEADLINE, EVERY_METRIC = "", "*"
_ROOT = QModelIndex()
_MISSING = "-"


class Column(enum.IntEnum):
    SCHEME = 0
    BACKEND = 1
    PARAMETERS = 2
    MODE = 3
    LINK = 4
    SIZE = 5
    METRIC = 6
    MEDIAN = 7
    P95 = 8
    CI95 = 9
    THROUGHPUT = 10
    WIRE = 11
    CPU = 12
    MEMORY = 13
    VALIDATION = 14
    WARNINGS = 15
    STATUS = 16


HEADERS: dict[Column, str] = {
    Column.SCHEME: "Scheme",
    Column.BACKEND: "Backend",
    Column.PARAMETERS: "Parameters",
    Column.MODE: "Mode",
    Column.LINK: "Link",
    Column.SIZE: "Size",
    Column.METRIC: "Metric",
    Column.MEDIAN: "Median",
    Column.P95: "p95",
    Column.CI95: "95 % CI",
    Column.THROUGHPUT: "Throughput",
    Column.WIRE: "Wire bytes",
    Column.CPU: "CPU %",
    Column.MEMORY: "Memory",
    Column.VALIDATION: "Validation",
    Column.WARNINGS: "Warnings",
    Column.STATUS: "Status",
}

_HEADER_TIPS: dict[Column, str] = {
    Column.MODE: "operations, loopback or remote; a row's tooltip gives the CPUs its processes were allowed and "
                 "seen on (CPU placement)",
    Column.LINK: "The emulated link a loopback session ran over (- for none); sorted by what one round trip "
                 "costs on it",
    Column.SIZE: "Plaintext size of one message",
    Column.METRIC: "The metric this row shows (choose above the table): by default the sender sealing one "
                   "message (compute) for sessions, the family's main operation for operations jobs",
    Column.MEDIAN: "Median time of one operation of the shown metric",
    Column.P95: "95th percentile time of one operation of the shown metric",
    Column.CI95: "95 % confidence interval of the median (order statistics; needs at least 6 samples)",
    Column.THROUGHPUT: "Message size / median time of the shown metric",
    Column.WIRE: "Bytes on the wire for one message: the frame (header + payload) for sessions, "
                 "the payload for operations",
    Column.CPU: "Mean CPU in % of one core: the worker or sender, then the receiver when there is one",
    Column.MEMORY: "Peak resident memory (RSS) of the worker or sender; peak Python allocation "
                   "(tracemalloc) of the shown metric",
    Column.VALIDATION: "Messages whose opened plaintext matched the original; tampered payloads rejected",
    Column.WARNINGS: "Stability warnings: reasons to distrust the numbers, each with a fix (see the tooltip)",
    Column.STATUS: "ok, failed or cancelled; a failed row's tooltip shows the error",
}

#: Rows of these metrics (the headline "compute" and the transport's) add what each end's
#: kernel saw over the size (TCP_INFO) to their median's tooltip.
_KERNEL_METRICS = frozenset({"compute", "rtt", "network", "floor_rtt"})

_NUMERIC = frozenset({Column.SIZE, Column.MEDIAN, Column.P95, Column.CI95, Column.THROUGHPUT, Column.WIRE,
                      Column.CPU, Column.MEMORY, Column.WARNINGS})

_FAILED_BACKGROUND = QBrush(QColor(220, 50, 47, 56))  # translucent: reads on light and dark themes
# Tones of text colour: resolved against the palette when shown, so they keep their
# contrast in the light and the dark theme.
_FAILED_TEXT, _CANCELLED_TEXT, _WARNING_TEXT = Tone.BAD, Tone.MUTED, Tone.WARN


def _tip(text: str) -> str:
    """A tooltip's lines with control characters shown as escapes (its own newlines kept)."""
    return "\n".join(escape_control(line) for line in text.split("\n"))


def _exact_bytes(value: float) -> str:
    return f"{int(value):,} bytes".replace(",", "\u202f")  # narrow no-break space as thousands separator


def _companion_metrics(job: JobResult) -> tuple[str, ...]:
    """The per-message metrics worth quoting next to the primary one."""
    if job.mode in SESSION_MODES:
        return ("receiver", "rtt", "network")
    try:
        opened = OPEN_METRIC[Family(job.family)]
    except (ValueError, KeyError):
        return ()
    return (opened,) if opened else ()


# --- rows -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Cell:
    text: str
    key: Any = None
    tip: str | None = None
    foreground: Tone | None = None


#: Roles in the order the tooltips list them (Role's own order: worker, sender, receiver).
_ROLE_ORDER: dict[str, int] = {role: i for i, role in enumerate(Role)}


def _percent(value: float | None) -> str:
    return _MISSING if value is None else f"{value:.0f}"


def _cpu_cell(job: JobResult) -> _Cell:
    roles = {role: usage for role, usage in job.cpu.processes.items() if usage is not None}
    if not roles:
        return _Cell(_MISSING)
    main = job.cpu.measuring(job.mode)
    main_mean = main.mean_percent if main else None
    receiver = roles.get(Role.RECEIVER)
    text = _percent(main_mean)
    if receiver is not None and receiver is not main:
        text = f"{text} / {_percent(receiver.mean_percent)}"
    lines = ["CPU in % of one core"]
    ordered = sorted(roles.items(), key=lambda item: _ROLE_ORDER.get(item[0], len(_ROLE_ORDER)))
    for role, usage in ordered:
        line = f"{role}: mean {_percent(usage.mean_percent)} %"
        if usage.max_percent is not None:
            line += f", max {_percent(usage.max_percent)} %"
        if usage.source is not None:
            line += f" ({usage.source})"
        elif usage.samples == 0:
            line += " (not sampled: the job ended within one sampling interval)"
        elif usage.samples is not None:
            line += f" ({plural(usage.samples, 'sample')})"
        lines.append(line)
        if usage.other_processes_mean_percent is not None:
            lines.append(f"    other processes meanwhile: {usage.other_processes_mean_percent:.0f} %")
    return _Cell(text, main_mean, "\n".join(lines))


def _memory_cell(job: JobResult, metric_name: str | None, metric: MetricResult | None) -> _Cell:
    rss_by_role = job.memory.rss_peak_bytes
    traced_by_metric = job.memory.traced_peak_bytes
    rss = job.memory.measuring_rss(job.mode)  # the same process the CPU column reads
    traced = metric.traced_peak_bytes if metric is not None else None
    if traced is None and metric_name is not None:
        traced = traced_by_metric.get(metric_name)
    parts = []
    if rss is not None:
        parts.append(f"{rss / 1024**2:.1f} MiB")
    if traced is not None:
        parts.append(f"{format_bytes(traced)} traced")
    if not parts:
        return _Cell(_MISSING)
    lines = ["Peak resident memory (RSS):"]
    lines += [f"    {role}: {format_bytes(value) if value is not None else 'not sampled'}"
              for role, value in rss_by_role.items()]
    if traced_by_metric:
        lines.append("Peak Python allocation during the timed loop (tracemalloc):")
        lines += [f"    {name}: {format_bytes(value)}" for name, value in traced_by_metric.items()]
    key = float(rss) if rss is not None else None
    return _Cell("; ".join(parts), key, "\n".join(lines))


def _wire_cell(job: JobResult) -> _Cell:
    wire = job.wire_bytes
    value = wire.get("frame", wire.get("payload"))
    if value is None:
        return _Cell(_MISSING)
    lines = [f"{name}: {_exact_bytes(count)}" for name, count in wire.items()]
    if job.message_size:
        lines.append(f"×{value / job.message_size:.2f} of the plaintext")
    # Exact, not rounded: the few bytes of overhead are what this column is about.
    return _Cell(_exact_bytes(value).replace(" bytes", " B"), float(value), "\n".join(lines))


def _validation_cell(job: JobResult) -> _Cell:
    v = job.validation
    checked, failed, tried, rejected = v.checked, v.failed, v.tamper_tried, v.tamper_rejected
    if not checked and not tried:
        return _Cell(_MISSING, None, "No messages were validated")
    parts, lines = [], []
    if checked:
        parts.append(f"{checked - failed}/{checked} ok")
        lines.append(f"Opened plaintext equal to the original in {checked - failed} of {checked} messages")
    if tried:
        parts.append(f"tamper {rejected}/{tried}")
        lines.append(f"Tampered payloads rejected: {rejected} of {tried}")
    problems = failed + (tried - rejected)  # the sort key: validation problems
    return _Cell(", ".join(parts), float(problems), "\n".join(lines), _FAILED_TEXT if problems else None)


def _warnings_cell(job: JobResult) -> _Cell:
    if not job.warnings:
        return _Cell("0", 0.0)
    lines = []
    for warning in job.warnings:
        lines.append(f"• {warning.metric or 'job'}: {warning.message}")
        lines.append(f"   Fix: {warning.fix}")
    return _Cell(str(len(job.warnings)), float(len(job.warnings)), "\n".join(lines), _WARNING_TEXT)


def _placement_tip(job: JobResult) -> str | None:
    """The Mode column's tooltip: the CPUs the job's processes were allowed and seen on."""
    if job.placement is None:
        return None
    lines = [f"CPU placement: {describe_placement(job.placement)}"]
    lines += [f"• {found}" for found in placement_anomalies(job.placement)]
    return _tip("\n".join(lines))


#: How each kind of emulation works, for the Link column's tooltip.
_EMULATIONS: dict[str, str] = {
    LinkEmulation.DELAY_LINE: "a delay line per direction between sender and receiver (serialization at the "
                              "rate, then the delay)",
    LinkEmulation.NETEM: "the kernel's netem, at packet level",
}


def _link_cell(job: JobResult) -> _Cell:
    link = job.link
    if link is None:
        return _Cell(_MISSING)
    emulation = _EMULATIONS.get(link.emulation, "")  # a StrEnum key is found by its string
    lines = [f"{link.name or 'custom link'}: {numbers_text(link)}",
             "one-way delay per direction; up = sender → receiver",
             f"emulated by {link.emulation}" + (f": {emulation}" if emulation else "")]
    return _Cell(link_title(link), round_trip_ms(link), "\n".join(lines))


def _scheme_tip(job: JobResult) -> str:
    lines = [job.label]
    if job.family:
        try:
            lines.append(Family(job.family).long_label)
        except ValueError:
            lines.append(job.family)
    sec = job.security
    if sec.known:
        level = []
        if sec.classical_bits is not None:
            level.append(f"{sec.classical_bits}-bit classical security")
        if sec.pq_category is not None:
            level.append(f"post-quantum category {sec.pq_category}" if sec.pq_category
                         else "broken by a quantum computer")
        if level:
            lines.append(", ".join(level))
        if sec.insecure:
            lines.append("Insecure parameter size: for comparison only")
    lines += job.notes
    if job.error:
        lines.append(f"Error: {escape_control(job.error)}")
    return "\n".join(lines)


def scheme_text(job: JobResult) -> str:
    """The label without its " [backend]" and " over LINK" suffixes: the Backend and Link
    columns already say them."""
    label = job.label
    for suffix in ([f" over {link_title(job.link)}"] if job.link is not None else []) + [f" [{job.backend}]"]:
        if label.endswith(suffix) and len(label) > len(suffix):
            label = label[: -len(suffix)]
    return label


def _build_row(job: JobResult, name: str | None) -> list[_Cell]:
    metric = job.metrics.get(name) if name else None
    s = metric.stats if metric is not None else None
    params = ", ".join(f"{k}={v}" for k, v in job.params.items())
    metric_tip = METRIC_DESCRIPTIONS.get(name or "")
    if s is not None and metric is not None:
        spread = f"n = {s.n}"
        if metric.batch > 1:
            spread += f" × batch {metric.batch}"
        if s.cv is not None:
            spread += f", CV {100 * s.cv:.1f} %"
        spread += f", min {format_seconds(s.min)}, max {format_seconds(s.max)}"
        if s.outliers:
            spread += f", {s.outliers} outliers (kept)"
        median_tip = f"{metric_tip}\n{spread}" if metric_tip else spread
        others = [f"{other} {format_seconds(job.metrics[other].stats.median)}"
                  for other in _companion_metrics(job) if other in job.metrics and other != name]
        if others:
            median_tip += "\nMedians of the other per-message metrics: " + ", ".join(others)
        if name in _KERNEL_METRICS:
            median_tip = "\n".join([median_tip, *kernel_lines(job)])
    else:
        median_tip = f"No {name} samples" if name else "No metrics"
    if s is not None and s.ci95 is not None:
        ci = _Cell(f"[{format_seconds(s.ci95[0])}, {format_seconds(s.ci95[1])}]", s.ci95[0],
                   f"95 % confidence interval of the median: {format_seconds(s.ci95[0])} to "
                   f"{format_seconds(s.ci95[1])} ({s.n} samples)")
    elif s is not None:
        ci = _Cell("n < 6", None, f"Only {s.n} samples: a 95 % interval of the median needs at least 6")
    else:
        ci = _Cell(_MISSING)
    throughput = job.throughput_bytes_per_s
    if throughput is None and metric is not None:
        throughput = metric.throughput_bytes_per_s
    status_colours: dict[str, Tone] = {JobStatus.FAILED: _FAILED_TEXT, JobStatus.CANCELLED: _CANCELLED_TEXT}
    status_colour = status_colours.get(job.status)
    cells = {
        Column.SCHEME: _Cell(scheme_text(job), scheme_text(job), _scheme_tip(job)),
        Column.BACKEND: _Cell(job.backend, job.backend),
        Column.PARAMETERS: _Cell(params, params, params or None),
        Column.MODE: _Cell(job.mode, job.mode, _placement_tip(job)),
        Column.LINK: _link_cell(job),
        Column.SIZE: _Cell(format_bytes(job.message_size), float(job.message_size),
                           _exact_bytes(job.message_size)),
        Column.METRIC: _Cell(name or _MISSING, name, metric_tip),
        Column.MEDIAN: _Cell(format_seconds(s.median), s.median, median_tip) if s else _Cell(_MISSING),
        Column.P95: _Cell(format_seconds(s.p95), s.p95, f"p99 {format_seconds(s.p99)}") if s else _Cell(_MISSING),
        Column.CI95: ci,
        Column.THROUGHPUT: _Cell(format_rate(throughput), float(throughput) if throughput else None),
        Column.WIRE: _wire_cell(job),
        Column.CPU: _cpu_cell(job),
        Column.MEMORY: _memory_cell(job, name, metric),
        Column.VALIDATION: _validation_cell(job),
        Column.WARNINGS: _warnings_cell(job),
        Column.STATUS: _Cell(job.status, job.status, escape_control(job.error) if job.error else None, status_colour),
    }
    return [cells[column] for column in Column]


# --- model ------------------------------------------------------------------------------------


class ResultsModel(QAbstractTableModel):
    """Job results as table rows (one per job, or one per metric of each job); cell
    texts are computed once per row."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._results: list[JobResult] = []
        self._metric = HEADLINE
        self._row_results: list[JobResult] = []
        self._rows: list[list[_Cell]] = []

    # --- API ---

    def _metrics_of(self, job: JobResult) -> list[str | None]:
        """The metric of each row a job gets under the current choice."""
        if self._metric == HEADLINE:
            return [primary_metric(job)]
        if self._metric == EVERY_METRIC:
            return list(job.metrics) or [primary_metric(job)]
        return [self._metric]

    def _rebuild(self) -> None:
        self._row_results, self._rows = [], []
        for job in self._results:
            for name in self._metrics_of(job):
                self._row_results.append(job)
                self._rows.append(_build_row(job, name))

    def set_results(self, results: Sequence[JobResult]) -> None:
        self.beginResetModel()
        self._results = list(results)
        self._rebuild()
        self.endResetModel()

    def set_metric(self, metric: str) -> None:
        """HEADLINE, EVERY_METRIC or a metric name: what the rows show."""
        if metric == self._metric:
            return
        self.beginResetModel()
        self._metric = metric
        self._rebuild()
        self.endResetModel()

    def metric(self) -> str:
        return self._metric

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
                new_rows = [_build_row(result, name) for name in self._metrics_of(result)]
                if len(rows) == len(new_rows) and rows == list(range(rows[0], rows[0] + len(rows))):
                    for row, cells in zip(rows, new_rows):
                        self._row_results[row], self._rows[row] = result, cells
                    self.dataChanged.emit(self.index(rows[0], 0), self.index(rows[-1], len(Column) - 1))
                else:
                    self.set_results(self._results)
                return
        new_rows = [_build_row(result, name) for name in self._metrics_of(result)]
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

    def headerData(self, section: int, orientation: Qt.Orientation,
                   role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(Column):
            return None
        column = Column(section)
        if role == Qt.ItemDataRole.DisplayRole:
            return HEADERS[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            return _HEADER_TIPS.get(column)
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
                return _tip(cell.tip)
            if result.error and result.status != JobStatus.OK:
                return f"{result.status}: {escape_control(result.error)}"  # one line, whatever it holds
            return None
        if role == Qt.ItemDataRole.TextAlignmentRole:
            horizontal = Qt.AlignmentFlag.AlignRight if column in _NUMERIC else Qt.AlignmentFlag.AlignLeft
            return int(horizontal | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.BackgroundRole:
            return _FAILED_BACKGROUND if result.status == JobStatus.FAILED else None
        if role == Qt.ItemDataRole.ForegroundRole:
            if cell.foreground is not None:
                return status_qcolor(cell.foreground)
            return status_qcolor(_CANCELLED_TEXT) if result.status == JobStatus.CANCELLED else None
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
        self.metric_picker.currentIndexChanged.connect(
            lambda _: self.model.set_metric(self.metric_picker.currentData() or HEADLINE))
        self.copy_action = QAction("Copy rows", self)
        self.copy_action.setShortcut(QKeySequence.StandardKey.Copy)
        self.copy_action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        self.copy_action.setToolTip("Copy the selected rows (all rows when none is selected) as "
                                    "tab-separated text, with the header")
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
        for signal in (self.proxy.modelReset, self.proxy.dataChanged, self.proxy.rowsRemoved,
                       self.proxy.layoutChanged):
            signal.connect(self._sync_selection)
        for signal in (self.model.modelReset, self.model.rowsInserted):
            signal.connect(self._fill_picker)

    def _fill_picker(self, *_: object) -> None:
        """Headline, every metric, then each metric the results have; the choice is kept."""
        names = self.model.metric_names()
        wanted = [HEADLINE, EVERY_METRIC] + names
        current = [self.metric_picker.itemData(k) for k in range(self.metric_picker.count())]
        if current != wanted:
            choice = self.model.metric()
            self.metric_picker.blockSignals(True)
            self.metric_picker.clear()
            self.metric_picker.addItem("Headline metric of each job", HEADLINE)
            self.metric_picker.addItem("Every metric (a row each)", EVERY_METRIC)
            for name in names:
                self.metric_picker.addItem(name, name)
            self.metric_picker.setCurrentIndex(max(0, self.metric_picker.findData(choice)))
            self.metric_picker.blockSignals(False)
        jobs, rows = len(self.model.results()), self.model.rowCount()
        text = plural(jobs, "job")
        if rows != jobs:
            text += f", {plural(rows, 'row')}"
        self.count_label.setText(f"{text} · {plural(len(names), 'metric')}" if jobs else "")

    def set_metric(self, metric: str) -> None:
        """Show HEADLINE, EVERY_METRIC or one metric's name (as the picker does)."""
        self.metric_picker.setCurrentIndex(max(0, self.metric_picker.findData(metric)))
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

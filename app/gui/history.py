"""Past runs from the results store, and the comparison of two runs.

`HistoryPanel` opens the store only while it reads or deletes and closes it again,
so a run writing to the same store (another connection, WAL mode) is never blocked
for longer than one query. A file that is not a usable store shows its reason in
the panel instead of raising.

`CompareDialog` matches the jobs of a baseline run (a) and a candidate run (b) by
(scheme, backend, params, mode, message size) and, for each metric both have,
reports the ratio of medians b / a with its 95 % bootstrap interval
(`stats.compare`). The verdict is "faster" or "slower" only when that interval
excludes 1; otherwise the difference is "within noise". The bootstraps run a few
at a time on the event loop so that a large run does not freeze the window;
`rows()` finishes them at once.
"""

from __future__ import annotations

import enum
import html
import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from time import perf_counter
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence, QPalette, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QMessageBox,
    QPushButton,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core import stats
from app.core.results import JobResult, RunResult
from app.core.store import (
    BrokenStoreError,
    RunNotFound,
    RunSummary,
    Store,
    StoreError,
    default_store_path,
    move_aside,
)
from app.core.text import escape_control
from app.core.vocab import JobStatus, RunStatus
from app.gui.results_table import format_bytes, format_seconds, sortable_view
from app.gui.theme import status_qcolor
from app.gui.vocab import Tone
from app.gui.words import plural
from app.report.findings import JobComparison

__all__ = [
    "FASTER",
    "NOT_COMPARABLE",
    "ONLY_IN_BASELINE",
    "ONLY_IN_CANDIDATE",
    "SLOWER",
    "WITHIN_NOISE",
    "CompareColumn",
    "CompareDialog",
    "CompareRow",
    "HistoryPanel",
    "compare_runs",
    "job_key",
]

FASTER = "faster"
SLOWER = "slower"
WITHIN_NOISE = "within noise"
ONLY_IN_BASELINE = "only in baseline"
ONLY_IN_CANDIDATE = "only in candidate"
NOT_COMPARABLE = "not comparable"
_PENDING = "…"

_SORT_ROLE = int(Qt.ItemDataRole.UserRole)
_ID_ROLE = int(Qt.ItemDataRole.UserRole) + 1
# Tones of text colour, resolved against the theme when shown.
_STATUS_COLOURS: dict[str, Tone] = {RunStatus.FAILED: Tone.BAD, RunStatus.INTERRUPTED: Tone.WARN,
                                    RunStatus.CANCELLED: Tone.MUTED, RunStatus.RUNNING: Tone.INFO}


def _local_time(iso: str | None) -> str:
    """An ISO timestamp as local "YYYY-MM-DD HH:MM:SS" (the text itself if it does not parse)."""
    if not iso:
        return "-"
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.strftime("%Y-%m-%d %H:%M:%S")


# --- comparison (plain data, no Qt) -------------------------------------------------------------


def job_key(job: JobResult) -> tuple[str, str, str, str, int]:
    """What makes two jobs of different runs the same measurement."""
    params = json.dumps(job.params, sort_keys=True, default=str)
    return job.scheme, job.backend, params, job.mode, job.message_size


@dataclass(frozen=True)
class CompareRow:
    """One metric of one matched job (or one unmatched job, with `metric` None).

    `ratio` = median_b / median_a with its 95 % bootstrap interval; None when not
    computed (unmatched, not comparable, or still pending in the dialog).
    """

    label: str
    scheme: str
    backend: str
    params: dict[str, Any]
    mode: str
    message_size: int
    metric: str | None
    median_a: float | None
    median_b: float | None
    ratio: float | None
    ci95_low: float | None
    ci95_high: float | None
    significant: bool | None
    verdict: str
    note: str = ""


def _row(job: JobResult, **fields: Any) -> CompareRow:
    """A row for `job` with nothing compared yet; `fields` override the defaults."""
    defaults: dict[str, Any] = {
        "metric": None, "median_a": None, "median_b": None, "ratio": None, "ci95_low": None, "ci95_high": None,
        "significant": None, "verdict": NOT_COMPARABLE, "note": "",
    }
    defaults.update(fields)
    return CompareRow(label=job.label, scheme=job.scheme, backend=job.backend, params=dict(job.params),
                      mode=job.mode, message_size=job.message_size, **defaults)


def _status_note(a: JobResult, b: JobResult) -> str:
    notes = []
    if a.status != JobStatus.OK:
        notes.append(f"baseline {a.status}" + (f": {escape_control(a.error)}" if a.error else ""))
    if b.status != JobStatus.OK:
        notes.append(f"candidate {b.status}" + (f": {escape_control(b.error)}" if b.error else ""))
    return "; ".join(notes)


_Task = tuple[JobResult, JobResult]


def _plan(a: RunResult, b: RunResult) -> list[tuple[CompareRow, _Task | None]]:
    """Rows in baseline job order, then jobs only in the candidate. A row paired with a
    task still needs its bootstrap (`_complete`); the others are final."""
    candidates: dict[tuple[str, str, str, str, int], list[JobResult]] = {}
    for job in b.jobs:
        candidates.setdefault(job_key(job), []).append(job)
    planned: list[tuple[CompareRow, _Task | None]] = []
    for ja in a.jobs:
        matches = candidates.get(job_key(ja))
        if not matches:
            planned.append((_row(ja, verdict=ONLY_IN_BASELINE), None))
            continue
        jb = matches.pop(0)  # a job repeated in a profile pairs with its n-th repetition
        note = _status_note(ja, jb)
        common = [name for name in ja.metrics if name in jb.metrics]
        if not common:
            planned.append((_row(ja, note=note or "no metric measured in both runs"), None))
            continue
        for name in common:
            row = _row(ja, metric=name, median_a=ja.metrics[name].stats.median,
                       median_b=jb.metrics[name].stats.median, verdict=_PENDING, note=note)
            planned.append((row, (ja, jb)))
    for matches in candidates.values():
        for jb in matches:
            planned.append((_row(jb, verdict=ONLY_IN_CANDIDATE), None))
    return planned


def _complete(row: CompareRow, task: _Task) -> CompareRow:
    ja, jb = task
    assert row.metric is not None
    ma, mb = ja.metrics[row.metric], jb.metrics[row.metric]
    if ma.stats.unit != mb.stats.unit:
        return replace(row, verdict=NOT_COMPARABLE, note=f"units differ ({ma.stats.unit} vs {mb.stats.unit})")
    try:
        result = stats.compare(ma.samples, mb.samples)
    except ValueError as exc:
        note = f"{row.note}; {exc}" if row.note else str(exc)
        return replace(row, verdict=NOT_COMPARABLE, note=note)
    if ma.stats.unit == "s":
        # The report's rule, word for word (app.report.findings.JobComparison.verdict):
        # a Compare row and the report never disagree on the same two runs.
        verdict = JobComparison(jb, ja, row.metric, result).verdict
    elif not result.significant:
        verdict = WITHIN_NOISE
    else:
        verdict = "higher" if result.ratio > 1 else "lower"
    return replace(row, ratio=result.ratio, ci95_low=result.ci95_low, ci95_high=result.ci95_high,
                   significant=result.significant, verdict=verdict)


def compare_runs(a: RunResult, b: RunResult) -> list[CompareRow]:
    """Every comparison row of baseline `a` and candidate `b` (see the module docstring)."""
    return [_complete(row, task) if task else row for row, task in _plan(a, b)]


# --- compare dialog ----------------------------------------------------------------------------

class CompareColumn(enum.IntEnum):
    JOB = 0
    SIZE = 1
    METRIC = 2
    VERDICT = 3
    RATIO = 4
    CI95 = 5
    MEDIAN_A = 6
    MEDIAN_B = 7
    MODE = 8
    NOTE = 9


_COMPARE_HEADERS = {
    CompareColumn.JOB: "Job", CompareColumn.SIZE: "Size", CompareColumn.METRIC: "Metric",
    CompareColumn.VERDICT: "Verdict", CompareColumn.RATIO: "Ratio b/a", CompareColumn.CI95: "95 % CI of ratio",
    CompareColumn.MEDIAN_A: "Baseline (a)", CompareColumn.MEDIAN_B: "Candidate (b)", CompareColumn.MODE: "Mode",
    CompareColumn.NOTE: "Note",
}
_NUMERIC_COMPARE_COLUMNS = frozenset({CompareColumn.SIZE, CompareColumn.RATIO, CompareColumn.CI95,
                                      CompareColumn.MEDIAN_A, CompareColumn.MEDIAN_B})
_VERDICT_COLOURS = {FASTER: Tone.GOOD, SLOWER: Tone.BAD, WITHIN_NOISE: Tone.MUTED, ONLY_IN_BASELINE: Tone.MUTED,
                    ONLY_IN_CANDIDATE: Tone.MUTED, NOT_COMPARABLE: Tone.WARN}


def _run_line(role: str, run: RunResult) -> str:
    host = _plain(str(run.environment.get("hostname") or "unknown machine"))
    return f"<b>{role}:</b> {_plain(run.name or '(unnamed)')} · {_local_time(run.started)} · {host} · run {run.id}"


def _plain(text: str) -> str:
    """Stored text inside rich text: control characters shown as escapes, markup inert."""
    return html.escape(escape_control(text))


class CompareDialog(QDialog):
    """Baseline `a` against candidate `b`, metric by metric. Non-blocking: use show() or open()."""

    #: Time spent on bootstraps per event-loop turn while filling the table.
    TICK_BUDGET_S = 0.04

    def __init__(self, a: RunResult, b: RunResult, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Compare runs")
        self.resize(1100, 500)
        self._a, self._b = a, b
        self._rows: list[CompareRow] = []
        self._tasks: list[tuple[int, _Task]] = []
        self._items: list[list[QStandardItem]] = []

        self.runs_label = QLabel(self)
        self.runs_label.setTextFormat(Qt.TextFormat.RichText)
        self.runs_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        explanation = QLabel(
            "Ratio = candidate median / baseline median, with its 95 % bootstrap interval. "
            "“faster” or “slower” only when the interval excludes 1; otherwise the difference "
            "is within the noise of the measurements.", self)
        explanation.setWordWrap(True)
        self.summary_label = QLabel(self)
        self.summary_label.setWordWrap(True)

        self.model = QStandardItemModel(0, len(_COMPARE_HEADERS), self)
        self.model.setHorizontalHeaderLabels([_COMPARE_HEADERS[c] for c in CompareColumn])
        self.proxy, self.view = sortable_view(self.model, _SORT_ROLE, self)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.swap_button = QPushButton("Swap baseline and candidate", self)
        buttons.addButton(self.swap_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.swap_button.clicked.connect(self.swap)

        layout = self._layout = QVBoxLayout(self)  # kept: fit_width reads its margins
        layout.addWidget(self.runs_label)
        layout.addWidget(explanation)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.summary_label)
        layout.addWidget(buttons)

        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._work)
        self._build()

    # --- API ---

    @property
    def baseline(self) -> RunResult:
        return self._a

    @property
    def candidate(self) -> RunResult:
        return self._b

    def rows(self) -> list[CompareRow]:
        """All comparison rows in job order (finishing any pending bootstraps first)."""
        self._run_tasks(budget=None)
        return list(self._rows)

    def is_complete(self) -> bool:
        return not self._tasks

    def swap(self) -> None:
        self._a, self._b = self._b, self._a
        self._build()

    # --- internals ---

    def _build(self) -> None:
        self._timer.stop()
        self.runs_label.setText(_run_line("Baseline (a)", self._a) + "<br>" + _run_line("Candidate (b)", self._b))
        planned = _plan(self._a, self._b)
        self._rows = [row for row, _ in planned]
        self._tasks = [(i, task) for i, (_, task) in enumerate(planned) if task is not None]
        self.model.removeRows(0, self.model.rowCount())
        self._items = []
        for row in self._rows:
            items = [QStandardItem() for _ in CompareColumn]
            self._fill(items, row)
            self.model.appendRow(items)
            self._items.append(items)
        self._update_summary()
        if self._tasks:
            self._timer.start()

    def _work(self) -> None:
        self._run_tasks(budget=self.TICK_BUDGET_S)

    def _run_tasks(self, budget: float | None) -> None:
        start = perf_counter()
        while self._tasks:
            position, task = self._tasks.pop(0)
            self._rows[position] = _complete(self._rows[position], task)
            self._fill(self._items[position], self._rows[position])
            if budget is not None and perf_counter() - start > budget:
                break
        if not self._tasks:
            self._timer.stop()
        self._update_summary()

    def _fill(self, items: list[QStandardItem], row: CompareRow) -> None:
        ratio = row.ratio
        ci = (f"[{row.ci95_low:.3f}, {row.ci95_high:.3f}]"
              if row.ci95_low is not None and row.ci95_high is not None else "")
        values: dict[CompareColumn, tuple[str, Any]] = {
            CompareColumn.JOB: (row.label, row.label),
            CompareColumn.SIZE: (format_bytes(row.message_size), float(row.message_size)),
            CompareColumn.METRIC: (row.metric or "", row.metric or ""),
            CompareColumn.VERDICT: (row.verdict, row.verdict),
            CompareColumn.RATIO: (f"{ratio:.3f}×" if ratio is not None else "", ratio),
            CompareColumn.CI95: (ci, row.ci95_low),
            CompareColumn.MEDIAN_A: (format_seconds(row.median_a) if row.median_a is not None else "", row.median_a),
            CompareColumn.MEDIAN_B: (format_seconds(row.median_b) if row.median_b is not None else "", row.median_b),
            CompareColumn.MODE: (row.mode, row.mode),
            CompareColumn.NOTE: (row.note, row.note),
        }
        for column, (text, key) in values.items():
            item = items[column]
            item.setText(text)
            item.setData(key, _SORT_ROLE)
            if column in _NUMERIC_COMPARE_COLUMNS:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if ratio is not None:
            change = (ratio - 1.0) * 100.0
            items[CompareColumn.RATIO].setToolTip(
                f"{change:+.1f} % ({'b takes longer' if change > 0 else 'b takes less time'})")
        if row.note:
            items[CompareColumn.NOTE].setToolTip(row.note)
        colour = status_qcolor(_VERDICT_COLOURS.get(row.verdict))
        if colour is not None:
            items[CompareColumn.VERDICT].setForeground(colour)
        params = ", ".join(f"{k}={v}" for k, v in row.params.items())
        items[CompareColumn.JOB].setToolTip(f"{row.label}\n{params} · {row.backend}" if params else row.label)

    def table_width(self) -> int:
        """The width the table needs to show every column without scrolling."""
        header = self.view.horizontalHeader()
        return header.length() + 2 * self.view.frameWidth() + self.view.verticalScrollBar().sizeHint().width()

    def fit_width(self) -> None:
        """As wide as the table (every column visible), within the screen's width."""
        margins = self._layout.contentsMargins()
        wanted = self.table_width() + margins.left() + margins.right()
        screen = self.screen().availableGeometry() if self.screen() is not None else None
        limit = screen.width() - 40 if screen is not None else wanted
        if self.width() < min(wanted, limit):
            self.resize(min(wanted, limit), self.height())

    def _update_summary(self) -> None:
        self.fit_width()
        counts: dict[str, int] = {}
        for row in self._rows:
            counts[row.verdict] = counts.get(row.verdict, 0) + 1
        compared = sum(counts.get(v, 0) for v in (FASTER, SLOWER, WITHIN_NOISE, "higher", "lower"))
        parts = [(f"{plural(compared, 'metric')} compared: {counts.get(FASTER, 0)} faster, "
                  f"{counts.get(SLOWER, 0)} slower, {counts.get(WITHIN_NOISE, 0)} within noise")]
        for verdict in (ONLY_IN_BASELINE, ONLY_IN_CANDIDATE, NOT_COMPARABLE):
            if counts.get(verdict):
                parts.append(f"{counts[verdict]} {verdict}")
        if self._tasks:
            parts.append(f"computing {len(self._tasks)} more…")
        host_a, host_b = self._a.environment.get("hostname"), self._b.environment.get("hostname")
        if host_a and host_b and host_a != host_b:
            parts.append(f"the runs come from different machines ({host_a}, {host_b}): "
                         "differences include the hardware")
        self.summary_label.setText("; ".join(parts) + ".")


# --- history panel -----------------------------------------------------------------------------

_HISTORY_HEADERS = ("Date", "Profile", "Status", "Jobs ok", "Machine")


class _RunItem(QTreeWidgetItem):
    """A run row that sorts on keys (jobs ok numerically), not on display text."""

    def __lt__(self, other: QTreeWidgetItem) -> bool:
        column = self.treeWidget().sortColumn() if self.treeWidget() else 0
        mine, theirs = self.data(column, _SORT_ROLE), other.data(column, _SORT_ROLE)
        if mine is None or theirs is None or type(mine) is not type(theirs):
            return self.text(column).lower() < other.text(column).lower()
        return bool(mine < theirs)


class HistoryPanel(QWidget):
    """Past runs of a results store: open, delete, compare.

    `confirm(title, text) -> bool` asks before deleting; replace it in tests.
    """

    run_opened = Signal(object)
    run_deleted = Signal(str)

    def __init__(self, store_path: Path | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store_path: Path | None = Path(store_path) if store_path is not None else None
        self.confirm: Callable[[str, str], bool] = self._ask
        self.error: str | None = None
        self.compare_dialog: CompareDialog | None = None
        self._summaries: dict[str, RunSummary] = {}

        self.refresh_action = self._action("Refresh", self.refresh, QKeySequence.StandardKey.Refresh,
                                           "Read the list of runs again")
        self.open_action = self._action("Open", self.open_selected, None, "Show the selected run's results")
        self.delete_action = self._action("Delete…", self.delete_selected, QKeySequence.StandardKey.Delete,
                                          "Delete the selected runs from the store")
        self.compare_action = self._action("Compare…", self.compare_selected, None,
                                           "Compare two selected runs (the older one is the baseline)")

        buttons = QHBoxLayout()
        for action in (self.refresh_action, self.open_action, self.delete_action, self.compare_action):
            button = QToolButton(self)
            button.setDefaultAction(action)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            buttons.addWidget(button)
        buttons.addStretch(1)
        self.path_label = QLabel(self)
        self.path_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons.addWidget(self.path_label)

        self.message_label = QLabel(self)
        self.message_label.setTextFormat(Qt.TextFormat.PlainText)  # a store's error text is never markup
        self.message_label.setWordWrap(True)
        self.message_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message_label.hide()
        # Offered only for a corrupted or foreign file: without it, every start and every
        # run would fail on the same file until the user found and renamed it by hand.
        self.move_aside_button = QPushButton("Move it aside and start a new store…", self)
        self.move_aside_button.setToolTip("Rename the file to NAME.broken-DATE (nothing is deleted)")
        self.move_aside_button.clicked.connect(self.move_store_aside)
        self.move_aside_button.hide()

        self.tree = QTreeWidget(self)
        self.tree.setColumnCount(len(_HISTORY_HEADERS))
        self.tree.setHeaderLabels(list(_HISTORY_HEADERS))
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.tree.setSortingEnabled(True)
        self.tree.sortByColumn(0, Qt.SortOrder.DescendingOrder)
        self.tree.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.tree.header().setStretchLastSection(True)
        self.tree.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
        self.tree.addActions([self.open_action, self.compare_action, self.delete_action, self.refresh_action])
        self.tree.itemSelectionChanged.connect(self._update_actions)
        self.tree.itemDoubleClicked.connect(self._on_double_click)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(buttons)
        layout.addWidget(self.message_label)
        layout.addWidget(self.move_aside_button, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.tree, 1)
        self.refresh()

    # --- API ---

    def path(self) -> Path:
        """The store file this panel reads (the default store unless one was given)."""
        return self.store_path if self.store_path is not None else default_store_path()

    def set_store_path(self, path: Path | None) -> None:
        self.store_path = Path(path) if path is not None else None
        self.refresh()

    def refresh(self) -> bool:
        """Read the list of runs again, keeping the selection; False if the store is unusable."""
        keep = set(self.selected_run_ids())
        self.path_label.setText(str(self.path()))
        self.path_label.setToolTip(f"Results store: {self.path()}")
        try:
            with Store(self.path()) as store:
                runs = store.list_runs()
        except StoreError as exc:
            self._fail(exc)
            return False
        self.error = None
        self.move_aside_button.hide()
        self._summaries = {run.id: run for run in runs}
        self.tree.setSortingEnabled(False)
        self.tree.clear()
        for run in runs:
            self.tree.addTopLevelItem(self._item(run))
        self.tree.setSortingEnabled(True)
        for item in self._items():
            item.setSelected(item.data(0, _ID_ROLE) in keep)
        if runs:
            self._show_message(None)
        else:
            self._show_message(f"No runs yet. Finished jobs are saved to {self.path()} as they complete.")
        self._update_actions()
        return True

    def run_ids(self) -> list[str]:
        """Listed run ids in display order."""
        return [item.data(0, _ID_ROLE) for item in self._items()]

    def selected_run_ids(self) -> list[str]:
        """Selected run ids in display order."""
        return [item.data(0, _ID_ROLE) for item in self._selected_items()]

    def select_runs(self, run_ids: list[str]) -> None:
        wanted = set(run_ids)
        self.tree.clearSelection()
        for item in self._items():
            if item.data(0, _ID_ROLE) in wanted:
                item.setSelected(True)

    def load_run(self, run_id: str) -> RunResult | None:
        """Load one run (store opened and closed again); None, with a message, on failure."""
        try:
            with Store(self.path()) as store:
                run = store.load_run(run_id)
            if run.damaged:  # the intact jobs open; the damaged ones show as failed jobs saying so
                more = f" (and {len(run.damaged) - 1} more)" if len(run.damaged) > 1 else ""
                self._show_message(f"Run {run_id} is damaged in the store: {run.damaged[0]}{more}. "
                                   "The other jobs are intact.", error=True)
            return run
        except RunNotFound as exc:
            self._show_message(f"{exc} (it may have been deleted meanwhile).", error=True)
        except StoreError as exc:
            self._show_message(f"Cannot load run {run_id} from {self.path()}: {exc}", error=True)
        return None

    def open_selected(self) -> RunResult | None:
        ids = self.selected_run_ids()
        if len(ids) != 1:
            return None
        return self._open(ids[0])

    def delete_selected(self) -> int:
        """Delete the selected runs after `confirm`; returns how many were deleted."""
        ids = self.selected_run_ids()
        if not ids:
            return 0
        if len(ids) == 1:
            summary = self._summaries.get(ids[0])
            what = f"the run “{summary.name}” of {_local_time(summary.started)}" if summary else f"run {ids[0]}"
        else:
            what = f"these {len(ids)} runs"
        text = f"Delete {what}?\n\nIts results are removed from {self.path()}; this cannot be undone."
        if not self.confirm("Delete runs" if len(ids) > 1 else "Delete run", text):
            return 0
        deleted = 0
        try:
            with Store(self.path()) as store:
                for run_id in ids:
                    if store.delete_run(run_id):
                        deleted += 1
                        self.run_deleted.emit(run_id)
        except StoreError as exc:
            self.refresh()
            self._show_message(f"Cannot delete from {self.path()}: {exc}", error=True)
            return deleted
        self.refresh()
        return deleted

    def compare_selected(self) -> CompareDialog | None:
        """Open a CompareDialog for the two selected runs (older = baseline) and return it."""
        ids = self.selected_run_ids()
        if len(ids) != 2:
            return None
        runs = [run for run_id in ids if (run := self.load_run(run_id)) is not None]
        if len(runs) != 2:
            return None
        a, b = sorted(runs, key=lambda run: (run.started, run.id))
        if self.compare_dialog is not None:
            self.compare_dialog.close()
            self.compare_dialog.deleteLater()
        self.compare_dialog = CompareDialog(a, b, self)
        self.compare_dialog.show()
        return self.compare_dialog

    # --- internals ---

    def _action(self, text: str, slot: Callable[[], object], shortcut: QKeySequence.StandardKey | None,
                tip: str) -> QAction:
        action = QAction(text, self)
        action.setToolTip(tip)
        action.setStatusTip(tip)
        if shortcut is not None:
            action.setShortcut(shortcut)
            action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        action.triggered.connect(lambda _checked=False: slot())
        self.addAction(action)
        return action

    def _ask(self, title: str, text: str) -> bool:
        answer = QMessageBox.question(self, title, text, QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
                                      QMessageBox.StandardButton.No)
        return answer == QMessageBox.StandardButton.Yes

    def _item(self, run: RunSummary) -> _RunItem:
        item = _RunItem([_local_time(run.started), escape_control(run.name or "(unnamed)"), run.status,
                         f"{run.ok_jobs}/{run.jobs}", escape_control(run.host or "")])
        item.setData(0, _ID_ROLE, run.id)
        item.setData(0, _SORT_ROLE, run.started)
        item.setData(3, _SORT_ROLE, float(run.ok_jobs))
        item.setTextAlignment(3, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        tip = f"Run {run.id}\nstarted {run.started}\nfinished {run.finished or '-'}"
        for column in range(len(_HISTORY_HEADERS)):
            item.setToolTip(column, tip)
        colour = status_qcolor(_STATUS_COLOURS.get(run.status))
        if colour is not None:
            item.setForeground(2, colour)
        if run.jobs and run.ok_jobs < run.jobs:
            bad = status_qcolor(Tone.BAD)
            if bad is not None:  # always: every Tone has a colour
                item.setForeground(3, bad)
            item.setToolTip(3, f"{run.jobs - run.ok_jobs} of {plural(run.jobs, 'job')} did not finish ok")
        return item

    def _items(self) -> list[QTreeWidgetItem]:
        """Top-level items in display order."""
        items = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        return [item for item in items if item is not None]

    def _selected_items(self) -> list[QTreeWidgetItem]:
        return [item for item in self._items() if item.isSelected()]

    def _open(self, run_id: str) -> RunResult | None:
        run = self.load_run(run_id)
        if run is not None:
            self.run_opened.emit(run)
        return run

    def _on_double_click(self, item: QTreeWidgetItem, _column: int) -> None:
        self._open(item.data(0, _ID_ROLE))

    def _fail(self, exc: StoreError) -> None:
        text = self.error = str(exc)
        self._summaries = {}
        self.tree.clear()
        broken = isinstance(exc, BrokenStoreError)
        hint = ("Move it aside (it is renamed, not deleted) to start a new store." if broken else
                "Check the folder's permissions and free space.")
        self._show_message(f"Cannot show the run history.\n{text}\n{hint}", error=True)
        self.move_aside_button.setVisible(broken)
        self._update_actions()

    def move_store_aside(self) -> Path | None:
        """Rename the broken store after asking; the next run starts a new one."""
        path = self.path()
        if not self.confirm("Move the results store aside",
                            f"{path} cannot be used as a results store.\n\nRename it to "
                            f"{path.name}.broken-DATE in the same folder and start a new, empty store?"):
            return None
        try:
            moved = move_aside(path)
        except StoreError as exc:
            self._show_message(f"Cannot move the results store aside.\n{exc}", error=True)
            return None
        self.refresh()
        self._show_message(f"The old store was moved to {moved}. New runs are saved to {path}.")
        return moved

    def _show_message(self, text: str | None, error: bool = False) -> None:
        if text is None:
            self.message_label.hide()
            self.message_label.clear()
            return
        self.message_label.setText(text)
        bad = status_qcolor(Tone.BAD, self.palette().color(QPalette.ColorRole.Window))
        self.message_label.setStyleSheet(f"color: {bad.name()};" if error and bad else "")
        self.message_label.show()

    def _update_actions(self) -> None:
        count = len(self.tree.selectedItems())
        self.open_action.setEnabled(count == 1)
        self.delete_action.setEnabled(count >= 1)
        self.compare_action.setEnabled(count == 2)

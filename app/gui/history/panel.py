"""Past runs from the results store.

`HistoryPanel` opens the store only while it reads or deletes and closes it again,
so a run writing to the same store (another connection, WAL mode) is never blocked
for longer than one query. A file that is not a usable store shows its reason in
the panel instead of raising. A store this user may only read offers no Delete and no
Import. Runs whose store failed mid-run wait in the data folder's `unstored/` (app/core/
store/unstored.py): the panel says how many and stores them in one click. Comparing two
runs is app/gui/history/compare_dialog.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence, QPalette, QResizeEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
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

from app.core.errors import CryptoBenchError
from app.core.escaping import escape_control
from app.core.results.model import RunResult
from app.core.results.plausible import parse_time
from app.core.store import unstored
from app.core.store.importing import ImportOutcome, import_results
from app.core.store.store import (
    BrokenStoreError,
    RunNotFound,
    RunSummary,
    Store,
    StoreError,
    move_aside,
)
from app.core.store.target import StoreLike, StoreTarget, default_store, store_target
from app.core.vocab import RunStatus
from app.gui.history.compare_dialog import CompareDialog, local_time
from app.gui.history.trend_view import TrendDialog
from app.gui.theme import status_qcolor
from app.gui.vocab import Tone
from app.gui.words import plural

__all__ = ["HistoryPanel"]

_SORT_ROLE = int(Qt.ItemDataRole.UserRole)
_ID_ROLE = int(Qt.ItemDataRole.UserRole) + 1
# Tones of text colour, resolved against the theme when shown.
_STATUS_COLOURS: dict[str, Tone] = {
    RunStatus.FAILED: Tone.BAD,
    RunStatus.INTERRUPTED: Tone.WARN,
    RunStatus.CANCELLED: Tone.MUTED,
    RunStatus.RUNNING: Tone.INFO,
}
_HISTORY_HEADERS = ("Date", "Profile", "Status", "Jobs ok", "Machine")


def _instant(started: str) -> float:
    """A run's start as a number that orders runs by time, whatever offset it was written
    with; an unknown time sorts first."""
    moment = parse_time(started)
    return moment.timestamp() if moment is not None else float("-inf")


class _PathLabel(QLabel):
    """The store's path, shortened in the middle to the room it gets: a long path must not
    set the panel's (and so the window's) minimum width. The tooltip has it whole."""

    #: The narrowest the label asks to be, in average characters.
    MIN_CHARS = 12

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self._full = ""

    def set_path(self, text: str) -> None:
        self._full = text
        self._elide()
        self.updateGeometry()

    def full_text(self) -> str:
        return self._full

    def sizeHint(self) -> QSize:
        return QSize(self.fontMetrics().horizontalAdvance(self._full) + 4, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        return QSize(self.fontMetrics().averageCharWidth() * self.MIN_CHARS, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        self.setText(self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideMiddle, max(self.width(), 1)))


class _RunItem(QTreeWidgetItem):
    """A run row that sorts on keys (jobs ok numerically), not on display text."""

    def __lt__(self, other: QTreeWidgetItem) -> bool:
        column = self.treeWidget().sortColumn() if self.treeWidget() else 0
        mine, theirs = self.data(column, _SORT_ROLE), other.data(column, _SORT_ROLE)
        if mine is None or theirs is None or type(mine) is not type(theirs):
            return self.text(column).lower() < other.text(column).lower()
        return bool(mine < theirs)


class HistoryPanel(QWidget):
    """Past runs of a results store: open, delete, compare, follow a job (trend), import a results file.

    `confirm(title, text) -> bool` asks before deleting; replace it in tests.
    """

    run_opened = Signal(object)
    run_deleted = Signal(str)

    def __init__(self, store_path: StoreLike | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.store_path: StoreTarget | None = store_target(store_path) if store_path is not None else None
        self.confirm: Callable[[str, str], bool] = self._ask
        #: Asks for the results file to import (None: cancelled); replace it in tests.
        self.choose_import_file: Callable[[], Path | None] = self._ask_file
        self.error: str | None = None
        #: Whether this user may only read the store (a read-only file, a read-only database user).
        self.read_only = False
        self.compare_dialog: CompareDialog | None = None
        self.trend_dialog: TrendDialog | None = None
        self._summaries: dict[str, RunSummary] = {}

        self.refresh_action = self._action(
            "Refresh", self.refresh, QKeySequence.StandardKey.Refresh, "Read the list of runs again"
        )
        self.open_action = self._action("Open", self.open_selected, None, "Show the selected run's results")
        self.delete_action = self._action(
            "Delete…", self.delete_selected, QKeySequence.StandardKey.Delete, "Delete the selected runs from the store"
        )
        self.compare_action = self._action(
            "Compare…", self.compare_selected, None, "Compare two selected runs (the older one is the baseline)"
        )
        self.trend_action = self._action(
            "Trend…", self.trend_selected, None, "Follow one of the selected run's jobs across every stored run"
        )
        self.import_action = self._action(
            "Import results…",
            self.import_results_file,
            None,
            "Add a results JSON exported on this or another machine to the history",
        )

        buttons = QHBoxLayout()
        for action in (
            self.refresh_action,
            self.open_action,
            self.delete_action,
            self.compare_action,
            self.trend_action,
            self.import_action,
        ):
            button = QToolButton(self)
            button.setDefaultAction(action)
            button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
            buttons.addWidget(button)
        buttons.addStretch(1)
        self.path_label = _PathLabel(self)
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
        # Runs whose store failed mid-run, kept whole in files: the recovery is one click here.
        self.unstored_label = QLabel(self)
        self.unstored_label.setTextFormat(Qt.TextFormat.PlainText)
        self.unstored_label.setWordWrap(True)
        self.unstored_label.hide()
        self.store_unstored_button = QPushButton("Store them now", self)
        self.store_unstored_button.setToolTip(
            "Add each waiting run to this store (a part of it already stored is completed); "
            "each file stored is removed from the folder"
        )
        self.store_unstored_button.clicked.connect(lambda _checked=False: self.store_unstored())
        self.store_unstored_button.hide()

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
        self.tree.addActions(
            [
                self.open_action,
                self.compare_action,
                self.trend_action,
                self.delete_action,
                self.import_action,
                self.refresh_action,
            ]
        )
        self.tree.itemSelectionChanged.connect(self._update_actions)
        self.tree.itemDoubleClicked.connect(self._on_double_click)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(buttons)
        layout.addWidget(self.message_label)
        layout.addWidget(self.move_aside_button, 0, Qt.AlignmentFlag.AlignLeft)
        unstored_row = QHBoxLayout()
        unstored_row.addWidget(self.unstored_label, 1)
        unstored_row.addWidget(self.store_unstored_button, 0)
        layout.addLayout(unstored_row)
        layout.addWidget(self.tree, 1)
        self.refresh()

    # --- API ---

    def path(self) -> StoreTarget:
        """The store this panel reads (the default store unless one was given): an SQLite
        file or a PostgreSQL URL, shown without its password (`StoreTarget.shown`)."""
        return self.store_path if self.store_path is not None else default_store()

    def set_store_path(self, path: StoreLike | None) -> None:
        self.store_path = store_target(path) if path is not None else None
        self.refresh()

    def refresh(self) -> bool:
        """Read the list of runs again, keeping the selection; False if the store is unusable."""
        keep = set(self.selected_run_ids())
        self.path_label.set_path(str(self.path()))
        self.path_label.setToolTip(f"Results store: {self.path()}")
        try:
            with Store(self.path()) as store:
                runs = store.list_runs()
                security = store.security
                self.read_only = store.read_only
        except StoreError as exc:
            self._fail(exc)
            return False
        self.error = None
        if security is not None:  # a shared store: how the connection is protected, always in sight
            self.path_label.set_path(f"{self.path()} ({security})")
            self.path_label.setToolTip(f"Results store: {self.path()}\nConnection: {security}")
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
        self._show_unstored()
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
                self._show_message(
                    f"Run {run_id} is damaged in the store: {run.damaged[0]}{more}. The other jobs are intact.",
                    error=True,
                )
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
            what = f"the run “{summary.name}” of {local_time(summary.started)}" if summary else f"run {ids[0]}"
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
        a, b = sorted(runs, key=lambda run: (_instant(run.started), run.id))
        if self.compare_dialog is not None:
            self.compare_dialog.close()
            self.compare_dialog.deleteLater()
        self.compare_dialog = CompareDialog(a, b, self)
        self.compare_dialog.show()
        return self.compare_dialog

    def trend_selected(self) -> TrendDialog | None:
        """Open a TrendDialog over the selected run's jobs (its first job shown) and return it."""
        ids = self.selected_run_ids()
        if len(ids) != 1:
            return None
        run = self.load_run(ids[0])
        if run is None:
            return None
        if self.trend_dialog is not None:
            self.trend_dialog.close()
            self.trend_dialog.deleteLater()
        self.trend_dialog = TrendDialog(self.path(), run.jobs, self)
        self.trend_dialog.show()
        return self.trend_dialog

    def import_results_file(self, path: Path | None = None) -> ImportOutcome | None:
        """Add the run of a results JSON (`path`, else the one `choose_import_file` asks for)
        to the store and select it; a file already stored selects the run it already is.
        None, with the reason shown, when the file or the store cannot be used."""
        if path is None:
            path = self.choose_import_file()
            if path is None:
                return None
        try:
            with Store(self.path()) as store:
                outcome = import_results(store, path)
        except CryptoBenchError as exc:  # a ResultsFileError names the file and the field; a StoreError the store
            self._show_message(f"Not imported, nothing was added: {exc}", error=True)
            return None
        run = outcome.run
        shown = outcome.existing_id if outcome.existing_id is not None else run.id
        self.refresh()
        self.select_runs([shown])
        what = (
            f"“{escape_control(run.name or '(unnamed)')}” of {local_time(run.started)}, measured on "
            f"{escape_control(outcome.machine or 'an unnamed machine')}"
        )
        if outcome.completed is not None:
            self._show_message(
                f"Completed run {run.id} from {path.name}: {what}; the store held "
                f"{len(outcome.completed.jobs)} of its {plural(len(run.jobs), 'job')}."
            )
        elif outcome.added:
            self._show_message(f"Imported {path.name}: {what}, as run {run.id}.")
        else:
            self._show_message(
                f"{path.name} is already in the history ({outcome.duplicate}: run {shown}, {what}); nothing was added."
            )
        return outcome

    def store_unstored(self) -> tuple[int, list[str]]:
        """Store every run waiting in the unstored folder into this panel's store, removing
        each file the store then holds (imported, completed, or found there already); (how
        many were stored, one line per file that could not be)."""
        stored, problems = 0, []
        for path in unstored.waiting():
            try:
                with Store(self.path()) as store:
                    import_results(store, path)
            except CryptoBenchError as exc:
                problems.append(f"{path.name}: {exc}")
                continue
            unstored.forget(path)
            stored += 1
        self.refresh()
        if problems:
            self._show_message(
                f"Stored {plural(stored, 'waiting run')}; not stored: " + "; ".join(problems[:3]), error=True
            )
        else:
            self._show_message(f"Stored {plural(stored, 'waiting run')} in {self.path()}.")
        return stored, problems

    # --- internals ---

    def _show_unstored(self) -> None:
        waiting = unstored.waiting()
        shown = bool(waiting) and not self.read_only
        if shown:
            self.unstored_label.setText(
                f"{plural(len(waiting), 'run')} could not be stored when measured (the store failed mid-run) "
                f"and {'waits' if len(waiting) == 1 else 'wait'} in {unstored.folder()}."
            )
        self.unstored_label.setVisible(shown)
        self.store_unstored_button.setVisible(shown)

    def _ask_file(self) -> Path | None:
        name, _filter = QFileDialog.getOpenFileName(
            self, "Import results", str(Path.home()), "Results JSON (*.json);;All files (*)"
        )
        return Path(name) if name else None

    def _action(
        self, text: str, slot: Callable[[], object], shortcut: QKeySequence.StandardKey | None, tip: str
    ) -> QAction:
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
        answer = QMessageBox.question(
            self,
            title,
            text,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        return answer == QMessageBox.StandardButton.Yes

    def _item(self, run: RunSummary) -> _RunItem:
        item = _RunItem(
            [
                local_time(run.started),
                escape_control(run.name or "(unnamed)"),
                run.status,
                f"{run.ok_jobs}/{run.jobs}",
                escape_control(run.host or ""),
            ]
        )
        item.setData(0, _ID_ROLE, run.id)
        item.setData(0, _SORT_ROLE, _instant(run.started))  # the instant: "10:30+02:00" is before "09:00+00:00"
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
        shared = self.path().is_postgres
        broken = isinstance(exc, BrokenStoreError) and not shared  # a database is never moved
        if broken:
            hint = "Move it aside (it is renamed, not deleted) to start a new store."
        elif shared:
            hint = "Check the server, the URL in Edit > Preferences, and PGPASSWORD or ~/.pgpass."
        else:
            hint = "Check the folder's permissions and free space."
        self._show_message(f"Cannot show the run history.\n{text}\n{hint}", error=True)
        self.move_aside_button.setVisible(broken)
        self._update_actions()

    def move_store_aside(self) -> Path | None:
        """Rename the broken store after asking; the next run starts a new one."""
        path = self.path().path
        if path is None:  # a PostgreSQL store: the button is never shown for one
            return None
        if not self.confirm(
            "Move the results store aside",
            f"{path} cannot be used as a results store.\n\nRename it to "
            f"{path.name}.broken-DATE in the same folder and start a new, empty store?",
        ):
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
        self.delete_action.setEnabled(count >= 1 and not self.read_only)
        self.import_action.setEnabled(not self.read_only)
        for action, tip in (
            (self.delete_action, "Delete the selected runs from the store"),
            (self.import_action, "Add a results JSON exported on this or another machine to the history"),
        ):
            action.setToolTip(tip if not self.read_only else f"{tip} (not possible: this user may only read the store)")
        self.compare_action.setEnabled(count == 2)
        self.trend_action.setEnabled(count == 1)

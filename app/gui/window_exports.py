"""The window's File > Export actions: results as JSON/CSV, the visible plot as PNG/SVG,
and reports written on a worker thread. A base of `MainWindow`, whose state it uses:
what the window provides is declared here, so the type checker holds it to that."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, QThreadPool, Signal
from PySide6.QtWidgets import QFileDialog, QMainWindow

from app.core.analysis.spread import store_movement
from app.core.fileio import FileWriteError
from app.core.results.model import RunResult
from app.core.store.store import Store, StoreError
from app.core.store.target import StoreTarget
from app.core.vocab import ExportFormat, LogLevel
from app.gui.report_dialog import CURRENT, NO_BASELINE, ReportDialog, ReportRequest, ReportWriter
from app.report.exporters import ExportTooLarge, export

if TYPE_CHECKING:
    from app.gui.plots.panel import PlotsPanel


class ExportActions(QMainWindow):
    """File > Export of `MainWindow`.

    Signals:
        report_written(str): a report finished: its path, or "" when writing it failed
            (the error is shown).
    """

    report_written = Signal(str)

    # Provided by MainWindow.
    last_run: RunResult | None
    store_path: StoreTarget
    plots: PlotsPanel
    #: Reports are written off the GUI thread, one at a time, apart from the run's workers.
    report_pool: QThreadPool
    _report_writer: ReportWriter | None

    if TYPE_CHECKING:  # MainWindow's methods; declared only, so they never shadow the real ones

        def error(self, title: str, message: str, next_step: str) -> None: ...
        def append_log(self, level: LogLevel, text: str) -> None: ...
        def _folder(self, kind: str) -> str: ...
        def _remember_folder(self, kind: str, path: Path) -> None: ...

    def export_results(self, kind: ExportFormat) -> None:
        run = self.last_run
        if run is None:
            self.error(
                "Nothing to export",
                "No run has finished or been opened yet.",
                "Run a profile, or open a run from History.",
            )
            return
        suggested = str(Path(self._folder("exports")) / f"{run.id}.{kind}")
        path, _ = QFileDialog.getSaveFileName(
            self, f"Export results as {kind.upper()}", suggested, f"{kind.upper()} (*.{kind})"
        )
        if not path:
            return
        self.write_export(run, Path(path), kind)

    def export_plot(self, kind: str) -> None:
        tab = self.plots.tabs.tabText(self.plots.tabs.currentIndex()).lower()
        suggested = str(Path(self._folder("exports")) / f"{tab}.{kind}")
        path, _ = QFileDialog.getSaveFileName(
            self, f"Save the {tab} plot as {kind.upper()}", suggested, f"{kind.upper()} (*.{kind})"
        )
        if path:
            self.write_plot(Path(path if path.lower().endswith(f".{kind}") else f"{path}.{kind}"))

    def write_plot(self, path: Path) -> bool:
        try:
            self.plots.export_plot(path)
        except (OSError, ValueError) as exc:
            self.error("Cannot save the plot", str(exc), "Choose another folder or file name.")
            return False
        self._remember_folder("exports", path)
        self.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    def write_export(self, run: RunResult, path: Path, kind: ExportFormat) -> bool:
        try:
            export(kind, run, path)
        except FileWriteError as exc:
            self.error("Cannot export", str(exc), "Choose another folder or free some space.")
            return False
        except ExportTooLarge as exc:
            self.error("Exported, but too large to read back", str(exc), "Report and compare it from History.")
            return False
        self._remember_folder("exports", path)
        self.statusBar().showMessage(f"Exported {path}", 5000)
        return True

    def export_report(self) -> ReportDialog:
        """Open Export report (window-modal); OK writes the report in the background."""
        runs = []
        try:
            with Store(self.store_path) as store:
                runs = store.list_runs()
        except StoreError as exc:
            self.append_log(LogLevel.WARNING, f"History unavailable for reports: {exc}")
        dialog = ReportDialog(runs, self.last_run, self._folder("reports"), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(lambda: self.write_report(dialog.request()))
        dialog.open()
        return dialog

    def write_report(self, request: ReportRequest) -> ReportWriter | None:
        """Load the chosen runs and start writing; progress and the outcome go to the
        status bar and the log (errors also to a dialog)."""
        if self._report_writer is not None:
            self.error(
                "A report is being written",
                "Only one report is written at a time.",
                "Wait for the current report to finish.",
            )
            return None
        try:
            run = self.last_run if request.run_id == CURRENT else None
            baseline, movement = None, None
            if run is None or request.baseline_id != NO_BASELINE:
                with Store(self.store_path) as store:
                    if run is None:
                        run = store.load_run(request.run_id)
                    if request.baseline_id != NO_BASELINE:
                        baseline = store.load_run(request.baseline_id)
                        # What one run a side is judged against: the store's runs of its jobs.
                        movement = store_movement(store, [baseline], [run])
        except StoreError as exc:  # RunNotFound: a run deleted since the dialog listed it
            self.error("Cannot write the report", str(exc), "Choose another run in Export report.")
            return None
        if run is None:
            self.error("Nothing to report", "No run has finished or been opened yet.", "Run a profile first.")
            return None
        self._remember_folder("reports", request.path)
        writer = ReportWriter(run, baseline, request, movement)
        writer.signals.progress.connect(
            lambda done, total: self.statusBar().showMessage(f"Writing report {request.path.name}: {done}/{total}")
        )
        writer.signals.finished.connect(self._report_written)
        writer.signals.failed.connect(self._report_failed)
        self._report_writer = writer
        self.statusBar().showMessage(f"Writing report {request.path.name}…")
        self.report_pool.start(writer)
        return writer

    def _report_written(self, path: str) -> None:
        self._report_writer = None
        self.append_log(LogLevel.INFO, f"Report written: {path}")
        self.statusBar().showMessage(f"Report written: {path}", 8000)
        self.report_written.emit(path)

    def _report_failed(self, message: str) -> None:
        self._report_writer = None
        self.statusBar().clearMessage()
        self.error("Cannot write the report", message, "Choose another folder or file name and try again.")
        self.report_written.emit("")

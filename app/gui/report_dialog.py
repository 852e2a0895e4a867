"""Export report...: choose a run (the current one or any stored run), an optional
baseline, the format and page size, and where to write; the report is then written on
a worker thread with its progress in the status bar, so the window stays responsive."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.core.analysis.evidence import MovementSource
from app.core.errors import CryptoBenchError
from app.core.results.model import RunResult
from app.core.store.store import RunSummary
from app.core.vocab import ExportFormat, PageSize
from app.gui.messages import FittedLabel
from app.gui.pool_task import PoolTask, Progress
from app.gui.theme import status_colour
from app.gui.vocab import Tone
from app.gui.words import plural
from app.report.exporters import EXPORTERS, export

#: The run being shown in the window, when it is not (yet) among the stored ones.
CURRENT = "__current__"
NO_BASELINE = ""
REPORT_FORMATS = [e for e in EXPORTERS.values() if e.is_report]


@dataclass(frozen=True)
class ReportRequest:
    run_id: str  # CURRENT for the window's run
    baseline_id: str  # NO_BASELINE for none
    format: str  # a report's ExportFormat: PDF or MARKDOWN
    page_size: str
    path: Path
    appendix: bool = True  # the full-statistics appendix


def _run_text(summary: RunSummary) -> str:
    return f"{summary.id} · {summary.name} · {summary.ok_jobs}/{plural(summary.jobs, 'job')} ok · {summary.host or '?'}"


class ReportDialog(QDialog):
    """Choices only; the caller loads the runs and writes the file."""

    def __init__(
        self, runs: list[RunSummary], current: RunResult | None, folder: str, parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export report")
        self.setMinimumWidth(620)
        self._folder = folder
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.run = QComboBox()
        stored = {summary.id for summary in runs}
        if current is not None and current.id not in stored:
            self.run.addItem(f"{current.id} · {current.name} (this window's run, not stored)", CURRENT)
        for summary in runs:
            self.run.addItem(_run_text(summary), summary.id)
        if current is not None:
            self.run.setCurrentIndex(max(0, self.run.findData(current.id if current.id in stored else CURRENT)))
        form.addRow("Run", self.run)
        self.baseline = QComboBox()
        self._runs = list(runs)
        self._current_id = current.id if current is not None else None
        self._fill_baselines()
        self.run.currentIndexChanged.connect(self._fill_baselines)
        form.addRow("Compare with", self.baseline)
        self.format = QComboBox()
        for exporter in REPORT_FORMATS:
            self.format.addItem(exporter.title, exporter.name)
        self.format.setCurrentIndex(max(0, self.format.findData(ExportFormat.PDF)))
        form.addRow("Format", self.format)
        self.page_size = QComboBox()
        self.page_size.addItems(list(PageSize))
        form.addRow("Page size", self.page_size)
        self.appendix = QCheckBox("Appendix with every statistic of every job")
        self.appendix.setChecked(True)
        form.addRow("", self.appendix)
        self.path = QLineEdit()
        browse = QPushButton("Browse...")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(browse)
        form.addRow("File", row)
        layout.addLayout(form)
        # Two lines kept for the reason whether there is one or not: a reason appearing
        # must not push OK down from under the pointer (app/gui/messages.py).
        self.problem = FittedLabel(2)
        bad = status_colour(Tone.BAD, self.palette().color(QPalette.ColorRole.Window))
        self.problem.setStyleSheet(f"color: {bad};")
        layout.addWidget(self.problem)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        for combo in (self.run, self.baseline, self.format, self.page_size):
            combo.currentIndexChanged.connect(self._validate)
        self.format.currentIndexChanged.connect(self._follow_format)
        self.path.textChanged.connect(self._validate)
        self._suggest_path()
        self._validate()

    # --- choices ------------------------------------------------------------------------

    def _fill_baselines(self, *_: object) -> None:
        """Every stored run but the one reported on: a run is never its own baseline."""
        chosen = self.run.currentData()
        reported = self._current_id if chosen == CURRENT else chosen
        previous = self.baseline.currentData()
        self.baseline.blockSignals(True)
        self.baseline.clear()
        self.baseline.addItem("(none)", NO_BASELINE)
        for summary in self._runs:
            if summary.id != reported:
                self.baseline.addItem(_run_text(summary), summary.id)
        self.baseline.setCurrentIndex(max(0, self.baseline.findData(previous)))
        self.baseline.blockSignals(False)

    def request(self) -> ReportRequest:
        return ReportRequest(
            run_id=str(self.run.currentData()),
            baseline_id=str(self.baseline.currentData()),
            format=str(self.format.currentData()),
            page_size=self.page_size.currentText(),
            path=Path(self.path.text().strip()).expanduser(),
            appendix=self.appendix.isChecked(),
        )

    def reason(self) -> str:
        """Why OK is disabled ("" when it is not)."""
        if self.run.count() == 0:
            return "There is no run to report on: run a profile first."
        if not self.path.text().strip():
            return "Choose the file to write."
        request = self.request()
        if request.baseline_id != NO_BASELINE and request.baseline_id == request.run_id:
            return "The baseline is the run itself: choose another run to compare with, or (none)."
        if not request.path.parent.is_dir():
            return f"The folder {request.path.parent} does not exist."
        return ""

    def _validate(self) -> None:
        reason = self.reason()
        self.problem.set_message(reason)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(not reason)

    def _suffix(self) -> str:
        return EXPORTERS[ExportFormat(self.format.currentData())].suffix

    def _suggest_path(self) -> None:
        run_id = str(self.run.currentData() or "report")
        name = "report" if run_id == CURRENT else f"report-{run_id}"
        self.path.setText(str(Path(self._folder) / f"{name}{self._suffix()}"))

    def _follow_format(self) -> None:
        text = self.path.text().strip()
        if text:
            self.path.setText(str(Path(text).with_suffix(self._suffix())))
        self.page_size.setEnabled(self.format.currentData() == ExportFormat.PDF)

    def _browse(self) -> None:
        exporter = EXPORTERS[ExportFormat(self.format.currentData())]
        path, _ = QFileDialog.getSaveFileName(self, "Export report", self.path.text(), exporter.file_filter)
        if path:
            self.path.setText(path)


class ReportWriter(PoolTask[str]):
    """Builds and writes one report on a pool thread (Qt paints PDFs off the GUI thread).
    `signals.finished` carries the path written; `signals.failed` the message for a dialog."""

    def __init__(
        self,
        run: RunResult,
        baseline: RunResult | None,
        request: ReportRequest,
        movement: MovementSource | None = None,
    ) -> None:
        # OSError: the file (FileWriteError names it); CryptoBenchError: any layer's own failure.
        super().__init__(self._write, expected=(OSError, CryptoBenchError))
        self.run_result, self.baseline, self.request, self.movement = run, baseline, request, movement

    def _write(self, progress: Progress) -> str:
        export(
            self.request.format,
            self.run_result,
            self.request.path,
            baseline=self.baseline,
            movement=self.movement,
            page_size=self.request.page_size,
            progress=progress,
            appendix=self.request.appendix,
        )
        return str(self.request.path)

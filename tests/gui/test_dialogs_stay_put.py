"""A reason appearing in a dialog does not move its buttons or fields from under the
pointer: the report dialog keeps two lines for its reason, Preferences keeps the
parallel-jobs warning's space (app/gui/messages.py, report_dialog.py, dialogs.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QWidget

from app.core.store.store import Store
from app.gui.dialogs import PreferencesDialog
from app.gui.report_dialog import NO_BASELINE, ReportDialog
from tests.helpers.report_runs import RUN_ID, build_run


def _y(widget: QWidget, top: QWidget) -> int:
    QApplication.processEvents()
    return widget.mapTo(top, QPoint(0, 0)).y()


def test_the_report_dialogs_ok_stays_where_it_was(qtbot: Any, tmp_path: Path) -> None:
    run = build_run(RUN_ID, "2026-11-21T10:04:00+00:00")
    with Store(tmp_path / "store.sqlite3") as store:
        store.begin_run(run)
        store.finish_run(run.id, "finished", run.started)
        runs = store.list_runs()
    dialog = ReportDialog(runs, None, str(tmp_path), None)
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    dialog.baseline.setCurrentIndex(dialog.baseline.findData(NO_BASELINE))
    dialog.path.setText(str(tmp_path / "report.pdf"))
    assert ok.isEnabled()
    before = _y(ok, dialog)
    dialog.path.setText(str(tmp_path / "missing-folder" / "a-rather-long-name-for-a-report" / "r.pdf"))
    assert not ok.isEnabled() and "does not exist" in dialog.problem.full_text()
    assert _y(ok, dialog) == before


def test_preferences_keep_the_warnings_space(qtbot: Any) -> None:
    dialog = PreferencesDialog(1, "system")
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    before = _y(dialog.theme, dialog)
    dialog.workers.setValue(2)
    assert dialog.warning.isVisible() and _y(dialog.theme, dialog) == before
    dialog.workers.setValue(1)
    assert not dialog.warning.isVisible() and _y(dialog.theme, dialog) == before

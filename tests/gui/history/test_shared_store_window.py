"""The window on a shared PostgreSQL store (a real server: tests/helpers/postgres.py): History and
Trend show the runs other processes wrote there, by machine; Edit > Preferences chooses the
store and never saves a password."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.cli.main import main
from app.core.results.model import to_json
from app.core.store.store import Store
from app.gui.history.panel import HistoryPanel
from app.gui.history.trend_view import TrendDialog
from tests.helpers import records
from tests.helpers import trend_cases as cases
from tests.helpers.windows import opened_window

pytestmark = pytest.mark.xdist_group("postgres")


def test_history_and_trend_show_what_command_lines_wrote_to_the_shared_store(
    qtbot: Any, pg_url: str, tmp_path: Path
) -> None:
    """Two command lines import their machines' runs into one store; the window sees both."""
    local = tmp_path / "local.sqlite3"
    cases.build(local)
    with Store(local) as store:
        runs = [store.load_run(summary.id) for summary in store.list_runs()]
    for i, run in enumerate(runs):  # each machine's command line adds its own runs
        path = tmp_path / f"{i}.json"
        path.write_text(to_json(run))
        assert main(["import", str(path), "--store", pg_url]) == 0
    panel = HistoryPanel(pg_url)
    qtbot.addWidget(panel)
    assert panel.error is None
    shown = {panel.tree.topLevelItem(i).text(0) for i in range(panel.tree.topLevelItemCount())}
    assert len(shown) == len(runs)
    machines = {
        panel.tree.topLevelItem(i).text(c)
        for i in range(panel.tree.topLevelItemCount())
        for c in range(panel.tree.columnCount())
    }
    assert {"alpha", "beta"} <= machines
    assert "sslmode=prefer, not encrypted" in panel.path_label.toolTip()
    dialog = TrendDialog(pg_url, [cases.job(cases.RUNS[0][0], 0, 1.0)])
    qtbot.addWidget(dialog)
    assert {name: list(curve.getData()[0]) for name, curve in dialog.machine_curves.items()} == {
        "alpha": [0.0, 1.0, 2.0],
        "beta": [3.0],
    }


def test_preferences_choose_the_store_and_refuse_a_password(
    qtbot: Any, pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Store(pg_url) as store:
        store.add_run(records.run("20260301-000000-cccccc", environment={"hostname": "gamma"}))
    settings_file = tmp_path / "settings.ini"
    from PySide6.QtCore import QSettings

    from app.gui.main_window import MainWindow

    settings = QSettings(str(settings_file), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings)  # no store given: Preferences may choose one
    qtbot.addWidget(win)
    try:
        dialog = win.show_preferences()
        assert dialog.store.isEnabled() and dialog.store.text() == ""
        with_password = pg_url.replace("cbadmin@", "cbadmin:hunter2@")
        dialog.store.setText(with_password)
        assert not dialog.ok_button.isEnabled()
        assert dialog.store_note.text().startswith("Not saved: a password cannot be saved with the store")
        dialog.store.setText(pg_url)
        assert dialog.ok_button.isEnabled()
        dialog.accept()
        assert win.store_path.url == pg_url
        assert win.history.tree.topLevelItemCount() == 1
        settings.sync()
        assert "hunter2" not in settings_file.read_text()
        with pytest.raises(ValueError, match="password"):  # never written, whoever calls
            win.apply_preferences(1, "system", with_password)
    finally:
        win.controller.shutdown()
    monkeypatch.setenv("CRYPTOBENCH_STORE", str(tmp_path / "other.sqlite3"))
    with opened_window(qtbot, tmp_path / "w") as other:
        dialog = other.show_preferences()
        assert not dialog.store.isEnabled() and "opened on a store of its own" in dialog.store_note.text()
    win2 = MainWindow(settings=QSettings(str(settings_file), QSettings.Format.IniFormat))
    qtbot.addWidget(win2)
    try:
        assert win2.store_path.path == tmp_path / "other.sqlite3"  # the environment wins over Preferences
        dialog = win2.show_preferences()
        assert not dialog.store.isEnabled() and "CRYPTOBENCH_STORE" in dialog.store_note.text()
    finally:
        win2.controller.shutdown()


def test_a_shared_store_newer_than_the_app_stops_a_run_saying_what_to_do(
    qtbot: Any, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import psycopg
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QMessageBox

    from app.gui.main_window import MainWindow

    with Store(pg_url):
        pass
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    # Closing drops the unsaved profile without asking (a test never waits on a dialog).
    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    win = MainWindow(settings=QSettings(), store_path=pg_url)
    qtbot.addWidget(win)
    try:
        win.panel.set_checked("sha256")
        assert win.start_run() is False
        assert win.last_error is not None
        title, message, fix = win.last_error
        assert title == "Cannot start the run" and "written by a newer CryptoBench (store schema 99" in message
        assert fix == "Upgrade CryptoBench, or choose another store in Edit > Preferences."  # never "move aside"
        assert not win.history.move_aside_button.isVisibleTo(win.history)
    finally:
        for box in win.findChildren(QMessageBox):
            box.close()
        win.controller.shutdown()


def test_a_read_only_user_is_offered_no_delete_and_no_import(qtbot: Any, pg_url: str) -> None:
    import psycopg

    from tests.helpers.postgres import ADMIN

    with Store(pg_url) as store:
        store.add_run(records.run("20260301-000000-cccccc", environment={"hostname": "gamma"}))
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("GRANT USAGE ON SCHEMA public TO reader")
        conn.execute("GRANT SELECT ON runs, jobs, meta TO reader")
    panel = HistoryPanel(pg_url.replace(f"{ADMIN}@", "reader@"))
    qtbot.addWidget(panel)
    panel.select_runs(["20260301-000000-cccccc"])
    assert panel.read_only and panel.selected_run_ids() == ["20260301-000000-cccccc"]
    assert not panel.delete_action.isEnabled() and not panel.import_action.isEnabled()
    assert "may only read" in panel.delete_action.toolTip()
    assert panel.open_action.isEnabled() and panel.trend_action.isEnabled()  # reading still works

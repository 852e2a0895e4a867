"""A corrupted, foreign, truncated or newer store: a clear error, the option to move it
aside (kept, never deleted), and never a crash loop on start — CLI and window."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings

from app.cli.main import main as cli_main
from app.core.store.store import BrokenStoreError, Store, StoreError, move_aside
from tests.helpers import records


def _garbage(path: Path) -> None:
    path.write_bytes(b"this is not a database " * 100)


def _foreign(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    db.commit()
    db.close()


def _newer(path: Path) -> None:
    Store(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    db.commit()
    db.close()


def _truncated(path: Path) -> None:
    """A real store with runs, cut in half (a copy interrupted, a disk error)."""
    with Store(path) as store:
        for k in range(20):
            run = records.run(f"run-{k}", status="running", profile={"name": "x" * 2000})
            store.begin_run(run)
            store.add_job(
                run.id, records.job(run.id, 0, 64, scheme="sha256", params={}, label="SHA-256", family="hash")
            )
            store.finish_run(run.id, "finished", "2026-01-01T00:00:01+00:00")
        store._sqlite.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


BREAKERS = {"garbage": _garbage, "foreign SQLite file": _foreign, "newer schema": _newer}


@pytest.mark.parametrize("kind", sorted(BREAKERS))
def test_broken_store_is_a_named_error_and_moves_aside_intact(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "results.sqlite3"
    BREAKERS[kind](path)
    original = path.read_bytes()
    with pytest.raises(BrokenStoreError) as info:
        Store(path)
    assert str(path) in str(info.value)
    moved = move_aside(path)
    assert moved.read_bytes() == original  # kept byte for byte, not deleted or "repaired"
    assert moved.name.startswith("results.sqlite3.broken-")
    with Store(path) as store:  # a new store starts in its place
        assert store.list_runs() == []


def test_truncated_store_is_refused_or_reported_never_silently_used(tmp_path: Path) -> None:
    """Half a store: SQLite may still open it; then the integrity check must say so."""
    path = tmp_path / "results.sqlite3"
    _truncated(path)
    try:
        with Store(path) as store:
            try:
                problems = store.integrity_problems()
                store.list_runs()
            except StoreError as exc:  # a page SQLite cannot read: the file names itself
                assert str(path) in str(exc)
                problems = ["unreadable"]
    except BrokenStoreError:
        return  # refused at open: fine
    assert problems, "a store cut in half passed the integrity check"


def test_move_aside_takes_the_wal_and_shm_files_too(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite3"
    _garbage(path)
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).write_bytes(b"side file")
    moved = move_aside(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([moved.name, moved.name + "-wal", moved.name + "-shm"])


def test_move_aside_twice_in_one_second_keeps_both(tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite3"
    _garbage(path)
    first = move_aside(path)
    _foreign(path)
    second = move_aside(path)
    assert first != second and first.exists() and second.exists()


def test_locked_store_is_not_called_broken(tmp_path: Path) -> None:
    """A store another process holds locked is busy, not broken: no move-aside offer."""
    path = tmp_path / "results.sqlite3"
    Store(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA journal_mode = DELETE")  # let the lock block readers of the schema
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError) as info:
            opened = Store.__new__(Store)
            # The store's own 10 s busy timeout would only make the test slow.
            import app.core.store.store as store_module

            original_connect = store_module.sqlite3.connect
            store_module.sqlite3.connect = lambda *a, **k: original_connect(*a, **{**k, "timeout": 0.2})
            try:
                opened.__init__(path)
            finally:
                store_module.sqlite3.connect = original_connect
        assert not isinstance(info.value, BrokenStoreError)
        assert "locked" in str(info.value)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@pytest.mark.parametrize("kind", sorted(BREAKERS))
def test_cli_names_the_file_and_offers_move_aside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    path = tmp_path / "results.sqlite3"
    BREAKERS[kind](path)
    assert cli_main(["history", "--store", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and "cryptobench store --move-aside" in err and "Traceback" not in err
    assert cli_main(["store", "--store", str(path)]) == 1  # the check reports, moves nothing
    assert path.exists()
    capsys.readouterr()
    assert cli_main(["store", "--store", str(path), "--move-aside"]) == 0
    out = capsys.readouterr().out
    assert "moved" in out and not path.exists()
    assert cli_main(["history", "--store", str(path)]) == 0  # a new, empty store


def test_cli_refuses_to_move_a_sound_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "results.sqlite3"
    Store(path).close()
    assert cli_main(["store", "--store", str(path), "--move-aside"]) == 2
    assert "nothing was moved" in capsys.readouterr().err
    assert path.exists()


def test_window_starts_with_a_broken_store_and_moves_it_aside(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No crash loop: the window opens, says what is wrong, Run is refused with the fix,
    and after Move aside a run is stored in a new store."""
    from PySide6.QtWidgets import QMessageBox

    from app.gui.main_window import MainWindow

    monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    path = tmp_path / "results.sqlite3"
    _garbage(path)
    window = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat), store_path=path)
    qtbot.addWidget(window)
    window.show()
    try:
        history = window.history
        history.set_store_path(path)
        assert history.error and str(path) in history.error
        assert not history.move_aside_button.isHidden()
        window.panel.set_checked("sha256")
        window.panel.samples.setValue(3)
        assert not window.start_run()
        assert window.last_error is not None and "Move the file aside" in window.last_error[2]
        assert not window.controller.running

        history.confirm = lambda title, text: True
        moved = history.move_store_aside()
        assert moved is not None and moved.exists() and history.error is None
        assert history.move_aside_button.isHidden()
        with qtbot.waitSignal(window.controller.run_finished, timeout=60_000) as finished:
            assert window.start_run()
        assert finished.args[0].status == "finished"
        with Store(path) as store:
            assert [run.id for run in store.list_runs()] == [finished.args[0].id]
    finally:
        window.controller.shutdown()


def test_window_with_an_unreadable_folder_offers_no_move_aside(qtbot: Any, tmp_path: Path) -> None:
    """A store path under a regular file cannot be created: an error, but not "broken"."""
    from app.gui.history.panel import HistoryPanel

    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    panel = HistoryPanel(blocker / "results.sqlite3")
    qtbot.addWidget(panel)
    assert panel.error and "a-file" in panel.error
    assert panel.move_aside_button.isHidden()

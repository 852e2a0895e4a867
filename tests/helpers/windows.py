"""The main window as the window tests open it: settings and store in the test's folder
(never the user's), closed with its controller shut down."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox

from app.gui.main_window import MainWindow


@contextmanager
def opened_window(
    qtbot: Any,
    tmp_path: Path,
    *,
    monkeypatch: pytest.MonkeyPatch | None = None,
    size: tuple[int, int] | None = None,
    show: bool = False,
    forget_run: bool = False,
) -> Iterator[MainWindow]:
    """`monkeypatch`: answer every modal question "Discard" (closing drops the unsaved
    profile; a test never waits on a dialog). `size`: shown at that size and exposed (the
    layout tests measure a window on screen). `forget_run`: a test set `controller.run` by
    hand (no runner behind it): cleared before the shutdown."""
    if monkeypatch is not None:
        monkeypatch.setattr(QMessageBox, "question", lambda *a, **k: QMessageBox.StandardButton.Discard)
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    win = MainWindow(settings=settings, store_path=tmp_path / "store.sqlite3")
    qtbot.addWidget(win)
    if size is not None:
        win.resize(*size)
    if show or size is not None:
        win.show()
    if size is not None:
        qtbot.waitExposed(win)
    try:
        yield win
    finally:
        if forget_run:
            win.controller.run = None
        win.controller.shutdown()

"""Cycles holding Qt objects are freed on the window's thread, never on a worker thread
(app/gui/gui_thread_gc.py: the collector on a pool thread once deadlocked the window)."""

from __future__ import annotations

import gc
import threading
from typing import Any

from PySide6.QtCore import QObject, Qt

from app.gui.gui_thread_gc import collected_on_the_gui_thread


class _Cycle:
    """A Qt object reachable only through a reference cycle: only the collector frees it."""

    def __init__(self, freed_on: list[int]) -> None:
        self.me = self
        self.qobject = QObject()
        self.qobject.destroyed.connect(
            lambda *_: freed_on.append(threading.get_ident()), Qt.ConnectionType.DirectConnection
        )


def test_a_worker_thread_that_allocates_never_runs_the_collector(qtbot: Any) -> None:
    freed_on: list[int] = []
    gc.collect()
    with collected_on_the_gui_thread(interval_s=0.05):
        assert not gc.isenabled()
        _Cycle(freed_on)

        kept: list[object] = []

        def allocate() -> None:  # ten times over the threshold that starts a collection
            kept.extend([[]] for _ in range(10 * gc.get_threshold()[0]))

        worker = threading.Thread(target=allocate)
        worker.start()
        worker.join()
        assert freed_on == []  # the worker allocated past the threshold and collected nothing

        def freed_while_allocating() -> bool:  # by the timer, once the counts call for it
            kept.extend([[]] for _ in range(gc.get_threshold()[0]))
            return bool(freed_on)

        qtbot.waitUntil(freed_while_allocating, timeout=5000)
    assert freed_on == [threading.get_ident()]


def test_what_the_block_leaves_in_cycles_is_freed_when_it_ends(qtbot: Any) -> None:
    freed_on: list[int] = []
    before = gc.isenabled()
    with collected_on_the_gui_thread(interval_s=3600):  # the timer never fires here
        _Cycle(freed_on)
    assert freed_on == [threading.get_ident()]
    assert gc.isenabled() == before  # the automatic collector as it was


def test_the_window_runs_with_the_collector_on_its_thread(qtbot: Any, monkeypatch: Any, tmp_path: Any) -> None:
    """`app.gui.app.main` holds the automatic collector off while the window lives (a
    screenshot session: its settings and store are temporary)."""
    from app.gui import app as gui_app
    from app.gui.screenshot import Plan

    seen: list[bool] = []
    real_show = gui_app._show

    def spy(*args: Any) -> int:
        seen.append(gc.isenabled())
        return real_show(*args)

    monkeypatch.setattr(gui_app, "_show", spy)
    gc.enable()  # as in a process of its own (this test's fixture holds it off, as the window does)
    try:
        assert gui_app.main([], plan=Plan("quick", False, tmp_path / "shot.png", None, None, (1024, 700))) == 0
        assert seen == [False]
        assert gc.isenabled()
    finally:
        gc.disable()

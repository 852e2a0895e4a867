"""What the window offers at a 1024x700 screen: the results' figures without a sideways
scroll, the CLI's quick check (Run > Quick check (reduced)), and a Getting started page
reachable from Help that the frozen app bundles too."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QApplication

from app.core.resources import resource_path
from app.gui.dialogs import GETTING_STARTED
from app.gui.main_window import REDUCED_NOTE, MainWindow
from app.gui.results.cells import Column
from tests.helpers.paths import ROOT
from tests.helpers.records import job, run
from tests.helpers.windows import opened_window


@pytest.fixture
def window(qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MainWindow]:
    with opened_window(qtbot, tmp_path, monkeypatch=monkeypatch, size=(1024, 700)) as win:
        yield win


def test_the_key_columns_fit_at_1024_by_700(window: MainWindow) -> None:
    label = "ECDH brainpoolP256r1 + SHA-256 + AES-256-GCM [tinyec] (Nagle on) over the intercontinental link"
    params = {"curve": "brainpoolP256r1", "kdf": "hkdf-sha256", "note": "x" * 60}
    jobs = [
        job(index=k, label=label, params=params, metrics={"encrypt": [1e-6 * (k + 1)] * 20}, message_size=1 << 20)
        for k in range(3)
    ]
    window.show_run(run("r1", jobs))
    QApplication.processEvents()
    view = window.table.view
    assert window.table.isVisible() and view.horizontalScrollBar().value() == 0
    for column in (Column.SCHEME, Column.SIZE, Column.METRIC, Column.MEDIAN):
        right = view.columnViewportPosition(column) + view.columnWidth(column)
        assert 0 <= view.columnViewportPosition(column) and right <= view.viewport().width(), column
    # A cut label keeps its whole text in the tooltip.
    from PySide6.QtCore import Qt

    tip = window.table.proxy.index(0, Column.SCHEME).data(Qt.ItemDataRole.ToolTipRole)
    assert label in tip


def test_quick_check_runs_the_reduced_profile_and_says_so(window: MainWindow, qtbot: Any) -> None:
    assert window.quick_action in window.menuBar().actions()[2].menu().actions()  # the Run menu
    window.panel.set_checked("sha256")
    window.panel.samples.setValue(200)
    assert window.quick_action.isEnabled()
    with qtbot.waitSignal(window.controller.run_finished, timeout=120_000) as finished:
        window.quick_action.trigger()
        assert window.status_job.text().startswith("Quick check (reduced)")
    stored = finished.args[0]
    counts = [m.stats.n for j in stored.jobs for m in j.metrics.values()]
    assert stored.name.endswith("(reduced)") and counts and max(counts) <= 3, counts
    text = window.log.toPlainText()
    assert REDUCED_NOTE in text and "quick check, reduced" in window.status_job.text()
    # The next full run is not marked.
    with qtbot.waitSignal(window.controller.run_finished, timeout=120_000):
        window.panel.samples.setValue(3)
        window.start_run()
    assert "quick check" not in window.status_job.text()


def test_getting_started_is_reachable_from_help_and_is_the_readmes_tour(window: MainWindow, qtbot: Any) -> None:
    help_menu = window.menuBar().actions()[-1].menu()
    assert window.getting_started_action in help_menu.actions()
    dialog = window.show_getting_started()
    qtbot.addWidget(dialog)
    text = dialog.browser.toPlainText()
    assert "File > Presets" in text and "Quick check (reduced)" in text and "could not be read" not in text
    page = resource_path(*GETTING_STARTED).read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tour = readme.split("## A five-minute tour", 1)[1].split("\n## ", 1)[0]

    def words(chunk: str) -> str:
        return " ".join(chunk.replace(".venv/bin/", "").split())

    # The window's steps and the terminal's commands are the README's own, word for word.
    steps = tour.split("**In the window** (`make run`):", 1)[1].split("**In a terminal**", 1)[0]
    assert words(steps) in words(page)
    for command in re.findall(r"^\.venv/bin/(cryptobench [^#\n]*?)\s*(?:#|$)", tour, re.MULTILINE):
        assert command in page


def test_the_frozen_app_bundles_the_page() -> None:
    spec = (ROOT / "packaging" / "cryptobench.spec").read_text(encoding="utf-8")
    assert 'datas = [(str(ROOT / "resources"), "resources")]' in spec
    assert resource_path(*GETTING_STARTED).is_relative_to(ROOT / "resources")

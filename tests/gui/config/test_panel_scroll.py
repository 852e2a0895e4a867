"""The configuration panel in its scroll area (app/gui/config/panel_scroll.py): the wheel
over a field without focus scrolls the panel and changes nothing (it had changed CPU
placement to "Free" and Samples 30 to 28), and the panel fits its dock at a window 1024
pixels wide in every state its editors can take, so it never scrolls sideways (Link >
Custom made it 480 pixels wide in a 417-pixel viewport: focus on Emulation cut every
label at its left edge)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import (
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QFormLayout,
    QLabel,
    QScrollArea,
    QScrollBar,
    QWidget,
)

from app.core.vocab import Mode
from app.gui.config.panel import ConfigPanel
from app.gui.main_window import MainWindow
from tests.helpers.windows import opened_window


@pytest.fixture
def window(qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MainWindow]:
    with opened_window(qtbot, tmp_path, monkeypatch=monkeypatch, size=(1024, 700)) as win:
        yield win


def _scroll(window: MainWindow) -> QScrollArea:
    scroll = window.config_dock.widget()
    assert isinstance(scroll, QScrollArea)
    return scroll


def _set_mode(panel: ConfigPanel, mode: Mode) -> None:
    panel.mode.setCurrentIndex(panel.mode.findData(mode))


def _choose_link(panel: ConfigPanel, start: str) -> None:
    choice = panel.settings_editor.link.choice
    panel.settings_editor.link.choice.setCurrentIndex(
        next(k for k in range(choice.count()) if choice.itemText(k).startswith(start))
    )


def _loopback(panel: ConfigPanel) -> None:
    panel.tree.setCurrentItem(panel.set_checked("x25519"))
    _set_mode(panel, Mode.LOOPBACK)


def _custom_link(panel: ConfigPanel) -> None:
    _loopback(panel)
    _choose_link(panel, "Custom")


def _sweep(panel: ConfigPanel) -> None:
    _loopback(panel)
    _choose_link(panel, "Sweep")


def _cluster_load(panel: ConfigPanel) -> None:
    panel.tree.setCurrentItem(panel.set_checked("x25519"))
    _set_mode(panel, Mode.LOAD)
    panel.settings_editor.load.cluster.setText("tcp://10.0.0.5:8786")
    _choose_link(panel, "Custom")


def _remote(panel: ConfigPanel) -> None:
    panel.tree.setCurrentItem(panel.set_checked("rsa-oaep"))
    _set_mode(panel, Mode.REMOTE)


def _mixed(panel: ConfigPanel) -> None:
    """Two jobs of different settings: every field says "mixed"."""
    _custom_link(panel)
    panel.set_checked("ecdh")
    panel.settings_editor.samples.setValue(7)  # for x25519 only, then both picked
    panel.tree.clearSelection()


#: What the panel can show: each editor the job settings open.
STATES: dict[str, Callable[[ConfigPanel], None]] = {
    "one job ticked": lambda panel: panel.set_checked("aes-gcm") and None,
    "custom link": _custom_link,
    "sweep over links": _sweep,
    "load from a cluster over a link": _cluster_load,
    "remote": _remote,
    "mixed": _mixed,
}


def _fields(panel: QWidget) -> list[QWidget]:
    """Every field of the panel a wheel could change, shown and enabled."""
    found: list[QWidget] = [*panel.findChildren(QAbstractSpinBox), *panel.findChildren(QComboBox)]
    found += [slider for slider in panel.findChildren(QAbstractSlider) if not isinstance(slider, QScrollBar)]
    return [field for field in found if field.isVisibleTo(panel) and field.isEnabled()]


def _name(panel: ConfigPanel, field: QWidget) -> str:
    """The field as the panel labels it ("Samples", "Emulation"), for a failure's message."""
    for form in panel.findChildren(QFormLayout):
        label = form.labelForField(field)
        if isinstance(label, QLabel) and label.text():
            return f"{type(field).__name__} {label.text()!r}"
    return f"{type(field).__name__} {field.toolTip()[:60]!r}"


def _value(field: QWidget) -> Any:
    if isinstance(field, QAbstractSpinBox):
        return field.text()
    if isinstance(field, QComboBox):
        return field.currentIndex()
    assert isinstance(field, QAbstractSlider)
    return field.value()


def _wheel(field: QWidget, notches: int = -1) -> None:
    """One notch of the wheel over the middle of `field` (down for a negative count)."""
    middle = QPointF(field.width() / 2, field.height() / 2)
    event = QWheelEvent(
        middle,
        QPointF(field.mapToGlobal(middle.toPoint())),
        QPoint(),
        QPoint(0, 120 * notches),
        Qt.MouseButton.NoButton,
        Qt.KeyboardModifier.NoModifier,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    QApplication.sendEvent(field, event)


@pytest.mark.parametrize("state", list(STATES))
def test_the_wheel_over_a_field_without_focus_scrolls_the_panel_and_changes_nothing(
    window: MainWindow, qtbot: Any, state: str
) -> None:
    panel, scroll = window.panel, _scroll(window)
    STATES[state](panel)
    bar = scroll.verticalScrollBar()
    assert bar.maximum() > 0, "the panel is taller than its dock: there is something to scroll"
    window.table.view.setFocus()  # the focus is elsewhere, as after a click on the results
    fields = _fields(panel)
    assert len(fields) >= 7, [type(f).__name__ for f in fields]  # the numbers, mode and placement at least
    for field in fields:
        assert not field.hasFocus()
        assert field.focusPolicy() == Qt.FocusPolicy.StrongFocus, f"the wheel would give {field} focus"
        bar.setValue(bar.maximum() // 2)
        before, where = _value(field), bar.value()
        _wheel(field)
        assert _value(field) == before, f"the wheel changed {_name(panel, field)}"
        assert bar.value() > where, f"the wheel over {_name(panel, field)} did not scroll the panel"


def test_a_field_with_focus_takes_the_wheel(window: MainWindow, qtbot: Any) -> None:
    panel = window.panel
    _loopback(panel)
    window.activateWindow()
    samples = panel.settings_editor.samples
    samples.setFocus()
    qtbot.waitUntil(samples.hasFocus, timeout=5000)
    before = samples.value()
    _wheel(samples, notches=1)
    assert samples.value() == before + 1
    placement = panel.settings_editor.placement
    placement.setFocus()
    qtbot.waitUntil(placement.hasFocus, timeout=5000)
    index = placement.currentIndex()
    _wheel(placement, notches=-1 if index + 1 < placement.count() else 1)
    assert placement.currentIndex() != index


def test_fields_made_later_are_settled_too(window: MainWindow) -> None:
    """A scheme's parameter editors are made when its row is selected: each of them too."""
    panel = window.panel
    for row in panel.rows():
        panel.tree.setCurrentItem(row)
        for field in _fields(panel.scheme_box):
            assert field.focusPolicy() == Qt.FocusPolicy.StrongFocus, panel.scheme_box.title()


@pytest.mark.parametrize("state", list(STATES))
def test_the_panel_fits_its_narrowest_dock_and_never_scrolls_sideways(
    window: MainWindow, qtbot: Any, state: str
) -> None:
    panel, scroll = window.panel, _scroll(window)
    window.resizeDocks([window.config_dock], [1], Qt.Orientation.Horizontal)  # as narrow as it goes
    STATES[state](panel)
    QApplication.processEvents()
    assert window.width() == 1024 and scroll.width() == scroll.minimumWidth()
    viewport = scroll.viewport().width()
    needed = panel.minimumSizeHint().width()
    assert needed <= viewport, f"the panel needs {needed} pixels, its dock shows {viewport}"
    assert panel.width() == viewport and scroll.horizontalScrollBar().maximum() == 0
    window.activateWindow()
    bar = scroll.horizontalScrollBar()
    for field in _fields(panel):  # focus on each, as Tab gives it: the panel keeps its left edge
        field.setFocus()
        scroll.ensureWidgetVisible(field)
        assert bar.value() == 0 and panel.mapTo(scroll.viewport(), QPoint(0, 0)).x() == 0


def test_the_scheme_editors_fit_the_narrowest_dock(window: MainWindow) -> None:
    panel, scroll = window.panel, _scroll(window)
    window.resizeDocks([window.config_dock], [1], Qt.Orientation.Horizontal)
    for row in panel.rows():
        panel.tree.setCurrentItem(row)
        QApplication.processEvents()
        needed, shown = panel.minimumSizeHint().width(), scroll.viewport().width()
        assert needed <= shown, f"{panel.scheme_box.title()}: the panel needs {needed} pixels of {shown}"

"""The configuration panel in its scroll area: it scrolls up and down only, fits the width
its dock gives it, and the mouse wheel scrolls it rather than changing a setting.

Two things changed settings, or hid them, under the user's hand. The wheel over a spin
box or combo box changed its value though the field had no focus: scrolling down the
panel, once it stopped at its end, the wheel went on into whatever field lay under the
pointer (placement became "Free", Samples 30 → 28). And the panel was wider than its
dock (at 1024 pixels a window gives the dock about 430; Link > Custom made the panel 480
wide): a field taking focus scrolled it sideways, cutting every label at its left edge
("cement", "tart here:").

`settle_fields` gives every field under a widget the wheel only with focus (a click or
Tab gives it: Qt.StrongFocus); without focus the wheel goes to the scroll area around it.
It also lets the panel narrow: its forms put a label above its field where the two do not
fit side by side, and its combo boxes cut a long choice in the box (their list shows it
whole) instead of making the panel as wide as their longest item. `PanelScroll` keeps
the panel exactly as wide as its viewport, so there is nothing to scroll sideways to.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QAbstractSlider,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QFormLayout,
    QScrollArea,
    QScrollBar,
    QSizePolicy,
    QWidget,
)

__all__ = ["COMBO_CHARS", "PanelScroll", "settle_fields"]

#: Characters a combo box of the panel shows at the least ("loopback · s…"); a longer
#: choice is cut in the box and whole in its open list.
COMBO_CHARS = 12
TITLE_CHARS = 30  # a group title, elided (fitted_title): fits the narrowest dock


class PanelScroll(QScrollArea):
    """A vertical scroll area whose widget is always exactly as wide as its viewport."""

    def __init__(self, widget: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setWidget(widget)

    def viewportEvent(self, event: QEvent) -> bool:
        # The viewport narrows when the vertical scroll bar appears, not only when the
        # area is resized: the widget's width follows it every time.
        widget = self.widget()
        if event.type() == QEvent.Type.Resize and widget is not None:
            widget.setMaximumWidth(self.viewport().width())
        return super().viewportEvent(event)


class _WheelToScrollArea(QObject):
    """An event filter: a field without focus hands the wheel to the scroll area it sits in."""

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if not isinstance(event, QWheelEvent) or not isinstance(watched, QWidget) or watched.hasFocus():
            return False
        area = _scroll_area_of(watched)
        if area is None:
            event.ignore()  # Qt passes an ignored wheel on to the parent
            return True
        viewport = area.viewport()
        # Sent on, not ignored: Qt passes an ignored wheel on only when the window system
        # sent it, and the area must scroll for any wheel a field did not take.
        position = QPointF(watched.mapTo(viewport, event.position().toPoint()))
        forwarded = QWheelEvent(
            position,
            event.globalPosition(),
            event.pixelDelta(),
            event.angleDelta(),
            event.buttons(),
            event.modifiers(),
            event.phase(),
            event.inverted(),
        )
        QApplication.sendEvent(viewport, forwarded)
        event.accept()
        return True


def _scroll_area_of(widget: QWidget) -> QAbstractScrollArea | None:
    """The scroll area whose viewport holds `widget` (not the field's own, a combo's list)."""
    child, parent = widget, widget.parentWidget()
    while parent is not None:
        if isinstance(parent, QAbstractScrollArea) and child is parent.viewport():
            return parent
        child, parent = parent, parent.parentWidget()
    return None


def _fields(root: QWidget) -> list[QWidget]:
    """The widgets under `root` that a wheel changes: spin boxes, combo boxes, sliders."""
    fields: list[QWidget] = [*root.findChildren(QAbstractSpinBox), *root.findChildren(QComboBox)]
    fields += [s for s in root.findChildren(QAbstractSlider) if not isinstance(s, QScrollBar)]
    return fields


def fitted_title(box: QWidget, whole: str) -> str:
    """A group box title elided to what the narrowest dock shows: a title never wraps, so a
    TLS job's long name (group, certificate, chain, cipher...) would widen the whole panel.
    Callers keep the whole text in a tooltip."""
    metrics = box.fontMetrics()
    return metrics.elidedText(whole, Qt.TextElideMode.ElideRight, TITLE_CHARS * metrics.averageCharWidth())


def settle_fields(root: QWidget) -> None:
    """Settle every field under `root` (again after adding fields: it is idempotent)."""
    for field in _fields(root):
        field.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # the wheel never gives focus
        if not field.findChildren(_WheelToScrollArea, options=Qt.FindChildOption.FindDirectChildrenOnly):
            field.installEventFilter(_WheelToScrollArea(field))
    for combo in root.findChildren(QComboBox):
        _narrow(combo)
    for form in root.findChildren(QFormLayout):
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)


def _narrow(combo: QComboBox) -> None:
    """As narrow as COMBO_CHARS (or fewer, if its own code set fewer), as wide as the
    form gives it, its list as wide as its longest choice."""
    if combo.sizeAdjustPolicy() != QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon:
        combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        combo.setMinimumContentsLength(COMBO_CHARS)
    combo.setSizePolicy(QSizePolicy.Policy.Expanding, combo.sizePolicy().verticalPolicy())
    view = combo.view()
    view.setMinimumWidth(max(view.minimumWidth(), view.sizeHintForColumn(0) + 2 * view.frameWidth()))

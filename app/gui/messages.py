"""Messages that never move a widget under the pointer (the configuration panel, dialogs).

A hint that disappears, or an error that appears, changes the height of what it sits
in; every widget below it then jumps, and the next click lands on the wrong row (the
"Start here" hint vanishing on the first tick moved the scheme tree up by two lines).
So each message here owns a fixed height, reserved whether it says anything or not:

- `MessageSlot`, above the scheme tree: what to do first, why Run cannot start, or that
  it can; always one of the three, in the same space.
- `FieldNote`, under a field the user types into: a muted hint, or in red why the value
  is refused, next to the field rather than at the foot of the panel, below the fold.

A text longer than its space is cut at a word with "…"; the whole text is the tooltip.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QRect, Qt
from PySide6.QtGui import QPalette, QResizeEvent
from PySide6.QtWidgets import QLabel, QStackedWidget, QWidget

from app.gui.theme import status_colour
from app.gui.vocab import Tone

__all__ = ["FieldNote", "FittedLabel", "MessageSlot"]

#: Lines the slot above the tree reserves: the "Start here" hint takes two at 300 px.
SLOT_LINES = 3


class FittedLabel(QLabel):
    """A word-wrapped label of a fixed number of lines: its height never changes with
    its text, and a text that does not fit is cut at a word (the full text in the tooltip)."""

    def __init__(self, lines: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._lines = lines
        self._full = ""
        self.setWordWrap(True)
        self.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._reserve()

    def _reserve(self) -> None:
        self.setFixedHeight(self.fontMetrics().lineSpacing() * self._lines + 4)

    def full_text(self) -> str:
        return self._full

    def set_message(self, text: str) -> None:
        self._full = text
        self.setToolTip(text if text else "")
        self._fit()

    def _fit(self) -> None:
        text = self._full
        width = self.contentsRect().width()
        if width > 20 and self.textFormat() != Qt.TextFormat.RichText and not self._fits(text, width):
            words = text.split()
            while words and not self._fits(" ".join(words) + "…", width):
                words.pop()
            text = " ".join(words) + "…"
        super().setText(text)

    def _fits(self, text: str, width: int) -> bool:
        box = self.fontMetrics().boundingRect(QRect(0, 0, width, 10_000), Qt.TextFlag.TextWordWrap, text)
        return box.height() <= self.fontMetrics().lineSpacing() * self._lines

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._reserve()


def _tone(widget: QWidget, tone: Tone) -> str:
    colour = status_colour(tone, widget.palette().color(QPalette.ColorRole.Window))
    return f"color: {colour};" if colour else ""


class MessageSlot(QStackedWidget):
    """Above the scheme tree, always the same height: the first-launch hint, the reason
    Run cannot start (in red), or what Run will do. Pages: `hint`, `problem`, `ready`."""

    def __init__(self, hint: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hint = QLabel(hint)
        self.hint.setWordWrap(True)
        self.hint.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        self.hint.setObjectName("empty-state")
        self.problem = FittedLabel(SLOT_LINES)
        self.problem.setObjectName("problem")
        self.ready = FittedLabel(SLOT_LINES)
        self.ready.setObjectName("ready")
        for page in (self.hint, self.problem, self.ready):
            self.addWidget(page)
        self.setFixedHeight(self.problem.height())

    def show_hint(self) -> None:
        self.setCurrentWidget(self.hint)

    def show_problem(self, text: str) -> None:
        self.problem.setStyleSheet(_tone(self, Tone.BAD))
        self.problem.set_message(text)
        self.setCurrentWidget(self.problem)

    def show_ready(self, text: str) -> None:
        self.ready.setStyleSheet(_tone(self, Tone.GOOD))
        self.ready.set_message(text)
        self.setCurrentWidget(self.ready)


class FieldNote(FittedLabel):
    """The line(s) under a field: a muted hint, or why its value is refused (in red)."""

    def __init__(self, hint: str = "", lines: int = 1, parent: QWidget | None = None) -> None:
        super().__init__(lines, parent)
        self._hint = hint
        self._error = ""
        self.clear_error()

    @property
    def error(self) -> str:
        return self._error

    def show_error(self, text: str) -> None:
        self._error = text
        self.setStyleSheet(_tone(self, Tone.BAD))
        self.set_message(text)

    def clear_error(self) -> None:
        self._error = ""
        self.setStyleSheet(_tone(self, Tone.MUTED))
        self.set_message(self._hint)

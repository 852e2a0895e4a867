"""The log dock: every line of the run, filtered by level, following new lines.

Lines are kept (up to `MAX_LINES`) with their level, so changing the filter shows the
older lines again. "Follow" keeps the newest line in view; scrolling up to read stops
following until the user scrolls back to the end or ticks it again.
"""

from __future__ import annotations

import time

from PySide6.QtWidgets import QCheckBox, QComboBox, QHBoxLayout, QLabel, QPlainTextEdit, QVBoxLayout, QWidget

from app.core.escaping import escape_control
from app.core.vocab import LogLevel

MAX_LINES = 5000
#: Filter choices: (title, lowest level shown).
FILTERS = (
    ("Everything", LogLevel.DEBUG),
    ("Info and above", LogLevel.INFO),
    ("Warnings and errors", LogLevel.WARNING),
    ("Errors only", LogLevel.ERROR),
)
#: LogLevel lists the levels least first.
_RANKS: dict[str, int] = {level: rank for rank, level in enumerate(LogLevel)}


def format_line(stamp: str, level: str, text: str) -> str:
    """One log entry as shown: `stamp LEVEL text`, continuation lines indented to the text."""
    head = f"{stamp} {level.upper():7s} "
    lines = text.replace("\r\n", "\n").rstrip("\n").split("\n")
    indent = "\n" + " " * len(head)
    return head + indent.join(escape_control(part) for part in lines)


def _rank(level: str) -> int:
    return _RANKS.get(level, _RANKS[LogLevel.INFO])


class LogView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._lines: list[tuple[str, str]] = []
        self.level = QComboBox()
        for title, level in FILTERS:
            self.level.addItem(title, level)
        self.level.setCurrentIndex(1)
        self.level.currentIndexChanged.connect(lambda _: self._refill())
        self.follow = QCheckBox("Follow new lines")
        self.follow.setChecked(True)
        self.follow.toggled.connect(self._on_follow_toggled)
        self.text = QPlainTextEdit(readOnly=True)
        self.text.setMaximumBlockCount(MAX_LINES)
        self.text.verticalScrollBar().valueChanged.connect(self._scrolled)
        bar = QHBoxLayout()
        bar.setContentsMargins(4, 2, 4, 0)
        bar.addWidget(QLabel("Show:"))
        bar.addWidget(self.level)
        bar.addStretch(1)
        bar.addWidget(self.follow)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.text)

    def append(self, level: str, text: str) -> None:
        """Add a message (control characters shown as escapes: a peer's text is never obeyed).

        A message of several lines is shown as lines: the first after the time and level,
        the others indented under it, so a newline is never shown as a literal "\\n", and
        a line a peer's text adds cannot pass for a log line of its own (it has no time)."""
        line = format_line(time.strftime("%H:%M:%S"), level, text)
        self._lines.append((level, line))
        del self._lines[:-MAX_LINES]
        if _rank(level) >= _rank(self.level.currentData()):
            self.text.appendPlainText(line)
            if self.follow.isChecked():
                self._scroll_to_end()

    def toPlainText(self) -> str:
        return self.text.toPlainText()

    def shown_lines(self) -> list[str]:
        return self.text.toPlainText().splitlines()

    def _refill(self) -> None:
        lowest = _rank(self.level.currentData())
        self.text.setPlainText("\n".join(line for level, line in self._lines if _rank(level) >= lowest))
        if self.follow.isChecked():
            self._scroll_to_end()

    def _on_follow_toggled(self, on: bool) -> None:
        if on:
            self._scroll_to_end()

    def _scroll_to_end(self) -> None:
        bar = self.text.verticalScrollBar()
        bar.setValue(bar.maximum())

    def _scrolled(self, value: int) -> None:
        # Scrolling up to read pauses following; back at the end resumes it.
        bar = self.text.verticalScrollBar()
        at_end = value >= bar.maximum()
        if self.follow.isChecked() != at_end and bar.maximum() > 0 and not bar.isSliderDown():
            self.follow.blockSignals(True)
            self.follow.setChecked(at_end)
            self.follow.blockSignals(False)

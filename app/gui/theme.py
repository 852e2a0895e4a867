"""Light, dark or the system's look: one Fusion palette switch for the whole app, and
the few colours the app adds (status text, badges) chosen for the background they sit
on, so every text keeps WCAG AA contrast (4.5:1) in both themes."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize
from PySide6.QtGui import QColor, QPainter, QPalette, QPen
from PySide6.QtWidgets import QApplication, QProxyStyle, QStyle, QStyleOption, QWidget

from app.gui.vocab import Theme, Tone

_DARK = {
    QPalette.ColorRole.Window: "#2b2b2b",
    QPalette.ColorRole.WindowText: "#e6e6e6",
    QPalette.ColorRole.Base: "#1f1f1f",
    QPalette.ColorRole.AlternateBase: "#2a2a2a",
    QPalette.ColorRole.Text: "#e6e6e6",
    QPalette.ColorRole.Button: "#333333",
    QPalette.ColorRole.ButtonText: "#e6e6e6",
    QPalette.ColorRole.Highlight: "#3d6fb4",
    QPalette.ColorRole.HighlightedText: "#ffffff",
    QPalette.ColorRole.ToolTipBase: "#333333",
    QPalette.ColorRole.ToolTipText: "#e6e6e6",
    QPalette.ColorRole.PlaceholderText: "#9a9a9a",
    QPalette.ColorRole.Link: "#7fb2ff",
    QPalette.ColorRole.BrightText: "#ffffff",
}
_LIGHT_HIGHLIGHT = "#2a6cb0"
#: Disabled text: dimmer, still 4.5:1 on the dark window (WCAG exempts disabled
#: controls, but a greyed value the user must read, e.g. "mixed", stays legible).
_DARK_DISABLED = "#9a9a9a"
#: A disabled field's background: the window's own colour, so an empty greyed field
#: (the Server and port in operations mode) does not look like one waiting for text.
#: Fusion's dark fields are darker than the window; the same field enabled stands out.
_DARK_DISABLED_FILL = {
    QPalette.ColorRole.Base: "#2b2b2b",
    QPalette.ColorRole.Button: "#2b2b2b",
    QPalette.ColorRole.PlaceholderText: "#6e6e6e",
}

#: Status colours: (on a light background, on a dark background).
STATUS_COLOURS = {
    Tone.GOOD: ("#1b5e20", "#81c784"),
    Tone.BAD: ("#b71c1c", "#ff8a80"),
    Tone.WARN: ("#8a4b00", "#ffcc80"),
    Tone.MUTED: ("#595959", "#a6a6a6"),
    Tone.INFO: ("#0d47a1", "#90caf9"),
}
#: Outline of check boxes and radio buttons on a dark background: Fusion draws them
#: with the window colour darkened, black on black there.
_DARK_INDICATOR_OUTLINE = "#a0a0a0"


def luminance(colour: QColor) -> float:
    """WCAG relative luminance."""

    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.03928 else ((value + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(colour.redF()) + 0.7152 * channel(colour.greenF()) + 0.0722 * channel(colour.blueF())


def contrast_ratio(a: QColor | str, b: QColor | str) -> float:
    """WCAG contrast ratio, 1..21."""
    la, lb = sorted((luminance(QColor(a)), luminance(QColor(b))), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def is_dark(background: QColor | str) -> bool:
    return luminance(QColor(background)) < 0.2


def status_colour(kind: Tone | None, background: QColor | str) -> str | None:
    """The colour of a text of this tone on `background` (None for no tone)."""
    if kind not in STATUS_COLOURS:
        return None
    light, dark = STATUS_COLOURS[kind]
    return dark if is_dark(background) else light


def status_qcolor(kind: Tone | None, background: QColor | str | None = None) -> QColor | None:
    """`status_colour` as a QColor, on the application's Base colour by default."""
    if background is None:
        background = QApplication.palette().color(QPalette.ColorRole.Base)
    colour = status_colour(kind, background)
    return QColor(colour) if colour else None


class _DarkStyle(QProxyStyle):
    """Fusion with visible check-box and radio-button outlines on a dark palette."""

    def drawPrimitive(
        self, element: QStyle.PrimitiveElement, option: QStyleOption, painter: QPainter, widget: QWidget | None = None
    ) -> None:
        super().drawPrimitive(element, option, painter, widget)
        if element in (
            QStyle.PrimitiveElement.PE_IndicatorCheckBox,
            QStyle.PrimitiveElement.PE_IndicatorItemViewItemCheck,
        ):
            if not is_dark(option.palette.color(QPalette.ColorRole.Base)):
                return
            painter.save()
            painter.setPen(QPen(QColor(_DARK_INDICATOR_OUTLINE), 1))
            painter.setBrush(QColor(0, 0, 0, 0))
            rect: QRect = option.rect.adjusted(0, 0, -1, -1)
            side = min(rect.width(), rect.height())
            rect.setSize(QSize(side, side))
            rect.moveCenter(option.rect.center())
            painter.drawRect(rect)
            painter.restore()


def dark_palette() -> QPalette:
    palette = QPalette()
    for role, colour in _DARK.items():
        palette.setColor(role, QColor(colour))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText, QPalette.ColorRole.WindowText):
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(_DARK_DISABLED))
    for role, colour in _DARK_DISABLED_FILL.items():
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(colour))
    return palette


def apply_theme(app: QApplication | None, theme: str) -> None:
    """A Theme value: the platform's palette, or the app's light or dark one."""
    if app is None:
        return
    if theme == Theme.DARK:
        app.setStyle(_DarkStyle("Fusion"))
        app.setPalette(dark_palette())
        return
    app.setStyle("Fusion")
    if theme == Theme.LIGHT:
        palette = app.style().standardPalette()
        # Fusion's light selection (#308cc6) under white text is 3.7:1: darker, for AA.
        palette.setColor(QPalette.ColorRole.Highlight, QColor(_LIGHT_HIGHLIGHT))
        app.setPalette(palette)
    else:
        app.setPalette(QPalette())

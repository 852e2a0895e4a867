"""Both themes: every text colour the app uses keeps WCAG AA contrast (4.5:1) on its
background, and check boxes stay visible on the dark palette (pytest-qt, offscreen)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QCheckBox

from app.gui.theme import STATUS_COLOURS, apply_theme, contrast_ratio, status_colour

AA = 4.5
Role = QPalette.ColorRole


@pytest.fixture(params=["light", "dark"])
def theme(request: Any, qapp: QApplication) -> Iterator[str]:
    apply_theme(qapp, request.param)
    yield request.param
    apply_theme(qapp, "system")


def _blend(top: QColor, bottom: QColor) -> QColor:
    a = top.alphaF()
    return QColor.fromRgbF(
        *(
            t * a + b * (1 - a)
            for t, b in ((top.redF(), bottom.redF()), (top.greenF(), bottom.greenF()), (top.blueF(), bottom.blueF()))
        )
    )


def test_contrast_ratio_matches_wcag_reference_values() -> None:
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast_ratio("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)  # the AA grey on white


def test_every_palette_text_colour_meets_aa(theme: str, qapp: QApplication) -> None:
    palette = qapp.palette()
    pairs = [
        (Role.WindowText, Role.Window),
        (Role.Text, Role.Base),
        (Role.Text, Role.AlternateBase),
        (Role.ButtonText, Role.Button),
        (Role.HighlightedText, Role.Highlight),
        (Role.ToolTipText, Role.ToolTipBase),
        (Role.PlaceholderText, Role.Base),
    ]
    for text, background in pairs:
        ratio = contrast_ratio(palette.color(text), palette.color(background))
        assert ratio >= AA, (theme, text.name, background.name, round(ratio, 2))


def test_every_status_colour_meets_aa_on_every_background_it_sits_on(theme: str, qapp: QApplication) -> None:
    from app.gui.results.table import _FAILED_BACKGROUND

    palette = qapp.palette()
    backgrounds = {
        "window": palette.color(Role.Window),
        "base": palette.color(Role.Base),
        "alternate": palette.color(Role.AlternateBase),
        "failed row": _blend(_FAILED_BACKGROUND.color(), palette.color(Role.Base)),
    }
    for kind in STATUS_COLOURS:
        for where, background in backgrounds.items():
            colour = status_colour(kind, background)
            ratio = contrast_ratio(colour, background)
            assert ratio >= AA, (theme, kind, where, colour, round(ratio, 2))
    # Text on a failed row keeps AA too.
    assert contrast_ratio(palette.color(Role.Text), backgrounds["failed row"]) >= AA


def test_badges_and_table_colours_come_from_the_theme(theme: str, qtbot: Any, qapp: QApplication) -> None:
    from app.gui.config.panel import COL_SECURITY, ConfigPanel

    panel = ConfigPanel()
    qtbot.addWidget(panel)
    base = panel.tree.palette().color(Role.Base)
    coloured = [row for row in panel.rows() if row.foreground(COL_SECURITY).style() != Qt.BrushStyle.NoBrush]
    assert any("post-quantum" in row.text(COL_SECURITY) for row in coloured)
    assert any("insecure" in row.text(COL_SECURITY) for row in coloured)
    for row in coloured:
        ratio = contrast_ratio(row.foreground(COL_SECURITY).color(), base)
        assert ratio >= AA, (theme, row.text(COL_SECURITY), round(ratio, 2))


def test_dark_check_boxes_have_a_visible_outline(qtbot: Any, qapp: QApplication) -> None:
    """Fusion outlines an indicator with the window colour darkened: black on black."""
    apply_theme(qapp, "dark")
    try:
        box = QCheckBox()
        qtbot.addWidget(box)
        box.resize(box.sizeHint())
        image = box.grab().toImage()
        base = qapp.palette().color(Role.Base)
        window = qapp.palette().color(Role.Window)
        best = max(
            min(contrast_ratio(QColor(image.pixel(x, y)), base), contrast_ratio(QColor(image.pixel(x, y)), window))
            for x in range(image.width())
            for y in range(image.height())
        )
        assert best >= 3.0  # WCAG's 3:1 for the boundary of a control
    finally:
        apply_theme(qapp, "system")


def _fill(widget: Any) -> QColor:
    """The colour inside a field, away from its frame and text."""
    image = widget.grab().toImage()
    return QColor(image.pixel(image.width() // 2, image.height() // 2))


def test_disabled_fields_look_disabled_in_both_themes(theme: str, qtbot: Any) -> None:
    """A greyed-out Server or port field must not look like one waiting for input:
    its fill differs from the same field enabled (the dark theme drew them alike)."""
    from PySide6.QtWidgets import QLineEdit, QSpinBox

    for make in (QLineEdit, QSpinBox):
        enabled, disabled = make(), make()
        disabled.setEnabled(False)
        for field in (enabled, disabled):
            qtbot.addWidget(field)
            field.resize(160, field.sizeHint().height())
        on, off = _fill(enabled), _fill(disabled)
        difference = max(abs(on.red() - off.red()), abs(on.green() - off.green()), abs(on.blue() - off.blue()))
        assert difference >= 8, (theme, make.__name__, on.name(), off.name())


def test_the_window_greys_out_the_server_fields_outside_remote_mode(theme: str, qtbot: Any, tmp_path: Any) -> None:
    from app.gui.config.panel import ConfigPanel

    panel = ConfigPanel()
    qtbot.addWidget(panel)
    panel.set_checked("sha256")
    assert not panel.remote_host.isEnabled() and not panel.remote_port.isEnabled()
    palette = panel.remote_host.palette()
    disabled = palette.color(QPalette.ColorGroup.Disabled, Role.Base)
    assert disabled != palette.color(QPalette.ColorGroup.Active, Role.Base), theme

"""The editor widget of one scheme parameter in the configuration panel's "Selected
scheme" group: a combo box for a parameter with choices, a check box for a switch, a
spin box within the parameter's bounds for a number."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QCheckBox, QComboBox, QSpinBox, QWidget

from app.core.schemes.base import ParamSpec


def param_editor(param: ParamSpec, value: Any, changed: Callable[[Any], None]) -> QWidget:
    """A widget showing `value`, calling `changed(new value)` on each edit; the
    parameter's help is its tooltip."""
    editor: QWidget
    if param.choices:
        combo = QComboBox()
        for choice in param.choices:
            combo.addItem(str(choice), choice)
        combo.setCurrentIndex(max(0, combo.findData(value)))
        combo.currentIndexChanged.connect(lambda _=0: changed(combo.currentData()))
        editor = combo
    elif isinstance(param.default, bool):
        box = QCheckBox()
        box.setChecked(bool(value))
        box.toggled.connect(changed)
        editor = box
    else:
        spin = QSpinBox(
            minimum=param.minimum if param.minimum is not None else 0,
            maximum=param.maximum if param.maximum is not None else 1 << 30,
        )
        spin.setValue(int(value))
        spin.valueChanged.connect(changed)
        editor = spin
    editor.setToolTip(param.help)
    return editor

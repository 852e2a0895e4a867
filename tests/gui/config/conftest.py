"""The configuration panel, shown (row visibility is read from the widgets), for the load
settings' tests; a module that wants it hidden defines its own `panel`."""

from __future__ import annotations

from typing import Any

import pytest

from app.gui.config.panel import ConfigPanel


@pytest.fixture
def panel(qtbot: Any) -> ConfigPanel:
    widget = ConfigPanel()
    qtbot.addWidget(widget)
    widget.show()  # row visibility is read from the widgets
    return widget

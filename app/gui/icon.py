"""The application icon, from the PNGs rendered by packaging/make_icons.py.

Every size goes into one QIcon so the window manager, the task bar and the
About box each pick the sharpest match instead of scaling the largest.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from PySide6.QtGui import QIcon

from app.core.resources import resource_path

#: Sizes shipped in resources/icons/ (the freedesktop hicolor sizes up to 512).
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)


def icon_file(size: int) -> Path:
    return resource_path("icons", f"cryptobench-{size}.png")


@cache
def app_icon() -> QIcon:
    icon = QIcon()
    for size in ICON_SIZES:
        path = icon_file(size)
        if path.is_file():
            icon.addFile(str(path))
    return icon

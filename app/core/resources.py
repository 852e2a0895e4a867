"""The one way to find bundled resources, in a source tree and in the frozen app.

PyInstaller unpacks data files under `sys._MEIPASS`; from source they live in the
repository's top-level `resources/` folder.
"""

from __future__ import annotations

import sys
from pathlib import Path


def resources_root() -> Path:
    frozen_root = getattr(sys, "_MEIPASS", None)
    if frozen_root:
        return Path(frozen_root) / "resources"
    return Path(__file__).resolve().parents[2] / "resources"


def resource_path(*parts: str) -> Path:
    return resources_root().joinpath(*parts)

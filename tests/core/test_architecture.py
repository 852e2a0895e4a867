"""The Qt-free core stays Qt-free: checked on the imports, not by convention."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[2] / "app" / "core"
FORBIDDEN = ("PySide6", "pyqtgraph", "shiboken6", "app.gui", "app.report")


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", sorted(CORE.rglob("*.py")), ids=lambda p: str(p.relative_to(CORE)))
def test_core_module_imports_no_gui(path: Path) -> None:
    bad = {name for name in _imported_modules(path) if name.split(".")[0] in FORBIDDEN or name.startswith(FORBIDDEN)}
    assert not bad, f"{path} imports {bad}"


def test_importing_the_whole_core_loads_no_qt() -> None:
    code = (
        "import sys, pkgutil, importlib, app.core\n"
        "for m in pkgutil.walk_packages(app.core.__path__, 'app.core.'): importlib.import_module(m.name)\n"
        "from app.core.schemes import registry; list(registry.all_specs())\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6')]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)

"""The Qt-free core stays Qt-free: checked on the imports, not by convention."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT

CORE = ROOT / "app" / "core"
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


APP = CORE.parent
#: Imports point down (faces -> gui -> report -> core): what each upper layer's modules
#: must not import. The core's rule is the test above; `app.cli` covers every command.
UPWARD = {"report": ("app.gui", "app.cli", "app.__main__"), "gui": ("app.cli", "app.__main__")}


def _app_imports(path: Path) -> set[str]:
    """Modules imported, with `from app import x` read as `app.x`."""
    names = _imported_modules(path)
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "app":
            names.update(f"app.{alias.name}" for alias in node.names)
    return names


@pytest.mark.parametrize("path", [p for layer in UPWARD for p in sorted((APP / layer).rglob("*.py"))],
                         ids=lambda p: str(p.relative_to(APP)))
def test_layers_import_only_downward(path: Path) -> None:
    forbidden = UPWARD[path.relative_to(APP).parts[0]]
    bad = {name for name in _app_imports(path) if name.startswith(forbidden)}
    assert not bad, f"{path} imports {bad} from a layer above it"

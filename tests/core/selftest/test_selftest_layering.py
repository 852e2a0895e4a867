"""Tests for app.core.selftest's layering: Qt-free, and independent of the rest of the app.

The library checks use no app code beyond their package and the resources helper; the
adapter checks are loaded in one function; running the self-test loads no Qt, GUI or
report module.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from app.core import selftest

SELFTEST_PACKAGE = Path(selftest.__file__).parent


def _imports(tree: ast.AST) -> set[str]:
    imported: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, "relative import"
            imported.add(node.module or "")
    return imported


QT = {"PySide6", "pyqtgraph", "shiboken6"}


def test_selftest_imports_no_app_module_and_no_qt() -> None:
    """The library checks use no app code beyond their package and the resources helper;
    the adapter checks (adapters.py and the adapter_*/adapters_* modules it imports) are
    loaded in one function."""
    adapter_modules = sorted(SELFTEST_PACKAGE.glob("adapter*.py"))
    assert [path.name for path in adapter_modules] == [
        "adapter_parts.py",
        "adapters.py",
        "adapters_encryption.py",
        "adapters_tls.py",
    ]
    for path in sorted(SELFTEST_PACKAGE.glob("*.py")):
        if path in adapter_modules:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = _imports(tree)
        foreign = {
            name
            for name in imported
            if name.split(".")[0] in QT
            or name.startswith("app")
            and name != "app.core.resources"
            and not name.startswith("app.core.selftest")
        }
        assert not foreign, path.name
        library_checks = set().union(
            *(
                _imports(node)
                for node in tree.body
                if not (isinstance(node, ast.FunctionDef) and node.name == "adapter_checks")
            )
        )
        assert "app.core.selftest.adapters" not in library_checks, path.name
    package = _imports(ast.parse((SELFTEST_PACKAGE / "__init__.py").read_text(encoding="utf-8")))
    assert "app.core.selftest.adapters" in package
    for path in adapter_modules:
        adapter_imports = _imports(ast.parse(path.read_text(encoding="utf-8")))
        assert not {name.split(".")[0] for name in adapter_imports} & QT, path.name


def test_running_the_selftest_loads_no_qt() -> None:
    code = (
        "import sys\n"
        "from app.core.selftest import run_selftests\n"
        "assert all(r.passed for r in run_selftests())\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6')"
        " or m.startswith(('app.gui', 'app.report'))]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)

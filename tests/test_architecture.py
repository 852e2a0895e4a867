"""The rooms stay apart: imports point down, the core stays Qt-free, and nothing imports
in a circle. Checked on the imports themselves (top-level and inside functions alike),
not by convention (docs/ARCHITECTURE.md, "Layers"). And the rooms stay readable: few
functions run over 80 lines, and none of those once split by purpose."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT

APP = ROOT / "app"
CORE = APP / "core"
QT = ("PySide6", "pyqtgraph", "shiboken6")
#: The layers from the top: faces -> gui -> report -> core. Each may import the ones below
#: it and never one above.
LAYERS = ("faces", "gui", "report", "core")
#: The core's top-level modules every group uses; they import no group of the core.
CORE_FOUNDATION = ("errors", "vocab", "escaping", "fileio", "resources")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted(APP.rglob("*.py"))}


@cache
def _tree(path: Path) -> ast.Module:
    """A file's syntax tree, parsed once a worker: several tests walk every module of app/
    (parsing them again was a third of this file's CPU). Read only."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _imported_names(path: Path) -> set[str]:
    """Every module a file imports, wherever the import statement stands: `from a.b import c`
    gives "a.b" and "a.b.c" (c may be a submodule), relative imports made absolute."""
    module = _module_name(path)
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    names: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


@cache
def _app_graph() -> dict[str, frozenset[str]]:
    """module -> the app modules it imports (a name resolved to its longest app module)."""
    modules = _modules()
    graph: dict[str, frozenset[str]] = {}
    for module, path in modules.items():
        targets = set()
        for name in _imported_names(path):
            while name and name not in modules:
                name = name.rpartition(".")[0]
            # A package's own __init__ is not an edge from its submodules (importing
            # a.b.c runs a/__init__ and a/b/__init__ first, always).
            if name and name != module and not module.startswith(name + "."):
                targets.add(name)
        graph[module] = frozenset(targets)
    return graph


def _layer(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in ("__main__", "cli"):
        return "faces"
    return parts[1]


def _circles(graph: dict[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


# --- the rules ----------------------------------------------------------------------------------


def test_no_module_of_app_imports_in_a_circle() -> None:
    circles = _circles(dict(_app_graph()))
    assert not circles, "import circles (move what both sides need into a leaf module): " + "; ".join(
        " -> ".join(circle) for circle in circles
    )


@pytest.mark.parametrize("module", sorted(_modules()), ids=str)
def test_imports_point_down_the_layers(module: str) -> None:
    rank = LAYERS.index(_layer(module))
    upward = sorted(target for target in _app_graph()[module] if LAYERS.index(_layer(target)) < rank)
    assert not upward, f"{module} ({_layer(module)}) imports {upward} from a layer above it"


@pytest.mark.parametrize("path", sorted(CORE.rglob("*.py")), ids=lambda p: str(p.relative_to(CORE)))
def test_core_module_imports_no_qt(path: Path) -> None:
    bad = {name for name in _imported_names(path) if name.split(".")[0] in QT}
    assert not bad, f"{path} imports {bad}"


def test_only_the_report_s_pdf_package_imports_qt() -> None:
    """The report's content is data (app.report.model): Markdown and the CLI build it in a
    process that never loads Qt. Only app.report.pdf paints."""
    report = APP / "report"
    painting = [
        str(path.relative_to(ROOT))
        for path in sorted(report.rglob("*.py"))
        if not path.is_relative_to(report / "pdf") and any(n.split(".")[0] in QT for n in _imported_names(path))
    ]
    assert not painting, f"Qt imported outside app/report/pdf/: {painting}"


def test_the_core_s_foundation_imports_no_group_of_the_core() -> None:
    graph = _app_graph()
    upward = {
        module: sorted(graph[f"app.core.{module}"])
        for module in CORE_FOUNDATION
        if any(target.startswith("app.core.") for target in graph[f"app.core.{module}"])
    }
    assert not upward, f"the core's shared modules import its groups: {upward}"


def test_the_rules_see_a_circle_and_an_upward_import() -> None:
    """The checks above can fail: a made-up circle is found, and the layer of each kind of
    module is the one the rules assume."""
    assert _circles({"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}), "d": frozenset()}) == [
        ["a", "b", "c"]
    ]
    assert [
        _layer(m) for m in ("app.__main__", "app.cli.main", "app.gui.app", "app.report.content", "app.core.vocab")
    ] == [
        "faces",
        "faces",
        "gui",
        "report",
        "core",
    ]
    assert "app.core.run.runner" in _app_graph()["app.cli.commands.run"]  # lazy imports count


def test_importing_the_whole_core_and_the_report_s_content_loads_no_qt() -> None:
    code = (
        "import sys, pkgutil, importlib, app.core\n"
        "for m in pkgutil.walk_packages(app.core.__path__, 'app.core.'): importlib.import_module(m.name)\n"
        "from app.core.schemes import registry; list(registry.all_specs())\n"
        "import app.report.content, app.report.markdown, app.report.exporters, app.cli.main\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {QT!r}]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120, cwd=ROOT)


#: What a command loads when it runs, never to build the parser: `cryptobench --version`,
#: `--help` and a typo's "did you mean" took 0.9 s of CPU when `compare` loaded the results
#: model and statistics for its help text, and every command (`gui` too: the window's
#: launch) paid it.
HEAVY_FOR_A_PARSER = ("pydantic", "numpy", "sqlalchemy", "cryptography", "Crypto", "OpenSSL", "hdrh", "PySide6")


def test_building_the_command_line_parser_loads_no_heavy_library() -> None:
    code = (
        "import sys\n"
        "from app.cli.main import build_parser\n"
        "build_parser()\n"
        f"bad = sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY_FOR_A_PARSER!r}))\n"
        "assert not bad, bad\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT, check=False
    )
    assert result.returncode == 0, result.stderr[-2000:]


# --- the import contracts (import-linter, [tool.importlinter] in pyproject.toml) ---------------


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` (what `make lint` runs) over the `app` package under `root`."""
    command = [
        sys.executable,
        "-c",
        "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())",
    ]
    return subprocess.run(
        [*command, "--no-cache", "--no-logo"], cwd=root, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_import_contracts_hold() -> None:
    result = _lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "added", "broken"),
    [
        # a record reaching up to the runner: an upward arrow, and a loop between two folders
        ("app/core/records/job_records.py", "from app.core.run import runner", "The core's floors"),
        # a lazy import inside a function counts as much as one at the top
        ("app/core/transport/wire.py", "def _f() -> None:\n    from app.core.link import relay", "No loop between"),
        ("app/core/settings/load.py", "import PySide6", "The core imports no Qt"),
        ("app/report/model.py", "from app.gui import theme", "The faces over the window"),
    ],
)
def test_an_import_against_the_floors_fails_the_lint(tmp_path: Path, module: str, added: str, broken: str) -> None:
    """The contracts can fail: a copy of app/ with one import added breaks the contract
    that forbids it (and `make lint`, so CI)."""
    shutil.copytree(APP, tmp_path / "app", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    with (tmp_path / module).open("a", encoding="utf-8") as file:
        file.write("\n" + added.replace("\\n", "\n") + "  # noqa\n")
    result = _lint_imports(tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{broken}" in result.stdout and "BROKEN" in result.stdout


def _floors() -> list[list[str]]:
    """The core's floors from the top, as the contract lists them: each a list of groups."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["id"] == "core-floors"]
    return [[name.strip() for name in layer.replace(":", "|").split("|")] for layer in contract["layers"]]


def test_every_group_of_the_core_stands_on_a_floor() -> None:
    """`exhaustive` in the contract says the same; this names what is missing."""
    on_floors = {group for floor in _floors() for group in floor}
    groups = {p.stem if p.is_file() else p.name for p in CORE.iterdir() if p.name != "__init__.py"}
    groups = {g for g in groups if not g.startswith(("__pycache__", "."))}
    assert groups == on_floors, (
        f"not on a floor: {sorted(groups - on_floors)}; no such group: {sorted(on_floors - groups)}"
    )


def test_the_architecture_page_draws_the_floors_of_the_contract() -> None:
    """docs/ARCHITECTURE.md's table of the core's floors lists the contract's layers in its order."""
    text = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    table = text[text.index("<!-- floors -->") : text.index("<!-- /floors -->")]
    rows = [re.match(r"\| (\d) \| `([^`]+)` \|", line) for line in table.splitlines()]
    drawn = [
        [name.strip() for name in row.group(2).replace("\\|", "|").replace(":", "|").split("|")] for row in rows if row
    ]
    assert drawn == _floors()


@pytest.mark.parametrize("package", sorted(m for m, p in _modules().items() if p.name == "__init__.py"), ids=str)
def test_no_loop_between_the_folders_of_a_package(package: str) -> None:
    """Folder level, not only file level: a.x -> b.y and b.z -> a.w is a loop between a and b
    though no file imports in a circle (import-linter's acyclic_siblings says the same)."""
    modules = _modules()

    def child(module: str) -> str | None:
        if not module.startswith(package + "."):
            return None
        return package + "." + module[len(package) + 1 :].split(".")[0]

    graph: dict[str, set[str]] = {}
    for module, targets in _app_graph().items():
        source = child(module)
        if source is None:
            continue
        for target in targets:
            group = child(target)
            if group is not None and group != source and group in modules:
                graph.setdefault(source, set()).add(group)
    loops = _circles({name: frozenset(targets) for name, targets in graph.items()})
    assert not loops, f"loops between the parts of {package}: {loops}"


# --- functions a reader can hold -----------------------------------------------------------------

#: A function or method longer than this many lines (its def to its last line) is long.
LONG_FUNCTION_LINES = 80
#: How many long functions app/ may hold at most: the ones left are each one piece of work
#: (a window's widgets laid out, a step's timed loop); a new one splits by purpose.
MOST_LONG_FUNCTIONS = 8
#: Functions that were split by purpose and must stay short, wherever they live: the
#: supervisor's start (its topologies are app/core/run/topologies.py), the profile's
#: rules (app/core/profile/resolve.py), the `run` command's body (its display is
#: app/cli/terminal/run_display.py).
NEVER_LONG = ("ChildSupervisor.run", "resolve_jobs", "_execute_run")


def _function_lengths(source: str | ast.Module) -> list[tuple[str, int, int]]:
    """(qualified name, first line, length in lines) of every function and method in
    `source` (text, or its tree): a method is `Class.method`, a nested function `outer.inner`."""
    found: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    assert child.end_lineno is not None
                    found.append((name, child.lineno, child.end_lineno - child.lineno + 1))
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(source) if isinstance(source, str) else source, "")
    return found


def _kept_short(name: str, kept: tuple[str, ...]) -> bool:
    """Whether a function's qualified name is one of `kept`, in whatever class, function
    or module it now stands (`resolve_jobs`, `ProfileResolver.resolve_jobs`)."""
    return any(name == short or name.endswith("." + short) for short in kept)


@cache
def _app_functions() -> list[tuple[str, str, int]]:
    """(qualified name, path:line, length) of every function and method in app/."""
    return [
        (name, f"{path.relative_to(ROOT)}:{line}", length)
        for path in _modules().values()
        for name, line, length in _function_lengths(_tree(path))
    ]


def test_few_functions_run_long_and_none_of_those_split_by_purpose() -> None:
    long = sorted(
        ((name, where, length) for name, where, length in _app_functions() if length > LONG_FUNCTION_LINES),
        key=lambda function: -function[2],
    )
    shown = "\n".join(f"  {where} {name}: {length} lines" for name, where, length in long)
    named = [name for name, _, _ in long if _kept_short(name, NEVER_LONG)]
    assert not named, (
        f"{', '.join(named)} must stay within {LONG_FUNCTION_LINES} lines: split it by purpose. "
        f"Functions over {LONG_FUNCTION_LINES} lines:\n{shown}"
    )
    assert len(long) <= MOST_LONG_FUNCTIONS, (
        f"{len(long)} functions in app/ run over {LONG_FUNCTION_LINES} lines, at most {MOST_LONG_FUNCTIONS} "
        f"may: split one by purpose (helpers whose names say what they do).\n{shown}"
    )


def test_the_functions_kept_short_still_exist() -> None:
    """Renamed or moved, a function kept short is still found, so the rule above holds it."""
    names = [name for name, _, _ in _app_functions()]
    missing = [kept for kept in NEVER_LONG if not any(_kept_short(name, (kept,)) for name in names)]
    assert not missing, f"not found in app/: {missing}"


def test_the_length_rule_counts_methods_and_nested_functions() -> None:
    body = "\n".join(f"        x{k} = {k}" for k in range(LONG_FUNCTION_LINES))
    source = f"class C:\n    def long(self) -> None:\n{body}\n\n    def short(self) -> None:\n        def inner() -> None:\n            pass\n"
    assert _function_lengths(source) == [
        ("C.long", 2, LONG_FUNCTION_LINES + 1),
        ("C.short", LONG_FUNCTION_LINES + 4, 3),
        ("C.short.inner", LONG_FUNCTION_LINES + 5, 2),
    ]


def test_no_module_imports_another_s_private_name() -> None:
    """A name beginning with `_` is its module's own: a module that needs another's makes
    it public there (or keeps the helper inside itself)."""
    found = []
    for module, path in _modules().items():
        for node in ast.walk(_tree(path)):
            if (
                isinstance(node, ast.ImportFrom)
                and (node.module or "").startswith("app")
                or (isinstance(node, ast.ImportFrom) and node.level)
            ):
                found += [
                    f"{module} imports {node.module}.{alias.name}"
                    for alias in node.names
                    if alias.name.startswith("_") and not alias.name.startswith("__")
                ]
    assert not found, found

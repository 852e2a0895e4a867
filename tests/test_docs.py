"""docs/ARCHITECTURE.md and the code that cites it stay in step.

Code cites the architecture page by section (`docs/ARCHITECTURE.md`, then the heading
in quotes); the page cites files, modules and type names. Either side can move
without the other noticing, so each citation is checked here: a section that was
renamed, a file that moved, a class that was renamed fails a test instead of leaving
a newcomer following a trail that ends nowhere. The page is the only architecture
document: nothing may point at one outside the repository. The Markdown a reader follows
from the README is checked too: every relative link leads to a file and heading that
exist, every guide in docs/ is reachable from the README, the README stays short, and no
page names a ticket number.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import re
from functools import cache
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT

DOC = ROOT / "docs" / "ARCHITECTURE.md"
#: Folders and files whose text may cite the page (the page itself is read apart).
CITING_DIRS = ("app", "tests", "benchmarks", "packaging", "docs")
CITING_FILES = ("README.md", "RELIABILITY.md", "Makefile", "pyproject.toml")
TEXT_SUFFIXES = {".py", ".md", ".sh", ".spec", ".toml", ".txt", ".desktop", ".cfg", ".ini"}
#: The path, a comma, then the section in double quotes; a Python comment may wrap
#: between them ("...md,\n# "Section"").
SECTION_REFERENCE = re.compile(r'docs/ARCHITECTURE\.md,\s*(?:#\s*)?"([^"\n]+)"')
#: The outside design document the project used to cite (spelt in two parts so that
#: this file does not cite it).
OUTSIDE_DOC = "DESIGN" + ".md"
#: Names the page cites that are not defined in app/ (Qt and standard library classes,
#: socket options, an environment variable).
EXTERNAL_NAMES = {
    "QThreadPool",
    "QRunnable",
    "QObject",
    "QTimer",
    "StrEnum",
    "acyclic_siblings",  # an import-linter contract type
    "TCP_NODELAY",
    "TCP_INFO",
    "CRYPTOBENCH_START_METHOD",
}


def _citing_files() -> list[Path]:
    files = [ROOT / name for name in CITING_FILES if (ROOT / name).is_file()]
    for folder in CITING_DIRS:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_file() and path.suffix in TEXT_SUFFIXES and "__pycache__" not in path.parts and path != DOC:
                files.append(path)
    return files


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def _headings() -> set[str]:
    text = re.sub(r"^```.*?^```", "", _text(DOC), flags=re.M | re.S)  # a '#' in a code block is no heading
    return {match.strip() for match in re.findall(r"^#{1,6}\s+(.+?)\s*$", text, flags=re.M)}


def test_every_section_cited_in_the_code_exists() -> None:
    headings = _headings()
    missing = [
        f'{path.relative_to(ROOT)}: "{section}"'
        for path in _citing_files()
        for section in SECTION_REFERENCE.findall(_text(path))
        if section not in headings
    ]
    assert not missing, f"sections of docs/ARCHITECTURE.md that do not exist: {missing}; headings: {sorted(headings)}"


def test_nothing_cites_a_design_document_outside_the_repository() -> None:
    citing = [str(path.relative_to(ROOT)) for path in _citing_files() if OUTSIDE_DOC in _text(path)]
    assert not citing, f"{citing} cite {OUTSIDE_DOC}; cite docs/ARCHITECTURE.md and a section instead"


# --- what the page cites exists ----------------------------------------------------------


def test_every_path_the_page_cites_exists() -> None:
    paths = set(
        re.findall(r"(?<![\w/.])((?:app|tests|resources|packaging|benchmarks|docs)/[\w*./-]*[\w*])", _text(DOC))
    )
    missing = sorted(path for path in paths if not list(ROOT.glob(path)))
    assert not missing, f"docs/ARCHITECTURE.md cites paths that do not exist: {missing}"


class _Module:
    """What one module of app/ defines: top-level names, and each class's members and bases."""

    def __init__(self, path: Path) -> None:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        self.names: set[str] = set()
        self.classes: dict[str, tuple[set[str], list[str]]] = {}
        #: Identifier-like string constants: the JSON keys and values the code writes.
        self.strings = {
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier()
        }
        for node in tree.body:
            self.names.update(_defined(node))
            if isinstance(node, ast.ClassDef):
                members = {name for child in node.body for name in _defined(child)}
                self.classes[node.name] = (members, [ast.unparse(base).split(".")[-1] for base in node.bases])


def _defined(node: ast.stmt) -> set[str]:
    """Names a statement binds in its scope (definitions, assignments, imports)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign):
        targets = [node.target]
    elif isinstance(node, ast.Import | ast.ImportFrom):
        return {(alias.asname or alias.name).split(".")[0] for alias in node.names}
    names = set()
    for target in targets:
        for leaf in ast.walk(target):
            if isinstance(leaf, ast.Name):
                names.add(leaf.id)
    return names


@cache
def _modules() -> dict[str, _Module]:
    """Every module of app/, by each dotted suffix of its name ("stats", "core.stats", ...)."""
    found: dict[str, _Module] = {}
    for path in sorted((ROOT / "app").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        module = _Module(path)
        for k in range(len(parts)):
            found.setdefault(".".join(parts[k:]), module)
    return found


def _has_member(class_name: str, member: str, seen: frozenset[str] = frozenset()) -> bool:
    for module in _modules().values():
        if class_name in module.classes and class_name not in seen:
            members, bases = module.classes[class_name]
            if member in members or any(_has_member(base, member, seen | {class_name}) for base in bases):
                return True
    return False


def _defined_anywhere(name: str) -> bool:
    return any(
        name in module.names or any(name in members for members, _ in module.classes.values())
        for module in _modules().values()
    )


def _resolves(name: str) -> bool:
    """Whether a name the page cites is code that exists (see `_cited_names` for the forms)."""
    parts = name.split(".")
    if len(parts) == 1:
        if name in EXTERNAL_NAMES or _defined_anywhere(name) or hasattr(builtins, name):
            return True
        # A lower-case name may be a JSON key the code writes ("samples_f64") rather than code.
        return name.islower() and any(name in module.strings for module in _modules().values())
    for k in range(len(parts), 0, -1):  # the longest prefix that names a module of app/
        module = _modules().get(".".join(parts[:k]))
        if module is None:
            continue
        rest = parts[k:]
        if not rest:
            return True
        if rest[0] not in module.names:
            return False
        return len(rest) == 1 or (len(rest) == 2 and _has_member(rest[0], rest[1]))
    if len(parts) == 2 and _has_member(parts[0], parts[1]):
        return True
    if (ROOT / name).exists():  # pyproject.toml
        return True
    try:  # the standard library: time.perf_counter_ns
        value: object = importlib.import_module(parts[0])
        for part in parts[1:]:
            value = getattr(value, part)
    except (ImportError, AttributeError):
        return False
    return True


def _cited_names() -> set[str]:
    """Backticked code names in the page: dotted names (`stats.summarize`,
    `CpuUsage.measuring`), calls (`measuring_role()`), and bare names that can only be
    code: CamelCase types, UPPER_CASE constants, _private and snake_case functions (or
    the JSON keys the code writes, `interval_s`). Single lower-case words are JSON
    values or prose (`ok`, `same`) and are not checked."""
    names = set()
    for span in re.findall(r"`([^`\n]+)`", _text(DOC)):
        match = re.fullmatch(r"([A-Za-z_][\w.]*?)(?:\(\))?", span)
        if match is None:
            continue
        name = match.group(1)
        bare_code = name[0] == "_" or name[0].isupper() or "_" in name
        if "." in name or span.endswith("()") or bare_code:
            names.add(name)
    return names


@pytest.mark.parametrize(
    ("package", "title"),
    [
        ("core", "### The core: app/core/"),
        ("cli", "### The command line: app/cli/"),
        ("gui", "### The window: app/gui/"),
        ("report", "### Reports: app/report/"),
    ],
)
def test_the_page_s_maps_name_every_module(package: str, title: str) -> None:
    """A newcomer's map with holes sends them searching: every module of app/ is named in
    its package's map (by file name, as `sender.py` or `sender`)."""
    text = _text(DOC)
    start = text.index(title)
    end = text.find("\n#", start + len(title))
    section = text[start : end if end > 0 else len(text)]
    missing = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "app" / package).rglob("*.py"))
        if path.name != "__init__.py" and not re.search(rf"(?<![\w]){re.escape(path.stem)}(?![\w])", section)
    ]
    assert not missing, f"docs/ARCHITECTURE.md's map ({title}) does not name: {missing}"


def test_every_code_name_the_page_cites_exists() -> None:
    names = _cited_names()
    assert "CpuUsage.measuring" in names  # the extraction itself still works
    missing = sorted(name for name in names if not _resolves(name))
    assert not missing, f"docs/ARCHITECTURE.md cites names that are not in the code: {missing}"


def test_every_type_named_in_the_page_s_diagrams_exists() -> None:
    """The trees in code blocks (layers, the error hierarchy) name types without backticks."""
    blocks = "\n".join(re.findall(r"^```[^\n]*\n(.*?)^```", _text(DOC), flags=re.M | re.S))
    types = set(re.findall(r"\b[A-Z][a-z]+(?:[A-Z][a-z]+)+\b", blocks))  # CamelCase: JobSpec, CryptoBenchError
    assert "CryptoBenchError" in types  # the extraction itself still works
    missing = sorted(name for name in types if not _resolves(name))
    assert not missing, f"docs/ARCHITECTURE.md's diagrams name types that are not in the code: {missing}"


@pytest.mark.parametrize(
    "name",
    ["CpuUsage.no_such_member", "NoSuchType", "stats.no_such_function", "app.core.no_such_module", "no_such_function"],
)
def test_a_name_that_does_not_exist_is_caught(name: str) -> None:
    assert not _resolves(name)


# --- the Markdown a reader follows: links that lead somewhere, a short front door --------

#: The Markdown a newcomer reads from the README on: every relative link in it must lead
#: to a file that exists (and, with a #fragment, to a heading of that file).
LINKED_DOCS = (
    "README.md",
    "CONTRIBUTING.md",
    "CHANGELOG.md",
    "RELIABILITY.md",
    "benchmarks/README.md",
    "packaging/README.md",
)
#: The README is the front door: what it is, the packages, two commands, a tour, a table
#: of contents. Everything else lives in docs/.
README_MAX_LINES = 250
#: A ticket number ("issue 22", "(issue 18)", "issue 16 §6") means nothing to a reader
#: without the tracker: the documentation says what the thing is instead.
TICKET_NUMBER = re.compile(r"\b(?:issues?|tickets?)\s+#?\d+|§\s*\d+", re.IGNORECASE)


def _markdown_files() -> list[Path]:
    return [ROOT / name for name in LINKED_DOCS] + sorted((ROOT / "docs").glob("*.md"))


def _prose(text: str) -> str:
    """The text outside fenced code blocks and inline code, where links are links."""
    text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.M | re.S)
    return re.sub(r"`[^`\n]*`", "", text)


def _links(path: Path) -> list[str]:
    """The targets of the Markdown links and images in a file (text or alt text may wrap)."""
    return re.findall(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)", _prose(_text(path)))


def _anchors(path: Path) -> set[str]:
    """The fragments GitHub gives the headings of a Markdown file (duplicates get -1, -2...)."""
    text = re.sub(r"^(```|~~~).*?^\1", "", _text(path), flags=re.M | re.S)
    anchors: set[str] = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        anchor, k = slug, 0
        while anchor in anchors:
            k += 1
            anchor = f"{slug}-{k}"
        anchors.add(anchor)
    return anchors


def test_every_relative_link_in_the_markdown_resolves() -> None:
    broken = []
    for path in _markdown_files():
        for target in _links(path):
            if re.match(r"[a-z][a-z0-9+.-]*:", target, flags=re.I):  # https:, mailto:
                continue
            file_part, _, fragment = target.partition("#")
            linked = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(ROOT)}: {target}"
            if not linked.exists():
                broken.append(f"{where} (no such file)")
            elif fragment and linked.suffix == ".md" and fragment not in _anchors(linked):
                broken.append(f"{where} (no such heading in {linked.name})")
    assert not broken, f"links that lead nowhere: {broken}"


def test_the_link_check_itself_finds_links_and_headings() -> None:
    assert "docs/ARCHITECTURE.md" in _links(ROOT / "README.md")
    assert {"layers", "trust-boundaries", "links-placement-and-load"} <= _anchors(DOC)


def test_the_readme_is_a_front_door() -> None:
    lines = _text(ROOT / "README.md").count("\n")
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines (at most {README_MAX_LINES}): move detail to docs/"


def test_every_guide_is_linked_from_the_readme() -> None:
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in _links(ROOT / "README.md")}
    missing = [str(path.relative_to(ROOT)) for path in sorted((ROOT / "docs").glob("*.md")) if path not in linked]
    missing += [name for name in ("CONTRIBUTING.md", "CHANGELOG.md") if (ROOT / name).resolve() not in linked]
    assert not missing, f"not reachable from the README's table of contents: {missing}"


def test_the_documentation_names_no_ticket_numbers() -> None:
    named = [
        f"{path.relative_to(ROOT)}: {match.group(0)!r}"
        for path in _markdown_files()
        for match in TICKET_NUMBER.finditer(_text(path))
    ]
    assert not named, f"say what the thing is instead of its ticket number: {named}"


#: Code and tests are read without the tracker too, and run from a clone alone: a ticket
#: number in a comment, or a path out of the repository (the old ../shared/EXPERIMENTS.md),
#: is a trail that ends outside it.
CODE_TICKET_NUMBER = re.compile(r"\b(?:issues?|tickets?)\s+#?\d+", re.IGNORECASE)
OUTSIDE_PATH = re.compile(r"\.\./shared\b|ROOT\.parent\b|parents\[\d+\]\s*/\s*[\"']shared")


def _code_files() -> list[Path]:
    return [
        path
        for folder in ("app", "tests", "benchmarks", "packaging", "docs")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "__pycache__" not in path.parts and path != Path(__file__).resolve()
    ]


def test_code_and_tests_name_no_ticket_numbers_and_read_nothing_outside_the_repository() -> None:
    found = [
        f"{path.relative_to(ROOT)}: {match.group(0)!r}"
        for path in _code_files()
        for pattern in (CODE_TICKET_NUMBER, OUTSIDE_PATH)
        for match in pattern.finditer(_text(path))
    ]
    assert not found, f"say what the thing is, and keep what the code reads in the repository: {found}"
    assert CODE_TICKET_NUMBER.search("(issue 22)") and OUTSIDE_PATH.search('ROOT.parent / "shared"')

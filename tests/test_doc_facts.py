"""Facts the documentation states are kept in one place, or read from the code.

A figure copied into several files goes stale in all but one: the frozen bundle's size
was 215, 230 and 232 MB in three of them at once. Each fact here has one home, and a
test fails when a copy appears elsewhere or when the home disagrees with the code:

- the frozen bundle's measured size: packaging/README.md, "Budgets" (the limit the smoke
  test holds it to is `SIZE_LIMIT_MB` in packaging/smoke_test.py);
- how long `make test` takes: CONTRIBUTING.md, "How long it takes", dated; the number of
  tests is quoted nowhere (pytest says it; RELIABILITY.md's counts are dated summaries);
- docs/links.md's rule for a late link emulator: read from the code's constants;
- docs/links.md's fresh-connection figures: benchmarks/README.md's dated measurement;
- docs/remote.md's promises of `serve` to its clients: `app.core.serve`'s constants.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from tests.helpers.paths import ROOT

# --- the frozen bundle's size: packaging/README.md, "Budgets" -----------------------------

PACKAGING_README = ROOT / "packaging" / "README.md"
#: A size in (mega|gi)bytes as the documentation writes it: "232 MB", "~220 MB", "221 MiB".
SIZE = re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)?)\s*(MB|MiB|GB|GiB)\b")
#: Words that make a size nearby the bundle's ("frozen" alone is also the load server's
#: frozen heap).
BUNDLE_WORDS = re.compile(
    r"bundle|frozen (?:app|one-folder|desktop)|one[- ]folder|one[- ]file|dist/cryptobench|PyInstaller|make package",
    re.IGNORECASE,
)
#: How far (characters, within one paragraph) a bundle word makes a size the bundle's.
NEAR = 200
#: Below this a size is a part of the bundle (psycopg's 20 MB, Dask's 30 MB), not all of it.
WHOLE_BUNDLE_MB = 100
#: Text files of the repository that are prose or carry comments (the golden files and
#: resources/ are data).
TEXT_SUFFIXES = {".md", ".py", ".spec", ".toml", ".sh", ".txt", ".desktop", ".cfg", ".ini", ""}


def _size_limit_mb() -> float:
    """The smoke test's hard limit, read from its source (packaging/ is not a package)."""
    match = re.search(r"^SIZE_LIMIT_MB = (\d+)$", (ROOT / "packaging" / "smoke_test.py").read_text(), flags=re.M)
    assert match, "packaging/smoke_test.py: no SIZE_LIMIT_MB"
    return float(match.group(1))


def _budgets_section() -> str:
    text = PACKAGING_README.read_text(encoding="utf-8")
    start = text.index("\n## Budgets\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else len(text)]


def _bundle_row() -> str:
    (row,) = [line for line in _budgets_section().splitlines() if line.startswith("| Bundle size |")]
    return row


#: What is not the project's own text: tools' folders, build output, data.
NOT_TEXT = {".git", ".venv", "build", "dist", ".pytest_cache", ".ruff_cache", ".mypy_cache", ".hypothesis"}


def _repository_text_files() -> list[Path]:
    """The repository's prose and code (its data, resources/ and tests/golden/, and this
    file's examples left out)."""
    files = []
    for folder, subfolders, names in os.walk(ROOT):
        here = Path(folder)
        subfolders[:] = sorted(
            name
            for name in subfolders
            if name not in NOT_TEXT
            and name != "__pycache__"
            and not name.endswith(".egg-info")
            and here / name not in (ROOT / "resources", ROOT / "tests" / "golden")
        )
        files += [here / name for name in sorted(names) if Path(name).suffix in TEXT_SUFFIXES]
    return [path for path in files if path != Path(__file__).resolve()]


def _bundle_sizes(text: str) -> list[str]:
    """The sizes in `text` that state the whole bundle's: at least `WHOLE_BUNDLE_MB`, with a
    bundle word nearby in the same paragraph, and not the smoke test's limit."""
    found = []
    for paragraph in re.split(r"\n\s*\n", text):
        for match in SIZE.finditer(paragraph):
            value = float(match.group(1).replace(",", ""))
            megabytes = value * (1000 if match.group(2) in ("GB", "GiB") else 1)
            if megabytes < WHOLE_BUNDLE_MB or (match.group(2) == "MB" and value == _size_limit_mb()):
                continue
            around = paragraph[max(0, match.start() - NEAR) : match.end() + NEAR]
            if BUNDLE_WORDS.search(around):
                found.append(match.group(0))
    return found


def test_the_bundle_s_size_is_stated_only_in_packaging_readme_s_budgets() -> None:
    """The Makefile, the README, the spec and packaging/README.md's own text link to the
    "Budgets" table instead of repeating (and outdating) its figure."""
    stated = []
    for path in _repository_text_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        if path == PACKAGING_README:
            text = text.replace(_budgets_section(), "")
        stated += [f"{path.relative_to(ROOT)}: {size}" for size in _bundle_sizes(text)]
    assert not stated, (
        f"the bundle's size is stated outside packaging/README.md's Budgets table: {stated}; "
        "link to packaging/README.md#budgets instead"
    )


def test_the_budgets_table_states_the_size_once_against_the_smoke_test_s_limit() -> None:
    row = _bundle_row()
    target, measured = row.split("|")[2:4]
    assert re.fullmatch(rf"\s*under {_size_limit_mb():g} MB\s*", target), f"the target is not SIZE_LIMIT_MB: {row}"
    (figure,) = re.findall(r"\*\*(\d+) MB\*\*", measured)
    assert float(figure) < _size_limit_mb(), row
    elsewhere = _budgets_section().replace(row, "")
    assert f"{figure} MB" not in elsewhere, f"the Budgets section repeats {figure} MB outside its table row"


def test_the_bundle_size_check_sees_a_copy() -> None:
    assert _bundle_sizes("make package  # the frozen one-folder app, ~230 MB") == ["230 MB"]
    assert _bundle_sizes("a one-file executable unpacks ~1.2 GB") == ["1.2 GB"]
    assert not _bundle_sizes(f"the bundle's size against the {_size_limit_mb():g} MB limit")
    assert not _bundle_sizes("psycopg (about 20 MB) put the bundle over its limit")
    assert not _bundle_sizes("a 525 MB results file imported at 2.1 GiB")


# --- how long `make test` takes: CONTRIBUTING.md, "How long it takes" -----------------------

CONTRIBUTING = ROOT / "CONTRIBUTING.md"
#: A duration in minutes: "3 min 36 s", "about 4.5 minutes", "3.6-3.9 minutes".
MINUTES = re.compile(r"\d+(?:[.,-]\d+)*\s*(?:minutes?|min\b)")
#: Words that make a duration nearby the whole suite's.
SUITE_WORDS = re.compile(r"make test|the (?:test )?suite\b|-n 2\b|PYTEST_WORKERS", re.IGNORECASE)
#: A count of tests ("4,441 tests"): pytest says it; a copy goes stale with every test added.
TEST_COUNT = re.compile(r"\b\d[\d,]*\s+tests\b")


def _suite_time_section() -> str:
    text = CONTRIBUTING.read_text(encoding="utf-8")
    start = text.index("\n### How long it takes\n")
    end = text.find("\n#", start + 1)
    return text[start : end if end > 0 else len(text)]


def _prose_files() -> list[Path]:
    """Where a reader looks for how long the suite takes: the Markdown, the Makefile,
    pyproject.toml's comments and CI's script."""
    named = [ROOT / "Makefile", ROOT / "pyproject.toml", ROOT / ".ci" / "run"]
    return [path for path in _repository_text_files() if path.suffix == ".md"] + [p for p in named if p.is_file()]


def _suite_durations(text: str) -> list[str]:
    found = []
    for paragraph in re.split(r"\n\s*\n", text):
        for match in MINUTES.finditer(paragraph):
            if SUITE_WORDS.search(paragraph[max(0, match.start() - NEAR) : match.end() + NEAR]):
                found.append(match.group(0))
    return found


def test_the_suite_s_time_is_stated_only_in_contributing_s_dated_section() -> None:
    stated = []
    for path in _prose_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        if path == CONTRIBUTING:
            text = text.replace(_suite_time_section(), "")
        stated += [f"{path.relative_to(ROOT)}: {duration}" for duration in _suite_durations(text)]
    assert not stated, (
        f"how long the suite takes is stated outside CONTRIBUTING.md's How long it takes: {stated}; "
        "link to CONTRIBUTING.md#how-long-it-takes instead"
    )


def test_the_suite_s_time_is_a_dated_measurement() -> None:
    """The section's first figure is the latest, and says when it was measured."""
    section = _suite_time_section()
    latest = re.search(r"\*\*Measured (\d{4}-\d{2}-\d{2})\*\*[^\n]*\n(?:  [^\n]*\n)*", section)
    assert latest, "CONTRIBUTING.md, How long it takes: no '**Measured YYYY-MM-DD**' line"
    assert _suite_durations(latest.group(0)), f"the dated line gives no duration of `make test`: {latest.group(0)}"


def test_no_guide_quotes_the_number_of_tests() -> None:
    """RELIABILITY.md's counts are dated summaries of rounds of tests; elsewhere a count
    of the suite's tests goes stale silently."""
    quoted = [
        f"{path.relative_to(ROOT)}: {match.group(0)}"
        for path in [ROOT / "README.md", CONTRIBUTING, *sorted((ROOT / "docs").glob("*.md"))]
        for match in TEST_COUNT.finditer(path.read_text(encoding="utf-8"))
    ]
    assert not quoted, f"counts of tests that go stale as tests are added: {quoted}"


def test_the_suite_time_check_sees_a_copy() -> None:
    assert _suite_durations("`make test` | on two workers: about 3.6-3.9 minutes on a 2-core machine") == [
        "3.6-3.9 minutes"
    ]
    assert _suite_durations("# runs the suite on two workers (-n 2): about 4.5 minutes") == ["4.5 minutes"]
    assert not _suite_durations("the run takes 2 min on a link")
    assert TEST_COUNT.findall("4,441 tests passed and 5 skipped") == ["4,441 tests"]


# --- docs/links.md: the emulator's lateness rule and the fresh-connection figures ------------

LINKS_PAGE = ROOT / "docs" / "links.md"
BENCHMARKS = ROOT / "benchmarks" / "README.md"


def _flat(path: Path) -> str:
    """A page's text with every run of white space one space: a sentence may wrap anywhere."""
    return " ".join(path.read_text(encoding="utf-8").split())


def _number(pattern: str, text: str) -> tuple[float, ...]:
    match = re.search(pattern, text)
    assert match, f"not found: {pattern}"
    return tuple(float(group) for group in match.groups())


def test_links_page_states_the_code_s_lateness_rule() -> None:
    """The page used to say a fixed 0.5 ms; the code holds each size to the larger of
    `LATE_LIMIT_S` and `LATE_SHARE` of its link's round trip (`late_limit`), and flags reads
    later than `LATE_LIMIT_S` for more than `READ_LATE_SHARE` of the packets."""
    from app.core.link.packet_link import late_limit
    from app.core.records.link_path import LATE_LIMIT_S, LATE_SHARE, READ_LATE_SHARE
    from app.core.settings.links import resolve_link

    text = _flat(LINKS_PAGE)
    floor_ms, share_percent = _number(
        r"release p99 passed the larger of ([\d.]+) ms and ([\d.]+) % of the link's round trip", text
    )
    assert floor_ms == LATE_LIMIT_S * 1e3 and share_percent == LATE_SHARE * 100
    read_percent, read_ms = _number(r"read more than ([\d.]+) % of the size's packets later than ([\d.]+) ms", text)
    assert read_percent == READ_LATE_SHARE * 100 and read_ms == LATE_LIMIT_S * 1e3
    examples = re.findall(r"([\d.]+) ms on `([\w-]+)`", text)
    assert len(examples) >= 3, examples
    for shown, preset in examples:
        assert float(shown) == round(late_limit(resolve_link(preset)) * 1e3, 1), (preset, shown)


def _benchmark_row(connection: str) -> list[str]:
    """The 8 Mbit/s row of benchmarks/README.md's packet link fidelity table for
    `connection` ("warm, measured", "fresh, measured"): its six sizes, 1 KiB to 1 MiB."""
    text = BENCHMARKS.read_text(encoding="utf-8")
    section = text[text.index("## Packet link fidelity") :]
    rows = section[section.index("| 8 Mbit/s |") : section.index("| 100 Mbit/s |")]
    (row,) = [line for line in rows.splitlines() if f"| {connection} |" in line]
    return [cell.replace("ms", "").strip() for cell in row.strip("|").split("|")[2:]]


def test_links_page_quotes_the_fresh_connection_figures_of_the_dated_benchmark() -> None:
    """docs/links.md quoted a BBR run (84.3 / 147 ms) under the cubic benchmark's link; its
    figures now are the benchmark's, with its date and congestion control."""
    text = _flat(LINKS_PAGE)
    bench = _flat(BENCHMARKS)
    section = bench[bench.index("## Packet link fidelity") :]
    assert "the kernel's TCP (cubic)" in section and "measured with cubic" in text
    (date,) = re.findall(r"Measured (\d{4}-\d{2}-\d{2})", section[:2000])
    assert f"cubic (Linux's default congestion control) on {date}" in text
    warm, fresh = _benchmark_row("warm, measured"), _benchmark_row("fresh, measured")
    assert re.search(rf"\({fresh[0]} ms fresh, {warm[0]} ms warm\)", text), (fresh[0], warm[0])
    assert f"16 KiB takes {fresh[2]} ms fresh against {warm[2]} ms warm" in text
    assert f"64 KiB {fresh[3]} against {warm[3]} ms" in text


def test_remote_page_states_serve_s_promises_from_its_constants() -> None:
    """`serve` dropped a stopped load client after no bound at all (over 200 s measured)
    where the page said 120 s: the promise now lives in `app.core.serve`, which the server
    and the load job's wait both read, and the page is held to it."""
    from app.core.serve import CLIENT_SILENCE_S, HELLO_S
    from app.core.serve.server import SERVER_LIMITS

    text = _flat(ROOT / "docs" / "remote.md")
    (hello,) = _number(r"A connection must finish the whole handshake within ([\d.]+) s", text)
    (silence,) = _number(r"a client silent for ([\d.]+) s during a job is dropped", text)
    assert (hello, silence) == (HELLO_S, CLIENT_SILENCE_S)
    assert (SERVER_LIMITS.hello_timeout, SERVER_LIMITS.idle_timeout) == (HELLO_S, CLIENT_SILENCE_S)

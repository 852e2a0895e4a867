"""The PDF report: page count, page sizes, searchable text, fonts, layout, atomic writes.

The text checks read the PDF back with poppler (pdftotext, pdfinfo, pdffonts,
pdftoppm) and skip when it is not installed. Charts come from `app.report.pdf.charts`
when it exists; otherwise a stand-in that draws a frame and the title, so these tests
check the layout around a chart, never the chart itself.
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QFont, QImage, QPageSize, QPainter, QPdfWriter

from app.report.model import (
    BarChart,
    Bullets,
    Chart,
    ChartData,
    Paragraph,
    Report,
    Section,
    Table,
)
from app.report.pdf import layout as pdf_layout
from app.report.pdf.tables import plan_table
from app.report.pdf.text import CELL_PAD_X, DPI, TABLE_PTS, parse_markup
from app.report.pdf.writer import PAGE_SIZES, ensure_gui_application, write_pdf
from tests.helpers.paths import ROOT

BIG_HEADER = ("Scheme", "Operation", "Median time", "Interval")
WIDE_COLUMNS = [f"C{c:02d}" for c in range(13)]
LONG_CELL = "a rather long description of what was measured that has to wrap and ends with zanzibar"


def _fake_charts() -> types.ModuleType:
    module = types.ModuleType("app.report.pdf.charts")

    def paint_chart(
        painter: QPainter,
        rect: QRectF,
        chart: ChartData,
        *,
        font_family: str | None = None,
        base_point_size: float = 8.0,
    ) -> None:
        painter.drawRect(rect)
        font = QFont(font_family or "")
        font.setPointSizeF(base_point_size)
        painter.setFont(font)
        painter.drawText(rect.adjusted(rect.width() / 20, rect.height() / 20, 0, 0), chart.title)

    module.paint_chart = paint_chart  # type: ignore[attr-defined]
    module.preferred_aspect = lambda chart: 0.5  # type: ignore[attr-defined]
    return module


def _use_charts(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """The real chart renderer if it exists yet, else the stand-in."""
    try:
        return importlib.import_module("app.report.pdf.charts")
    except ModuleNotFoundError:
        fake = _fake_charts()
        monkeypatch.setitem(sys.modules, "app.report.pdf.charts", fake)
        return fake


@pytest.fixture(autouse=True)
def charts(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    return _use_charts(monkeypatch)


@pytest.fixture(autouse=True)
def gui(qapp: object) -> None:
    """pytest-qt's QApplication (a bare QGuiApplication would break the widget tests)."""
    ensure_gui_application()


def _chart(title: str = "Median time per scheme") -> Chart:
    labels = ["AES-128-GCM", "ChaCha20-Poly1305", "RSA-2048", "ML-KEM-768", "X25519"]
    values = [2e-6, 3e-6, 1.2e-3, 4e-5, 6e-5]
    return Chart(
        BarChart(
            title,
            labels,
            values,
            [v * 0.9 for v in values],
            [v * 1.1 for v in values],
            marked=[False, False, False, True, False],
            marked_label="post-quantum",
        ),
        caption="Figure 1: medians with 95 % intervals.",
    )


def sample_report(rows: int = 120) -> Report:
    big = Table(
        list(BIG_HEADER),
        [[f"row-{i:03d}", "encrypt 1 KiB", f"{i + 1}.5 µs", f"{i}.9–{i + 2}.1 µs"] for i in range(rows)],
        caption="Table 1: every operation",
        emphasis={0, 5},
    )
    wide = Table(
        WIDE_COLUMNS,
        [[LONG_CELL if c == 6 else f"v{r}-{c}" for c in range(13)] for r in range(4)],
        caption="Table 2: a wide table",
    )
    words = " ".join(f"word{i}" for i in range(400))
    return Report(
        title="CryptoBench report: symmetric and post-quantum schemes on a laptop",
        subtitle="Run 2026-11-21 against baseline 2026-11-14",
        facts=[
            ("Date", "2026-11-21 10:04 UTC"),
            ("Machine", "x86_64, 8 cores, 16 GiB " * 4),
            ("Python", "3.11.2"),
            ("Profile", "quick"),
        ],
        sections=[
            Section(
                "Summary",
                [
                    Paragraph("The **fastest scheme** was AES-128-GCM; the slowest was **RSA-2048 signing**."),
                    Paragraph("ML-KEM-768 is **4 times faster** than X25519 at key agreement.", style="finding"),
                    Bullets(
                        [
                            "First point about the run.",
                            (
                                "Second point, long enough to wrap onto a second line "
                                "so the hanging indent shows under the bullet rather "
                                "than beneath it at all."
                            ),
                        ]
                    ),
                    Paragraph("Times are medians of repeated runs; intervals are 95 % bootstrap.", style="note"),
                ],
            ),
            Section("Operations", [Paragraph(words), big]),
            Section("Wide results", [wide, _chart()]),
            Section("Per family detail", [Paragraph("A subsection with a **bold** claim.")], level=2),
            Section("Appendix", [Paragraph("Starts on its own page.")], page_break_before=True),
        ],
        footer="CryptoBench 1.0 · run 2026-11-21",
    )


def _poppler(tool: str) -> str:
    found = shutil.which(tool)
    if not found:
        pytest.skip(f"{tool} (poppler-utils) is not installed")
    return found


def _text(path: Path, page: int | None = None) -> str:
    args = [_poppler("pdftotext")]
    if page is not None:
        args += ["-f", str(page), "-l", str(page)]
    return subprocess.run([*args, str(path), "-"], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def written(qapp: object, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """The sample report written once for the read-back tests."""
    path = tmp_path_factory.mktemp("pdf") / "report.pdf"
    monkeypatch = pytest.MonkeyPatch()
    _use_charts(monkeypatch)
    try:
        pages = write_pdf(sample_report(), path)
    finally:
        monkeypatch.undo()
    return path, pages


def test_writes_a_multi_page_pdf(written: tuple[Path, int]) -> None:
    path, pages = written
    assert pages >= 3
    assert path.read_bytes().startswith(b"%PDF")


@pytest.mark.parametrize(("name", "size"), [("A4", "595 x 842"), ("Letter", "612 x 792")])
def test_page_size(tmp_path: Path, name: str, size: str) -> None:
    pdfinfo = _poppler("pdfinfo")
    path = tmp_path / f"{name}.pdf"
    pages = write_pdf(sample_report(rows=10), path, name)
    info = subprocess.run([pdfinfo, str(path)], capture_output=True, text=True, check=True).stdout
    page_line = next(line for line in info.splitlines() if line.startswith("Page size:"))
    assert size in page_line
    assert re.search(rf"^Pages:\s+{pages}$", info, re.MULTILINE)
    assert "CryptoBench report" in info  # the title metadata


def test_text_is_searchable_and_complete(written: tuple[Path, int]) -> None:
    path, pages = written
    text = _text(path)
    for section in sample_report().sections:
        assert section.title in text
    for words in ("fastest scheme", "RSA-2048 signing", "4 times faster", "bold claim", "**"):
        assert (words in text) == (words != "**")
    for number in range(1, pages + 1):
        assert f"Page {number} of {pages}" in _text(path, number)
    for r in range(4):
        for c in range(13):
            if c != 6:
                assert f"v{r}-{c}" in text
    assert text.count("zanzibar") == 4  # the long cells wrap, never clip
    assert text.count("description") == 4  # ... and at word boundaries
    for column in WIDE_COLUMNS:
        assert column in text


def test_table_header_repeats_on_every_page_it_spans(written: tuple[Path, int]) -> None:
    path, pages = written
    spanned = [n for n in range(1, pages + 1) if "row-" in _text(path, n)]
    assert len(spanned) >= 3
    for n in spanned:
        page = _text(path, n)
        assert all(title in page for title in BIG_HEADER), n
    assert all("(continued)" in _text(path, n) for n in spanned[1:])
    text = _text(path)
    assert all(f"row-{i:03d}" in text for i in range(120))


def test_fonts_are_embedded(written: tuple[Path, int]) -> None:
    pdffonts = _poppler("pdffonts")
    path, _ = written
    lines = subprocess.run([pdffonts, str(path)], capture_output=True, text=True, check=True).stdout.splitlines()
    header = lines[0]
    emb = header.index(" emb ") + 1
    fonts = lines[2:]
    assert fonts
    for line in fonts:
        assert line[emb : emb + 3] == "yes", line


def _non_white(png: Path) -> int:
    image = QImage(str(png))
    assert not image.isNull()
    count = 0
    for y in range(0, image.height(), 2):
        for x in range(0, image.width(), 2):
            if QColor(image.pixel(x, y)).lightness() < 200:
                count += 1
    return count


def test_pages_render_with_ink(written: tuple[Path, int], tmp_path: Path) -> None:
    pdftoppm = _poppler("pdftoppm")
    path, pages = written
    table_page = next(n for n in range(1, pages + 1) if "row-050" in _text(path, n))
    for page in (1, table_page):
        prefix = tmp_path / f"page{page}"
        subprocess.run(
            [pdftoppm, "-png", "-r", "40", "-f", str(page), "-l", str(page), "-singlefile", str(path), str(prefix)],
            check=True,
        )
        assert _non_white(prefix.with_suffix(".png")) > 50


# --- layout, checked on the display lists ------------------------------------------------


def _layout(report: Report, page_size: str = "A4") -> pdf_layout.LaidOut:
    writer = QPdfWriter(os.devnull)
    writer.setResolution(DPI)
    writer.setPageSize(QPageSize(PAGE_SIZES[page_size]))
    rect = QRectF(writer.pageLayout().fullRectPixels(DPI))
    return pdf_layout.layout_report(report, writer, rect)


@pytest.mark.parametrize("page_size", list(PAGE_SIZES))
def test_nothing_leaves_the_text_area(page_size: str) -> None:
    laid = _layout(sample_report(), page_size)
    area = laid.content_rect.adjusted(-1, -1, 1, 1)
    for number, page in enumerate(laid.pages, start=1):
        for op in page:
            if op.kind != "footer":
                assert area.contains(op.rect), (number, op.kind, op.rect, area)
            else:
                assert laid.page_rect.contains(op.rect)


def test_charts_are_never_split() -> None:
    report = sample_report()
    # Text of growing length before a chart: somewhere it no longer fits below.
    for words in range(100, 1600, 150):
        report.sections.insert(1, Section("Chart section", [Paragraph("x " * words), _chart("Pushed chart")]))
    laid = _layout(report)
    charts = [op for page in laid.pages for op in page if op.kind == "chart"]
    assert len(charts) == 11
    for op in charts:
        assert laid.content_rect.adjusted(-1, -1, 1, 1).contains(op.rect)


@pytest.mark.parametrize("follower", ["paragraph", "table", "chart", "bullets"])
def test_a_heading_keeps_the_start_of_its_text(follower: str) -> None:
    block = {
        "paragraph": Paragraph("body " * 200),
        "table": sample_report(rows=30).sections[1].blocks[1],
        "chart": _chart(),
        "bullets": Bullets(["item " * 40, "item"]),
    }[follower]
    for filler in range(20, 120, 7):  # headings at every height down the page
        sections = [Section("Filler", [Paragraph("filler " * (filler * 8))]), Section("Heading under test", [block])]
        laid = _layout(Report("T", "", [], sections))
        for number, page in enumerate(laid.pages):
            for index, op in enumerate(page):
                if op.kind == "heading":
                    after = [
                        o
                        for o in page[index + 1 :]
                        if o.kind not in ("footer", "rule") and o.rect.top() >= op.rect.bottom() - 1
                    ]
                    assert after, f"heading alone at the foot of page {number + 1} (filler {filler})"
                    if follower in ("paragraph", "bullets"):
                        lines = sum(o.rect.height() for o in after if o.kind == "text")
                        assert lines >= 2 * pdf_layout.pt(pdf_layout.BODY_PT), filler


def test_wide_table_cells_fit_their_columns() -> None:
    writer = QPdfWriter(os.devnull)
    writer.setResolution(DPI)
    fonts = pdf_layout.Fonts(writer)
    width = pdf_layout.mm(174)
    wide = sample_report().sections[2].blocks[0]
    assert isinstance(wide, Table)
    plan = plan_table(fonts, wide, width)
    assert plan.size == min(TABLE_PTS)  # shrunk before wrapping
    assert sum(plan.widths) <= width + 1
    for cells in [plan.header, *plan.rows]:
        for cell, column_width in zip(cells, plan.widths):
            assert cell.widest_line() <= column_width - 2 * CELL_PAD_X + 0.5
    assert plan.rows[0][6].count > 1  # the long cell wraps


def test_too_wide_for_whole_words_still_never_overflows() -> None:
    writer = QPdfWriter(os.devnull)
    writer.setResolution(DPI)
    fonts = pdf_layout.Fonts(writer)
    width = pdf_layout.mm(174)
    table = Table([f"Incomprehensibilities{c}" for c in range(13)], [["x" * 40] * 13, ["supercalifragilistic"] * 13])
    plan = plan_table(fonts, table, width)
    assert sum(plan.widths) == pytest.approx(width)
    for cells in [plan.header, *plan.rows]:
        for cell, column_width in zip(cells, plan.widths):
            assert cell.widest_line() <= column_width - 2 * CELL_PAD_X + 0.5


def test_narrow_table_keeps_the_normal_size_and_relative_widths() -> None:
    writer = QPdfWriter(os.devnull)
    writer.setResolution(DPI)
    fonts = pdf_layout.Fonts(writer)
    table = Table(["A", "B"], [["1", "2"]], widths=[3, 1])
    plan = plan_table(fonts, table, 4000)
    assert plan.size == max(TABLE_PTS)
    assert plan.widths == pytest.approx([3000, 1000])


def test_markup_parsing() -> None:
    assert parse_markup("a **b** c **d**") == ("a b c d", [(2, 1), (6, 1)])
    assert parse_markup("2 ** 3") == ("2 ** 3", [])


def test_progress_reports_each_section(tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []
    report = sample_report(rows=5)
    write_pdf(report, tmp_path / "p.pdf", progress=lambda done, total: calls.append((done, total)))
    total = len(report.sections) + 1
    assert calls[0] == (0, total) and calls[-1] == (total, total)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)
    assert len(calls) >= len(report.sections) + 1


def test_charts_are_painted_in_their_rect_by_the_renderer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "app.report.pdf.charts", _fake_charts())  # draws its title at the rect
    path = tmp_path / "c.pdf"
    write_pdf(Report("T", "", [], [Section("S", [_chart("Stand-in chart title")])]), path)
    if shutil.which("pdftotext"):
        assert "Stand-in chart title" in _text(path)


def test_without_a_chart_renderer_a_placeholder_is_drawn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "app.report.pdf.charts", None)  # import fails
    path = tmp_path / "c.pdf"
    write_pdf(Report("T", "", [], [Section("S", [_chart("Missing renderer")])]), path)
    if shutil.which("pdftotext"):
        assert "Missing renderer (chart renderer unavailable)" in " ".join(_text(path).split())


# --- errors and atomic writes -------------------------------------------------------------


def test_unknown_page_size(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'Tabloid'"):
        write_pdf(sample_report(rows=1), tmp_path / "r.pdf", "Tabloid")
    assert not list(tmp_path.iterdir())


def test_folder_that_is_a_file_raises_oserror_naming_the_path(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    target = blocker / "r.pdf"
    with pytest.raises(OSError, match=r"r\.pdf"):
        write_pdf(sample_report(rows=1), target)


def test_refused_folder_raises_oserror_naming_the_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """EACCES from the kernel, as a folder without write permission gives; simulated, so it
    also runs as root (which ignores permission bits) and on any file system."""
    import errno

    from app.core import fileio

    def refuse(name: str, flags: int, mode: int) -> int:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), name)

    monkeypatch.setattr(fileio, "_open_new", refuse)
    with pytest.raises(OSError, match=re.escape(str(tmp_path / "r.pdf"))):
        write_pdf(sample_report(rows=1), tmp_path / "r.pdf")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0,
    reason="root ignores folder permissions; test_refused_folder_... simulates EACCES for every user",
)
def test_read_only_folder_raises_oserror_naming_the_path(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(OSError, match=re.escape(str(folder / "r.pdf"))):
            write_pdf(sample_report(rows=1), folder / "r.pdf")
    finally:
        folder.chmod(0o700)


def test_failed_render_leaves_the_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "r.pdf"
    target.write_bytes(b"%PDF previous report")
    broken = types.ModuleType("app.report.pdf.charts")

    def paint_chart(*args: object, **kwargs: object) -> None:
        raise RuntimeError("chart exploded")

    broken.paint_chart = paint_chart  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "app.report.pdf.charts", broken)
    with pytest.raises(RuntimeError, match="chart exploded"):
        write_pdf(sample_report(rows=10), target)
    assert target.read_bytes() == b"%PDF previous report"
    assert [p.name for p in tmp_path.iterdir()] == ["r.pdf"]  # no temporary file left


def test_a_raising_progress_callback_cancels_cleanly(tmp_path: Path) -> None:
    target = tmp_path / "r.pdf"
    target.write_bytes(b"%PDF previous report")

    def cancel(done: int, total: int) -> None:
        if done == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_pdf(sample_report(rows=10), target, progress=cancel)
    assert target.read_bytes() == b"%PDF previous report"
    assert [p.name for p in tmp_path.iterdir()] == ["r.pdf"]


def test_replaces_an_existing_file(tmp_path: Path) -> None:
    target = tmp_path / "r.pdf"
    target.write_bytes(b"old")
    target.chmod(0o640)
    write_pdf(sample_report(rows=1), target)
    assert target.read_bytes().startswith(b"%PDF")
    if os.name == "posix":
        assert target.stat().st_mode & 0o777 == 0o640


# --- the real report content, and a headless process ---------------------------------------


def test_the_real_report_renders(hand_run: object, hand_baseline: object, tmp_path: Path) -> None:
    content = pytest.importorskip("app.report.content")
    report = content.build_report(hand_run, hand_baseline)
    for size in PAGE_SIZES:
        laid = _layout(report, size)
        area = laid.content_rect.adjusted(-1, -1, 1, 1)
        assert all(area.contains(op.rect) for page in laid.pages for op in page if op.kind != "footer")
    path = tmp_path / "real.pdf"
    pages = write_pdf(report, path, "Letter")
    assert pages >= 3
    if shutil.which("pdftotext"):
        text = " ".join(_text(path).split())
        for section in report.sections:
            assert " ".join(section.title.split()) in text
        assert f"Page {pages} of {pages}" in text
        assert "\ufb01" not in text  # no "ﬁ" ligature: the text searches and copies as typed


def test_headless_process_gets_the_offscreen_platform(tmp_path: Path) -> None:
    code = (
        "import os, sys; from pathlib import Path\n"
        "from app.report.pdf.writer import ensure_gui_application, write_pdf\n"
        "from app.report.model import Report, Section, Paragraph\n"
        "ensure_gui_application()\n"
        "assert os.environ['QT_QPA_PLATFORM'] == 'offscreen'\n"
        "print(write_pdf(Report('T', 's', [], [Section('S', [Paragraph('hi')])]), Path(sys.argv[1])))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    if not sys.platform.startswith("linux"):
        pytest.skip("the offscreen fallback is for Linux without a display")
    result = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "h.pdf")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "2"

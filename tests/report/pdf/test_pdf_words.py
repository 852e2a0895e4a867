"""PDF layout of words: a heading never ends a page (not even a section's with no text of
its own, followed by a subsection), a title is not broken inside a name, and a number
never parts from its unit."""

from __future__ import annotations

import os

import pytest
from PySide6.QtGui import QPdfWriter

from app.report.model import Paragraph, Report, Section
from app.report.pdf.text import DPI, TITLE_PT, Fonts, wrap
from app.report.pdf.writer import PAGE_SIZES
from app.report.units import NBSP, keep_together
from tests.report.pdf.test_pdf import _layout

pytestmark = pytest.mark.usefixtures("qapp")

LINE = "A line of body text that fills the width of the page with ordinary words, no more."


def _ends_with_heading(report: Report, size: str) -> list[int]:
    laid = _layout(report, size)
    ends = []
    for number, page in enumerate(laid.pages, start=1):
        ops = [op for op in page if op.kind != "footer"]
        if ops and ops[-1].kind == "heading":
            ends.append(number)
    return ends


@pytest.mark.parametrize("size", list(PAGE_SIZES))
def test_an_empty_section_keeps_its_heading_with_the_subsection_after_it(size: str) -> None:
    # Every fill of the first page, so that some fill leaves room for the heading alone.
    found = []
    for lines in range(30, 62, 2):
        report = Report(
            "Title",
            "",
            [],
            [
                Section("Filler", [Paragraph(" ".join([LINE] * lines))]),
                Section("Results by family", []),
                Section("Authenticated encryption", [Paragraph(" ".join([LINE] * 6))], level=2),
            ],
        )
        found += [(lines, page) for page in _ends_with_heading(report, size)]
    assert found == []


def test_numbers_keep_their_units_and_names_their_hyphens() -> None:
    text = keep_together("ECDH [cryptography] · 18 B · loopback, n = 3 in 168 µs")
    assert f"18{NBSP}B{NBSP}·" in text and f"n{NBSP}={NBSP}3" in text and f"168{NBSP}µs" in text
    assert len(text) == len("ECDH [cryptography] · 18 B · loopback, n = 3 in 168 µs")  # bold spans still index it


def test_a_title_breaks_before_a_hyphenated_name_not_inside_it() -> None:
    # At the title's size this used to read "CryptoBench report: ecdh-vs-" / "elgamal".
    title = "CryptoBench report: ecdh-vs-elgamal"
    fonts = Fonts(_device())
    width = _layout(Report(title, "", [], []), "A4").content_rect.width()
    wrapped = wrap(fonts, title, fonts.font(TITLE_PT, bold=True), width)
    lines = [
        title[wrapped.layout.lineAt(i).textStart() :][: wrapped.layout.lineAt(i).textLength()].strip()
        for i in range(wrapped.count)
    ]
    assert lines == ["CryptoBench report:", "ecdh-vs-elgamal"]
    assert all(wrapped.layout.lineAt(i).width() <= width + 1 for i in range(wrapped.count))  # its box stays on the page


def _device() -> QPdfWriter:
    writer = QPdfWriter(os.devnull)
    writer.setResolution(DPI)
    return writer

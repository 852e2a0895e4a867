"""A tls13 job in the report: its section (a row per job and size, the flights), in the
Markdown and painted in the PDF; and the CLI's lines, in the same words."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from app.cli.terminal.printing import print_summary
from app.core.results.model import RunResult
from app.report.content import build_report
from app.report.markdown import render_markdown
from app.report.model import Table
from app.report.pdf.writer import write_pdf
from app.report.tls import TLS_TITLE, tls_lines
from tests.helpers import records


def _run() -> RunResult:
    def metric(median: float) -> object:
        return records.metric_at(median, 20, below=2)

    ops = records.job(
        "20261128-100000-abcdef",
        0,
        scheme="tls13",
        family="tls",
        label="TLS 1.3 X25519MLKEM768 + ML-DSA-65 (chain 2) [pyopenssl]",
        metrics={"handshake_client": metric(1.1e-3), "handshake_server": metric(1.3e-3)},
        tls=records.tls_record(),
    )
    session = records.job(
        "20261128-100000-abcdef",
        1,
        scheme="tls13",
        family="tls",
        mode="loopback",
        label="TLS 1.3 X25519MLKEM768 + ML-DSA-65 (chain 2) [pyopenssl] over 20 ms, 8000 kbit/s, 1 % loss",
        metrics={"connect": metric(40.7e-3), "handshake": metric(57.5e-3), "first_byte": metric(148e-3)},
        tls=records.tls_record(),
    )
    return records.run("20261128-100000-abcdef", [ops, session])


def test_the_report_has_a_row_per_tls13_job_with_what_it_negotiated_and_sent() -> None:
    report = build_report(_run())
    (section,) = [s for s in report.sections if s.title == TLS_TITLE]
    (table,) = [block for block in section.blocks if isinstance(block, Table)]
    assert len(table.rows) == 2
    ops, session = table.rows
    assert ops[2:5] == ["X25519MLKEM768", "mldsa65", "5\u202f652 B"]
    assert ops[5:7] == ["1.10", "1.30"] and session[5:7] == ["57.5", "148"]  # ms, one unit per column
    assert session[7:] == ["1\u202f447 B", "10\u202f333 B", "1"]
    markdown = render_markdown(report)
    assert f"## {TLS_TITLE}" in markdown and "server 10\u202f333 B (ServerHello, EncryptedExtensions" in markdown


def test_the_pdf_paints_the_tls_section(tmp_path: Path) -> None:
    path = tmp_path / "tls.pdf"
    pages = write_pdf(build_report(_run()), path)
    assert pages >= 1 and path.read_bytes().startswith(b"%PDF")


def test_the_cli_says_what_the_report_and_the_window_say() -> None:
    run = _run()
    out = io.StringIO()
    print_summary(Console(file=out, width=200, force_terminal=False), run)
    for line in tls_lines(run.jobs[1]):
        assert line in out.getvalue()
    assert "handshake/first_byte" in out.getvalue()

"""What the kernel saw (TCP_INFO) in the report's session section, the Markdown and the CLI."""

from __future__ import annotations

import pytest

from app.core.records.job_conditions import Link
from app.core.records.job_tcp_info import TcpInfo
from app.core.results.model import RunResult
from app.core.vocab import Role
from app.report.content import build_report
from app.report.markdown import render_markdown
from app.report.model import Bullets, Paragraph, Section, Table
from app.report.tcp_info import KERNEL_TITLE, kernel_line
from tests.helpers.report_runs import build_run

SESSION_LABEL = "ECDH brainpoolP256r1 + SHA-256 + AES-256-GCM [cryptography]"

SENDER = TcpInfo(
    smoothed_rtt_s=41e-6,
    rtt_var_s=5e-6,
    retransmits_total=0,
    segments_out=224,
    segments_in=222,
    data_segments_out=224,
    data_segments_in=112,
    bytes_acked=7_213_408,
    bytes_received=3009,
    congestion_window_segments=18,
    mss_bytes=65483,
    exchanges=112,
)
RECEIVER = TcpInfo(
    smoothed_rtt_s=66e-6,
    rtt_var_s=49e-6,
    retransmits_total=0,
    segments_out=221,
    segments_in=222,
    data_segments_out=111,
    data_segments_in=222,
    bytes_acked=2592,
    bytes_received=7_213_372,
    congestion_window_segments=18,
    mss_bytes=32768,
    exchanges=112,
)


def _run(**tcp_info: TcpInfo) -> RunResult:
    run = build_run("20261121-100400-abcdef", "2026-11-21T10:04:00+00:00")
    session = next(job for job in run.jobs if job.label == SESSION_LABEL)
    session.tcp_info = tcp_info
    return run


def _kernel_section(run: RunResult) -> Section:
    return next(s for s in build_report(run).sections if s.title == KERNEL_TITLE)


def test_each_end_is_a_row_beside_the_session_breakdown() -> None:
    run = _run(sender=SENDER, receiver=RECEIVER)
    titles = [s.title for s in build_report(run).sections]
    assert titles.index(KERNEL_TITLE) == titles.index("Loopback breakdown") + 1
    section = _kernel_section(run)
    assert section.level == 2
    (table,) = [b for b in section.blocks if isinstance(b, Table)]
    assert [row[1] for row in table.rows] == [Role.SENDER, Role.RECEIVER]
    sender = dict(zip(table.columns, table.rows[0]))
    assert sender["Job · size"] == SESSION_LABEL + " · 18 B"
    assert sender["Segments out / in"] == "224 / 222" and sender["Retransmits"] == "0"
    assert sender["Per exchange"] == "2.0"  # a 64 KiB message: two loopback segments
    assert sender["cwnd"] == "18 × 63.95 KiB"
    assert sender["Bytes acked"] == "6.879 MiB"
    assert any(c.startswith("sRTT") for c in table.columns)
    words = " ".join(b.text for b in section.blocks if isinstance(b, Paragraph))
    assert "round trip" in words and "congestion window" in words and "link process" not in words


def test_an_end_without_a_reading_is_named_with_its_reason() -> None:
    run = _run(sender=TcpInfo(unavailable="not available on this OS (Darwin): TCP_INFO is Linux's"))
    section = _kernel_section(run)
    assert not [b for b in section.blocks if isinstance(b, Table)]
    (bullets,) = [b for b in section.blocks if isinstance(b, Bullets)]
    assert bullets.items[0].endswith("sender: not available on this OS (Darwin): TCP_INFO is Linux's")
    assert "0" not in bullets.items[0].split("sender:")[1]


def test_over_a_link_process_the_report_says_whose_rtt_it_is() -> None:
    run = _run(sender=SENDER, receiver=RECEIVER)
    session = next(job for job in run.jobs if job.tcp_info)
    session.link = Link(
        name=None,
        delay_ms=20,
        jitter_ms=0,
        rate_kbit_up=8000,
        rate_kbit_down=8000,
        loss_percent=0,
        emulation="delay-line",
    )
    notes = [b.text for b in _kernel_section(run).blocks if isinstance(b, Paragraph) and b.style == "note"]
    assert notes and "to the link process" in notes[0] and "delayed ACK" in notes[0]


def test_no_section_without_tcp_info_and_markdown_carries_the_table() -> None:
    assert KERNEL_TITLE not in [s.title for s in build_report(_run()).sections]
    markdown = render_markdown(build_report(_run(sender=SENDER, receiver=RECEIVER)))
    assert f"## {KERNEL_TITLE}" in markdown and "| receiver |" in markdown


def test_kernel_line_and_the_cli_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert kernel_line(SENDER) == (
        "sRTT 41 µs, 224 segments out (2.0 per exchange), 222 in, 0 retransmissions, cwnd 18 segments"
    )
    assert kernel_line(TcpInfo(retransmits_total=1)) == "? segments out, ? in, 1 retransmission"
    from app.cli.terminal.console import make_console
    from app.cli.terminal.printing import print_summary

    print_summary(make_console(), _run(sender=SENDER, receiver=RECEIVER))
    lines = capsys.readouterr().out.splitlines()
    assert "    kernel (sender): " + kernel_line(SENDER) in lines
    assert "    kernel (receiver): " + kernel_line(RECEIVER) in lines

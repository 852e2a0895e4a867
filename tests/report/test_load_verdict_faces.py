"""One load verdict in every face: an X25519 sweep past its knee (the server overloaded,
the generator's late sends at the last two steps its back-pressure) reads "server
overloaded at 24,649 handshakes/s" in the Markdown report, the PDF, the terminal (piped
and on a terminal) and the results table, and "at least" nowhere."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from app.core.load.verdict import verdict_text
from app.gui.results.cells import Column
from app.gui.results.load_cells import load_row
from app.report.content import build_report
from app.report.markdown import render_markdown
from tests.helpers.loads import OVERLOADED_SWEEP, load, load_job, load_run
from tests.helpers.terminal import printed_summary

HEAD = "server overloaded from the step offered 24,868/s (achieved 24,252/s: p50 61 ms"
#: The knee with the step it comes from (not the first overloaded step's offered rate).
KNEE = "the knee, the most it achieved, 24,649 handshakes/s on one core (CPU 1) at the step offered 34,599/s"
#: A lower bound claimed for a rate (the Method's own "at least 95 % of offered" is no claim).
AT_LEAST = re.compile(r"at least [\d,]+ handshakes|limit lies higher|\(at least\)")


def _run():  # type: ignore[no-untyped-def]
    return load_run([load_job(0, "X25519 [cryptography]", load(OVERLOADED_SWEEP), family="key-agreement", pq=0)])


def _verdict() -> str:
    job = _run().jobs[0]
    assert job.load is not None
    text = verdict_text(job, job.load)
    assert text.startswith(HEAD) and "at least" not in text
    return text


def test_the_markdown_report_says_the_core_verdict() -> None:
    text = render_markdown(build_report(_run()))
    assert f"**X25519**: {_verdict()}." in text
    assert not AT_LEAST.search(text)
    # The steps table: the 97.5 % step is not kept up with, the late ones are the server's.
    assert "| 24,868 | 24,252 |" in text
    rows = [line for line in text.splitlines() if line.startswith(("| 24,868 ", "| 28,112 ", "| 34,599 "))]
    assert len(rows) == 3 and all(row.rstrip(" |").endswith("server overloaded") for row in rows)
    assert "generator limited" not in text


def test_the_pdf_says_the_core_verdict(qapp: object, tmp_path: Path) -> None:
    from app.report.pdf.writer import write_pdf

    tool = shutil.which("pdftotext")
    if not tool:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    path = tmp_path / "load.pdf"
    write_pdf(build_report(_run()), path)
    text = " ".join(subprocess.run([tool, str(path), "-"], capture_output=True, text=True, check=True).stdout.split())
    assert HEAD in text and KNEE in text
    assert "sustains 21,624/s at p99 under 3 ms" in text
    assert not AT_LEAST.search(text)


@pytest.mark.parametrize("terminal", [False, True], ids=["piped", "terminal"])
def test_the_terminal_says_the_core_verdict(terminal: bool) -> None:
    text = printed_summary(_run(), terminal, width=120)
    assert f"verdict: {_verdict()}" in " ".join(text.split())
    assert not AT_LEAST.search(text)
    summary = text[text.index("Load summary") :]
    assert "24,649" in summary and "21,624" in summary


def test_the_results_table_says_the_core_verdict() -> None:
    cells = load_row(_run().jobs[0])
    assert cells[Column.MEDIAN].text == "knee 24,649/s"  # the server's limit, not "≥"
    assert (cells[Column.MEDIAN].tip or "").startswith(f"Verdict: {_verdict()}\n")
    assert cells[Column.P95].text == "p99 3 ms"

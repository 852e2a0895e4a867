"""The verdict checker (tests/helpers/report_verdicts.py) can fail: on hand-built reports
with each kind of wrong verdict it names the problem, in the Markdown and on the PDF's
pages; on the same reports said rightly it finds nothing. The checks run over every
preset's reduced report in tests/report/test_handing_on.py, and at full size in
benchmarks/bench_report_verdicts.py."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from app.report.markdown import render_markdown
from app.report.model import BarChart, Chart, LineChart, Paragraph, Report, Section, Series, Table
from tests.helpers import records
from tests.helpers.loads import load, load_job, load_run, step
from tests.helpers.report_verdicts import chart_problems, pdf_verdict_problems, table_problems, verdict_problems

#: Said rightly: each verdict with evidence that holds it.
RIGHT = [
    "**Hashes**, 1 KiB messages (hash, median of 2 schemes): fastest SHA-256 at 2.36 µs, slowest SHA3-256 at "
    "18.7 µs, 7.9× slower than the fastest (n = 20 and 20, 95 % intervals 2.32 µs to 2.42 µs and 16.8 µs to "
    "25.2 µs).",
    "**Hashes**, 1 KiB messages: SHA-256 at 2.36 µs and SHA3-256 at 18.7 µs, no verdict: too few samples (n = 3 "
    "and 3; a verdict needs 10 a side).",
    "ML-KEM-768 (54.9 µs) cannot be told apart from it (their 95 % intervals overlap: n = 20 and 20, 95 % "
    "intervals 53.7 µs to 56.3 µs and 40.8 µs to 58.8 µs).",
    "Against baseline run b, of 3 matched jobs 1 slower (AES-256-GCM at 1 KiB 2.00× (95 % interval 1.99× to "
    "2.01×, n = 30 and 30)), 0 faster, 2 within noise (ratio of medians, this run / baseline).",
    "The ratio is this run's median over the baseline's (above 1: slower now).",
    # Facing ends that print alike: apart below the printed precision (52.38 µs and 52.41 µs).
    "fastest Ed25519 at 51.5 µs, slowest ECDSA P-256 at 55.1 µs, 1.07× slower than the fastest (n = 15 and 15, "
    "95 % intervals 50.1 µs to 52.4 µs and 52.4 µs to 66.7 µs).",
]

#: Each kind of wrong verdict, and what the checker says of it.
WRONG = {
    "a ranking on too few samples": (
        "fastest X25519 at 54.7 µs, slowest ECDH brainpoolP256r1 at 33.2 ms, 607× slower than the fastest (n = 3 "
        "and 3, 95 % intervals 50 µs to 60 µs and 30 ms to 40 ms).",
        "a verdict on n = 3 and 3",
    ),
    "faster on overlapping intervals": (
        "ML-KEM-768 (70.2 µs) is 1.0× faster than RSA-KEM-3072 (n = 20 and 20, 95 % intervals 50 µs to 80 µs and "
        "60 µs to 90 µs).",
        "a verdict on overlapping 95 % intervals",
    ),
    "the fastest, without evidence": (
        "**Hybrid / KEM**, 1 KiB messages: fastest ML-KEM-768 at 54.9 µs, slowest ECIES at 824 µs, 15.0× slower "
        "than the fastest.",
        "a verdict without its evidence",
    ),
    "cannot be told apart, 600x apart": (
        "X25519 at 54.7 µs and ECDH brainpoolP256r1 at 33.2 ms cannot be told apart (n = 3 and 3).",
        "'cannot be told apart' of figures 607× apart",
    ),
    "cannot be told apart on too few samples": (
        "AES at 1 µs and ChaCha at 1.2 µs cannot be told apart (n = 3 and 3).",
        "too few samples is no verdict",
    ),
    "cannot be told apart, intervals apart": (
        "AES at 1 µs and ChaCha at 1.2 µs cannot be told apart (their 95 % intervals overlap: n = 20 and 20, 95 % "
        "intervals 0.99 µs to 1.01 µs and 1.19 µs to 1.21 µs).",
        "'cannot be told apart' of intervals that do not overlap",
    ),
    "slower across runs, the interval containing 1": (
        "Against baseline run b, of 1 matched jobs 1 slower (ECDH P-256 at 18 B 1.62× (95 % interval 0.98× to "
        "2.28×, n = 20 and 20)), 0 faster.",
        "a verdict on an interval that contains 1",
    ),
    "slower across runs on too few samples": (
        "Against baseline run b, of 1 matched jobs 1 slower (ECDH P-256 at 18 B 3.84× (95 % interval 3.84×, n = 1 "
        "and 1)), 0 faster.",
        "a verdict on n = 1 and 1",
    ),
    "faster across runs, on the slower side": (
        "ECDH P-256 exchange is 1.62× faster now (95 % interval 1.14× to 2.28×, n = 20 and 20).",
        "a verdict on the wrong side of 1",
    ),
}


@pytest.mark.parametrize("kind", list(WRONG))
def test_each_kind_of_wrong_verdict_in_words_is_found(kind: str) -> None:
    text, said = WRONG[kind]
    found = verdict_problems(text)
    assert found and said in found[0], found


def test_verdicts_said_rightly_are_not_found() -> None:
    assert [p for text in RIGHT for p in verdict_problems(text)] == []


def _report(*blocks: object) -> Report:
    return Report("Hand-built", "", [], [Section("Summary of findings", list(blocks))])  # type: ignore[arg-type]


def test_the_checker_fails_on_a_wrong_report_in_both_faces(qapp: object, tmp_path: Path) -> None:
    """A whole report with every wrong sentence: found in its Markdown and on its PDF pages."""
    from app.report.pdf.writer import write_pdf

    report = _report(*(Paragraph(text) for text, _ in WRONG.values()), *(Paragraph(text) for text in RIGHT))
    markdown = render_markdown(report)
    assert len(verdict_problems(markdown)) == len(WRONG)
    tool = shutil.which("pdftotext")
    if not tool:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    write_pdf(report, tmp_path / "wrong.pdf")
    pages = subprocess.run([tool, str(tmp_path / "wrong.pdf"), "-"], capture_output=True, text=True, check=True)
    found = pdf_verdict_problems(pages.stdout.split("\f"))
    assert {kind for kind, (_, said) in WRONG.items() if any(said in p for p in found)} == set(WRONG)


def _comparison(verdict: str, interval: str, counts: str) -> Table:
    return Table(
        ["Job", "Size", "Ratio (this/baseline)", "95 % interval", "n (baseline / this)", "Verdict"],
        [["ECDH P-256", "18 B", "1.62×", interval, counts, verdict]],
    )


def test_a_comparison_table_s_verdict_is_held_to_its_interval_and_samples() -> None:
    assert table_problems(_report(_comparison("slower", "1.14–2.28×", "20 / 20"))) == []
    assert table_problems(_report(_comparison("no verdict", "0.98–2.28×", "3 / 3"))) == []
    (wrong,) = table_problems(_report(_comparison("slower", "0.98–2.28×", "20 / 20")))
    assert "slower on the interval 0.98–2.28×" in wrong
    (thin,) = table_problems(_report(_comparison("faster", "0.50–0.60×", "3 / 3")))
    assert "faster on n = 3 / 3" in thin


def test_a_bold_fastest_row_is_held_to_the_run_s_intervals() -> None:
    """Bold in a timing table says "the fastest": its interval must lie below the others'."""
    close = records.run(
        "r",
        [
            records.job("r", 0, 1024, {"encrypt": [1e-6 * (1 + 0.3 * (k % 7)) for k in range(20)]}, label="AES"),
            records.job("r", 1, 1024, {"encrypt": [1.1e-6 * (1 + 0.3 * (k % 5)) for k in range(20)]}, label="ChaCha"),
        ],
    )
    table = Table(
        ["Scheme", "Size", "Metric", "Mean", "Median"],
        [["AES", "1 KiB", "encrypt", "1.9", "1.9"], ["ChaCha", "1 KiB", "encrypt", "2.0", "2.0"]],
        emphasis={0},
    )
    (wrong,) = table_problems(_report(table), close)
    assert "AES bold as the fastest, its interval overlapping ChaCha's" in wrong
    table.emphasis = set()
    assert table_problems(_report(table), close) == []


def test_chart_labels_are_unique_bars_inside_their_whiskers_and_load_points_one_step_each() -> None:
    bars = BarChart("Medians", ["AES", "AES"], [1e-6, 2e-6], [0.9e-6, 2.5e-6], [1.1e-6, 3e-6])
    found = chart_problems(_report(Chart(bars)))
    assert any("a label twice: AES" in p for p in found)
    assert any("AES's bar 2e-06 outside its whiskers" in p for p in found)
    run = load_run(
        [load_job(0, "X25519 [cryptography]", load([step(1000, 930, 40e-3, 90e-3), step(1100, 960, 80e-3, 150e-3)]))]
    )
    right = LineChart(
        "p99 latency against achieved rate", "rate", "", "p99", "s", [Series("X25519", [930, 960], [90e-3, 150e-3])]
    )
    assert chart_problems(_report(Chart(right)), run) == []
    # The knee's rate (960/s, achieved at the 1,100/s step) beside the first step's latency: two steps in one point.
    mixed = LineChart(
        "p99 latency against achieved rate", "rate", "", "p99", "s", [Series("X25519", [960, 930], [90e-3, 150e-3])]
    )
    found = chart_problems(_report(Chart(mixed)), run)
    assert len(found) == 2 and "X25519's point (960/s, 0.09 s) is no step's rate and latency" in found[0]
    twice = LineChart(
        "p99 latency against achieved rate",
        "rate",
        "",
        "p99",
        "s",
        [Series("X", [930], [90e-3]), Series("X", [960], [150e-3])],
    )
    assert any("a label twice: X" in p for p in chart_problems(_report(Chart(twice)), run))

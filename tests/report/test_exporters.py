"""The one exporter interface: every format on hand-built results, atomic, clear errors."""

from __future__ import annotations

import csv
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from app.core.results.model import RunResult, load_results_file
from app.report.exporters import EXPORTERS, ExportError, export, exporter


def test_every_format_is_registered_with_its_suffix() -> None:
    assert {name: e.suffix for name, e in EXPORTERS.items()} == {
        "json": ".json",
        "csv": ".csv",
        "markdown": ".md",
        "pdf": ".pdf",
    }
    assert [e.name for e in EXPORTERS.values() if e.is_report] == ["markdown", "pdf"]
    assert exporter("PDF").file_filter == "PDF report (*.pdf)"
    with pytest.raises(ExportError, match="unknown export format 'docx': choose one of json, csv, markdown, pdf"):
        exporter("docx")


def test_json_export_round_trips(hand_run: RunResult, tmp_path: Path) -> None:
    path = export("json", hand_run, tmp_path / "r.json")
    assert load_results_file(path).to_dict() == hand_run.to_dict()


def test_csv_export_has_a_row_per_job_and_metric(hand_run: RunResult, tmp_path: Path) -> None:
    rows = list(csv.DictReader(io.StringIO(export("csv", hand_run, tmp_path / "r.csv").read_text())))
    expected = sum(max(1, len(job.metrics)) for job in hand_run.jobs)
    assert len(rows) == expected
    first = hand_run.jobs[0]
    metric_name, metric = next(iter(first.metrics.items()))
    row = next(r for r in rows if r["job_id"] == first.id and r["metric"] == metric_name)
    assert float(row["median"]) == metric.stats.median


def test_markdown_report_with_baseline(hand_run: RunResult, hand_baseline: RunResult, tmp_path: Path) -> None:
    text = export("markdown", hand_run, tmp_path / "r.md", baseline=hand_baseline).read_text()
    assert text.startswith("# CryptoBench report")
    for title in (
        "Summary of findings",
        "Environment",
        "Method",
        "Results by family",
        "Warnings",
        "Comparison with baseline",
        "Appendix: full statistics",
    ):
        assert f"## {title}" in text
    without = export("markdown", hand_run, tmp_path / "plain.md").read_text()
    assert "Comparison with baseline" not in without


def test_pdf_report_is_written_with_both_page_sizes(
    hand_run: RunResult, hand_baseline: RunResult, tmp_path: Path
) -> None:
    seen: list[tuple[int, int]] = []
    a4 = export("pdf", hand_run, tmp_path / "a4.pdf", baseline=hand_baseline, progress=lambda d, t: seen.append((d, t)))
    letter = export("pdf", hand_run, tmp_path / "letter.pdf", page_size="Letter")
    for path in (a4, letter):
        assert path.read_bytes().startswith(b"%PDF")
    assert seen and seen[-1][0] == seen[-1][1]
    if shutil.which("pdfinfo"):
        sizes = [
            subprocess.run(["pdfinfo", str(p)], capture_output=True, text=True, check=True).stdout for p in (a4, letter)
        ]
        assert "595.276 x 841.89 pts" in sizes[0] or "595 x 842 pts" in sizes[0]
        assert "612 x 792 pts" in sizes[1]


def test_bad_requests_are_refused_before_writing(hand_run: RunResult, hand_baseline: RunResult, tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="unknown page size 'A5'"):
        export("pdf", hand_run, tmp_path / "r.pdf", page_size="A5")
    with pytest.raises(ExportError, match="only applies to reports"):
        export("json", hand_run, tmp_path / "r.json", baseline=hand_baseline)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("name", list(EXPORTERS))
def test_a_folder_that_cannot_hold_the_file_is_named(hand_run: RunResult, tmp_path: Path, name: str) -> None:
    not_a_folder = tmp_path / "plain-file"
    not_a_folder.write_text("x")
    target = not_a_folder / f"r{EXPORTERS[name].suffix}"
    with pytest.raises(OSError, match=str(target)):
        export(name, hand_run, target)


@pytest.mark.parametrize("name", list(EXPORTERS))
def test_a_failed_write_keeps_the_previous_file(
    hand_run: RunResult, tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / f"r{EXPORTERS[name].suffix}"
    target.write_bytes(b"previous")

    def disk_full(*args: object, **kwargs: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)  # the last step of every atomic write
    with pytest.raises(OSError, match="No space left on device"):
        export(name, hand_run, target)
    assert target.read_bytes() == b"previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == [target.name]  # no temporary file left


def test_text_exporters_stay_qt_free(tmp_path: Path) -> None:
    """JSON, CSV and Markdown work where Qt is absent (a server, a CI box)."""
    code = (
        "import sys, json\n"
        "from app.report.exporters import export\n"
        "from app.core.results.model import RunResult\n"
        "import app.report.content, app.report.markdown\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6')]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)

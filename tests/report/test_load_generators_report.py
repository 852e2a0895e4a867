"""The report's tables of a cluster load job's generators (app/report/load.py `generators_table`,
app/report/load_generator_words.py), in Markdown and in the PDF, and the Method's words on them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from app.core.results.model import RunResult
from app.report.content import build_report
from app.report.load import CLUSTER_METHOD, STEPS_TITLE
from app.report.markdown import render_markdown
from app.report.method import method_section
from app.report.model import Paragraph, Table
from app.report.pdf.writer import write_pdf
from tests.helpers.loads import CLUSTER, KNEE_STEPS, cluster_load, load, load_job, load_run

LABEL = "X25519 + HKDF-SHA256 + AES-256-GCM [cryptography]"


def _run() -> RunResult:
    """A cluster job (3 generators; #1 late at 1,600/s; #2 missing from the 800/s step) beside a local one."""
    cluster = cluster_load((400, 800, 1600), generators=3, late=(1, 1600), incomplete_at=800)
    return load_run(
        [
            load_job(0, LABEL, cluster, family="key-agreement", scheme="x25519", pq=0),
            load_job(1, "ML-KEM-768 + AES-256-GCM [cryptography]", load(KNEE_STEPS)),
        ]
    )


def _tables(run: RunResult) -> list[Table]:
    steps = next(s for s in build_report(run).sections if s.title == STEPS_TITLE)
    return [b for b in steps.blocks if isinstance(b, Table)]


def test_a_cluster_job_has_a_table_of_its_generators_under_its_steps() -> None:
    run = _run()
    the_load = run.jobs[0].load
    assert the_load is not None
    tables = _tables(run)
    assert len(tables) == 3  # cluster steps, its generators, the local job's steps (no generators table)
    generators = tables[1]
    assert generators.columns[:5] == ["Step/s", "Gen.", "Offered/s", "Achieved/s", "Completed"]
    assert generators.columns[8] == "Start (ms)"  # one unit for the column: "-250", not "-250 ms"
    assert [(row[0], row[1]) for row in generators.rows] == [
        (rate, f"#{g}") for rate in ("400", "533", "1,600") for g in (1, 2, 3)
    ]  # 533: what the two generators that returned the 800/s step offered
    records = {(k, part.generator): part for k, step in enumerate(the_load.steps) for part in step.generators}
    for k, row in enumerate(generators.rows):
        part = records.get((k // 3, k % 3 + 1))
        if part is None:
            assert row[2:] == ["-"] * 8 + ["missing"]
            continue
        assert row[2:5] == [f"{part.offered_per_s:,.0f}", f"{part.achieved_per_s:,.0f}", f"{part.completed:,}"]
        assert float(row[6]) == pytest.approx(part.latency_s["p99"] * 1e3, rel=5e-3)  # ms, 3 digits
        assert part.started_late_s is not None and float(row[8]) == pytest.approx(part.started_late_s * 1e3)
    assert generators.rows[6][-1] == "generator limited" and generators.rows[4][-1] == "missing"
    caption = generators.caption or ""
    assert f"3 generators through the Dask scheduler {CLUSTER}: #1 loadgen-a (worker tcp://10.0.0.11:40001)" in caption
    assert "clock -2.4 ms ± 400 µs" in caption
    assert "at 1,600/s, generator #1: the generator handed requests to the kernel up to 2.50 ms late" in caption
    assert "the step is incomplete" in caption
    # The steps table's caption names the incomplete step and why; its conditions the generators' machines.
    assert "incomplete: generator #2 (loadgen-b" in (tables[0].caption or "")
    assert "3 generators on Dask workers (loadgen-a, loadgen-b, loadgen-c)" in (tables[0].caption or "")
    assert "generator on CPU" not in (tables[0].caption or "")


def test_the_markdown_has_the_generators_table() -> None:
    markdown = render_markdown(build_report(_run()))
    assert "| Step/s | Gen. | Offered/s | Achieved/s | Completed | p50 (ms) | p99 (ms) | Send lag (ms) |" in markdown
    assert "| Send lag (ms) | Start (ms) | Gen. CPU | Note |" in markdown
    assert "| 533 | #2 | - | - | - | - | - | - | - | - | missing |" in markdown


def test_the_method_explains_the_merge_only_for_a_run_with_generators_on_workers() -> None:
    def text(run: RunResult) -> str:
        return " ".join(b.text for b in method_section(run).blocks if isinstance(b, Paragraph))

    assert CLUSTER_METHOD.strip() in text(_run())
    assert "Dask" not in text(load_run())


def test_the_pdf_has_the_generators_table(qapp: object, tmp_path: Path) -> None:
    tool = shutil.which("pdftotext")
    if not tool:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    path = tmp_path / "r.pdf"
    write_pdf(build_report(_run()), path)
    text = " ".join(subprocess.run([tool, str(path), "-"], capture_output=True, text=True, check=True).stdout.split())
    assert "per generator: 3 generators through the Dask scheduler" in text
    assert "Offered/s Achieved/s Completed p50 (ms) p99 (ms) Send lag (ms) Start (ms) Gen. CPU" in text

"""Every preset's report at full size, held to the verdict checks the suite runs at n = 3.

tests/report/test_handing_on.py checks every preset's *reduced* report (n = 3 a metric, so
almost every verdict is "no verdict"); a full run has the samples for verdicts, so this is
where the words are held to their evidence in earnest. For each preset (or the ones named):
run it in full with the command line (`--no-store`, results kept in --keep), build its
report, paint the PDF, and run the checks of tests/helpers/report_verdicts.py (verdict words
against their samples and intervals, "cannot be told apart" never for figures over 3×
apart, each chart's points one step's, labels unique per chart) and of
tests/helpers/report_words.py (no sentence twice, no link named twice, no degenerate range)
over the Markdown and every PDF page. Prints, per preset: jobs, the verdicts said with
their evidence, the "no verdict" and "cannot be told apart" said instead, and what the
checks found. Full runs are long (pq-over-links ~15 min, rsa-vs-elgamal ~10 min here).
Run:
    .venv/bin/python benchmarks/bench_report_verdicts.py                 # every preset
    .venv/bin/python benchmarks/bench_report_verdicts.py quick backends  # some
    .venv/bin/python benchmarks/bench_report_verdicts.py --keep DIR      # reuse DIR's results
Figures: benchmarks/README.md, "Verdicts in every preset's full report".
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.profile.files import preset_names
from app.core.results.model import load_results_file
from app.report.content import build_report
from app.report.markdown import render_markdown
from app.report.pdf.writer import ensure_gui_application, write_pdf
from tests.helpers.report_verdicts import (
    evidence_said,
    pdf_verdict_problems,
    report_verdict_problems,
    verdict_problems,
)
from tests.helpers.report_words import markdown_sections, problems


def _results(name: str, keep: Path) -> Path:
    path = keep / f"{name}.json"
    if not path.is_file():
        command = [sys.executable, "-m", "app", "run", name, "--no-store", "--quiet", "--json", str(path)]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return path


def _pages(pdf: Path) -> list[str]:
    tool = shutil.which("pdftotext")
    if not tool:
        return []
    text = subprocess.run([tool, str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    return [" ".join(page.split()) for page in text.split("\f")]


def check(name: str, keep: Path, out: Path) -> dict[str, object]:
    run = load_results_file(_results(name, keep))
    report = build_report(run)
    markdown = render_markdown(report)
    pdf = out / f"{name}.pdf"
    write_pdf(report, pdf)
    found = []
    for section in markdown_sections(markdown):
        found += [f"Markdown: {p}" for p in problems(section) + verdict_problems(section)]
    pages = _pages(pdf)
    for number, page in enumerate(pages, start=1):
        found += [f"PDF page {number}: {p}" for p in problems(page)]
    found += [f"PDF: {p}" for p in pdf_verdict_problems(pages)]
    found += [f"model: {p}" for p in report_verdict_problems(report, run)]
    prose = "\n".join(line for line in markdown.splitlines() if not line.startswith(("|", "#")))
    return {
        "preset": name,
        "jobs": len(run.jobs),
        "samples": sorted({m.stats.n for job in run.jobs for m in job.metrics.values()}),
        "verdicts": evidence_said(prose),
        "no verdict": len(re.findall(r"no verdict", prose)),
        "told apart": len(re.findall(r"cannot be told apart", prose)),
        "problems": found,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("presets", nargs="*", help="presets to check (default: all)")
    parser.add_argument("--keep", type=Path, default=None, help="results folder: reused, and filled with new runs")
    args = parser.parse_args()
    ensure_gui_application()
    keep = args.keep or Path(tempfile.mkdtemp(prefix="verdicts-"))
    keep.mkdir(parents=True, exist_ok=True)
    print(
        "| preset | jobs | samples a metric | verdicts with evidence | no verdict | cannot be told apart | problems | seconds |"
    )
    print("|---|---|---|---|---|---|---|---|")
    every: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.presets or preset_names():
            started = time.monotonic()
            row = check(name, keep, Path(tmp))
            samples = row["samples"]
            assert isinstance(samples, list)
            counts = f"{samples[0]}-{samples[-1]}" if samples else "-"
            found = row["problems"]
            assert isinstance(found, list)
            every += [f"{name}: {p}" for p in found]
            print(
                f"| {name} | {row['jobs']} | {counts} | {row['verdicts']} | {row['no verdict']} | {row['told apart']} "
                f"| {len(found)} | {time.monotonic() - started:,.0f} |",
                flush=True,
            )
    for problem in every:
        print(problem)
    print(f"results in {keep}")


if __name__ == "__main__":
    main()

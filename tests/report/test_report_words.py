"""The report's words, in both faces (Markdown and PDF) and for several kinds of run: no
sentence twice in a section or on a page, no link named twice, no range whose ends read
the same; and a Method that describes only what each kind of job did."""

from __future__ import annotations

import copy
import shutil
import subprocess
from pathlib import Path

import pytest

from app.core.records.job_conditions import Link
from app.core.results.model import JobResult, RunResult
from app.core.settings.links import link_title
from app.report.content import build_report
from app.report.markdown import render_markdown
from app.report.method import method_section
from app.report.model import Bullets, Chart, Paragraph, StackedBars
from app.report.pdf.writer import write_pdf
from app.report.units import format_bytes, format_seconds, span_text
from tests.helpers import records
from tests.helpers.loads import KNEE_STEPS, cluster_load, load, load_job, load_run
from tests.helpers.records import spread_samples
from tests.helpers.report_runs import ENVIRONMENT, PROFILE, metric
from tests.helpers.report_verdicts import pdf_verdict_problems, report_verdict_problems, verdict_problems
from tests.helpers.report_words import degenerate_ranges, doubled_links, markdown_sections, problems

LAN = Link("lan", 0.1, 0.0, 1e6, 1e6, 0.0, "packet")
LTE = Link("lte", 35.0, 0.0, 12_000.0, 12_000.0, 0.0, "packet")


def _session(index: int, scheme: str, link: Link | None, compute: float, network: float) -> JobResult:
    """A loopback job as a link sweep records it: its label ends "over <link title>"."""
    label = f"{scheme} [cryptography]" + (f" over {link_title(link)}" if link else "")
    metrics = {
        "compute": metric(spread_samples(compute, n=12)),
        "receiver": metric(spread_samples(compute, n=12)),
        "network": metric(spread_samples(network, n=12)),
        "rtt": metric(spread_samples(compute + network, n=12)),
    }
    return records.job(
        "r", index, 1024, metrics, scheme=scheme.lower(), params={}, label=label, family="key-agreement",
        mode="loopback", link=link,
    )  # fmt: skip


def _links_run() -> RunResult:
    """Two schemes swept over LAN and LTE, and one over LTE alone (a `--link lte` run)."""
    jobs = [
        _session(0, "X25519", LAN, 5e-6, 2.2e-4),
        _session(1, "X25519", LTE, 5e-6, 0.071),
        _session(2, "RSA-KEM-3072", LAN, 1e-3, 2.4e-4),
        _session(3, "RSA-KEM-3072", LTE, 1e-3, 0.072),
        _session(4, "ECDH-P256", LTE, 6e-5, 0.07),
    ]
    for job in jobs[2:4]:  # a scheme's note, on each link it was swept over: said once
        job.notes = ["RSA-KEM with OAEP (SHA-256) wrapping a fresh AES-256-GCM key for every message"]
    return records.run("r", jobs, started="2026-11-23T10:00:00+00:00", environment=ENVIRONMENT, profile=PROFILE)


def _cluster_run() -> RunResult:
    """Load jobs whose generators ran on Dask workers (one with an incomplete and a late
    step), beside one with a local generator."""
    jobs = [
        load_job(0, "X25519 [cryptography]", cluster_load((400, 800, 1600), late=(1, 1600), incomplete_at=800)),
        load_job(1, "ML-KEM-768 [cryptography]", cluster_load((200, 600), generators=3)),
        load_job(2, "ML-KEM-1024 [cryptography]", load(KNEE_STEPS)),
    ]
    return load_run(jobs)


def _reduced(run: RunResult) -> RunResult:
    small = copy.deepcopy(run)
    small.profile["name"] = f"{run.name} (reduced)"
    for job in small.jobs:
        for name, m in list(job.metrics.items()):
            job.metrics[name] = metric(m.samples[:3], batch=m.batch)
    return small


def _runs(hand_run: RunResult, hand_baseline: RunResult) -> dict[str, tuple[RunResult, RunResult | None]]:
    """The kinds of report a user hands on: a run, one with a baseline, a reduced run,
    load jobs, and sessions over links."""
    return {
        "run": (hand_run, None),
        "with baseline": (hand_run, hand_baseline),
        "reduced": (_reduced(hand_run), None),
        "reduced with baseline": (_reduced(hand_run), hand_run),
        "load": (load_run(), None),
        "load from several machines": (_cluster_run(), None),
        "links": (_links_run(), None),
    }


def _pdf_pages(path: Path) -> list[str]:
    tool = shutil.which("pdftotext")
    if not tool:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    text = subprocess.run([tool, str(path), "-"], capture_output=True, text=True, check=True).stdout
    return text.split("\f")


def test_the_checks_find_what_they_look_for() -> None:
    # The checks themselves, on the sentences the issue quoted: each must be caught.
    assert doubled_links("X25519 over LTE over the emulated link lte, 1 KiB")
    assert degenerate_ranges("Median time per message (jobs of 168 µs to 168 µs)")
    assert degenerate_ranges("ratio 3.84–3.84×")
    assert not degenerate_ranges("batched (13 to 3,333 calls per sample), jobs of 1.2 ms to 12 ms")
    twice = "The same sentence of eight words or more, said here. The same sentence of eight words or more, said here."
    assert problems(twice) and not problems("Short. Short.")
    # One job under two warnings (a full pq-over-links report): a list of labels, not a sentence said twice.
    job = "X25519 + HKDF-SHA256 over sensor radio · 1 KiB · loopback"
    assert not problems(
        f"- **keygen, compute**: {job}\n- **rtt, network**: {job}; X25519 over LTE · 1 KiB · loopback\n"
        f"- **receiver**: {job}"
    )


def test_markdown_sections_say_each_thing_once(hand_run: RunResult, hand_baseline: RunResult) -> None:
    found = []
    for kind, (run, baseline) in _runs(hand_run, hand_baseline).items():
        report = build_report(run, baseline)
        for section in markdown_sections(render_markdown(report)):
            said = problems(section) + verdict_problems(section)
            found += [f"{kind}: {section.splitlines()[0]}: {p}" for p in said]
        found += [f"{kind} (model): {p}" for p in report_verdict_problems(report, run)]
    assert found == []


def test_verdicts_the_evidence_supports_are_said_with_it(hand_run: RunResult, hand_baseline: RunResult) -> None:
    """With verdicts to say (a baseline judged as if runs never moved, samples enough), each
    is said with its evidence, and the checks find nothing to object to."""
    from tests.helpers.comparisons import STILL

    report = build_report(hand_run, hand_baseline, movement=STILL)
    markdown = render_markdown(report)
    assert "1 slower (AES-256-GCM at 1 KiB 2.00× (95 % interval 1.99× to 2.01×, n = 30 and 30))" in (markdown)
    assert "slower than the fastest (n = " in markdown
    found = [p for section in markdown_sections(markdown) for p in verdict_problems(section)]
    assert found + report_verdict_problems(report, hand_run) == []


def test_pdf_pages_say_each_thing_once(
    qapp: object, hand_run: RunResult, hand_baseline: RunResult, tmp_path: Path
) -> None:
    found = []
    for kind, (run, baseline) in _runs(hand_run, hand_baseline).items():
        path = tmp_path / f"{kind}.pdf"
        write_pdf(build_report(run, baseline), path)
        pages = _pdf_pages(path)
        for number, page in enumerate(pages, start=1):
            # pdftotext breaks lines where the PDF does; a sentence is checked whole.
            found += [f"{kind}, page {number}: {p}" for p in problems(" ".join(page.split()))]
        found += [f"{kind} (PDF): {p}" for p in pdf_verdict_problems(pages)]
    assert found == []


def test_a_linked_job_names_its_link_once_in_every_sentence() -> None:
    markdown = render_markdown(build_report(_links_run()))
    assert "ECDH-P256 over LTE, 1 KiB: communication dominates" in markdown
    assert "X25519 [cryptography], 1 KiB**: communication dominates on every link measured, from LAN on" in markdown
    assert " lte" not in markdown.replace("Delete", "")  # the preset's id never stands for its title
    assert doubled_links(markdown) == []
    assert (
        "**RSA-KEM-3072 [cryptography] over LAN; RSA-KEM-3072 [cryptography] over LTE**: RSA-KEM with OAEP" in markdown
    )


def test_a_range_whose_ends_read_the_same_is_one_value() -> None:
    assert span_text(168e-6, 168.2e-6, format_seconds) == "168 µs"
    assert span_text(1e-3, 12e-3, format_seconds) == "1 ms to 12 ms"
    assert span_text(1024, 1024, format_bytes) == "1 KiB"
    assert span_text(13, 3333, "{:,}".format) == "13 to 3,333"
    assert span_text(3.84, 3.84, "{:.2f}".format, joint="–") == "3.84"


def test_a_loopback_chart_of_one_job_gives_its_time_not_a_range() -> None:
    # Two sessions ten times apart: one chart each, each titled with its one job's time.
    run = records.run("r", [_session(0, "Fast", None, 5e-6, 5e-6), _session(1, "Slow", None, 5e-3, 5e-3)])
    loopback = next(s for s in build_report(run).sections if s.title == "Loopback breakdown")
    titles = [b.chart.title for b in loopback.blocks if isinstance(b, Chart) and isinstance(b.chart, StackedBars)]
    split = [t for t in titles if "(jobs of" in t]
    assert len(split) == 2 and all(" to " not in t for t in split), titles


def _method_text(run: RunResult) -> str:
    blocks = method_section(run).blocks
    return " ".join(
        b.text if isinstance(b, Paragraph) else " ".join(b.items) for b in blocks if not isinstance(b, Chart)
    )


def test_method_of_load_jobs_lists_no_samples_warmup_or_key_generations() -> None:
    text = _method_text(load_run())
    for absent in ("warm-up sample", "key generation", "batched", "tracemalloc", "Throughput", "sender on"):
        assert absent not in text, absent
    assert "server on CPU 1, generator on CPU 0 (split)" in text
    assert "Load jobs run one server" in text


def test_method_of_timed_jobs_says_key_generations_only_where_timed(hand_run: RunResult) -> None:
    text = _method_text(hand_run)
    assert "warm-up sample" in text and "batch" in text and "tracemalloc" in text
    aead_only = copy.deepcopy(hand_run)
    aead_only.jobs = [j for j in aead_only.jobs if "keygen" not in j.metrics]
    aead_only.profile["jobs"] = [
        s for s in aead_only.profile["jobs"] if s.get("scheme") in {j.scheme for j in aead_only.jobs}
    ]
    assert "key generation" not in _method_text(aead_only)
    # A mixed run says which jobs the counts are for.
    mixed = copy.deepcopy(hand_run)
    mixed.jobs += load_run().jobs
    mixed_text = _method_text(mixed)
    assert "Every operations and session job took" in mixed_text or "Sample counts per profile job" in mixed_text
    assert all(isinstance(b, (Paragraph, Bullets)) for b in method_section(mixed).blocks)


def test_a_spread_column_reads_in_the_unit_of_the_times_beside_it() -> None:
    from app.report.model import Table
    from app.report.tidy import unify_time_columns

    table = Table(
        ["Scheme", "Mean", "Median", "Std", "Round trip", "Note"],
        [["a", "42.1 µs", "41.9 µs", "393 ns", "70.1 ms", "ok"], ["b", "1.2 ms", "1.1 ms", "80 µs", "71 ms", "ok"]],
    )
    unify_time_columns(table)
    assert table.columns == ["Scheme", "Mean (µs)", "Median (µs)", "Std (µs)", "Round trip (µs)", "Note"]
    assert table.rows[0][1:5] == ["42.1", "41.9", "0.393", "70,100"]


def word_problems(name: str, report: object, pdf: Path, run: RunResult | None = None) -> list[str]:
    """What the checks find in a report's Markdown sections and in each page of its PDF
    (written to `pdf` already): repeats, doubled links, degenerate ranges, and verdicts their
    evidence does not support (tests/helpers/report_verdicts.py); with the `run` it was built
    from, its tables' and charts' verdicts, labels and points too. tests/report/test_handing_on.py
    runs it on every preset's reduced report, whose PDFs it paints anyway."""
    found = []
    for section in markdown_sections(render_markdown(report)):  # type: ignore[arg-type]
        said = problems(section) + verdict_problems(section)
        found += [f"{name} (Markdown): {section.splitlines()[0]}: {p}" for p in said]
    pages = _pdf_pages(pdf)
    for number, page in enumerate(pages, start=1):
        found += [f"{name} (PDF page {number}): {p}" for p in problems(" ".join(page.split()))]
    found += [f"{name} (PDF): {p}" for p in pdf_verdict_problems(pages)]
    found += [f"{name} (model): {p}" for p in report_verdict_problems(report, run)]  # type: ignore[arg-type]
    return found


@pytest.mark.slow
@pytest.mark.xdist_group("preset-runs")  # the preset runs of tests/test_preset_runs.py, run once
def test_a_preset_s_report_against_another_preset_s_baseline_says_each_thing_once(qapp: object, tmp_path: Path) -> None:
    """quick against cnsa-suite's run as its baseline (every preset's own reduced report is
    checked where test_handing_on.py paints it): no repeat, doubled link or degenerate range."""
    from tests.test_preset_runs import _run

    report = build_report(_run("quick"), _run("cnsa-suite"))
    write_pdf(report, tmp_path / "quick.pdf")
    assert word_problems("quick with baseline", report, tmp_path / "quick.pdf", _run("quick")) == []


def test_a_linked_job_s_short_label_drops_its_aead_tail_too() -> None:
    from app.report.labels import Labels

    jobs = [_session(0, "X25519 + HKDF-SHA256 + AES-256-GCM", LAN, 5e-6, 2e-4)]
    assert Labels(jobs).name(jobs[0]) == "X25519 + HKDF-SHA256 over LAN"


def test_a_list_of_jobs_under_two_warnings_is_given_once(hand_run: RunResult) -> None:
    from app.core.statistics.stability_warnings import StabilityWarning, WarningCode
    from app.report.labels import Labels

    busy = copy.deepcopy(hand_run)
    measured = [job for job in busy.jobs if job.status == "ok"][:4]
    for job in measured:
        job.warnings = [
            StabilityWarning.make(WarningCode.MACHINE_BUSY, None, "Other processes used 82 % of one core"),
            StabilityWarning.make(WarningCode.OUTLIERS, None, "Many outliers"),
            StabilityWarning.make(WarningCode.HIGH_CV, None, "CV 12 %"),
        ]
    from app.report.conditions import _WARNING_TITLES, warnings_section

    section = warnings_section(busy, Labels(busy.jobs))
    items = [i for b in section.blocks if isinstance(b, Bullets) for i in b.items if i.startswith("**whole job**")]
    assert len(items) == 3 and items[0].count(";") == 3, items  # four jobs, listed under the first kind
    first = _WARNING_TITLES[WarningCode.HIGH_CV]  # WarningCode's order: the first kind listed
    assert items[0].startswith("**whole job**: ") and first not in items[0]
    # Two later kinds point to the one list, each in words of its own: no bullet said twice.
    assert len(set(items[1:])) == 2 and all(f"the same 4 jobs as under {first}" in item for item in items[1:])

"""The report content: sections, findings with the right numbers, tables, charts, comparison.

Expected numbers are computed here from the hand-built samples (numpy medians), never
copied from the implementation's output.
"""

from __future__ import annotations

import copy
import re
import subprocess
import sys

import numpy as np
import pytest

from app.core.results.model import RunResult
from app.report.content import build_report
from app.report.job_figures import primary_metric
from app.report.model import (
    BarChart,
    Bullets,
    Chart,
    Histogram,
    LineChart,
    Paragraph,
    Report,
    Section,
    StackedBars,
    Table,
)
from app.report.units import format_seconds, format_seconds_in
from tests.helpers.report_runs import FAILED_ERROR, IDENTICAL_JOB, SLOWER_JOB, find_job

EXPECTED_TITLES = [
    "Summary of findings",
    "Comparison with baseline",
    "Environment",
    "Method",
    "Results by family",
    "Loopback breakdown",
    "Cost against security level",
    "Warnings",
    "Appendix: full statistics",
]
AES = "AES-256-GCM [cryptography]"
CHACHA = "ChaCha20-Poly1305 [cryptography]"
RSA_KEM = "RSA-KEM-2048 (OAEP) + AES-256-GCM [cryptography]"
ECIES = "ECIES secp256k1 (HKDF-SHA256) + AES-256-GCM [cryptography]"
ML_KEM = "ML-KEM-768 + AES-256-GCM [cryptography]"
SESSION = "ECDH brainpoolP256r1 + SHA-256 + AES-256-GCM [cryptography]"
#: The short labels charts and the summary use (each backend is the only one of its scheme).
SHORT = {
    AES: "AES-256-GCM",
    CHACHA: "ChaCha20-Poly1305",
    RSA_KEM: "RSA-KEM-2048 (OAEP)",
    ECIES: "ECIES secp256k1 (HKDF-SHA256)",
    ML_KEM: "ML-KEM-768",
    SESSION: "ECDH brainpoolP256r1 + SHA-256",
    "ML-DSA-65 [cryptography]": "ML-DSA-65",
}


def section(report: Report, title: str) -> Section:
    return next(s for s in report.sections if s.title == title)


def cell(table: Table, row: list[str], column: str) -> tuple[str, str]:
    """A time cell and its column's unit: ("1.50", "µs") from header "Median (µs)"."""
    index = next(i for i, c in enumerate(table.columns) if c == column or c.startswith(f"{column} ("))
    header = table.columns[index]
    return row[index], header[header.rindex("(") + 1 : -1] if header.endswith(")") else ""


def texts(sec: Section) -> list[str]:
    """Every sentence of a section: paragraphs and bullet items."""
    out: list[str] = []
    for block in sec.blocks:
        if isinstance(block, Paragraph):
            out.append(block.text)
        elif isinstance(block, Bullets):
            out.extend(block.items)
    return out


def charts(sec: Section, kind: type) -> list:
    return [b.chart for b in sec.blocks if isinstance(b, Chart) and isinstance(b.chart, kind)]


def med(run: RunResult, label: str, size: int, metric: str) -> float:
    return float(np.median(find_job(run, label, size).metrics[metric].samples))


def ratio_words(ratio: float) -> str:
    return f"{ratio:.1f}×" if ratio < 100 else f"{ratio:,.0f}×"


@pytest.fixture
def report(hand_run: RunResult, hand_baseline: RunResult) -> Report:
    return build_report(hand_run, hand_baseline)


def test_section_titles_in_order(report: Report, hand_run: RunResult) -> None:
    assert [s.title for s in report.sections if s.level == 1] == EXPECTED_TITLES
    families = [s.title for s in report.sections if s.level == 2]
    assert families == ["Authenticated encryption (AEAD)", "Key agreement", "Hybrid / KEM", "Signatures", "Hashes"]
    # Family subsections sit right after "Results by family".
    titles = [s.title for s in report.sections]
    assert titles.index("Authenticated encryption (AEAD)") == titles.index("Results by family") + 1
    without = build_report(hand_run)
    assert "Comparison with baseline" not in [s.title for s in without.sections]


def test_title_facts_and_footer(report: Report) -> None:
    assert report.title == "CryptoBench report: hand-built"
    assert report.subtitle == "Run 20261121-100400-hand01 · 10 measured jobs · finished"
    facts = dict(report.facts)
    assert [k for k, _ in report.facts][:6] == ["Date", "Machine", "App version", "Run id", "Profile", "Status"]
    assert facts["Date"].startswith("2026-11-21 10:04") and facts["Date"].endswith("UTC")
    assert "Test CPU 9000" in facts["Machine"] and "4 cores" in facts["Machine"] and "Debian" in facts["Machine"]
    assert "1 failed" in facts["Status"]
    assert report.footer == "CryptoBench 0.1.0 · run 20261121-100400-hand01"


def test_fastest_and_slowest_per_family_with_numbers(report: Report, hand_run: RunResult) -> None:
    findings = texts(section(report, "Summary of findings"))
    aead = [f for f in findings if f.startswith("**Authenticated encryption (AEAD)**, 1 KiB")]
    assert len(aead) == 1
    fast, slow = med(hand_run, AES, 1024, "encrypt"), med(hand_run, CHACHA, 1024, "encrypt")
    assert fast < slow
    sentence = aead[0]
    assert f"fastest {SHORT[AES]} at {format_seconds(fast)}" in sentence
    assert f"slowest {SHORT[CHACHA]} at {format_seconds(slow)}" in sentence
    assert f"{ratio_words(slow / fast)} slower than the fastest" in sentence
    # Like with like: the 1 MiB jobs get their own sentence, never mixed with 1 KiB.
    big = [f for f in findings if f.startswith("**Authenticated encryption (AEAD)**, 1 MiB")]
    assert len(big) == 1 and format_seconds(fast) not in big[0]


def test_kem_ratio_with_key_generation(report: Report, hand_run: RunResult) -> None:
    findings = texts(section(report, "Summary of findings"))
    kem = [f for f in findings if "counting key generation" in f]
    assert len(kem) == 1
    sentence = kem[0]
    total = {
        label: med(hand_run, label, 1024, "keygen") + med(hand_run, label, 1024, "encrypt")
        for label in (RSA_KEM, ECIES, ML_KEM)
    }
    assert "keygen median + encrypt median" in sentence  # says what was added
    assert f"{SHORT[RSA_KEM]} takes {format_seconds(total[RSA_KEM])}" in sentence
    assert f"{ratio_words(total[RSA_KEM] / total[ECIES])} slower than {SHORT[ECIES]}" in sentence
    assert f"{ratio_words(total[RSA_KEM] / total[ML_KEM])} slower than {SHORT[ML_KEM]}" in sentence
    # Without key generation RSA-KEM's encrypt is faster than ECIES's: said too.
    alone = med(hand_run, ECIES, 1024, "encrypt") / med(hand_run, RSA_KEM, 1024, "encrypt")
    assert f"{ratio_words(alone)} faster than {SHORT[ECIES]}" in sentence


def test_post_quantum_and_network_findings(report: Report, hand_run: RunResult) -> None:
    findings = texts(section(report, "Summary of findings"))
    pq = [f for f in findings if f.startswith("**Post-quantum vs classical**")]
    assert (
        len(pq) == 1 and SHORT[ML_KEM] in pq[0] and SHORT[RSA_KEM] in pq[0]
    )  # RSA-KEM: cheapest classical whole exchange
    assert format_seconds(med(hand_run, ML_KEM, 1024, "encrypt")) in pq[0]
    network = [f for f in findings if f.startswith(SHORT[SESSION])]
    assert len(network) == 1
    share = 100 * med(hand_run, SESSION, 18, "network") / med(hand_run, SESSION, 18, "rtt")
    assert f"network is {share:.1f} % of the round trip" in network[0]
    assert "communication dominates" in network[0]


def test_failed_job_in_findings_and_tables(report: Report) -> None:
    findings = texts(section(report, "Summary of findings"))
    assert any(f.startswith("**Failed**") and "ML-DSA-65" in f and FAILED_ERROR in f for f in findings)
    signatures = section(report, "Signatures")
    tables = [b for b in signatures.blocks if isinstance(b, Table)]
    timing = next(t for t in tables if "Median" in t.columns)
    row = next(r for r in timing.rows if r[0] == "ML-DSA-65 [cryptography]")
    assert row[2] == "failed" and set(row[3:]) == {"-"}  # no invented numbers
    resources = next(t for t in tables if "Status" in t.columns)
    status = resources.rows[0][resources.columns.index("Status")]
    assert status == f"failed: {FAILED_ERROR}"
    assert not charts(signatures, BarChart)  # nothing measured, nothing drawn
    appendix = texts(section(report, "Appendix: full statistics"))
    assert any(FAILED_ERROR in t for t in appendix)


def test_results_table_rows_and_emphasis(report: Report, hand_run: RunResult) -> None:
    aead = section(report, "Authenticated encryption (AEAD)")
    timing = next(b for b in aead.blocks if isinstance(b, Table) and "Median (µs)" in b.columns)
    assert timing.columns == [
        "Scheme",
        "Size",
        "Metric",
        "Mean (µs)",
        "Median (µs)",
        "p95 (µs)",
        "Std (µs)",
        "CV",
        "Throughput",
    ]  # one unit for the adjacent times: the spread in the unit of the times it spreads, never ns beside µs
    assert timing.widths is not None and len(timing.widths) == len(timing.columns)
    emphasised = [timing.rows[i] for i in timing.emphasis]
    # The fastest encrypt at each size: AES-GCM at both 1 KiB and 1 MiB.
    assert sorted((r[0], r[1]) for r in emphasised) == [(AES, "1 KiB"), (AES, "1 MiB")]
    assert all(r[2].startswith("encrypt") for r in emphasised)
    row = next(r for r in timing.rows if r[0] == AES and r[1] == "1 KiB" and r[2].startswith("encrypt"))
    assert row[4] == format_seconds_in(med(hand_run, AES, 1024, "encrypt"), "µs")
    assert row[2] == "encrypt (×200)"  # batched: said in the table
    resources = next(b for b in aead.blocks if isinstance(b, Table) and "Validation" in b.columns)
    assert resources.rows[0][resources.columns.index("Validation")] == "100/100 ok, tamper 5/5 rejected"


def test_bar_chart_data_equal_stats(report: Report, hand_run: RunResult) -> None:
    hybrid = section(report, "Hybrid / KEM")
    (bar,) = charts(hybrid, BarChart)
    jobs = [j for j in hand_run.jobs if j.family == "hybrid"]
    assert bar.values == [j.metrics["encrypt"].stats.median for j in jobs]
    assert bar.low == [j.metrics["encrypt"].stats.ci95[0] for j in jobs]
    assert bar.high == [j.metrics["encrypt"].stats.ci95[1] for j in jobs]
    assert bar.values[0] == pytest.approx(np.median(jobs[0].metrics["encrypt"].samples))
    assert bar.marked == [False, False, True] and bar.marked_label == "post-quantum"
    assert bar.labels[0] == f"{SHORT[RSA_KEM]} · 1 KiB"


def test_scaling_and_histogram_charts(report: Report, hand_run: RunResult) -> None:
    aead = section(report, "Authenticated encryption (AEAD)")
    (scaling,) = charts(aead, LineChart)
    assert scaling.log_x and scaling.log_y
    assert [s.name for s in scaling.series] == [SHORT[AES], SHORT[CHACHA]]
    assert scaling.series[1].xs == [1024.0, 1048576.0]
    assert scaling.series[1].ys == [med(hand_run, CHACHA, 1024, "encrypt"), med(hand_run, CHACHA, 1048576, "encrypt")]
    assert not charts(section(report, "Hybrid / KEM"), LineChart)  # one size each: no scaling chart
    (hist,) = charts(aead, Histogram)
    slowest = find_job(hand_run, CHACHA, 1048576).metrics["encrypt"]  # the family's slowest job
    assert hist.median == slowest.stats.median
    assert len(hist.edges) == len(hist.counts) + 1
    assert sum(hist.counts) + hist.clipped_above == slowest.stats.n
    # the axis ends at the largest sample drawn, not at an interpolated percentile
    assert hist.edges[-1] == pytest.approx(max(x for x in slowest.samples if x <= np.percentile(slowest.samples, 99)))


def test_loopback_breakdown(report: Report, hand_run: RunResult) -> None:
    loop = section(report, "Loopback breakdown")
    bars, shares = charts(loop, StackedBars)
    assert list(bars.parts) == list(shares.parts) == ["compute", "receiver", "network"]
    for part in bars.parts:
        assert bars.parts[part] == [med(hand_run, SESSION, 18, part)]
    total = sum(med(hand_run, SESSION, 18, part) for part in bars.parts)
    assert shares.unit == "%"
    for part in shares.parts:
        assert shares.parts[part] == pytest.approx([100 * med(hand_run, SESSION, 18, part) / total])
    table = next(b for b in loop.blocks if isinstance(b, Table))
    row = table.rows[0]
    session = find_job(hand_run, SESSION, 18)
    value, unit = cell(table, row, "Computation delay")
    assert value == format_seconds_in(session.metrics["compute"].stats.mean, unit)
    value, unit = cell(table, row, "Loopback floor")
    assert value == format_seconds_in(med(hand_run, SESSION, 18, "floor_rtt"), unit)
    no_sessions = copy.deepcopy(hand_run)
    no_sessions.jobs = [j for j in no_sessions.jobs if j.mode == "operations"]
    assert "Loopback breakdown" not in [s.title for s in build_report(no_sessions).sections]


def test_cost_against_security_scatter(report: Report) -> None:
    (chart,) = charts(section(report, "Cost against security level"), LineChart)
    assert chart.lines is False and chart.log_y
    by_name = {s.name: s for s in chart.series}
    assert by_name["Post-quantum"].marked and by_name["Post-quantum"].xs == [192.0]
    assert by_name["Post-quantum"].point_labels == ["ML-KEM-768"]
    assert not by_name["Hybrid / KEM"].marked
    assert sorted(by_name["Hybrid / KEM"].point_labels) == ["ECIES secp256k1 (HKDF-SHA256)", "RSA-KEM-2048 (OAEP)"]
    assert "Hashes" not in by_name and "Authenticated encryption (AEAD)" not in by_name  # public-key only


def test_warnings_section(report: Report, hand_run: RunResult) -> None:
    warning = find_job(hand_run, "SHA-256 [cryptography]", 1024).warnings[0]
    items = texts(section(report, "Warnings"))
    assert any(warning.message in t and warning.fix in t for t in items)
    quiet = copy.deepcopy(hand_run)
    for job in quiet.jobs:
        job.warnings = []
    assert any(
        t.startswith("No stability warnings were raised") for t in texts(section(build_report(quiet), "Warnings"))
    )


def test_comparison_with_baseline(hand_run: RunResult, hand_baseline: RunResult) -> None:
    from tests.helpers.comparisons import STILL

    # Judged as if runs never moved (the statistics themselves); one run a side without
    # stored runs to measure that movement gets no verdict (below).
    report = build_report(hand_run, hand_baseline, movement=STILL)
    comp = section(report, "Comparison with baseline")
    table = next(b for b in comp.blocks if isinstance(b, Table))
    assert table.columns == [
        "Job",
        "Size",
        "Baseline median (µs)",
        "This run median (µs)",
        "Ratio (this/baseline)",
        "95 % interval",
        "n (baseline / this)",
        "Verdict",
    ]
    (ratios,) = charts(comp, BarChart)  # the ratios and their intervals, drawn
    assert ratios.unit == "×" and len(ratios.values) == len(ratios.low) == len(ratios.high)
    rows = {(r[0], r[1]): r for r in table.rows}
    slower = rows[(SLOWER_JOB[0], "1 KiB")]
    assert slower[-1] == "slower"
    assert float(slower[4].rstrip("×")) == pytest.approx(2.0, rel=0.01)
    low, high = (float(v) for v in re.findall(r"[\d.]+", slower[5]))
    assert low < 2.0 < high
    assert rows[(IDENTICAL_JOB[0], "1 KiB")][-1] == "within noise"
    assert rows[("ML-DSA-65 [cryptography]", "1 KiB")][-1] == "not comparable"
    assert any("bootstrap" in t for t in texts(comp))
    assert any("1 slower" in t for t in texts(section(report, "Summary of findings")))
    alone = section(build_report(hand_run, hand_baseline), "Comparison with baseline")
    table = next(b for b in alone.blocks if isinstance(b, Table))
    assert {r[-1] for r in table.rows} == {"no verdict", "not comparable"} and not table.emphasis
    assert any(t.startswith("No verdict for 9 of the 10 pairs: one run a side.") for t in texts(alone))


def test_comparison_lists_unmatched_and_survives_empty_samples(hand_run: RunResult, hand_baseline: RunResult) -> None:
    baseline = copy.deepcopy(hand_baseline)
    baseline.jobs = [j for j in baseline.jobs if j.mode == "operations"]  # the session only in this run
    find_job(baseline, CHACHA, 1024).metrics["encrypt"].samples = []  # results saved without samples
    comp = section(build_report(hand_run, baseline), "Comparison with baseline")
    table = next(b for b in comp.blocks if isinstance(b, Table))
    chacha = next(r for r in table.rows if r[0] == CHACHA and r[1] == "1 KiB")
    assert chacha[-1] == "not comparable" and "no raw samples in the baseline" in chacha[5]
    zero = copy.deepcopy(hand_baseline)
    find_job(zero, CHACHA, 1024).metrics["encrypt"].samples = [0.0] * 30  # compare raises ValueError
    table = next(
        b for b in section(build_report(hand_run, zero), "Comparison with baseline").blocks if isinstance(b, Table)
    )
    chacha = next(r for r in table.rows if r[0] == CHACHA and r[1] == "1 KiB")
    assert chacha[-1] == "not comparable" and "undefined" in chacha[5]
    assert any(t.startswith("Only in this run") and SESSION in t for t in texts(comp))


def test_comparison_without_any_match_says_so(hand_run: RunResult, hand_baseline: RunResult) -> None:
    baseline = copy.deepcopy(hand_baseline)
    for job in baseline.jobs:
        job.message_size += 1
    report = build_report(hand_run, baseline)
    comp = section(report, "Comparison with baseline")
    assert not [b for b in comp.blocks if isinstance(b, Table)]
    assert any(t.startswith("No job of this run matches") for t in texts(comp))
    assert any(t.startswith("No job of this run matches") for t in texts(section(report, "Summary of findings")))


def test_environment_and_method(report: Report, hand_run: RunResult) -> None:
    env = section(report, "Environment")
    rows = dict(tuple(r) for r in next(b for b in env.blocks if isinstance(b, Table)).rows)
    assert rows["CPU model"] == "Test CPU 9000"
    assert "AES-NI yes" in rows["Crypto CPU flags"] and "SHA-NI no" in rows["Crypto CPU flags"]
    assert "OpenSSL 4.0.3" in rows["cryptography"]
    assert rows["Frequency governors"] == "performance"
    assert "Parallel workers" not in rows
    parallel = copy.deepcopy(hand_run)
    parallel.profile["parallel_workers"] = 2
    env2 = section(build_report(parallel), "Environment")
    rows2 = dict(tuple(r) for r in next(b for b in env2.blocks if isinstance(b, Table)).rows)
    assert rows2["Parallel workers"] == "2"
    assert any("perturbed" in t for t in texts(env2))
    assert "Link emulation" not in rows  # a run recorded before the probe existed says nothing
    parallel.environment["link_emulation"] = {"delay_line": True, "netem": False, "netem_reason": "no sch_netem"}
    env3 = section(build_report(parallel), "Environment")
    rows3 = dict(tuple(r) for r in next(b for b in env3.blocks if isinstance(b, Table)).rows)
    assert rows3["Link emulation"] == "stream relay; no netem: no sch_netem"
    parallel.environment["link_emulation"].update({"packet": False, "packet_reason": "needs root"})
    env4 = section(build_report(parallel), "Environment")
    rows4 = dict(tuple(r) for r in next(b for b in env4.blocks if isinstance(b, Table)).rows)
    assert rows4["Link emulation"] == "stream relay; no packet path: needs root; no netem: no sch_netem"
    parallel.environment["link_emulation"]["packet"] = True
    env5 = section(build_report(parallel), "Environment")
    rows5 = dict(tuple(r) for r in next(b for b in env5.blocks if isinstance(b, Table)).rows)
    assert rows5["Link emulation"].startswith("packet path (the kernel's TCP over emulated IP packets), stream relay")
    method = " ".join(texts(section(report, "Method")))
    for name in ("keygen", "encrypt", "floor_rtt", "network", "hash"):
        assert f"**{name}**" in method
    assert "**sign**" not in method  # no job measured a signature
    assert "tracemalloc" in method and "batch" in method and "order statistics" in method


def test_appendix_has_every_metric_and_statistic(report: Report, hand_run: RunResult) -> None:
    """Dense: two tables of one row per job and metric, each row in the unit its Unit cell names."""
    centre, spread = [b for b in section(report, "Appendix: full statistics").blocks if isinstance(b, Table)]
    rows = sum(len(j.metrics) for j in hand_run.jobs)
    assert len(centre.rows) == len(spread.rows) == rows
    assert {"n", "Median", "CI95 low", "CI95 high", "Mean", "Std", "CV", "Outliers"} <= set(centre.columns)
    assert {"Min", "p5", "p25", "p75", "p95", "p99", "Max", "Traced peak"} <= set(spread.columns)
    session = find_job(hand_run, SESSION, 18)
    first = next(i for i, r in enumerate(centre.rows) if r[0].startswith(SHORT[SESSION]))
    block = centre.rows[first : first + len(session.metrics)]
    assert [r[1] for r in block] == list(session.metrics)
    assert all(r[0] == "" for r in block[1:])  # the job is named once, on its first row
    compute = block[[r[1] for r in block].index("compute")]
    unit = compute[centre.columns.index("Unit")]
    assert compute[centre.columns.index("Median")] == format_seconds_in(session.metrics["compute"].stats.median, unit)
    assert section(report, "Appendix: full statistics").page_break_before
    assert "Appendix: full statistics" not in [s.title for s in build_report(hand_run, appendix=False).sections]


def test_primary_metric_matches_the_gui_rule(hand_run: RunResult) -> None:
    assert primary_metric(find_job(hand_run, SESSION, 18)) == "compute"
    assert primary_metric(find_job(hand_run, AES, 1024)) == "encrypt"
    assert primary_metric(find_job(hand_run, "SHA-256 [cryptography]", 1024)) == "hash"
    assert primary_metric(find_job(hand_run, "ML-DSA-65 [cryptography]", 1024)) == "sign"


def test_empty_run_still_builds(hand_run: RunResult) -> None:
    empty = copy.deepcopy(hand_run)
    empty.jobs = []
    report = build_report(empty)
    assert [s.title for s in report.sections][:3] == ["Summary of findings", "Environment", "Method"]
    assert "Cost against security level" not in [s.title for s in report.sections]


def test_no_qt_is_imported() -> None:
    code = (
        "import sys\n"
        "import app.report.content, app.report.findings, app.report.markdown\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'shiboken6')]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)

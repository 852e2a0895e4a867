"""The report's Load section (app/report/load.py): findings, charts, step tables, Method."""

from __future__ import annotations

from app.report.content import build_report
from app.report.labels import Labels
from app.report.load import HOLLOW_LABEL, SECTION_TITLE, STEPS_TITLE, latency_chart, load_findings
from app.report.markdown import render_markdown
from app.report.model import Chart, LineChart, Paragraph, Section, Table
from tests.helpers.comparisons import run, samples
from tests.helpers.loads import KNEE_STEPS, LAG_REASON, load, load_job, load_run, placed, step
from tests.helpers.records import job


def _section(title: str, sections: list[Section]) -> Section:
    return next(s for s in sections if s.title == title)


def test_the_load_section_has_a_finding_per_scheme_two_charts_and_a_table_per_scheme() -> None:
    report = build_report(load_run())
    titles = [s.title for s in report.sections]
    assert titles.index(SECTION_TITLE) + 1 == titles.index(STEPS_TITLE)
    assert "Results by family" not in titles  # only load jobs: no per-operation times to show
    section = _section(SECTION_TITLE, report.sections)
    findings = [b.text for b in section.blocks if isinstance(b, Paragraph) and b.style == "finding"]
    assert findings == [
        "**ML-KEM-768**: server overloaded from the step offered 1,000/s (achieved 930/s: p50 40 ms, 20× the "
        "low-load p99 (2 ms), server CPU 98 %); the knee, the most it achieved, 960 handshakes/s on one core "
        "(CPU 1) at the step offered 1,100/s; sustains 897/s at p99 under 8 ms (1 step the generator limited "
        "left out).",
        "**X25519 + HKDF-SHA256**: at least 998 handshakes/s on one core (CPU 1) at p99 under 1.1 ms: no "
        "step showed server overload, so its limit lies higher.",
        "**Ed25519**: generator limited: the load generator, not the server, was the limit at its one step, so "
        f"no rate here is the server's: {LAG_REASON}.",
    ]
    summary = [b.text for b in report.sections[0].blocks if isinstance(b, Paragraph) and b.style == "finding"]
    assert summary[-3:] == findings  # the knee per scheme leads the report too
    charts = [b.chart for b in section.blocks if isinstance(b, Chart)]
    assert [c.title for c in charts] == ["p50 latency against achieved rate", "p99 latency against achieved rate"]
    p99 = charts[1]
    assert isinstance(p99, LineChart) and p99.log_y and p99.hollow_label == HOLLOW_LABEL
    kem = p99.series[0]
    assert kem.name == "ML-KEM-768"
    assert kem.xs == [s.achieved_per_s for s in KNEE_STEPS] and kem.ys == [s.latency_s["p99"] for s in KNEE_STEPS]
    assert kem.hollow == [False] * 5 + [True]


def test_each_schemes_steps_table_says_its_conditions_and_why_a_step_is_left_out() -> None:
    steps = _section(STEPS_TITLE, build_report(load_run()).sections)
    tables = [b for b in steps.blocks if isinstance(b, Table)]
    assert len(tables) == 3
    kem = tables[0]
    assert kem.columns[:6] == ["Offered/s", "Achieved/s", "Errors", "Missed", "p50 (ms)", "p90 (ms)"]
    assert [row[0] for row in kem.rows] == ["100", "500", "900", "1,000", "1,100", "1,200"]
    assert kem.rows[2][3] == "0"  # nothing missed
    assert kem.rows[2][4:7] == ["2.00", "5.00", "8.00"]  # p50, p90, p99 of the 900/s step, in ms
    assert [row[-1] for row in kem.rows] == [
        "",
        "",
        "",
        "server overloaded",
        "server overloaded",
        "generator limited",
    ]
    assert kem.caption is not None
    # Conditions every scheme shares, and the columns' key, are said once above the tables.
    intro = steps.blocks[0]
    assert isinstance(intro, Paragraph) and intro.text.startswith("One table per scheme: requests per second")
    assert (
        "Conditions of every scheme: 8 clients, 1 server process, 2 s per step after 0.5 s warm-up, server on CPU 1, "
        "generator on CPU 0 (split); requests prepared ahead, a pool of 64 per client (40 µs of client crypto each"
    ) in intro.text
    assert all("Conditions" not in (t.caption or "") and "per second offered" not in (t.caption or "") for t in tables)
    assert kem.caption.startswith("ML-KEM-768.") and f"at 1,200/s, generator limited ({LAG_REASON})" in kem.caption
    assert (
        "at 1,000/s, server overloaded (p50 40 ms, 20× the low-load p99 (2 ms); achieved 93 % of offered; "
        "server CPU 98 %)"
    ) in kem.caption


def test_the_method_says_how_load_is_measured_only_when_there_is_load() -> None:
    method = _section("Method", build_report(load_run()).sections)
    text = " ".join(b.text for b in method.blocks if isinstance(b, Paragraph))
    assert "intended start" in text and "HdrHistogram" in text and "more than 1 ms late (p99)" in text
    assert "a pool of distinct requests it cycles through (64 per client here)" in text
    plain = run("20260101-100000-aaaaaa", [job("20260101-100000-aaaaaa", 0, 1024, {"encrypt": samples(1e-5)})])
    report = build_report(plain)
    assert SECTION_TITLE not in [s.title for s in report.sections]
    assert "HdrHistogram" not in render_markdown(report)


def test_a_mixed_run_keeps_load_jobs_out_of_the_family_tables() -> None:
    mixed = load_run()
    mixed.jobs.append(job(mixed.id, 3, 1024, {"encrypt": samples(1e-5)}, label="AES-128-GCM [cryptography]"))
    sections = build_report(mixed).sections
    start = [s.title for s in sections].index("Results by family") + 1
    end = next(k for k in range(start, len(sections)) if sections[k].level == 1)
    rows = [row[0] for s in sections[start:end] for b in s.blocks if isinstance(b, Table) for row in b.rows]
    assert rows and all(label == "AES-128-GCM [cryptography]" for label in rows)


def test_jobs_limited_by_the_generator_share_one_sentence_and_more_server_processes_are_named() -> None:
    saturated = [step(500, 480, 1e-3, 5e-3, saturated=True)]
    jobs = [
        load_job(0, "Ed25519 [cryptography]", load(saturated)),
        load_job(1, "ML-DSA-65 [cryptography]", load(saturated)),
        load_job(
            2,
            "X25519 [cryptography]",
            load(KNEE_STEPS, server_workers=2),
            placement=placed(server=(0, 1), generator=(0, 1), policy="free"),
        ),
    ]
    found = load_findings(jobs, Labels(jobs))
    assert found[0].startswith("**X25519**: server overloaded from the step offered 1,000/s (achieved 930/s: ")
    assert found[1].startswith("No knee was measured for **Ed25519**, **ML-DSA-65**: the load generator")
    assert len(found) == 2


def test_markdown_lists_the_charts_points_with_the_generator_mark() -> None:
    text = render_markdown(build_report(load_run()))
    assert "| Series | achieved rate (requests/s) | p99 latency | Mark |" in text
    assert f"| Ed25519 | 2900 | 80 ms | {HOLLOW_LABEL} |" in text
    chart = latency_chart(load_run().jobs, Labels(load_run().jobs), "p50")
    assert chart is not None and isinstance(chart.chart, LineChart) and chart.chart.log_x  # 100 to 2,900/s


def test_a_load_over_an_emulated_link_names_it_in_its_conditions() -> None:
    from app.core.records.job_conditions import Link
    from app.core.vocab import LinkEmulation

    over = load_run()
    over.jobs[0].link = Link("lte", 35.0, 0.0, 12000.0, 12000.0, 0.0, LinkEmulation.DELAY_LINE)
    over.jobs[0].placement = placed()
    tables = [b for b in _section(STEPS_TITLE, build_report(over).sections).blocks if isinstance(b, Table)]
    # The others share the pool and the rest; this one's clients and steps are its own.
    assert "Its own conditions: 8 clients over LTE (stream relay), 1 server process" in (tables[0].caption or "")

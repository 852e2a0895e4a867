"""The report's view of a sweep over links: the stacked chart per scheme, the table, and
the sentence that says from which link on communication dominates."""

from __future__ import annotations

from pathlib import Path

from app.core.records.job_conditions import Link
from app.core.results.model import JobResult, RunResult
from app.core.settings.links import link_title, over_link
from app.report.content import build_report
from app.report.findings import summary_findings
from app.report.markdown import render_markdown
from app.report.model import Chart, Paragraph, StackedBars, Table
from app.report.network_links import (
    SECTION_TITLE,
    crossover,
    link_findings,
    link_groups,
    link_sections,
    link_text,
    model_network_s,
)
from app.report.pdf.writer import write_pdf
from tests.helpers import records
from tests.helpers.records import spread_samples
from tests.helpers.report_runs import ENVIRONMENT, PROFILE, metric

LAN = Link("lan", 0.1, 0.0, 1e6, 1e6, 0.0, "packet")
LTE = Link("lte", 35.0, 0.0, 12_000.0, 12_000.0, 0.0, "packet")
SATELLITE = Link("satellite", 300.0, 0.0, 5_000.0, 20_000.0, 0.0, "packet")


def _session(
    index: int, label: str, link: Link | None, compute: float, receiver: float, network: float, size: int = 1024
) -> JobResult:
    where = f" over {link_text(link)}" if link else ""
    metrics = {
        "compute": metric(spread_samples(compute, n=10)),
        "receiver": metric(spread_samples(receiver, n=10)),
        "network": metric(spread_samples(network, n=10)),
        "rtt": metric(spread_samples(receiver + network, n=10)),
    }
    return records.job(
        "r",
        index,
        size,
        metrics,
        scheme=label.lower(),
        params={},
        label=label + where,
        family="key-agreement",
        mode="loopback",
        link=link,
    )


def _sweep() -> list[JobResult]:
    jobs = []
    # Cheap computation: the network dominates from the LAN on.
    for link, net in ((SATELLITE, 0.61), (LAN, 2.2e-4), (LTE, 0.071)):  # out of order on purpose
        jobs.append(_session(len(jobs), "X25519", link, 5e-6, 4e-6, net))
    # Costly computation (1.2 ms): computation dominates on the LAN, communication from LTE on.
    for link, net in ((LAN, 2.4e-4), (LTE, 0.072), (SATELLITE, 0.62)):
        jobs.append(_session(len(jobs), "RSA-KEM-3072", link, 6e-5, 1.1e-3, net))
    return jobs


def _run(jobs: list[JobResult]) -> RunResult:
    return records.run("r", jobs, started="2026-11-23T10:00:00+00:00", environment=ENVIRONMENT, profile=PROFILE)


def test_model_is_two_delays_plus_serialization_each_way() -> None:
    link = Link(None, 20.0, 0.0, 8000.0, 8000.0, 0.0, "packet")
    assert model_network_s(link, 65536, 64) == 2 * 0.020 + 8 * 65536 / 8e6 + 8 * 64 / 8e6
    assert model_network_s(Link(None, 5.0, 0.0, None, None, 0.0, "packet"), 10**6, 10**6) == 0.010


def test_link_text_names_a_link_as_the_job_labels_do() -> None:
    # One wording per link in every sentence and label: the preset's title, or the numbers.
    assert link_text(LTE) == "LTE" == link_title(LTE)
    custom = Link(None, 20.0, 2.0, 8000.0, 8000.0, 0.0, "packet")
    assert link_text(custom) == link_title(custom) == "20 ms ± 2 ms, 8000 kbit/s"
    assert link_text(Link(None, 1.0, 0.0, None, None, 0.0, "packet")) == "1 ms, unlimited rate"


def test_a_label_that_names_its_link_gets_no_second_one() -> None:
    assert over_link("X25519 [cryptography] over LTE", LTE) == "X25519 [cryptography] over LTE"
    assert over_link("X25519 [cryptography]", LTE) == "X25519 [cryptography] over LTE"
    assert over_link("X25519 [cryptography]", None) == "X25519 [cryptography]"


def test_groups_put_links_in_order_and_find_the_crossover() -> None:
    cheap, costly = link_groups(_sweep())
    assert [j.link.name for j in cheap if j.link] == ["lan", "lte", "satellite"]
    assert crossover(cheap) is cheap[0]
    assert crossover(costly) is costly[1]
    findings = link_findings(_sweep())
    assert findings[0].startswith("**X25519, 1 KiB**: communication dominates on every link measured, from LAN on")
    assert findings[1].startswith("**RSA-KEM-3072, 1 KiB**: communication dominates from LTE on")


def test_computation_that_always_wins_is_said_so() -> None:
    jobs = [_session(i, "Slow", link, 2.0, 1.0, net) for i, (link, net) in enumerate(((LAN, 1e-3), (LTE, 0.07)))]
    (sentence,) = link_findings(jobs)
    assert "outweighs the network on every link measured (LAN, LTE)" in sentence


def test_a_job_over_one_link_only_is_not_a_sweep() -> None:
    jobs = [_session(0, "X25519", LTE, 5e-6, 4e-6, 0.07), _session(1, "X25519", None, 5e-6, 4e-6, 5e-5)]
    assert link_groups(jobs) == [] and link_findings(jobs) == []
    run = _run(jobs)
    findings = " ".join(summary_findings(run))
    assert "X25519 over LTE, 1 KiB: communication" in findings and "over loopback" in findings
    assert "over LTE over" not in findings and "emulated link" not in findings


def test_report_has_one_chart_per_scheme_and_one_sentence_per_sweep(tmp_path: Path) -> None:
    run = _run(_sweep())
    report = build_report(run)
    (section,) = [s for s in report.sections if s.title == SECTION_TITLE]
    charts = [b.chart for b in section.blocks if isinstance(b, Chart) and isinstance(b.chart, StackedBars)]
    assert [[label.split(" (")[0] for label in c.labels] for c in charts] == [["LAN", "LTE", "satellite"]] * 2
    assert all(c.unit == "%" and abs(sum(part[0] for part in c.parts.values()) - 100) < 1e-9 for c in charts)
    table = next(b for b in section.blocks if isinstance(b, Table))
    assert [row[-1] for row in table.rows] == ["from here", "", "", "", "from here", ""]
    findings = " ".join(summary_findings(run))
    assert findings.count("communication dominates") == 2  # one per sweep, not one per link
    assert f"## {SECTION_TITLE}" in render_markdown(report)
    assert write_pdf(report, tmp_path / "links.pdf") >= 2


def test_computation_that_grows_on_slow_links_is_pointed_out() -> None:
    jobs = [_session(0, "X25519", LAN, 3e-6, 4e-6, 2e-4), _session(1, "X25519", LTE, 45e-6, 4e-6, 0.07)]
    (section,) = link_sections(jobs)
    notes = [b.text for b in section.blocks if isinstance(b, Paragraph) and b.style == "note"]
    assert len(notes) == 1 and "X25519 sealed in 3 µs over LAN and 45 µs over LTE" in notes[0]
    assert not [b for b in link_sections(_sweep())[0].blocks if isinstance(b, Paragraph) and b.style == "note"]

"""E5's sections (handshakes against packet loss beside Paquin, Stebila and Tamvada's
curves) from a hand-made run: the tables set their median and p95 beside ours with a
reading that needs the samples, the charts draw both, and the reasons are written from the
run's own numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.records.job_conditions import Link
from app.core.records.tls_record import Flight
from app.core.results.model import JobResult, RunResult
from app.core.statistics.stats import summarize
from app.report.content import build_report
from app.report.experiments.e5 import reading, sections
from app.report.experiments.published import Experiment, load_experiment
from app.report.markdown import render_markdown
from app.report.model import Bullets, Chart, LineChart, Paragraph, Section, Table
from app.report.pdf.writer import write_pdf
from tests.helpers import records

RUN = "20261128-120000-e5e5e5"
#: Our medians (s) per group and certificate at 2.8 ms one way, no loss and 20 % loss.
PAIRS = {
    ("secp256r1", "ecdsa-p256"): (12.9e-3, 0.230),
    ("SecP256r1MLKEM768", "ecdsa-p256"): (13.2e-3, 0.250),
    ("MLKEM768", "ecdsa-p256"): (13.0e-3, 0.240),
    ("SecP256r1MLKEM768", "ml-dsa-44"): (14.1e-3, 0.600),
}
#: The server's first flight per certificate (bytes): ML-DSA-44's certificate and signature.
SERVER_FLIGHT = {"ecdsa-p256": 2019, "ml-dsa-44": 7964}


@pytest.fixture(scope="module")
def experiment() -> Experiment:
    return load_experiment("E5")


def _job(index: int, group: str, certificate: str, loss: float, median: float, n: int = 20) -> JobResult:
    link = Link(None, 2.8, 0.0, 1_000_000, 1_000_000, loss, "packet", congestion_control="cubic")
    hello = 1458 if "MLKEM" in group else 274
    flights = (
        Flight("client", hello, ("ClientHello",)),
        Flight("server", SERVER_FLIGHT[certificate], ("ServerHello", "Certificate", "Finished")),
        Flight("client", 80, ("Finished",)),
    )
    return records.job(
        RUN,
        index,
        32,
        {
            "connect": records.metric_at(5.9e-3, n, below=2),
            "connect_handshake": records.metric_at(median, n, below=2),
            "handshake_cpu_client": records.metric_at(0.9e-3, n, below=2),
            "handshake_cpu_server": records.metric_at(1.0e-3, n, below=2),
        },
        scheme="tls13",
        backend="pyopenssl",
        family="tls",
        mode="loopback",
        params={"group": group, "certificate": certificate},
        label=f"TLS 1.3 {group} + {certificate}",
        link=link,
        tls=records.tls_record(group=group, flights=flights),
    )


def _run(n: int = 20) -> RunResult:
    jobs = []
    for (group, certificate), (clean, lossy) in PAIRS.items():
        jobs.append(_job(len(jobs), group, certificate, 0.0, clean, n))
        jobs.append(_job(len(jobs), group, certificate, 20.0, lossy, n))
    profile = {"name": "pq-tls-under-loss", "experiment": "E5", "jobs": []}
    return records.run(RUN, jobs, profile=profile)


@pytest.fixture(scope="module")
def run() -> RunResult:
    return _run()


def _table(found: list[Section]) -> Table:
    return next(b for s in found for b in s.blocks if isinstance(b, Table))


def test_their_median_and_p95_stand_beside_ours_at_each_loss(run: RunResult, experiment: Experiment) -> None:
    found = sections(run, experiment)
    titles = [s.title for s in found]
    assert titles == [
        "What they timed and what we time",
        "Handshakes against packet loss, 5.6 ms round trip",
        "Why our figures differ from theirs",
    ]
    table = _table(found)
    # Their four curves at 5.6 ms (two key exchange, two signature), each at our two losses.
    assert len(table.rows) == 8
    row = next(r for r in table.rows if r[0] == "0 %" and r[1].startswith("prime256v1"))
    assert row[2] == "secp256r1 + ECDSA P-256"
    assert row[3:5] == ["12.1 ms", "12.9 ms"]  # their percent05 and percent095 at 0 %
    assert row[5] == "12.9 ms [12.8 ms, 13 ms]" and row[7] == "20"
    assert row[8] == "1.07×" and row[9] == "theirs below our interval"
    lossy = next(r for r in table.rows if r[0] == "20 %" and r[1].startswith("prime256v1"))
    assert lossy[3:5] == ["226 ms", "3.52 s"] and lossy[8] == "1.02×"  # two decimals below 1.1 (ratio_text)
    ml_dsa = next(r for r in table.rows if r[0] == "20 %" and "dilithium2" in r[1])
    assert ml_dsa[3] == "253 ms" and ml_dsa[8] == "2.4×"
    both = [r[1] for r in table.rows if r[0] == "0 %" and r[2] == "SecP256r1MLKEM768 + ECDSA P-256"]
    assert sorted(both) == [  # their P-256 hybrid with ECDSA was timed in both experiments' runs
        "p256_kyber512_90s + ecdsap256 (key exchange runs)",
        "p256_kyber512_90s + ecdsap256 (signature runs)",
    ]


def test_a_reading_needs_the_samples_a_verdict_needs() -> None:
    few = summarize([0.010, 0.011, 0.012])
    assert reading(few, 0.001).startswith("no verdict: 3 samples")
    many = summarize([0.010 + i * 1e-5 for i in range(20)])
    assert reading(many, 0.001) == "theirs below our interval"
    assert reading(many, 1.0) == "theirs above our interval"
    assert reading(many, many.median) == "theirs within our interval"
    assert reading(None, 1.0) == "-"


def test_the_charts_draw_our_points_beside_their_whole_curves(run: RunResult, experiment: Experiment) -> None:
    found = sections(run, experiment)
    charts = [b.chart for s in found for b in s.blocks if isinstance(b, Chart) and isinstance(b.chart, LineChart)]
    kex, sig = charts
    assert {s.name for s in kex.series} == {
        "ours: secp256r1 + ECDSA P-256",
        "ours: SecP256r1MLKEM768 + ECDSA P-256",
        "ours: MLKEM768 + ECDSA P-256",
        "theirs: prime256v1 + ecdsap256 (key exchange runs)",
        "theirs: p256_kyber512_90s + ecdsap256 (key exchange runs)",
    }
    theirs = next(s for s in kex.series if s.name.startswith("theirs: prime256v1"))
    assert len(theirs.xs) == 25 and all(theirs.hollow or [])  # every loss they measured, open markers
    assert kex.log_y  # 12 ms to 0.5 s: a logarithmic axis
    assert {s.name for s in sig.series if s.name.startswith("ours")} == {
        "ours: SecP256r1MLKEM768 + ECDSA P-256",
        "ours: SecP256r1MLKEM768 + ML-DSA-44",
    }


def test_the_reasons_are_written_from_the_run_s_numbers(run: RunResult, experiment: Experiment) -> None:
    why = sections(run, experiment)[-1]
    (bullets,) = [b for b in why.blocks if isinstance(b, Bullets)]
    text = " ".join(bullets.items)
    assert "Round-2 Kyber against ML-KEM" in text and "1,458 B with it against 274 B" in text
    assert "Round-2 Dilithium against ML-DSA" in text and "ML-DSA-44 7,964 B" in text
    assert "every flight fits TCP's initial window" in text
    assert "their hybrid's median 37 µs above P-256's" in text  # 12.136 - 12.099 ms, published
    assert "The round trip" in text and "5.9 ms over the link that models a 5.6 ms round trip" in text
    assert "The trend" in text  # 0 % to 20 %, theirs and ours


def test_a_run_without_tls13_jobs_over_a_link_says_so(experiment: Experiment) -> None:
    empty = records.run(RUN, [records.job(RUN, 0)], profile={"name": "x", "experiment": "E5", "jobs": []})
    (only,) = sections(empty, experiment)
    assert isinstance(only.blocks[0], Paragraph) and "nothing to set beside the curves" in only.blocks[0].text


def test_the_report_opens_with_e5_and_paints_it(run: RunResult, tmp_path: Path) -> None:
    report = build_report(run)
    titles = [s.title for s in report.sections]
    assert titles[1].startswith("Experiment E5: ")
    markdown = render_markdown(report)
    assert "### Handshakes against packet loss, 5.6 ms round trip" in markdown
    assert "3b0ee0813aad5ef72130013ee794cb375f827a7c" in markdown  # the data's commit
    assert write_pdf(report, tmp_path / "e5.pdf") >= 3

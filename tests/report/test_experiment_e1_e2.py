"""E1 and E2 report sections on hand-built runs: every number traced to the samples,
every explanation written only when the numbers support it."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.records.job_records import Security, Validation
from app.core.results.model import JobResult, MetricResult, RunResult
from app.report.content import build_report
from app.report.experiments import experiment_sections
from app.report.model import Chart, LineChart, Paragraph, Section, Table
from app.report.units import format_seconds
from tests.helpers import records
from tests.helpers.records import spread_samples
from tests.helpers.report_runs import metric

KIB, MIB = 1024, 1024 * 1024


def _job(
    index: int,
    scheme: str,
    backend: str,
    params: dict[str, Any],
    label: str,
    size: int,
    metrics: dict[str, MetricResult],
    *,
    mode: str = "operations",
    tcp_nodelay: bool | None = None,
    family: str = "key-agreement",
    security: Security | None = None,
    **extra: Any,
) -> JobResult:
    return records.job(
        "r",
        index,
        size,
        metrics,
        scheme=scheme,
        backend=backend,
        params=params,
        label=label,
        family=family,
        mode=mode,
        tcp_nodelay=tcp_nodelay if mode != "operations" else None,
        validation=Validation(checked=10, tamper_tried=1, tamper_rejected=1),
        security=Security(classical_bits=128, pq_category=0, insecure=False) if security is None else security,
        **extra,
    )


def _session(compute: float, rtt: float, receiver: float, floor: float, handshake: float) -> dict[str, MetricResult]:
    return {
        "compute": metric(spread_samples(compute)),
        "rtt": metric(spread_samples(rtt)),
        "receiver": metric(spread_samples(receiver)),
        "network": metric(spread_samples(rtt - receiver)),
        "floor_rtt": metric(spread_samples(floor)),
        "handshake": metric(spread_samples(handshake)),
    }


def _run(experiment: str, jobs: list[JobResult]) -> RunResult:
    return records.run("r", jobs, started="2026-11-21T10:00:00+00:00", profile={"name": "t", "experiment": experiment})


def _e1(nagle_rtt: float | None = 250e-6) -> RunResult:
    curve = {"curve": "brainpoolP256r1", "kdf": "sha256"}
    jobs = [
        _job(
            0,
            "ecdh",
            "tinyec",
            curve,
            "ECDH [tinyec]",
            18,
            _session(60e-6, 100e-6, 60e-6, 15e-6, 30e-3),
            mode="loopback",
            tcp_nodelay=True,
        ),
        _job(
            1,
            "elgamal",
            "python",
            {"bits": 128, "chunked": True},
            "ElGamal-128 (chunked) [python]",
            18,
            _session(100e-6, 80e-6, 50e-6, 15e-6, 20e-6),
            mode="loopback",
            tcp_nodelay=True,
            family="public-key-encryption",
            security=Security(classical_bits=24, pq_category=0, insecure=True),
        ),
        _job(
            2,
            "elgamal",
            "python",
            {"bits": 2048},
            "ElGamal-2048 [python]",
            18,
            _session(36e-3, 20e-3, 19e-3, 15e-6, 20e-3),
            mode="loopback",
            tcp_nodelay=True,
            family="public-key-encryption",
        ),
        _job(
            3,
            "ecdh",
            "cryptography",
            curve,
            "ECDH [cryptography]",
            18,
            _session(1.2e-6, 18e-6, 1.4e-6, 14e-6, 5e-4),
            mode="loopback",
            tcp_nodelay=True,
        ),
    ]
    if nagle_rtt is not None:
        jobs.append(
            _job(
                4,
                "ecdh",
                "tinyec",
                curve,
                "ECDH [tinyec] (Nagle on)",
                18,
                _session(60e-6, nagle_rtt, 60e-6, 15e-6, 30e-3),
                mode="loopback",
                tcp_nodelay=False,
            )
        )
    return _run("E1", jobs)


def _texts(sections: list[Section]) -> str:
    return "\n".join(b.text for s in sections for b in s.blocks if isinstance(b, Paragraph))


def _table(sections: list[Section], title: str, first_column: str | None = None) -> Table:
    return next(
        b
        for s in sections
        if s.title == title
        for b in s.blocks
        if isinstance(b, Table) and (first_column is None or b.columns[:2] == ["Case", first_column])
    )


def test_e1_follows_the_summary_with_its_own_sections() -> None:
    titles = [s.title for s in build_report(_e1()).sections]
    assert titles[:2] == [
        "Summary of findings",
        "Experiment E1: ECDH + AES-GCM versus ElGamal over a loopback client/server",
    ]
    assert titles[2:6] == ["Published and measured", "Per-sample delays", "Averages", "Why the figures differ"]
    assert titles[6] == "Environment"


def test_e1_published_table_ratios_come_from_the_samples() -> None:
    run = _e1()
    sections = experiment_sections(run)
    rows = _table(sections, "Published and measured").rows
    compute = next(r for r in rows if "average computation" in r[0])
    comm = next(r for r in rows if "average communication" in r[0])
    assert compute[1] == "0.0171 ms, mean" and comm[1] == "0.7513 ms, mean"
    # matched to the job set up as the source's plain socket: Nagle on
    assert compute[2] == format_seconds(60e-6) and compute[3] == f"{60e-6 / 0.0171e-3:.1f}×"
    assert comm[2] == format_seconds(250e-6) and comm[3] == f"{250e-6 / 0.7513e-3:.2g}×"
    assert "(Nagle on)" in compute[4] and "our mean" in compute[4]
    first = next(r for r in rows if "sample 1 computation" in r[0])
    assert first[1].startswith("0.0494 ms, sample 1")
    assert first[2] == format_seconds(run.jobs[4].metrics["compute"].samples[0]) and "our sample 1" in first[4]


def test_e1_per_sample_charts_plot_every_sample_in_order() -> None:
    run = _e1()
    charts = [
        b.chart
        for s in experiment_sections(run)
        if s.title == "Per-sample delays"
        for b in s.blocks
        if isinstance(b, Chart)
    ]
    assert [c.title for c in charts] == ["Computation delay per sample", "Communication delay per sample"]
    assert all(isinstance(c, LineChart) for c in charts)
    names = [series.name for series in charts[0].series]
    # the original's two schemes, and the ECDH client set up as its script (Nagle on, no warm-up)
    assert names == ["ECDH [tinyec]", "ElGamal-128 (chunked) [python]", "ECDH [tinyec] (Nagle on)"]
    series = charts[1].series[0]
    assert series.ys == list(run.jobs[0].metrics["rtt"].samples)
    assert series.xs == [float(i) for i in range(1, len(series.ys) + 1)]


def test_e1_averages_table_has_every_session_job_and_the_published_row() -> None:
    table = _table(experiment_sections(_e1()), "Averages")
    assert [r[0] for r in table.rows[:-1]] == [j.label for j in _e1().jobs]
    assert table.rows[-1][1:3] == ["0.0171 ms", "0.7513 ms"] and table.emphasis == {len(table.rows) - 1}
    assert table.rows[2][1] == format_seconds(36e-3)


def test_e1_nagle_sentence_follows_the_measurement() -> None:
    slower = _texts(experiment_sections(_e1(nagle_rtt=250e-6)))
    # median network share: 250-60 = 190 µs against 100-60 = 40 µs
    assert "4.8× slower" in slower and "measures its socket options" in slower
    same = _texts(experiment_sections(_e1(nagle_rtt=105e-6)))
    assert "the same within 20%" in same and "one write" in same and "slower" not in same
    lower = _texts(experiment_sections(_e1(nagle_rtt=70e-6)))  # 10 µs against 40 µs
    assert "lower with Nagle on" in lower and "without repeats" in lower
    assert "noise" not in lower and "one write" not in lower and "slower" not in lower
    missing = _texts(experiment_sections(_e1(nagle_rtt=None)))
    assert "no pair of clients with TCP_NODELAY off and on" in missing


def test_e1_slow_samples_are_counted_not_explained() -> None:
    run = _e1(nagle_rtt=105e-6)
    nagle = run.jobs[4]
    network = list(nagle.metrics["network"].samples)
    network[3] = 5e-3  # one slow sample: the median does not move
    nagle.metrics["network"] = metric(network)
    text = _texts(experiment_sections(run))
    assert "the same within 20%" in text
    assert "1 of 30 with Nagle on, 0 of 30 with TCP_NODELAY set" in text and "cannot tell" in text


def test_e1_source_lines_beside_our_samples_and_the_stated_ratio() -> None:
    run = _e1()
    table = next(
        b
        for s in experiment_sections(run)
        if s.title == "Averages"
        for b in s.blocks
        if isinstance(b, Table) and b.columns[0] == "Line"
    )
    nagle = run.jobs[4]
    rows = {r[0]: r for r in table.rows}
    assert rows["Sample 1"] == [
        "Sample 1",
        "0.0494 ms",
        "0.8879 ms",
        format_seconds(nagle.metrics["compute"].samples[0]),
        format_seconds(nagle.metrics["rtt"].samples[0]),
    ]
    assert rows["Sample 100"][3:] == ["-", "-"]  # our job has 30 samples: no sample 100
    ratio_row = rows["Communication / computation (means)"]
    assert ratio_row[1] == "44× (as the source states)" and ratio_row[3] == f"{250e-6 / 60e-6:.1f}×"


def test_e1_fair_security_sentence_uses_the_measured_ratio() -> None:
    text = _texts(experiment_sections(_e1()))
    assert "24-bit classical strength" in text
    assert f"{36e-3 / 60e-6:,.0f}× the time of ECDH + AES-GCM" in text


def test_e1_without_session_jobs_says_so() -> None:
    run = _run("E1", [])
    sections = experiment_sections(run)
    assert "not measured" in _texts(sections)
    assert all(row[2] == "-" for row in _table(sections, "Published and measured").rows)


# --- E2 ------------------------------------------------------------------------------------------


def _e2(aes_small: float = 1.0e-6, aes_large: float = 120e-6, samples: int = 10) -> RunResult:
    jobs = []

    def add(scheme: str, params: dict[str, Any], size: int, family: str, **metrics: float) -> None:
        jobs.append(
            _job(
                len(jobs),
                scheme,
                "cryptography",
                params,
                f"{scheme} {params}",
                size,
                {name: metric(spread_samples(v, n=samples)) for name, v in metrics.items()},
                family=family,
                wire_bytes={"payload": size + 106, "overhead": 106},
            )
        )

    for size, (enc) in ((KIB, aes_small), (MIB, aes_large), (10 * MIB, 1.6e-3)):
        add("aes-gcm", {"key_bits": 256}, size, "aead", encrypt=enc, decrypt=enc)
    add("ecdsa", {"curve": "P-384"}, KIB, "signature", sign=170e-6, verify=290e-6)
    for size, value in ((KIB, 2.4e-6), (MIB, 2e-3), (10 * MIB, 30e-3)):
        add("sha384", {}, size, "hash", hash=value)
    for secret, out, value in ((32, 32, 3.9e-6), (48, 64, 4.5e-6)):
        add("hkdf", {"digest": "sha384", "secret_size": secret, "output_length": out}, secret, "kdf", derive=value)
    return _run("E2", jobs)


def test_e2_table_has_one_row_per_timed_operation_with_its_statistics() -> None:
    run = _e2()
    table = _table(experiment_sections(run), "The E2 table at 1 KiB, 1 MiB and 10 MiB", "Metric")
    assert table.columns == ["Case", "Metric", "n", "Mean", "P50", "P95", "Std. dev.", "CV"]
    aes = [r for r in table.rows if r[0] == "AES-256-GCM, 1 KB (encrypt + decrypt)"]
    assert [r[1] for r in aes] == ["encrypt", "decrypt"]
    stats = run.jobs[0].metrics["encrypt"].stats
    assert aes[0][2:7] == [
        "10",
        format_seconds(stats.mean),
        format_seconds(stats.median),
        format_seconds(stats.p95),
        format_seconds(stats.std),
    ]
    hkdf = [r[0] for r in table.rows if r[1] == "derive"]
    assert hkdf == ["HKDF-SHA384, secret 32 B -> 32 B", "HKDF-SHA384, secret 48 B -> 64 B"]


def test_e2_hkdf_figures_are_per_configuration() -> None:
    rows = _table(experiment_sections(_e2()), "Published and measured").rows
    hkdf = {r[0]: r for r in rows if r[0].startswith("HKDF")}
    assert len(hkdf) == 4
    first = hkdf["HKDF-SHA384, secret 32 B -> 32 B"]
    assert first[1].startswith("0.007289 s, mean") and first[2] == format_seconds(3.9e-6)
    assert hkdf["HKDF-SHA384, secret 32 B -> 64 B"][2:] == ["-", "-", "not measured in this run"]
    single = next(r for r in rows if r[0].startswith("AES-256-GCM, 1 KB"))
    assert single[1].startswith("0.003549 s, one trial") and "our first timed sample" in single[4]


def test_e2_first_call_explanation_only_when_the_trend_differs() -> None:
    differs = _texts(experiment_sections(_e2(aes_small=1e-6, aes_large=120e-6)))
    assert "First-call cost at 1 KB" in differs and "2.3×" in differs and "Trial 1" in differs
    assert "does not reproduce cold trials" in differs and "mean of 10" not in differs
    assert "4.9× its table's trial" in differs  # 0.017418 s in the second run against 0.003549 s
    assert "37.6×" in differs  # HKDF 32 -> 32: mean 0.007289 s against P50 0.000194 s
    agrees = _texts(experiment_sections(_e2(aes_small=200e-6, aes_large=120e-6)))
    assert "First-call cost" not in agrees


def test_e2_case_table_sets_every_printed_statistic_beside_ours() -> None:
    run = _e2()
    table = _table(experiment_sections(run), "The E2 table at 1 KiB, 1 MiB and 10 MiB", "Row")
    rows = {(r[0], r[1]): r for r in table.rows}
    sha = rows[("SHA-384, 1 MB", "published")]
    assert sha[2:] == [
        "10",
        format_seconds(0.009586),
        format_seconds(0.009034),
        format_seconds(0.019948),
        format_seconds(0.003939),
        "120.54",
    ]
    aes = rows[("AES-256-GCM, 1 MB (encrypt + decrypt)", "published (one trial)")]
    assert aes[2:4] == ["1", format_seconds(0.001544)] and aes[4:7] == ["-", "-", "-"]
    assert rows[("AES-256-GCM, 1 MB (encrypt + decrypt)", "published, second run")][7] == "1066.21"
    ours = rows[("AES-256-GCM, 1 MB (encrypt + decrypt)", "ours")]
    job = run.jobs[1]
    sums = [a + b for a, b in zip(job.metrics["encrypt"].samples, job.metrics["decrypt"].samples)]
    assert ours[3] == format_seconds(sum(sums) / len(sums))
    # the source's formula: 2 x size / time in MiB/s (not size / time in decimal MB/s)
    assert ours[7] == f"{2 * MIB / (sum(sums) / len(sums)) / MIB:,.2f}"


def test_e2_units_paragraph_names_the_formula_and_the_figures_it_misses() -> None:
    text = _texts(experiment_sections(_e2()))
    assert "2 MiB / 0.001876 s = 1,066.10 (second run: 1066.21 printed)" in text
    assert "2 MiB / 0.001544 s = 1,295.34 (table 10: 1328.5 printed)" in text  # printed, but not by this formula
    assert "2 KiB / 0.017418 s" not in text.split("do not all follow it")[1]  # 0.112 prints as 0.11: it fits


def test_e2_throughput_chart_uses_the_source_formula_for_every_series() -> None:
    run = _e2()
    chart = next(b.chart for s in experiment_sections(run) for b in s.blocks if isinstance(b, Chart))
    assert isinstance(chart, LineChart) and chart.title == "AES-256-GCM throughput against message size"
    series = {s.name: s for s in chart.series}
    assert series["published, table 10 (one trial)"].ys == [0.56, 1328.5, 2514.67]
    assert series["published, second run"].ys == [0.11, 1066.21, 664.79]
    total = run.jobs[0].metrics["encrypt"].stats.mean + run.jobs[0].metrics["decrypt"].stats.mean
    assert series["ours (mean)"].ys[0] == pytest.approx(2 * KIB / total / MIB)


def test_e2_source_spread_is_context() -> None:
    text = _texts(experiment_sections(_e2()))
    assert "**The source's own spread.**" in text and "11 of its cases again" in text
    assert "1.1× (ECDSA-P384 (sign + verify)) to 4.9× (AES-256-GCM, 1 KB (encrypt + decrypt))" in text


def test_e2_ratio_growth_sentence_needs_a_rising_ratio() -> None:
    text = _texts(experiment_sections(_e2()))
    assert "Ratios grow with the input" in text and "AES-256-GCM from" in text
    assert "SHA-384 from" in text  # 2.4 µs/122 µs < 2 ms/9.6 ms < 30 ms/92 ms
    flat = _e2(aes_small=300e-6, aes_large=100e-6)  # ratio at 1 KB above the one at 1 MB
    assert "AES-256-GCM from" not in _texts(experiment_sections(flat))


@pytest.mark.parametrize(("samples", "words"), [(10, "Ten trials, as published"), (200, "95 % confidence")])
def test_e2_sample_count_paragraph(samples: int, words: str) -> None:
    text = _texts(experiment_sections(_e2(samples=samples)))
    assert f"took {samples} samples per operation" in text and words in text


def test_e2_signature_size_subtracts_the_length_prefix_and_score_is_explained() -> None:
    text = _texts(experiment_sections(_e2()))
    assert "ECDSA-P384 signature was 104 bytes" in text and "signature 103 bytes" in text
    assert 'Why no "performance score"' in text


def test_unknown_experiment_is_a_note_not_a_crash() -> None:
    sections = experiment_sections(_run("E9", []))
    assert sections[0].title == "Experiment E9" and "could not be loaded" in _texts(sections)
    assert experiment_sections(records.run("r", started="x", profile={"name": "t"})) == []


def test_e1_says_which_link_the_published_loopback_delay_corresponds_to() -> None:
    from app.report.experiments.e1 import _link_equivalent

    job = _job(
        0,
        "ecdh",
        "tinyec",
        {"curve": "brainpoolP256r1"},
        "ECDH",
        18,
        {},
        mode="loopback",
        wire_bytes={"payload": 46, "frame": 58},
    )
    text = _link_equivalent(0.7513e-3, job)
    assert text is not None and "751 µs is a loopback figure" in text and "58-byte frame" in text
    # Between the LAN preset (26.6 µs a round trip in the model) and Wi-Fi (2.04 ms).
    assert "more than our LAN preset adds" in text and "less than Wi-Fi adds" in text
    assert "less than any" in (_link_equivalent(1e-6, job) or "")
    assert "more than every link preset" in (_link_equivalent(10.0, job) or "")

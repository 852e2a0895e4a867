"""The summary stays short for runs of many schemes and sizes (E3, E4): one insecure
finding for all toy sizes, the extreme sizes only, the extreme schemes only."""

from __future__ import annotations

from app.core.records.job_records import Security
from app.core.results.model import JobResult
from app.report.findings import (
    MAX_NAMED,
    fastest_slowest_findings,
    insecure_findings,
    keygen_total_findings,
)
from tests.helpers import records
from tests.helpers.records import spread_samples
from tests.helpers.report_runs import metric


def _pke(index: int, label: str, size: int, keygen: float, encrypt: float, insecure: bool = False) -> JobResult:
    return records.job(
        "r",
        index,
        size,
        {"keygen": metric(spread_samples(keygen)), "encrypt": metric(spread_samples(encrypt))},
        scheme="elgamal",
        backend="python",
        params={"i": index},
        label=label,
        family="public-key-encryption",
        security=Security(classical_bits=56, pq_category=0, insecure=insecure),
    )


def test_one_insecure_finding_names_every_toy_size() -> None:
    jobs = [_pke(i, f"Toy-{i}", 12, 1e-3, 1e-3, insecure=True) for i in range(4)] + [_pke(9, "Real", 12, 1, 1)]
    findings = insecure_findings(jobs)
    assert len(findings) == 1
    assert all(f"Toy-{i} (56-bit classical security)" in findings[0] for i in range(4)) and "Real" not in findings[0]
    assert insecure_findings(jobs[:1])[0].startswith("**Insecure parameters**: Toy-0 (56-bit")
    assert insecure_findings(jobs[4:]) == []


def test_summary_quotes_only_the_smallest_and_largest_of_many_sizes() -> None:
    sizes = [12, 30, 79, 98, 108, 128]
    jobs = [
        _pke(10 * k + i, f"S{i}", size, 1e-3 * (i + 1), 1e-4 * (i + 1))
        for k, size in enumerate(sizes)
        for i in range(2)
    ]
    findings = fastest_slowest_findings(jobs)
    assert len(findings) == 2 and "12 B messages" in findings[0] and "128 B messages" in findings[1]
    few = [j for j in jobs if j.message_size in (12, 30, 79)]
    assert len(fastest_slowest_findings(few)) == 3  # up to MAX_SIZES sizes are all quoted


def test_keygen_total_names_the_extremes_of_a_large_group() -> None:
    jobs = [_pke(i, f"S{i}", 12, 1e-3 * (i + 1), 1e-4) for i in range(MAX_NAMED + 3)]
    text = keygen_total_findings(jobs)[0]
    slowest = f"S{MAX_NAMED + 2}"
    assert f"{slowest} takes" in text and "S0" in text
    assert all(f"S{i} " not in text for i in range(1, MAX_NAMED + 2))
    small = keygen_total_findings(jobs[: MAX_NAMED + 1])[0]  # at most MAX_NAMED others: all named
    assert all(f"S{i}" in small for i in range(MAX_NAMED + 1))

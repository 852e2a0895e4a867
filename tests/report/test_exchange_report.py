"""The report and the exchange pattern: like with like, both sides weighed, one step charted.

Hand-built runs: operations jobs of key agreement and hybrid schemes in each exchange
pattern, with the figures the issue quoted (RSA-KEM-3072 encapsulating as fast as
ML-KEM-768 and decapsulating ten times slower). Expected numbers are computed here.
"""

from __future__ import annotations

import pytest

from app.core.records.job_records import Security
from app.core.results.model import JobResult, RunResult
from app.core.vocab import Exchange
from app.report.content import build_report
from app.report.job_figures import like_groups, ratio_text, value, whole_exchange
from app.report.model import Bullets, Chart, LineChart, Paragraph, Report, Section
from app.report.units import format_seconds
from tests.helpers import records

US = 1e-6


def _job(
    index: int, label: str, scheme: str, family: str, pattern: str | None, bits: int, pq: int, **medians: float
) -> JobResult:
    return records.job(
        index=index,
        scheme=scheme,
        label=label,
        family=family,
        params={},
        exchange=pattern,
        security=Security(classical_bits=bits, pq_category=pq, insecure=False),
        metrics={name: records.metric_at(value) for name, value in medians.items()},
    )


def rsa_kem(index: int = 0, pattern: str | None = "per-message", **medians: float) -> JobResult:
    figures = {"keygen": 0.3, "encrypt": 61 * US, "decrypt": 644 * US} | medians
    suffix = f" ({pattern})" if pattern else ""
    label = f"RSA-KEM-3072 (OAEP) + AES-256-GCM [cryptography]{suffix}"
    return _job(index, label, "rsa-kem", "hybrid", pattern, 128, 0, **figures)


def ml_kem(index: int = 1, pattern: str | None = "per-message", **medians: float) -> JobResult:
    figures = {"keygen": 40 * US, "encrypt": 60 * US, "decrypt": 60 * US} | medians
    suffix = f" ({pattern})" if pattern else ""
    return _job(
        index, f"ML-KEM-768 + AES-256-GCM [cryptography]{suffix}", "ml-kem", "hybrid", pattern, 192, 3, **figures
    )


def x25519(index: int, pattern: str, **medians: float) -> JobResult:
    label = f"X25519 + HKDF-SHA256 + AES-256-GCM [cryptography] ({pattern})"
    return _job(index, label, "x25519", "key-agreement", pattern, 128, 0, **medians)


def m(job: JobResult, metric: str) -> float:
    return value(job, metric)


def section(report: Report, title: str) -> Section:
    return next(s for s in report.sections if s.title == title)


def findings(report: Report) -> list[str]:
    return [b.text for b in section(report, "Summary of findings").blocks if isinstance(b, Paragraph)]


def pq_sentences(run: RunResult) -> list[str]:
    return [f for f in findings(build_report(run)) if f.startswith("**Post-quantum vs classical**")]


# --- part 2: conclusions from both sides --------------------------------------------------------


def test_the_post_quantum_summary_weighs_both_sides_and_says_which_dominates() -> None:
    rsa, ml = rsa_kem(), ml_kem()
    (sentence,) = pq_sentences(records.run(jobs=[rsa, ml]))
    # The receiver's 644 µs is said, and dominates RSA-KEM's exchange; ML-KEM wins on the whole.
    assert f"sender {format_seconds(m(rsa, 'encrypt'))}, receiver {format_seconds(m(rsa, 'decrypt'))}" in sentence
    assert "the receiver's side dominates" in sentence
    whole = (whole_exchange(rsa) or 0) / (whole_exchange(ml) or 1)
    # Faster and slower only of the whole, with its evidence; each side as a ratio of times.
    assert (
        f"in all it is {ratio_text(whole)} faster than the classical scheme (n = 20 and 20, 95 % intervals" in sentence
    )
    assert f"sender {ratio_text(m(ml, 'encrypt') / m(rsa, 'encrypt'))} its time" in sentence
    assert f"receiver {ratio_text(m(ml, 'decrypt') / m(rsa, 'decrypt'))})" in sentence
    assert ratio_text(m(rsa, "decrypt") / m(ml, "decrypt")) == "10.7×"  # as the issue measured: 644 µs against 60 µs
    assert (
        "exchange per-message" in sentence
        and "whole exchange = one message, encrypt at the sender + decrypt" in sentence
    )


def test_the_classical_yardstick_is_the_cheapest_whole_exchange_not_the_cheapest_sender() -> None:
    ecies = _job(
        2,
        "ECIES secp256k1 (HKDF-SHA256) + AES-256-GCM [cryptography] (per-message)",
        "ecies",
        "hybrid",
        "per-message",
        128,
        0,
        encrypt=120 * US,
        decrypt=90 * US,
    )
    (sentence,) = pq_sentences(records.run(jobs=[rsa_kem(), ml_kem(), ecies]))
    # RSA-KEM's sender is the fastest classical one (61 µs), ECIES's whole exchange the cheapest (210 µs).
    assert "against the classical scheme whose whole exchange costs least, ECIES secp256k1" in sentence
    assert (
        f"in all it is {ratio_text((whole_exchange(ecies) or 0) / (whole_exchange(ml_kem()) or 1))} faster" in sentence
    )


def test_session_jobs_weigh_one_key_establishment_not_the_aead_step() -> None:
    run = records.run(
        jobs=[
            x25519(
                0,
                "session",
                keygen=40 * US,
                exchange=60 * US,
                exchange_receiver=55 * US,
                encrypt=0.6 * US,
                decrypt=0.7 * US,
            ),
            ml_kem(1, "session", exchange=120 * US, exchange_receiver=70 * US, encrypt=0.6 * US, decrypt=0.7 * US),
        ]
    )
    (sentence,) = pq_sentences(run)
    assert (
        "exchange session" in sentence
        and "one key establishment, exchange at the sender + exchange_receiver" in sentence
    )
    # 190 µs against 115 µs, not 0.6 against 0.6
    assert f"in all it is {190 / 115:.1f}× slower than the classical scheme" in sentence


def test_jobs_of_the_two_patterns_are_never_one_group() -> None:
    jobs = [
        rsa_kem(0, "per-message"),
        rsa_kem(1, "session", encrypt=0.6 * US, decrypt=0.7 * US),
        ml_kem(2, "session", encrypt=0.6 * US, decrypt=0.7 * US),
    ]
    groups = like_groups(jobs)
    assert {key[3] for key in groups} == {Exchange.SESSION, Exchange.PER_MESSAGE}
    assert all(len({j.exchange_used for j in group}) == 1 for group in groups.values())
    said = " ".join(findings(build_report(records.run(jobs=jobs))))
    assert "(encrypt, exchange session, median of 2 schemes)" in said
    assert "exchange per-message, median of" not in said  # one per-message job: nothing to rank


def test_results_without_the_field_read_as_what_they_measured() -> None:
    """A hybrid from before jobs named their pattern was per-message; a key agreement session."""
    old = [rsa_kem(0, None), ml_kem(1, None)]
    assert [j.exchange_used for j in old] == [Exchange.PER_MESSAGE, Exchange.PER_MESSAGE]
    (sentence,) = pq_sentences(records.run(jobs=old))
    assert "exchange per-message" in sentence
    method = section(build_report(records.run(jobs=old)), "Method")
    text = " ".join(b.text for b in method.blocks if isinstance(b, Paragraph))
    assert "2 results of this run were recorded before jobs named their pattern" in text


# --- part 2: the cost against security chart ---------------------------------------------------


def _chart(run: RunResult) -> LineChart:
    charts = [b.chart for b in section(build_report(run), "Cost against security level").blocks if isinstance(b, Chart)]
    (chart,) = [c for c in charts if isinstance(c, LineChart)]
    return chart


def test_every_point_is_the_same_step_and_no_two_share_a_label() -> None:
    session = x25519(
        0, "session", keygen=40 * US, exchange=60 * US, exchange_receiver=55 * US, encrypt=0.6 * US, decrypt=0.7 * US
    )
    per_message = x25519(
        1,
        "per-message",
        keygen=40 * US,
        exchange=60 * US,
        exchange_receiver=55 * US,
        encrypt=120 * US,
        decrypt=110 * US,
    )
    pq = ml_kem(2, "session", exchange=120 * US, exchange_receiver=70 * US, encrypt=0.6 * US, decrypt=0.7 * US)
    larger = ml_kem(3, "session", exchange=121 * US, exchange_receiver=71 * US, encrypt=2.6 * US, decrypt=2.7 * US)
    larger.message_size = 65536  # the same job at another size: one point, at its smallest
    chart = _chart(records.run(jobs=[session, per_message, pq, larger]))
    points = {label: y for s in chart.series for label, y in zip(s.point_labels or [], s.ys)}
    names = [label for s in chart.series for label in s.point_labels or []]
    assert len(names) == len(set(names)) == 3
    # X25519 session at its key establishment (115 µs), never its AES-GCM step (0.6 µs).
    assert points["X25519 + HKDF-SHA256 (session)"] == pytest.approx(115 * US, rel=0.05)
    assert points["X25519 + HKDF-SHA256 (per-message)"] == pytest.approx(230 * US, rel=0.05)
    assert points["ML-KEM-768 (session)"] == pytest.approx(190 * US, rel=0.05)
    assert chart.y_label == "sender + receiver median"
    said = " ".join(
        b.text
        for b in section(build_report(records.run(jobs=[session, pq])), "Cost against security level").blocks
        if isinstance(b, Paragraph)
    )
    assert "the same step for every point, at both ends" in said


def test_the_same_label_in_two_modes_gets_two_names() -> None:
    ops = x25519(0, "session", exchange=60 * US, exchange_receiver=55 * US, encrypt=0.6 * US, decrypt=0.7 * US)
    loop = x25519(1, "session", handshake=70 * US, handshake_receiver=60 * US, compute=1.6 * US, receiver=1.9 * US)
    loop.mode = "loopback"
    pq = ml_kem(2, "session", exchange=120 * US, exchange_receiver=70 * US, encrypt=0.6 * US, decrypt=0.7 * US)
    names = [label for s in _chart(records.run(jobs=[ops, loop, pq])).series for label in s.point_labels or []]
    assert len(names) == len(set(names)) == 3
    assert "X25519 + HKDF-SHA256 (session) · loopback" in names


def test_a_job_without_a_receiver_figure_is_left_out_and_said() -> None:
    old = x25519(0, "session", exchange=60 * US, encrypt=0.6 * US, decrypt=0.7 * US)  # no exchange_receiver
    assert whole_exchange(old) is None
    report = build_report(records.run(jobs=[old, rsa_kem(1), ml_kem(2)]))
    said = " ".join(b.text for b in section(report, "Cost against security level").blocks if isinstance(b, Paragraph))
    assert "1 job without both ends' figures of that step" in said


# --- part 1: every face of the report says which ------------------------------------------------


def test_the_method_says_each_pattern_and_its_jobs() -> None:
    run = records.run(jobs=[rsa_kem(0, "per-message"), ml_kem(1, "session", exchange=1e-4, exchange_receiver=1e-4)])
    method = section(build_report(run), "Method")
    bullets = [item for b in method.blocks if isinstance(b, Bullets) for item in b.items]
    session = next(item for item in bullets if item.startswith("**exchange session**"))
    per_message = next(item for item in bullets if item.startswith("**exchange per-message**"))
    assert "ML-KEM-768" in session and "as TLS does" in session
    assert "RSA-KEM-3072" in per_message and "every message" in per_message
    handshake = next(item for item in bullets if item.startswith("**exchange**"))
    assert "as a session's handshake makes it" in handshake


def test_a_family_of_both_patterns_is_charted_apart() -> None:
    run = records.run(
        jobs=[
            rsa_kem(0, "per-message"),
            rsa_kem(1, "session", encrypt=0.6 * US, decrypt=0.7 * US),
            ml_kem(2, "session", encrypt=0.6 * US, decrypt=0.7 * US),
        ]
    )
    hybrid = section(build_report(run), "Hybrid / KEM")
    titles = [b.chart.title for b in hybrid.blocks if isinstance(b, Chart)]
    assert any("exchange session" in t for t in titles) and any("exchange per-message" in t for t in titles)
    assert any(
        isinstance(b, Paragraph) and "used both exchange patterns, charted apart" in b.text for b in hybrid.blocks
    )


def test_the_baseline_comparison_says_why_a_job_of_the_other_pattern_is_not_paired() -> None:
    base = records.run("base", [ml_kem(0, "per-message")])
    new = records.run("new", [ml_kem(0, "session", exchange=1e-4, exchange_receiver=1e-4)])
    comparison = section(build_report(new, base), "Comparison with baseline")
    items = [item for b in comparison.blocks if isinstance(b, Bullets) for item in b.items]
    assert any(
        item.startswith("Only in this run")
        and "the other run measured it with exchange per-message, this one session" in item
        for item in items
    )


def test_the_spread_across_families_never_sets_the_two_patterns_against_each_other() -> None:
    aes = records.job(index=0, metrics={"encrypt": records.metric_at(1 * US), "decrypt": records.metric_at(1.2 * US)})
    jobs = [
        aes,
        x25519(1, "session", exchange=60 * US, exchange_receiver=55 * US, encrypt=1.9 * US, decrypt=2.2 * US),
        x25519(2, "per-message", exchange=60 * US, exchange_receiver=55 * US, encrypt=650 * US, decrypt=70 * US),
        ml_kem(3, "per-message", encrypt=60 * US, decrypt=60 * US),
    ]
    spread = [f for f in findings(build_report(records.run(jobs=jobs))) if f.startswith("Across families")]
    assert all("(session)" not in f or "(per-message)" not in f for f in spread)
    assert all("with exchange per-message" in f for f in spread if "(per-message)" in f)

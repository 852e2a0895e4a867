"""The report ranks two schemes only with the evidence a comparison needs: enough samples
a side (app/core/analysis/evidence.py) and medians whose 95 % intervals do not overlap."""

from __future__ import annotations

import numpy as np

from app.core.analysis.evidence import MIN_SAMPLES
from app.core.results.model import RunResult
from app.report.findings import fastest_slowest_findings
from tests.helpers import records


def _samples(median: float, n: int, spread: float, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    return [float(median * (1 + spread * x)) for x in rng.uniform(-1, 1, n)]


def _pair(fast: list[float], slow: list[float]) -> list[str]:
    jobs = [
        records.job("run", 0, 1024, {"encrypt": fast}),
        records.job(
            "run", 1, 1024, {"encrypt": slow}, scheme="chacha20-poly1305", params={}, label="ChaCha20-Poly1305"
        ),
    ]
    return fastest_slowest_findings(jobs)


def test_overlapping_intervals_are_indistinguishable_never_ranked() -> None:
    """Before: "fastest AES-256-GCM at 515 ns, slowest AES-128-GCM at 531 ns, 1.0x slower"
    with the two intervals overlapping."""
    (sentence,) = _pair(_samples(515e-9, 40, 0.2, 1), _samples(531e-9, 40, 0.2, 2))
    assert "cannot be told apart (their 95 % intervals overlap: n = 40 and 40, 95 % intervals 480 ns to " in sentence
    assert "fastest" not in sentence and "slower" not in sentence


def test_too_few_samples_are_no_verdict_never_indistinguishable_however_far_apart() -> None:
    """Before: "X25519 at 54.7 µs and ECDH brainpoolP256r1 at 33.2 ms cannot be told apart
    (n = 3 and 3)", a 600x gap: too few samples is no verdict, not "cannot be told apart"."""
    (sentence,) = _pair(_samples(54.7e-6, 3, 0.01, 1), _samples(33.2e-3, 3, 0.01, 2))
    assert f", no verdict: too few samples (n = 3 and 3; a verdict needs {MIN_SAMPLES} a side)." in sentence
    assert "told apart" not in sentence and "fastest" not in sentence


def test_overlapping_intervals_of_figures_far_apart_are_no_verdict() -> None:
    """A narrow interval beside a very wide one: they overlap, but "cannot be told apart"
    is never said of figures more than 3x apart."""
    wide = [0.5e-6] * 7 + [5e-6 + k * 1e-8 for k in range(13)]  # median 5 µs, interval from 0.5 µs
    (sentence,) = _pair(_samples(1e-6, 20, 0.01, 1), wide)
    assert "no verdict: their 95 % intervals overlap (n = 20 and 20, 95 % intervals" in sentence
    assert "told apart" not in sentence


def test_separated_intervals_with_enough_samples_are_ranked() -> None:
    (sentence,) = _pair(_samples(1e-6, MIN_SAMPLES, 0.01, 1), _samples(2e-6, MIN_SAMPLES, 0.01, 2))
    assert "fastest AES-128-GCM" in sentence and "slowest ChaCha20-Poly1305" in sentence
    assert "2.0× slower than the fastest (n = 10 and 10, 95 % intervals 993 ns to 1.01 µs and " in sentence


def test_a_reduced_baseline_gives_no_verdict_in_the_summary_and_the_table() -> None:
    """A PDF with a reduced baseline labelled its bars "significant change"."""
    from app.report.baseline import match_baseline
    from app.report.findings import baseline_findings

    base = records.run(
        "20260101-100000-aaaaaa",
        [records.job("20260101-100000-aaaaaa", 0, 1024, {"encrypt": _samples(1e-6, 3, 0.01, 1)})],
    )
    new = records.run(
        "20260102-100000-bbbbbb",
        [records.job("20260102-100000-bbbbbb", 0, 1024, {"encrypt": _samples(3e-6, 3, 0.01, 2)})],
    )
    match = match_baseline(new, base)
    ((pair,),) = [match.pairs]
    assert pair.comparison is None and pair.too_few == (3, 3)
    (sentence,) = baseline_findings(match, base)
    assert f"1 without a verdict (fewer than {MIN_SAMPLES} samples a side)" in sentence
    assert "0 slower" in sentence


def _one_job_run(run_id: str, median: float, n: int, **profile: object) -> RunResult:
    run = records.run(run_id, [records.job(run_id, 0, 1024, {"encrypt": _samples(median, n, 0.01, 1)})])
    run.profile = {**run.profile, **profile}
    return run


def test_a_reduced_run_with_samples_enough_is_still_no_verdict_in_every_part_of_the_report() -> None:
    """The flag, not the sample count, decides: a reduced run is a smoke test."""
    from app.report.baseline import match_baseline
    from app.report.comparison import comparison_section
    from app.report.findings import baseline_findings
    from app.report.labels import Labels
    from app.report.model import Paragraph, Table

    base = _one_job_run("20260101-100000-aaaaaa", 1e-6, 40, name="quick (reduced)", reduced=True)
    new = _one_job_run("20260102-100000-bbbbbb", 3e-6, 40, name="quick")
    match = match_baseline(new, base)
    ((pair,),) = [match.pairs]
    assert pair.comparison is None and pair.withheld and pair.too_few is None
    (sentence,) = baseline_findings(match, base)
    assert "1 without a verdict (a reduced run is not for comparison)" in sentence and "0 slower" in sentence
    section = comparison_section(new, match, base, Labels(new.jobs))
    (table,) = [block for block in section.blocks if isinstance(block, Table)]
    assert table.rows[0][-3:] == ["reduced run", "40 / 40", "no verdict"]
    notes = " ".join(block.text for block in section.blocks if isinstance(block, Paragraph))
    assert "profile quick (reduced))" in notes
    assert "No verdict for any pair: the baseline's run is reduced (a smoke test, not for comparison)." in notes


def test_an_overridden_baseline_is_named_as_such_in_the_title_facts_and_comparison() -> None:
    from app.report.baseline import match_baseline
    from app.report.comparison import comparison_section
    from app.report.content import build_report
    from app.report.labels import Labels
    from app.report.model import Paragraph

    base = _one_job_run("20260101-100000-aaaaaa", 1e-6, 40, name="quick", overrides={"--samples": "40"})
    new = _one_job_run("20260102-100000-bbbbbb", 1e-6, 40, name="quick")
    section = comparison_section(new, match_baseline(new, base), base, Labels(new.jobs))
    notes = " ".join(block.text for block in section.blocks if isinstance(block, Paragraph))
    assert "profile quick (--samples 40))" in notes
    assert "The baseline ran with settings overridden from the command line (--samples 40)" in notes
    report = build_report(base)
    assert report.title == "CryptoBench report: quick (--samples 40)"

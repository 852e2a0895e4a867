"""The report ranks two schemes only with the evidence a comparison needs: enough samples
a side (app/core/analysis/evidence.py) and medians whose 95 % intervals do not overlap."""

from __future__ import annotations

import numpy as np

from app.core.analysis.evidence import MIN_SAMPLES
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
    assert "cannot be told apart (their medians' 95 % intervals overlap)" in sentence
    assert "fastest" not in sentence and "slower" not in sentence


def test_too_few_samples_are_indistinguishable_however_far_apart() -> None:
    (sentence,) = _pair(_samples(1e-6, 3, 0.01, 1), _samples(9e-6, 3, 0.01, 2))
    assert f"cannot be told apart (n = 3 and 3, fewer than the {MIN_SAMPLES} a side a verdict needs)" in sentence


def test_separated_intervals_with_enough_samples_are_ranked() -> None:
    (sentence,) = _pair(_samples(1e-6, MIN_SAMPLES, 0.01, 1), _samples(2e-6, MIN_SAMPLES, 0.01, 2))
    assert "fastest AES-128-GCM" in sentence and "slowest ChaCha20-Poly1305" in sentence
    assert sentence.endswith("2.0× slower than the fastest.")

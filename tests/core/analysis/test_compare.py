"""Comparing two runs: pairing, verdicts, the regression rule, the environment."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from app.core.analysis import compare as compare_module
from app.core.analysis.compare import compare_runs, compare_sides, environment_differences, match_key
from app.core.analysis.evidence import MIN_GATE_RUNS, MIN_SAMPLES, too_few_runs
from app.core.records.job_conditions import Link, Placement
from app.core.results.model import RunResult
from app.core.vocab import Verdict
from app.report.baseline import match_baseline
from tests.helpers.comparisons import BASE_ID, ENVIRONMENT, NEW_ID, STILL, base_run, run, samples, scaled
from tests.helpers.records import job


def _verdicts(comparison: compare_module.RunComparison) -> dict[tuple[int, str], Verdict]:
    return {(p.base.message_size, m.metric): m.verdict for p, m in comparison.metrics}


def test_a_run_against_itself_is_within_noise_everywhere() -> None:
    base = base_run()
    result = compare_runs(base, base, movement=STILL)
    assert len(result.pairs) == 3 and not result.only_base and not result.only_new
    assert set(_verdicts(result).values()) == {Verdict.WITHIN_NOISE} and len(result.metrics) == 4
    assert all(m.comparison is not None and m.comparison.ratio == 1.0 for _, m in result.metrics)
    assert result.regressions() == [] and result.environment == ()


def test_samples_scaled_by_1_3_regress_and_by_0_7_are_faster() -> None:
    base = base_run()
    slower = compare_runs(base, scaled(base, 1.3), movement=STILL)
    assert set(_verdicts(slower).values()) == {Verdict.SLOWER}
    regressed = [(p.new.label, p.new.message_size, m.metric) for p, m in slower.regressions()]
    assert regressed == [
        ("AES-128-GCM", 1024, "encrypt"),
        ("AES-128-GCM", 1024, "decrypt"),
        ("AES-128-GCM", 65536, "encrypt"),
        ("Ed25519", 64, "sign"),
    ]
    for _, m in slower.metrics:
        assert m.comparison is not None and m.comparison.ratio == pytest.approx(1.3)
        assert m.comparison.ci95_low > 1.05 and m.new_median == pytest.approx(1.3 * (m.base_median or 0))
    faster = compare_runs(base, scaled(base, 0.7), movement=STILL)
    assert set(_verdicts(faster).values()) == {Verdict.FASTER} and faster.regressions() == []


def test_a_regression_needs_the_interval_beyond_the_threshold_too() -> None:
    """3 % slower, measured precisely: "slower", but no regression at 5 %; one at 1 %."""
    base = base_run()
    result = compare_runs(base, scaled(base, 1.03), movement=STILL)
    assert set(_verdicts(result).values()) == {Verdict.SLOWER}
    assert result.regressions() == [] and len(result.regressions(0.01)) == 4
    assert compare_runs(base, scaled(base, 1.03), threshold=0.01, movement=STILL).regressions() != []


def test_a_noisy_slowdown_past_the_threshold_is_not_a_regression() -> None:
    """Ratio 1.3 on wildly spread samples: the interval reaches below 1.05."""
    noisy = run(BASE_ID, [job(BASE_ID, 0, 64, {"encrypt": samples(1e-3, n=MIN_SAMPLES, spread=0.9, seed=7)})])
    result = compare_runs(noisy, scaled(noisy, 1.3), movement=STILL)
    ((_, metric),) = result.metrics
    assert metric.comparison is not None and metric.comparison.ratio == pytest.approx(1.3)
    assert metric.comparison.ci95_low < 1.05 and result.regressions() == []


@pytest.mark.parametrize("n", [1, 4, MIN_SAMPLES - 1])
def test_too_few_samples_a_side_is_no_verdict_however_large_the_ratio(n: int) -> None:
    """n = 1 a side gave "3.839x | 3.839-3.839x | slower (regression)": a zero-width
    interval is no spread to measure, not certainty. Below the minimum, no ranking and no
    regression, and the reason says how many there were."""
    thin = run(BASE_ID, [job(BASE_ID, 0, 64, {"encrypt": samples(1e-3, n=n, spread=0.01, seed=3)})])
    result = compare_runs(thin, scaled(thin, 3.839), movement=STILL)
    ((_, metric),) = result.metrics
    assert metric.verdict == Verdict.NO_VERDICT and metric.too_few and metric.comparison is None
    assert metric.reason == f"too few samples: n = {n} and {n} (a verdict needs {MIN_SAMPLES} a side)"
    assert metric.words == f"no verdict: too few samples: n = {n} and {n} (a verdict needs {MIN_SAMPLES} a side)"
    assert result.regressions() == [] and len(result.too_few()) == 1
    enough = run(BASE_ID, [job(BASE_ID, 0, 64, {"encrypt": samples(1e-3, n=MIN_SAMPLES, spread=0.01, seed=3)})])
    ((_, ranked),) = compare_runs(enough, scaled(enough, 3.839), movement=STILL).metrics
    assert ranked.verdict == Verdict.SLOWER and not ranked.too_few


def test_unmatched_jobs_are_listed_and_repeats_pair_in_order() -> None:
    base = run(
        BASE_ID,
        [
            job(BASE_ID, 0, 64, {"encrypt": samples(1e-5, seed=1)}),
            job(BASE_ID, 1, 64, {"encrypt": samples(2e-5, seed=2)}),
            job(BASE_ID, 2, 128, {"encrypt": samples(1e-5, seed=3)}),
        ],
    )
    new = run(
        NEW_ID,
        [
            job(NEW_ID, 0, 64, {"encrypt": samples(1e-5, seed=4)}),
            job(NEW_ID, 1, 256, {"encrypt": samples(1e-5, seed=5)}),
            job(NEW_ID, 2, 64, {"encrypt": samples(2e-5, seed=6)}),
        ],
    )
    result = compare_runs(base, new, movement=STILL)
    assert [(p.base.id, p.new.id) for p in result.pairs] == [
        (f"{BASE_ID}/0", f"{NEW_ID}/0"),
        (f"{BASE_ID}/1", f"{NEW_ID}/2"),
    ]
    assert [j.id for j in result.only_base] == [f"{BASE_ID}/2"]
    assert [j.id for j in result.only_new] == [f"{NEW_ID}/1"]
    assert set(_verdicts(result).values()) == {Verdict.WITHIN_NOISE}


def test_link_and_placement_are_part_of_the_match() -> None:
    plain = job(BASE_ID, 0, 64, {"rtt": samples(1e-4)}, mode="loopback")
    lte = Link("lte", 25.0, 5.0, 10000.0, 30000.0, 0.0, "delay-line")
    variants = [
        plain,
        replace(plain, link=lte),
        replace(plain, link=replace(lte, delay_ms=30.0)),
        replace(plain, placement=Placement("same")),
        replace(plain, placement=Placement("split")),
    ]
    keys = {match_key(variant) for variant in variants}
    assert len(keys) == 5
    assert match_key(replace(plain, link=lte), link=False) == match_key(plain)
    assert match_key(replace(plain, params={"b": 1, "a": 2})) == match_key(replace(plain, params={"a": 2, "b": 1}))
    # The report pairs by the same key: a job pinned differently is not its baseline.
    base = run(BASE_ID, [replace(plain, placement=Placement("same"))])
    new = run(NEW_ID, [replace(plain, id=f"{NEW_ID}/0", placement=Placement("split"))])
    match = match_baseline(new, base)
    assert match.pairs == [] and len(match.only_run) == len(match.only_baseline) == 1
    assert compare_runs(base, new).pairs == ()


def test_what_cannot_be_compared_says_why() -> None:
    base = run(
        BASE_ID,
        [
            job(BASE_ID, 0, 64, {"encrypt": samples(1e-5), "decrypt": samples(1e-5, seed=2)}),
            job(BASE_ID, 1, 128, {"encrypt": samples(1e-5)}),
        ],
    )
    new_jobs = [
        job(NEW_ID, 0, 64, {"encrypt": samples(1e-5), "keygen": samples(1e-3)}),
        job(NEW_ID, 1, 128, {}, status="failed", error="boom"),
    ]
    new_jobs[0].metrics["encrypt"].samples = []  # results written without their raw samples
    result = compare_runs(base, run(NEW_ID, new_jobs))
    first, second = result.pairs
    reasons = {m.metric: (m.verdict, m.reason) for m in first.metrics}
    assert reasons == {
        "encrypt": (Verdict.NOT_COMPARABLE, "no raw samples in the new run (saved without them)"),
        "decrypt": (Verdict.NOT_COMPARABLE, "measured only in the baseline"),
        "keygen": (Verdict.NOT_COMPARABLE, "measured only in the new run"),
    }
    assert second.metrics == () and second.reason == "new run failed: boom"
    assert result.regressions() == [] and result.count(Verdict.NOT_COMPARABLE) == 3


def test_environment_differences_name_each_fact() -> None:
    other = json.loads(json.dumps(ENVIRONMENT))
    other["hostname"] = "server"
    other["cpu"]["flags"]["avx512f"] = True
    other["cpu"]["logical_cores"] = 64
    other["libraries"]["cryptography"] = {"version": "43.0.0", "openssl": "OpenSSL 3.3.1 4 Jun 2024"}
    other["python"]["version"] = "3.12.1"
    found = {(d.what, d.base, d.new) for d in environment_differences(ENVIRONMENT, other)}
    assert found == {
        ("machine", "laptop", "server"),
        ("CPU flag AVX-512F", "absent", "present"),
        ("logical cores", "4", "64"),
        ("cryptography version", "42.0.0", "43.0.0"),
        ("cryptography OpenSSL", "OpenSSL 3.0.11 19 Sep 2023", "OpenSSL 3.3.1 4 Jun 2024"),
        ("Python", "CPython 3.11.7", "CPython 3.12.1"),
    }
    assert environment_differences(ENVIRONMENT, ENVIRONMENT) == []


def test_a_fact_an_older_run_did_not_record_is_a_difference() -> None:
    old = {"hostname": "laptop", "cpu": {"model": "Test CPU"}}  # an early results file
    found = {d.what: (d.base, d.new) for d in environment_differences(old, ENVIRONMENT)}
    assert "machine" not in found and "CPU model" not in found
    assert found["cryptography OpenSSL"] == (None, "OpenSSL 3.0.11 19 Sep 2023")
    assert found["CPU governor"] == (None, "performance")
    assert environment_differences({}, {"cpu": None, "libraries": "junk"}) == []


def test_large_comparisons_draw_fewer_resamples(monkeypatch: pytest.MonkeyPatch) -> None:
    base = base_run()
    full = compare_runs(base, base)
    assert full.resamples == compare_module.BOOTSTRAP_RESAMPLES and not full.exact_medians
    monkeypatch.setattr(compare_module, "DRAW_BUDGET", 320 * 1000)  # 320 samples in all: 1000 resamples
    fewer = compare_runs(base, base)
    assert fewer.resamples == 1000 and not fewer.exact_medians


def test_past_the_floor_the_budget_holds_by_order_statistics(monkeypatch: pytest.MonkeyPatch) -> None:
    """500 resamples of 320 samples would pass a 100,000 budget: the medians are drawn from
    their order statistics instead (2 draws a set per resample), the full 2000 of them; a
    budget too small for even that gets fewer, never under the floor."""
    base = base_run()
    sets = 2 * sum(len(job.metrics) for job in base.jobs)
    monkeypatch.setattr(compare_module, "DRAW_BUDGET", 100_000)
    exact = compare_runs(base, scaled(base, 1.3), movement=STILL)
    assert exact.exact_medians and exact.resamples == min(2000, 100_000 // (2 * sets))
    assert exact.to_dict()["median_draws"] == "order statistics"
    assert exact.count(Verdict.SLOWER) == len(exact.metrics)  # the same verdicts as resampling
    monkeypatch.setattr(compare_module, "DRAW_BUDGET", 10)
    assert compare_runs(base, base).resamples == compare_module.MIN_RESAMPLES


def test_the_comparison_as_data() -> None:
    base = base_run()
    data = json.loads(json.dumps(compare_runs(base, scaled(base, 1.3), movement=STILL).to_dict()))
    assert data["base"] == {
        "id": BASE_ID,
        "name": "bench",
        "started": base.started,
        "machine": "laptop",
        "reduced": False,
        "overrides": {},
    }
    assert data["gate"] == {"checked": False, "reason": too_few_runs(1, 1)}
    assert data["regressions"] == 4 and data["threshold"] == 0.05 and data["resamples"] == 2000
    metric = data["pairs"][0]["metrics"][0]
    assert metric["verdict"] == "slower" and metric["regressed"] is True
    assert metric["run_movement"] == {"runs": 5, "max_ratio": 1.0, "bound": 1.0}
    assert metric["ratio"] == pytest.approx(1.3) and metric["ci95"][0] > 1.05
    assert data["only_base"] == data["only_new"] == [] and data["environment"] == []


# --- several runs a side ---------------------------------------------------------------


def _runs(factors: list[float], prefix: str) -> list[RunResult]:
    """Runs of the same profile whose every sample a whole-run factor moved (as run-to-run
    variation does: another process layout, another clock), ids prefix-0, prefix-1, ..."""
    return [scaled(base_run(), factor, run_id=f"{prefix}-{k}") for k, factor in enumerate(factors)]


def test_run_to_run_variation_is_within_noise_with_several_runs_a_side() -> None:
    # The same code: each run moved by up to 25 % as a whole, the way two runs here differed.
    base = _runs([1.0, 1.25, 0.9], "base")
    new = _runs([1.2, 0.95, 1.1], "new")
    one = compare_runs(base[0], new[0], movement=STILL)
    assert one.regressions()  # one run a side, judged as if runs never moved: a 1.2x shift passes for one
    # Without a measured movement, one run a side gives ratios and no verdict.
    unjudged = compare_runs(base[0], new[0])
    assert not unjudged.regressions() and {m.verdict for _, m in unjudged.metrics} == {Verdict.NO_VERDICT}
    assert {m.words for _, m in unjudged.metrics} == {"no verdict: one run a side"}
    assert all(m.comparison is not None for _, m in unjudged.metrics) and len(unjudged.one_run()) == 4
    several = compare_sides(base, new)
    assert several.repeated and not several.regressions()
    assert all(m.verdict == Verdict.WITHIN_NOISE for _, m in several.metrics)
    assert [r.id for r in several.base_runs] == ["base-0", "base-1", "base-2"]
    assert several.metrics[0][1].base_n == 3 * len(base[0].jobs[0].metrics["encrypt"].samples)


def test_a_real_slowdown_is_still_found_across_runs() -> None:
    base = _runs([1.0, 1.03, 0.98, 1.01], "base")
    new = _runs([1.5, 1.53, 1.48, 1.52], "new")
    comparison = compare_sides(base, new)
    assert len(comparison.regressions()) == len(comparison.metrics) == 4
    ratio = comparison.metrics[0][1].comparison
    assert ratio is not None and ratio.ratio == pytest.approx(1.5, rel=0.02)


def _marked(base: RunResult, **profile: object) -> RunResult:
    return replace(base, profile={**base.profile, **profile})


def test_a_reduced_run_on_either_side_gets_no_verdict_whatever_its_samples() -> None:
    base = base_run()
    reduced = _marked(scaled(base, 1.5), reduced=True, name="bench (reduced)")
    for comparison in (compare_runs(base, reduced), compare_runs(reduced, base)):
        assert comparison.regressions() == [] and len(comparison.too_few()) == len(comparison.metrics) == 4
        assert {m.verdict for _, m in comparison.metrics} == {Verdict.NO_VERDICT}
        reasons = {m.reason for _, m in comparison.metrics}
        assert all((r or "").endswith("reduced (a smoke test, not for comparison)") for r in reasons)
    # A run stored before the flag existed says so in its name only: the same rule holds.
    legacy = replace(scaled(base, 1.5), profile={**base.profile, "name": "bench (reduced)"})
    assert compare_runs(base, legacy).regressions() == [] and len(compare_runs(base, legacy).too_few()) == 4
    # Among several runs a side, the reduced one is named.
    several = compare_sides(_runs([1.0, 1.0, 1.0], "base"), [*_runs([1.5, 1.5], "new"), _marked(base, reduced=True)])
    assert f"the new side's run {BASE_ID} is reduced" in (several.metrics[0][1].reason or "")


def test_an_overridden_run_is_compared_and_named_on_its_side() -> None:
    base = base_run()
    overridden = _marked(scaled(base, 1.3), overrides={"--samples": "40"}, name="bench (--samples 40)")
    comparison = compare_runs(base, overridden, movement=STILL)
    assert len(comparison.regressions()) == 4  # evidence enough: the rule is the samples', not the mark's
    data = comparison.to_dict()
    assert data["new"]["overrides"] == {"--samples": "40"} and data["new"]["name"] == "bench (--samples 40)"
    # A name without the mark (a file written by hand, another tool) gets it in every face.
    unnamed = _marked(base, overrides={"--link": "lte"})
    assert compare_runs(unnamed, base).to_dict()["base"]["name"] == "bench (--link lte)"


def test_the_gate_needs_three_runs_a_side() -> None:
    assert MIN_GATE_RUNS == 3
    assert compare_runs(base_run(), base_run()).gate_reason == too_few_runs(1, 1)
    assert "1 and 1 (it needs 3 a side, joined with +: A+B+C); not checked" in (too_few_runs(1, 1) or "")
    assert compare_sides(_runs([1.0, 1.0], "b"), _runs([1.0, 1.0, 1.0], "n")).gate_reason == too_few_runs(2, 3)
    assert compare_sides(_runs([1.0] * 3, "b"), _runs([1.0] * 3, "n")).gate_reason is None

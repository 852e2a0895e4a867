"""Compare and the regression gate cope with any positive finite durations.

Before: `compare --json` of a run holding 5e-324 s printed `Infinity` 213 times and the
regression gate passed "inf× … within noise". Now the compare statistics give finite
figures or no verdict (a ratio that is not finite is no verdict, which neither passes nor
fails the gate) and every JSON export is strict: never `Infinity`/`NaN`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.cli.main import main as cli_main
from app.core.analysis import median_ratio
from app.core.analysis.compare import compare_runs, compare_sides
from app.core.results import model as results
from tests.helpers.extreme_runs import OTHER_ID, POSITIVE, RUN_ID, unchecked_run

# --- compare and the gate: a ratio that is not finite is no verdict ----------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.lists(POSITIVE, min_size=1, max_size=12), new=st.lists(POSITIVE, min_size=1, max_size=12))
def test_stats_compare_gives_finite_figures_or_no_verdict(base: list[float], new: list[float]) -> None:
    try:
        result = median_ratio.compare(base, new, resamples=50)
    except ValueError as exc:
        assert "no verdict" in str(exc) or "undefined" in str(exc), str(exc)
        return
    for value in (result.ratio, result.ci95_low, result.ci95_high):
        assert math.isfinite(value) and value > 0
    json.dumps(result.to_dict(), allow_nan=False)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    base=st.lists(st.lists(POSITIVE, min_size=1, max_size=5), min_size=2, max_size=3),
    new=st.lists(st.lists(POSITIVE, min_size=1, max_size=5), min_size=2, max_size=3),
)
def test_a_repeated_comparison_gives_finite_figures_or_no_verdict(
    base: list[list[float]], new: list[list[float]]
) -> None:
    from app.core.analysis.compare import compare_repeated

    try:
        result = compare_repeated(base, new, resamples=40)
    except ValueError as exc:
        assert "no verdict" in str(exc) or "undefined" in str(exc), str(exc)
        return
    assert all(math.isfinite(v) and v > 0 for v in (result.ratio, result.ci95_low, result.ci95_high))


@pytest.mark.parametrize(
    "samples",
    [[5e-324] * 12, [1e18 if i % 2 else 1e-300 for i in range(12)], [1e300] * 8],
    ids=["subnormal", "1e18-beside-1e-300", "1e300"],
)
def test_compare_of_extreme_runs_has_strict_json_and_no_verdict_where_no_ratio(samples: list[float]) -> None:
    for base, new in (
        (unchecked_run(RUN_ID, samples), unchecked_run(OTHER_ID, None)),
        (unchecked_run(RUN_ID, None), unchecked_run(OTHER_ID, samples)),
    ):
        comparison = compare_runs(base, new)
        text = json.dumps(comparison.to_dict(), allow_nan=False)  # raises on Infinity/NaN anywhere
        assert "Infinity" not in text
        for _, metric in comparison.metrics:
            c = metric.comparison
            if c is not None:
                assert all(math.isfinite(v) and v > 0 for v in (c.ratio, c.ci95_low, c.ci95_high))
            if metric.undecided:
                assert metric.verdict == "not comparable" and "no verdict" in (metric.reason or "")
        repeated = compare_sides([base, base], [new, new])
        json.dumps(repeated.to_dict(), allow_nan=False)


def test_a_subnormal_baseline_is_no_verdict_in_compare_and_the_gate_neither_passes_nor_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: 213 `Infinity` in the JSON and "inf× … within noise", exit 0 from the gate."""
    import app.cli.common as common

    base, new = unchecked_run(RUN_ID, [5e-324] * 12), unchecked_run(OTHER_ID, None)
    monkeypatch.setattr(common, "load_run_source", lambda text, store: {"base": base, "new": new}[text])
    monkeypatch.setattr("app.cli.commands.compare.load_run_source", common.load_run_source)
    assert cli_main(["compare", "base", "new", "--json"]) == 0
    out, _ = capsys.readouterr()
    data = json.loads(out, parse_constant=lambda name: pytest.fail(f"{name} in compare --json"))
    metrics = [m for p in data["comparisons"][0]["pairs"] for m in p["metrics"]]
    assert metrics and all(m["ratio"] is None and m["verdict"] == "not comparable" for m in metrics)
    assert all("no verdict" in m["reason"] for m in metrics)
    code = cli_main(["compare", "base+base+base", "new+new+new", "--fail-on-regression"])  # runs enough for the gate
    out, err = capsys.readouterr()
    assert code == 2, err
    assert "have no finite ratio, so the gate cannot decide" in err
    assert "inf" not in out.replace("info", "")
    assert "within noise" not in " ".join(line for line in out.splitlines() if "keygen" in line)


def test_results_json_is_strict_on_export() -> None:
    run = unchecked_run(RUN_ID, None)
    run.jobs[0].metrics["keygen"].samples[0] = math.inf
    with pytest.raises(ValueError, match="not JSON compliant"):
        results.to_json(run)

"""How much whole runs move, measured from the store, and what one run a side may say with it
(app/core/analysis/spread.py, app/core/analysis/evidence.py)."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from app.core.analysis.compare import compare_runs
from app.core.analysis.evidence import MIN_MOVEMENT_RUNS, RunMovement
from app.core.analysis.spread import movement_bound, store_movement
from app.core.results.model import RunResult
from app.core.store.store import Store
from app.core.vocab import Verdict
from tests.helpers.comparisons import base_run, scaled


def _stored(path: Path, factors: list[float], day: int = 1, **profile: object) -> list[RunResult]:
    """Runs of one profile on one machine whose every sample a whole-run factor moved."""
    runs = []
    with Store(path) as store:
        for k, factor in enumerate(factors):
            run = scaled(base_run(), factor, run_id=f"202601{day:02d}-10000{k}-aaaaa{k}")
            run = replace(run, started=f"2026-01-01T10:0{k}:00+00:00", profile={**run.profile, **profile})
            store.add_run(run)
            runs.append(run)
    return runs


def test_the_bound_grows_with_the_spread_and_shrinks_with_the_runs() -> None:
    assert movement_bound([1.0, 1.1]) is None  # MIN_MOVEMENT_RUNS runs, or nothing measured
    three = movement_bound([1.0, 1.05, 1.1])
    ten = movement_bound([1.0, 1.05, 1.1] * 3 + [1.05])
    assert three is not None and ten is not None and MIN_MOVEMENT_RUNS == 3
    assert three.max_ratio == pytest.approx(1.1) and three.runs == 3
    assert three.bound > ten.bound > ten.max_ratio  # few runs: a wide bound, never under what was seen
    assert movement_bound([1.0, 1.0, 1.0]) == RunMovement(3, 1.0, 1.0)
    assert movement_bound([0.0, 1.0, 2.0]) is None


def test_identical_code_one_run_a_side_gets_no_verdict_without_stored_runs(tmp_path: Path) -> None:
    """Two back-to-back runs of the same code, 1.6x apart as a whole: one run a side, the
    bootstrap interval clears 1 by far, yet nothing in the store measures how runs move."""
    base, new = _stored(tmp_path / "store.sqlite3", [1.0, 1.6])
    with Store(tmp_path / "store.sqlite3") as store:
        movement = store_movement(store, [base], [new])
    assert movement.moved == {}
    comparison = compare_runs(base, new, movement=movement)
    assert {m.verdict for _, m in comparison.metrics} == {Verdict.NO_VERDICT}
    assert comparison.regressions() == [] and len(comparison.one_run()) == len(comparison.metrics)
    assert all(m.comparison is not None and m.comparison.ratio == pytest.approx(1.6) for _, m in comparison.metrics)


def test_stored_runs_measure_the_movement_a_verdict_must_clear(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    *_, base = _stored(path, [1.0, 1.08, 0.95, 1.03, 1.0])
    with Store(path) as store:
        alike = scaled(base_run(), 1.06, run_id="20260102-100000-bbbbbb")  # within how runs move
        store.add_run(alike)
        movement = store_movement(store, [base], [alike])
    found = [movement.of(job, name) for job in base.jobs for name in job.metrics]
    moved = found[0]
    assert moved is not None and moved.runs == 5  # the new run never counts as identical code
    assert all(m is not None and m.bound == pytest.approx(moved.bound) for m in found)
    assert moved.max_ratio == pytest.approx(1.08 / 0.95)
    assert moved.bound > moved.max_ratio
    within = compare_runs(base, alike, movement=movement)
    assert {m.verdict for _, m in within.metrics} == {Verdict.WITHIN_NOISE} and not within.regressions()
    assert all(m.movement is not None and "5 stored runs" in (m.reason or "") for _, m in within.metrics)
    far = scaled(base_run(), 2.0 * moved.bound, run_id="20260102-100000-cccccc")
    slower = compare_runs(base, far, movement=movement)
    assert {m.verdict for _, m in slower.metrics} == {Verdict.SLOWER} and len(slower.regressions()) == 4
    assert math.isclose(slower.metrics[0][1].comparison.ratio, 2.0 * moved.bound, rel_tol=1e-6)  # type: ignore[union-attr]


def test_only_unmarked_runs_of_the_same_machine_and_versions_count(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    _stored(path, [1.0, 1.1], reduced=True, name="bench (reduced)")  # smoke tests: never counted
    base, other = _stored(tmp_path / "other.sqlite3", [1.0, 1.0], day=2)
    libraries = {**other.environment["libraries"], "cryptography": {"version": "43.0.0", "openssl": "OpenSSL 3.2.1"}}
    upgraded = {**other.environment, "libraries": libraries}
    with Store(path) as store:
        store.add_run(base)
        for k in (1, 2):  # earlier runs with another cryptography: other code, never counted
            run = scaled(base_run(), 1.0, run_id=f"20260102-09000{k}-dddddd")
            store.add_run(replace(run, started=f"2026-01-01T09:0{k}:00+00:00", environment=upgraded))
        assert store_movement(store, [base], [other]).moved == {}
        for k in (1, 2):  # earlier runs of the same versions: with the baseline, enough to measure
            run = scaled(base_run(), 1.0, run_id=f"20260102-08000{k}-eeeeee")
            store.add_run(replace(run, started=f"2026-01-01T08:0{k}:00+00:00"))
        moved = store_movement(store, [base], [other]).moved
        assert moved and {m.runs for m in moved.values()} == {3}  # the baseline and the two alike
        # Another machine on the new side: one machine's movement says nothing of another's.
        elsewhere = replace(other, environment={**other.environment, "hostname": "desktop"})
        assert store_movement(store, [base], [elsewhere]).moved == {}

"""A job's trend across stored runs (app/core/analysis/trend.py) over a hand-built store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from app.core.analysis.compare import match_key
from app.core.analysis.trend import (
    job_history,
    job_trend,
    machine_label,
    relevant_versions,
    trend_metrics,
    trend_points,
)
from app.core.store.store import Store
from tests.helpers import records
from tests.helpers import trend_cases as cases


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "results.sqlite3"


def test_points_follow_the_job_in_time_order_with_their_medians_and_intervals(store_path: Path) -> None:
    key = cases.build(store_path)
    with Store(store_path) as store:
        points = job_trend(store, key, "encrypt")
    assert [p.run_id for p in points] == [run[0] for run in cases.RUNS[:4]]  # the fifth run's job failed
    assert [p.median for p in points] == pytest.approx(cases.MEDIANS, rel=1e-12)
    for point in points:
        assert point.unit == "s" and point.n == 31
        assert point.ci95_low is not None and point.ci95_high is not None
        assert point.ci95_low < point.median < point.ci95_high
    assert [p.machine for p in points] == ["alpha", "alpha", "alpha", "beta"]
    assert points[0].versions == "cryptography 41.0.7, OpenSSL 3.0.13"
    assert points[3].versions == "cryptography 42.0.1, OpenSSL 3.2.1"


def test_a_change_is_marked_where_the_library_or_the_machine_changed(store_path: Path) -> None:
    key = cases.build(store_path)
    with Store(store_path) as store:
        points = job_trend(store, key, "encrypt")
    assert [p.changed_from_previous for p in points] == [
        (),
        (),
        ("cryptography 41.0.7 → 42.0.1", "OpenSSL 3.0.13 → 3.2.1"),
        ("machine: alpha → beta",),
    ]


def test_a_pycryptodome_job_ignores_a_cryptography_upgrade(store_path: Path) -> None:
    cases.build(store_path)
    key = match_key(cases.job("x", 2, 1.0, backend="pycryptodome"))
    with Store(store_path) as store:
        points = job_trend(store, key, "encrypt")
    assert len(points) == 5 and {p.versions for p in points} == {"pycryptodome 3.20.0"}
    assert [p.changed_from_previous for p in points] == [(), (), (), ("machine: alpha → beta",), ()]


def test_other_parameters_and_links_are_other_jobs(store_path: Path) -> None:
    cases.build(store_path)
    with Store(store_path) as store:
        wider = job_history(store, match_key(cases.job("x", 1, 1.0, params={"key_bits": 256})))
        none = job_history(store, match_key(cases.job("x", 0, 1.0, message_size=2048)))
    assert [row.job_index for row in wider] == [1] * 5  # the job with the wider key, in each of the 5 runs
    assert none == []


def test_metrics_and_a_failed_job(store_path: Path) -> None:
    key = cases.build(store_path)
    with Store(store_path) as store:
        history = job_history(store, key)
    assert len(history) == 5
    assert trend_metrics(history) == ["encrypt"]
    assert trend_points(history, "decrypt") == []
    assert trend_metrics(history[4:]) == []  # the failed job alone has no figures


@pytest.mark.parametrize(
    "damage",
    [
        "UPDATE jobs SET figures = substr(figures, 1, 20) WHERE id = :id",  # cut short
        "UPDATE jobs SET figures = replace(figures, '\"s\"', '\"ms\"') WHERE id = :id",  # another unit
        'UPDATE jobs SET figures = \'{"encrypt":[31,1e300,null,null,"s"]}\' WHERE id = :id',  # no duration
        'UPDATE jobs SET figures = \'{"encrypt":[31,1e-5,2e-5,3e-5,"s"]}\' WHERE id = :id',  # median outside
        "UPDATE jobs SET idx = 7 WHERE id = :id",  # the row's index is not its id's
        "UPDATE jobs SET run_id = '20260101-100000-aaaaaa', idx = 9 WHERE id = :id",  # another run's job
    ],
)
def test_a_damaged_row_is_left_out_not_fatal(store_path: Path, damage: str) -> None:
    """The trend reads the columns beside a job's JSON (store/columns.py): a damaged one, or
    a row that is not its run's job, gives no point; the other runs' points stay."""
    key = cases.build(store_path)
    with sqlite3.connect(store_path) as db:
        db.execute(damage.replace(":id", "?"), (f"{cases.RUNS[1][0]}/0",))
    with Store(store_path) as store:
        points = job_trend(store, key, "encrypt")
        damaged = store.damaged_rows()
    assert [p.run_id for p in points] == [cases.RUNS[i][0] for i in (0, 2, 3)]
    assert any(cases.RUNS[1][0] + "/0" in line for line in damaged), damaged  # `cryptobench store` names it


def test_the_same_host_name_on_another_cpu_is_another_machine(store_path: Path) -> None:
    key = cases.build(store_path)
    moved = cases.environment("alpha", "42.0.1", "OpenSSL 3.2.1 30 Jan 2024")
    moved["cpu"] = {"model": "Other CPU"}
    cases.write(
        store_path,
        records.run(
            "20260106-100000-ffffff",
            [cases.job("20260106-100000-ffffff", 0, 9e-6)],
            started="2026-01-06T10:00:00+00:00",
            status="running",
            environment=moved,
            name="t",
        ),
    )
    with Store(store_path) as store:
        points = job_trend(store, key, "encrypt")
    assert points[-1].changed_from_previous == ("machine: beta → alpha",)
    assert points[-1].median == pytest.approx(9e-6)


def test_versions_by_backend_and_machine_labels() -> None:
    env = cases.environment("alpha", "42.0.1", "OpenSSL 3.2.1 30 Jan 2024")
    env["libraries"]["tinyec"] = {"version": "0.4.0"}
    assert relevant_versions(env, "tinyec") == [("tinyec", "0.4.0"), ("pycryptodome", "3.20.0"), ("Python", "3.11.7")]
    assert relevant_versions(env, "python") == [("Python", "3.11.7")]
    assert relevant_versions({}, "cryptography") == [("cryptography", "unknown"), ("OpenSSL", "unknown")]
    assert machine_label(env) == "alpha"
    assert (
        machine_label({"cpu": {"model": "Cortex-A72"}, "os": {"pretty_name": "Debian 12"}}) == "Cortex-A72 · Debian 12"
    )
    assert machine_label({}) == "unknown machine"


def test_a_trend_reads_no_jobs_json(store_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rows are picked by the job's identity and read from the figures kept beside them
    (store/columns.py): parsing every job's JSON took 1.74 s at 2,167 runs."""
    from app.core.store import reading, rows

    key = cases.build(store_path)
    for module in (reading, rows):
        for name in ("_read_job", "_read_job_of", "_decode_job", "_json_row"):
            if hasattr(module, name):
                monkeypatch.setattr(module, name, lambda *a, **k: pytest.fail("a job's JSON was read"))
    with Store(store_path) as store:
        points = job_trend(store, key, "encrypt")
    assert [p.median for p in points] == pytest.approx(cases.MEDIANS)

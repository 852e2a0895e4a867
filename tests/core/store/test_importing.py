"""Importing a results file from another machine into the store: checked, whole, once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.results.model import ResultsFileError
from app.core.store import store as store_module
from app.core.store.importing import Duplicate, RunIdTaken, content_digest, import_results
from app.core.store.store import Store, StoreError
from tests.helpers import records
from tests.helpers.comparisons import BASE_ID, NEW_ID, base_run, scaled, write


@pytest.fixture()
def store(tmp_path: Path) -> Any:
    with Store(tmp_path / "store.sqlite3") as opened:
        yield opened


def test_a_run_is_added_with_its_jobs_and_machine(store: Store, tmp_path: Path) -> None:
    run = base_run()
    outcome = import_results(store, write(tmp_path / "laptop.json", run))
    assert outcome.added and outcome.machine == "laptop" and outcome.run.id == BASE_ID
    (summary,) = store.list_runs()
    assert (summary.id, summary.host, summary.jobs, summary.ok_jobs, summary.status) == (
        BASE_ID,
        "laptop",
        3,
        3,
        "finished",
    )
    stored = store.load_run(BASE_ID)
    assert stored.to_dict() == run.to_dict() and content_digest(stored) == content_digest(run)


def test_the_same_run_twice_is_found_not_added(store: Store, tmp_path: Path) -> None:
    path = write(tmp_path / "r.json", base_run())
    assert import_results(store, path).added
    again = import_results(store, path)
    assert (again.added, again.duplicate, again.existing_id) == (False, Duplicate.SAME_ID, BASE_ID)
    data = json.loads(path.read_text())
    data["run"]["id"] = "renamed-1"
    for item in data["jobs"]:
        item["id"] = f"renamed-1/{item['index']}"
    renamed = import_results(store, write(tmp_path / "renamed.json", data))
    assert (renamed.added, renamed.duplicate, renamed.existing_id) == (False, Duplicate.SAME_CONTENT, BASE_ID)
    assert [r.id for r in store.list_runs()] == [BASE_ID]


def test_another_run_under_a_stored_id_is_refused(store: Store, tmp_path: Path) -> None:
    import_results(store, write(tmp_path / "a.json", base_run()))
    other = scaled(base_run(), 2.0, run_id=BASE_ID)
    with pytest.raises(RunIdTaken, match=f"another run with id {BASE_ID} is already stored"):
        import_results(store, write(tmp_path / "b.json", other))
    assert store.load_run(BASE_ID).to_dict() == base_run().to_dict()


def _hostile(data: dict[str, Any], case: str) -> None:
    if case == "run id":
        data["run"]["id"] = "../../etc x"
    elif case == "job of another run":
        data["jobs"][1]["id"] = "20200101-000000-ffffff/0"
    elif case == "index twice":
        data["jobs"][1]["index"] = 0
        data["jobs"][1]["id"] = f"{BASE_ID}/0"
    elif case == "sample":
        data["jobs"][0]["metrics"]["encrypt"]["samples"][3] = "fast"
    elif case == "status":
        data["jobs"][2]["status"] = "great"


@pytest.mark.parametrize(
    ("case", "message"),
    [
        ("run id", r"run\.id: \"\.\./\.\./etc x\" is not a run id"),
        ("job of another run", r"jobs\[1\]\.id: \"20200101-000000-ffffff/0\" is not the run's id"),
        ("index twice", r"jobs\[1\]\.index: 0 appears twice"),
        ("sample", r"jobs\[0\]\.metrics\.encrypt\.samples\[3\]"),
        ("status", r"jobs\[2\]\.status"),
    ],
)
def test_a_hostile_file_is_refused_and_nothing_is_written(
    store: Store, tmp_path: Path, case: str, message: str
) -> None:
    data = base_run().to_dict()
    _hostile(data, case)
    path = write(tmp_path / "hostile.json", data)
    with pytest.raises(ResultsFileError, match=message) as caught:
        import_results(store, path)
    assert str(caught.value).startswith(str(path))
    assert store.list_runs() == []


def test_a_store_failure_midway_leaves_nothing(store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    packed = store_module.packed_job
    calls: list[str] = []

    def failing(job: Any) -> Any:
        calls.append(job.id)
        if len(calls) == 3:
            raise store_module.sqlite3.OperationalError("disk I/O error")
        return packed(job)

    monkeypatch.setattr(store_module, "packed_job", failing)
    with pytest.raises(StoreError, match="disk I/O error"):
        import_results(store, write(tmp_path / "r.json", base_run()))
    assert store.list_runs() == [] and len(calls) == 3


def test_a_run_exported_mid_run_is_stored_as_interrupted(store: Store, tmp_path: Path) -> None:
    run = scaled(base_run(), 1.0, run_id=NEW_ID)
    run.status = "running"
    assert import_results(store, write(tmp_path / "r.json", run)).added
    assert store.load_run(NEW_ID).status == "interrupted"


def test_import_looks_runs_up_by_index_never_by_listing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Into a full store as fast as into an empty one: the duplicate check asks for the id and
    for the runs that started at the same instant, and reads nothing else (it listed every
    stored run and loaded each that started at the same moment: 14 s for 200 files into 2,000 runs)."""
    from app.core.results.model import to_json

    path = tmp_path / "s.sqlite3"
    with Store(path) as store:
        for k in range(5):
            store.add_run(records.run(f"20260101-00000{k}-aaaaaa", started=f"2026-01-01T00:00:0{k}+00:00"))
    same = records.run("20260101-000002-zzzzzz", started="2026-01-01T02:00:02+02:00")  # the instant of run 2
    file = tmp_path / "same.json"
    file.write_text(to_json(same), encoding="utf-8")
    loaded: list[str] = []
    with Store(path) as store:
        real_load = store.load_run
        monkeypatch.setattr(store, "list_runs", lambda *a: pytest.fail("import listed the store"))
        monkeypatch.setattr(store, "load_run", lambda run_id: loaded.append(run_id) or real_load(run_id))
        outcome = import_results(store, file)
    assert outcome.added and loaded == ["20260101-000002-aaaaaa"]  # the one run of that instant, checked

"""Times a run can carry (aware, 1970 to 2200) on import and on load from the store, and
deleting a run from the command line as from History.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from app.cli.main import main as cli_main
from app.core.results.check import check_job
from app.core.results.errors import ResultsDataError
from app.core.store.store import Store
from app.core.vocab import JobStatus
from tests.helpers import records, written
from tests.helpers.loads import KNEE_STEPS, load
from tests.helpers.written import RUN_ID, STARTED

# --- 3. times: aware and in range, on import and on load; deleting a run -------------------


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("finished", "2026-04-01T12:05:00"),  # no UTC offset: naive minus aware in the window
        ("started", "2026-04-01 12:00:00"),
        ("finished", "9999-12-31T23:59:59-23:59"),  # OverflowError in History and the report
        ("started", "0001-01-01T00:00:00+23:59"),
        ("started", "1969-12-31T23:59:59+00:00"),
        ("finished", "2200-01-01T00:00:00+00:00"),
        ("started", "yesterday"),
        ("finished", ""),
    ],
)
def test_an_import_with_a_time_no_run_can_carry_is_refused(where: str, value: str) -> None:
    data = written.document(records.job(RUN_ID, 0, metrics={"encrypt": [1e-6, 2e-6]}))
    data["run"][where] = value
    message = written.refusal(data)
    assert message.startswith(f"f.json: run.{where}: expected an ISO 8601 time with a UTC offset, from 1970")
    assert json.dumps(value)[1:-1][:20] in message


def test_a_job_time_without_an_offset_is_refused_too() -> None:
    data = written.document(records.job(RUN_ID, 0, started="2026-04-01T12:00:01"))
    assert "jobs[0].started: expected an ISO 8601 time with a UTC offset" in written.refusal(data)


def _store_with_bad_times(path: Path) -> None:
    with Store(path) as store:
        store.add_run(records.run("good", [records.job("good", 0)], started=STARTED, finished=STARTED))
        store.add_run(records.run("naive", [records.job("naive", 0)], started=STARTED, finished=STARTED))
        store.add_run(records.run("far", [records.job("far", 0)], started=STARTED, finished=STARTED))
    db = sqlite3.connect(path)
    with db:  # what an older version's import let in, or a hand edit
        db.execute("UPDATE runs SET finished = '2026-04-01T12:05:00' WHERE id = 'naive'")
        db.execute("UPDATE runs SET started = '9999-12-31T23:59:59-23:59' WHERE id = 'far'")
    db.close()


def test_a_stored_time_no_run_can_carry_reads_as_unknown_and_is_named(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    _store_with_bad_times(path)
    with Store(path) as store:
        summaries = {s.id: s for s in store.list_runs()}
        assert (summaries["naive"].finished, summaries["far"].started) == (None, "")
        assert summaries["good"].finished == STARTED
        far = store.load_run("far")
        assert far.started == "" and far.jobs[0].status == JobStatus.OK  # its jobs stay readable
        assert far.damaged == [
            "run record: started: expected an ISO 8601 time with a UTC offset, from 1970 to before 2200 "
            "(e.g. 2024-05-01T12:00:00+00:00), got '9999-12-31T23:59:59-23:59'"
        ]
        problems = store.damaged_rows()
    assert len(problems) == 2
    assert any(p.startswith("run naive: finished: expected an ISO 8601 time") for p in problems)
    assert any(p.startswith("run far: started: expected an ISO 8601 time") for p in problems)


def test_store_names_the_runs_with_bad_times_and_delete_removes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.sqlite3"
    _store_with_bad_times(path)
    assert cli_main(["store", "--store", str(path)]) == 1
    err = capsys.readouterr().err
    assert "2 damaged row(s): run " in err and "finished: expected an ISO 8601 time with a UTC offset" in err
    # The report of such a run works (it failed with OverflowError).
    assert cli_main(["report", "far", "--store", str(path), "--markdown", str(tmp_path / "r.md")]) == 0
    capsys.readouterr()
    assert cli_main(["delete", "--yes", "naive", "far", "--store", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"deleted run naive “p” (1 jobs) from {path}" in out and "deleted run far" in out
    assert cli_main(["store", "--store", str(path)]) == 0
    assert capsys.readouterr().out.strip() == f"{path}: sound, 1 runs"


def test_delete_resolves_every_id_before_deleting_any(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.sqlite3"
    with Store(path) as store:
        for run_id in ("20260101-a", "20260101-b", "other"):
            store.add_run(records.run(run_id, [records.job(run_id, 0)]))
    assert cli_main(["delete", "--yes", "other", "nope", "--store", str(path)]) == 2
    assert "no run with id 'nope'" in capsys.readouterr().err
    assert cli_main(["delete", "--yes", "other", "20260101-", "--store", str(path)]) == 2
    assert "ambiguous (2 runs match)" in capsys.readouterr().err
    with Store(path) as store:
        assert {s.id for s in store.list_runs()} == {"20260101-a", "20260101-b", "other"}
    assert cli_main(["delete", "--yes", "20260101-b", "--store", str(path)]) == 0
    with Store(path) as store:
        assert {s.id for s in store.list_runs()} == {"20260101-a", "other"}


def test_delete_refuses_a_run_still_being_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.sqlite3"
    with Store(path) as store:
        store.begin_run(records.run("live", status="running"))  # holds the run's lock, as a run does
        try:
            assert cli_main(["delete", "--yes", "live", "--store", str(path)]) == 2
            assert "run live is still running" in capsys.readouterr().err
            assert [s.id for s in store.list_runs()] == ["live"]
        finally:
            store.finish_run("live", "finished", STARTED)
    assert cli_main(["delete", "--yes", "live", "--store", str(path)]) == 0


def test_a_stored_job_row_with_a_negative_time_is_damaged_not_shown(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    with Store(path) as store:
        store.add_run(records.run(RUN_ID, [records.job(RUN_ID, 0, metrics={"encrypt": [1e-6, 2e-6, 3e-6]})]))
    db = sqlite3.connect(path)
    row = json.loads(db.execute("SELECT result FROM jobs").fetchone()[0])
    row["metrics"]["encrypt"]["min"] = -4.98e-5
    with db:
        db.execute("UPDATE jobs SET result = ?", (json.dumps(row),))
    db.close()
    with Store(path) as store:
        run = store.load_run(RUN_ID)
        assert run.jobs[0].status == JobStatus.FAILED
        assert len(run.damaged) == 1
        assert run.damaged[0].startswith(f"job #0 ({RUN_ID}/0): result.metrics.encrypt.min: ")
        assert "-4.98e-05" in run.damaged[0]


def test_check_job_on_a_store_row_refuses_an_impossible_load() -> None:
    job = written.load_job(load(list(KNEE_STEPS))).to_dict()
    job["load"]["knee_per_s"] = 1e15
    with pytest.raises(ResultsDataError) as caught:
        check_job(job, "result")
    assert str(caught.value).startswith("result.load.knee_per_s: expected one of the steps' achieved rates")


def test_the_window_s_readers_of_run_times_take_a_store_with_bad_times(tmp_path: Path) -> None:
    # The presets' durations (the Presets menu, the pre-run question) subtracted a naive time
    # from an aware one, and History's local time overflowed on year 9999 at -23:59: the
    # window did not start. Both read `list_runs`, which now gives such a time as unknown.
    from app.gui.config.presets import last_durations
    from app.gui.history.compare_dialog import local_time

    path = tmp_path / "s.sqlite3"
    _store_with_bad_times(path)
    assert last_durations(path) == {"p": 0.0}  # the good run's; the others have no duration
    with Store(path) as store:
        shown = {s.id: (local_time(s.started), local_time(s.finished)) for s in store.list_runs()}
    assert shown["far"][0] == "-" and shown["naive"][1] == "-"


@pytest.mark.parametrize("command", ["import", "report", "compare"])
def test_the_faces_refuse_a_file_with_a_naive_time_in_one_line(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = written.document(records.job(RUN_ID, 0, metrics={"encrypt": [1e-6, 2e-6]}))
    data["run"]["finished"] = "2026-04-01T12:05:00"
    path = tmp_path / "naive.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    store = ["--store", str(tmp_path / "s.sqlite3")]
    argv = {
        "import": ["import", str(path), *store],
        "report": ["report", str(path), "--markdown", str(tmp_path / "r.md"), *store],
        "compare": ["compare", str(path), str(path), *store],
    }[command]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert f"{path}: run.finished: expected an ISO 8601 time with a UTC offset" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    with Store(tmp_path / "s.sqlite3") as stored:
        assert stored.list_runs() == []  # nothing imported

"""Many writers and readers on one store, and the store going away: the faults a shared
store meets, injected on SQLite and on a real PostgreSQL server (tests/helpers/postgres.py).

What each injects: the server stopped mid-run (`Cluster.halted`) and restarted under a live
writer; a `delete` from another connection between reading a run and reading its jobs; a
writer SIGKILLed, seen from a read-only user; a job row of another run, as a hostile
machine would write it; a password in a URL that libpq cannot parse.
"""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.cli.main import main
from app.core.contracts.events import JobFinished, LogMessage, RunEvent
from app.core.profile.files import parse_profile
from app.core.results.model import load_results_file, to_json
from app.core.run.runner import Runner
from app.core.store import liveness, reading
from app.core.store import store as store_module
from app.core.store.copying import copy_runs
from app.core.store.store import Store, StoreError
from app.core.store.target import store_target
from app.core.store.unstored import waiting
from tests.helpers import records
from tests.helpers.paths import ROOT
from tests.helpers.postgres import ADMIN, Cluster

pytestmark = pytest.mark.xdist_group("postgres")

RUN = "20260101-000000-aaaaaa"
OTHER = "20260102-000000-bbbbbb"


def _run(run_id: str = RUN, status: str = "running") -> Any:
    return records.run(run_id, status=status, environment={"hostname": "testhost"})


def _job(index: int, run_id: str = RUN) -> Any:
    samples = [1e-6, 1.1e-6, 0.9e-6, 1e-6, 1.05e-6, 0.95e-6]
    return records.job(run_id, index, 18, {"encrypt": records.metric(samples, batch=100)})


@pytest.fixture(params=["sqlite", "postgres"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The same test on an SQLite file and on a PostgreSQL database of its own."""
    if request.param == "sqlite":
        return str(tmp_path / "results.sqlite3")
    return str(request.getfixturevalue("pg_url"))


def _stored(where: str, *run_ids: str, jobs: int = 2) -> None:
    with Store(where) as store:
        for run_id in run_ids:
            store.add_run(records.run(run_id, [_job(i, run_id) for i in range(jobs)], environment={"hostname": "h"}))


def _reader_url(pg_url: str) -> str:
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("GRANT USAGE ON SCHEMA public TO reader")
        conn.execute("GRANT SELECT ON runs, jobs, meta TO reader")
    return pg_url.replace(f"{ADMIN}@", "reader@")


# --- a run and its jobs are read as one moment ------------------------------------------


@pytest.fixture
def delete_between_reads(monkeypatch: pytest.MonkeyPatch) -> Callable[[str, str], None]:
    """Arm a `delete` of a run from another connection, made the moment a reader has read
    the run's row and not yet its jobs (`_load_run` checks the row's times in between)."""

    def arm(where: str, run_id: str) -> None:
        original = reading.time_problem
        fired: list[bool] = []

        def then_delete(value: Any) -> str | None:
            if not fired:
                fired.append(True)
                with Store(where) as other:
                    assert other.delete_run(run_id)
            return original(value)

        monkeypatch.setattr(reading, "time_problem", then_delete)

    return arm


def test_a_run_deleted_while_it_is_read_is_read_whole(
    where: str, delete_between_reads: Callable[[str, str], None]
) -> None:
    _stored(where, RUN)
    delete_between_reads(where, RUN)
    with Store(where) as store:
        run = store.load_run(RUN)
    assert (run.status, len(run.jobs), run.damaged) == ("finished", 2, [])  # never "finished with 0 of 2 jobs"
    with Store(where) as store:
        assert store.list_runs() == []  # and the delete did happen


def test_store_copy_never_stores_a_run_emptied_by_a_concurrent_delete(
    where: str, tmp_path: Path, delete_between_reads: Callable[[str, str], None]
) -> None:
    _stored(where, RUN)
    delete_between_reads(where, RUN)
    target = tmp_path / "target.sqlite3"
    with Store(where) as source, Store(target) as into:
        outcome = copy_runs(source, into)
        copied = [into.load_run(run_id) for run_id in outcome.copied]
    assert [(run.id, len(run.jobs)) for run in copied] == [(RUN, 2)]


# --- rows from other machines are checked against their run -----------------------------


def test_a_job_row_of_another_run_is_not_this_runs_own_and_copy_goes_on(where: str, tmp_path: Path) -> None:
    """A hostile (or broken) writer files run B's job under run A: A must not show it as its
    own, and `store copy` must not die on the UNIQUE constraint every time it runs."""
    from sqlalchemy import text

    _stored(where, RUN, OTHER)
    with Store(where) as store, store._write("damaging") as db:
        result = db.execute(text("SELECT result FROM jobs WHERE id = :id"), {"id": f"{OTHER}/1"}).scalar()
        db.execute(
            text("INSERT INTO jobs(id, run_id, idx, status, result) VALUES (:id, :run, 7, 'ok', :result)"),
            {"id": f"{RUN}/7", "run": RUN, "result": result},
        )
    with Store(where) as store:
        run = store.load_run(RUN)
        damaged = store.damaged_rows()
    assert [job.id for job in run.jobs] == [f"{RUN}/0", f"{RUN}/1", f"{RUN}/7"]
    assert run.jobs[2].status == "failed" and f"is not a job of run {RUN}" in (run.jobs[2].error or "")
    assert run.damaged and any(f"{RUN}/7" in line for line in damaged)
    for _ in range(2):  # and again: the copy is finished by running it again
        with Store(where) as source, Store(tmp_path / "target.sqlite3") as target:
            outcome = copy_runs(source, target)
        assert [run_id for run_id, _ in outcome.skipped] == [RUN]
    with Store(tmp_path / "target.sqlite3") as target:
        assert [(r.id, r.jobs) for r in target.list_runs()] == [(OTHER, 2)]


# --- an empty or partial id never deletes ----------------------------------------------


@pytest.mark.parametrize("given", ["", " ", "2026", RUN[:-1]])
def test_delete_takes_only_a_whole_id(where: str, given: str, capsys: pytest.CaptureFixture[str]) -> None:
    _stored(where, RUN)
    assert main(["delete", given, "--store", where]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ("not a run id" in err or "no run with id" in err)
    if given.strip():
        assert f"did you mean {RUN}?" in err
    with Store(where) as store:
        assert [r.id for r in store.list_runs()] == [RUN]
        assert not store.delete_run(given)  # the call the window makes: never a prefix either


# --- the server restarted, or gone, mid-run -------------------------------------------------

_WRITER = """
import sys
from app.core.store.store import Store
from tests.reliability.test_shared_store_faults import RUN, _job, _run

store = Store(sys.argv[1])
store.begin_run(_run())
store.add_job(RUN, _job(0))
print("begun", flush=True)
if sys.stdin.readline() == "finish\\n":
    store.add_job(RUN, _job(1))
    store.finish_run(RUN, "finished", "2026-01-01T00:01:00+00:00")
    store.close()
    print("finished", flush=True)
    sys.stdin.readline()
"""


@pytest.fixture
def writer(request: pytest.FixtureRequest) -> Iterator[Callable[[str], subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []

    def start(url: str) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, "-c", _WRITER, url],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        started.append(process)
        assert process.stdout is not None and process.stdout.readline() == "begun\n", process.stderr
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=30)


def test_a_run_stays_running_across_a_routine_server_restart(
    postgres_cluster: Cluster, pg_url: str, writer: Callable[[str], subprocess.Popen[str]]
) -> None:
    """The server drops every advisory lock when it restarts; the writer lives on. To another
    machine its run must still read "running" and may not be deleted, and its next job is stored."""
    process = writer(pg_url)
    with postgres_cluster.halted():
        pass
    with Store(pg_url) as other:
        assert [(r.status, r.jobs) for r in other.list_runs()] == [("running", 1)]
        with pytest.raises(StoreError, match="still running"):
            other.delete_run(RUN)
    with Store(_reader_url(pg_url)) as viewer:
        assert viewer.read_only and viewer.load_run(RUN).status == "running"
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("finish\n")
    process.stdin.flush()
    assert process.stdout.readline() == "finished\n", process.stderr.read() if process.stderr else ""
    with Store(pg_url) as store:
        assert [(r.status, r.jobs, r.ok_jobs) for r in store.list_runs()] == [("finished", 2, 2)]


def test_a_killed_writer_reads_interrupted_to_a_read_only_user(
    postgres_cluster: Cluster,
    pg_url: str,
    writer: Callable[[str], subprocess.Popen[str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Killed outright: its lock goes with its session, at once. Killed while the server is
    down: its lease keeps it "running" for LEASE_SECONDS at most (it might be reconnecting),
    never for good."""
    import time

    process = writer(pg_url)
    viewer_url = _reader_url(pg_url)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    deadline = time.monotonic() + 20  # the server reads the closed socket: bounded, not a fixed sleep
    while True:
        with Store(viewer_url) as viewer:
            status = viewer.load_run(RUN).status
        if status != "running" or time.monotonic() > deadline:
            break
    assert status == "interrupted"

    with Store(pg_url) as store:
        store.delete_run(RUN)
    process = writer(pg_url)
    with postgres_cluster.halted():
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    with Store(viewer_url) as viewer:
        assert viewer.load_run(RUN).status == "running"  # its lease is fresh: it may be reconnecting
        monkeypatch.setattr(liveness, "LEASE_SECONDS", 0.0)  # the lease has run out
        assert viewer.load_run(RUN).status == "interrupted"
        assert [r.status for r in viewer.list_runs()] == ["interrupted"]


def test_a_writer_whose_connections_end_mid_run_goes_on_storing(pg_url: str) -> None:
    import psycopg

    with Store(pg_url) as store:
        store.begin_run(_run())
        store.add_job(RUN, _job(0))
        with psycopg.connect(pg_url, autocommit=True) as admin:  # every session of the writer ended
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = 'cryptobench' AND pid <> pg_backend_pid()"
            )
        store.add_job(RUN, _job(1))
        store.finish_run(RUN, "finished", "2026-01-01T00:01:00+00:00")
        assert [(r.status, r.jobs) for r in store.list_runs()] == [("finished", 2)]


def test_a_server_gone_for_good_is_one_line_after_waiting_for_it(
    postgres_cluster: Cluster, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_module, "RECONNECT_SECONDS", 0.5)
    with Store(pg_url) as store:
        store.begin_run(_run())
        with postgres_cluster.halted(), pytest.raises(StoreError) as caught:
            store.add_job(RUN, _job(0))
        store.abandon_run(RUN)
    message = str(caught.value)
    assert "\n" not in message and "cannot reach the PostgreSQL server" in message
    assert message.startswith(f"postgresql://cbadmin@/{pg_url.split('/')[3].split('?')[0]}")


_PROFILE = {"name": "p", "jobs": [{"scheme": "sha256", "message_sizes": [64, 128, 256], "samples": 12}]}


def test_a_run_whose_server_stops_mid_run_is_completed_by_one_import(
    postgres_cluster: Cluster,
    pg_url: str,
    isolated_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The server is stopped after the first job is stored: the run finishes in memory and is
    kept in unstored/RUN_ID.json; once the server is back, the one command the run printed
    completes the stored part (its 0-job start, its first job) into the whole run."""
    monkeypatch.setattr(store_module, "RECONNECT_SECONDS", 0.5)
    logs: list[str] = []

    def on_event(event: RunEvent) -> None:
        if isinstance(event, LogMessage):
            logs.append(event.text)
        if isinstance(event, JobFinished) and event.result.index == 0:
            postgres_cluster.halt()  # the first job is stored; the server stops

    try:
        with Store(pg_url) as store:
            runner = Runner(parse_profile(_PROFILE), store=store, on_event=on_event)
            run = runner.run()
    finally:
        postgres_cluster.resume()
    assert [job.status for job in run.jobs] == ["ok"] * 3 and runner.store_error
    kept = runner.kept_file
    assert kept is not None and kept == isolated_home / "unstored" / f"{run.id}.json" and waiting() == [kept]
    command = shlex.join(["cryptobench", "import", str(kept), "--store", store_target(pg_url).shown])
    assert any(command in line for line in logs), logs
    with Store(pg_url) as store:  # its start and first job; "running" while the lease it left lasts
        assert [(r.id, r.jobs) for r in store.list_runs()] == [(run.id, 1)]

    assert main(["import", str(kept), "--store", pg_url]) == 0
    assert f"completed {run.id}" in " ".join(capsys.readouterr().out.split())
    with Store(pg_url) as store:
        assert to_json(store.load_run(run.id)) == to_json(load_results_file(kept))
    assert main(["import", str(kept), "--store", pg_url]) == 0  # again: found, not added twice
    assert "already stored" in capsys.readouterr().out


def test_an_sqlite_store_failing_mid_run_is_completed_by_one_import(
    tmp_path: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "r.sqlite3"
    with Store(path) as store:
        real_add = store.add_job

        def fails_after_the_first(run_id: str, job: Any) -> None:
            if job.index:
                raise StoreError(f"{path}: cannot write the results store: database or disk is full")
            real_add(run_id, job)

        store.add_job = fails_after_the_first  # type: ignore[method-assign]
        runner = Runner(parse_profile(_PROFILE), store=store)
        run = runner.run()
    assert runner.kept_file is not None
    with Store(path) as store:  # its lock released when the store failed: no process writes it
        assert [(r.status, r.jobs) for r in store.list_runs()] == [("interrupted", 1)]
    assert main(["import", str(runner.kept_file), "--store", str(path)]) == 0
    assert f"completed {run.id}" in " ".join(capsys.readouterr().out.split())
    with Store(path) as store:
        assert to_json(store.load_run(run.id)) == to_json(run)


def test_a_part_still_being_written_is_not_replaced(
    where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store(where) as store:
        store.begin_run(_run())
        store.add_job(RUN, _job(0))
        whole = records.run(RUN, [_job(0), _job(1)], environment={"hostname": "testhost"})
        file = tmp_path / "whole.json"
        file.write_text(to_json(whole), encoding="utf-8")
        assert main(["import", str(file), "--store", where]) == 2
        assert "still being written" in capsys.readouterr().err
        store.finish_run(RUN, "failed", "2026-01-01T00:01:00+00:00")
    assert main(["import", str(file), "--store", where]) == 0  # no one writes it now: completed
    with Store(where) as store:
        assert [(r.status, r.jobs) for r in store.list_runs()] == [("finished", 2)]


def test_another_run_under_the_same_id_is_still_refused(where: str, tmp_path: Path) -> None:
    _stored(where, RUN, jobs=1)
    other = records.run(RUN, [_job(0), _job(1)], environment={"hostname": "elsewhere"})
    file = tmp_path / "other.json"
    file.write_text(to_json(other), encoding="utf-8")
    assert main(["import", str(file), "--store", where]) == 2
    with Store(where) as store:
        assert [(r.status, r.jobs) for r in store.list_runs()] == [("finished", 1)]


# --- passwords never shown, even by the driver --------------------------------------------


@pytest.mark.parametrize(
    ("url", "secret"),
    [
        ("postgresql://bench:se%cret@127.0.0.1:1/db", "se%cret"),  # a "%" that is not percent-encoding
        ("postgresql://bench:p@ss@127.0.0.1:1/db", "p@ss"),  # a bare "@": libpq splits at the first
        ("postgresql://bench@127.0.0.1:1/db?password=s%zzz", "s%zzz"),
        ("postgresql://bench:s3cr3t@[::1/db", "s3cr3t"),  # an IPv6 typo
        ("postgresql://bench:s3cr3t@[::1]x:5/db", "s3cr3t"),
        ("postgresql://bench:pa ss@127.0.0.1:1/db", "pa ss"),
    ],
)
@pytest.mark.parametrize("command", [["history"], ["store"], ["delete", RUN], ["import", "x.json"]])
def test_a_password_never_shows_in_what_libpq_cannot_parse(
    url: str, secret: str, command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*command, "--store", url]) == 2
    captured = capsys.readouterr()
    shown = captured.out + captured.err
    assert "Traceback" not in shown and shown.count("\n") == 1, shown
    assert secret not in shown and "ss@127" not in shown, shown
    assert "postgresql://bench" in shown
    json.dumps(shown)  # one plain line


def test_history_of_many_runs_is_one_plain_write_with_control_characters_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Piped, `history` prints a line a run in one write (a rich print a line took two seconds
    for 10,000 runs); what a row holds is still shown with its control characters escaped."""
    path = tmp_path / "s.sqlite3"
    with Store(path) as store:
        for k in range(300):
            store.add_run(records.run(f"20260101-000000-{k:06x}", name=f"run {k} \x1b[31mred[/]"))
    assert main(["history", "--store", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 301 and out[0].startswith(f"Runs in {path}: id | profile")
    assert "\x1b" not in "".join(out) and all("red[/]" in line for line in out[1:])


def test_store_copy_completes_a_run_the_target_holds_in_part(where: str, tmp_path: Path) -> None:
    """A run began in the shared store, its store failed, and it finished in a local store:
    copying the local store into the shared one completes it, as importing its file does."""
    whole = records.run(RUN, [_job(0), _job(1), _job(2)], environment={"hostname": "testhost"})
    with Store(where) as target:
        target.begin_run(_run())
        target.add_job(RUN, _job(0))
        target.abandon_run(RUN)  # its store failed: the process let go of it
    local = tmp_path / "local.sqlite3"
    with Store(local) as source:
        source.add_run(whole)
    said: list[tuple[str, str]] = []
    with Store(local) as source, Store(where) as target:
        outcome = copy_runs(source, target, lambda run_id, what: said.append((run_id, what)))
        assert to_json(target.load_run(RUN)) == to_json(whole)
    assert outcome.copied == [RUN] and said == [(RUN, "completed (the target held 1 of its 3 jobs)")]

"""The command line on a PostgreSQL store (a real server: tests/helpers/postgres.py): `--store URL`,
`CRYPTOBENCH_STORE`, `store copy`, passwords never shown, and the errors a user can act on,
one line each."""

from __future__ import annotations

import json
import urllib.parse
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.results.model import to_json
from app.core.store.store import Store
from tests.helpers import records
from tests.helpers.postgres import WRITER_PASSWORD, Cluster

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed (pip install -e '.[postgres]')")

pytestmark = pytest.mark.xdist_group("postgres")

RUNS = [f"2026010{i}-000000-aaaaa{i}" for i in range(1, 4)]


def _sqlite_history(path: Path) -> Path:
    with Store(path) as store:
        for day, run_id in enumerate(RUNS, start=1):
            run = records.run(run_id, started=f"2026-01-0{day}T00:00:00+00:00", environment={"hostname": f"m{day}"})
            run.finished = f"2026-01-0{day}T00:01:00+00:00"
            run.jobs = [
                records.job(run_id, i, 64, {"encrypt": records.metric([1e-6, 2e-6], batch=1)}) for i in range(2)
            ]
            store.add_run(run)
    return path


def _database(cluster: Cluster, url: str) -> str:
    return urllib.parse.urlsplit(url).path.lstrip("/")


def _grant(url: str, sql: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql)


def test_store_copy_moves_a_history_byte_identical_and_again_copies_nothing(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    local = _sqlite_history(tmp_path / "local.sqlite3")
    assert main(["store", "copy", "--store", str(local), "--to", pg_url]) == 0
    out = capsys.readouterr().out
    assert f"copied 3 run(s) from {local} to " in out
    with Store(local) as source, Store(pg_url) as target:
        for run_id in RUNS:
            assert to_json(target.load_run(run_id)) == to_json(source.load_run(run_id))
    assert main(["store", "copy", "--store", str(local), "--to", pg_url]) == 0
    out = capsys.readouterr().out
    assert "copied 0 run(s)" in out and "3 already there" in out
    assert all(f"{run_id}: already there (same run id)" in out for run_id in RUNS)


def test_history_and_show_read_the_shared_store_from_the_environment(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    local = _sqlite_history(tmp_path / "local.sqlite3")
    assert main(["store", "copy", "--store", str(local), "--to", pg_url]) == 0
    monkeypatch.setenv("CRYPTOBENCH_STORE", pg_url)
    capsys.readouterr()
    assert main(["history"]) == 0
    out = capsys.readouterr().out
    assert all(run_id in out for run_id in RUNS) and "m1" in out and "m3" in out  # the machine column
    assert main(["store"]) == 0
    assert "sound, 3 runs (sslmode=prefer, not encrypted)" in capsys.readouterr().out
    assert not (tmp_path / "cryptobench-home" / "results.sqlite3").exists()  # the local store untouched


def test_a_password_in_the_url_connects_but_is_never_shown(
    postgres_cluster: Cluster, pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _grant(pg_url, "GRANT CREATE, USAGE ON SCHEMA public TO writer")
    db = _database(postgres_cluster, pg_url)
    url = postgres_cluster.url(db, "writer", tcp=True).replace("writer@", f"writer:{WRITER_PASSWORD}@")
    local = _sqlite_history(tmp_path / "local.sqlite3")
    assert main(["store", "copy", "--store", str(local), "--to", url]) == 0
    assert main(["history", "--store", url]) == 0
    assert main(["show", RUNS[0][:10], "--store", url + "&password=" + WRITER_PASSWORD]) == 0
    assert main(["show", "nosuchrun", "--store", url]) == 2
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert RUNS[0] in text and f"writer@127.0.0.1:{postgres_cluster.port}/{db}" in text
    assert WRITER_PASSWORD not in text


@pytest.mark.parametrize("case", ["unreachable", "wrong password", "no password", "no database"])
def test_what_a_user_can_act_on_is_one_line(
    case: str, postgres_cluster: Cluster, pg_url: str, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str]
) -> None:  # fmt: skip
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.setenv("PGPASSFILE", "/nonexistent")
    db = _database(postgres_cluster, pg_url)
    url, expected = {
        "unreachable": ("postgresql://x@127.0.0.1:1/db?sslmode=disable", "cannot reach the PostgreSQL server"),
        "wrong password": (
            postgres_cluster.url(db, "writer", tcp=True).replace("writer@", "writer:Not-The-Pw-3@"),
            "the PostgreSQL server refused the login",
        ),
        "no password": (postgres_cluster.url(db, "writer", tcp=True), "the PostgreSQL server refused the login"),
        "no database": (postgres_cluster.url("nosuchdb"), 'database "nosuchdb" does not exist; create it first'),
    }[case]
    assert main(["history", "--store", url]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err, err
    assert "Not-The-Pw-3" not in err


def test_a_read_only_user_browses_and_is_refused_writes(
    postgres_cluster: Cluster, pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    local = _sqlite_history(tmp_path / "local.sqlite3")
    assert main(["store", "copy", "--store", str(local), "--to", pg_url]) == 0
    _grant(pg_url, "GRANT USAGE ON SCHEMA public TO reader; GRANT SELECT ON runs, jobs, meta TO reader")
    reader = postgres_cluster.url(_database(postgres_cluster, pg_url), "reader")
    with Store(reader) as store:
        assert store.read_only
    capsys.readouterr()
    for argv in (["history"], ["show", RUNS[0]], ["compare", RUNS[0], RUNS[1]], ["store"]):
        assert main([*argv, "--store", reader]) == 0, argv
    out_file = tmp_path / "r.md"
    assert main(["report", RUNS[0], "--markdown", str(out_file), "--store", reader]) == 0
    assert out_file.exists()
    exported = tmp_path / "x.json"
    exported.write_text(json.dumps(records.run("20260201-000000-bbbbbb").to_dict()))
    capsys.readouterr()
    for argv, action in (
        (["delete", RUNS[0]], "deleting a run"),
        (["import", str(exported)], "importing a run"),
        (["run", "quick", "--reduced"], "starting a run"),
    ):
        assert main([*argv, "--store", reader]) == 2, argv
        err = capsys.readouterr().err
        assert f"this database user may only read the results store, so {action} is not possible" in err, err
    with Store(pg_url) as store:
        assert [run.id for run in store.list_runs()] == RUNS[::-1]  # nothing written


def test_a_server_out_of_space_says_so_and_stores_nothing_of_the_run(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The server's own disk_full error (SQLSTATE 53100), raised by a trigger as a full disk would."""
    with Store(pg_url):
        pass
    _grant(
        pg_url,
        "CREATE FUNCTION disk_is_full() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$; "
        "CREATE TRIGGER disk_is_full BEFORE INSERT ON jobs FOR EACH ROW EXECUTE FUNCTION disk_is_full()",
    )
    exported = tmp_path / "x.json"
    run = records.run("20260201-000000-bbbbbb")
    run.jobs = [records.job(run.id, 0, 64, {"encrypt": records.metric([1e-6, 2e-6], batch=1)})]
    exported.write_text(to_json(run))
    assert main(["import", str(exported), "--store", pg_url]) != 0
    err = capsys.readouterr().err
    assert "the PostgreSQL server is out of space (could not extend file: No space left on device) while " in err
    with Store(pg_url) as store:
        assert store.list_runs() == []  # the run's row went with its jobs' transaction


def test_a_run_whose_server_is_unreachable_is_measured_exported_and_kept(
    tmp_path: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No server needed: nothing listens on port 1."""
    from app.core.results.model import load_results_file

    profile = tmp_path / "p.json"
    profile.write_text(json.dumps({"name": "p", "jobs": [{"scheme": "sha256", "message_sizes": [64], "samples": 20}]}))
    exported = tmp_path / "out.json"
    url = "postgresql://bench@127.0.0.1:1/db?sslmode=disable"
    assert main(["run", str(profile), "--store", url, "--quiet", "--json", str(exported)]) == 1
    captured = capsys.readouterr()
    err, out = captured.err, " ".join(captured.out.split())
    assert err.startswith(f"cryptobench: warning: {url}: cannot reach the PostgreSQL server (Connection refused)")
    (kept,) = (isolated_home / "unstored").iterdir()
    run = load_results_file(kept)
    assert [job.status for job in run.jobs] == ["ok"] and load_results_file(exported).id == run.id
    assert f"NOT all stored: {url}: cannot reach" in out and f"kept in {kept}" in out


def test_sslmode_is_honoured_and_shown(
    postgres_cluster: Cluster, pg_url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The session's server offers TLS over TCP (a self-signed certificate): `require` encrypts and
    says so; `verify-full` refuses a server it cannot verify, in one line."""
    _grant(pg_url, "GRANT CREATE, USAGE ON SCHEMA public TO writer")
    monkeypatch.setenv("PGPASSWORD", WRITER_PASSWORD)  # as CI would give it, never in the URL
    monkeypatch.setenv("PGSSLROOTCERT", str(postgres_cluster.folder / "nosuchca.crt"))
    tcp = postgres_cluster.url(_database(postgres_cluster, pg_url), "writer", tcp=True)
    assert main(["store", "--store", tcp.replace("sslmode=disable", "sslmode=require")]) == 0
    assert "sound, 0 runs (sslmode=require, encrypted (TLS))" in capsys.readouterr().out
    assert main(["store", "--store", tcp]) == 0
    assert "(sslmode=disable, not encrypted)" in capsys.readouterr().out
    assert main(["history", "--store", tcp.replace("sslmode=disable", "sslmode=verify-full")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and WRITER_PASSWORD not in err
    assert "the secure connection failed (root certificate file" in err and "check sslmode and the server's CA" in err
    empty = postgres_cluster.new_database(f"{_database(postgres_cluster, pg_url)}_empty")  # no CREATE for writer
    assert (
        main(["history", "--store", postgres_cluster.url(_database(postgres_cluster, empty), "writer", tcp=True)]) == 2
    )
    assert "no results store in this database yet, and this user may not create one" in capsys.readouterr().err

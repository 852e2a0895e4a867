"""A store this user cannot write is read, and says it cannot be written; a store that
fills up says "full", not a failed ROLLBACK.

Before: `history` of a read-only store ended in "attempt to write a readonly database"
(opening it switched the journal mode and created tables), and an import into a full
store reported "cannot rollback - no transaction is active".

Tests run as root in CI, where file permissions do not stop a write. So the detection
(`store_access.writable`) is driven by a mocked `os.access`, while what follows it is
real: SQLite's mode=ro connection, which refuses every write whoever runs it. Where the
tests do not run as root, one test makes the folder truly read-only.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from app.cli.main import main
from app.core.results.model import to_json
from app.core.store import access as store_access
from app.core.store.importing import import_results
from app.core.store.store import Store, StoreError, StoreReadOnlyError
from tests.helpers import records
from tests.helpers.stores import RUN_ID, stored_run


def _deny_writes(monkeypatch: pytest.MonkeyPatch, under: Path) -> None:
    """os.access answers "not writable" for everything under `under`, as it would for a
    user without write permission there."""
    real = os.access

    def access(path: Any, mode: int, *args: Any, **kwargs: Any) -> bool:
        if mode & os.W_OK and str(os.path.abspath(path)).startswith(str(under)):
            return False
        return real(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)


@pytest.fixture
def read_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "ro"
    folder.mkdir()
    path = stored_run(folder / "results.sqlite3")
    _deny_writes(monkeypatch, folder)
    return path


def _files(folder: Path) -> dict[str, bytes]:
    """The store's own file. (Reading a WAL store, SQLite may add its -shm index beside it
    where the folder lets it; as root in a simulated read-only folder it does.)"""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.suffix == ".sqlite3"}


def _other_run_file(tmp_path: Path) -> Path:
    path = tmp_path / "other.json"
    path.write_text(to_json(records.run("20260202-000000-bbbbbb", [records.job("20260202-000000-bbbbbb")])))
    return path


def test_writable_follows_the_file_and_its_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = stored_run(tmp_path / "s.sqlite3")
    assert store_access.writable(path)
    assert store_access.writable(tmp_path / "new" / "deeper" / "s.sqlite3")  # folders made on first use
    _deny_writes(monkeypatch, path)  # the file alone
    assert not store_access.writable(path)
    monkeypatch.undo()
    _deny_writes(monkeypatch, tmp_path)  # the folder (SQLite's -wal, -shm and -journal go there)
    assert not store_access.writable(tmp_path / "other.sqlite3")


@pytest.mark.parametrize(
    "argv",
    [
        ["history"],
        ["history", "--json"],
        ["show", RUN_ID],
        ["show", RUN_ID, "--json"],
        ["compare", RUN_ID, RUN_ID],
        ["store"],
    ],
)
def test_every_reading_command_reads_a_read_only_store(
    read_only: Path, argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    before = _files(read_only.parent)
    assert main([*argv, "--store", str(read_only)]) == 0
    out, err = capsys.readouterr()
    assert RUN_ID in out or "sound, 1 runs" in out
    assert err == ""
    assert _files(read_only.parent) == before  # not a byte of the store written


def test_report_reads_a_read_only_store(read_only: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.md"
    assert main(["report", RUN_ID, "--markdown", str(out), "--store", str(read_only)]) == 0
    assert RUN_ID in out.read_text()


@pytest.mark.parametrize(
    ("argv", "action"),
    [
        (["import", "OTHER"], "importing a run"),
        (["run", "quick", "--reduced", "--quiet"], "starting a run"),
    ],
)
def test_a_write_says_the_store_is_read_only(
    read_only: Path, tmp_path: Path, argv: list[str], action: str, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _files(read_only.parent)
    args = [a.replace("OTHER", str(_other_run_file(tmp_path))) for a in argv]
    assert main([*args, "--store", str(read_only)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"cryptobench: error: {read_only}: the results store is read-only (this user cannot write the file "
        f"or its folder), so {action} is not possible; reading it still works (history, show, compare, report)\n"
    )
    assert _files(read_only.parent) == before


def test_deleting_from_a_read_only_store_is_refused(read_only: Path) -> None:
    with Store(read_only) as store:
        assert store.read_only
        with pytest.raises(StoreReadOnlyError, match="so deleting a run is not possible"):
            store.delete_run(RUN_ID)
        assert [r.id for r in store.list_runs()] == [RUN_ID]


def test_sqlite_itself_refuses_and_the_message_says_read_only(tmp_path: Path) -> None:
    """A write the detection missed (root on a read-only mount): SQLite's SQLITE_READONLY is
    worded as a read-only store too. Real: mode=ro refuses a write whoever runs it."""
    path = stored_run(tmp_path / "s.sqlite3")
    with Store(path, read_only=True) as store:
        store.read_only = False  # as if the detection had said "writable"
        with pytest.raises(StoreReadOnlyError, match=r"read-only .* so deleting a run is not possible"):
            store.delete_run(RUN_ID)
        assert [r.id for r in store.list_runs()] == [RUN_ID]


def test_a_missing_store_in_a_read_only_folder_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _deny_writes(monkeypatch, tmp_path)
    assert main(["history", "--store", str(tmp_path / "none.sqlite3")]) == 2
    assert capsys.readouterr().err == (
        f"cryptobench: error: {tmp_path / 'none.sqlite3'}: no results store here, and this user cannot "
        "write its folder to start one\n"
    )


def test_a_wal_store_whose_shm_cannot_be_made_is_read_as_immutable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SQLite reads a WAL store with mode=ro only if it can use a -shm file beside it; in a
    read-only folder without one (a store copied alone onto read-only media) that open
    fails ("unable to open database file"), and the store is read as immutable instead.
    As root the folder is always writable, so the failing open is simulated; the
    immutable connection that follows is real."""
    path = stored_run(tmp_path / "s.sqlite3")
    real_connect = sqlite3.connect
    tried: list[str] = []

    def connect(database: str, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        tried.append(str(database))
        if "immutable=1" not in str(database):
            raise sqlite3.OperationalError("unable to open database file")
        return real_connect(database, *args, **kwargs)

    monkeypatch.setattr(store_access.sqlite3, "connect", connect)
    with Store(path, read_only=True) as store:
        assert [r.id for r in store.list_runs()] == [RUN_ID]
        assert store.load_run(RUN_ID).jobs[0].status == "ok"
    assert [t.endswith("?mode=ro") for t in tried] == [True, False]
    assert tried[1].endswith("?mode=ro&immutable=1")


def test_window_history_browses_a_read_only_store(qtbot: Any, read_only: Path, tmp_path: Path) -> None:
    from app.gui.history.panel import HistoryPanel

    panel = HistoryPanel(read_only)
    qtbot.addWidget(panel)
    assert panel.refresh() and panel.run_ids() == [RUN_ID]
    assert panel.load_run(RUN_ID) is not None
    panel.select_runs([RUN_ID])
    panel.confirm = lambda title, text: True
    assert panel.delete_selected() == 0
    assert "read-only" in panel.message_label.text() and "deleting a run is not possible" in panel.message_label.text()
    assert panel.import_results_file(_other_run_file(tmp_path)) is None
    assert "so importing a run is not possible" in panel.message_label.text()
    assert panel.run_ids() == [RUN_ID]


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes into read-only folders")
def test_a_really_read_only_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    path = stored_run(folder / "results.sqlite3")
    folder.chmod(0o555)
    try:
        assert main(["history", "--store", str(path)]) == 0
        assert RUN_ID in capsys.readouterr().out
        assert main(["import", str(_other_run_file(tmp_path)), "--store", str(path)]) == 2
        assert "so importing a run is not possible" in capsys.readouterr().err
    finally:
        folder.chmod(0o755)


# --- a full disk ------------------------------------------------------------------------------


def test_an_import_into_a_full_store_says_full_and_adds_nothing(tmp_path: Path) -> None:
    """SQLite rolls a transaction back by itself on SQLITE_FULL; the ROLLBACK that followed
    failed and its "no transaction is active" replaced the real cause."""
    path = stored_run(tmp_path / "s.sqlite3")
    big = records.run(
        "20260303-000000-cccccc",
        [records.job("20260303-000000-cccccc", k, metrics={"encrypt": [1e-6 * (1 + k)] * 2000}) for k in range(20)],
    )
    source = tmp_path / "big.json"
    source.write_text(to_json(big))
    with Store(path) as store:
        pages = store._sqlite.execute("PRAGMA page_count").fetchone()[0]
        store._sqlite.execute(f"PRAGMA max_page_count = {pages + 2}")  # the disk fills after two pages
        with pytest.raises(StoreError) as refused:
            import_results(store, source)
        message = str(refused.value)
        assert message.startswith(f"{path}: cannot write the results store: ") and "full" in message
        assert "rollback" not in message
        assert [r.id for r in store.list_runs()] == [RUN_ID]  # all or nothing
        assert store.integrity_problems() == []


def test_a_commit_that_fails_leaves_no_transaction_open(tmp_path: Path) -> None:
    """After any failed write the connection is usable: the next read and write work."""
    path = stored_run(tmp_path / "s.sqlite3")
    with Store(path) as store:
        pages = store._sqlite.execute("PRAGMA page_count").fetchone()[0]
        store._sqlite.execute(f"PRAGMA max_page_count = {pages}")
        run = records.run(
            "20260404-000000-dddddd", [records.job("20260404-000000-dddddd", metrics={"e": [1e-6] * 5000})]
        )
        with pytest.raises(StoreError, match="full"):
            store.add_run(run)
        assert not store._sqlite.in_transaction
        store._sqlite.execute("PRAGMA max_page_count = 1000000")
        store.add_run(run)
        assert {r.id for r in store.list_runs()} == {RUN_ID, run.id}


def test_sqlite_read_only_codes_are_recognised() -> None:
    error = sqlite3.OperationalError("attempt to write a readonly database")
    error.sqlite_errorcode = sqlite3.SQLITE_READONLY  # type: ignore[attr-defined]
    assert store_access.is_read_only_error(error)
    full = sqlite3.OperationalError("database or disk is full")
    full.sqlite_errorcode = sqlite3.SQLITE_FULL  # type: ignore[attr-defined]
    assert not store_access.is_read_only_error(full)


def test_a_run_left_running_reads_interrupted_in_a_read_only_store(tmp_path: Path) -> None:
    """Opening a writable store marks a dead process's run interrupted; a read-only one
    cannot write that, so it says so as it reads."""
    path = tmp_path / "s.sqlite3"
    with Store(path) as store:
        store.begin_run(records.run("20260505-000000-eeeeee", status="running"))
    from app.core.store import runlock

    runlock.release(path, "20260505-000000-eeeeee")  # its process is gone
    with Store(path, read_only=True) as store:
        assert [r.status for r in store.list_runs()] == ["interrupted"]
        assert store.load_run("20260505-000000-eeeeee").status == "interrupted"
    with sqlite3.connect(path) as db:  # nothing was written
        assert db.execute("SELECT status FROM runs").fetchall() == [("running",)]


_SQLITE_WRITER = """
import sys
from app.core.store.store import Store
from tests.helpers import records

store = Store(sys.argv[1])
store.begin_run(records.run("20260606-000000-ffffff", status="running"))
print("begun", flush=True)
sys.stdin.readline()  # never answered: the test kills this process here
"""


def _killed_writer(path: Path) -> None:
    """A writer that began a run and was SIGKILLed: its lock file stays, no longer locked."""
    import signal
    import subprocess
    import sys

    from tests.helpers.paths import ROOT

    writer = subprocess.Popen(
        [sys.executable, "-c", _SQLITE_WRITER, str(path)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "begun\n"
        with Store(path, read_only=True) as viewer:  # alive: it holds its lock
            assert [r.status for r in viewer.list_runs()] == ["running"]
    finally:
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=30)


@pytest.mark.parametrize("refused", ["writing", "reading too"])
def test_a_killed_writer_never_reads_running_for_good_in_a_read_only_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused: str
) -> None:
    """The viewer may not open the run's lock file for writing (another user's store), or not at
    all: it used to take such a run for alive, so a killed writer's run read "running" forever.
    It tests the lock through a read-only descriptor, else reads how long ago the writer last
    touched the file (store/liveness.py: LEASE_SECONDS)."""
    import time

    from app.core.store import liveness, runlock

    path = tmp_path / "s.sqlite3"
    _killed_writer(path)
    lock = runlock.lock_path(path, "20260606-000000-ffffff")
    assert lock.exists()
    real_open = os.open

    def guarded(name: Any, flags: int, *args: Any) -> int:
        if str(name) == str(lock) and (refused == "reading too" or flags & (os.O_RDWR | os.O_WRONLY)):
            raise PermissionError(13, "Permission denied", str(name))
        return real_open(name, flags, *args)

    monkeypatch.setattr(runlock.os, "open", guarded)
    if refused == "reading too":  # only the file's age can tell: fresh, it may still be written
        with Store(path, read_only=True) as viewer:
            assert [r.status for r in viewer.list_runs()] == ["running"]
        stale = time.time() - liveness.LEASE_SECONDS - 1  # not touched for longer than the lease
        os.utime(lock, (stale, stale))
    with Store(path, read_only=True) as viewer:
        assert [r.status for r in viewer.list_runs()] == ["interrupted"]
        assert viewer.load_run("20260606-000000-ffffff").status == "interrupted"

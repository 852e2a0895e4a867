"""The results store: SQLite in the user data directory, one row per finished job.

Each job is committed the moment it finishes, in WAL mode, so a crash or a kill
loses only the job that was running. A run left "running" by a process that no
longer exists (it no longer holds the run's lock, `app.core.run.runlock`) is marked
"interrupted" the next time the store is opened.

Location: `--store PATH`, else `$CRYPTOBENCH_HOME/results.sqlite3`, else the
platform's user data directory (platformdirs).
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from app.core.errors import CryptoBenchError
from app.core.fileio import file_kind
from app.core.results.check import check_environment, check_profile
from app.core.results.model import JobResult, RunResult
from app.core.results.plausible import time_problem
from app.core.results.recorded import RecordedProfile
from app.core.results.store_access import connect_read_only, is_read_only_error, read_only_message, writable
from app.core.results.store_rows import (
    _DamagedRow,
    _decode_block,
    _packed_job,
    _placeholder_job,
    _read_job,
    _row_name,
    _run_time,
)
from app.core.run import runlock
from app.core.vocab import JobStatus, RunStatus

SCHEMA_VERSION = 1
STORE_FILENAME = "results.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    started TEXT NOT NULL,
    finished TEXT,
    status TEXT NOT NULL,
    pid INTEGER,
    host TEXT,
    environment TEXT NOT NULL,
    profile TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    status TEXT NOT NULL,
    result TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS jobs_by_run ON jobs(run_id, idx);
"""


class StoreError(CryptoBenchError):
    """The store cannot be opened, read or written; the message names the file.

    Every `sqlite3.Error` a store method meets comes out as one of these (reading a
    damaged page, a locked file, a full disk), so a face catches StoreError alone."""


class StoreReadOnlyError(StoreError):
    """A write to a store this user can only read (`store_access`); the message says what
    was refused and that reading still works."""


class BrokenStoreError(StoreError):
    """The file is there but is not a store this version can use (corrupted, another
    program's SQLite file, or a newer schema). `move_aside` keeps it and frees the
    name, so the app can start a new store instead of failing on every start."""


class RunNotFound(StoreError):
    """No stored run has this id (or id prefix); the message names the id and the store."""


class AmbiguousRunId(RunNotFound):
    """The id prefix names several runs: a face treats it as "not found", the message
    says how many match."""


def move_aside(path: str | Path) -> Path:
    """Rename a broken store (and SQLite's -wal/-shm/-journal files beside it) to
    `NAME.broken-YYYYmmdd-HHMMSS`; return the new name of the main file.

    Nothing is deleted: the file may hold runs worth recovering with sqlite3's
    `.recover`, or be a newer CryptoBench's store.
    """
    import time

    path = Path(path)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.broken-{stamp}")
    counter = 1
    while target.exists():
        counter += 1
        target = path.with_name(f"{path.name}.broken-{stamp}-{counter}")
    try:
        for suffix in ("-wal", "-shm", "-journal"):
            side = path.with_name(path.name + suffix)
            if side.exists():
                os.replace(side, target.with_name(target.name + suffix))
        os.replace(path, target)
    except OSError as exc:
        raise StoreError(f"{path}: cannot move it aside: {exc.strerror or exc}") from None
    return target


@dataclass(frozen=True)
class RunSummary:
    id: str
    name: str
    started: str
    finished: str | None
    status: str
    host: str | None
    jobs: int
    ok_jobs: int


def _run_marks(name: Any, reduced: Any, overrides: Any) -> tuple[str, ...]:
    """A stored run's marks from its name and the two profile fields SQLite extracted
    (`overrides` as JSON text); anything malformed reads as no mark of that kind."""
    try:
        decoded = json.loads(overrides) if isinstance(overrides, str) else None
    except ValueError:
        decoded = None
    profile = {"name": name if isinstance(name, str) else "", "reduced": reduced == 1, "overrides": decoded}
    return RecordedProfile.from_dict(profile).marks


@dataclass(frozen=True)
class StoredJob:
    """One stored job beside what its run says about where it ran (`Store.jobs_like`)."""

    run_id: str
    run_started: str
    environment: dict[str, Any]
    job: JobResult
    #: What sets the run apart from a full run of its profile ("reduced", "--samples 3"):
    #: a trend marks such points (`RecordedProfile.marks`).
    run_marks: tuple[str, ...] = ()


def data_dir() -> Path:
    """`$CRYPTOBENCH_HOME`, else the platform's user data directory."""
    home = os.environ.get("CRYPTOBENCH_HOME")
    if home:
        return Path(home)
    return Path(platformdirs.user_data_dir("cryptobench", appauthor=False))


def default_store_path() -> Path:
    return data_dir() / STORE_FILENAME


def _looked_at(path: Path) -> None:
    """Raise the OSError that keeps `path` from being looked at (a name too long, a loop
    of links, a file where a folder should be), or a StoreError for something there that
    is not a file (a FIFO, a device, a folder); nothing for a file not there yet. SQLite
    said only "unable to open database file" or "disk I/O error"."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        raise StoreError(f"{path}: not a regular file ({file_kind(mode)}), so not a results store")


class Store:
    """A results store. Use as a context manager or call close()."""

    def __init__(self, path: str | Path | None = None, *, read_only: bool | None = None) -> None:
        self.path = Path(path) if path is not None else default_store_path()
        #: Opened with SQLite's mode=ro: by default when this user cannot write the file or
        #: its folder (`store_access`); every write then raises StoreReadOnlyError.
        self.read_only = not writable(self.path) if read_only is None else read_only
        if self.read_only:
            self._db = self._open_read_only()
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            _looked_at(self.path)  # SQLite says only "unable to open database file"
            self._db = sqlite3.connect(self.path, timeout=10, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA foreign_keys = ON")
            # Check before anything writes: switching to WAL rewrites the file header,
            # which must never happen to another program's database.
            self._check_foreign()
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._db.executescript(_SCHEMA)
            self._db.execute(
                "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
            self._mark_interrupted()
        except BaseException as exc:
            # Close at once: the traceback keeps this half-built object (and its file handle)
            # alive until the next GC cycle, and an open handle stops the user from moving a
            # bad file away on Windows.
            db = self.__dict__.get("_db")
            if db is not None:
                db.close()
            if isinstance(exc, sqlite3.OperationalError):  # locked, unreadable, read-only: not broken
                raise StoreError(f"{self.path}: cannot open the results store: {exc}") from None
            if isinstance(exc, sqlite3.DatabaseError):
                raise BrokenStoreError(f"{self.path}: not a usable CryptoBench results store ({exc})") from None
            if isinstance(exc, OSError):
                raise StoreError(f"{self.path}: cannot open the results store: {exc.strerror or exc}") from None
            raise

    def _open_read_only(self) -> sqlite3.Connection:
        try:
            _looked_at(self.path)
            if not self.path.is_file():
                raise StoreError(
                    f"{self.path}: no results store here, and this user cannot write its folder to start one"
                )
            self._db = connect_read_only(self.path)
            self._check_foreign()
            if self._db.execute("SELECT 1 FROM sqlite_master WHERE name = 'runs'").fetchone() is None:
                raise StoreError(f"{self.path}: not a results store yet (no tables), and read-only")
            return self._db
        except BaseException as exc:
            db = self.__dict__.get("_db")
            if db is not None:
                db.close()
            if isinstance(exc, StoreError):
                raise
            if isinstance(exc, sqlite3.OperationalError):
                raise StoreError(f"{self.path}: cannot open the results store (read-only): {exc}") from None
            if isinstance(exc, sqlite3.DatabaseError):
                raise BrokenStoreError(f"{self.path}: not a usable CryptoBench results store ({exc})") from None
            if isinstance(exc, OSError):
                raise StoreError(f"{self.path}: cannot open the results store: {exc.strerror or exc}") from None
            raise

    def _check_foreign(self) -> None:
        tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables and "runs" not in tables:
            raise BrokenStoreError(
                f"{self.path}: this SQLite file is not a CryptoBench results store "
                f"(tables: {', '.join(sorted(tables))})"
            )
        if "meta" in tables:
            row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row and int(row[0]) > SCHEMA_VERSION:
                raise BrokenStoreError(f"{self.path}: written by a newer CryptoBench (store schema {row[0]})")

    def _mark_interrupted(self) -> None:
        # Alive means "its process still holds the run's lock" (app.core.run.runlock), never
        # "a process with its PID exists": PIDs are reused, and a run killed as PID 1 in
        # a container found a PID 1 alive on every later start. The status condition
        # keeps a run that finished meanwhile from being overwritten.
        rows = self._db.execute("SELECT id FROM runs WHERE status = ?", (RunStatus.RUNNING,)).fetchall()
        for (run_id,) in rows:
            if not runlock.is_held(self.path, run_id):
                self._db.execute(
                    "UPDATE runs SET status = ? WHERE id = ? AND status = ?",
                    (RunStatus.INTERRUPTED, run_id, RunStatus.RUNNING),
                )

    def _status(self, run_id: str, status: str) -> str:
        """A run's status as read: "interrupted" for a run left running by a dead process in a
        read-only store, which `_mark_interrupted` could not write."""
        if self.read_only and status == RunStatus.RUNNING and not runlock.is_held(self.path, run_id):
            return RunStatus.INTERRUPTED
        return status

    def integrity_problems(self) -> list[str]:
        """SQLite's own check of every page and index; empty when the file is sound."""
        with self._reading():
            rows = [str(row[0]) for row in self._db.execute("PRAGMA integrity_check")]
        return [] if rows == ["ok"] else rows

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """Any SQLite failure inside (a page that cannot be read, a lock held too long)
        as a StoreError naming the file."""
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot read the results store: {exc}") from None

    @contextmanager
    def _write(self, action: str) -> Iterator[sqlite3.Connection]:
        """One transaction; `action` ("importing a run") names what a read-only store refuses."""
        if self.read_only:
            raise StoreReadOnlyError(read_only_message(self.path, action))
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
                self._db.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise
        except sqlite3.Error as exc:
            if is_read_only_error(exc):
                raise StoreReadOnlyError(read_only_message(self.path, action)) from None
            raise StoreError(f"{self.path}: cannot write the results store: {exc}") from None

    def _rollback(self) -> None:
        """Undo the open transaction, unless SQLite already has: on a full disk (SQLITE_FULL)
        or an I/O error it rolls back by itself, and a ROLLBACK then raised "cannot rollback
        - no transaction is active", which replaced the real cause in the message."""
        if self._db.in_transaction:
            try:
                self._db.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    # --- writing -----------------------------------------------------------------

    def begin_run(self, run: RunResult) -> None:
        if self.read_only:  # before the lock, which is a file beside the store
            raise StoreReadOnlyError(read_only_message(self.path, "starting a run"))
        runlock.acquire(self.path, run.id)  # before the row exists: a "running" row always has its lock
        try:
            with self._write("starting a run") as db:
                db.execute(
                    "INSERT INTO runs(id, name, started, finished, status, pid, host, environment, profile) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        run.id,
                        run.profile_view.marked_name,  # the listing's name carries the run's marks
                        run.started,
                        run.finished,
                        run.status,
                        os.getpid(),
                        run.environment_view.hostname,
                        json.dumps(run.environment),
                        json.dumps(run.profile),
                    ),
                )
        except BaseException:
            runlock.release(self.path, run.id)
            raise

    def add_job(self, run_id: str, job: JobResult) -> None:
        with self._write("storing a job") as db:
            db.execute(
                "INSERT OR REPLACE INTO jobs(id, run_id, idx, status, result) VALUES (?, ?, ?, ?, ?)",
                (job.id, run_id, job.index, job.status, json.dumps(_packed_job(job))),
            )

    def finish_run(self, run_id: str, status: str, finished: str) -> None:
        with self._write("finishing a run") as db:
            db.execute("UPDATE runs SET status = ?, finished = ? WHERE id = ?", (status, finished, run_id))
        runlock.release(self.path, run_id)  # only once the final status is committed

    def add_run(self, run: RunResult) -> None:
        """A whole run, finished elsewhere (`app.core.results.importing`), in one transaction: all of
        it or, on any failure, none. No PID and no lock: no process of this machine runs it.
        Plain INSERTs: an id already stored (the run's or any job's) fails the whole run,
        never replaces another run's row."""
        with self._write("importing a run") as db:
            db.execute(
                "INSERT INTO runs(id, name, started, finished, status, pid, host, environment, profile) "
                "VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?)",
                (
                    run.id,
                    run.profile_view.marked_name,  # the listing's name carries the run's marks
                    run.started,
                    run.finished,
                    run.status,
                    run.environment_view.hostname,
                    json.dumps(run.environment),
                    json.dumps(run.profile),
                ),
            )
            db.executemany(
                "INSERT INTO jobs(id, run_id, idx, status, result) VALUES (?, ?, ?, ?, ?)",
                ((job.id, run.id, job.index, job.status, json.dumps(_packed_job(job))) for job in run.jobs),
            )

    def delete_run(self, run_id: str) -> bool:
        """Remove a run and its jobs (the window's History and `cryptobench delete`); False when
        no run has this exact id. A run still being written (its process holds the run's
        lock) is refused: its next job would fail to store."""
        if self.read_only:  # before the lock file beside the store is looked at
            raise StoreReadOnlyError(read_only_message(self.path, "deleting a run"))
        if runlock.is_held(self.path, run_id):
            raise StoreError(f"run {run_id} is still running (its process is writing it); stop it first")
        with self._write("deleting a run") as db:
            return db.execute("DELETE FROM runs WHERE id = ?", (run_id,)).rowcount > 0

    # --- reading -----------------------------------------------------------------

    def list_runs(self, limit: int | None = None) -> list[RunSummary]:
        query = (
            "SELECT r.id, r.name, r.started, r.finished, r.status, r.host, "
            "COUNT(j.id), SUM(CASE WHEN j.status = ? THEN 1 ELSE 0 END) "
            "FROM runs r LEFT JOIN jobs j ON j.run_id = r.id GROUP BY r.id ORDER BY r.started DESC, r.id DESC"
        )
        if limit is not None:
            query += f" LIMIT {int(limit)}"
        with self._reading():
            rows = self._db.execute(query, (JobStatus.OK,)).fetchall()
        # A time that is not one (naive, year 9999, not text) reads as unknown: it stopped the
        # window, whose presets subtract and whose History converts them (`damaged_rows` names it).
        return [
            RunSummary(
                row[0],
                row[1],
                _run_time(row[2]) or "",
                _run_time(row[3]),
                self._status(row[0], row[4]),
                row[5],
                jobs=row[6],
                ok_jobs=row[7] or 0,
            )
            for row in rows
        ]

    def resolve_run_id(self, prefix: str) -> str:
        """A full run id from a unique prefix; RunNotFound (AmbiguousRunId for several)."""
        # A literal prefix: LIKE would take "%" and "_" as wildcards (and ignore case).
        with self._reading():
            rows = [
                str(r[0])
                for r in self._db.execute("SELECT id FROM runs WHERE substr(id, 1, ?) = ?", (len(prefix), prefix))
            ]
        if prefix in rows:
            return prefix
        if not rows:
            raise RunNotFound(f"no run with id {prefix!r} in {self.path}")
        if len(rows) > 1:
            raise AmbiguousRunId(f"run id prefix {prefix!r} is ambiguous ({len(rows)} runs match)")
        return rows[0]

    def load_run(self, run_id: str) -> RunResult:
        """The run with every job that reads back intact. A damaged row (cut short, edited,
        wrong types) becomes a failed placeholder job whose error names the damage, and a
        line in `RunResult.damaged`: one bad row must not hide the rest of the run.
        RunNotFound for an unknown id, StoreError when the file cannot be read."""
        run_id = self.resolve_run_id(run_id)
        try:
            return self._load_run(run_id)
        except sqlite3.Error as exc:  # a page SQLite cannot read: `cryptobench store` checks the file
            raise StoreError(f"{self.path}: cannot read run {run_id}: {exc}") from None

    def _load_run(self, run_id: str) -> RunResult:
        row = self._db.execute(
            "SELECT id, started, finished, status, environment, profile, name FROM runs WHERE id = ?", (run_id,)
        ).fetchone()
        if row is None:  # deleted (by another window or process) since its id was resolved
            raise RunNotFound(f"no run with id {run_id!r} in {self.path}")
        damaged: list[str] = []
        times = {}
        for column, value in (("started", row[1]), ("finished", row[2])):
            times[column] = _run_time(value)
            problem = time_problem(value) if value is not None else None
            if problem is not None:
                damaged.append(f"run record: {column}: {problem}")
        blocks: dict[str, dict[str, Any]] = {}
        for column, text, check in (("environment", row[4], check_environment), ("profile", row[5], check_profile)):
            try:
                blocks[column] = _decode_block(text, column, check)
            except _DamagedRow as exc:
                blocks[column] = {"name": str(row[6])} if column == "profile" else {}
                damaged.append(f"run record: {exc}")
        jobs = []
        for job_id, idx, _status, text in self._db.execute(
            "SELECT id, idx, status, result FROM jobs WHERE run_id = ? ORDER BY idx", (run_id,)
        ):
            try:
                jobs.append(_read_job(text))
            except _DamagedRow as exc:
                jobs.append(_placeholder_job(job_id, idx, text, str(exc)))
                damaged.append(f"{_row_name(job_id, idx)}: {exc}")
        return RunResult(
            id=row[0],
            started=times["started"] or "",
            finished=times["finished"],
            status=self._status(row[0], row[3]),
            environment=blocks["environment"],
            profile=blocks["profile"],
            jobs=jobs,
            damaged=damaged,
        )

    def jobs_like(self, scheme: str, backend: str, mode: str, message_size: int) -> list[StoredJob]:
        """Every job of every run with this scheme, backend, mode and message size, oldest
        run first, then by job index. SQLite picks the rows (json_extract), so only those
        are decoded: a job's history over 200 runs of 40 jobs reads in 0.17 s, where
        loading every run takes 1.6 s (benchmarks/README.md, "A job's trend").
        A damaged job row is left out and a damaged run record gives an empty environment
        (`damaged_rows` and `load_run` name them)."""
        query = (
            "SELECT r.id, r.started, r.environment, j.result, r.name, "
            # The run's marks without decoding its whole profile (it lists every job).
            "CASE WHEN json_valid(r.profile) THEN json_extract(r.profile, '$.reduced') END, "
            "CASE WHEN json_valid(r.profile) THEN json_extract(r.profile, '$.overrides') END "
            "FROM jobs j JOIN runs r ON r.id = j.run_id "
            # CASE: json_extract raises on a damaged row, and AND does not promise to test json_valid first.
            "WHERE CASE WHEN json_valid(j.result) THEN json_extract(j.result, '$.scheme') = ? "
            "AND json_extract(j.result, '$.backend') = ? AND json_extract(j.result, '$.mode') = ? "
            "AND json_extract(j.result, '$.message_size') = ? ELSE 0 END ORDER BY r.started, r.id, j.idx"
        )
        found: list[StoredJob] = []
        environments: dict[str, dict[str, Any]] = {}
        with self._reading():
            rows = self._db.execute(query, (scheme, backend, mode, message_size)).fetchall()
        for run_id, started, environment, text, name, reduced, overrides in rows:
            try:
                job = _read_job(text)
            except _DamagedRow:
                continue
            if run_id not in environments:
                try:
                    environments[run_id] = _decode_block(environment, "environment", check_environment)
                except _DamagedRow:
                    environments[run_id] = {}
            marks = _run_marks(name, reduced, overrides)
            found.append(StoredJob(str(run_id), _run_time(started) or "", environments[run_id], job, marks))
        return found

    def damaged_rows(self) -> list[str]:
        """Rows that SQLite finds sound but that do not read back as results (a job row cut
        short, edited by hand, with a wrong type or a NaN): one line each, naming the row.
        `integrity_check` cannot see these; `load_run` shows the rest of their run."""
        found: list[str] = []
        with self._reading():
            for run_id, started, finished, environment, profile in self._db.execute(
                "SELECT id, started, finished, environment, profile FROM runs"
            ):
                for column, value in (("started", started), ("finished", finished)):
                    problem = time_problem(value) if value is not None else None
                    if problem is not None:
                        found.append(f"run {run_id}: {column}: {problem}")
                for column, text, check in (
                    ("environment", environment, check_environment),
                    ("profile", profile, check_profile),
                ):
                    try:
                        _decode_block(text, column, check)
                    except _DamagedRow as exc:
                        found.append(f"run {run_id}: {exc}")
            for job_id, idx, text in self._db.execute("SELECT id, idx, result FROM jobs ORDER BY run_id, idx"):
                try:
                    _read_job(text)
                except _DamagedRow as exc:
                    found.append(f"{_row_name(job_id, idx)}: {exc}")
        return found

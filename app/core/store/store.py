"""The results store, one row per run and one per finished job: an SQLite file (the
default, nothing to set up) or a PostgreSQL database shared by several machines.

Both go through one code path (SQLAlchemy Core, `store_backends`), with one schema
(`store_schema`). Each job is committed the moment it finishes, in its own transaction,
so a crash or a kill loses only the job that was running, and never leaves half a row.
A run left "running" by a process that no longer exists (it no longer holds the run's
lock nor renews its lease: store/liveness.py) is marked "interrupted" the next time the
store is opened. A PostgreSQL server that restarts mid-run is waited for (up to
`RECONNECT_SECONDS`) and the run goes on storing its jobs.

Location: `--store PATH_OR_URL`, else `$CRYPTOBENCH_STORE`, else
`$CRYPTOBENCH_HOME/results.sqlite3`, else the platform's user data directory
(`store_target`, `store_paths`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DBAPIError, SQLAlchemyError

from app.core.fileio import file_kind
from app.core.results.model import JobResult, RunResult
from app.core.store import backends as store_backends
from app.core.store import liveness
from app.core.store.access import connect_read_only, is_read_only_error, read_only_message, writable
from app.core.store.columns import instant, job_figures, job_identity, now_instant, run_brief
from app.core.store.errors import (
    AmbiguousRunId,
    BrokenStoreError,
    RunNotFound,
    StoreError,
    StoreReadOnlyError,
    StoreUnreachable,
)
from app.core.store.paths import STORE_FILENAME, data_dir, default_store_path
from app.core.store.reading import RunSummary, StoredJob, StoreReading
from app.core.store.rows import packed_job
from app.core.store.schema import (
    SCHEMA_VERSION,
    SchemaNeedsUpgrade,
    SchemaTooNew,
    job_keys,
    prepare,
    stored_version,
)
from app.core.store.target import StoreLike, StoreTarget, sslmode_of, store_target, url_problem
from app.core.vocab import RunStatus

#: How long a write waits for a PostgreSQL server that went away (a restart) to come back
#: before the store counts as failed (the run then goes on in memory: `Runner.store_error`).
RECONNECT_SECONDS = 20.0

#: What this process found opening each PostgreSQL store at the current schema: whether
#: its user may write, and when it last looked (time.monotonic). Opened again within
#: `RECHECK_SECONDS`, the store costs one query (its schema version) beyond the pool's check
#: of its connection: the window opens it for every job it stores and every time History reads.
_opened: dict[tuple[int, str], tuple[bool, float]] = {}
#: How often a process asks again whether its user may write a PostgreSQL store, and marks
#: the runs whose writers are gone (the status read is right anyway: `_status` asks whether
#: each "running" run is still being written).
RECHECK_SECONDS = 30.0

_T = TypeVar("_T")

__all__ = [
    "SCHEMA_VERSION",
    "STORE_FILENAME",
    "AmbiguousRunId",
    "BrokenStoreError",
    "RunNotFound",
    "RunSummary",
    "Store",
    "StoreError",
    "StoreReadOnlyError",
    "StoreUnreachable",
    "StoredJob",
    "StoreTarget",
    "data_dir",
    "default_store_path",
    "move_aside",
]


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


class _ConnectionLost(StoreError):
    """A PostgreSQL connection lost in a write; `committing`: lost while the COMMIT was under
    way, so the write may or may not have happened."""

    def __init__(self, message: str, committing: bool) -> None:
        super().__init__(message)
        self.committing = committing


class Store(StoreReading):
    """A results store (`store_target`: a path for SQLite, a URL for PostgreSQL). Use as a
    context manager or call close()."""

    def __init__(self, path: StoreLike | None = None, *, read_only: bool | None = None) -> None:
        self.target = store_target(path)
        #: The schema version found on opening, when the store was migrated; the copy kept.
        self.migrated_from: int | None = None
        self.backup: Path | None = None
        self._sqlite: sqlite3.Connection | None = None
        self._engine: Engine | None = None
        #: Why the PostgreSQL connection was last lost (a server restarting), for the line said
        #: if it does not come back within RECONNECT_SECONDS.
        self._lost_line: str | None = None
        if self.target.url is not None:
            self._open_postgres(self.target.url, read_only)
            return
        self._file = self.target.path if self.target.path is not None else default_store_path()
        #: Opened with SQLite's mode=ro: by default when this user cannot write the file or
        #: its folder (`store_access`); every write then raises StoreReadOnlyError.
        self.read_only = not writable(self._file) if read_only is None else read_only
        if self.read_only:
            self._open_read_only()
            return
        try:
            self._file.parent.mkdir(parents=True, exist_ok=True)
            _looked_at(self._file)  # SQLite says only "unable to open database file"
            self._sqlite = sqlite3.connect(self._file, timeout=10, isolation_level=None, check_same_thread=False)
            self._sqlite.execute("PRAGMA foreign_keys = ON")
            # Check before anything writes: switching to WAL rewrites the file header,
            # which must never happen to another program's database.
            self._check_foreign()
            self._sqlite.execute("PRAGMA journal_mode = WAL")
            self._sqlite.execute("PRAGMA synchronous = NORMAL")
            self._connect(store_backends.sqlite_engine(self._sqlite))
            migrating = self._keep_copy_before_migrating()
            if migrating:  # schema 3 rebuilds the tables (schema.py): not with foreign keys on
                self._sqlite.execute("PRAGMA foreign_keys = OFF")
            self._prepare(may_write=True)
            if migrating:
                self._sqlite.execute("PRAGMA foreign_keys = ON")
            self._mark_interrupted()
        except BaseException as exc:
            # Close at once: the traceback keeps this half-built object (and its file handle)
            # alive until the next GC cycle, and an open handle stops the user from moving a
            # bad file away on Windows.
            self._close_quietly()
            exc = store_backends.cause_of(exc)
            if isinstance(exc, StoreError):
                raise
            if isinstance(exc, sqlite3.OperationalError):  # locked, unreadable, read-only: not broken
                raise StoreError(f"{self._file}: cannot open the results store: {exc}") from None
            if isinstance(exc, sqlite3.DatabaseError):
                raise BrokenStoreError(f"{self._file}: not a usable CryptoBench results store ({exc})") from None
            if isinstance(exc, OSError):
                raise StoreError(f"{self._file}: cannot open the results store: {exc.strerror or exc}") from None
            raise

    # --- opening -----------------------------------------------------------------

    @property
    def path(self) -> Path | str:
        """The SQLite file, or the PostgreSQL URL as shown (no password)."""
        return self.target.shown if self.target.url is not None else self._file

    @property
    def where(self) -> str:
        """The store in a message: its path, or its URL without password."""
        return str(self.path)

    def _connect(self, engine: Engine) -> None:
        self._engine = engine
        self._db: Connection = engine.connect()

    def _close_quietly(self) -> None:
        db = self.__dict__.get("_db")
        if db is not None:
            try:
                db.close()  # PostgreSQL: back to this process's pool (`postgres_engine`)
            except (SQLAlchemyError, sqlite3.Error):  # a connection already lost: nothing to close
                pass
        if self._engine is not None and self.target.url is None:
            self._engine.dispose()
        if self._sqlite is not None:
            self._sqlite.close()

    def _open_postgres(self, url: str, read_only: bool | None) -> None:
        shown = self.target.shown
        problem = url_problem(url)
        if problem is not None:  # libpq's own message would quote the URL, password and all
            raise StoreError(f"{shown}: {problem}")
        try:
            self._connect(store_backends.postgres_engine(url))
            key = (os.getpid(), url)
            known = _opened.get(key)
            # One query each time: a store another machine's newer CryptoBench upgraded is refused
            # at once, never written as the old schema.
            prepare = known is None or not self._schema_is_current()
            if not prepare and known is not None and time.monotonic() - known[1] < RECHECK_SECONDS:
                writable_here, mark = known[0], False
            else:
                writable_here, mark = self._postgres_writable(), True
            self.read_only = (not writable_here) if read_only is None else read_only
            if prepare:
                self._prepare(may_write=not self.read_only)
            if mark and not self.read_only:
                self._mark_interrupted()
            if prepare or mark:
                _opened[key] = (writable_here, time.monotonic())
        except ImportError:
            self._close_quietly()
            raise StoreError(
                f"{shown}: a PostgreSQL store needs psycopg (pip install 'cryptobench[postgres]')"
            ) from None
        except DBAPIError as exc:
            self._close_quietly()
            cause = store_backends.cause_of(exc)
            line = store_backends.describe_postgres_error(cause, shown, "opening the store", url)
            if store_backends.postgres_kind(cause) == "unreachable":
                raise StoreUnreachable(line) from None
            raise StoreError(line) from None
        except BaseException:
            self._close_quietly()
            raise

    def _schema_is_current(self) -> bool:
        """One query instead of the schema check, for a store this process opened before."""
        try:
            found = self._db.execute(text("SELECT value FROM meta WHERE key = 'schema_version'")).scalar()
        except DBAPIError:  # gone (dropped and made again): the full check says what it is now
            return False
        return found == str(SCHEMA_VERSION)

    def _postgres_writable(self) -> bool:
        """Whether this database user may write: INSERT on both tables (or, in an empty
        database, CREATE in its schema), on a server that is not read-only (a standby)."""
        if self._db.execute(text("SELECT current_setting('transaction_read_only')")).scalar() == "on":
            return False
        query = (
            "SELECT CASE WHEN to_regclass('runs') IS NULL OR to_regclass('jobs') IS NULL "
            "THEN has_schema_privilege(current_schema(), 'CREATE') "
            "ELSE has_table_privilege('runs', 'INSERT, UPDATE, DELETE') "
            "AND has_table_privilege('jobs', 'INSERT, UPDATE, DELETE') END"
        )
        return bool(self._db.execute(text(query)).scalar())

    def _prepare(self, *, may_write: bool) -> None:
        """Create or migrate the schema (`schema.prepare`), in one transaction; a newer
        schema is refused, never downgraded."""
        try:
            with self._write("preparing the store", refuse_read_only=False) as db:
                if self.target.is_postgres:  # two machines opening a new shared store at once
                    db.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": store_backends.SCHEMA_LOCK})
                found, now = prepare(db, may_write=may_write)
        except SchemaTooNew as exc:
            raise BrokenStoreError(
                f"{self.where}: written by a newer CryptoBench (store schema {exc}, this app knows "
                f"{SCHEMA_VERSION}); upgrade CryptoBench, the store is left as it is"
            ) from None
        except SchemaNeedsUpgrade as exc:
            raise StoreError(
                f"{self.where}: store schema {exc} must be upgraded to {SCHEMA_VERSION} once by a user "
                "who may change it (open it with this CryptoBench as that user)"
            ) from None
        except StoreReadOnlyError:  # a writer of rows, not of tables: ALTER TABLE is the owner's
            raise StoreError(
                f"{self.where}: the store's schema must be upgraded to {SCHEMA_VERSION} once by the owner of its "
                "tables (open it with this CryptoBench as that user); this user may only write rows"
            ) from None
        if found is None and not may_write:  # an empty database this user may not create tables in
            raise StoreError(
                f"{self.where}: no results store in this database yet, and this user may not create one; "
                'open it once as a user who may (docs/shared-store.md, "Setting up the database")'
            )
        if found is not None and found != now:
            self.migrated_from = found

    def _keep_copy_before_migrating(self) -> bool:
        """An SQLite store of an older schema is copied (`NAME.schemaN-backup`) before it is
        upgraded in place: an older CryptoBench can still open the copy. Whether it will be."""
        assert self._sqlite is not None
        found = stored_version(self._db)
        if found is None or found >= SCHEMA_VERSION:
            return False
        target = self._file.with_name(f"{self._file.name}.schema{found}-backup")
        counter = 1
        while target.exists():
            counter += 1
            target = self._file.with_name(f"{self._file.name}.schema{found}-backup-{counter}")
        copy = sqlite3.connect(target)
        try:
            self._sqlite.backup(copy)
        finally:
            copy.close()
        self.backup = target
        return True

    def _open_read_only(self) -> None:
        try:
            _looked_at(self._file)
            if not self._file.is_file():
                raise StoreError(
                    f"{self._file}: no results store here, and this user cannot write its folder to start one"
                )
            self._sqlite = connect_read_only(self._file)
            self._check_foreign()
            if self._sqlite.execute("SELECT 1 FROM sqlite_master WHERE name = 'runs'").fetchone() is None:
                raise StoreError(f"{self._file}: not a results store yet (no tables), and read-only")
            self._connect(store_backends.sqlite_engine(self._sqlite))
            found = stored_version(self._db)
            if found is not None and found < SCHEMA_VERSION:
                # An older store this user cannot upgrade: read an upgraded copy in memory.
                memory = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
                self._sqlite.backup(memory)
                self._close_quietly()
                self._sqlite = memory
                self._connect(store_backends.sqlite_engine(memory))
                self._prepare(may_write=True)
        except BaseException as exc:
            self._close_quietly()
            exc = store_backends.cause_of(exc)
            if isinstance(exc, StoreError):
                raise
            if isinstance(exc, sqlite3.OperationalError):
                raise StoreError(f"{self._file}: cannot open the results store (read-only): {exc}") from None
            if isinstance(exc, sqlite3.DatabaseError):
                raise BrokenStoreError(f"{self._file}: not a usable CryptoBench results store ({exc})") from None
            if isinstance(exc, OSError):
                raise StoreError(f"{self._file}: cannot open the results store: {exc.strerror or exc}") from None
            raise

    def _check_foreign(self) -> None:
        assert self._sqlite is not None
        tables = {row[0] for row in self._sqlite.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables and "runs" not in tables:
            raise BrokenStoreError(
                f"{self._file}: this SQLite file is not a CryptoBench results store "
                f"(tables: {', '.join(sorted(tables))})"
            )
        if "meta" in tables:
            row = self._sqlite.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
            if row and (not str(row[0]).isdigit() or int(row[0]) > SCHEMA_VERSION):
                raise BrokenStoreError(
                    f"{self._file}: written by a newer CryptoBench (store schema {row[0]}, this app knows "
                    f"{SCHEMA_VERSION}); upgrade CryptoBench, the store is left as it is"
                )

    @property
    def security(self) -> str | None:
        """How a PostgreSQL connection is protected ("sslmode=require, encrypted"); None for SQLite."""
        if self.target.url is None:
            return None
        tls = store_backends.tls_in_use(self._db)
        return f"sslmode={sslmode_of(self.target.url)}, {'encrypted (TLS)' if tls else 'not encrypted'}"

    # --- run locks and leases ------------------------------------------------------

    def _lock(self, run_id: str) -> None:
        if self.target.url is not None:
            liveness.acquire_postgres(self.target.url, run_id)
        else:
            liveness.acquire_sqlite(self._file, run_id)

    def _unlock(self, run_id: str) -> None:
        if self.target.url is not None:
            liveness.release_postgres(self.target.url, run_id)
        else:
            liveness.release_sqlite(self._file, run_id)

    def abandon_run(self, run_id: str) -> None:
        """Stop holding a run this process can no longer store (its store failed): it reads
        interrupted to others from then on, and its results file completes it (`import`)."""
        self._unlock(run_id)

    def _held(self, run_id: str) -> bool:
        """Whether the run is still being written, by this or any process, on any machine."""
        if self.target.url is not None:
            return liveness.postgres_alive(self._db, self.target.url, run_id)
        return liveness.sqlite_alive(self._file, run_id)

    def run_locked(self, run_id: str) -> bool:
        """Whether a process holds the run's lock right now, its lease left aside: a run whose
        writer gave up on the store (and kept it in a file) still has a lease for a while."""
        with self._reading():
            if self.target.url is not None:
                return liveness.postgres_locked(self._db, self.target.url, run_id)
            return liveness.sqlite_locked(self._file, run_id)

    def _mark_interrupted(self) -> None:
        # Alive means "its process still holds the run's lock, or renews its lease"
        # (store/liveness.py), never "a process with its PID exists": PIDs are reused, and a
        # run killed as PID 1 in a container found a PID 1 alive on every later start. The
        # status condition keeps a run that finished meanwhile from being overwritten.
        rows = self._db.execute(text("SELECT id FROM runs WHERE status = :s"), {"s": RunStatus.RUNNING}).fetchall()
        for (run_id,) in rows:
            if not self._held(run_id):
                self._db.execute(
                    text("UPDATE runs SET status = :new WHERE id = :id AND status = :old"),
                    {"new": RunStatus.INTERRUPTED, "id": run_id, "old": RunStatus.RUNNING},
                )

    def _status(self, run_id: str, status: str) -> str:
        """A run's status as read: "interrupted" for a run left running by a process that is
        gone, which `_mark_interrupted` has not written (a read-only store, which cannot; a
        shared store this process opened within `RECHECK_SECONDS`, which it did not mark again)."""
        if status == RunStatus.RUNNING and not self._held(run_id):
            return RunStatus.INTERRUPTED
        return status

    def integrity_problems(self) -> list[str]:
        """SQLite's own check of every page and index; empty when the file is sound (always
        on PostgreSQL, whose server keeps its own pages)."""
        if self._sqlite is None:
            return []
        with self._reading():
            rows = [str(row[0]) for row in self._sqlite.execute("PRAGMA integrity_check")]
        return [] if rows == ["ok"] else rows

    def close(self) -> None:
        self._close_quietly()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- transactions ------------------------------------------------------------

    def _problem(self, exc: BaseException, action: str) -> str:
        if self.target.url is not None:
            return store_backends.describe_postgres_error(exc, self.where, action, self.target.url)
        verb = "read" if action == "reading" else "write"
        return f"{self.where}: cannot {verb} the results store: {exc}"

    @contextmanager
    def _reading(self) -> Iterator[None]:
        """Any database failure inside (a page that cannot be read, a lock held too long, a
        server gone) as a StoreError naming the store."""
        try:
            yield
        except DBAPIError as exc:
            raise StoreError(self._problem(store_backends.cause_of(exc), "reading")) from None
        except sqlite3.Error as exc:
            raise StoreError(self._problem(exc, "reading")) from None

    @property
    def _postgres(self) -> bool:
        return self.target.is_postgres

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        """Reads that see one moment of the store: a run and its jobs are read in one
        transaction (REPEATABLE READ on PostgreSQL; on SQLite a read transaction, whose WAL
        snapshot is taken at its first read). Read in separate statements, a `delete` (or a
        writer) between them gave a finished run with none of its jobs, which `store copy`
        then stored so for good."""
        self._db.execute(text("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" if self._postgres else "BEGIN"))
        try:
            yield
        finally:
            self._rollback()

    def _is_read_only_error(self, exc: BaseException) -> bool:
        if self.target.url is not None:
            return store_backends.postgres_kind(exc) == "read-only"
        return isinstance(exc, sqlite3.Error) and is_read_only_error(exc)

    def _read_only_message(self, action: str) -> str:
        if self.target.url is None:
            return read_only_message(self._file, action)
        return (
            f"{self.where}: this database user may only read the results store, so {action} is not "
            "possible; reading it still works (history, show, compare, report)"
        )

    @contextmanager
    def _write(self, action: str, *, refuse_read_only: bool = True, single: bool = False) -> Iterator[Connection]:
        """One transaction; `action` ("importing a run") names what a read-only store refuses.
        `single`: the block runs one statement, which PostgreSQL commits as its own transaction
        (autocommit), one round trip instead of three; on SQLite it still takes BEGIN IMMEDIATE."""
        if self.read_only and refuse_read_only:
            raise StoreReadOnlyError(self._read_only_message(action))
        if self.target.is_postgres and (self._db.invalidated or self._db.closed):  # lost; not yet made again
            raise _ConnectionLost(self._lost_line or self._problem(ConnectionError("connection lost"), action), False)
        alone = single and self.target.is_postgres
        committing = alone  # a statement that is its own transaction commits as it runs
        try:
            if alone:
                yield self._db
                return
            self._db.execute(text("BEGIN" if self.target.is_postgres else "BEGIN IMMEDIATE"))
            try:
                yield self._db
                committing = True
                self._db.execute(text("COMMIT"))
            except BaseException:
                self._rollback()
                raise
        except (DBAPIError, sqlite3.Error) as exc:
            cause = store_backends.cause_of(exc)
            if self._is_read_only_error(cause):
                raise StoreReadOnlyError(self._read_only_message(action)) from None
            if self.target.is_postgres and (
                store_backends.postgres_kind(cause) == "unreachable"
                or (isinstance(exc, DBAPIError) and exc.connection_invalidated)
            ):
                self._lost_line = self._problem(cause, action)
                raise _ConnectionLost(self._lost_line, committing) from None
            raise StoreError(self._problem(cause, action)) from None

    def _retrying(self, action: str, work: Callable[[Connection], _T], *, idempotent: bool, single: bool = True) -> _T:
        """`work` in one transaction (`_write`); on PostgreSQL, a connection lost to a server
        restart is made again and the transaction tried again, for up to
        `RECONNECT_SECONDS`. A write lost during its COMMIT is tried again only when doing
        it twice is harmless (`idempotent`): it may have been committed."""
        deadline = time.monotonic() + RECONNECT_SECONDS
        pause = 0.05
        while True:
            try:
                with self._write(action, single=single) as db:
                    return work(db)
            except _ConnectionLost as exc:
                if (exc.committing and not idempotent) or time.monotonic() >= deadline:
                    raise StoreUnreachable(str(exc)) from None
            time.sleep(pause)  # a server restarting: seconds, not milliseconds
            pause = min(1.0, pause * 2)
            self._reconnect()

    def _reconnect(self) -> None:
        """A fresh connection from this process's pool in place of one the server dropped
        (none yet if the server is still away: the next try asks again)."""
        assert self._engine is not None
        try:
            self._db.invalidate()
            self._db.close()
        except SQLAlchemyError:  # it is gone already; nothing else to undo
            pass
        try:
            self._db = self._engine.connect()
        except DBAPIError as exc:
            self._lost_line = self._problem(store_backends.cause_of(exc), "reconnecting")

    def _rollback(self) -> None:
        """Undo the open transaction, unless the database already has: on a full disk
        (SQLITE_FULL) or an I/O error SQLite rolls back by itself, and a ROLLBACK then raised
        "cannot rollback - no transaction is active", which replaced the real cause."""
        if self._sqlite is not None and not self._sqlite.in_transaction:
            return
        try:
            self._db.execute(text("ROLLBACK"))
        except (DBAPIError, sqlite3.Error):
            pass

    # --- writing -----------------------------------------------------------------

    _INSERT_RUN = (
        "INSERT INTO runs(id, name, started, finished, status, pid, host, environment, profile, "
        "started_at, finished_at, heartbeat, brief) "
        "VALUES (:id, :name, :started, :finished, :status, :pid, :host, :environment, :profile, "
        ":started_at, :finished_at, :heartbeat, :brief)"
    )
    _INSERT_JOB = (
        "INSERT INTO jobs(id, run_id, idx, status, result, scheme, backend, mode, message_size, identity, figures) "
        "VALUES (:id, :run_id, :idx, :status, :result, :scheme, :backend, :mode, :message_size, :identity, :figures)"
    )

    def _run_row(self, run: RunResult, pid: int | None) -> dict[str, Any]:
        postgres = self.target.is_postgres
        return {
            "id": run.id,
            "name": run.profile_view.marked_name,  # the listing's name carries the run's marks
            "started": run.started,
            "finished": run.finished,
            "status": run.status,
            "pid": pid,
            "host": run.environment_view.hostname,
            "environment": json.dumps(run.environment),
            "profile": json.dumps(run.profile),
            "started_at": instant(run.started, postgres=postgres),
            "finished_at": instant(run.finished, postgres=postgres),
            "heartbeat": now_instant(postgres=postgres) if pid is not None else None,
            "brief": run_brief(run.environment, run.profile),
        }

    @staticmethod
    def _job_row(run_id: str, job: JobResult) -> dict[str, Any]:
        packed = packed_job(job)
        return {
            "id": job.id,
            "run_id": run_id,
            "idx": job.index,
            "status": job.status,
            "result": json.dumps(packed),
            **job_keys(packed),
            "identity": job_identity(job),
            "figures": job_figures(job),
        }

    def begin_run(self, run: RunResult) -> None:
        if self.read_only:  # before the lock, which is a file beside the store
            raise StoreReadOnlyError(self._read_only_message("starting a run"))
        self._lock(run.id)  # before the row exists: a "running" row always has its lock
        row = self._run_row(run, os.getpid())
        try:
            self._retrying("starting a run", lambda db: db.execute(text(self._INSERT_RUN), row), idempotent=False)
        except BaseException:
            self._unlock(run.id)
            raise

    def add_job(self, run_id: str, job: JobResult) -> None:
        row = self._job_row(run_id, job)
        statement = text(
            self._INSERT_JOB + " ON CONFLICT (id) DO UPDATE SET run_id = excluded.run_id, "
            "idx = excluded.idx, status = excluded.status, result = excluded.result, "
            "scheme = excluded.scheme, backend = excluded.backend, mode = excluded.mode, "
            "message_size = excluded.message_size, identity = excluded.identity, figures = excluded.figures"
        )
        self._retrying("storing a job", lambda db: db.execute(statement, row), idempotent=True)

    def finish_run(self, run_id: str, status: str, finished: str) -> None:
        values = {
            "status": status,
            "finished": finished,
            "finished_at": instant(finished, postgres=self.target.is_postgres),
            "id": run_id,
        }
        statement = text(
            "UPDATE runs SET status = :status, finished = :finished, finished_at = :finished_at WHERE id = :id"
        )
        self._retrying("finishing a run", lambda db: db.execute(statement, values), idempotent=True)
        self._unlock(run_id)  # only once the final status is committed

    def add_run(self, run: RunResult, *, replacing: bool = False) -> None:
        """A whole run, finished elsewhere (`app.core.store.importing`), in one transaction: all of
        it or, on any failure, none. No PID and no lock: no process of this machine runs it.
        Plain INSERTs: an id already stored (the run's or any job's) fails the whole run,
        never replaces another run's row. `replacing`: the stored run of this id is a part of
        this one (`importing.partial_of`: a run whose store failed mid-run), removed in the
        same transaction."""
        with self._write("importing a run") as db:
            if replacing:
                db.execute(text("DELETE FROM jobs WHERE run_id = :id"), {"id": run.id})
                db.execute(text("DELETE FROM runs WHERE id = :id"), {"id": run.id})
            db.execute(text(self._INSERT_RUN), self._run_row(run, None))
            if run.jobs:
                db.execute(text(self._INSERT_JOB), [self._job_row(run.id, job) for job in run.jobs])

    def delete_run(self, run_id: str) -> bool:
        """Remove a run and its jobs (the window's History and `cryptobench delete`); False when
        no run has this exact id (an empty id never has one). A run still being written (its
        process holds the run's lock, or renews its lease) is refused: its next job would
        fail to store."""
        if self.read_only:  # before the lock file beside the store is looked at
            raise StoreReadOnlyError(self._read_only_message("deleting a run"))
        if not run_id.strip():
            return False
        with self._reading():
            held = self._held(run_id)
        if held:
            raise StoreError(f"run {run_id} is still running (its process is writing it); stop it first")
        with self._write("deleting a run") as db:
            # Jobs first: PostgreSQL keeps the cascade too, but an SQLite connection opened
            # without foreign_keys (another tool's) would leave them behind.
            db.execute(text("DELETE FROM jobs WHERE run_id = :id"), {"id": run_id})
            return db.execute(text("DELETE FROM runs WHERE id = :id"), {"id": run_id}).rowcount > 0

"""Which stored runs are still being written, on any machine, across a server restart.

A run's row says "running" until its process finishes it; if that process dies (killed,
a crash, a machine gone), the run must read "interrupted" and may be deleted. A process
id cannot tell (PIDs are reused, and in a container the run's process is often PID 1);
a lock the writer holds can, and a lease it renews covers the moments a lock cannot:

- SQLite: a lock file beside the store (app/core/store/runlock.py), which the kernel
  releases the moment its process dies, however it dies. A reader who may not open the
  file (another user's store) reads its modification time instead: the writer touches
  it every `HEARTBEAT_SECONDS`, so a file left untouched for `LEASE_SECONDS` belongs to
  a writer that is gone.
- PostgreSQL: a session advisory lock, on one connection per store that the writing
  process keeps for all its runs; the server drops it the moment that connection ends.
  A server restart drops every lock while the writers live on, so the run's row also
  holds a lease (`runs.heartbeat`, the server's time) that the writer renews every
  `HEARTBEAT_SECONDS`. A run whose lock is free is still alive if its lease was renewed
  before the server started and less than `LEASE_SECONDS` ago: its writer has not yet
  reconnected. A writer that reconnects takes its locks again before renewing the
  lease, so a lease renewed after the server started means the lock answers alone, and
  a writer killed outright reads "interrupted" at once, as before.

The writer's side is one daemon thread per process (`_Keeper`), running only while the
process writes a run. It renews leases, reconnects after a restart, and puts back
"running" on a run of its own that another process marked interrupted meanwhile (a
network cut longer than the lease).

Readers ask `postgres_alive` and `sqlite_alive`; the lock is looked up in `pg_locks`,
never taken, so looking never gets in a writer's way.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, text

from app.core.store import runlock
from app.core.store.backends import psycopg_connect

#: How often a writer renews its leases, and how long a lease lasts without renewal.
HEARTBEAT_SECONDS = 10.0
LEASE_SECONDS = 45.0


def lock_key(run_id: str) -> int:
    """A run's advisory lock key: 64 bits of a digest of its id (signed, as PostgreSQL's bigint)."""
    digest = hashlib.sha256(b"cryptobench-run:" + run_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class _PostgresRuns:
    """This process's runs in one PostgreSQL store, and the connection that holds their locks."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.conn: Any = None
        self.runs: set[str] = set()

    def connected(self) -> Any:
        """The lock connection, made again (and every lock taken again) if the server dropped it."""
        if self.conn is not None and not self.conn.closed and not self.conn.broken:
            return self.conn
        if self.conn is not None:
            self.conn.close()
        self.conn = psycopg_connect(self.url)
        for run_id in self.runs:
            self.conn.execute("SELECT pg_try_advisory_lock(%s)", (lock_key(run_id),))
        return self.conn


_postgres: dict[str, _PostgresRuns] = {}
_sqlite: set[tuple[Path, str]] = set()
_guard = threading.RLock()
_wake = threading.Event()
_keeper: threading.Thread | None = None


#: Stores whose lock connection a process keeps open with no run to hold (the next run's
#: lock then costs one query, not a login); beyond, the least recently used are closed.
MAX_IDLE_LOCK_CONNECTIONS = 2


def acquire_postgres(url: str, run_id: str) -> bool:
    """Hold the run's lock for this process; False if it cannot be taken (the run then reads
    as interrupted to others unless its lease is fresh, as with a lock file that cannot be made)."""
    import psycopg

    with _guard:
        runs = _postgres.pop(url, None) or _PostgresRuns(url)
        _postgres[url] = runs  # the most recently used last
        idle = [other for other in _postgres.values() if not other.runs and other is not runs]
        for other in idle[: max(0, len(idle) - MAX_IDLE_LOCK_CONNECTIONS)]:
            _drop(other)
        got = None
        for _ in range(2):  # a kept connection the server dropped since (a restart): made again, once
            try:
                got = runs.connected().execute("SELECT pg_try_advisory_lock(%s)", (lock_key(run_id),)).fetchone()
                break
            except psycopg.Error:
                if runs.conn is not None:
                    runs.conn.close()
        if not (got and got[0]):
            return False
        runs.runs.add(run_id)
        _start_keeper()
        return True


def release_postgres(url: str, run_id: str) -> None:
    """Drop the run's lock (its final status is committed); the connection stays for the next run."""
    import psycopg

    with _guard:
        runs = _postgres.get(url)
        if runs is None or run_id not in runs.runs:
            return
        runs.runs.discard(run_id)
        if runs.conn is None or runs.conn.closed:  # the server dropped it: the lock went with it
            return
        try:
            runs.conn.execute("SELECT pg_advisory_unlock(%s)", (lock_key(run_id),))
        except psycopg.Error:
            runs.conn.close()


def _drop(runs: _PostgresRuns) -> None:
    _postgres.pop(runs.url, None)
    if runs.conn is not None:
        runs.conn.close()  # psycopg's close never raises, even on a connection the server dropped


def acquire_sqlite(store_path: Path, run_id: str) -> bool:
    with _guard:
        if not runlock.acquire(store_path, run_id):
            return False
        _sqlite.add((store_path, run_id))
        _start_keeper()
        return True


def release_sqlite(store_path: Path, run_id: str) -> None:
    with _guard:
        _sqlite.discard((store_path, run_id))
        runlock.release(store_path, run_id)


def close_idle() -> None:
    """Close the lock connections of stores with no run being written (tests; exit closes them anyway)."""
    with _guard:
        for runs in [runs for runs in _postgres.values() if not runs.runs]:
            _drop(runs)


def writing_postgres(url: str, run_id: str) -> bool:
    """Whether this process writes the run."""
    with _guard:
        runs = _postgres.get(url)
        return runs is not None and run_id in runs.runs


# --- readers ---------------------------------------------------------------------------

#: Whether some session holds the run's lock: read from pg_locks (any user may), never taken.
_LOCKED_SQL = (
    "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted"
    " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    " AND classid = CAST(:high AS oid) AND objid = CAST(:low AS oid) AND objsubid = 1)"
)
#: ... or its lease, renewed before the server started and less than the lease ago, says its
#: writer is still reconnecting.
_ALIVE_SQL = (
    _LOCKED_SQL + " OR EXISTS (SELECT 1 FROM runs WHERE id = :id AND heartbeat < pg_postmaster_start_time()"
    " AND heartbeat > now() - make_interval(secs => :lease))"
)


def postgres_locked(db: Connection, url: str, run_id: str) -> bool:
    """Whether some process holds the run's lock right now (its lease left aside)."""
    if writing_postgres(url, run_id):
        return True
    key = lock_key(run_id)
    found = db.execute(
        text(_LOCKED_SQL),
        {"high": (key >> 32) & 0xFFFFFFFF, "low": key & 0xFFFFFFFF},
    ).scalar()
    return bool(found)


def postgres_alive(db: Connection, url: str, run_id: str) -> bool:
    """Whether some process, on any machine, still writes this run (see the module docstring)."""
    if writing_postgres(url, run_id):
        return True
    key = lock_key(run_id)
    found = db.execute(
        text(_ALIVE_SQL),
        {"high": (key >> 32) & 0xFFFFFFFF, "low": key & 0xFFFFFFFF, "id": run_id, "lease": LEASE_SECONDS},
    ).scalar()
    return bool(found)


def sqlite_locked(store_path: Path, run_id: str) -> bool:
    """Whether the run's lock file is held now (False where it cannot be looked at)."""
    return runlock.is_held(store_path, run_id) is True


def sqlite_alive(store_path: Path, run_id: str) -> bool:
    """Whether the run's process still holds its lock file; when the file cannot be looked
    at, whether its writer touched it within the lease."""
    held = runlock.is_held(store_path, run_id)
    if held is not None:
        return held
    age = runlock.age(store_path, run_id)
    return age is not None and age < LEASE_SECONDS


# --- the writer's heartbeat --------------------------------------------------------------

_RENEW_SQL = (
    "UPDATE runs SET heartbeat = now(), status = 'running' WHERE id = ANY(%s) AND status IN ('running', 'interrupted')"
)


def _start_keeper() -> None:
    global _keeper  # noqa: PLW0603 - one keeper thread per process, started with its first run
    if _keeper is not None and _keeper.is_alive():
        return
    _wake.clear()
    _keeper = threading.Thread(target=_keep, name="cryptobench-run-leases", daemon=True)
    _keeper.start()


def _keep() -> None:
    while True:
        _wake.wait(HEARTBEAT_SECONDS)
        _wake.clear()
        with _guard:
            if not any(runs.runs for runs in _postgres.values()) and not _sqlite:
                return
            renew_all()


def renew_all() -> None:
    """Renew every lease this process holds now (the keeper does it every `HEARTBEAT_SECONDS`)."""
    import psycopg

    with _guard:
        for runs in [runs for runs in _postgres.values() if runs.runs]:
            try:
                runs.connected().execute(_RENEW_SQL, (sorted(runs.runs),))
            except psycopg.Error:  # the server is away: the lease lasts, the next beat tries again
                if runs.conn is not None:
                    runs.conn.close()
        for store_path, run_id in list(_sqlite):
            if runlock.holds(store_path, run_id):
                runlock.touch(store_path, run_id)
            else:  # released behind our back (a test standing in for a dead process)
                _sqlite.discard((store_path, run_id))

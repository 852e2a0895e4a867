"""The two databases behind one `Store`: connections, their failures in one line, and
PostgreSQL's run locks.

Both go through SQLAlchemy 2 Core in autocommit mode; `Store` opens each transaction
itself (BEGIN IMMEDIATE on SQLite, BEGIN on PostgreSQL), so a run's row and each job
are committed the moment they are written, on either database, and the queries are
the same text. SQLite's connection is made by `store.py` (its read-only and WAL rules
are the file's); PostgreSQL's by libpq from the URL as written (`store_target`).

A failure a user can act on comes out as one line naming the store: the server cannot
be reached, the password is refused, the database does not exist, the server's disk is
full, the user may only read (`describe_postgres_error`).

Run locks (docs/ARCHITECTURE.md, "Process model"): on SQLite a lock file beside the
store (`app.core.store.runlock`); on PostgreSQL a session advisory lock, held by a
connection of its own for as long as the run is written. The server drops it the moment
that connection ends, however the writer died, on any machine, so any machine opening
the store can tell a run still being written from an interrupted one.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
import threading
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, text
from sqlalchemy.pool import NullPool, StaticPool

from app.core.store.target import libpq_url

#: Seconds to wait for a PostgreSQL server before saying it cannot be reached (a URL's own
#: `connect_timeout` wins). Short: the window's History opens the store on the window's thread,
#: so a server that drops packets freezes it this long (a refused connection fails at once).
CONNECT_TIMEOUT = 5
#: The advisory lock every opening takes while it creates or migrates the schema.
SCHEMA_LOCK = 0x43425343  # "CBSC"


def sqlite_engine(raw: sqlite3.Connection) -> Engine:
    """An engine over one SQLite connection already opened and set up by the store."""
    return create_engine("sqlite://", creator=lambda: raw, poolclass=StaticPool, isolation_level="AUTOCOMMIT")


def _psycopg_connect(url: str) -> Any:
    import psycopg

    options: dict[str, Any] = {"autocommit": True, "application_name": "cryptobench"}
    if "connect_timeout" not in url:
        options["connect_timeout"] = CONNECT_TIMEOUT
    # A writer on a machine that vanishes (power, network) must lose its run lock in
    # about a minute, not after the kernel's two hours of TCP silence.
    options.update(keepalives=1, keepalives_idle=30, keepalives_interval=10, keepalives_count=3)
    return psycopg.connect(libpq_url(url), **options)


def postgres_engine(url: str) -> Engine:
    """An engine over libpq's own reading of `url` (passwords from PGPASSWORD, ~/.pgpass or a
    service file; sslmode, host and port as written). ImportError without psycopg."""
    import psycopg  # noqa: F401  (the optional `postgres` extra: fail here, named, if absent)

    return create_engine(
        "postgresql+psycopg://",
        creator=lambda: _psycopg_connect(url),
        poolclass=NullPool,
        isolation_level="AUTOCOMMIT",
    )


def tls_in_use(db: Connection) -> bool | None:
    """Whether this PostgreSQL connection is encrypted (None on SQLite)."""
    raw = db.connection.dbapi_connection
    pgconn = getattr(raw, "pgconn", None)
    return bool(pgconn.ssl_in_use) if pgconn is not None else None


# --- failures in words --------------------------------------------------------------


def cause_of(exc: BaseException) -> BaseException:
    """The driver's own error inside SQLAlchemy's wrapper (sqlite3's, psycopg's)."""
    orig = getattr(exc, "orig", None)
    return orig if isinstance(orig, BaseException) else exc


def _first_line(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    line = lines[0] if lines else type(exc).__name__
    return re.sub(r"\b(FATAL|ERROR):\s+", "", line)  # libpq's severity words add nothing here


def postgres_kind(exc: BaseException) -> str:
    """What went wrong, from the SQLSTATE where the server sent one, else libpq's words:
    "unreachable", "auth", "no-database", "full", "read-only", "tls", or "other"."""
    state = getattr(exc, "sqlstate", None) or ""
    words = str(exc).lower()
    if state in ("28P01", "28000") or "authentication failed" in words or "no password supplied" in words:
        return "auth"
    if state == "3D000" or ("database" in words and "does not exist" in words):
        return "no-database"
    if state.startswith("53"):  # insufficient resources: disk full, out of memory
        return "full"
    if "certificate" in words or "ssl" in words or "tls" in words:
        return "tls"
    if state in ("42501", "25006"):  # insufficient privilege, read-only transaction
        return "read-only"
    if (
        state.startswith(("08", "57P"))  # connection exceptions; the server shut down or ended this one
        or "connection refused" in words
        or "could not connect" in words
        or "no such file or directory" in words
        or "timeout expired" in words
        or "could not translate host name" in words
        or "server closed the connection" in words
        or "connection to server" in words
    ):
        return "unreachable"
    return "other"


def describe_postgres_error(exc: BaseException, shown: str, action: str) -> str:
    """One line for a PostgreSQL failure while `action` ("opening", "storing a job")."""
    kind = postgres_kind(exc)
    detail = _first_line(exc)
    if " failed: " in detail:  # libpq: 'connection to server at "h", port 5 failed: Connection refused'
        detail = detail.rsplit(" failed: ", 1)[1]
    if kind == "unreachable":
        return f"{shown}: cannot reach the PostgreSQL server ({detail}); check the host, port and that it runs"
    if kind == "auth":
        return (
            f"{shown}: the PostgreSQL server refused the login ({detail}); give the password through "
            "PGPASSWORD, ~/.pgpass or a service file, never in the URL"
        )
    if kind == "tls":
        return (
            f"{shown}: the secure connection failed ({detail}); check sslmode and the server's CA "
            "(sslrootcert, ~/.postgresql/root.crt)"
        )
    if kind == "no-database":
        return f"{shown}: {detail}; create it first (docs/shared-store.md)"
    if kind == "full":
        return f"{shown}: the PostgreSQL server is out of space ({detail}) while {action}; nothing of it was stored"
    return f"{shown}: PostgreSQL failed while {action}: {detail}"


# --- PostgreSQL run locks -----------------------------------------------------------

_held: dict[tuple[str, str], Any] = {}  # (url, run id) -> the connection holding its lock
_guard = threading.Lock()


def lock_key(run_id: str) -> int:
    """A run's advisory lock key: 64 bits of a digest of its id (signed, as PostgreSQL's bigint)."""
    digest = hashlib.sha256(b"cryptobench-run:" + run_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def acquire(url: str, run_id: str) -> bool:
    """Hold the run's lock on a connection of its own; False if it cannot be taken (the run
    then reads as interrupted to others, as with a lock file that cannot be made)."""
    import psycopg

    with _guard:
        if (url, run_id) in _held:
            return True
        try:
            conn = _psycopg_connect(url)
        except psycopg.Error:
            return False
        try:
            row = conn.execute("SELECT pg_try_advisory_lock(%s)", (lock_key(run_id),)).fetchone()
        except psycopg.Error:
            conn.close()
            return False
        if not (row and row[0]):
            conn.close()
            return False
        _held[(url, run_id)] = conn
        return True


def release(url: str, run_id: str) -> None:
    """Drop the run's lock: closing its connection ends the session, and the lock with it."""
    with _guard:
        conn = _held.pop((url, run_id), None)
    if conn is not None:
        conn.close()  # psycopg's close never raises, even on a connection the server dropped


def is_held(db: Connection, url: str, run_id: str) -> bool:
    """Whether some process, on any machine, still writes this run: its lock cannot be taken."""
    with _guard:
        if (url, run_id) in _held:
            return True
    key = lock_key(run_id)
    got = bool(db.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": key}).scalar())
    if got:
        db.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": key})
    return not got

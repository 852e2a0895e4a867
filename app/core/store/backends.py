"""The two databases behind one `Store`: connections, and their failures in one line.

Both go through SQLAlchemy 2 Core in autocommit mode; `Store` opens each transaction
itself (BEGIN IMMEDIATE on SQLite, BEGIN on PostgreSQL), so a run's row and each job
are committed the moment they are written, on either database, and the queries are
the same text. SQLite's connection is made by `store.py` (its read-only and WAL rules
are the file's); PostgreSQL's by libpq from the URL as written (`store_target`).

PostgreSQL connections are kept, a small pool per store and process (`postgres_engine`):
a new connection costs an authenticated login, and the window opens the store for every
job it stores and every time History reads, so opening one each time held the live path
to 19 runs a second. A pooled connection is checked before it is handed out, so one the
server dropped (a restart) is replaced without a word.

A failure a user can act on comes out as one line naming the store: the server cannot
be reached, the password is refused, the database does not exist, the server's disk is
full, the user may only read (`describe_postgres_error`); the driver's own text is
shown without the password (`target.scrub`).

Which runs are still being written (run locks and leases) is store/liveness.py.
"""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from collections import OrderedDict
from typing import Any

from sqlalchemy import Connection, Engine, create_engine
from sqlalchemy.pool import StaticPool

from app.core.store.target import libpq_url, scrub

#: Seconds to wait for a PostgreSQL server before saying it cannot be reached (a URL's own
#: `connect_timeout` wins). Short: the window's History opens the store on the window's thread,
#: so a server that drops packets freezes it this long (a refused connection fails at once).
CONNECT_TIMEOUT = 5
#: The advisory lock every opening takes while it creates or migrates the schema.
SCHEMA_LOCK = 0x43425343  # "CBSC"
#: Connections a process keeps open to one PostgreSQL store, and how many more it opens
#: when that many are busy (the window's job workers and History at once).
POOL_SIZE = 2
POOL_OVERFLOW = 8
#: Stores a process keeps connections to; the least recently opened beyond are closed.
MAX_KEPT_STORES = 4


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


def psycopg_connect(url: str) -> Any:
    """A connection of its own (a run's locks, store/liveness.py), not from the pool."""
    return _psycopg_connect(url)


_engines: OrderedDict[tuple[int, str], Engine] = OrderedDict()
_engines_guard = threading.Lock()


def postgres_engine(url: str) -> Engine:
    """This process's engine for `url`, over libpq's own reading of it (passwords from
    PGPASSWORD, ~/.pgpass or a service file; sslmode, host and port as written), with a
    small pool of connections each checked before use. ImportError without psycopg."""
    import psycopg  # noqa: F401  (the optional `postgres` extra: fail here, named, if absent)

    key = (os.getpid(), url)  # a forked child makes its own: a socket is never shared
    with _engines_guard:
        engine = _engines.get(key)
        if engine is not None:
            _engines.move_to_end(key)
            return engine
        engine = create_engine(
            "postgresql+psycopg://",
            creator=lambda: _psycopg_connect(url),
            pool_size=POOL_SIZE,
            max_overflow=POOL_OVERFLOW,
            pool_pre_ping=True,
            pool_timeout=60,
            isolation_level="AUTOCOMMIT",
        )
        _engines[key] = engine
        while len(_engines) > MAX_KEPT_STORES:
            # Connections still checked out stay usable and close when given back.
            _engines.popitem(last=False)[1].dispose()
    return engine


def dispose_engines() -> None:
    """Close every kept PostgreSQL connection of this process (tests; a process exiting closes them anyway)."""
    with _engines_guard:
        engines = list(_engines.values())
        _engines.clear()
    for engine in engines:
        engine.dispose()


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


def _first_line(exc: BaseException, url: str | None = None) -> str:
    text = str(exc) if url is None else scrub(str(exc), url)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
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
        or "connection is lost" in words
        or "connection lost" in words
    ):
        return "unreachable"
    return "other"


def describe_postgres_error(exc: BaseException, shown: str, action: str, url: str | None = None) -> str:
    """One line for a PostgreSQL failure while `action` ("opening", "storing a job"); `url`, the
    store's URL as given, is taken out of the driver's text with its password."""
    kind = postgres_kind(exc)
    detail = _first_line(exc, url)
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

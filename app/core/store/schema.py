"""The store's schema, one for SQLite and PostgreSQL, and its migrations.

Versions (the `schema_version` row of `meta`):

1. CryptoBench 0.1.0 and 0.2.0: `runs`, `jobs` (the job's results JSON in `result`), `meta`.
2. `jobs` also keeps each job's scheme, backend, mode and message size as columns, so a
   trend picks its rows with plain SQL on either database (version 1 used SQLite's
   `json_extract`, which PostgreSQL does not have, on a column PostgreSQL could not
   cast to JSON when a row is damaged), with an index on them.

`prepare` runs in the caller's transaction: on PostgreSQL, which has transactional DDL,
under an advisory lock, so two machines opening a new shared store at once never both
create it; on SQLite under BEGIN IMMEDIATE. A store whose schema is newer than this app
is refused, never downgraded. Before an SQLite store is migrated its file is copied
(`store.py`); a PostgreSQL migration is one transaction: all of it, or none.
"""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import Connection, inspect, text

SCHEMA_VERSION = 2

#: Every table and index, in both databases' common SQL (TEXT, INTEGER, BIGINT).
_TABLES = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS runs ("
    " id TEXT PRIMARY KEY, name TEXT NOT NULL, started TEXT NOT NULL, finished TEXT,"
    " status TEXT NOT NULL, pid INTEGER, host TEXT, environment TEXT NOT NULL, profile TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS jobs ("
    " id TEXT PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, status TEXT NOT NULL, result TEXT NOT NULL,"
    " scheme TEXT, backend TEXT, mode TEXT, message_size BIGINT)",
    "CREATE INDEX IF NOT EXISTS jobs_by_run ON jobs(run_id, idx)",
    "CREATE INDEX IF NOT EXISTS jobs_by_key ON jobs(scheme, backend, mode, message_size)",
)

#: The columns a job row keeps beside its JSON (schema 2), read off the job's own fields.
JOB_KEYS = ("scheme", "backend", "mode", "message_size")


class SchemaTooNew(Exception):
    """The store was written by a newer CryptoBench; str() is its schema version."""


class SchemaNeedsUpgrade(Exception):
    """An older schema in a store this user may not change; str() is its schema version."""


def job_keys(result: dict[str, Any]) -> dict[str, Any]:
    """A job's key columns from its (packed) results dict; a field of the wrong type is NULL."""
    keys: dict[str, Any] = {}
    for key in JOB_KEYS:
        value = result.get(key)
        if key == "message_size":
            ok = isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63
        else:
            ok = isinstance(value, str)
        keys[key] = value if ok else None
    return keys


def stored_version(db: Connection) -> int | None:
    """The store's schema version; None for an empty database (no `runs` table)."""
    tables = set(inspect(db).get_table_names())
    if "runs" not in tables:
        return None
    if "meta" not in tables:
        return 1
    row = db.execute(text("SELECT value FROM meta WHERE key = 'schema_version'")).fetchone()
    if row is None:
        return 1
    try:
        return int(row[0])
    except (TypeError, ValueError):  # not a version this app ever wrote
        raise SchemaTooNew(repr(row[0])) from None


def prepare(db: Connection, *, may_write: bool) -> tuple[int | None, int]:
    """Create the schema in an empty database, or migrate an older one; (found, now) versions.
    SchemaTooNew for a newer store, SchemaNeedsUpgrade for an old one that `may_write` forbids."""
    found = stored_version(db)
    if found is not None and found > SCHEMA_VERSION:
        raise SchemaTooNew(str(found))
    if found == SCHEMA_VERSION:
        return found, found
    if not may_write:
        if found is None:
            return None, SCHEMA_VERSION  # nothing to read yet: the caller says so
        raise SchemaNeedsUpgrade(str(found))
    if found is None:
        for statement in _TABLES:
            db.execute(text(statement))
    else:
        for step in range(found, SCHEMA_VERSION):
            _MIGRATIONS[step](db)
    db.execute(
        text(
            "INSERT INTO meta(key, value) VALUES ('schema_version', :v) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value"
        ),
        {"v": str(SCHEMA_VERSION)},
    )
    return found, SCHEMA_VERSION


def _from_1(db: Connection) -> None:
    """1 -> 2: the job key columns, filled from each row's JSON (a damaged row gets NULLs and
    stays as it is, still named by `Store.damaged_rows`), and their index."""
    db.execute(text("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)"))
    for column, kind in (("scheme", "TEXT"), ("backend", "TEXT"), ("mode", "TEXT"), ("message_size", "BIGINT")):
        db.execute(text(f"ALTER TABLE jobs ADD COLUMN {column} {kind}"))
    updates = []
    for job_id, result in db.execute(text("SELECT id, result FROM jobs")).fetchall():
        try:
            data = json.loads(result) if isinstance(result, str | bytes) else None
        except (ValueError, RecursionError):
            data = None
        if isinstance(data, dict):
            updates.append({"id": job_id, **job_keys(data)})
    if updates:
        db.execute(
            text(
                "UPDATE jobs SET scheme = :scheme, backend = :backend, mode = :mode, "
                "message_size = :message_size WHERE id = :id"
            ),
            updates,
        )
    db.execute(text(_TABLES[-1]))


_MIGRATIONS = {1: _from_1}

#: Schema 1 exactly as 0.1.0 and 0.2.0 created it (tests build old stores from it).
SCHEMA_1 = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS runs ("
    " id TEXT PRIMARY KEY, name TEXT NOT NULL, started TEXT NOT NULL, finished TEXT,"
    " status TEXT NOT NULL, pid INTEGER, host TEXT, environment TEXT NOT NULL, profile TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS jobs ("
    " id TEXT PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, status TEXT NOT NULL, result TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS jobs_by_run ON jobs(run_id, idx)",
)

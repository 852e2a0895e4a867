"""The store's schema, one for SQLite and PostgreSQL, and its migrations.

Versions (the `schema_version` row of `meta`):

1. CryptoBench 0.1.0 and 0.2.0: `runs`, `jobs` (the job's results JSON in `result`), `meta`.
2. `jobs` also keeps each job's scheme, backend, mode and message size as columns, so a
   trend picks its rows with plain SQL on either database (version 1 used SQLite's
   `json_extract`, which PostgreSQL does not have, on a column PostgreSQL could not
   cast to JSON when a row is damaged), with an index on them.
3. Columns beside the JSON that the listing, the trend and the duplicate check read
   (store/columns.py): `runs.started_at` and `finished_at`, UTC instants (TIMESTAMP WITH
   TIME ZONE on PostgreSQL), so runs list in the order they started whatever offset their
   times were written with; `runs.brief`, what a trend shows of a run's environment;
   `runs.heartbeat`, the lease a run's writer renews (store/liveness.py); `jobs.identity`
   (the job's `match_key`) and `jobs.figures` (each metric's n, median and interval), so
   a trend reads no job's JSON. Indexes on the start, the status, the identity and each
   run's job statuses (the listing's counts).

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

SCHEMA_VERSION = 3

#: The indexes schema 3 adds: the listing's order, the running runs, a job's trend, the
#: listing's job counts (read from the index alone). `{listed}` and `{trended}` are the
#: columns the listing and a trend read, which SQLite's indexes carry too, so that neither
#: reads a row: a run's row holds its environment and profile, a job's its result, a page
#: or more each, and the trend's query took 69 ms of CPU at 10,000 runs, 43 ms with them.
#: PostgreSQL keeps those values out of its rows (TOAST), and limits an index entry to
#: about 2.7 kB, which a long host name or many metrics would pass: its indexes are plain.
_INDEXES_3 = (
    "CREATE INDEX IF NOT EXISTS runs_by_start ON runs(started_at, id{listed})",
    "CREATE INDEX IF NOT EXISTS runs_by_status ON runs(status)",
    "CREATE INDEX IF NOT EXISTS jobs_by_identity ON jobs(identity{trended})",
    "CREATE INDEX IF NOT EXISTS jobs_status_by_run ON jobs(run_id, status)",
)


def _dialect_sql(db: Connection, statement: str) -> str:
    """A statement of `_TABLES` or `_INDEXES_3` as this database takes it."""
    sqlite = db.dialect.name == "sqlite"
    return (
        statement.replace("{instant}", _instant_type(db))
        .replace("{listed}", ", name, started, finished, status, host" if sqlite else "")
        .replace("{trended}", ", run_id, idx, id, status, backend, mode, figures" if sqlite else "")
    )


#: The tables of schema 3, in both databases' common SQL (TEXT, INTEGER, BIGINT); `{instant}`
#: is TIMESTAMP WITH TIME ZONE on PostgreSQL, UTC text on SQLite (`_instant_type`), `{name}`
#: the table's name (an SQLite migration builds them under another first). The large JSON
#: columns come last: SQLite reads a row's columns in order, through the overflow pages of
#: any large one before, and the listing and a trend read only the small ones (a third of
#: the time at 3,000 runs). PostgreSQL keeps large values out of the row (TOAST) anyway.
_RUNS = (
    "CREATE TABLE IF NOT EXISTS {name} ("
    " id TEXT PRIMARY KEY, name TEXT NOT NULL, started TEXT NOT NULL, finished TEXT,"
    " status TEXT NOT NULL, pid INTEGER, host TEXT,"
    " started_at {instant}, finished_at {instant}, heartbeat {instant}, brief TEXT,"
    " environment TEXT NOT NULL, profile TEXT NOT NULL)"
)
_JOBS = (
    "CREATE TABLE IF NOT EXISTS {name} ("
    " id TEXT PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " idx INTEGER NOT NULL, status TEXT NOT NULL,"
    " scheme TEXT, backend TEXT, mode TEXT, message_size BIGINT, identity TEXT, figures TEXT,"
    " result TEXT NOT NULL)"
)
_RUN_COLUMNS = "id, name, started, finished, status, pid, host, environment, profile"
_JOB_COLUMNS = "id, run_id, idx, status, result, scheme, backend, mode, message_size"
_INDEXES_2 = (
    "CREATE INDEX IF NOT EXISTS jobs_by_run ON jobs(run_id, idx)",
    "CREATE INDEX IF NOT EXISTS jobs_by_key ON jobs(scheme, backend, mode, message_size)",
)
_TABLES = (
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    _RUNS.replace("{name}", "runs"),
    _JOBS.replace("{name}", "jobs"),
    *_INDEXES_2,
    *_INDEXES_3,
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


def _instant_type(db: Connection) -> str:
    return "TIMESTAMP WITH TIME ZONE" if db.dialect.name == "postgresql" else "TEXT"


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
            db.execute(text(_dialect_sql(db, statement)))
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
    db.execute(text(_INDEXES_2[-1]))


def _from_2(db: Connection) -> None:
    """2 -> 3: the columns of store/columns.py, filled from each row's JSON (a damaged row
    gets NULLs, stays as it is, and is still named by `Store.damaged_rows`), and their indexes."""
    from app.core.store.columns import instant, run_brief
    from app.core.store.rows import light_job

    postgres = db.dialect.name == "postgresql"
    if postgres:
        for column in ("started_at", "finished_at", "heartbeat"):
            db.execute(text(f"ALTER TABLE runs ADD COLUMN {column} {_instant_type(db)}"))
        db.execute(text("ALTER TABLE runs ADD COLUMN brief TEXT"))
        for column in ("identity", "figures"):
            db.execute(text(f"ALTER TABLE jobs ADD COLUMN {column} TEXT"))
    else:
        _rebuild_sqlite_tables(db)
    runs = []
    for run_id, started, finished, environment, profile in db.execute(
        text("SELECT id, started, finished, environment, profile FROM runs")
    ).fetchall():
        blocks = [_decoded(environment), _decoded(profile)]
        runs.append(
            {
                "id": run_id,
                "started_at": instant(started, postgres=postgres),
                "finished_at": instant(finished, postgres=postgres),
                "brief": run_brief(*blocks) if all(isinstance(b, dict) for b in blocks) else None,
            }
        )
    if runs:
        db.execute(
            text("UPDATE runs SET started_at = :started_at, finished_at = :finished_at, brief = :brief WHERE id = :id"),
            runs,
        )
    jobs = []
    for job_id, result in db.execute(text("SELECT id, result FROM jobs")).fetchall():
        columns = light_job(result)
        if columns is not None:
            jobs.append({"id": job_id, **columns})
    if jobs:
        db.execute(text("UPDATE jobs SET identity = :identity, figures = :figures WHERE id = :id"), jobs)
    for statement in _INDEXES_3:
        db.execute(text(_dialect_sql(db, statement)))


def _rebuild_sqlite_tables(db: Connection) -> None:
    """SQLite: both tables made again with schema 3's columns in schema 3's order (the large
    JSON last, `_RUNS`), rows copied, the old ones dropped. SQLite adds a column only at the
    end, after the large ones. The caller turned foreign keys off (outside the transaction,
    the only place SQLite allows it): dropping `runs` with them on deletes every job."""
    if db.execute(text("PRAGMA foreign_keys")).scalar():
        raise RuntimeError("the store's foreign keys must be off while its tables are rebuilt")
    instant_type = _instant_type(db)
    for table, ddl, columns in (("runs", _RUNS, _RUN_COLUMNS), ("jobs", _JOBS, _JOB_COLUMNS)):
        db.execute(text(ddl.replace("{name}", f"{table}_v3").replace("{instant}", instant_type)))
        db.execute(text(f"INSERT INTO {table}_v3 ({columns}) SELECT {columns} FROM {table}"))
    db.execute(text("DROP TABLE jobs"))
    db.execute(text("DROP TABLE runs"))
    for table in ("runs", "jobs"):
        db.execute(text(f"ALTER TABLE {table}_v3 RENAME TO {table}"))
    for statement in _INDEXES_2:
        db.execute(text(statement))
    if db.execute(text("PRAGMA foreign_key_check")).first() is not None:  # never: the rows are the same
        raise RuntimeError("rebuilding the store's tables left a job without its run")


def _decoded(value: Any) -> Any:
    try:
        return json.loads(value) if isinstance(value, str | bytes) else None
    except (ValueError, RecursionError):
        return None


_MIGRATIONS = {1: _from_1, 2: _from_2}

#: Schema 2 exactly as the release before schema 3 created it (tests build old stores from it).
SCHEMA_2 = (
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

"""How the results store is opened: read-write where it can be written, else read-only.

A store the user cannot write (a copy on read-only media, another user's file, a folder
without write permission) used to fail every command, reading ones too: opening it
switched the journal mode, created the tables and marked stale runs interrupted, and
`history` ended in "attempt to write a readonly database". Such a store is now opened
with SQLite's `mode=ro`, every reading command and the window's History browse it, and a
write (a run, an import, a delete) is refused with `StoreReadOnlyError`, which says so.

Writable means the file and its folder both are: SQLite creates its -wal, -shm and
-journal files beside the store. As root, `os.access` answers yes for almost anything;
a write that still fails (a read-only mount) comes back from SQLite as SQLITE_READONLY,
which `read_only_error` words the same way.
"""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from pathlib import Path


def writable(path: Path) -> bool:
    """Whether the store at `path` can be written (or created): the file, when it exists,
    and the folder it is in (for SQLite's side files, or for the new file)."""
    try:
        if path.exists() and not os.access(path, os.W_OK):
            return False
        folder = path.parent if str(path.parent) else Path(".")
        while not folder.exists() and folder != folder.parent:  # the data folder is made on first use
            folder = folder.parent
        return os.access(folder, os.W_OK)
    except (OSError, ValueError):  # a name too long, a NUL: opening it says why
        return True


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection to an existing store.

    `mode=ro` first: SQLite still uses the -shm file of a WAL store when it can. Where it
    cannot create one (a read-only folder, no -shm left beside the file), reading a WAL
    store is only possible as `immutable=1`, which tells SQLite that no one changes the
    file meanwhile: true enough where no one can write its folder either.
    """
    uri = "file:" + urllib.parse.quote(str(path.absolute()))
    db = None
    try:  # SQLite opens lazily: the failure may come at the first read
        db = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=10, isolation_level=None, check_same_thread=False)
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.OperationalError:
        if db is not None:
            db.close()
    return sqlite3.connect(
        f"{uri}?mode=ro&immutable=1", uri=True, timeout=10, isolation_level=None, check_same_thread=False
    )


def is_read_only_error(exc: sqlite3.Error) -> bool:
    """SQLite's "attempt to write a readonly database" (SQLITE_READONLY and its variants)."""
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF == sqlite3.SQLITE_READONLY
    return "readonly" in str(exc)


def read_only_message(path: Path, action: str) -> str:
    return (
        f"{path}: the results store is read-only (this user cannot write the file or its folder), so {action} "
        "is not possible; reading it still works (history, show, compare, report)"
    )

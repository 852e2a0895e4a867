"""The store's errors: one family, so a face catches StoreError alone."""

from __future__ import annotations

from app.core.errors import CryptoBenchError


class StoreError(CryptoBenchError):
    """The store cannot be opened, read or written; the message names the file.

    Every `sqlite3.Error` a store method meets comes out as one of these (reading a
    damaged page, a locked file, a full disk), so a face catches StoreError alone."""


class StoreReadOnlyError(StoreError):
    """A write to a store this user can only read (`store.access`); the message says what
    was refused and that reading still works."""


class StoreUnreachable(StoreError):
    """A PostgreSQL server that cannot be reached (down, a wrong host or port, a network
    gone): a run goes on without it and keeps its results in a file (`unstored`)."""


class BrokenStoreError(StoreError):
    """The file is there but is not a store this version can use (corrupted, another
    program's SQLite file, or a newer schema). `move_aside` keeps it and frees the
    name, so the app can start a new store instead of failing on every start."""


class RunNotFound(StoreError):
    """No stored run has this id (or id prefix); the message names the id and the store."""


class AmbiguousRunId(RunNotFound):
    """The id prefix names several runs: a face treats it as "not found", the message
    says how many match."""

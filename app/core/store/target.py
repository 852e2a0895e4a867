"""Where the results store is: an SQLite file (a plain path) or a PostgreSQL database (a URL).

`--store`, `CRYPTOBENCH_STORE` and the window's Preferences all name a store the same
way: `postgresql://...` (or `postgres://...`) is PostgreSQL, anything else is the path
of an SQLite file. A URL is handed to libpq as written, so everything libpq reads
applies: `PGPASSWORD`, `~/.pgpass`, `service=` and `~/.pg_service.conf`, `sslmode=`,
`host=/a/socket/folder` (docs/shared-store.md).

A password is never shown or saved: `StoreTarget.shown` (every message, title, log line
and listing) drops one from the URL, and the window's Preferences refuse a URL that
carries one (`password_problem`), so none reaches the settings file. A password in
`--store` or `CRYPTOBENCH_STORE` still connects (libpq reads it) but appears nowhere.
"""

from __future__ import annotations

import os
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

#: URL schemes that name a PostgreSQL store; `postgresql+psycopg` is SQLAlchemy's spelling.
POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")
#: libpq parameters that hold a secret: dropped from every URL that is shown.
_SECRET_PARAMS = frozenset({"password", "sslpassword"})


def is_postgres_url(text: str) -> bool:
    scheme, sep, _ = text.partition("://")
    return bool(sep) and scheme.lower() in POSTGRES_SCHEMES


def _split(url: str) -> urllib.parse.SplitResult:
    return urllib.parse.urlsplit(url)


def _userinfo(netloc: str) -> tuple[str | None, str]:
    """(user[:password] or None, hosts): split at the last "@", so a password holding an
    unescaped "@" (which libpq would refuse) still never shows."""
    if "@" not in netloc:
        return None, netloc
    userinfo, hosts = netloc.rsplit("@", 1)
    return userinfo, hosts


def has_password(url: str) -> bool:
    """Whether a PostgreSQL URL carries a password (user:PASSWORD@ or ?password=)."""
    parts = _split(url)
    userinfo, _ = _userinfo(parts.netloc)
    if userinfo is not None and ":" in userinfo:
        return True
    return any(key.lower() in _SECRET_PARAMS for key, _ in urllib.parse.parse_qsl(parts.query, keep_blank_values=True))


def without_password(url: str) -> str:
    """The URL with any password taken out: the only form of a URL that is shown or saved."""
    parts = _split(url)
    userinfo, hosts = _userinfo(parts.netloc)
    netloc = hosts if userinfo is None else f"{userinfo.split(':', 1)[0]}@{hosts}"
    query = [
        (k, v)
        for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        if k.lower() not in _SECRET_PARAMS
    ]
    # Joined by hand: urlunsplit drops the "//" of a URL with no host (a unix socket's).
    encoded = urllib.parse.urlencode(query, safe="/:,")
    return (
        f"{parts.scheme}://{netloc}{parts.path}"
        + (f"?{encoded}" if encoded else "")
        + (f"#{parts.fragment}" if parts.fragment else "")
    )


def libpq_url(url: str) -> str:
    """The URL as libpq takes it (`postgresql://`; SQLAlchemy's `+psycopg` dropped)."""
    scheme, _, rest = url.partition("://")
    return f"postgresql://{rest}" if scheme.lower() in POSTGRES_SCHEMES else url


def sslmode_of(url: str) -> str:
    """The sslmode the URL asks for, else `PGSSLMODE`, else libpq's default ("prefer")."""
    for key, value in urllib.parse.parse_qsl(_split(url).query):
        if key.lower() == "sslmode":
            return value
    return os.environ.get("PGSSLMODE") or "prefer"


def password_problem(text: str) -> str | None:
    """Why a store the user typed cannot be saved as it is (a password in it), or None."""
    if is_postgres_url(text.strip()) and has_password(text.strip()):
        return (
            "a password cannot be saved with the store: remove it from the URL and give it to "
            "PostgreSQL through PGPASSWORD, ~/.pgpass or a service file"
        )
    return None


@dataclass(frozen=True)
class StoreTarget:
    """One store: `path` for SQLite, `url` for PostgreSQL (as given; may hold a password,
    so it is never printed: `shown` is)."""

    path: Path | None = None
    url: str | None = None

    @property
    def is_postgres(self) -> bool:
        return self.url is not None

    @property
    def shown(self) -> str:
        """How messages, titles and listings name the store: a path, or the URL without password."""
        return without_password(self.url) if self.url is not None else str(self.path)

    def __str__(self) -> str:
        return self.shown


StoreLike = StoreTarget | Path | str


def store_target(value: StoreLike | None) -> StoreTarget:
    """A store from what a user gave: a URL, a path, or None for the default (`default_store`)."""
    if value is None:
        return default_store()
    if isinstance(value, StoreTarget):
        return value
    if isinstance(value, str) and is_postgres_url(value.strip()):
        return StoreTarget(url=value.strip())
    return StoreTarget(path=Path(value))


def default_store() -> StoreTarget:
    """`$CRYPTOBENCH_STORE` when set (a path or a URL), else the SQLite file in the data folder."""
    from app.core.store.paths import default_store_path

    named = os.environ.get("CRYPTOBENCH_STORE", "").strip()
    if named:
        return store_target(named)
    return StoreTarget(path=default_store_path())

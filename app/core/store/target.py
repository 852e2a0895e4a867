"""Where the results store is: an SQLite file (a plain path) or a PostgreSQL database (a URL).

`--store`, `CRYPTOBENCH_STORE` and the window's Preferences all name a store the same
way: `postgresql://...` (or `postgres://...`) is PostgreSQL, anything else is the path
of an SQLite file. A URL is handed to libpq as written, so everything libpq reads
applies: `PGPASSWORD`, `~/.pgpass`, `service=` and `~/.pg_service.conf`, `sslmode=`,
`host=/a/socket/folder` (docs/shared-store.md).

A password is never shown or saved: `StoreTarget.shown` (every message, title, log line
and listing) drops one from the URL, and the window's Preferences refuse a URL that
carries one (`password_problem`), so none reaches the settings file. A password in
`--store` or `CRYPTOBENCH_STORE` still connects (libpq reads it) but appears nowhere:
not even inside the driver's own messages, which quote the URL, or the part of it they
could not parse (`scrub`); a URL libpq would misread (a `%` that is not percent-encoding,
a second `@`, a space, an IPv6 address without its closing bracket) is refused in one
line before it is handed over (`url_problem`), since libpq's message would quote it.
"""

from __future__ import annotations

import os
import re
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
    try:
        parts = _split(url)
    except ValueError:
        return without_password(url) != url
    userinfo, _ = _userinfo(parts.netloc)
    if userinfo is not None and ":" in userinfo:
        return True
    return any(key.lower() in _SECRET_PARAMS for key, _ in urllib.parse.parse_qsl(parts.query, keep_blank_values=True))


def without_password(url: str) -> str:
    """The URL with any password taken out: the only form of a URL that is shown or saved.
    Never raises: a URL Python cannot split (an IPv6 typo) is taken apart by hand."""
    try:
        parts = _split(url)
    except ValueError:
        return _without_password_by_hand(url)
    return _without_password(parts)


def _without_password_by_hand(url: str) -> str:
    scheme, _, rest = url.partition("://")
    cut = min((i for i in (rest.find("/"), rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
    netloc, tail = rest[:cut], rest[cut:]
    userinfo, hosts = _userinfo(netloc)
    if userinfo is not None:
        netloc = f"{userinfo.split(':', 1)[0]}@{hosts}"
    tail = re.sub(r"(?i)([?&])(?:ssl)?password=[^&#]*&?", r"\1", tail).replace("?&", "?").rstrip("?&")
    return f"{scheme}://{netloc}{tail}"


def _without_password(parts: urllib.parse.SplitResult) -> str:
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


def _secrets(url: str) -> list[str]:
    """Every password the URL may hold, as written and percent-decoded, longest first: the
    user info split at its first and at its last "@" (libpq splits at the first), and the
    query's password parameters."""
    _, _, rest = url.partition("://")
    netloc = rest.split("/", 1)[0].split("?", 1)[0]
    found: set[str] = set()
    for userinfo in (netloc.split("@", 1)[0] if "@" in netloc else None, _userinfo(netloc)[0]):
        if userinfo is not None and ":" in userinfo:
            found.add(userinfo.split(":", 1)[1])
    for match in re.finditer(r"(?i)(?:^|[?&])(?:ssl)?password=([^&#]*)", rest.partition("?")[2]):
        found.add(match.group(1))
    found |= {urllib.parse.unquote(secret) for secret in found}
    return sorted((secret for secret in found if secret), key=len, reverse=True)


def scrub(text: str, url: str) -> str:
    """`text` (a driver's message) with the URL as given shown without its password, and any
    password the URL holds taken out wherever else it appears."""
    text = text.replace(url, without_password(url))
    for secret in _secrets(url):
        text = text.replace(secret, "(password)")
    return text


def url_problem(url: str) -> str | None:
    """Why libpq would misread this PostgreSQL URL, in words that quote no part of it; None if
    it would not. libpq's own messages quote what they cannot parse, password and all."""
    _, _, rest = url.partition("://")
    netloc = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    if re.search(r"\s", url):
        return "the URL holds a space or another blank; write a space in a value as %20"
    if re.search(r"%(?![0-9A-Fa-f]{2})", url):
        return 'the URL holds a "%" that is not percent-encoding; write a "%" in a value as %25'
    if netloc.count("@") > 1:
        return 'the URL holds more than one "@" before its host; write an "@" in the user name or password as %40'
    try:
        _split(url)
    except ValueError:
        return "the URL's host is not valid (an IPv6 address goes in brackets: postgresql://USER@[::1]:5432/DB)"
    for host in _userinfo(netloc)[1].split(","):  # libpq takes several hosts, comma-separated
        if ("[" in host or "]" in host) and not re.fullmatch(r"\[[0-9A-Za-z:.%]+\](?::[0-9]*)?", host):
            return "the URL's host is not valid (an IPv6 address goes in brackets: postgresql://USER@[::1]:5432/DB)"
    return None


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

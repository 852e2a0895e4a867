"""Naming a store: a path or a postgresql:// URL, and a URL's password never shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.store.target import (
    default_store,
    has_password,
    is_postgres_url,
    password_problem,
    sslmode_of,
    store_target,
    without_password,
)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://bench:s3cret@db.lab/cb", "postgresql://bench@db.lab/cb"),
        (
            "postgresql://bench:s3cret@db.lab:5433/cb?sslmode=require",
            "postgresql://bench@db.lab:5433/cb?sslmode=require",
        ),
        ("postgres://bench:p@ss@db/cb", "postgres://bench@db/cb"),  # an unescaped "@" in it
        (
            "postgresql://bench@db/cb?password=s3cret&sslmode=verify-full",
            "postgresql://bench@db/cb?sslmode=verify-full",
        ),
        ("postgresql://db/cb?sslpassword=s3cret", "postgresql://db/cb"),
        ("postgresql://bench@db1:5432,db2:5432/cb", "postgresql://bench@db1:5432,db2:5432/cb"),
        ("postgresql:///cb?host=/run/postgresql", "postgresql:///cb?host=/run/postgresql"),
    ],
)
def test_a_password_is_never_in_the_shown_url(url: str, shown: str) -> None:
    assert without_password(url) == shown
    assert str(store_target(url)) == shown
    assert "s3cret" not in shown and "ss@" not in shown
    assert has_password(url) == (url != shown)
    assert (password_problem(url) is not None) == has_password(url)


def test_paths_and_urls(monkeypatch: pytest.MonkeyPatch, isolated_home: Path) -> None:
    assert is_postgres_url("postgresql://x/y") and is_postgres_url("POSTGRES://x/y")
    assert not is_postgres_url("results.sqlite3") and not is_postgres_url("sqlite:///x")
    assert store_target("a/b.sqlite3").path == Path("a/b.sqlite3")
    assert store_target(" postgresql://x/y ").url == "postgresql://x/y"
    assert default_store().path == isolated_home / "results.sqlite3"
    monkeypatch.setenv("CRYPTOBENCH_STORE", "postgresql://bench@db/cb")
    assert default_store().url == "postgresql://bench@db/cb"
    assert store_target(None).is_postgres


def test_sslmode_is_read_as_libpq_reads_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PGSSLMODE", raising=False)
    assert sslmode_of("postgresql://db/cb") == "prefer"
    monkeypatch.setenv("PGSSLMODE", "require")
    assert sslmode_of("postgresql://db/cb") == "require"
    assert sslmode_of("postgresql://db/cb?sslmode=verify-full") == "verify-full"


@pytest.mark.parametrize(
    ("url", "secret", "said"),
    [
        ("postgresql://bench:se%cret@db/x", "se%cret", "not percent-encoding"),
        ("postgresql://bench:p@ss@db/x", "p@ss", 'more than one "@"'),
        ("postgresql://bench@db/x?password=s%zzz", "s%zzz", "not percent-encoding"),
        ("postgresql://bench:s3cr3t@[::1/x", "s3cr3t", "IPv6 address goes in brackets"),
        ("postgresql://bench:s3cr3t@[::1]x:5/x", "s3cr3t", "IPv6 address goes in brackets"),
        ("postgresql://bench:pa ss@db/x", "pa ss", "a space"),
    ],
)
def test_a_url_libpq_would_misread_is_named_without_quoting_it(url: str, secret: str, said: str) -> None:
    from app.core.store.target import url_problem, without_password

    problem = url_problem(url)
    assert problem is not None and said in problem and secret not in problem
    assert secret not in without_password(url) and without_password(url).startswith("postgresql://bench@")


def test_a_well_formed_url_has_no_problem_and_a_drivers_text_loses_the_password() -> None:
    from app.core.store.target import scrub, url_problem

    for url in (
        "postgresql://bench@db.lab.example/cryptobench?sslmode=verify-full",
        "postgresql://bench:s%40cret@[::1]:5432/x",
        "postgresql://bench@/x?host=%2Ftmp%2Fsock&port=5432",
    ):
        assert url_problem(url) is None, url
    url = "postgresql://bench:s%40cret@db/x?sslpassword=k3y"
    said = f'invalid URI "{url}": s@cret and s%40cret and k3y'
    assert scrub(said, url) == 'invalid URI "postgresql://bench@db/x": (password) and (password) and (password)'

"""The throwaway PostgreSQL server of the test session (tests/helpers/postgres.py): where it is
missing the tests skip with the reason; as root it runs as an unprivileged user; it listens
in its own folder and on its own port, never the machine's server."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest

from tests.helpers import postgres


def test_without_initdb_the_reason_names_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("psycopg")
    monkeypatch.setattr(postgres.shutil, "which", lambda name: None)
    monkeypatch.setattr(postgres.glob, "glob", lambda pattern: [])
    assert postgres.find_bin() is None
    assert postgres.find_problem() == (
        "PostgreSQL's initdb/pg_ctl not found (Debian/Ubuntu: apt-get install postgresql)"
    )


def test_debian_s_versioned_folder_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postgres.shutil, "which", lambda name: None)
    found = ["/usr/lib/postgresql/9/bin/initdb", "/usr/lib/postgresql/16/bin/initdb"]
    monkeypatch.setattr(postgres.glob, "glob", lambda pattern: found)
    assert postgres.find_bin() == Path("/usr/lib/postgresql/16/bin")  # the newest, by number


@pytest.mark.xdist_group("postgres")
def test_the_server_is_its_own_and_never_root(postgres_cluster: postgres.Cluster) -> None:
    pid = int((postgres_cluster.folder / "data" / "postmaster.pid").read_text().split()[0])
    server = psutil.Process(pid)
    assert server.uids().real != 0
    if os.geteuid() == 0:
        assert postgres_cluster.user is not None and server.uids().real == postgres_cluster.user.pw_uid
    sockets = list(postgres_cluster.socket_dir.glob(".s.PGSQL.*"))
    assert sorted(s.name for s in sockets) == [
        f".s.PGSQL.{postgres_cluster.port}",
        f".s.PGSQL.{postgres_cluster.port}.lock",
    ]
    assert postgres_cluster.port != 5432


@pytest.mark.xdist_group("postgres")
def test_a_cluster_whose_session_died_is_reaped(postgres_cluster: postgres.Cluster) -> None:
    """A session killed before its teardown leaves its server running; the next one stops it."""
    import subprocess
    import sys

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    orphan = postgres.start_cluster()
    (orphan.folder / postgres.OWNER).write_text(str(dead.pid))  # as if that session had started it
    pid = int((orphan.folder / "data" / "postmaster.pid").read_text().split()[0])
    postgres.reap_orphans()
    assert not orphan.folder.exists()
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    assert (postgres_cluster.folder / "data").is_dir()  # the live session's own is left alone

"""A throwaway PostgreSQL server for the test session (the `postgres` fixture, tests/conftest.py).

`initdb` makes a cluster in a new temporary folder; `pg_ctl` starts it listening on a unix
socket in that folder and on 127.0.0.1 at a free port, never the machine's own server;
the session's end stops it (`-m immediate`) and removes the folder. One cluster serves
the whole session; each test gets a database of its own (`Cluster.new_database`). A test
may stop the server and start it again (`halt`, `resume`; `halted` stops it for a block and
always starts it again), as a server going away mid-run or restarting would.

PostgreSQL refuses to run as root, and CI runs as root: there the server's programs run
as an unprivileged user (`postgres` when it exists, else `nobody`) through subprocess's
`user=`/`group=`, and the folder is given to that user. Where the programs are missing
(no `initdb` on PATH nor in /usr/lib/postgresql/N/bin) or psycopg is not installed,
`find_problem` says why, and the tests that need the server skip with that reason.
Debian/Ubuntu: `apt-get install postgresql` (README, "System packages").
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ADMIN = "cbadmin"
#: The password of the `writer` role made for tests of password logins over TCP.
WRITER_PASSWORD = "writer-secret-7"


def find_bin() -> Path | None:
    """The folder of initdb and pg_ctl: PATH first, then Debian's /usr/lib/postgresql/N/bin."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).parent
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    return Path(versions[-1]).parent if versions else None


def find_problem() -> str | None:
    """Why no server can be started here, or None."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -e '.[postgres]')"
    if find_bin() is None:
        return "PostgreSQL's initdb/pg_ctl not found (Debian/Ubuntu: apt-get install postgresql)"
    if os.geteuid() == 0 and _unprivileged() is None:
        return "running as root and no unprivileged user (postgres, nobody) to run PostgreSQL as"
    return None


def _unprivileged() -> pwd.struct_passwd | None:
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Cluster:
    folder: Path
    bin: Path
    port: int
    user: pwd.struct_passwd | None
    databases: list[str] = field(default_factory=list)
    options: str = ""

    @property
    def socket_dir(self) -> Path:
        return self.folder / "sock"

    def url(self, database: str = "postgres", user: str = ADMIN, *, tcp: bool = False) -> str:
        """A URL to `database` as `user`: over the unix socket (trusted), or TCP (a password login)."""
        if tcp:
            return f"postgresql://{user}@127.0.0.1:{self.port}/{database}?sslmode=disable"
        host = urllib.parse.quote(str(self.socket_dir), safe="")
        return f"postgresql://{user}@/{database}?host={host}&port={self.port}"

    def admin(self, database: str = "postgres") -> Any:
        import psycopg

        return psycopg.connect(self.url(database), autocommit=True)

    def new_database(self, name: str) -> str:
        """A fresh empty database; its admin URL."""
        with self.admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        self.databases.append(name)
        return self.url(name)

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        kwargs: dict[str, Any] = {}
        if self.user is not None:
            kwargs.update(user=self.user.pw_uid, group=self.user.pw_gid, extra_groups=[])
        return subprocess.run(
            [str(self.bin / args[0]), *args[1:]],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
            cwd=self.folder,
            env={**os.environ, "LC_ALL": "C", "TZ": "UTC"},
            **kwargs,
        )

    def start(self, *, durable: bool = False) -> None:
        """initdb and start; `durable` keeps PostgreSQL's own fsync settings (benchmarks),
        else fsync is off (tests: a throwaway cluster needs no crash safety)."""
        data = self.folder / "data"
        self.socket_dir.mkdir(mode=0o755)
        if self.user is not None:
            for path in (self.folder, self.socket_dir):
                os.chown(path, self.user.pw_uid, self.user.pw_gid)
        done = self._run(
            "initdb", "-D", str(data), "-U", ADMIN, "-E", "UTF8", "--no-sync",
            "--auth-local=trust", "--auth-host=scram-sha-256",
        )  # fmt: skip
        if done.returncode:
            raise RuntimeError(f"initdb failed: {done.stderr or done.stdout}")
        cert, key = self._make_certificate()
        options = (
            f"-k {self.socket_dir} -p {self.port} -c listen_addresses=127.0.0.1 -c max_connections=60 "
            f"-c ssl=on -c ssl_cert_file={cert} -c ssl_key_file={key}"
        )
        if not durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self.options = options
        self.resume()
        with self.admin() as conn:
            conn.execute(f"CREATE ROLE writer LOGIN PASSWORD '{WRITER_PASSWORD}'")
            conn.execute("CREATE ROLE reader LOGIN")

    def resume(self) -> None:
        """Start the server (again), waiting until it accepts connections."""
        data = self.folder / "data"
        done = self._run("pg_ctl", "-D", str(data), "-o", self.options, "-l", str(self.folder / "log"), "-w", "start")
        if done.returncode:
            log = (self.folder / "log").read_text(errors="replace") if (self.folder / "log").exists() else ""
            raise RuntimeError(f"pg_ctl start failed: {done.stderr or done.stdout} {log[-2000:]}")

    def halt(self) -> None:
        """Stop the server as an administrator's routine restart does (`-m fast`: every session
        ended, waiting until it is down), keeping its data."""
        done = self._run("pg_ctl", "-D", str(self.folder / "data"), "-m", "fast", "-w", "stop")
        if done.returncode:
            raise RuntimeError(f"pg_ctl stop failed: {done.stderr or done.stdout}")

    @contextlib.contextmanager
    def halted(self) -> Iterator[None]:
        """The server stopped inside the block, and started again after it, whatever happens."""
        self.halt()
        try:
            yield
        finally:
            self.resume()

    def _make_certificate(self) -> tuple[Path, Path]:
        """A self-signed certificate for 127.0.0.1, so TCP connections can use TLS (sslmode tests);
        the key private to the server's user, as PostgreSQL demands."""
        import datetime

        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID

        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
        now = datetime.datetime.now(datetime.UTC)
        cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=2))
            .sign(key, hashes.SHA256())
        )
        cert_path, key_path = self.folder / "server.crt", self.folder / "server.key"
        cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        key_path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
        key_path.chmod(0o600)
        if self.user is not None:
            for path in (cert_path, key_path):
                os.chown(path, self.user.pw_uid, self.user.pw_gid)
        return cert_path, key_path

    def stop(self) -> None:
        """Stop the server (at once: nothing in it is worth keeping) and remove its folder; again is a no-op."""
        if (self.folder / "data" / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.folder / "data"), "-m", "immediate", "-w", "stop")
        shutil.rmtree(self.folder, ignore_errors=True)


PREFIX = "cbpg-"
#: The PID of the test session that owns a cluster folder, written beside its data.
OWNER = "owner.pid"


def reap_orphans() -> None:
    """Stop and remove the clusters of test sessions that died without their teardown (a
    SIGKILL, a `timeout`): their owner's PID is gone. A live session's cluster is left alone."""
    binaries = find_bin()
    for folder in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        try:
            owner = int((folder / OWNER).read_text())
        except (OSError, ValueError):
            continue
        if owner == os.getpid() or _alive(owner):
            continue
        if binaries is not None and (folder / "data").is_dir():
            user = _unprivileged() if os.geteuid() == 0 else None
            Cluster(folder, binaries, 0, user).stop()
        shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def start_cluster(*, durable: bool = False) -> Cluster:
    binaries = find_bin()
    assert binaries is not None
    reap_orphans()
    user = _unprivileged() if os.geteuid() == 0 else None
    # Not under pytest's basetemp: as root that folder is 0700 and the server's user could not enter it.
    folder = Path(tempfile.mkdtemp(prefix=PREFIX))
    (folder / OWNER).write_text(str(os.getpid()))
    cluster = Cluster(folder, binaries, _free_port(), user)
    try:
        cluster.start(durable=durable)
    except BaseException:
        cluster.stop()
        raise
    return cluster

"""The Dask scheduler a cluster load job names: whether Dask is installed here, the parts of
its address, the address this machine's load server listens on for its workers, and the
connection to it: Dask's security settings checked against the address, every stage of
connecting bounded, each failure said in one line that names the address or the setting
to fix."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import socket
import ssl
from ipaddress import ip_address
from typing import Any

from app.core.load.cluster.errors import ClusterError

#: Connecting to the scheduler (the TCP connection, Dask's handshake, the client's
#: registration), and placing and starting a generator on a worker.
CONNECT_TIMEOUT_S = 20.0
#: The Dask settings a client of a tls:// scheduler needs, as configuration keys and as the
#: environment variables that set them.
TLS_SETTINGS = (
    "distributed.comm.tls.ca-file, distributed.comm.tls.client.cert and distributed.comm.tls.client.key "
    "(DASK_DISTRIBUTED__COMM__TLS__CA_FILE, DASK_DISTRIBUTED__COMM__TLS__CLIENT__CERT, "
    "DASK_DISTRIBUTED__COMM__TLS__CLIENT__KEY)"
)
#: The files a TLS client reads: the setting that names each, and `Security`'s attribute.
_TLS_FILES = (
    ("distributed.comm.tls.ca-file", "tls_ca_file"),
    ("distributed.comm.tls.client.cert", "tls_client_cert"),
    ("distributed.comm.tls.client.key", "tls_client_key"),
)
#: The Dask setting that refuses every unencrypted comm.
REQUIRE_ENCRYPTION = "distributed.comm.require-encryption (or DASK_DISTRIBUTED__COMM__REQUIRE_ENCRYPTION)"


def cluster_missing() -> str | None:
    """Why load from many machines cannot run here (Dask distributed not installed), or None."""
    if importlib.util.find_spec("distributed") is None:
        return (
            "load from many machines places generators with Dask distributed, which is not installed: "
            "pip install 'cryptobench[cluster]' (here and on every worker)"
        )
    return None


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def is_encrypted(address: str) -> bool:
    """A Dask address whose comms are encrypted (TLS, or TLS over websockets)."""
    return address.partition("://")[0] in ("tls", "wss")


def address_host(address: str) -> str:
    """The host of a Dask address (scheme://host:port)."""
    rest = address.partition("://")[2] or address
    return rest.rpartition(":")[0].strip("[]")


def server_address_for(scheduler: str) -> str:
    """The address this machine's load server listens on for generators placed through
    `scheduler`: the loopback for a scheduler on it (then every worker is on this machine),
    else this machine's address on the route to the scheduler (no packet is sent: a UDP
    socket's connect only picks the route)."""
    host = address_host(scheduler)
    if is_loopback(host):
        return "127.0.0.1"
    port = int(scheduler.rpartition(":")[2])
    infos = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_DGRAM)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(infos[0][4])
        return str(probe.getsockname()[0])


def address_port(address: str) -> int:
    """The port of a Dask address (scheme://host:port), checked by `cluster_address` before."""
    return int(address.rpartition(":")[2])


def first_line(exc: BaseException) -> str:
    """An exception in one line of at most 300 characters (its type when it says nothing)."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


def client_security(address: str) -> Any:
    """Dask's security settings for this machine's client of `address` (distributed's
    `Security`, read from Dask's configuration), checked against it: a tls:// scheduler
    needs this client's CA, certificate and key; a configuration that requires encryption
    cannot reach a tcp:// one. Each mismatch is one ClusterError naming the setting."""
    from distributed.security import Security

    try:
        security = Security()  # type: ignore[no-untyped-call]
    except (ValueError, TypeError, ImportError) as exc:
        raise ClusterError(
            f"Dask's TLS settings cannot be used ({first_line(exc)}): check distributed.comm.tls.*"
        ) from None
    if is_encrypted(address):
        for name, attribute in _TLS_FILES:
            path = getattr(security, attribute, None)
            # A value with a newline is the PEM text itself (Dask accepts both).
            if path and "\n" not in path and not os.access(path, os.R_OK):
                raise ClusterError(f"{name} in Dask's configuration names {path!r}, which cannot be read here")
        try:
            context = security.get_connection_args("client")["ssl_context"]  # type: ignore[no-untyped-call]
        except (OSError, ssl.SSLError, ValueError) as exc:
            raise ClusterError(
                f"this machine's TLS settings for Dask cannot be loaded ({first_line(exc)}): check the files "
                f"that {TLS_SETTINGS} name"
            ) from None
        if context is None:
            raise ClusterError(
                f"the Dask scheduler at {address} speaks TLS, but this machine has no TLS settings for Dask: "
                f"set {TLS_SETTINGS} (docs/cluster.md)"
            )
    elif security.require_encryption:
        raise ClusterError(
            f"{REQUIRE_ENCRYPTION} is set in Dask's configuration here, but {address} is plain TCP: give the "
            "scheduler's tls:// address, or unset that setting"
        )
    return security


async def _handshake(address: str, security: Any, timeout: float) -> None:
    from distributed.comm.core import connect

    comm = await connect(address, timeout=timeout, **security.get_connection_args("client"))  # type: ignore[no-untyped-call]
    await comm.close()


def check_answers(address: str, security: Any, timeout: float = CONNECT_TIMEOUT_S) -> None:
    """The scheduler at `address` accepts a connection and completes Dask's handshake within
    `timeout` (Dask's own connect waits for the handshake's reply without a bound: a
    listener that accepts and never answers held a run for minutes). A ClusterError naming
    the address otherwise."""
    # A plain connect first: Dask's connect retries a refused one until its timeout.
    try:
        socket.create_connection((address_host(address), address_port(address)), timeout=timeout).close()
    except OSError as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {first_line(exc)}") from None
    try:
        asyncio.run(asyncio.wait_for(_handshake(address, security, timeout), timeout))
    except TimeoutError:
        raise ClusterError(
            f"the Dask scheduler at {address} accepted the connection but did not answer Dask's handshake within "
            f"{timeout:g} s: is a Dask scheduler listening there, and with the same comms "
            f"({address.partition('://')[0]}://)?"
        ) from None
    except (ssl.SSLError, OSError, RuntimeError, ValueError, TypeError) as exc:
        # Dask's comm errors are OSErrors; its encryption and address checks raise the others.
        raise ClusterError(connect_failure(address, exc)) from None


def connect_failure(address: str, exc: BaseException) -> str:
    """A failed connection to the scheduler in one line, with the likely cause of the comms'
    own errors: TLS settings that do not match the scheduler's, or plain TCP to a TLS one."""
    text = f"cannot connect to the Dask scheduler at {address}: {first_line(exc)}"
    if is_encrypted(address):
        return text + f" (this machine's TLS settings for Dask: {TLS_SETTINGS}, against the scheduler's CA)"
    if isinstance(exc, ConnectionError) or isinstance(exc.__cause__, ConnectionError) or "reset" in str(exc):
        return text + " (a scheduler that speaks TLS drops plain TCP: is it tls://?)"
    return text


def open_client(address: str, timeout: float = CONNECT_TIMEOUT_S) -> Any:
    """A Dask client of the scheduler at `address`, every stage bounded by `timeout`, or a
    ClusterError in one line. It becomes this process's default client: the actors'
    proxies find it by get_client()."""
    from distributed import Client

    security = client_security(address)
    check_answers(address, security, timeout)
    try:
        return Client(address, security=security, timeout=timeout)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError, RuntimeError, ValueError, TypeError) as exc:
        raise ClusterError(connect_failure(address, exc)) from None


def scheduler_lost(client: Any, address: str) -> str | None:
    """Why the scheduler at `address` is no longer there for `client`, or None while it is:
    a client that lost its scheduler stops "running" (it tries to reconnect, then closes),
    and every actor call then fails as "Worker holding Actor was lost", which names neither
    the scheduler nor what happened."""
    status = str(getattr(client, "status", "running"))
    if status in ("running", "newly-created"):
        return None
    return f"the Dask scheduler at {address} was lost (this machine's client is {status})"

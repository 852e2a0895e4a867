"""The Dask scheduler a cluster load job names: whether Dask is installed here, the parts of
its address, and the address this machine's load server listens on for its workers."""

from __future__ import annotations

import importlib.util
import socket
from ipaddress import ip_address


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

"""The two ends of tls13 connections for tests: the job's server on a port of its own in a
thread, and clients driven by hand (the job's `ClientSide`, or another TLS library)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from app.core.tls.admission import ClientHelloCheck
from app.core.tls.control import SIZE_FRAME, TlsJob, alpn_for
from app.core.tls.data import read_exact, request_for, response_for
from app.core.tls.handshake import drain
from app.core.tls.server import TlsServer
from app.core.tls.sides import ClientSide
from app.core.transport.doorway import Doorway, admit_one

TOKEN = bytes(range(32))
ALPN = alpn_for(TOKEN)
SEED = bytes(16)
SIZE = 1024
DEFAULTS = {"cipher": "TLS_AES_128_GCM_SHA256", "chain": 2, "resumption": "none", "mutual": False}


def job(group: str = "x25519", certificate: str = "ecdsa-p256", **params: Any) -> TlsJob:
    return TlsJob(params={**DEFAULTS, "group": group, "certificate": certificate, **params}, message_sizes=[SIZE])


def server(tls_job: TlsJob, timeout: float = 10.0) -> TlsServer:
    """The job's server, its size started (SIZE with `SEED`)."""
    made = TlsServer(tls_job, timeout)
    made.start_size(memoryview(SIZE_FRAME.pack(SIZE, SEED)))
    return made


class Dropped(list[str]):
    """What a doorway dropped, one line each; `any` is set at the first."""

    def __init__(self) -> None:
        super().__init__()
        self.any = threading.Event()

    def add(self, text: str) -> None:
        self.append(text)
        self.any.set()


@contextmanager
def serving(
    tls_server: TlsServer, connections: int = 1, hello_timeout: float = 5.0
) -> Iterator[tuple[int, Dropped, threading.Thread]]:
    """A thread that admits `connections` of the job's TLS connections on a fresh port (the
    doorway and ClientHello check of the job's server) and serves each; yields the port,
    what the doorway dropped, and the thread."""
    listener = socket.create_server(("127.0.0.1", 0))
    dropped = Dropped()
    door = Doorway(listener, lambda: ClientHelloCheck(ALPN), hello_timeout, dropped.add, who="TLS server")

    def run() -> None:
        for _ in range(connections):
            sock = admit_one(door, time.monotonic() + 15)
            if sock is None:
                return
            check = door.admitted_check
            assert isinstance(check, ClientHelloCheck)
            tls_server.serve(sock, check.hello)

    thread = threading.Thread(target=run)
    thread.start()
    try:
        yield listener.getsockname()[1], dropped, thread
    finally:
        thread.join(20)
        door.close()
        assert not thread.is_alive()


def client_exchange(sock: socket.socket, side: ClientSide, size: int = SIZE, seed: bytes = SEED) -> bytes:
    """Drive the job's client end over `sock`: handshake, request, response (returned), close."""
    sock.settimeout(10)
    sock.sendall(side.hello())
    while not side.done:
        data = sock.recv(65536)
        assert data, "the server closed mid-handshake"
        out = side.receive(data)
        if out and not side.done:
            sock.sendall(out)
    side.connection.sendall(request_for(seed, size))
    sock.sendall(out + drain(side.connection))
    response = read_exact(side.connection, size, lambda: sock.recv(65536))
    sock.sendall(side.close())
    return response


def expected_response(size: int = SIZE, seed: bytes = SEED) -> bytes:
    return response_for(seed, size)


def run_thread(target: Callable[[], None]) -> threading.Thread:
    thread = threading.Thread(target=target)
    thread.start()
    return thread

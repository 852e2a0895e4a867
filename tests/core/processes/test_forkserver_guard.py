"""The fork server keeps serving when a client goes away before sending its descriptors."""

from __future__ import annotations

import errno
import socket
import sys
import threading
import time
from typing import Any

import pytest

from app.core.processes import deadlines, forkserver_guard
from app.core.processes.jobstart import CHILD_PRELOAD, child_context


def test_the_guard_is_preloaded_first() -> None:
    assert CHILD_PRELOAD[0] == "app.core.processes.forkserver_guard"


def test_the_guard_installs_only_in_the_fork_server() -> None:
    assert not forkserver_guard.in_fork_server()


def test_a_vanished_client_becomes_the_abort_the_server_skips(monkeypatch: pytest.MonkeyPatch) -> None:
    from multiprocessing import reduction

    def vanished(sock: Any, size: int) -> list[int]:
        raise EOFError

    monkeypatch.setattr(reduction, "recvfds", vanished)
    monkeypatch.setattr(sys, "excepthook", sys.excepthook)  # restored after the test
    forkserver_guard.install()
    with pytest.raises(ConnectionAbortedError) as caught:
        reduction.recvfds(None, 1)
    assert caught.value.errno == errno.ECONNABORTED


def test_the_server_outlives_a_client_that_connects_and_leaves(capfd: pytest.CaptureFixture[str]) -> None:
    """What an exhausted app (or anyone who can reach the socket) does: connect, send
    nothing, close. Before: the server died with an EOFError traceback on the terminal."""
    if not sys.platform.startswith("linux"):
        pytest.skip("the fork server's start method")
    from multiprocessing import forkserver

    probe = child_context().Process(target=time.sleep, args=(0,), daemon=True)
    deadlines.start_process(probe, threading.Event())  # the server is up and serving
    probe.join(10)
    server = deadlines.fork_server_pid()
    for _ in range(3):
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(forkserver._forkserver._forkserver_address)
    after = child_context().Process(target=time.sleep, args=(0,), daemon=True)
    deadlines.start_process(after, threading.Event())
    after.join(10)
    assert after.exitcode == 0 and deadlines.fork_server_pid() == server
    err = capfd.readouterr().err
    assert "Traceback" not in err and "EOFError" not in err

"""The network side of a job going wrong: a port already taken, a server that refuses,
a peer that accepts and then says nothing, a receiver frozen mid-stream. Every wait is
bounded and ends in an error that says what happened. (Rogue *clients* against the
receiver are in tests/core/session/test_rogue_clients.py and test_server_abuse.py.)"""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from app.cli.main import main as cli_main
from app.core.contracts.events import JobProcesses, SampleBatch
from app.core.contracts.plan import JobPlan
from app.core.processes import watchdog
from app.core.profile.files import parse_profile
from app.core.run.runner import Runner
from app.core.run.supervisor import ChildSupervisor
from app.core.session.sender import SenderSession
from app.core.store.store import Store
from app.core.transport.auth import ServerNotAuthenticated
from app.core.transport.connect import RemoteTarget, connect
from app.core.transport.wire import WireError
from tests.helpers.plans import job_plan


def test_serve_on_a_port_in_use_is_a_clear_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        code = cli_main(["serve", "--port", str(port), "--token-file", str(tmp_path / "token")])
    finally:
        taken.close()
    assert code == 2
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in err and "in use" in err


def test_nothing_listening_is_refused_at_once() -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # the port is free again: nobody listens there
    started = time.monotonic()
    with pytest.raises(WireError) as info:
        connect("127.0.0.1", port, timeout=10)
    assert f"cannot connect to 127.0.0.1:{port}" in str(info.value) and "refused" in str(info.value)
    assert time.monotonic() - started < 5


@pytest.mark.parametrize(
    ("code", "words"),
    [
        ("EMFILE", "this process's open-file limit is reached: raise `ulimit -n`"),
        ("ENFILE", "the system's open-file table is full"),
    ],
)
def test_no_descriptor_for_a_connection_is_named_not_blamed_on_the_peer(
    monkeypatch: pytest.MonkeyPatch, code: str, words: str
) -> None:
    """A load generator (or a sender) out of descriptors said only "cannot connect to …":
    now the errno and the limit to raise, as a job's start names them."""
    import errno

    def exhausted(*args: Any, **kwargs: Any) -> socket.socket:
        raise OSError(getattr(errno, code), os.strerror(getattr(errno, code)))

    monkeypatch.setattr(socket, "create_connection", exhausted)
    with pytest.raises(WireError) as info:
        connect("127.0.0.1", 9, timeout=1)
    assert str(info.value).startswith("cannot open a connection to 127.0.0.1:9: ")
    assert f"({code}: {words})" in str(info.value)


class _SilentPeer:
    """Accepts one connection and reads everything, answering nothing."""

    def __init__(self) -> None:
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen()
        self.port = self.server.getsockname()[1]
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        conn, _ = self.server.accept()
        with conn:
            conn.settimeout(0.1)
            while not self.done.is_set():
                try:
                    if not conn.recv(65536):
                        return
                except TimeoutError:
                    continue

    def close(self) -> None:
        self.done.set()
        self.thread.join(5)
        self.server.close()


def test_peer_that_accepts_and_stalls_times_out_with_the_wait_named() -> None:
    peer = _SilentPeer()
    plan = job_plan(
        "sha256",
        "cryptography",
        {},
        [64],
        samples=3,
        warmup=0,
        keygen_samples=0,
        pause_ms=0,
        tamper=0,
        host="127.0.0.1",
        port=peer.port,
        token=os.urandom(32),
        connect_timeout=0.5,
    )
    started = time.monotonic()
    try:
        with connect("127.0.0.1", peer.port, plan.session_peer().connect_timeout) as sock:
            with pytest.raises(ServerNotAuthenticated) as info:
                SenderSession(sock, plan, lambda event: None).run()
    finally:
        peer.close()
    assert "sent no challenge within 0.5 s" in str(info.value)
    assert time.monotonic() - started < 5


@pytest.mark.skipif(sys.platform == "win32", reason="SIGSTOP is POSIX")
def test_receiver_frozen_mid_stream_fails_its_job_after_the_reply_timeout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A receiver that stops answering (SIGSTOP: socket open, nothing read or sent). The
    sender's wait for an acknowledgement is bounded (2 s here, 600 s by default because an
    ElGamal-4096 open of a large message takes minutes), the job fails saying so, the
    frozen process is killed, and the next job runs."""
    original = ChildSupervisor.session_plan

    def short_wait(self: Any, host: str, port: int, token: bytes, **options: Any) -> JobPlan:
        plan = original(self, host, port, token, **options)
        return dataclasses.replace(plan, peer=dataclasses.replace(plan.session_peer(), reply_timeout=2.0))

    monkeypatch.setattr(ChildSupervisor, "session_plan", short_wait)
    # The watch would kill a receiver stopped for 3 s and name that first: this test is of
    # the sender's own bounded wait (a receiver that stops answering without being stopped).
    monkeypatch.setattr(watchdog, "FROZEN_SECONDS", 60.0)
    pids: dict[str, int] = {}
    frozen: list[int] = []

    def on_event(event: Any) -> None:
        if isinstance(event, JobProcesses) and event.job_index == 0:
            pids.update(event.pids)
        if isinstance(event, SampleBatch) and event.job_index == 0 and not frozen:
            os.kill(pids["receiver"], signal.SIGSTOP)
            frozen.append(pids["receiver"])

    profile = parse_profile(
        {
            "name": "frozen",
            "jobs": [
                {"scheme": "x25519", "mode": "loopback", "message_sizes": [1024], "samples": 1_000_000, "warmup": 0},
                {"scheme": "sha256", "message_sizes": [64], "samples": 3, "warmup": 0},
            ],
        }
    )
    started = time.monotonic()
    with Store(tmp_path / "r.sqlite3") as store:
        run = Runner(profile, store=store, on_event=on_event).run()
    assert frozen
    assert [job.status for job in run.jobs] == ["failed", "ok"]
    assert "within 2 s" in (run.jobs[0].error or ""), run.jobs[0].error
    assert time.monotonic() - started < 60
    assert not psutil.pid_exists(frozen[0]) or psutil.Process(frozen[0]).status() == psutil.STATUS_ZOMBIE


@pytest.mark.skipif(sys.platform == "win32", reason="SIGSTOP is POSIX")
def test_stop_against_a_frozen_receiver_is_immediate(tmp_path: Path) -> None:
    """With the default 600 s reply timeout, Stop is the way out: it must not wait for it."""
    cancel = threading.Event()
    pids: dict[str, int] = {}

    def on_event(event: Any) -> None:
        if isinstance(event, JobProcesses):
            pids.update(event.pids)
        if isinstance(event, SampleBatch) and not cancel.is_set():
            os.kill(pids["receiver"], signal.SIGSTOP)
            threading.Timer(0.5, cancel.set).start()  # the user presses Stop a moment later

    profile = parse_profile(
        {
            "name": "frozen",
            "jobs": [
                {"scheme": "x25519", "mode": "loopback", "message_sizes": [1024], "samples": 1_000_000, "warmup": 0}
            ],
        }
    )
    started = time.monotonic()
    run = Runner(profile, on_event=on_event, cancel=cancel).run()
    assert [job.status for job in run.jobs] == ["cancelled"]
    assert time.monotonic() - started < 30
    for pid in pids.values():
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_remote_server_refusing_fails_each_job_clearly_and_quickly() -> None:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    profile = parse_profile(
        {
            "name": "remote",
            "jobs": [
                {"scheme": "sha256", "mode": "remote", "message_sizes": [64], "samples": 3},
                {"scheme": "aes-gcm", "mode": "remote", "message_sizes": [64], "samples": 3},
            ],
        }
    )
    started = time.monotonic()
    run = Runner(profile, remote=RemoteTarget("127.0.0.1", port, os.urandom(32))).run()
    assert [job.status for job in run.jobs] == ["failed", "failed"]
    assert all(f"cannot connect to 127.0.0.1:{port}" in (job.error or "") for job in run.jobs)
    assert time.monotonic() - started < 30

"""Strangers on a job's local ports: they change no result and fail no job.

Every port a job listens on is visible to every local user, so anything that connects
to it is input. Each test opens connections of its own to the ports a job's processes
report (the receiver's, the load server's, the link's) the moment they report them,
before the job's own peers connect: idle ones (which used to hold the receiver's single
accept for its 10 s hello timeout, and the load server's whole event loop), garbage,
a flood, 3 MiB pushed into a link. The job must come out ok, name what it turned away,
and stop listening once its own peers are in (a connection during the measurement is
refused by the kernel).
"""

from __future__ import annotations

import errno
import select
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from app.core.contracts.events import LogMessage, SampleBatch
from app.core.profile.files import parse_profile
from app.core.results.model import JobResult
from app.core.run.runner import Runner
from app.core.run.supervisor import ChildSupervisor as Supervisor
from app.core.transport.auth import ServerHandshake, client_proof
from app.core.transport.doorway import (
    MAX_PENDING,
    DescriptorsExhausted,
    Doorway,
    TicketCheck,
    TicketThen,
    admission,
    admit_one,
)
from app.core.transport.wire import HEADER_SIZE, FrameType, encode_header
from app.core.vocab import Role
from tests.helpers.load_counts import assert_every_request_answered

Opener = Callable[[int, Role], list[socket.socket]]


def _idle(port: int, count: int = 2) -> list[socket.socket]:
    return [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(count)]


def _garbage(port: int, data: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.setblocking(False)
    try:
        sock.send(data)  # as much as the kernel takes now; a stranger need not wait for us
    except (BlockingIOError, ConnectionError):
        pass
    return sock


class _Watch:
    """Strangers opened at each port a job reports; the job's log and what a connection
    to each port met once measuring had begun."""

    def __init__(self) -> None:
        self.ports: dict[Role, int] = {}
        self.opened: list[socket.socket] = []
        self.log: list[str] = []
        self.during: dict[Role, str] = {}
        self._lock = threading.Lock()

    def on_event(self, event: Any) -> None:
        if isinstance(event, LogMessage):
            self.log.append(event.text)
        elif isinstance(event, SampleBatch) and not self.during:
            for role, port in self.ports.items():
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=5).close()
                    self.during[role] = "accepted"
                except ConnectionRefusedError:
                    self.during[role] = "refused"

    def close(self) -> None:
        for sock in self.opened:
            sock.close()


@contextmanager
def _strangers(monkeypatch: pytest.MonkeyPatch, opener: Opener) -> Iterator[_Watch]:
    watch = _Watch()
    original = Supervisor.wait_for_port

    def wait_and_intrude(self: Supervisor, role: Role) -> int | None:
        port = original(self, role)
        if port is not None:
            watch.ports[role] = port
            watch.opened.extend(opener(port, role))
        return port

    monkeypatch.setattr(Supervisor, "wait_for_port", wait_and_intrude)
    try:
        yield watch
    finally:
        watch.close()


def _run(job: dict[str, Any], watch: _Watch) -> JobResult:
    profile = parse_profile({"name": "strangers", "jobs": [job]})
    (result,) = Runner(profile, on_event=watch.on_event).run().jobs
    assert result.status == "ok", result.error
    return result


def _stranger_note(result: JobResult) -> str:
    (note,) = [n for n in result.notes if "from outside the job" in n]
    return note


LOOPBACK = {"scheme": "x25519", "mode": "loopback", "message_sizes": [64], "samples": 20, "warmup": 0, "tamper": 1}


def test_idle_and_garbage_connections_to_a_loopback_receiver_fail_no_job(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two idle connections per receiver port failed every loopback job ("sent no
    challenge within 10 s"): the receiver took one connection at a time."""

    def opener(port: int, role: Role) -> list[socket.socket]:
        return [*_idle(port, 2), _garbage(port, b"GET / HTTP/1.0\r\n\r\n")]

    with _strangers(monkeypatch, opener) as watch:
        result = _run(LOOPBACK, watch)
    assert result.metrics["rtt"].stats.n == 20
    assert "3 connections from outside the job" in _stranger_note(result)
    # Once as the run's own warning (the CLI prints those), beside each connection's line.
    assert any(line.endswith(_stranger_note(result)) for line in watch.log), watch.log
    assert any("when the job's own peers were all in" in line for line in watch.log), watch.log
    assert any("not a CryptoBench admission" in line for line in watch.log), watch.log
    assert watch.during == {Role.RECEIVER: "refused"}  # the port is gone once the sender is in


def test_a_stranger_first_on_a_links_port_does_not_take_the_link(monkeypatch: pytest.MonkeyPatch) -> None:
    """The link relayed the first connection to its port, unchecked: a stranger who came
    first took the link and the real sender failed."""

    def opener(port: int, role: Role) -> list[socket.socket]:
        if role != Role.LINK:
            return []
        return [*_idle(port, 1), _garbage(port, b"\x00" * 65536)]

    job = {**LOOPBACK, "link": {"delay_ms": 1}, "link_emulation": "stream-relay"}
    with _strangers(monkeypatch, opener) as watch:
        result = _run(job, watch)
    assert result.metrics["rtt"].stats.n == 20
    assert "2 connections from outside the job" in _stranger_note(result)
    assert any("not a CryptoBench admission" in line for line in watch.log), watch.log
    assert watch.during.get(Role.LINK) == "refused"


LOAD = {
    "scheme": "x25519",
    "mode": "load",
    "clients": 2,
    "rates": [50, 100],
    "duration_s": 0.3,
    "warmup_s": 0,
}


@pytest.mark.parametrize("workers", [1, 2])
def test_a_stranger_on_the_load_servers_port_changes_no_step(monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    """One idle connect() froze every client for the 10 s token wait (authentication ran
    inside the server's only event loop), and the step read "server overloaded". With
    two server processes, each stops listening once the generator's clients are in,
    whichever of them took the clients."""

    def opener(port: int, role: Role) -> list[socket.socket]:
        return [*_idle(port, 2), _garbage(port, b"\xff" * 100)]

    with _strangers(monkeypatch, opener) as watch:
        result = _run({**LOAD, "server_workers": workers}, watch)
    assert result.load is not None
    for step in result.load.steps:
        assert_every_request_answered(step)
    assert "3 connections from outside the job" in _stranger_note(result)
    assert watch.during == {Role.RECEIVER: "refused"}  # stops listening once its clients are in


def test_bytes_pushed_into_a_shared_link_never_reach_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """3 MiB pushed into the link's port went onto the delay line every client shares,
    before anyone was authenticated (one step's p99 1.09 s against ~11 ms)."""

    def opener(port: int, role: Role) -> list[socket.socket]:
        return [_garbage(port, b"\x00" * (3 << 20))] if role == Role.LINK else []

    job = {**LOAD, "link": {"delay_ms": 2}, "link_emulation": "stream-relay"}
    with _strangers(monkeypatch, opener) as watch:
        result = _run(job, watch)
    assert result.load is not None
    for step in result.load.steps:
        assert_every_request_answered(step)
    assert any("not a CryptoBench admission" in line for line in watch.log), watch.log
    assert watch.during.get(Role.LINK) == "refused"


class _Flood:
    """Threads that connect to a port as fast as they can and hold every connection (up
    to `hold` each), until the port refuses them or the test ends."""

    def __init__(self, port: int, threads: int = 4, hold: int = 150) -> None:
        self.port, self.hold = port, hold
        self.held: list[socket.socket] = []
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._run, daemon=True) for _ in range(threads)]
        for thread in self.threads:
            thread.start()

    def _run(self) -> None:
        mine: list[socket.socket] = []
        while not self.stop.is_set() and len(mine) < self.hold:
            try:
                mine.append(socket.create_connection(("127.0.0.1", self.port), timeout=1))
            except OSError:
                break  # refused: the door is closed
        self.held.extend(mine)

    def close(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(10)
        for sock in self.held:
            sock.close()


@pytest.mark.parametrize(
    "job",
    # The stream relay's port is on this machine's loopback (the packet path's ends are in
    # namespaces of their own, out of the flood's reach).
    [LOAD, LOOPBACK, {**LOAD, "link": {"delay_ms": 1}, "link_emulation": "stream-relay"}],
    ids=["load", "loopback", "load-link"],
)
def test_a_flood_of_held_connections_at_start_fails_no_job(
    monkeypatch: pytest.MonkeyPatch, job: dict[str, Any]
) -> None:
    """Threads opening and holding connections the moment a port appears pushed the
    generator's own clients out of the 64 waiting places before they logged in: the job
    failed, blaming the server's identity. The job's own clients show its ticket first
    and are never pushed out for a stranger."""
    floods: list[_Flood] = []

    def opener(port: int, role: Role) -> list[socket.socket]:
        floods.append(_Flood(port))
        return []

    try:
        with _strangers(monkeypatch, opener) as watch:
            result = _run(job, watch)
    finally:
        for flood in floods:
            flood.close()
    if result.load is not None:
        assert all(step.errors == 0 for step in result.load.steps)
    assert "from outside the job" in _stranger_note(result)


# --- the doorway itself -------------------------------------------------------------------------

TOKEN = b"k" * 32


def _prove(port: int, token: bytes = TOKEN) -> socket.socket:
    """A client that holds `token` and goes through the handshake (HELLO, PROOF)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    client_nonce = b"c" * 32
    sock.sendall(encode_header(FrameType.HELLO, 32) + client_nonce)
    server_nonce = _exactly(sock, HEADER_SIZE + 32)[-32:]
    sock.sendall(encode_header(FrameType.PROOF, 32) + client_proof(token, client_nonce, server_nonce))
    return sock


def _exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        assert chunk, "closed"
        data += chunk
    return data


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    server = socket.create_server(("127.0.0.1", 0), backlog=256)
    yield server
    server.close()


def test_strangers_still_queued_when_the_door_closes_are_counted(listener: socket.socket) -> None:
    """A connection the kernel had queued but the server had not yet accepted was reset
    unseen when the door closed: a load job with two server processes counted two of
    three strangers, depending on which of them took the queue."""
    port = listener.getsockname()[1]
    dropped: list[str] = []
    doorway = Doorway(listener, lambda: TicketCheck(b"t" * 32), 30.0, dropped.append, who="load server")
    queued = _idle(port, 3)
    try:
        select.select([listener], [], [], 5)  # the kernel has them; the doorway has taken none
        assert not doorway.pending
        doorway.close()
        assert doorway.strangers == 3 and doorway.listener is None
        assert len(dropped) == 3 and all(
            "still queued when the job's own peers were all in" in line for line in dropped
        )
        doorway.close()  # closing again counts nothing twice
        assert doorway.strangers == 3
    finally:
        for sock in queued:
            sock.close()


def test_the_job_s_own_connection_is_never_evicted_and_a_full_house_refuses_newcomers(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    dropped: list[str] = []
    ticket = b"t" * 32
    doorway = Doorway(listener, lambda: TicketThen(ticket, ServerHandshake(TOKEN)), 30.0, dropped.append, who="x")
    own = _garbage(port, admission(ticket))  # its ticket, then its handshake later
    try:
        while not doorway.pending:
            select.select([listener], [], [], 5)
            doorway.accept()
        (mine,) = doorway.pending
        select.select([mine], [], [], 5)
        while doorway.pending[mine].check.wanted() and not getattr(doorway.pending[mine].check, "vouched", False):
            doorway.read(mine)
        flood = _idle(port, MAX_PENDING + 20)
        while select.select([listener], [], [], 0.5)[0]:
            doorway.accept()
        assert mine in doorway.pending  # 84 newer strangers, and the job's own still waits
        assert len(doorway.pending) == MAX_PENDING and doorway.strangers == 21
        for sock in flood:
            sock.close()
    finally:
        doorway.close()
        own.close()


def test_out_of_descriptors_a_stranger_is_closed_for_a_newcomer_else_the_job_fails_naming_the_limit(
    listener: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Out of descriptors, the load server looped on a readable listener at 45 % CPU for
    30 s, then the job failed blaming the server's identity."""
    port = listener.getsockname()[1]
    dropped: list[str] = []
    doorway = Doorway(listener, lambda: TicketCheck(b"t" * 32), 30.0, dropped.append, who="load server")
    first = _idle(port, 1)
    try:
        while not doorway.pending:
            select.select([listener], [], [], 5)
            doorway.accept()
        second = _idle(port, 1)
        select.select([listener], [], [], 5)
        real_accept = socket.socket.accept
        calls = [0]

        def exhausted(self: socket.socket) -> Any:
            calls[0] += 1
            if calls[0] == 1:
                raise OSError(errno.EMFILE, "Too many open files")
            return real_accept(self)

        monkeypatch.setattr(socket.socket, "accept", exhausted)
        doorway.accept()
        assert "no file descriptor was left" in dropped[-1] and len(doorway.pending) == 1  # the stranger went
        monkeypatch.setattr(
            socket.socket, "accept", lambda self: (_ for _ in ()).throw(OSError(errno.EMFILE, "Too many open files"))
        )
        doorway.drop_pending()
        third = _idle(port, 1)  # one waits, with no stranger's descriptor left to free for it
        select.select([listener], [], [], 5)
        with pytest.raises(DescriptorsExhausted, match=r"Too many open files \(EMFILE: .*raise `ulimit -n`\)"):
            doorway.accept()
        for sock in first + second + third:
            sock.close()
    finally:
        monkeypatch.undo()
        doorway.close()


def test_out_of_descriptors_with_nobody_waiting_the_job_s_own_connection_stays(
    listener: socket.socket, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The kernel looks for a free descriptor before it looks at the queue: with none left,
    accept() fails even when nobody waits. The doorway then closed the oldest connection
    still proving itself, the job's own (its ticket sent, not yet read), and the load
    generator reported the server as "not authenticated". Now nothing is closed unless
    someone waits, and a connection with bytes waiting is never taken for an idle stranger."""
    port = listener.getsockname()[1]
    dropped: list[str] = []
    ticket = b"t" * 32
    doorway = Doorway(listener, lambda: TicketThen(ticket, ServerHandshake(TOKEN)), 30.0, dropped.append, who="x")
    own = _garbage(port, admission(ticket))
    try:
        while not doorway.pending:
            select.select([listener], [], [], 5)
            doorway.accept()
        monkeypatch.setattr(
            socket.socket, "accept", lambda self: (_ for _ in ()).throw(OSError(errno.EMFILE, "Too many open files"))
        )
        doorway.accept()  # nobody waits: nothing to make room for
        assert len(doorway.pending) == 1 and not dropped
        newcomer = _idle(port, 1)
        select.select([listener], [], [], 5)
        with pytest.raises(DescriptorsExhausted, match=r"x cannot accept a connection: Too many open files \(EMFILE"):
            doorway.accept()  # one waits, and the only one to close is the job's own: refuse
        assert len(doorway.pending) == 1 and not dropped
        for sock in newcomer:
            sock.close()
    finally:
        monkeypatch.undo()
        own.close()
        doorway.close()


DESCRIPTOR_LIMITED = """
import json, resource, sys
from app.core.profile.files import parse_profile
from app.core.run.runner import Runner

if __name__ == "__main__":
    limit = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))  # inherited by the fork server and the job
    job = {"scheme": "x25519", "mode": "load", "clients": 100, "rates": [50], "duration_s": 0.3, "warmup_s": 0}
    run = Runner(parse_profile({"name": "fds", "jobs": [job]})).run()
    print(json.dumps([job.error for job in run.jobs]))
"""


@pytest.mark.skipif(not hasattr(socket, "MSG_DONTWAIT"), reason="the descriptor limit is a POSIX resource limit")
def test_a_load_job_out_of_descriptors_is_reported_as_such(tmp_path: Any) -> None:
    """100 clients under a limit of 60 open files (`ulimit -n 60`): the job failed as
    "ServerNotAuthenticated: load server … closed the connection instead of sending a
    challenge (not a CryptoBench serve of this version?)". Now it names what ran out."""
    import json
    import subprocess
    import sys

    from tests.helpers.paths import ROOT

    script = tmp_path / "limited.py"
    script.write_text(DESCRIPTOR_LIMITED)
    done = subprocess.run(
        [sys.executable, str(script), "60"], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    (error,) = json.loads(done.stdout.splitlines()[-1])
    assert error.startswith("load server cannot accept a connection: Too many open files (EMFILE"), error
    assert "raise `ulimit -n`" in error
    assert "not a CryptoBench serve" not in error and "NotAuthenticated" not in error, error


def test_the_doorway_admits_the_token_holder_past_silent_strangers(listener: socket.socket) -> None:
    port = listener.getsockname()[1]
    dropped: list[str] = []
    doorway = Doorway(listener, lambda: ServerHandshake(TOKEN), 30.0, dropped.append, who="receiver")
    strangers = _idle(port, 10) + [_garbage(port, b"CB")]  # silent, and half a header then silence
    proved: list[socket.socket] = []
    client = threading.Thread(target=lambda: proved.append(_prove(port)))
    client.start()
    try:
        admitted = admit_one(doorway, time.monotonic() + 20)
        client.join(10)
        assert admitted is not None and proved
        assert _exactly(proved[0], HEADER_SIZE + 32)  # its WELCOME
        assert doorway.strangers == 0 and len(doorway.pending) == 11  # still waiting, never in the way
        doorway.close()
        assert doorway.strangers == 11 and not doorway.pending
        assert all("had not proven itself" in line for line in dropped)
        admitted.close()
    finally:
        for sock in strangers + proved:
            sock.close()


def test_a_flood_keeps_the_newest_waiting_and_still_admits_the_token_holder(listener: socket.socket) -> None:
    """74 silent connections: 64 wait at most (the oldest go first), and the job's own
    peer, arriving last, is still admitted."""
    port = listener.getsockname()[1]
    dropped: list[str] = []
    doorway = Doorway(listener, lambda: ServerHandshake(TOKEN), 30.0, dropped.append, who="receiver")
    flood = _idle(port, MAX_PENDING + 10)
    proved: list[socket.socket] = []
    client = threading.Thread(target=lambda: proved.append(_prove(port)))
    try:
        while select.select([listener], [], [], 0.5)[0]:
            doorway.accept()
        assert len(doorway.pending) == MAX_PENDING
        assert doorway.strangers == 10
        assert all(f"{MAX_PENDING} newer connections were waiting" in line for line in dropped)
        client.start()
        admitted = admit_one(doorway, time.monotonic() + 20)
        client.join(10)
        assert admitted is not None and proved
        admitted.close()
    finally:
        doorway.close()
        for sock in flood + proved:
            sock.close()


def test_a_dribbling_stranger_is_dropped_at_its_own_deadline(listener: socket.socket) -> None:
    now = [0.0]
    port = listener.getsockname()[1]
    dropped: list[str] = []
    ticket = b"t" * 32
    doorway = Doorway(listener, lambda: TicketCheck(ticket), 10.0, dropped.append, who="link", clock=lambda: now[0])
    dribbler = _garbage(port, admission(ticket)[:5])
    try:
        while not doorway.pending:
            select.select([listener], [], [], 5)
            doorway.accept()
        (sock,) = doorway.pending
        select.select([sock], [], [], 5)
        assert doorway.read(sock) is None  # 5 of 40 bytes: still proving itself
        now[0] = 9.9
        doorway.expire()
        assert doorway.pending
        now[0] = 10.0
        doorway.expire()
        assert not doorway.pending and doorway.strangers == 1
        assert "sent 5 of 40 admission bytes within 10 s" in dropped[0]
    finally:
        doorway.close()
        dribbler.close()


@pytest.mark.parametrize(
    ("sent", "reason"),
    [
        (b"HTTP/1.1 200", "not a CryptoBench admission"),
        (admission(b"u" * 32), "wrong admission ticket"),
    ],
)
def test_a_wrong_admission_is_named(listener: socket.socket, sent: bytes, reason: str) -> None:
    port = listener.getsockname()[1]
    dropped: list[str] = []
    doorway = Doorway(listener, lambda: TicketCheck(b"t" * 32), 10.0, dropped.append, who="link")
    stranger = _garbage(port, sent)
    try:
        while not dropped:
            select.select(doorway.sockets(), [], [], 5)
            doorway.accept()
            for sock in list(doorway.pending):
                assert doorway.read(sock) is None
        assert reason in dropped[0]
    finally:
        doorway.close()
        stranger.close()

"""Loopback and remote sessions through the runner: every family, faults, cancel."""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

import pytest

from app.core.contracts.events import JobProcesses, SampleBatch
from app.core.profile.files import parse_profile
from app.core.results.model import JobResult
from app.core.run.runner import Runner
from app.core.serve.server import Server
from app.core.store.store import Store
from app.core.transport.connect import RemoteTarget
from app.core.vocab import Family
from tests.helpers.plans import job_plan

SESSION_METRICS = {"compute", "rtt", "receiver", "network", "floor_rtt"}

#: One scheme (or two) per family, small and fast: the loopback smoke test of the catalog.
FAMILY_JOBS: list[dict[str, Any]] = [
    {"scheme": "aes-gcm", "backend": "cryptography", "message_sizes": [18, 4096]},
    {"scheme": "chacha20-poly1305", "backend": "pycryptodome"},
    {"scheme": "ecdh", "backend": "cryptography", "params": {"curve": "P-256"}},
    {"scheme": "ecdh", "backend": "tinyec", "params": {"curve": "brainpoolP256r1", "kdf": "sha256"}},
    {"scheme": "x25519", "backend": "cryptography"},
    {"scheme": "elgamal", "backend": "python", "params": {"bits": 128, "chunked": True}, "message_sizes": [18]},
    {"scheme": "rsa-oaep", "backend": "cryptography", "params": {"bits": 1024}, "message_sizes": [48]},
    {"scheme": "rsa-kem", "backend": "cryptography", "params": {"bits": 2048}},
    {"scheme": "ecies", "backend": "cryptography", "params": {"curve": "secp256k1"}},
    {"scheme": "ml-kem", "backend": "cryptography"},
    {"scheme": "x25519-ml-kem-768", "backend": "cryptography"},
    {"scheme": "ecdsa", "backend": "cryptography", "params": {"curve": "P-256"}},
    {"scheme": "ed25519", "backend": "cryptography"},
    {"scheme": "ml-dsa", "backend": "cryptography"},
    {"scheme": "sha256", "backend": "cryptography"},
    {"scheme": "hkdf", "backend": "cryptography"},
]


def _profile(jobs: list[dict[str, Any]], **common: Any) -> Any:
    defaults = {"mode": "loopback", "message_sizes": [256], "samples": 5, "warmup": 1, "keygen_samples": 2, "tamper": 3}
    defaults.update(common)
    filled = []
    for job in jobs:
        entry = {**defaults, **job}
        if job["scheme"] == "hkdf":
            entry.pop("message_sizes")
        filled.append(entry)
    return parse_profile({"name": "session-test", "jobs": filled})


def _check_session_job(job: JobResult) -> None:
    where = f"{job.label} @ {job.message_size} B"
    assert job.status == "ok", f"{where}: {job.error}"
    assert SESSION_METRICS <= set(job.metrics), f"{where}: {sorted(job.metrics)}"
    rtt, receiver, network = (job.metrics[name].samples for name in ("rtt", "receiver", "network"))
    # network is rtt - receiver, per sample, not a difference of medians.
    assert network == pytest.approx([a - b for a, b in zip(rtt, receiver)], abs=1e-12), where
    assert all(r > 0 for r in rtt), where
    assert all(b <= a for a, b in zip(rtt, receiver)), f"{where}: receiver time exceeds the round trip"
    family = Family(job.family)
    if family not in (Family.HASH, Family.KDF):
        assert "keygen" in job.metrics, where
    assert job.validation.checked >= 5 and job.validation.failed == 0, where
    wire = job.wire_bytes
    assert wire["frame"] == wire["payload"] + 12 and wire["payload"] >= job.message_size, where
    assert {"sender", "receiver"} <= set(job.memory.rss_peak_bytes), where
    assert job.memory.traced_peak_bytes["compute"] >= 0, where
    if job.scheme == "elgamal":
        assert job.validation.tamper_tried == 0, where
        assert any("no integrity" in note for note in job.notes), where
    else:
        assert job.validation.tamper_tried == 3 == job.validation.tamper_rejected, where


def test_every_family_passes_a_short_loopback_job_with_tamper_check() -> None:
    run = Runner(_profile(FAMILY_JOBS)).run()
    assert run.status == "finished"
    assert len(run.jobs) == len(FAMILY_JOBS) + 1  # aes-gcm has two sizes
    for job in run.jobs:
        assert job.mode == "loopback"
        _check_session_job(job)


@pytest.mark.parametrize("mode", ["loopback", "remote"])
def test_each_exchange_pattern_crosses_the_connection_as_it_says(mode: str) -> None:
    """A session job establishes its key in the handshake (whose message is the encapsulation
    or ephemeral key) and sends AEAD alone; a per-message job's handshake is empty and every
    payload carries its encapsulation. A remote receiver serves the pattern the job names."""
    jobs = [
        {"scheme": scheme, "backend": "cryptography", "exchange": exchange}
        for scheme in ("x25519", "ml-kem")
        for exchange in ("session", "per-message")
    ]
    encapsulation = {"x25519": 32, "ml-kem": 1088}
    if mode == "loopback":
        run = Runner(_profile(jobs)).run()
    else:
        token = os.urandom(32)
        server = Server(token, "127.0.0.1", 0, log=lambda line: None)
        stop = threading.Event()
        thread = threading.Thread(target=server.serve_forever, args=(stop,))
        thread.start()
        try:
            run = Runner(_profile(jobs, mode=mode), remote=RemoteTarget(*server.address, token)).run()
        finally:
            stop.set()
            thread.join(10)
    assert [job.exchange for job in run.jobs] == ["session", "per-message"] * 2
    for job in run.jobs:
        _check_session_job(job)
        enc = encapsulation[job.scheme]
        session = job.exchange == "session"
        assert job.label.endswith("(session)" if session else "(per-message)")
        assert job.wire_bytes["handshake"] == (enc if session else 0), job.label
        assert job.wire_bytes["overhead"] == 28 + (0 if session else enc), job.label
        assert {"handshake", "handshake_receiver"} <= set(job.metrics)


def _kill_on_first_sample(role: str) -> tuple[Any, dict[str, Any]]:
    """An event handler that SIGKILLs one process of job 0 when its first samples arrive."""
    state: dict[str, Any] = {"pids": {}, "killed": False}

    def on_event(event: Any) -> None:
        if isinstance(event, JobProcesses) and event.job_index == 0:
            state["pids"] = dict(event.pids)
        elif (
            isinstance(event, SampleBatch)
            and event.job_index == 0
            and event.metric == "compute"
            and not state["killed"]
        ):
            state["killed"] = True
            os.kill(state["pids"][role], signal.SIGKILL)

    return on_event, state


@pytest.mark.parametrize("role", ["receiver", "sender"])
def test_killed_process_fails_its_job_names_the_cause_and_the_run_goes_on(role: str, tmp_path: Any) -> None:
    # Job 0 would take minutes (a million samples); the kill ends it at its first samples.
    profile = _profile(
        [
            {"scheme": "aes-gcm", "samples": 1_000_000, "message_sizes": [18]},
            {"scheme": "sha256", "message_sizes": [64]},
        ]
    )
    on_event, state = _kill_on_first_sample(role)
    with Store(tmp_path / "store.sqlite3") as store:
        run = Runner(profile, store=store, on_event=on_event).run()
        stored = store.load_run(run.id)
    assert state["killed"]
    first, second = run.jobs
    assert first.status == "failed"
    assert f"{role} process was killed by SIGKILL" in (first.error or "")
    assert second.status == "ok"
    assert [job.status for job in stored.jobs] == ["failed", "ok"]
    assert run.status == "finished"


def test_cancel_mid_stream_marks_jobs_cancelled_and_leaves_no_process() -> None:
    profile = _profile([{"scheme": "aes-gcm", "samples": 1_000_000, "message_sizes": [18]}, {"scheme": "sha256"}])
    cancel = threading.Event()
    pids: dict[str, int] = {}

    def on_event(event: Any) -> None:
        if isinstance(event, JobProcesses):
            pids.update(event.pids)
        if isinstance(event, SampleBatch) and event.metric == "rtt":
            cancel.set()

    run = Runner(profile, on_event=on_event, cancel=cancel).run()
    assert run.status == "cancelled"
    assert [job.status for job in run.jobs] == ["cancelled", "cancelled"]
    assert set(pids) == {"sender", "receiver"}
    import psutil

    for pid in pids.values():
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_accepted_tamper_fails_the_job_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    """A receiver that accepts a flipped bit must fail the job, whatever the timings say."""
    import socket

    from app.core.contracts.events import SizeMeasured
    from app.core.schemes import registry
    from app.core.schemes.base import Receiver, Scheme, SchemeError, Sender
    from app.core.session.receiver import ReceiverSession
    from app.core.session.sender import SenderSession

    real_create = registry.create

    class Forgiving(Receiver):
        """Opens what it can; on a failed tag it returns the last good plaintext."""

        def __init__(self, inner: Receiver) -> None:
            self.inner, self.last = inner, b""

        def setup(self) -> bytes:
            return self.inner.setup()

        def handshake(self, message: bytes) -> None:
            self.inner.handshake(message)

        def open(self, payload: Any) -> Any:
            try:
                self.last = bytes(self.inner.open(payload))
            except SchemeError:
                pass
            return self.last

    class Broken(Scheme):
        def __init__(self, inner: Scheme) -> None:
            self.inner, self.info = inner, inner.info

        def new_receiver(self) -> Receiver:
            return Forgiving(self.inner.new_receiver())

        def new_sender(self) -> Sender:
            return self.inner.new_sender()

        def tamper_spots(self, payload_len: int, plaintext_len: int) -> Any:
            return self.inner.tamper_spots(payload_len, plaintext_len)

    monkeypatch.setattr(registry, "create", lambda *a, **k: Broken(real_create(*a, **k)))
    token = os.urandom(32)
    left, right = socket.socketpair()
    outcome: dict[str, Any] = {}

    def serve() -> None:
        try:
            outcome["job"] = ReceiverSession(right, token).serve()
        except Exception as exc:  # noqa: BLE001 - reported through the assertion below
            outcome["error"] = exc

    thread = threading.Thread(target=serve)
    thread.start()
    events: list[Any] = []
    plan = job_plan(
        "aes-gcm",
        "cryptography",
        {},
        [32],
        samples=3,
        warmup=0,
        keygen_samples=1,
        pause_ms=0,
        tamper=3,
        host="-",
        port=0,
        token=token,
    )
    try:
        SenderSession(left, plan, events.append).run()
    finally:
        thread.join(10)
        left.close()
        right.close()
    assert "error" not in outcome, outcome.get("error")
    measured = [e for e in events if isinstance(e, SizeMeasured)]
    assert len(measured) == 1
    assert measured[0].tamper_tried == 3 and measured[0].tamper_rejected == 0
    assert all("ACCEPTED" in failure for failure in measured[0].tamper_failures)


def test_remote_session_against_a_server(tmp_path: Any) -> None:
    token = os.urandom(32)
    logs: list[str] = []
    server = Server(token, "127.0.0.1", 0, log=logs.append)
    stop = threading.Event()
    thread = threading.Thread(target=server.serve_forever, args=(stop,))
    thread.start()
    try:
        host, port = server.address
        profile = _profile([{"scheme": "aes-gcm", "message_sizes": [64, 2048]}], mode="remote")
        run = Runner(profile, remote=RemoteTarget(host, port, token)).run()
    finally:
        stop.set()
        thread.join(10)
    assert not thread.is_alive()
    for job in run.jobs:
        assert job.mode == "remote"
        _check_session_job(job)
        receiver = job.cpu.role("receiver")
        assert receiver is not None and receiver.source and "remote receiver" in receiver.source
        assert receiver.rss_peak_bytes and receiver.rss_peak_bytes > 0
    assert server.served == 1 and server.refused == 0
    assert any("finished aes-gcm" in line for line in logs)


def test_remote_session_with_a_wrong_token_fails_with_the_reason() -> None:
    server = Server(os.urandom(32), "127.0.0.1", 0)
    stop = threading.Event()
    thread = threading.Thread(target=server.serve_forever, args=(stop,))
    thread.start()
    try:
        host, port = server.address
        run = Runner(
            _profile([{"scheme": "sha256"}], mode="remote"), remote=RemoteTarget(host, port, os.urandom(32))
        ).run()
    finally:
        stop.set()
        thread.join(10)
    (job,) = run.jobs
    assert job.status == "failed"
    assert "closed the connection" in (job.error or "")
    assert server.refused == 1


def test_remote_server_not_listening_fails_the_job_clearly() -> None:
    import socket

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens on this port now
    run = Runner(
        _profile([{"scheme": "sha256"}], mode="remote"), remote=RemoteTarget("127.0.0.1", port, os.urandom(32))
    ).run()
    (job,) = run.jobs
    assert job.status == "failed"
    assert f"cannot connect to 127.0.0.1:{port}" in (job.error or "")

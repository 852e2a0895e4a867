"""Every kind of run the window shows, in one store, for the painting test
(tests/gui/test_every_picture.py, whose child is tests/helpers/painting.py).

One real run, by the runner, of the job kinds that are cheap to run: operations (two
schemes, two sizes: the Comparison and Scaling tabs have something to draw), a loopback
session, a session over the stream relay and over the packet path (or, where this machine
cannot make one, the relay's job relabelled as the packet path's: the window reads the
record, not how it was made), a local load job, and a last job stopped at its first samples
(cancelled); and a real run whose remote job finds no server there (failed). Its events, as the
window's controller relays them, are kept too, so the child replays them through the
window's live path.

Built by the producers' own code or by hand, where running them cannot fit a test: a
cluster load job through the coordinator with its generators faked (one generator fails
its step), load sweeps past a knee and limited by the generator with a cluster job whose
generators each have their record and a resumed tls13 load job, the trend's history (tests/helpers/trend_cases.py)
with a reduced and an overridden run beside it, and an interrupted run.
"""

from __future__ import annotations

import pickle
import socket
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from app.core.contracts.events import JobStarted, SampleBatch
from app.core.profile.files import parse_profile
from app.core.results.model import RunResult
from app.core.run.runner import Runner
from app.core.store import runlock
from app.core.store.store import Store
from app.core.transport.connect import RemoteTarget
from app.core.transport.netns import packet_path_refusal, try_packet_path
from app.core.vocab import RunStatus
from tests.helpers import loads, records, trend_cases
from tests.helpers.round_trips import cluster_run

OPERATIONS = {"scheme": "aes-gcm", "message_sizes": [64, 1024], "samples": 5, "warmup": 1, "keygen_samples": 1}
SESSION = {**OPERATIONS, "scheme": "x25519", "mode": "loopback", "message_sizes": [1024]}
LINK = {"delay_ms": 1, "rate_kbit": 100_000}
LOAD = {"scheme": "x25519", "mode": "load", "clients": 3, "rates": [30, 60], "duration_s": 0.3, "warmup_s": 0.1}
#: The last job, known by its size (no other job has it): stopped at its first samples, so
#: it can never run long.
STOPPED = {**OPERATIONS, "message_sizes": [128], "samples": 1_000_000}

#: The run ids of the built runs.
LOAD_SWEEPS_ID = loads.RUN_ID
INTERRUPTED_ID = "20260601-110000-dead00"
#: The trend's runs besides trend_cases.RUNS: the same job, reduced and overridden.
MARKED_RUNS = (
    ("20260106-100000-rrrrrr", "2026-01-06T10:00:00+00:00", {"name": "trend (reduced)", "jobs": [], "reduced": True}),
    (
        "20260107-100000-oooooo",
        "2026-01-07T10:00:00+00:00",
        {"name": "trend (--samples 3)", "jobs": [], "overrides": {"--samples": "3"}},
    ),
)


@dataclass(frozen=True)
class WindowRuns:
    """The store and what the child needs to find its way in it."""

    store: Path
    #: The real run's events in the order the runner sent them (pickled list).
    events: Path
    real_id: str
    cluster_id: str

    def arguments(self) -> list[str]:
        return [str(self.store), str(self.events), self.real_id, self.cluster_id]


def _closed_port() -> int:
    """A port nothing listens on (a remote job sent there fails at once)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def _real_run(store: Store, packet_path: bool) -> tuple[RunResult, list[Any]]:
    packet = {**SESSION, "link": {**LINK, "loss_percent": 1}, "link_emulation": "packet"}
    relay = {**SESSION, "link": LINK, "link_emulation": "stream-relay"}
    jobs = [
        OPERATIONS,
        {**OPERATIONS, "scheme": "chacha20-poly1305"},
        SESSION,
        relay,
        packet if packet_path else {**relay, "message_sizes": [4096]},  # a twin, not a repeat
        LOAD,
        STOPPED,
    ]
    cancel = threading.Event()
    events: list[Any] = []
    stopped: set[int] = set()  # the index of the last job, once it has started

    def on_event(event: Any) -> None:
        events.append(event)
        if isinstance(event, JobStarted) and event.message_size == STOPPED["message_sizes"][0]:
            stopped.add(event.job_index)
        elif isinstance(event, SampleBatch) and event.job_index in stopped:
            cancel.set()

    profile = parse_profile({"name": "every kind", "jobs": jobs})
    run = Runner(profile, store=store, cancel=cancel, on_event=on_event).run()
    return run, events


def _failed_run(store: Store) -> RunResult:
    """A run whose first job failed (its server is not there), then ended before the
    second, as an internal error between jobs ends one (`Runner.finish` records it failed).
    Apart from the real run: given a server, the runner would send its load job there too."""
    remote = {**OPERATIONS, "mode": "remote", "message_sizes": [64]}
    profile = parse_profile({"name": "failed", "jobs": [remote, {**remote, "message_sizes": [128]}]})
    target = RemoteTarget("127.0.0.1", _closed_port(), b"t" * 32)
    runner = Runner(profile, store=store, cancel=threading.Event(), remote=target)
    run = runner.start()
    try:
        runner.record(run, runner.execute(run, runner.jobs[0], runner.base_indexes[0]))
    finally:
        runner.finish(run)
    assert run.status == RunStatus.FAILED
    return run


def _packet_stand_in(run: RunResult, store: Store) -> None:
    """Without a packet path here, the relay job's twin stands for it, relabelled."""
    twin = [job for job in run.jobs if job.link is not None][-1]
    assert twin.link is not None
    store.add_job(run.id, replace(twin, link=replace(twin.link, emulation="packet")))


def _interrupted(store: Store, path: Path) -> None:
    begun = records.run(INTERRUPTED_ID, [], status=RunStatus.RUNNING, name="interrupted")
    store.begin_run(begun)
    job = records.job(
        begun.id,
        0,
        scheme="chacha20-poly1305",
        params={},
        label="ChaCha20-Poly1305",
        metrics={"encrypt": records.spread_samples(8e-6)},
    )
    store.add_job(begun.id, job)
    runlock.release(path, begun.id)  # as the kernel does when the process dies


def build(folder: Path) -> WindowRuns:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "store.sqlite3"
    trend_cases.build(path)
    cluster = cluster_run(folder / "cluster", "cluster", generators=3, failing={1}).run
    sweeps = loads.load_run(
        [
            *loads.load_run().jobs,
            loads.load_job(3, "X25519 [cluster]", loads.cluster_load(generators=3, late=(2, 800), incomplete_at=400)),
            loads.tls_load_job(4, resumed=True),
        ]
    )
    # Asked here, not at import: making a packet path takes a moment.
    packet_path = (packet_path_refusal() or try_packet_path()) is None
    with Store(path) as store:
        real, events = _real_run(store, packet_path)
        if not packet_path:
            _packet_stand_in(real, store)
        _failed_run(store)
        for run in (cluster, sweeps):
            store.add_run(run)
        for run_id, started, profile in MARKED_RUNS:
            jobs = [trend_cases.job(run_id, 0, 12e-6)]
            env = trend_cases.environment("beta", "42.0.1", "OpenSSL 3.2.1 30 Jan 2024")
            store.add_run(records.run(run_id, jobs, started=started, environment=env, profile=profile))
        _interrupted(store, path)
    events_path = folder / "events.pickle"
    events_path.write_bytes(pickle.dumps(events))
    return WindowRuns(path, events_path, real.id, cluster.id)

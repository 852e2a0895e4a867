"""Load from many machines, for real: a Dask LocalCluster of worker processes on 127.0.0.1
places the generators (the `cluster` extra; skipped with the reason where it is missing).

One cluster serves the module (its workers start in a few seconds); the test that kills a
worker has one of its own. Every test checks that no generator
process is left on any worker.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from typing import Any

import psutil
import pytest
from hdrh.histogram import HdrHistogram

from app.core.contracts.events import Progress, RunEvent
from app.core.load import merge
from app.core.load.cluster import coordinator
from app.core.profile.files import parse_profile
from app.core.run.runner import Runner
from app.core.vocab import JobStatus

distributed = pytest.importorskip("distributed", reason="the cluster extra (Dask distributed) is not installed")

pytestmark = pytest.mark.xdist_group("cluster")

GENERATOR_MODULE = "app.core.load.cluster.remote_generator"


def _local_cluster() -> Any:
    return distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=":0",
        silence_logs=40,
    )


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    with _local_cluster() as local:
        yield local


def _generators_running() -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            if GENERATOR_MODULE in " ".join(process.info["cmdline"] or ()):
                found.append(process)
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def _no_generator_left() -> None:
    """Every generator subprocess is gone (waited for briefly: a killed one is reaped by its worker)."""
    left = _generators_running()
    _, alive = psutil.wait_procs(left, timeout=5)
    assert not alive, [p.info["cmdline"] for p in alive]


def _run(address: str, job: dict[str, object], on_event=None, cancel=None):
    profile = parse_profile(
        {"name": "cluster", "jobs": [{"scheme": "x25519", "mode": "load", "cluster": address, **job}]}
    )
    return Runner(profile, on_event=on_event, cancel=cancel).run()


def test_every_generator_offers_its_share_and_the_merge_holds_every_request(cluster: Any) -> None:
    rates = [300.0, 600.0]
    run = _run(cluster.scheduler_address, {"clients": 4, "rates": rates, "duration_s": 0.5, "warmup_s": 0.1})
    (job,) = run.jobs
    assert job.status == JobStatus.OK, job.error
    load = job.load
    assert load is not None and load.cluster == cluster.scheduler_address
    workers = set(cluster.scheduler_info["workers"])
    assert len(load.generators) == 2 and {g.worker for g in load.generators} == workers
    assert sum(g.clients for g in load.generators) == 4
    for place in load.generators:
        # Measured over loopback: the offset is tiny and known to within the limit.
        assert place.clock_uncertainty_s <= merge.MAX_MISALIGNMENT_SHARE * 0.5
    assert [step.offered_per_s for step in load.steps] == rates
    for step in load.steps:
        parts = step.generators
        assert [part.generator for part in parts] == [1, 2] and step.incomplete is None
        # The offered rates of the generators add up to the step's schedule.
        assert sum(part.offered_per_s for part in parts) == step.offered_per_s
        # The merged histogram holds every request any generator completed.
        merged = HdrHistogram.decode(step.histogram)
        assert merged.get_total_count() == step.completed == sum(part.completed for part in parts)
        assert sum(HdrHistogram.decode(part.histogram).get_total_count() for part in parts) == step.completed
        assert step.sent == sum(part.sent for part in parts) == round(step.offered_per_s * 0.5)
        assert step.errors == 0 and step.completed == step.sent
        # Each generator's record keeps when it began against the agreed start: ready ahead of
        # it (the start is agreed 0.3 s ahead), or at worst a little after.
        assert all(part.started_late_s is not None and -1.0 < part.started_late_s < 0.3 for part in parts)
    assert job.validation.tamper_tried > 0 and job.validation.tamper_rejected == job.validation.tamper_tried
    assert any("loopback only" in note for note in job.notes)
    _no_generator_left()


def test_fewer_generators_than_workers_when_asked_and_signed_messages(cluster: Any) -> None:
    profile = parse_profile(
        {
            "name": "cluster",
            "jobs": [
                {
                    "scheme": "ed25519",
                    "mode": "load",
                    "cluster": cluster.scheduler_address,
                    "clients": 2,
                    "rates": [200],
                    "duration_s": 0.3,
                    "warmup_s": 0,
                    "generators": 1,
                }
            ],
        }
    )
    (job,) = Runner(profile).run().jobs
    assert job.status == JobStatus.OK, job.error
    assert job.load is not None and len(job.load.generators) == 1
    assert job.load.request == "signed message"
    assert job.load.generators[0].clients == 2 and len(job.load.steps[0].generators) == 1
    _no_generator_left()


def test_more_generators_than_workers_is_refused_naming_both(cluster: Any) -> None:
    run = _run(cluster.scheduler_address, {"clients": 4, "rates": [100], "duration_s": 0.2, "generators": 5})
    (job,) = run.jobs
    assert job.status == JobStatus.FAILED
    assert "5 generators asked for" in (job.error or "") and "2 workers" in (job.error or "")
    _no_generator_left()


def test_an_unreachable_scheduler_is_named() -> None:
    with psutil_free_port() as port:
        run = _run(f"tcp://127.0.0.1:{port}", {"clients": 1, "rates": [50], "duration_s": 0.2})
    (job,) = run.jobs
    assert job.status == JobStatus.FAILED
    assert f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}" in (job.error or "")


def test_stop_leaves_no_generator_on_any_worker(cluster: Any) -> None:
    cancel = threading.Event()

    def on_event(event: RunEvent) -> None:
        if isinstance(event, Progress) and event.done > 0 and _generators_running():
            cancel.set()  # a step is under way on the workers

    run = _run(
        cluster.scheduler_address,
        {"clients": 2, "rates": [200, 200, 200], "duration_s": 5.0, "warmup_s": 0},
        on_event=on_event,
        cancel=cancel,
    )
    assert cancel.is_set() and run.status == "cancelled" and run.jobs[0].status == JobStatus.CANCELLED
    _no_generator_left()


def test_a_worker_killed_mid_step_makes_the_step_incomplete_and_names_it() -> None:
    with _local_cluster() as cluster:  # its own: the killed worker's nanny starts a new one
        _killed_mid_step(cluster)


def _killed_mid_step(cluster: Any) -> None:
    killed: list[int] = []

    def on_event(event: RunEvent) -> None:
        if killed or not isinstance(event, Progress) or event.done == 0:
            return
        running = _generators_running()
        if len(running) == 2:  # both generators are in the step: kill the first one's worker
            worker = running[0].parent()
            assert worker is not None
            killed.append(worker.pid)
            os.kill(worker.pid, signal.SIGKILL)

    run = _run(
        cluster.scheduler_address,
        {"clients": 2, "rates": [200, 200], "duration_s": 3.0, "warmup_s": 0},
        on_event=on_event,
    )
    assert killed
    (job,) = run.jobs
    assert job.status == JobStatus.FAILED
    assert job.load is not None
    step = job.load.steps[-1]
    assert step.incomplete is not None and "generator #" in step.incomplete
    assert "incomplete" in (job.error or "") and "generator #" in (job.error or "")
    # The survivor's share is kept and marked, never passed off as the whole rate.
    assert len(step.generators) == 1 and step.completed == step.generators[0].completed
    assert step.offered_per_s == 200  # what the step scheduled, not the survivor's share
    assert step.generator_saturated and len(job.load.steps) == 1
    _no_generator_left()


class psutil_free_port:
    """A port nothing listens on (bound, then closed: connecting to it is refused)."""

    def __enter__(self) -> int:
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return int(sock.getsockname()[1])

    def __exit__(self, *exc: object) -> None:
        return None


# --- the coordinator's refusals, without a cluster ------------------------------------------------


class _Actor:
    pass


def _driver(job: dict[str, object]) -> coordinator.ClusterDriver:
    from app.core.contracts.plan import JobPlan, SessionPeer
    from app.core.profile.resolve import resolve_jobs

    profile = parse_profile(
        {"name": "c", "jobs": [{"scheme": "x25519", "mode": "load", "cluster": "tcp://10.1.2.3:8786", **job}]}
    )
    (resolved,) = resolve_jobs(profile)
    plan = JobPlan(resolved, 0, SessionPeer("10.0.0.2", 4000, b"t" * 32))
    return coordinator.ClusterDriver(plan, lambda message: None, client=None)


def test_a_clock_known_too_loosely_for_the_step_is_refused() -> None:
    # A worker whose every clock exchange takes 200 ms: its offset is known to 100 ms,
    # more than 2 % of a 1 s step.
    driver = _driver({"rates": [100], "duration_s": 1.0})
    driver._exchange = lambda actor: (10.0, 12.0, 10.2)
    driver.generators = [coordinator._Generator(1, "tcp://10.1.2.4:1", _Actor())]
    with pytest.raises(coordinator.ClusterError, match=r"refused: .*generator\(s\) #1 .*100\.0 ms.*2% of a 1 s step"):
        driver._measure_clocks()
    # A tight exchange passes, and its offset is the midpoint's.
    driver._exchange = lambda actor: (10.0, 12.0005, 10.001)
    driver._measure_clocks()
    offset = driver.generators[0].offset
    assert offset is not None and abs(offset.offset_s - 2.0) < 1e-9


def test_the_token_goes_to_other_machines_over_plain_tcp_only_when_confirmed() -> None:
    driver = _driver({"rates": [100]})
    with pytest.raises(
        coordinator.ClusterError, match=r"over plain TCP \(tcp://10\.1\.2\.3:8786\).*--cluster-plain-tcp"
    ):
        driver._check_secrets(["tcp://10.1.2.4:4000"])
    confirmed = _driver({"rates": [100], "cluster_plain_tcp": True})
    confirmed._check_secrets(["tcp://10.1.2.4:4000"])
    assert any("as confirmed" in note for note in confirmed.notes)


def test_clients_are_split_over_generators_to_the_last_one() -> None:
    assert coordinator.split_clients(5, 2) == [3, 2]
    assert coordinator.split_clients(4, 4) == [1, 1, 1, 1]
    assert sum(coordinator.split_clients(257, 64)) == 257


# --- the generator subprocess on its own ------------------------------------------------------------


def _generator_process(lease_s: float) -> tuple[Any, int]:
    import subprocess
    import sys

    read, write = os.pipe()
    process = subprocess.Popen(
        [sys.executable, "-m", GENERATOR_MODULE, "--lease-fd", str(read), "--lease-s", str(lease_s)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        pass_fds=(read,),
    )
    os.close(read)
    return process, write


def test_a_generator_whose_lease_is_not_renewed_exits_by_itself() -> None:
    # What a coordinator killed outright leaves: a generator nobody renews. It must end.
    from app.core.load.cluster.remote_generator import LEASE_EXPIRED_EXIT

    process, lease = _generator_process(0.5)
    try:
        os.write(lease, b".")  # one renewal, then none
        assert process.wait(timeout=10) == LEASE_EXPIRED_EXIT
    finally:
        os.close(lease)
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_generator_answers_commands_and_names_its_errors() -> None:
    from app.core.load.cluster.pipe_frames import read_frame, write_frame

    process, lease = _generator_process(30)
    try:
        write_frame(process.stdin, ("prepare", 32))  # before connect: refused, named, and it goes on
        status, message = read_frame(process.stdout)
        assert status == "error" and "'prepare' before connect" in message
        write_frame(process.stdin, ("close",))
        assert read_frame(process.stdout) == ("ok", None)
        assert process.wait(timeout=10) == 0
    finally:
        os.close(lease)
        if process.poll() is None:
            process.kill()
            process.wait()

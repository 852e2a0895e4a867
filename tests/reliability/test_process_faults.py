"""Processes killed from outside: a job's worker, sender or receiver, and the app itself.

A killed child fails its own job with a message naming the role and the signal, the
run goes on, and every finished job is in the store and the exports. A killed app (or
CLI) leaves a sound store whose run reads "interrupted" on the next start, finished
jobs readable, and no child process running on without it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from app.core.contracts.events import JobProcesses, Progress, SampleBatch
from app.core.processes.lifeline import PARENT_GONE_EXIT_CODE
from app.core.profile.files import parse_profile
from app.core.results.model import to_csv, to_json
from app.core.run.runner import Runner
from app.core.store.store import Store
from app.core.transport.netns import packet_path_refusal, try_packet_path
from tests.helpers.paths import ROOT
from tests.helpers.processes import popen, wait_exited

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")

# Long enough that the kill always lands mid-job: a million samples never finish first.
LONG_LOOPBACK = {"scheme": "x25519", "mode": "loopback", "message_sizes": [1024], "samples": 1_000_000, "warmup": 0}
LONG_OPERATIONS = {"scheme": "aes-gcm", "message_sizes": [1024], "samples": 1_000_000, "warmup": 0}
TINY_OPS = {"scheme": "sha256", "message_sizes": [64], "samples": 3, "warmup": 0}
TINY_LOOPBACK = {"scheme": "aes-gcm", "mode": "loopback", "message_sizes": [64], "samples": 3, "warmup": 0}


@pytest.mark.parametrize(
    ("role", "victim_job"),
    [
        ("worker", LONG_OPERATIONS),
        ("sender", LONG_LOOPBACK),
        ("receiver", LONG_LOOPBACK),
    ],
)
def test_killed_child_fails_only_its_job_and_nothing_finished_is_lost(
    tmp_path: Path, role: str, victim_job: dict[str, Any]
) -> None:
    pids: dict[str, int] = {}
    killed: list[int] = []

    def on_event(event: Any) -> None:
        if isinstance(event, JobProcesses) and event.job_index == 1:
            pids.update(event.pids)
        # Mid-stream: the victim job has measured something already.
        if isinstance(event, (SampleBatch, Progress)) and event.job_index == 1 and not killed:
            os.kill(pids[role], signal.SIGKILL)
            killed.append(pids[role])

    profile = parse_profile({"name": f"kill-{role}", "jobs": [TINY_OPS, victim_job, TINY_LOOPBACK]})
    with Store(tmp_path / "r.sqlite3") as store:
        run = Runner(profile, store=store, on_event=on_event).run()
        stored = store.load_run(run.id)
    assert killed, "the victim job never streamed anything"
    assert [job.status for job in run.jobs] == ["ok", "failed", "ok"]
    error = run.jobs[1].error or ""
    assert f"{role} process was killed by SIGKILL" in error, error
    assert [job.status for job in stored.jobs] == ["ok", "failed", "ok"]
    assert stored.jobs[1].error == error
    assert stored.status == "finished"
    # The exports carry the same three jobs (the failed one with its cause).
    exported = json.loads(to_json(run))["jobs"]
    assert [job["status"] for job in exported] == ["ok", "failed", "ok"]
    assert to_csv(run).count("SIGKILL") >= 1
    for pid in pids.values():
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


NO_PACKET_PATH = packet_path_refusal() or try_packet_path()
OVER_PACKET_PATH = LONG_LOOPBACK | {"link": {"delay_ms": 1}, "link_emulation": "packet"}
OVER_RELAY = LONG_LOOPBACK | {"link": {"delay_ms": 1}, "link_emulation": "stream-relay"}
LONG_LOAD = {"scheme": "x25519", "mode": "load", "clients": 2, "rates": [20], "duration_s": 60, "warmup_s": 0}
LONG_TLS = {"scheme": "tls13", "mode": "loopback", "samples": 2000, "warmup": 0}
#: A sender waits this long for an answer by default: what a dead helper used to cost.
REPLY_TIMEOUT_S = 600


@pytest.mark.parametrize(
    ("role", "victim_job", "named"),
    [
        pytest.param(
            "link",
            OVER_PACKET_PATH,
            "link",
            marks=pytest.mark.skipif(NO_PACKET_PATH is not None, reason=f"no packet path here: {NO_PACKET_PATH}"),
        ),
        ("link", OVER_RELAY, "link"),
        ("receiver", OVER_RELAY, "receiver"),
        ("receiver", LONG_LOAD, "load server"),
        ("link", LONG_LOAD | {"link": {"delay_ms": 1}}, "link"),
        ("receiver", LONG_TLS, "TLS server"),
    ],
    ids=["packet-link", "relay-link", "relay-receiver", "load-server", "load-link", "tls-server"],
)
def test_a_killed_helper_ends_its_job_at_once_and_is_named(role: str, victim_job: dict[str, Any], named: str) -> None:
    """Every process of a job is watched, not only the one that measures: a SIGKILLed
    packet link left the sender waiting out its 600 s reply timeout (618 s measured) on a
    path that no longer existed. Now the job ends as the helper dies, named first, never
    as the peer that lost its connection with it."""
    pids: dict[str, int] = {}
    killed: list[float] = []
    ended: list[float] = []

    def on_event(event: Any) -> None:
        if isinstance(event, JobProcesses) and event.job_index == 0:
            pids.update(event.pids)
        if isinstance(event, (SampleBatch, Progress)) and event.job_index == 0 and not killed:
            killed.append(time.monotonic())
            os.kill(pids[role], signal.SIGKILL)
        if isinstance(event, JobProcesses) and event.job_index == 1 and killed and not ended:
            ended.append(time.monotonic())  # the next job is starting: the victim's has ended

    profile = parse_profile({"name": f"kill-{role}", "jobs": [victim_job, TINY_LOOPBACK]})
    run = Runner(profile, on_event=on_event).run()
    assert killed, "the victim job never streamed anything"
    assert [job.status for job in run.jobs] == ["failed", "ok"], [job.error for job in run.jobs]
    error = run.jobs[0].error or ""
    assert error.startswith(f"{named} process was killed by SIGKILL"), error
    # A bound that catches the hang, not a speed: the waits on the dead helper ran for
    # 600 s. Here it takes a fraction of a second (the stops of the others, 1 s at most).
    assert ended and ended[0] - killed[0] < REPLY_TIMEOUT_S / 20, ended[0] - killed[0]
    for pid in pids.values():
        assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


# The "app": a runner with a store, killed by SIGKILL (no cleanup, no finally) while its
# second job's receiver and sender run. It writes their pids first, for the test to watch.
KILLED_APP = textwrap.dedent("""
    import json, os, signal, sys
    from app.core.contracts.events import JobProcesses, SampleBatch, Progress
    from app.core.profile.files import parse_profile
    from app.core.run.runner import Runner
    from app.core.store.store import Store

    def main():
        store_path, pid_file = sys.argv[1], sys.argv[2]
        profile = parse_profile(json.loads(sys.argv[3]))
        pids = {}
        def die():
            with open(pid_file, "w") as handle:
                json.dump(pids, handle)
            os.kill(os.getpid(), signal.SIGKILL)
        def on_event(event):
            if isinstance(event, JobProcesses) and event.job_index == 1:
                pids.update(event.pids)
            if isinstance(event, (SampleBatch, Progress)) and event.job_index == 1:
                die()
        Runner(profile, store=Store(store_path), on_event=on_event).run()

    if __name__ == "__main__":
        main()
""")


def _wait_gone(pids: list[int], timeout: float = 15) -> list[int]:
    alive = wait_exited(pids, timeout=timeout)
    for process in alive:  # never leave them behind, even when the test fails
        process.kill()
    return [p.pid for p in alive]


# A child pausing 60 s between samples sends nothing meanwhile: no broken pipe would
# tell it the app is gone, only its lifeline does.
PAUSING_OPERATIONS = {"scheme": "sha256", "message_sizes": [96], "samples": 5, "warmup": 0, "pause_ms": 60_000}
PAUSING_LOOPBACK = PAUSING_OPERATIONS | {"mode": "loopback"}


@pytest.mark.parametrize(
    ("victim", "roles"),
    [
        (LONG_LOOPBACK, {"receiver", "sender"}),
        pytest.param(PAUSING_OPERATIONS, {"worker"}, marks=pytest.mark.exhaustive),
        pytest.param(PAUSING_LOOPBACK, {"receiver", "sender"}, marks=pytest.mark.exhaustive),
    ],
    ids=["loopback-streaming", "operations-pausing", "loopback-pausing"],
)
def test_app_killed_mid_run_leaves_a_sound_store_and_no_orphans(
    tmp_path: Path, victim: dict[str, Any], roles: set[str]
) -> None:
    script = tmp_path / "app_killed.py"
    script.write_text(KILLED_APP)
    store_path, pid_file = tmp_path / "r.sqlite3", tmp_path / "pids.json"
    profile = {"name": "killed", "jobs": [TINY_OPS, victim, TINY_OPS | {"message_sizes": [128]}]}
    # Output to a file, not a pipe: an orphan holding the pipe would make run() wait for it.
    with open(tmp_path / "stderr.txt", "w") as stderr:
        proc = subprocess.run(
            [sys.executable, str(script), str(store_path), str(pid_file), json.dumps(profile)],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            timeout=120,
            check=False,
        )
    assert proc.returncode == -signal.SIGKILL, (tmp_path / "stderr.txt").read_text()
    children = json.loads(pid_file.read_text())
    assert set(children) == roles
    # The children notice their parent is gone and exit on their own, long before the
    # 60 s pause would end and a send would fail.
    assert _wait_gone(list(children.values()), timeout=10) == [], "children outlived the killed app"

    with Store(store_path) as store:  # "the next start"
        assert store.integrity_problems() == []
        (summary,) = store.list_runs()
        assert summary.status == "interrupted"
        run = store.load_run(summary.id)
    assert [(job.index, job.status) for job in run.jobs] == [(0, "ok")]
    assert run.jobs[0].metrics  # the finished job is whole, not just a row


def test_cli_killed_mid_run_same_guarantees(tmp_path: Path) -> None:
    """`cryptobench run` killed after its first job printed: store sound, run interrupted,
    the first job readable, the running job's processes gone, no export half-written."""
    profile_file = tmp_path / "p.json"
    profile_file.write_text(json.dumps({"name": "cli-killed", "jobs": [TINY_OPS, LONG_LOOPBACK]}))
    store_path, export = tmp_path / "r.sqlite3", tmp_path / "out.json"
    proc = popen(
        [
            sys.executable,
            "-m",
            "app",
            "run",
            str(profile_file),
            "--store",
            str(store_path),
            "--json",
            str(export),
            "--quiet",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    children: list[int] = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # blocks until the CLI prints: no sleeping
            if line.startswith("ok "):
                break
        # The second job is starting: kill the CLI with whatever it has spawned so far
        # (the runner test above covers children caught mid-job).
        children = [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
        proc.kill()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert _wait_gone(children) == []
    assert not export.exists() and not list(tmp_path.glob(".out.json.*"))  # nothing half-written
    with Store(store_path) as store:
        (summary,) = store.list_runs()
        assert summary.status == "interrupted"
        assert store.load_run(summary.id).jobs[0].status == "ok"


def test_child_without_a_lifeline_parent_is_left_alone() -> None:
    """Called outside multiprocessing (as in unit tests), the watch does not start."""
    from app.core.processes.lifeline import exit_with_parent

    assert exit_with_parent() is None
    assert PARENT_GONE_EXIT_CODE not in (0, 1, 2)

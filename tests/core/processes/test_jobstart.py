"""Job processes start fast (forked from the preloaded fork server) and still start fresh:
no job sees the module state, keys or heap of an earlier one."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil
import pytest

from app.core.contracts.events import JobProcesses
from app.core.processes import jobstart
from app.core.profile.files import parse_profile
from app.core.run.runner import Runner
from app.core.schemes import registry

MIB = 2**20

ROOT = Path(__file__).resolve().parents[3]
needs_forkserver = pytest.mark.skipif(
    "forkserver" not in multiprocessing.get_all_start_methods(),
    reason="no fork server on this platform (jobs spawn fresh interpreters)",
)


def _probe(conn: Any, allocate: int) -> None:
    """Runs in a job process: what does it inherit, and what does it leave behind?"""
    import random

    from Crypto.Random import get_random_bytes
    from cryptography.hazmat.primitives.asymmetric import x25519

    import app.core.measure.ops as ops

    seen_before = getattr(ops, "_probe_mark", None)
    ops._probe_mark = os.getpid()  # type: ignore[attr-defined]  # state a next job must not see
    rss_start = psutil.Process().memory_info().rss
    ballast = bytearray(allocate)  # heap a next job must not start with
    key = x25519.X25519PrivateKey.generate().private_bytes_raw()
    conn.send(
        {
            "pid": os.getpid(),
            "seen_before": seen_before,
            "rss_start": rss_start,
            "key": key,
            "pycryptodome": get_random_bytes(16),
            "random": random.getrandbits(64),
            "schemes_loaded": [name for name in registry.MODULES if name in sys.modules],
        }
    )
    del ballast
    conn.close()


def _run_probe(context: Any, allocate: int = 0) -> dict[str, Any]:
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_probe, args=(send, allocate))
    with jobstart.stop_signals_blocked():
        process.start()
    send.close()
    try:
        return receive.recv()
    finally:
        process.join(30)
        receive.close()


@needs_forkserver
def test_each_job_process_starts_fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(jobstart.START_METHOD_VARIABLE, raising=False)
    context = jobstart.child_context()
    first = _run_probe(context, allocate=64 * MIB)
    second = _run_probe(context)
    assert first["pid"] != second["pid"] and os.getpid() not in (first["pid"], second["pid"])
    assert first["seen_before"] is None and second["seen_before"] is None, "module state crossed jobs"
    assert first["key"] != second["key"], "OpenSSL's generator repeated itself across forks"
    assert first["pycryptodome"] != second["pycryptodome"]
    assert first["random"] != second["random"], "Python's random was not reseeded in the fork"
    # The second starts from the server's heap, not from the first's 64 MiB.
    assert second["rss_start"] < first["rss_start"] + 32 * MIB
    # Every module of the registry, preloaded: this test's module imports none of them.
    assert first["schemes_loaded"] == second["schemes_loaded"] == list(registry.MODULES), "not preloaded"


@needs_forkserver
def test_job_processes_are_not_children_of_a_previous_job(tmp_path: Any) -> None:
    per_job: dict[int, dict[str, int]] = {}

    def on_event(event: Any) -> None:
        if isinstance(event, JobProcesses):  # sent as each process starts; the last has them all
            per_job[event.job_index] = dict(event.pids)

    profile = parse_profile(
        {
            "name": "fresh",
            "jobs": [
                {"scheme": "sha256", "message_sizes": [64], "samples": 3, "warmup": 0},
                {"scheme": "x25519", "mode": "loopback", "message_sizes": [64], "samples": 3, "warmup": 0},
                {"scheme": "sha256", "message_sizes": [65], "samples": 3, "warmup": 0},
            ],
        }
    )
    run = Runner(profile, on_event=on_event).run()
    assert {job.status for job in run.jobs} == {"ok"}
    assert run.environment["job_start_method"] == "forkserver"
    pids = list(per_job.values())
    every = [pid for job in pids for pid in job.values()]
    assert len(set(every)) == len(every) and os.getpid() not in every  # no process serves two jobs
    workers = [job["worker"] for job in pids if "worker" in job]
    assert len(set(workers)) == 2  # one process per job, never reused


def test_the_preload_takes_the_scheme_modules_from_the_registry_alone() -> None:
    """No second list: the fork server's preload names no scheme module, only the one that
    imports every module of `registry.MODULES`, and that one loads them all."""
    schemes = [name for name in jobstart.CHILD_PRELOAD if name.startswith("app.core.schemes.")]
    assert schemes == ["app.core.schemes.preload"]
    code = (
        "import sys\n"
        "import app.core.schemes.preload\n"
        "from app.core.schemes.registry import MODULES\n"
        "missing = [name for name in MODULES if name not in sys.modules]\n"
        "assert MODULES and not missing, missing\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_spawn_can_be_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(jobstart.START_METHOD_VARIABLE, "spawn")
    assert jobstart.start_method() == "spawn"
    assert jobstart.child_context().get_start_method() == "spawn"
    monkeypatch.setenv(jobstart.START_METHOD_VARIABLE, "nonsense")
    assert jobstart.start_method() in multiprocessing.get_all_start_methods()


def test_spawned_jobs_record_their_start_method(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(jobstart.START_METHOD_VARIABLE, "spawn")
    run = Runner(
        parse_profile(
            {"name": "spawned", "jobs": [{"scheme": "sha256", "message_sizes": [64], "samples": 3, "warmup": 0}]}
        )
    ).run()
    assert run.jobs[0].status == "ok" and run.environment["job_start_method"] == "spawn"


_MASK_PROBE = """
import signal, sys
from app.core.processes import jobstart

def report(conn):
    conn.send(sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])))
    conn.close()

if __name__ == "__main__":
    import mask_probe
    context = jobstart.child_context()
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=mask_probe.report, args=(send,))
    with jobstart.stop_signals_blocked():
        process.start()
    send.close()
    print(receive.recv())
    process.join(30)
"""


@needs_forkserver
def test_the_first_start_leaves_stop_signals_blocked_in_the_job_process(tmp_path: Any) -> None:
    """A fresh process's first start also starts the stdlib's resource tracker, which unblocks
    SIGINT in the starting thread when it is done: the fork server started after it, and every
    job process forked from it, took Ctrl-C (a KeyboardInterrupt traceback when it met one in
    multiprocessing's bootstrap). Here in a fresh interpreter, where nothing runs yet."""
    (tmp_path / "mask_probe.py").write_text(_MASK_PROBE)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    env.pop(jobstart.START_METHOD_VARIABLE, None)
    done = subprocess.run(
        [sys.executable, str(tmp_path / "mask_probe.py")],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    blocked = set(json.loads(done.stdout.strip().splitlines()[-1]))
    assert {int(signal.SIGINT), int(signal.SIGHUP)} <= blocked, blocked

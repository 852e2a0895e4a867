"""Frozen helpers: every wait on a helper process has a deadline.

A helper (the fork server, a job's worker, sender, receiver, link, load generator or
load server, or what a load server forked) is frozen with a real SIGSTOP. Before: with
the fork server stopped, the next job's start blocked for ever; the first SIGTERM only
set the cancel flag, the second wrote the exports and then hung in multiprocessing's
exit-time join; only SIGKILL ended the CLI, and the stopped fork server was left
behind. Now the job fails naming what froze, the run goes on from a fresh fork server
(or stops at once when asked), the exports are written and no process is left.

Every stopped process is continued and killed in teardown, whatever the test did.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from app.core.contracts.events import JobProcesses, LogMessage, RunEvent, SampleBatch
from app.core.processes import deadlines, watchdog
from app.core.profile.files import parse_profile
from app.core.results.model import to_json
from app.core.run.runner import Runner
from app.core.store.store import Store
from tests.helpers.paths import ROOT
from tests.helpers.processes import popen, wait_exited

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="SIGSTOP, and the fork server's start method"
)

TINY = {"scheme": "sha256", "message_sizes": [64], "samples": 3, "warmup": 0}
TINY_2 = {**TINY, "message_sizes": [128]}
TINY_3 = {**TINY, "message_sizes": [256]}
#: Jobs that never end by themselves within a test: a freeze always lands mid-job.
LONG_OPERATIONS = {"scheme": "sha256", "message_sizes": [96], "samples": 5, "warmup": 0, "pause_ms": 60_000}
LONG_LOOPBACK = {"scheme": "x25519", "mode": "loopback", "message_sizes": [1024], "samples": 1_000_000, "warmup": 0}
LONG_LINK = {**LONG_LOOPBACK, "link": {"delay_ms": 1}}
LONG_LOAD = {"scheme": "x25519", "mode": "load", "clients": 2, "rates": [20], "duration_s": 60, "warmup_s": 0}
LONG_LOAD_FORKED = {**LONG_LOAD, "server_workers": 2}
STOPPED_WORDS = "was stopped (SIGSTOP or a debugger) for"

_stopped: list[int] = []


def _freeze(pid: int) -> None:
    _stopped.append(pid)
    os.kill(pid, signal.SIGSTOP)


@pytest.fixture(autouse=True)
def thawed() -> Iterator[None]:
    """Whatever a test froze is continued and killed after it (a stopped process would
    otherwise outlive the suite), and a fork server killed by a test is replaced by the
    next start as in a run."""
    yield
    for pid in _stopped:
        for signum in (signal.SIGCONT, signal.SIGKILL):
            try:
                os.kill(pid, signum)
            except ProcessLookupError:
                break
    _stopped.clear()


@pytest.fixture
def quick_freeze(monkeypatch: pytest.MonkeyPatch) -> float:
    """A shorter 'frozen' than the 3 s a user's machine gets: the class is the same."""
    monkeypatch.setattr(deadlines, "FROZEN_SECONDS", 0.5)
    monkeypatch.setattr(watchdog, "FROZEN_SECONDS", 0.5)
    return 0.5


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


# --- a job's own processes, frozen mid-job (in-process runner) ----------------------------------


def _run_freezing(job: dict[str, Any], role: str, *, grandchild: bool = False) -> tuple[Any, list[RunEvent], int]:
    """Run [TINY, job, TINY_3]; freeze the job's `role` process (or one it forked) once
    the job's processes are all up. Returns the run, its events and the pid frozen."""
    frozen: list[int] = []
    events: list[RunEvent] = []
    last_role = "worker" if job.get("mode", "operations") == "operations" else "sender"

    def on_event(event: RunEvent) -> None:
        events.append(event)
        if isinstance(event, JobProcesses) and event.job_index == 1 and last_role in event.pids and not frozen:
            pid = event.pids[role]
            if grandchild:
                (pid, *_) = [child.pid for child in psutil.Process(pid).children()]
            _freeze(pid)
            frozen.append(pid)

    profile = parse_profile({"name": "frozen", "jobs": [TINY, job, TINY_3]})
    run = Runner(profile, on_event=on_event).run()
    assert frozen, "the job's processes never came up"
    return run, events, frozen[0]


@pytest.mark.parametrize(
    ("role", "job", "grandchild", "named"),
    [
        ("worker", LONG_OPERATIONS, False, "the worker process"),
        ("sender", LONG_LOOPBACK, False, "the sender process"),
        ("receiver", LONG_LOOPBACK, False, "the receiver process"),
        ("link", LONG_LINK, False, "the link process"),
        ("sender", LONG_LOAD, False, "the load generator process"),
        ("receiver", LONG_LOAD, False, "the load server process"),
        ("receiver", LONG_LOAD_FORKED, True, "the load server process's child"),  # one of its workers
    ],
    ids=["worker", "sender", "receiver", "link", "load-generator", "load-server", "load-server-worker"],
)
def test_a_frozen_job_process_fails_its_job_by_name_and_the_run_goes_on(
    quick_freeze: float, role: str, job: dict[str, Any], grandchild: bool, named: str
) -> None:
    run, _, pid = _run_freezing(job, role, grandchild=grandchild)
    assert [result.status for result in run.jobs] == ["ok", "failed", "ok"]
    error = run.jobs[1].error or ""
    assert error == f"{named} (pid {pid}) {STOPPED_WORDS} {quick_freeze:g} s; it was killed", error
    assert _gone(pid)  # killed by the watch, not left stopped


def test_a_load_step_measured_while_its_server_froze_is_not_kept(quick_freeze: float) -> None:
    """A server stopped mid-step must never read as the server's own capacity: the step's
    numbers are dropped and the job fails naming the freeze."""
    run, _, _ = _run_freezing({**LONG_LOAD, "duration_s": 2}, "receiver")
    job = run.jobs[1]
    assert job.status == "failed" and job.load is None and STOPPED_WORDS in (job.error or "")


@pytest.mark.parametrize(
    ("role", "job"),
    [("receiver", {**LONG_LOAD, "duration_s": 2, "rates": [50]}), ("receiver", {**LONG_LOOPBACK, "samples": 3000})],
    ids=["load-server", "loopback-receiver"],
)
def test_a_brief_stop_fails_the_size_measured_across_it(role: str, job: dict[str, Any]) -> None:
    """A load server stopped for a second, then continued (shorter than the watch's kill
    bound), read as "server overloaded" and gave a knee of what trickled through, job ok.
    Any stop a look sees fails the size it fell in: its figures timed the stop."""
    frozen: list[int] = []

    def on_event(event: RunEvent) -> None:
        if isinstance(event, SampleBatch) and event.job_index == 1 and not frozen:
            pid = pids[role]
            _freeze(pid)
            frozen.append(pid)
            threading.Timer(1.0, os.kill, (pid, signal.SIGCONT)).start()
        elif isinstance(event, JobProcesses) and event.job_index == 1:
            pids.update(event.pids)

    pids: dict[str, int] = {}
    profile = parse_profile({"name": "stopped", "jobs": [TINY, job, TINY_3]})
    run = Runner(profile, on_event=on_event).run()
    assert frozen, "no sample came"
    assert [result.status for result in run.jobs] == ["ok", "failed", "ok"]
    first = run.jobs[1]
    assert f"(pid {frozen[0]}) was stopped (SIGSTOP or a debugger) while it measured" in (first.error or "")
    assert first.load is None and not first.metrics


# A run in a process group of its own, which the test stops whole (Ctrl-Z) once each
# watched result is being measured: it says so on stdout, then prints its results.
GROUP_STOPPED = textwrap.dedent("""
    import json, sys
    from app.core.contracts.events import SampleBatch
    from app.core.profile.files import parse_profile
    from app.core.run.runner import Runner

    HANDSHAKES = ("keygen", "handshake", "handshake_receiver", "handshake_rtt")

    def main():
        watched = set(json.loads(sys.argv[2]))
        def on_event(event):
            # A size's own samples (not the handshakes' before it, which every size carries).
            if isinstance(event, SampleBatch) and event.job_index in watched and event.metric not in HANDSHAKES:
                watched.discard(event.job_index)
                print(f"measuring {event.job_index}", flush=True)
        run = Runner(parse_profile(json.loads(sys.argv[1])), on_event=on_event).run()
        print(json.dumps([[job.status, job.error] for job in run.jobs]), flush=True)

    if __name__ == "__main__":
        main()
""")


def _group(pgid: int) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) == pgid:
                found.append(process)
        except (ProcessLookupError, psutil.Error):
            continue
    return found


def _stop_and_continue(pgid: int) -> None:
    """Ctrl-Z, then `fg` once every process of the group is stopped."""
    os.killpg(pgid, signal.SIGSTOP)
    deadline = time.monotonic() + 20
    while not all(p.status() == psutil.STATUS_STOPPED for p in _group(pgid) if p.pid != os.getpid()):
        assert time.monotonic() < deadline, "the process group did not stop"
    os.killpg(pgid, signal.SIGCONT)


def test_a_stop_of_the_whole_process_group_fails_the_size_it_fell_in(tmp_path: Path) -> None:
    """Ctrl-Z stops the supervisor with its job: the watch, stopped too, saw nothing, and a
    loopback job kept a 4 s round trip in an ok size with no word. Every process of the job
    now counts the SIGCONT that continues it into a count the job shares, which the
    measuring process stamps on each size's start and end. Stopped here: a loopback job's
    first size (result 0, its second is result 1), then a load job's step (result 2)."""
    script = tmp_path / "group_stopped.py"
    script.write_text(GROUP_STOPPED)
    loopback = {"scheme": "aes-gcm", "mode": "loopback", "message_sizes": [1024, 2048], "samples": 20, "pause_ms": 25}
    load = {"scheme": "x25519", "mode": "load", "clients": 2, "rates": [40], "duration_s": 1, "warmup_s": 0}
    profile = {"name": "group stopped", "jobs": [loopback, load, TINY]}
    proc = popen(
        [sys.executable, str(script), json.dumps(profile), "[0, 2]"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        for index in (0, 2):
            said = proc.stdout.readline().strip()
            assert said == f"measuring {index}", (said, proc.stderr.read() if proc.stderr else "")
            _stop_and_continue(proc.pid)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGCONT)
            proc.kill()
            proc.wait()
    results = json.loads(out.splitlines()[-1])
    assert [status for status, _ in results] == ["failed", "ok", "failed", "ok"], results
    for _, error in (results[0], results[2]):
        # Named from the count each process keeps: all of them, together (or, where the
        # count at the size's start was read after the continue, the job's processes).
        assert (
            "were stopped together (Ctrl-Z of their process group) while it measured" in error
            or "a process of the job was stopped (SIGSTOP, or Ctrl-Z of its process group) and continued" in error
        ), error
        assert "its figures include the stop, so they are not kept" in error


# --- the fork server, frozen between two jobs (in-process) ---------------------------------------


def _freeze_fork_server_after_first_job(runner: Runner) -> list[int]:
    """Freeze the fork server as job 1 is recorded, before job 2 starts."""
    frozen: list[int] = []
    original = runner.record

    def record(run: Any, results: Any, **kwargs: Any) -> None:
        original(run, results, **kwargs)
        if not frozen:
            pid = deadlines.fork_server_pid()
            assert pid is not None
            _freeze(pid)
            frozen.append(pid)

    runner.record = record  # type: ignore[method-assign]
    return frozen


@pytest.mark.parametrize("second", [TINY_2, {**TINY_2, "mode": "loopback", "scheme": "aes-gcm"}], ids=["ops", "loop"])
def test_a_frozen_fork_server_fails_one_start_and_a_fresh_one_serves_the_rest(
    quick_freeze: float, second: dict[str, Any]
) -> None:
    events: list[RunEvent] = []
    runner = Runner(parse_profile({"name": "fs", "jobs": [TINY, second, TINY_3]}), on_event=events.append)
    frozen = _freeze_fork_server_after_first_job(runner)
    run = runner.run()
    assert [job.status for job in run.jobs] == ["ok", "failed", "ok"]
    first = "worker" if second.get("mode") is None else "receiver"
    assert run.jobs[1].error == (
        f"cannot start the {first} process: the fork server (pid {frozen[0]}) {STOPPED_WORDS} "
        f"{quick_freeze:g} s; it was killed"
    )
    assert _gone(frozen[0]) and deadlines.fork_server_pid() != frozen[0]


def test_a_fork_server_frozen_mid_job_is_replaced_before_the_next_start(quick_freeze: float) -> None:
    """Frozen while a job runs: that job is not disturbed (its processes are forked
    already), the watch kills the server and says so, and the next job starts at once."""
    events: list[RunEvent] = []
    frozen: list[int] = []

    def on_event(event: RunEvent) -> None:
        events.append(event)
        if isinstance(event, JobProcesses) and event.job_index == 1 and not frozen:
            pid = deadlines.fork_server_pid()
            assert pid is not None
            _freeze(pid)
            frozen.append(pid)

    job = {**LONG_OPERATIONS, "pause_ms": 1500, "samples": 2}  # outlives the 0.5 s freeze
    run = Runner(parse_profile({"name": "fs", "jobs": [TINY, job, TINY_3]}), on_event=on_event).run()
    assert [result.status for result in run.jobs] == ["ok", "ok", "ok"]
    warnings = [e.text for e in events if isinstance(e, LogMessage) and "fork server" in e.text]
    assert warnings and f"the fork server (pid {frozen[0]}) {STOPPED_WORDS}" in warnings[0]
    assert _gone(frozen[0])


def test_cancel_interrupts_a_start_blocked_on_a_frozen_fork_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Stop button (or a first SIGTERM) while a start waits on a frozen server: the
    run ends within the cancel grace, not at the freeze deadline."""
    monkeypatch.setattr(deadlines, "FROZEN_SECONDS", 600.0)
    monkeypatch.setattr(deadlines, "START_TIMEOUT_SECONDS", 600.0)
    cancel = threading.Event()
    runner = Runner(parse_profile({"name": "fs", "jobs": [TINY, TINY_2, TINY_3]}), cancel=cancel)
    frozen = _freeze_fork_server_after_first_job(runner)
    original_start = deadlines.start_process

    def start_then_cancel(process: Any, event: threading.Event) -> None:
        if frozen:
            threading.Timer(0.2, cancel.set).start()  # the user presses Stop while it waits
        original_start(process, event)

    monkeypatch.setattr("app.core.run.supervisor.start_process", start_then_cancel)
    run = runner.run()
    assert [job.status for job in run.jobs] == ["ok", "cancelled", "cancelled"]
    assert run.status == "cancelled"
    assert _gone(frozen[0])


def test_a_start_that_never_answers_fails_at_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fork server that is running but never answers (not stopped, just wedged)."""
    runner = Runner(parse_profile({"name": "fs", "jobs": [TINY, TINY_2, TINY_3]}))
    _freeze_fork_server_after_first_job(runner)
    freezing = runner.record

    def record(run: Any, results: Any, **kwargs: Any) -> None:
        freezing(run, results, **kwargs)
        # For job 2 only (jobs 1 and 3 may wait for a fresh server's imports): a short
        # deadline, and the frozen server seen as running, as a wedged one would be.
        if len(run.jobs) == 1:
            monkeypatch.setattr(deadlines, "START_TIMEOUT_SECONDS", 0.5)
            monkeypatch.setattr(deadlines, "is_stopped", lambda pid: False)
        else:
            monkeypatch.undo()

    runner.record = record  # type: ignore[method-assign]
    run = runner.run()
    assert [job.status for job in run.jobs] == ["ok", "failed", "ok"]
    assert run.jobs[1].error == "cannot start the worker process: the fork server did not answer within 0.5 s"


# --- the CLI: exit codes, exports, and the exit path ---------------------------------------------

FREEZING_CLI = textwrap.dedent("""
    import os, runpy, signal, sys
    if __name__ == "__main__":  # the fork server imports this file again: only the CLI runs it
        from app.core.processes import deadlines, watchdog
        from app.core.run import runner, supervisor
        deadlines.FROZEN_SECONDS = watchdog.FROZEN_SECONDS = float(os.environ["FROZEN_SECONDS"])
        where = os.environ["FREEZE_AT"]

        def freeze():
            pid = deadlines.fork_server_pid()
            os.kill(pid, signal.SIGSTOP)
            print(f"FROZE {pid}", file=sys.stderr, flush=True)

        if where == "after-job-1":
            original = runner.Runner.record
            def record(self, run, results, **kwargs):
                original(self, run, results, **kwargs)
                if not getattr(self, "froze", False):
                    self.froze = True
                    freeze()
            runner.Runner.record = record
        else:  # once the loopback receiver listens: its sender's start then blocks
            original_wait = supervisor.ChildSupervisor.wait_for_port
            def wait_for_port(self, role):
                port = original_wait(self, role)
                freeze()
                return port
            supervisor.ChildSupervisor.wait_for_port = wait_for_port
        sys.argv[0] = "cryptobench"
        runpy.run_module("app", run_name="__main__")
""")


def _cli(tmp_path: Path, jobs: list[dict[str, Any]], freeze_at: str, frozen_seconds: float) -> subprocess.Popen[str]:
    script, profile = tmp_path / "freezing.py", tmp_path / "p.json"
    script.write_text(FREEZING_CLI)
    profile.write_text(json.dumps({"name": "frozen", "jobs": jobs}))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FREEZE_AT": freeze_at, "FROZEN_SECONDS": str(frozen_seconds)}
    args = [sys.executable, str(script), "run", str(profile), "--json", str(tmp_path / "o.json"), "--quiet"]
    return popen(args, cwd=ROOT, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _frozen_pid(proc: subprocess.Popen[str]) -> int:
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("FROZE "):
            _stopped.append(int(line.split()[1]))
            return int(line.split()[1])
    raise AssertionError(f"the CLI ended before it froze its fork server: {proc.wait()}")


def _end(proc: subprocess.Popen[str], bound: float) -> tuple[int, str]:
    """The CLI's exit code and the rest of its stderr; it must end within `bound` seconds."""
    try:
        _, err = proc.communicate(timeout=bound)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError(f"the CLI did not end within {bound:g} s") from None
    return proc.returncode, err


def _descendants_gone(pid: int, known: list[int]) -> None:
    """Every process the CLI had is gone: its helpers end as it ends (the resource tracker
    on its pipe's EOF, a moment later), so each gets a bounded moment to go."""
    left = wait_exited(set(known), timeout=5)
    assert not left, f"processes {[p.pid for p in left]} of the CLI {pid} outlived it"


def test_cli_run_goes_on_past_a_frozen_fork_server(tmp_path: Path) -> None:
    proc = _cli(tmp_path, [TINY, TINY_2, TINY_3], "after-job-1", 1.0)
    frozen = _frozen_pid(proc)
    helpers = [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
    code, err = _end(proc, 60)
    assert code == 1, err
    assert "Traceback" not in err
    jobs = json.loads((tmp_path / "o.json").read_text())["jobs"]
    assert [job["status"] for job in jobs] == ["ok", "failed", "ok"]
    assert f"the fork server (pid {frozen}) {STOPPED_WORDS} 1 s" in jobs[1]["error"]
    _descendants_gone(proc.pid, [frozen, *helpers])


@pytest.mark.parametrize(
    ("freeze_at", "signals"),
    # make test keeps one of each: a stop and an abort, at each of the two places (test-all: all four).
    [
        pytest.param("after-job-1", 1, marks=pytest.mark.exhaustive),
        ("after-job-1", 2),
        ("receiver-listening", 1),
        pytest.param("receiver-listening", 2, marks=pytest.mark.exhaustive),
    ],
    ids=[
        "after-job-1-one-SIGTERM",
        "after-job-1-two-SIGTERMs",
        "receiver-listening-one-SIGTERM",
        "receiver-listening-two-SIGTERMs",
    ],
)
def test_cli_stops_at_once_on_sigterm_with_a_start_blocked_on_a_frozen_fork_server(
    tmp_path: Path, signals: int, freeze_at: str
) -> None:
    """The start waits on a server that will not answer for 10 minutes; SIGTERM (once, or
    twice: before, the second one hung in the exit-time join of the loopback receiver)
    ends the run promptly, exports written, every process gone, the server too."""
    second = TINY_2 if freeze_at == "after-job-1" else {**TINY_2, "mode": "loopback", "scheme": "aes-gcm"}
    jobs = [TINY, second, TINY_3] if freeze_at == "after-job-1" else [second, TINY_3]
    proc = _cli(tmp_path, jobs, freeze_at, 600.0)
    frozen = _frozen_pid(proc)
    helpers = [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
    proc.send_signal(signal.SIGTERM)
    if signals == 2:  # the second once the first was taken (two at once may arrive as one)
        assert proc.stderr is not None
        assert "stopping after SIGTERM" in proc.stderr.readline()
        proc.send_signal(signal.SIGTERM)
    code, err = _end(proc, 30)
    assert code == 128 + signal.SIGTERM, err
    assert "Traceback" not in err
    export = json.loads((tmp_path / "o.json").read_text())
    assert export["run"]["status"] == "cancelled"
    statuses = [job["status"] for job in export["jobs"]]
    # The first stop: the blocked job and the one after it are cancelled, the first kept.
    stopped = ["ok", "cancelled", "cancelled"] if freeze_at == "after-job-1" else ["cancelled"] * 2
    if signals == 1:
        assert statuses == stopped
    else:  # aborted at once: what finished before is kept, nothing else is made up. The first
        # stop may have recorded some of its cancellations before the second signal came, or
        # all of them (the second is then ignored, signals.StopSignals.running): a busy machine
        # allows any of these, so the record is a prefix of the first stop's.
        finished = 1 if freeze_at == "after-job-1" else 0
        assert len(statuses) >= finished and statuses == stopped[: len(statuses)], statuses
    _descendants_gone(proc.pid, [frozen, *helpers])


# --- the exit path on its own -------------------------------------------------------------------

EXIT_WITH_A_FROZEN_SERVER = textwrap.dedent("""
    import os, signal, sys, time
    import multiprocessing as mp
    from app.core.processes import deadlines
    from app.core.processes.jobstart import child_context

    if __name__ == "__main__":
        # Shorter bounds than a user's (1 s grace, 5 s after SIGKILL, 1 s for the report):
        # a child of a frozen server looks alive to multiprocessing for ever, so each bound
        # is waited in full, 7 s that measured nothing. The path through them is the same.
        deadlines.TERMINATE_GRACE_SECONDS = deadlines.EXIT_REPORT_SECONDS = 0.2
        deadlines.KILL_WAIT_SECONDS = 0.5
        context = child_context()
        child = context.Process(target=time.sleep, args=(600,), daemon=True)
        child.start()
        server = deadlines.fork_server_pid()
        os.kill(server, signal.SIGSTOP)  # now nobody can report the child's exit
        print(server, child.pid, flush=True)
        sys.exit(0)  # multiprocessing's exit handler would join the child for ever
""")


def test_exit_never_hangs_on_a_child_whose_fork_server_is_frozen(tmp_path: Path) -> None:
    script = tmp_path / "exit.py"
    script.write_text(EXIT_WITH_A_FROZEN_SERVER)
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    server, child = (int(word) for word in proc.stdout.readline().split())
    _stopped.extend([server, child])
    code, err = _end(proc, 30)
    assert code == 0, err
    assert _gone(server) and _gone(child)


def test_stop_process_returns_for_a_child_its_frozen_fork_server_cannot_report() -> None:
    """`stop_process` judges by pid: it returns within its bounds and forgets the child,
    so no exit-time join waits on it."""
    import multiprocessing.process
    import time

    from app.core.processes.jobstart import child_context

    process = child_context().Process(target=time.sleep, args=(600,), daemon=True)
    deadlines.start_process(process, threading.Event())
    server = deadlines.fork_server_pid()
    assert server is not None
    _freeze(server)
    started = time.monotonic()
    assert deadlines.stop_process(process) is None  # the exit status lies with the frozen server
    assert time.monotonic() - started < deadlines.TERMINATE_GRACE_SECONDS + 1
    assert process not in multiprocessing.process._children  # type: ignore[attr-defined]
    assert _gone(process.pid or 0)
    deadlines.kill_fork_server()  # the next test's start forks a fresh one


def test_store_is_untouched_by_helper_kills(tmp_path: Path, quick_freeze: float) -> None:
    """The failed job is stored like any failure: its cause, the run finished."""
    events: list[RunEvent] = []
    with Store(tmp_path / "r.sqlite3") as store:
        runner = Runner(parse_profile({"name": "fs", "jobs": [TINY, TINY_2]}), store=store, on_event=events.append)
        _freeze_fork_server_after_first_job(runner)
        run = runner.run()
        stored = store.load_run(run.id)
    assert [job.status for job in stored.jobs] == ["ok", "failed"]
    assert STOPPED_WORDS in (stored.jobs[1].error or "")
    assert json.loads(to_json(run))["jobs"][1]["error"] == stored.jobs[1].error


# --- the window: quitting while starts wait on a frozen fork server ------------------------------


def test_window_shutdown_is_bounded_with_starts_blocked_on_a_frozen_fork_server(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Quit with two pool threads each waiting on a frozen server's answer: shutdown's
    cancel frees both starts (the server is killed), so the threads end well inside its
    30 s wait and no process is left."""
    import time

    from app.gui.run_controller import RunController

    monkeypatch.setattr(deadlines, "FROZEN_SECONDS", 600.0)
    monkeypatch.setattr(deadlines, "START_TIMEOUT_SECONDS", 600.0)
    controller = RunController(workers=2, store_factory=lambda: Store(tmp_path / "r.sqlite3"))
    profile = parse_profile({"name": "quit", "jobs": [TINY, TINY_2, TINY_3]})
    deadlines.start_process(_sleeper(), threading.Event())  # the server is up before it freezes
    server = deadlines.fork_server_pid()
    assert server is not None
    _freeze(server)
    blocked = threading.Semaphore(0)
    original_start = deadlines.start_process

    def start(process: Any, cancel: threading.Event) -> None:
        blocked.release()  # this pool thread is now waiting on the frozen server
        original_start(process, cancel)

    monkeypatch.setattr("app.core.run.supervisor.start_process", start)
    controller.start(profile)
    assert blocked.acquire(timeout=30) and blocked.acquire(timeout=30)  # both threads wait on it
    started = time.monotonic()
    assert controller.shutdown(timeout_ms=30_000)
    assert time.monotonic() - started < 10
    assert _gone(server)


def _sleeper() -> Any:
    from app.core.processes.jobstart import child_context

    return child_context().Process(target=int, daemon=True)  # ends at once

"""Nothing lost, nothing faked: the run outlives its own output, stops cleanly on
SIGTERM and SIGHUP, checks every destination before the first job, and turns an
exhausted system (no file descriptor, memory or process slot left) into a failed
job instead of a traceback.

Most tests run the real CLI as a user does (`python -m app ...`), with pipes closed
early, a legacy encoding, a signal mid-run or a real open-file limit. The run is
"mid-job" when the CLI has printed its first job's "ok" line and is on a second job
that pauses for a minute between samples: no test sleeps to wait for anything.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from app.cli.main import main
from app.core.measure.sampler import ResourceSampler
from app.core.profile.files import parse_profile
from app.core.run.runner import Runner
from app.core.store.store import Store
from tests.helpers.paths import ROOT
from tests.helpers.processes import popen, wait_exited

POSIX = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals, pipes and limits")

QUICK = {"scheme": "sha256", "message_sizes": [64], "samples": 3, "warmup": 0}
PAUSING = {"scheme": "sha256", "message_sizes": [96], "samples": 5, "warmup": 0, "pause_ms": 60_000}


def _profile(tmp_path: Path, *jobs: dict[str, Any], name: str = "p.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"name": "reliability", "jobs": list(jobs)}))
    return path


def _cli(*args: str, **kwargs: Any) -> subprocess.Popen[str]:
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    return popen([sys.executable, "-m", "app", *args], cwd=ROOT, text=True, **kwargs)


def _first_job_done(proc: subprocess.Popen[str]) -> list[int]:
    """Block until the CLI printed its first job's line; return its processes then."""
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("ok "):
            return [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
    raise AssertionError(f"the CLI ended before its first job: {proc.wait()}")


def _finish(proc: subprocess.Popen[str], timeout: float = 60) -> tuple[int, str]:
    try:
        err = proc.stderr.read() if proc.stderr is not None and not proc.stderr.closed else ""
        return proc.wait(timeout=timeout), err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _statuses(export: Path) -> list[str]:
    return [job["status"] for job in json.loads(export.read_text())["jobs"]]


def _stored(store_path: Path) -> tuple[str, list[str]]:
    with Store(store_path) as store:
        (summary,) = store.list_runs()
        return summary.status, [job.status for job in store.load_run(summary.id).jobs]


# --- 1. the run outlives its own output -----------------------------------------------------


@POSIX
def test_stdout_closed_after_the_first_line_the_run_goes_on(tmp_path: Path) -> None:
    """`cryptobench run P --json o.json | head -1`: before, exit 1 with nothing on stderr,
    the later jobs never ran and no export was written."""
    profile = _profile(tmp_path, QUICK, {**QUICK, "message_sizes": [128]}, {**QUICK, "message_sizes": [256]})
    export, store_path = tmp_path / "o.json", tmp_path / "r.sqlite3"
    proc = _cli("run", str(profile), "--json", str(export), "--store", str(store_path))
    assert proc.stdout is not None
    proc.stdout.readline()  # what `head -1` reads
    proc.stdout.close()
    code, err = _finish(proc)
    assert code == 0, err
    assert "Traceback" not in err and "Exception ignored" not in err
    assert _statuses(export) == ["ok", "ok", "ok"]
    assert _stored(store_path) == ("finished", ["ok", "ok", "ok"])


@POSIX
def test_legacy_encoding_does_not_stop_a_run(tmp_path: Path) -> None:
    """A cp1252 stdout (Windows, redirected) cannot encode "≥"; before, the run stopped
    with a UnicodeEncodeError at the first line naming it."""
    profile = _profile(tmp_path, {**QUICK, "label": "SHA-256 ≥ 128 bits ✓"}, {**QUICK, "message_sizes": [128]})
    export = tmp_path / "o.json"
    proc = _cli(
        "run",
        str(profile),
        "--json",
        str(export),
        "--no-store",
        env={**os.environ, "PYTHONIOENCODING": "cp1252"},
        encoding="cp1252",
    )
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "SHA-256 \\u2265 128 bits \\u2713" in out  # escaped, not dropped and not fatal
    assert _statuses(export) == ["ok", "ok"]


@POSIX
def test_serve_goes_on_after_its_output_is_closed(tmp_path: Path) -> None:
    """`cryptobench serve | head -2`: before, the next connection's log line ended the server."""
    server = popen(
        [sys.executable, "-m", "app", "serve", "--port", "0"],
        cwd=ROOT,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        assert server.stdout is not None
        port = None
        for line in server.stdout:
            if line.startswith("serving on "):
                port = int(line.split()[2].rsplit(":", 1)[1])
                break
        assert port is not None, "the server never listened"
        server.stdout.close()  # `head` has read its lines and gone
        profile = _profile(tmp_path, QUICK)
        for k in range(2):  # the second job is served only if the first one's log lines did not kill it
            assert (
                main(
                    [
                        "run",
                        str(profile),
                        "--remote",
                        f"127.0.0.1:{port}",
                        "--no-store",
                        "--quiet",
                        "--json",
                        str(tmp_path / f"r{k}.json"),
                    ]
                )
                == 0
            )
        assert server.poll() is None
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=20) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


#: Runs one command in a child whose descriptors `CLOSED` (set by the test) are closed before
#: Python starts, and writes how `main` ended to argv[1]: its exit code, or the exception
#: that escaped it (a traceback nobody can see when stderr is closed too).
_CLOSED_FDS_DRIVER = """
import sys
from app.cli.main import main
try:
    outcome = str(main(sys.argv[2:]))
except SystemExit as exc:
    outcome = str(exc.code)
except BaseException as exc:
    outcome = repr(exc)
with open(sys.argv[1], "w") as file:
    file.write(outcome)
sys.exit(int(outcome) if outcome.isdigit() else 99)
"""


def _with_closed(fds: tuple[int, ...], outcome: Path, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    def close_them() -> None:  # in the child, before exec: `cryptobench ... >&-`
        for fd in fds:
            os.close(fd)

    return subprocess.run(
        [sys.executable, "-c", _CLOSED_FDS_DRIVER, str(outcome), *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL if 1 not in fds else None,
        stderr=subprocess.PIPE if 2 not in fds else None,
        text=True,
        timeout=120,
        env={**os.environ, "CRYPTOBENCH_HOME": str(home), "PYTHONPATH": str(ROOT)},
        preexec_fn=close_them,
        check=False,
    )


@pytest.fixture
def cli_home(tmp_path: Path) -> Path:
    from tests.helpers.stores import stored_run

    home = tmp_path / "home"
    home.mkdir()
    stored_run(home / "results.sqlite3")
    return home


PRINTED_RESULTS = [  # make test: one command that reads the store and one that reads none
    pytest.param(["history"], marks=pytest.mark.exhaustive),
    ["history", "--json"],
    pytest.param(["show", "20260101-000000-aaaaaa"], marks=pytest.mark.exhaustive),
    pytest.param(["store"], marks=pytest.mark.exhaustive),
    pytest.param(["list"], marks=pytest.mark.exhaustive),
    pytest.param(["presets"], marks=pytest.mark.exhaustive),
    ["--version"],
]


@POSIX
@pytest.mark.parametrize("argv", PRINTED_RESULTS, ids=" ".join)
def test_stdout_closed_at_start_fails_a_command_whose_output_is_its_result(
    argv: list[str], cli_home: Path, tmp_path: Path
) -> None:
    """`history >&-`: Python starts with no sys.stdout at all when descriptor 1 is closed,
    and the app pointed it at the null device. Before, exit 0 with the output lost; a
    closed descriptor is not a closed pipe (the reader's choice), it is a failure."""
    outcome = tmp_path / "outcome"
    proc = _with_closed((1,), outcome, *argv, home=cli_home)
    assert proc.returncode == 1 and outcome.read_text() == "1", proc.stderr
    assert proc.stderr == (
        "cryptobench: error: standard output: cannot write (Bad file descriptor: closed at start); the output is lost\n"
    )


@POSIX
@pytest.mark.parametrize("argv", [["history"], ["show", "20260101-000000-aaaaaa", "--json"]], ids=" ".join)
def test_stdout_and_stderr_closed_at_start_fail_without_a_traceback(
    argv: list[str], cli_home: Path, tmp_path: Path
) -> None:
    """`history >&- 2>&-`: nowhere to say it, still exit 1, and `main` returns it (no
    exception escapes to print a traceback nobody would see)."""
    outcome = tmp_path / "outcome"
    proc = _with_closed((1, 2), outcome, *argv, home=cli_home)
    assert (proc.returncode, outcome.read_text()) == (1, "1")


@POSIX
def test_stderr_closed_at_start_changes_nothing_for_the_result(cli_home: Path, tmp_path: Path) -> None:
    """Only stderr closed: the result is printed in full and the command succeeds."""
    outcome = tmp_path / "outcome"
    proc = subprocess.run(
        [sys.executable, "-c", _CLOSED_FDS_DRIVER, str(outcome), "history", "--json"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        timeout=120,
        env={**os.environ, "CRYPTOBENCH_HOME": str(cli_home), "PYTHONPATH": str(ROOT)},
        preexec_fn=lambda: os.close(2),
        check=False,
    )
    assert (proc.returncode, outcome.read_text()) == (0, "0")
    assert [run["id"] for run in json.loads(proc.stdout)] == ["20260101-000000-aaaaaa"]


@POSIX
def test_a_run_with_stdout_closed_at_start_warns_and_keeps_its_result(tmp_path: Path) -> None:
    """`run` prints an account, not its result (that is the store and the exports): a
    warning, exit 0, and the export written, not landed on descriptor 1."""
    profile, export, outcome = _profile(tmp_path, QUICK), tmp_path / "o.json", tmp_path / "outcome"
    proc = _with_closed((1,), outcome, "run", str(profile), "--no-store", "--json", str(export), home=tmp_path)
    assert (proc.returncode, outcome.read_text()) == (0, "0"), proc.stderr
    assert "cryptobench: warning: standard output: cannot write (Bad file descriptor: closed at start)" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert _statuses(export) == ["ok"]


# --- 2. SIGTERM and SIGHUP are stops, not crashes --------------------------------------------


@POSIX
@pytest.mark.parametrize(
    "signum", [signal.SIGTERM, pytest.param(signal.SIGHUP, marks=pytest.mark.exhaustive)], ids=["SIGTERM", "SIGHUP"]
)
def test_stop_signal_mid_run_keeps_everything(tmp_path: Path, signum: int) -> None:
    """`timeout`, `docker stop`, CI cancellation (SIGTERM) and a closed terminal (SIGHUP,
    with its output gone): before, exit 143/129 with no export, the row "running" forever."""
    profile = _profile(tmp_path, QUICK, PAUSING)
    export, csv, store_path = tmp_path / "o.json", tmp_path / "o.csv", tmp_path / "r.sqlite3"
    proc = _cli("run", str(profile), "--json", str(export), "--csv", str(csv), "--store", str(store_path), "--quiet")
    children = _first_job_done(proc)
    if signum == signal.SIGHUP:  # the terminal is gone: nothing can be printed any more
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()
        proc.stderr.close()
    proc.send_signal(signum)
    code, err = _finish(proc)
    assert code == 128 + signum, err
    if signum == signal.SIGTERM:
        assert "stopped by SIGTERM after 1 of 2 jobs" in err and "Traceback" not in err
    assert _statuses(export) == ["ok", "cancelled"]
    assert csv.read_text().count("\n") == 3
    assert _stored(store_path) == ("cancelled", ["ok", "cancelled"])
    assert wait_exited(children, timeout=10) == [], "the job's processes outlived the stopped CLI"


LOOPBACK_PAUSING = {**PAUSING, "scheme": "aes-gcm", "params": {"key_bits": 128}, "mode": "loopback"}


def _job_started(proc: subprocess.Popen[str], processes: int) -> None:
    """Block (bounded) until the CLI's running job has all its `processes` up."""
    from app.core.processes.jobstart import job_processes

    cli = psutil.Process(proc.pid)
    deadline = time.monotonic() + 30
    while len(job_processes(cli)) < processes:
        assert proc.poll() is None and time.monotonic() < deadline, "the job's processes never started"
        time.sleep(0.02)  # a condition polled, not a guess at a duration


@POSIX
@pytest.mark.parametrize(
    ("busy", "processes"),
    [  # make test: the link (three processes); the others in test-all
        pytest.param(PAUSING, 1, marks=pytest.mark.exhaustive),
        pytest.param(LOOPBACK_PAUSING, 2, marks=pytest.mark.exhaustive),
        ({**LOOPBACK_PAUSING, "link": {"delay_ms": 1}, "link_emulation": "stream-relay"}, 3),
        pytest.param(
            {**LOOPBACK_PAUSING, "samples": 1_000_000, "pause_ms": 1}, 2, marks=pytest.mark.exhaustive
        ),  # mid-message, not mid-pause
    ],
    ids=["worker", "sender", "link", "sending"],
)
def test_stop_signal_to_the_whole_group_is_a_cancel(tmp_path: Path, busy: dict[str, Any], processes: int) -> None:
    """GNU `timeout`, `kill -TERM -PGID` and CI runners signal the whole process group:
    the job's processes (and the fork server) got the SIGTERM too and died before the CLI
    stopped them. Before, the running job was recorded "failed" ("worker process exited
    with code 255 before reporting a result"), not "cancelled by the user"."""
    profile = _profile(tmp_path, QUICK, busy, {**QUICK, "message_sizes": [128]})
    export, store_path = tmp_path / "o.json", tmp_path / "r.sqlite3"
    proc = _cli(
        "run", str(profile), "--json", str(export), "--store", str(store_path), "--quiet", start_new_session=True
    )
    _first_job_done(proc)
    _job_started(proc, processes)
    children = [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
    os.killpg(proc.pid, signal.SIGTERM)  # the group: the CLI, its fork server and the job's processes
    code, err = _finish(proc)
    assert code == 143, err
    assert "stopped by SIGTERM after 1 of 3 jobs" in err and "Traceback" not in err
    jobs = json.loads(export.read_text())["jobs"]
    assert [(job["status"], job["error"]) for job in jobs] == [
        ("ok", None),
        ("cancelled", "cancelled by the user"),
        ("cancelled", "cancelled before start"),
    ]
    assert _stored(store_path) == ("cancelled", ["ok", "cancelled", "cancelled"])
    assert wait_exited(children, timeout=10) == [], "the job's processes outlived the stopped CLI"


@POSIX
def test_a_job_whose_process_the_stop_reached_first_is_cancelled_not_failed() -> None:
    """The order the group test above cannot force: the job's worker dies of the SIGTERM
    and the job ends on that before the supervisor's own handler sets the cancel flag (the
    window's handler runs on the GUI thread, not the runner's). Before, "failed" ("worker
    process was killed by SIGTERM"); now the runner gives the flag a moment, and a death
    by a stop signal with the flag set is the user's stop."""
    from app.core.contracts.events import Progress
    from app.core.processes.jobstart import job_processes

    cancel = threading.Event()
    killed: list[int] = []

    def on_event(event: object) -> None:
        if isinstance(event, Progress) and not killed:
            (worker,) = job_processes()
            worker.send_signal(signal.SIGTERM)
            worker.wait(10)  # dead, its pipe closed, before the flag is set
            killed.append(worker.pid)
            threading.Timer(0.1, cancel.set).start()  # the handler, on another thread, a moment later

    run = Runner(parse_profile({"name": "group-stop", "jobs": [PAUSING]}), cancel=cancel, on_event=on_event).run()
    assert killed, "the job never reported progress"
    assert [(job.status, job.error) for job in run.jobs] == [("cancelled", "cancelled by the user")]
    assert run.status == "cancelled"


def test_a_process_killed_by_someone_else_without_a_stop_is_still_a_failure() -> None:
    """The attribution needs the user's stop: a worker killed by a stray SIGTERM, with no
    stop of the run, fails the job naming the signal, as before."""
    from app.core.contracts.events import Progress
    from app.core.processes.jobstart import job_processes

    def on_event(event: object) -> None:
        if isinstance(event, Progress):
            for process in job_processes():
                process.send_signal(signal.SIGTERM)

    run = Runner(parse_profile({"name": "stray", "jobs": [PAUSING]}), cancel=threading.Event(), on_event=on_event).run()
    assert [(job.status, job.error) for job in run.jobs] == [("failed", "worker process was killed by SIGTERM")]


@POSIX
def test_killed_run_is_interrupted_even_when_its_pid_is_reused(tmp_path: Path) -> None:
    """A run killed as PID 1 in a container found a live PID 1 on every later start and
    stayed "running" forever. Alive now means "holds the run's lock"."""
    profile = _profile(tmp_path, QUICK, PAUSING)
    store_path = tmp_path / "r.sqlite3"
    proc = _cli("run", str(profile), "--store", str(store_path), "--quiet")
    try:
        _first_job_done(proc)
        with Store(store_path) as store:  # another process's live run is left alone
            assert store.list_runs()[0].status == "running"
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    db = sqlite3.connect(store_path)
    db.execute("UPDATE runs SET pid = ?", (os.getpid(),))  # the PID now belongs to a live process
    db.commit()
    db.close()
    assert _stored(store_path)[0] == "interrupted"
    assert not list(tmp_path.glob(".r.sqlite3.*.lock"))  # the dead run's lock file is cleaned up


# --- 3. every destination checked before the first job ---------------------------------------


def _refused_before_running(capsys: pytest.CaptureFixture[str], tmp_path: Path, *args: str) -> str:
    profile = _profile(tmp_path, QUICK)
    assert main(["run", str(profile), "--quiet", *args]) == 2
    out, err = capsys.readouterr()
    assert "ok " not in out and err.startswith("cryptobench: error: ") and err.count("\n") == 1
    return err


def test_export_to_a_folder_is_refused_before_the_first_job(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Before: every job ran, then exit 2 and nothing exported (the CSV was fine)."""
    folder = tmp_path / "existing"
    folder.mkdir()
    err = _refused_before_running(
        capsys, tmp_path, "--json", str(folder), "--csv", str(tmp_path / "ok.csv"), "--no-store"
    )
    assert f"--json {folder}: is a folder" in err
    assert not (tmp_path / "ok.csv").exists()


@POSIX
def test_destinations_that_are_not_files_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # writing to it would block forever; replacing it would lose it
    assert "not a regular file" in _refused_before_running(capsys, tmp_path, "--json", str(fifo), "--no-store")
    link = tmp_path / "link.json"
    link.symlink_to(fifo)  # a link is written through, so what it leads to is checked
    assert "not a regular file" in _refused_before_running(capsys, tmp_path, "--json", str(link), "--no-store")
    assert link.is_symlink()
    same = tmp_path / "same"
    err = _refused_before_running(capsys, tmp_path, "--json", str(same), "--csv", str(same), "--no-store")
    assert "the same file as --json" in err
    err = _refused_before_running(capsys, tmp_path, "--json", "/dev/cryptobench-test.json", "--no-store")
    assert "system folder" in err and not Path("/dev/cryptobench-test.json").exists()


def test_an_export_failing_at_the_end_does_not_cost_the_other(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from app.core import fileio
    from app.report import exporters

    original = fileio.atomic_write_text
    bad = tmp_path / "o.json"

    def disk_full_for_json(path: Path, text: str) -> None:
        if Path(path) == bad:
            raise fileio.FileWriteError(f"{path}: cannot write: No space left on device")
        original(path, text)

    monkeypatch.setattr(exporters, "atomic_write_text", disk_full_for_json)  # `run --json` writes through it
    code = main(
        [
            "run",
            str(_profile(tmp_path, QUICK)),
            "--json",
            str(bad),
            "--csv",
            str(tmp_path / "o.csv"),
            "--no-store",
            "--quiet",
        ]
    )
    assert code == 2
    assert f"cryptobench: error: {bad}: cannot write: No space left on device" in capsys.readouterr().err
    assert ",ok," in (tmp_path / "o.csv").read_text()


def test_report_destinations_checked_and_written_independently(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "o.json"
    assert main(["run", str(_profile(tmp_path, QUICK)), "--json", str(source), "--no-store", "--quiet"]) == 0
    capsys.readouterr()
    folder = tmp_path / "folder.md"
    folder.mkdir()
    assert main(["report", str(source), "--csv", str(tmp_path / "r.csv"), "--markdown", str(folder)]) == 2
    assert "--markdown" in capsys.readouterr().err and not (tmp_path / "r.csv").exists()


@POSIX
@pytest.mark.parametrize("kind", ["/dev/zero", "huge"])
def test_token_file_is_read_with_a_bound(tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    """`--token-file /dev/zero` read without end (memory grew until killed)."""
    token = Path(kind) if kind.startswith("/") else tmp_path / "token"
    if kind == "huge":
        token.write_text("a" * (1 << 20))
        token.chmod(0o600)
    profile = _profile(tmp_path, QUICK)
    assert main(["run", str(profile), "--remote", "127.0.0.1:9", "--token-file", str(token), "--no-store"]) == 2
    err = capsys.readouterr().err
    assert str(token) in err and ("not a regular file" in err or "larger than 4.0 KiB" in err)


# --- 4. resource exhaustion mid-run ---------------------------------------------------------

FD_EXHAUSTED_CLI = """
import os, resource, runpy, sys
if __name__ == "__main__":  # spawned children import this file again: only the CLI runs it
    from app.core.run import runner
    original = runner.Runner.record

    def record(self, run, results, **kwargs):
        original(self, run, results, **kwargs)
        if not getattr(self, "exhausted", False):  # after the first job: no descriptor left
            self.exhausted = True
            lowest = os.dup(0)
            os.close(lowest)
            # HEADROOM descriptors left: 5 let a start connect to the fork server and then
            # fail making its pipes (the server's EOFError traceback reached the terminal)
            limit = lowest + int(os.environ.get("HEADROOM", "0"))
            resource.setrlimit(resource.RLIMIT_NOFILE, (limit, resource.getrlimit(resource.RLIMIT_NOFILE)[1]))

    runner.Runner.record = record
    sys.argv[0] = "cryptobench"
    runpy.run_module("app", run_name="__main__")
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux descriptor allocation and RLIMIT_NOFILE")
@pytest.mark.parametrize(
    "headroom",  # make test: none to spare (test-all: 3, 5 and 7 more)
    [0, *(pytest.param(n, marks=pytest.mark.exhaustive) for n in (3, 5, 7))],
)
def test_no_file_descriptor_left_mid_run(tmp_path: Path, headroom: int) -> None:
    """The open-file limit is exhausted after job 1 (as `prlimit --nofile` on the live CLI
    does). Before: a traceback spawning job 2, job 2 unrecorded, no export; with a few
    descriptors left, the stdlib fork server's raw EOFError traceback on the terminal
    (and "Connection refused" for the next job, the server being dead)."""
    script = tmp_path / "exhausted.py"
    script.write_text(FD_EXHAUSTED_CLI)
    profile = _profile(tmp_path, QUICK, {**QUICK, "message_sizes": [128]}, {**QUICK, "message_sizes": [256]})
    export, store_path = tmp_path / "o.json", tmp_path / "r.sqlite3"
    proc = subprocess.run(
        [
            sys.executable,
            str(script),
            "run",
            str(profile),
            "--json",
            str(export),
            "--store",
            str(store_path),
            "--quiet",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "HEADROOM": str(headroom)},
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "EOFError" not in proc.stderr, proc.stderr
    jobs = json.loads(export.read_text())["jobs"]
    assert [job["status"] for job in jobs] == ["ok", "failed", "failed"]
    for job in jobs[1:]:
        assert "cannot start the worker process: Too many open files (EMFILE" in job["error"], job["error"]
    assert _stored(store_path) == ("finished", ["ok", "failed", "failed"])


@pytest.mark.parametrize(
    ("raised", "cause"),
    [
        (BlockingIOError(errno.EAGAIN, "Resource temporarily unavailable"), "EAGAIN: process or thread limit"),
        (OSError(errno.ENOMEM, "Cannot allocate memory"), "ENOMEM: out of memory"),
        (OSError(errno.ENFILE, "Too many open files in system"), "ENFILE"),
        (MemoryError(), "out of memory"),
    ],
    ids=["EAGAIN", "ENOMEM", "ENFILE", "MemoryError"],
)
def test_a_job_that_cannot_be_spawned_fails_with_its_cause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raised: BaseException, cause: str
) -> None:
    """The process limit (which root does not feel, hence simulated), memory, the system's
    file table: each a failed job naming what ran out; the run goes on to the next job."""
    from multiprocessing.process import BaseProcess

    def refuse(self: Any) -> None:
        raise raised

    # Every start method's Process (spawn, fork server) starts through BaseProcess.start.
    monkeypatch.setattr(BaseProcess, "start", refuse)
    profile = parse_profile({"name": "exhausted", "jobs": [QUICK, {**QUICK, "mode": "loopback", "scheme": "x25519"}]})
    with Store(tmp_path / "r.sqlite3") as store:
        run = Runner(profile, store=store).run()
        stored = store.load_run(run.id)
    assert [job.status for job in stored.jobs] == ["failed", "failed"]
    assert all(job.error and job.error.startswith("cannot start the") and cause in job.error for job in stored.jobs)
    assert "receiver process" in stored.jobs[1].error  # the loopback job's first process


def test_no_thread_for_the_sampler_fails_the_job_and_stops_its_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:

    def no_thread(self: Any) -> None:
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(ResourceSampler, "start", no_thread)
    run = Runner(parse_profile({"name": "no-thread", "jobs": [QUICK]}), cancel=threading.Event()).run()
    (job,) = run.jobs
    assert job.status == "failed"
    assert (
        job.error == "cannot start the resource sampler: can't start new thread (thread or process limit "
        "reached: `ulimit -u`)"
    )
    # the worker it had spawned is stopped (the autouse fixture fails the test otherwise)

"""How a job's processes start: fresh for every job, without paying the interpreter each time.

Isolation is the rule: every job runs in processes of its own that run nothing else
and exit with it, so no job sees keys, caches or heap left by another. What a fresh
`spawn` child also paid, every time, was starting an interpreter and importing the
measuring code, numpy and the crypto libraries: 0.3-0.5 s a job on the 2-core dev VM,
most of a small job's wall time, and (with two children importing at once) the
window's longest stalls.

Where the platform has it (Linux, macOS), job processes are therefore forked from
multiprocessing's fork server: one clean interpreter per supervising process (the CLI
or the window), started ahead of time, that imports `CHILD_PRELOAD` once and then only
forks. The server itself never runs a job, so each fork starts from the same clean,
preloaded state: fresh PID, fresh keys (every key and nonce comes from the OS's
generator; Python's `random` reseeds itself after a fork), and the server's heap, not
a previous job's. `CRYPTOBENCH_START_METHOD=spawn` brings back a fresh interpreter per
job, for comparison; the run's environment records which was used.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
from collections.abc import Iterator
from typing import Any

import psutil

from app.core.processes.descendants import descendants

#: Modules each job's process needs, imported once by the fork server (named, not imported
#: here: most stand on floors above this group). The guard first: it keeps the server
#: serving (and quiet) when a client vanishes mid-request (app.core.processes.forkserver_guard).
#: The measuring code, then app.core.schemes.preload, which imports every module of the
#: registry's `MODULES` (and with them cryptography, pycryptodome, tinyec and numpy): the
#: scheme modules are listed there only. Last, the freeze: what the imports made is moved out
#: of the collector's reach before any fork (app.core.processes.forkserver_freeze).
CHILD_PRELOAD = (
    "app.core.processes.forkserver_guard",
    "app.core.measure.ops",
    "app.core.session.sender_process",
    "app.core.session.receiver",
    "app.core.link.relay",
    "app.core.link.packet_link",
    "app.core.tls.ops",
    "app.core.tls.client",
    "app.core.tls.server",
    "app.core.load.job",
    "app.core.load.server",
    "app.core.schemes.preload",
    "app.core.processes.forkserver_freeze",
)
#: Set to "spawn" to start every job as a fresh interpreter (see the module doc).
START_METHOD_VARIABLE = "CRYPTOBENCH_START_METHOD"


def start_method() -> str:
    """How job processes start here: "forkserver" where available, else "spawn"."""
    wanted = os.environ.get(START_METHOD_VARIABLE, "").strip().lower()
    available = multiprocessing.get_all_start_methods()
    if wanted in ("spawn", "forkserver") and wanted in available:
        return wanted
    return "forkserver" if "forkserver" in available else "spawn"


def child_context() -> Any:
    """The multiprocessing context job processes start from."""
    method = start_method()
    context = multiprocessing.get_context(method)
    if method == "forkserver":
        context.set_forkserver_preload(list(CHILD_PRELOAD))
    return context


def warm_up_children() -> None:
    """Start the fork server now, so its imports are done before the first job needs them.

    Returns at once: the server imports in the background, and a first job that comes
    sooner waits for it in the server's listen queue. Started with SIGINT and SIGHUP
    blocked, as every job process must be: they inherit the server's signal mask."""
    if start_method() != "forkserver":
        return
    from multiprocessing import forkserver

    child_context()
    with stop_signals_blocked():
        forkserver.ensure_running()


@contextlib.contextmanager
def stop_signals_blocked() -> Iterator[None]:
    """Start children with SIGINT and SIGHUP blocked: the mask survives fork and exec,
    so a Ctrl-C in the terminal or the hang-up of a closed one (both sent to the whole
    process group) never reaches them. The parent owns stopping: it cancels the run
    and terminates its children itself (with SIGTERM, which therefore stays open).
    Without this, every child printed a KeyboardInterrupt traceback, some from the
    middle of multiprocessing's bootstrap, and a hang-up could kill the job before the
    parent marked it cancelled. Works from any thread (the GUI spawns from its pool),
    unlike signal.signal. The fork server is started inside it too (its children
    inherit its mask). No-op where pthread_sigmask is missing (Windows, where these
    signals are not delivered to the windowless children anyway)."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    # The stdlib's resource tracker, on its first start, unblocks SIGINT and SIGTERM in the
    # calling thread when it is done (resource_tracker.ensure_running). Every start makes
    # sure it runs, so started in here it undid this block for what came after it: the fork
    # server and so every job process took SIGINT, and a Ctrl-C that met one in
    # multiprocessing's bootstrap printed a KeyboardInterrupt traceback. Running, its
    # ensure_running returns before it touches the mask.
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGHUP})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _is_multiprocessing_helper(process: psutil.Process, root_pid: int) -> bool:
    """The resource tracker, or the fork server itself (a direct child of the supervisor;
    the job processes it forks share its command line but are its children)."""
    try:
        command = " ".join(process.cmdline())
        if "resource_tracker" in command:
            return True
        return "multiprocessing.forkserver" in command and process.ppid() == root_pid
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return False


def job_processes(root: psutil.Process | None = None) -> list[psutil.Process]:
    """Live job processes below `root` (default: this process): every descendant except
    multiprocessing's long-lived helpers, which run no job and end with the supervisor."""
    root = root or psutil.Process()
    alive = []
    for child in descendants(root.pid):
        try:
            if child.status() == psutil.STATUS_ZOMBIE:
                continue
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if not _is_multiprocessing_helper(child, root.pid):
            alive.append(child)
    return alive

"""A job's processes, watched for being frozen while the job runs.

The supervisor waits on its children's pipes, and its measuring child on its peers'
sockets; a child that is stopped (SIGSTOP, a debugger) answers neither, and a pipe read
can even block half-way through a message the child stopped writing. Killing the frozen
process ends every one of those waits at once (its pipe and sockets close), so the watch
runs on a thread of its own, looks at each process and everything it forked (a load
server's workers) every `LOOK_SECONDS`, and kills one stopped for `FROZEN_SECONDS`. The
job then fails with `frozen`, which names the process, never as a crash or as the
server's own capacity.

A stop of any length that a look sees (a look every `LOOK_SECONDS`) is counted too
(`stops_seen`): the supervisor fails the size measured across it, since its figures timed
the stop (a load server stopped for a second reads as an overloaded server).

The fork server is watched too: a stopped one does not disturb the running job, but
would block the next start. It is killed (`on_fork_server` says so) and the next start
forks a fresh one.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable

from app.core.processes.deadlines import FROZEN_SECONDS, StoppedClock, fork_server_pid, kill_fork_server, stopped_words
from app.core.processes.descendants import descendant_pids

#: How often the watch looks (reads of /proc: tens of microseconds a process, descendants.py).
LOOK_SECONDS = 0.25


class FrozenWatch:
    """Watches `processes` (role -> pid) from a daemon thread until `stop()`.

    `frozen` is the first frozen process's one-line story (None: none was)."""

    def __init__(self, processes: dict[str, int], on_fork_server: Callable[[str], None] | None = None) -> None:
        self.processes = dict(processes)
        self.frozen: str | None = None
        #: How many looks found a job process stopped, even for a moment (`stopped` names the
        #: first): a size measured across a stop timed the stop, not the work, however short.
        self.stops_seen = 0
        self.stopped: str | None = None
        self._on_fork_server = on_fork_server
        self._clock = StoppedClock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="frozen-watch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(2 * LOOK_SECONDS + 1)

    def _loop(self) -> None:
        while not self._stop.wait(LOOK_SECONDS):
            self.look()

    def look(self) -> None:
        """One look at every watched process (the thread's step; tests call it directly)."""
        for role, pid in list(self.processes.items()):
            for found, what in _with_descendants(role, pid):
                seconds = self._clock.seconds(found)
                if seconds is not None:
                    self.stops_seen += 1
                    if self.stopped is None:
                        self.stopped = f"the {what} (pid {found}) was stopped (SIGSTOP or a debugger) while it measured"
                if seconds is not None and seconds >= FROZEN_SECONDS:
                    self._kill(found, pid)
                    if self.frozen is None:
                        self.frozen = f"the {what} (pid {found}) {stopped_words(FROZEN_SECONDS)}; it was killed"
                    del self.processes[role]
                    break
        server = fork_server_pid()
        if server is not None and self._clock.frozen(server, FROZEN_SECONDS):
            kill_fork_server()
            if self._on_fork_server is not None:
                self._on_fork_server(
                    f"the fork server (pid {server}) {stopped_words(FROZEN_SECONDS)}; it was killed, and the "
                    "next job starts from a fresh one"
                )

    @staticmethod
    def _kill(frozen: int, top: int) -> None:
        # The frozen process and the job process above it: what the top one forked (a
        # load server's workers) dies with it (a parent-death signal).
        for pid in {frozen, top}:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _with_descendants(role: str, pid: int) -> list[tuple[int, str]]:
    """The role's process and every process it forked, each with how a message names it."""
    return [(pid, f"{role} process")] + [(child, f"{role} process's child") for child in descendant_pids(pid)]

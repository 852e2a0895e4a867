"""Child processes end when the process that started them dies.

A job's worker, sender and receiver are multiprocessing children. If the app or the
CLI is killed (SIGKILL, a crash, the OOM killer), nothing stops them: a long job
would go on measuring for minutes, holding CPU, memory and a port, with nobody to
report to. Each child therefore watches its parent's sentinel (a pipe the parent
holds open on POSIX, the parent's process handle on Windows) on a daemon thread that
sleeps in the kernel until the parent is gone, so it costs the measured code nothing,
and exits at once when it is.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from multiprocessing import connection

#: Exit code of a child that ended because its parent died (EX_SOFTWARE would mislead).
PARENT_GONE_EXIT_CODE = 75


def exit_with_parent() -> threading.Thread | None:
    """Start the watch in a multiprocessing child; None when not in one (e.g. a test
    calling an entry point directly), where there is no parent to outlive."""
    parent = multiprocessing.parent_process()
    if parent is None or parent.sentinel is None:
        return None

    def watch() -> None:
        connection.wait([parent.sentinel])
        os._exit(PARENT_GONE_EXIT_CODE)  # no cleanup to run: the results have no reader

    thread = threading.Thread(target=watch, name="cryptobench-lifeline", daemon=True)
    thread.start()
    return thread

"""A job process starts with the fork server's preload frozen: its `gc.collect()` calls
(between sizes, before a load step) scan what the job made, not every preloaded module."""

from __future__ import annotations

import gc
import sys
import threading
from multiprocessing.connection import Connection

import pytest

from app.core.processes import deadlines
from app.core.processes.jobstart import CHILD_PRELOAD, child_context


def test_the_freeze_is_preloaded_last() -> None:
    """After every import of the preload, or what a later one makes would stay unfrozen."""
    assert CHILD_PRELOAD[-1] == "app.core.processes.forkserver_freeze"


def _report(conn: Connection) -> None:
    frozen = gc.get_freeze_count()
    cycle: list[object] = []
    cycle.append(cycle)  # garbage only the collector can free
    del cycle
    conn.send((frozen, gc.collect(), gc.isenabled()))
    conn.close()


def test_a_job_process_starts_with_the_preload_frozen_and_still_collects_its_own_garbage() -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("the fork server's start method")
    context = child_context()
    ours, theirs = context.Pipe(duplex=False)
    child = context.Process(target=_report, args=(theirs,), daemon=True)
    deadlines.start_process(child, threading.Event())
    theirs.close()
    assert ours.poll(60), "the job process did not report"
    frozen, collected, enabled = ours.recv()
    child.join(10)
    # The preload's own objects (tens of thousands: numpy and the crypto libraries alone
    # make more than 10,000), out of the collector's reach; the job's cycle still freed.
    assert frozen > 10_000
    assert collected >= 1 and enabled


def test_the_freeze_happens_only_in_the_fork_server() -> None:
    """Imported anywhere else (the app, a test), the module freezes nothing. (Imported here,
    not at the top: the job process above imports this module to find `_report`, inside
    the fork server's stack, where the import alone would freeze its heap.)"""
    from app.core.processes import forkserver_freeze

    assert not forkserver_freeze.in_fork_server()

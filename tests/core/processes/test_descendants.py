"""A process's descendants, read down its own branch of the process tree
(app/core/processes/descendants.py), agree with psutil's scan of the whole machine."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import psutil
import pytest

from app.core.processes import descendants as module
from app.core.processes.descendants import descendant_pids, descendants

#: A child that starts a grandchild from a second thread (Linux lists a thread's children
#: under that thread only), says both pids, and waits for its stdin to close.
_TREE = """
import subprocess, sys, threading
started = []
def start():
    started.append(subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE))
thread = threading.Thread(target=start)
thread.start()
thread.join()
print(started[0].pid, flush=True)
sys.stdin.read()
started[0].stdin.close()
started[0].wait()
"""


@pytest.fixture
def tree() -> Iterator[tuple[int, int]]:
    """(child, grandchild), both alive until the test ends."""
    child = subprocess.Popen([sys.executable, "-c", _TREE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdin is not None
    grandchild = int(child.stdout.readline())
    try:
        yield child.pid, grandchild
    finally:
        child.stdin.close()
        child.wait(timeout=30)


def test_a_grandchild_started_from_another_thread_is_found_below_its_parent(tree: tuple[int, int]) -> None:
    child, grandchild = tree
    mine = descendant_pids(psutil.Process().pid)
    assert child in mine and grandchild in mine
    assert mine.index(child) < mine.index(grandchild)
    assert descendant_pids(child) == [grandchild]
    assert descendant_pids(grandchild) == []


def test_the_branch_read_agrees_with_psutils_scan_of_every_process(tree: tuple[int, int]) -> None:
    me = psutil.Process()
    assert sorted(descendant_pids(me.pid)) == sorted(p.pid for p in me.children(recursive=True))
    assert [p.pid for p in descendants(me.pid)] == descendant_pids(me.pid)


def test_without_children_files_psutils_scan_answers(tree: tuple[int, int], monkeypatch: pytest.MonkeyPatch) -> None:
    child, grandchild = tree
    monkeypatch.setattr(module, "_HAS_CHILDREN_FILES", False)
    assert sorted(descendant_pids(child)) == [grandchild]


def test_a_process_that_ended_has_no_descendants() -> None:
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    assert descendant_pids(ended.pid) == []
    assert descendants(ended.pid) == []


def test_a_thread_that_ends_mid_read_is_skipped(tree: tuple[int, int], monkeypatch: pytest.MonkeyPatch) -> None:
    """A listed thread whose children file is gone by the time it is opened (it ended)."""
    child, grandchild = tree
    listing = module.os.listdir

    def with_a_vanished_thread(path: Any) -> list[Any]:
        names = listing(path)
        return ["999999999", *names] if isinstance(path, str) and path.endswith("/task") else names

    monkeypatch.setattr(module.os, "listdir", with_a_vanished_thread)
    assert descendant_pids(child) == [grandchild]

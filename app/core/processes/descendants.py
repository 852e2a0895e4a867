"""Every process a process forked, read from its own branch of the process tree.

psutil's `Process.children()` builds the whole machine's parent map each time: it reads
`/proc/<pid>/stat` of every process on the machine. The frozen-process watch asks four
times a second for each job process, so on a machine with a few hundred processes it
read thousands of files a second beside the job it measures, and the suite's own check
for leftover processes spent 20 s of CPU there (2026-11-28, 2-core VM).

Linux keeps each thread's children in `/proc/<pid>/task/<tid>/children`, so walking down
from one process reads only its own branch. Where that file is missing (a kernel built
without CONFIG_PROC_CHILDREN, other systems), psutil's scan answers as before.
"""

from __future__ import annotations

import os

import psutil

_PROC = "/proc"


def _children_file_readable() -> bool:
    try:
        with open(f"{_PROC}/{os.getpid()}/task/{os.getpid()}/children", encoding="ascii"):
            return True
    except OSError:
        return False


#: Whether this kernel lists each thread's children (decided once: it does not change).
_HAS_CHILDREN_FILES = _children_file_readable()


def _direct_children(pid: int) -> list[int]:
    """`pid`'s children, from the children file of each of its threads (none if it ended)."""
    try:
        threads = os.listdir(f"{_PROC}/{pid}/task")
    except OSError:
        return []
    children: list[int] = []
    for tid in threads:
        try:
            with open(f"{_PROC}/{pid}/task/{tid}/children", encoding="ascii") as listing:
                children.extend(int(child) for child in listing.read().split())
        except OSError:  # the thread or process ended while it was read
            continue
    return children


def descendant_pids(pid: int) -> list[int]:
    """Every live descendant of `pid`, parents before their children (empty if `pid` ended).

    A process that ends while the tree is read is simply missing, as with psutil."""
    if not _HAS_CHILDREN_FILES:
        try:
            return [child.pid for child in psutil.Process(pid).children(recursive=True)]
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            return []
    found: list[int] = []
    seen = {pid}
    frontier = [pid]
    while frontier:
        parent = frontier.pop(0)
        for child in _direct_children(parent):
            if child not in seen:  # a pid reused mid-walk must not loop
                seen.add(child)
                found.append(child)
                frontier.append(child)
    return found


def descendants(pid: int) -> list[psutil.Process]:
    """`descendant_pids` as psutil processes (those that ended in between left out)."""
    processes = []
    for child in descendant_pids(pid):
        try:
            processes.append(psutil.Process(child))
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return processes

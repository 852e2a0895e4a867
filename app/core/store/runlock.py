"""Which runs in the store are still being written: a lock the running process holds.

A run's row says "running" until its process finishes it. If that process dies
(killed, a crash, a closed container), the row must become "interrupted" the next
time the store is opened. A process id cannot tell: PIDs are reused, and in a
container the run's process is often PID 1, which always "exists" when the next
container starts. A lock can: the running process holds an exclusive lock on a
small file beside the store, and the kernel releases it the moment the process
dies, however it dies. Whoever opens the store later tries to take the lock: if it
gets it, the owner is gone.

The lock is held per process (module state), not per `Store` connection: the GUI
begins a run through one connection and may finish it through another, and a run
is alive as long as its process is. `flock` (POSIX) and `msvcrt.locking` (Windows)
both conflict between two opens of the file in the same process, so another
connection in the running process also sees the run as alive. The file is opened
non-inheritable (PEP 446), so a job's child processes never hold it.

Whoever can read the store can look: the file is made readable as the store is (0644
less the umask), and is tested with a shared lock on a read-only descriptor, which a
writer's exclusive lock refuses. Where it cannot be opened at all (another user's file
made private), `is_held` says so (None) and store/liveness.py reads the file's age
instead: its writer touches it every few seconds (`touch`). A reader that could not
look used to take every such run for alive, so a killed writer's run read "running"
forever in a read-only view.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]
    import msvcrt

_held: dict[str, int] = {}  # lock file path -> open descriptor holding the lock
_guard = threading.Lock()


def lock_path(store_path: Path, run_id: str) -> Path:
    """The lock file of one run: hidden, beside the store, gone when the run ends."""
    return store_path.with_name(f".{store_path.name}.{run_id}.lock")


def _try_lock(fd: int, *, shared: bool = False) -> bool:
    try:
        if fcntl is not None:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        else:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
    except OSError:
        return False
    return True


def acquire(store_path: Path, run_id: str) -> bool:
    """Take the run's lock for this process; False if the file cannot be made (the run
    then simply has no lock and reads as interrupted to other processes)."""
    path = str(lock_path(store_path, run_id))
    with _guard:
        if path in _held:
            return True
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return False
        if not _try_lock(fd):
            os.close(fd)
            return False
        _held[path] = fd
        return True


def release(store_path: Path, run_id: str) -> None:
    """Drop the run's lock (after its final status is committed) and remove its file."""
    path = str(lock_path(store_path, run_id))
    with _guard:
        fd = _held.pop(path, None)
        if fd is None:
            return
        try:
            os.unlink(path)  # before closing, where the system allows it (POSIX)
            unlinked = True
        except OSError:
            unlinked = False
        os.close(fd)
        if not unlinked:  # Windows: an open file cannot be removed
            try:
                os.unlink(path)
            except OSError:
                pass


def is_held(store_path: Path, run_id: str) -> bool | None:
    """True while the run's process is alive (it holds the lock); False once it is gone
    or when the run never had a lock file; None when the file is there but cannot be
    opened (the caller then reads its age). Taking the lock to find out is harmless: it
    is released at once, and the file of a dead run is removed where this user may."""
    path = lock_path(store_path, run_id)
    with _guard:
        if str(path) in _held:
            return True
    try:
        # POSIX: a shared lock on a read-only descriptor (any reader may); Windows' locking
        # is exclusive and wants a descriptor open for writing.
        fd = os.open(path, os.O_RDONLY if fcntl is not None else os.O_RDWR)
    except FileNotFoundError:
        return False
    except OSError:
        return None
    try:
        if not _try_lock(fd, shared=fcntl is not None):
            return True
        try:
            os.unlink(path)  # its owner is gone: nobody will release it
        except OSError:
            pass
        return False
    finally:
        os.close(fd)  # closing drops our own lock


def holds(store_path: Path, run_id: str) -> bool:
    """Whether this process holds the run's lock."""
    with _guard:
        return str(lock_path(store_path, run_id)) in _held


def touch(store_path: Path, run_id: str) -> None:
    """Mark the held lock file as still looked after (its modification time; `age`)."""
    try:
        os.utime(lock_path(store_path, run_id))
    except OSError:
        pass


def age(store_path: Path, run_id: str) -> float | None:
    """Seconds since the lock file was made or last touched; None when there is none."""
    try:
        return max(0.0, time.time() - os.stat(lock_path(store_path, run_id)).st_mtime)
    except OSError:
        return None

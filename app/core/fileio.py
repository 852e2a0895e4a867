"""Atomic writes for every user-visible file (profiles, exports, reports).

Write to a temporary file in the same folder, flush it to disk, then rename over
the target: a crash, a full disk or a cancel leaves either the old file or the new
one, never half of either.

The file is the user's, so it gets the permissions a plain `open(path, "w")` would
give it: a new file follows the umask (and a folder's default ACL), an overwritten
file keeps its mode, and a symlink is written through to its target (the link
stays a link). mkstemp's private 0600 made every export unreadable to the group
the user meant to share it with. Secrets pass `mode=0o600` explicitly.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO


class FileWriteError(OSError):
    """A user file could not be written; the message names the file and the cause."""


def write_target(path: Path) -> Path:
    """Where writing `path` really lands: a symlink's final target (even a dangling one),
    so renaming over it updates what the link points at instead of replacing the link."""
    path = Path(path)
    if path.is_symlink():
        return Path(os.path.realpath(path))
    return path


def create_temp_beside(target: Path, mode: int | None = None) -> tuple[int, str]:
    """Create a temporary file next to `target` for an atomic replace; return (fd, name).

    Its permissions are final before any byte is written: `mode` when given (applied
    exactly, whatever the umask), else those of the file being replaced, else the
    0666-minus-umask of a new file (the kernel applies the umask to os.open's mode).
    Raises OSError.
    """
    folder = target.parent if str(target.parent) else Path(".")
    keep: int | None = mode
    if keep is None:
        try:
            keep = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            keep = None
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        name = str(folder / f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            # 0o600 while a given or kept mode is pending: the content is never readable by
            # more people than the final file allows.
            fd = _open_new(name, flags, 0o600 if keep is not None else 0o666)
        except FileExistsError:
            continue
        if keep is not None:
            try:
                os.fchmod(fd, keep) if hasattr(os, "fchmod") else os.chmod(name, keep)
            except OSError:
                os.close(fd)
                _remove(name)
                raise
        return fd, name
    raise FileExistsError(f"{folder}: no free temporary file name")


@contextmanager
def atomic_output(path: Path, mode: int | None = None) -> Iterator[BinaryIO]:
    """Write a file atomically: yields a binary stream; on a clean exit the data is
    flushed to disk and renamed over `path` (through a symlink); on any error the
    temporary file is removed and the previous file is untouched.

    Raises FileWriteError (an OSError naming the file) when the folder cannot be written.
    """
    path = Path(path)
    target = write_target(path)
    folder = target.parent if str(target.parent) else Path(".")
    try:
        fd, tmp_name = create_temp_beside(target, mode)
    except OSError as exc:
        raise FileWriteError(f"{path}: cannot write in {folder}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except OSError as exc:
        _remove(tmp_name)
        raise FileWriteError(f"{path}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        _remove(tmp_name)
        raise


def atomic_write_bytes(path: Path, data: bytes, mode: int | None = None) -> None:
    with atomic_output(path, mode) as handle:
        handle.write(data)


def atomic_write_text(path: Path, text: str, mode: int | None = None) -> None:
    """Write UTF-8 text atomically; a string that cannot be encoded (a lone surrogate)
    raises FileWriteError naming the file before anything is written."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise FileWriteError(f"{path}: cannot write: text at character {exc.start} cannot be encoded as UTF-8 "
                             f"({exc.reason})") from None
    atomic_write_bytes(path, data, mode)


def _open_new(name: str, flags: int, mode: int) -> int:
    """os.open, named so fault-injection tests can make creation fail for every writer."""
    return os.open(name, flags, mode)


def _remove(name: str) -> None:
    try:
        os.unlink(name)
    except OSError:
        pass

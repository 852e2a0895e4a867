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


def system_folder(*paths: Path) -> str | None:
    """The first of the paths' folders that is a system folder (/dev, /proc, /sys), or None.

    Checked for the name given and for the symlink's target alike: `/dev/stdout` leads
    through /proc/self/fd to a terminal, a pipe or whatever file the shell redirected
    to, none of which a renamed file should replace.
    """
    for path in paths:
        folder = os.path.realpath(path.parent if str(path.parent) else ".")
        if folder in ("/dev", "/proc", "/sys") or folder.startswith(("/dev/", "/proc/", "/sys/")):
            return folder
    return None


def _not_a_file_target(path: Path, target: Path) -> str | None:
    """Why `target` (what `path` resolves to) cannot be replaced by a renamed file, or None."""
    folder = system_folder(path, target)
    if folder is not None:
        return f"{folder} is a system folder, not a place for files"
    try:
        info = os.stat(target)
    except OSError:
        return None  # a new file; a folder that cannot be written fails when the file is created
    if stat.S_ISDIR(info.st_mode):
        return "is a folder; give a file name"
    if not stat.S_ISREG(info.st_mode):
        return "not a regular file (files are written to a new file and renamed over the target)"
    return None


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
    problem = _not_a_file_target(path, target)
    if problem:
        raise FileWriteError(f"{path}: {problem}")
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
        raise FileWriteError(
            f"{path}: cannot write: text at character {exc.start} cannot be encoded as UTF-8 ({exc.reason})"
        ) from None
    atomic_write_bytes(path, data, mode)


def _open_new(name: str, flags: int, mode: int) -> int:
    """os.open, named so fault-injection tests can make creation fail for every writer."""
    return os.open(name, flags, mode)


def _remove(name: str) -> None:
    try:
        os.unlink(name)
    except OSError:
        pass


# --- reading user-named files ------------------------------------------------------------


class FileReadError(Exception):
    """A user-named input file that cannot be read; `reason` is one line without the
    file's name (each caller puts the name in front, in its own error type)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def size_text(size: float) -> str:
    """A byte count for a message: 512 B, 16.0 MiB."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size} B"  # pragma: no cover - the loop always returns


def file_kind(mode: int) -> str:
    """What a stat's mode says is at a path, for a message: a folder, a named pipe, ..."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _refuse_unless_regular(mode: int, what: str) -> None:
    if not stat.S_ISREG(mode):
        raise FileReadError(f"not a regular file ({file_kind(mode)}), so not {what}")


def read_limited(path: str | Path, limit: int, what: str) -> bytes:
    """The whole content of the regular file `path`, at most `limit` bytes; FileReadError
    (a one-line reason, naming `what` the file should have been: "a profile") otherwise.

    Every file a user names (a profile, a results file) goes through here, because a
    plain `open().read()` met three kinds of hostile input: a FIFO blocks in open() until
    a writer comes (forever), /dev/zero never ends (a MemoryError after gigabytes), and a
    huge or sparse file is read whole before anything looks at it. So: stat first (a
    device is never opened: opening some has side effects, a tape rewinds), then open
    with O_NONBLOCK (a FIFO swapped in after the stat does not block) and check again
    on the descriptor, refuse a size over `limit` before reading, and read at most
    limit + 1 bytes (a file that grows meanwhile is still bounded).
    """
    try:
        info = os.stat(path)
        _refuse_unless_regular(info.st_mode, what)
        if info.st_size > limit:
            raise FileReadError(f"larger than {size_text(limit)} ({size_text(info.st_size)}): not {what}")
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
        fd = os.open(path, flags | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "rb") as stream:
            _refuse_unless_regular(os.fstat(stream.fileno()).st_mode, what)
            raw = stream.read(limit + 1)
    except FileNotFoundError:
        raise FileReadError("file not found") from None
    except OSError as exc:
        raise FileReadError(os_reason(exc)) from None
    if len(raw) > limit:
        raise FileReadError(f"larger than {size_text(limit)}: not {what}")
    return raw


def os_reason(exc: OSError) -> str:
    """An OSError as the one-line reason a user reads after a file's name: "cannot read
    file: File name too long". Its own str() would repeat the (possibly very long) name."""
    return f"cannot read file: {exc.strerror or type(exc).__name__}"

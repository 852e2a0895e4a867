"""Atomic writes for every user-visible file (profiles, exports, reports).

Write to a temporary file in the same folder, flush it to disk, then rename over
the target: a crash, a full disk or a cancel leaves either the old file or the new
one, never half of either.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


class FileWriteError(OSError):
    """A user file could not be written; the message names the file and the cause."""


def atomic_write_bytes(path: Path, data: bytes) -> None:
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise FileWriteError(f"{path}: cannot write in {folder}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except OSError as exc:
        try:
            os.unlink(tmp_name)
        except OSError:
            pass
        raise FileWriteError(f"{path}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        try:
            os.unlink(tmp_name)
        except OSError:
            pass
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))

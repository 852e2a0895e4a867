"""Export and report destinations, checked before any work and written so that one
failure never costs the others; a small file-descriptor reserve for the end of a run.

Before: `run P --json EXISTING_DIR --csv ok.csv --no-store` measured every job,
then failed on the JSON and exited before the CSV was written: everything lost.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from app.core.errors import CryptoBenchError
from app.core.fileio import system_folder, write_target


class DestinationError(ValueError):
    """A destination that cannot be written; the message names the option and the file."""


def check_destinations(targets: list[tuple[str, Path]]) -> None:
    """Refuse, before anything runs, a destination that cannot take its file.

    `targets` are (option, path) pairs such as ("--json", Path("out.json")). Checked:
    the same file named twice, a system folder (/dev, /proc, /sys, also behind a symlink:
    outputs are written beside the target and renamed over it, which would replace
    /dev/stdout rather than write to it), something that is not a regular file (a
    device, a pipe), a missing folder, and a folder where no file can be created
    (read-only, no permission, no space for an inode), tried for real with the same
    temporary name the write will use.
    """
    seen: dict[str, str] = {}
    for option, path in targets:
        # A symbolic link is written through to its target (app.core.fileio), so the
        # target is what is checked: `--json /dev/stdout` resolves to a terminal or a pipe
        # in /dev or /proc and is refused below, as is a link to a folder or a device.
        shown = path
        try:
            path = write_target(path)
        except OSError as exc:  # a name too long, a loop of links: never a traceback
            raise DestinationError(f"{option} {shown}: cannot use it: {exc.strerror or exc}") from None
        key = os.path.normcase(os.path.abspath(path))
        if key in seen:
            raise DestinationError(f"{option} {shown}: the same file as {seen[key]}; give each output its own file")
        seen[key] = f"{option} {shown}"
        system = system_folder(shown, path)
        if system is not None:
            raise DestinationError(f"{option} {shown}: {system} is a system folder, not a place for output files")
        try:
            info = os.stat(path)
        except FileNotFoundError:
            info = None
        except OSError as exc:
            raise DestinationError(f"{option} {shown}: cannot use it: {exc.strerror or exc}") from None
        if info is not None and stat.S_ISDIR(info.st_mode):
            raise DestinationError(f"{option} {shown}: is a folder; give a file name")
        if info is not None and not stat.S_ISREG(info.st_mode):
            raise DestinationError(
                f"{option} {shown}: not a regular file (outputs are written to a new file and renamed over the target)"
            )
        folder = path.parent if str(path.parent) else Path(".")
        try:
            if not stat.S_ISDIR(os.stat(folder).st_mode):
                raise DestinationError(f"{option} {shown}: {folder} is not a folder")
        except FileNotFoundError:
            raise DestinationError(f"{option} {shown}: folder {folder} does not exist") from None
        except OSError as exc:
            raise DestinationError(f"{option} {shown}: cannot use folder {folder}: {exc.strerror or exc}") from None
        try:
            fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
        except OSError as exc:
            raise DestinationError(f"{option} {shown}: cannot write in {folder}: {exc.strerror or exc}") from None
        os.close(fd)
        try:
            os.unlink(probe)
        except OSError:
            pass


def write_all(writers: Sequence[tuple[Path, Callable[[], object]]], report: Callable[[str], None]) -> list[Path]:
    """Call every writer even when some fail; `report` gets each failure as one line.
    A writer is called for its effect (an exporter returns the path it wrote, unused here).
    Returns the paths that could not be written."""
    failed = []
    for path, write in writers:
        try:
            write()
        except OSError as exc:  # FileWriteError names the file already
            failed.append(path)
            message = str(exc) if str(path) in str(exc) else f"{path}: cannot write: {exc.strerror or exc}"
            report(message)
        except CryptoBenchError as exc:  # written, but not as promised (too large to read back)
            failed.append(path)
            report(str(exc))
    return failed


@contextmanager
def descriptor_reserve(count: int = 4) -> Iterator[Callable[[], None]]:
    """Hold `count` file descriptors from now; the yielded function frees them.

    A run that exhausts the open-file limit midway (a job's spawn fails with EMFILE)
    must still be able to write its exports at the end. Descriptors are allocated
    lowest-first, so these low numbers, freed just before the exports, are usable
    even under the exhausted limit.
    """
    held: list[int] = []
    for _ in range(count):
        try:
            held.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            break

    def release() -> None:
        while held:
            os.close(held.pop())

    try:
        yield release
    finally:
        release()

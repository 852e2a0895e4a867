"""`fileio.read_limited`: a user-named file is read only when it is a regular file, and
never past its bound."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from app.core import fileio
from app.core.fileio import FileReadError, read_limited, size_text

POSIX = pytest.mark.skipif(os.name != "posix", reason="FIFOs and devices")


def _reason(path: str | Path, limit: int = 100) -> str:
    with pytest.raises(FileReadError) as refused:
        read_limited(path, limit, "a thing")
    return refused.value.reason


def test_a_regular_file_up_to_the_limit_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    assert read_limited(path, 100, "a thing") == b"x" * 100
    path.write_bytes(b"x" * 101)
    assert _reason(path) == "larger than 100 B (101 B): not a thing"


def test_missing_and_folder(tmp_path: Path) -> None:
    assert _reason(tmp_path / "gone") == "file not found"
    assert _reason(tmp_path) == "not a regular file (a folder), so not a thing"
    assert _reason(tmp_path / "gone" / "deeper") == "file not found"
    (tmp_path / "file").write_text("x")
    assert _reason(tmp_path / "file" / "x") == "cannot read file: Not a directory"
    assert _reason(tmp_path / ("n" * 300)) == "cannot read file: File name too long"


def test_no_permission_is_the_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As root no file is unreadable; the open's EACCES is what a user without the right sees."""
    path = tmp_path / "f"
    path.write_text("x")

    def refuse(*args: object, **kwargs: object) -> int:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(fileio.os, "open", refuse)
    assert _reason(path) == "cannot read file: Permission denied"


@POSIX
@pytest.mark.timeout(30)
def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert _reason(fifo) == "not a regular file (a named pipe), so not a thing"


@POSIX
@pytest.mark.timeout(30)
def test_a_fifo_swapped_in_after_the_stat_does_not_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The race: stat saw a regular file, open meets a FIFO. O_NONBLOCK opens it at once and
    the descriptor's own fstat refuses it."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    real_stat = os.stat
    regular = real_stat(__file__)

    def stat_says_regular(path: object, *args: object, **kwargs: object) -> os.stat_result:
        return regular if Path(str(path)) == fifo else real_stat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(fileio.os, "stat", stat_says_regular)
    done: list[str] = []
    worker = threading.Thread(target=lambda: done.append(_reason(fifo, limit=1 << 30)), daemon=True)
    worker.start()
    worker.join(10)
    assert done == ["not a regular file (a named pipe), so not a thing"]


@POSIX
def test_devices_are_never_opened(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[object] = []
    real_open = os.open
    monkeypatch.setattr(fileio.os, "open", lambda *a, **k: opened.append(a[0]) or real_open(*a, **k))
    assert _reason("/dev/zero") == "not a regular file (a character device), so not a thing"
    assert _reason("/dev/null") == "not a regular file (a character device), so not a thing"
    assert opened == []


def test_a_file_growing_past_the_limit_is_cut_at_limit_plus_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that grows between the stat and the read (a log being written) is still bounded."""
    path = tmp_path / "f"
    path.write_bytes(b"x" * 10)
    small = os.stat(path)
    path.write_bytes(b"x" * 1000)
    real_stat = os.stat
    monkeypatch.setattr(fileio.os, "stat", lambda p, *a, **k: small if Path(str(p)) == path else real_stat(p, *a, **k))
    assert _reason(path) == "larger than 100 B: not a thing"


def test_a_sparse_giant_is_refused_by_its_size(tmp_path: Path) -> None:
    path = tmp_path / "sparse"
    with path.open("wb") as stream:
        stream.truncate(1 << 40)
    assert stat.S_ISREG(os.stat(path).st_mode)
    assert _reason(path, 1 << 20) == "larger than 1.0 MiB (1.0 TiB): not a thing"


def test_size_text() -> None:
    assert [size_text(v) for v in (0, 1023, 1024, 16 << 20, 512 << 20, 3 << 30)] == [
        "0 B",
        "1023 B",
        "1.0 KiB",
        "16.0 MiB",
        "512.0 MiB",
        "3.0 GiB",
    ]

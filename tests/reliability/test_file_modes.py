"""Files the user owns: permissions and symlinks of everything the app writes.

Before the fix every export and report was created 0600 whatever the umask (mkstemp's
private mode), an existing 0644 file became 0600 when overwritten, and a symlink was
replaced by a regular file. Now a new file follows the umask, an overwritten file
keeps its mode, writing through a symlink updates its target, and only the token file
is private (0600) whatever the umask.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.cli.main import main as cli_main
from app.core.fileio import atomic_write_bytes, atomic_write_text
from app.core.profile.files import parse_profile, save_profile
from app.core.results import model as results
from app.core.serve.server import create_token_file, load_token
from app.report.exporters import export
from tests.helpers.report_runs import build_run

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")


def _run() -> Any:
    return build_run("20261121-100400-hand01", "2026-11-21T10:04:00+00:00")


def _writers() -> dict[str, Callable[[Path], None]]:
    run = _run()
    profile = parse_profile({"name": "p", "jobs": [{"scheme": "sha256", "message_sizes": [64]}]})
    return {
        "profile": lambda path: save_profile(profile, path),
        "JSON export": lambda path: export("json", run, path),
        "CSV export": lambda path: export("csv", run, path),
        "Markdown report": lambda path: export("markdown", run, path),
        "CLI report --json": lambda path: _cli_report(path),
    }


def _cli_report(path: Path) -> None:
    source = path.with_name("source-results.json")
    if not source.exists():
        source.write_text(results.to_json(_run()), encoding="utf-8")
    assert cli_main(["report", str(source), "--json", str(path)]) == 0


WRITERS = _writers()


@pytest.fixture
def umask() -> Iterator[Callable[[int], None]]:
    """Set the process umask for one test and restore it after (tests run on one thread)."""
    previous = os.umask(0o022)
    os.umask(previous)

    def set_mask(mask: int) -> None:
        os.umask(mask)

    yield set_mask
    os.umask(previous)


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o002])
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_new_file_follows_the_umask(tmp_path: Path, umask: Callable[[int], None], writer: str, mask: int) -> None:
    umask(mask)
    target = tmp_path / "new.out"
    WRITERS[writer](target)
    assert _mode(target) == 0o666 & ~mask
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o600, 0o664])
@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_overwriting_keeps_the_mode(tmp_path: Path, umask: Callable[[int], None], writer: str, mode: int) -> None:
    umask(0o077)  # a mode taken from the umask would differ from every one kept here but 0600
    target = tmp_path / "existing.out"
    target.write_text("old\n")
    os.chmod(target, mode)
    WRITERS[writer](target)
    assert target.read_text(encoding="utf-8") != "old\n"
    assert _mode(target) == mode


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_writing_through_a_symlink_updates_its_target(
    tmp_path: Path, umask: Callable[[int], None], writer: str
) -> None:
    umask(0o022)
    real_folder = tmp_path / "elsewhere"
    real_folder.mkdir()
    real = real_folder / "real.out"
    real.write_text("old\n")
    os.chmod(real, 0o640)
    link = tmp_path / "link.out"
    link.symlink_to(Path("elsewhere") / "real.out")  # relative, as `ln -s` makes them
    WRITERS[writer](link)
    assert link.is_symlink() and os.readlink(link) == str(Path("elsewhere") / "real.out")
    assert real.read_text(encoding="utf-8") != "old\n" and _mode(real) == 0o640
    assert sorted(p.name for p in real_folder.iterdir()) == ["real.out"]  # no temporary file left


def test_a_dangling_symlink_creates_its_target(tmp_path: Path, umask: Callable[[int], None]) -> None:
    umask(0o022)
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "target.json")
    atomic_write_text(link, "{}\n")
    assert link.is_symlink() and (tmp_path / "target.json").read_text() == "{}\n"
    assert _mode(tmp_path / "target.json") == 0o644


def test_the_pdf_report_follows_the_same_rules(qapp: Any, tmp_path: Path, umask: Callable[[int], None]) -> None:
    umask(0o027)
    run = _run()
    new = tmp_path / "new.pdf"
    export("pdf", run, new)
    assert _mode(new) == 0o640
    real = tmp_path / "real.pdf"
    real.write_bytes(b"old")
    os.chmod(real, 0o604)
    link = tmp_path / "link.pdf"
    link.symlink_to(real)
    export("pdf", run, link)
    assert link.is_symlink() and real.read_bytes().startswith(b"%PDF") and _mode(real) == 0o604


@pytest.mark.parametrize("mask", [0o000, 0o022])
def test_the_token_file_alone_stays_private(tmp_path: Path, umask: Callable[[int], None], mask: int) -> None:
    umask(mask)
    path = tmp_path / "token"
    token = create_token_file(path)
    assert _mode(path) == 0o600 and load_token(path) == token


def test_an_explicit_mode_is_exact_whatever_the_umask(tmp_path: Path, umask: Callable[[int], None]) -> None:
    umask(0o000)
    path = tmp_path / "secret"
    atomic_write_bytes(path, b"x", mode=0o600)
    assert _mode(path) == 0o600
    os.chmod(path, 0o644)
    atomic_write_bytes(path, b"y", mode=0o600)  # a secret is never widened by the file it replaces
    assert _mode(path) == 0o600 and path.read_bytes() == b"y"

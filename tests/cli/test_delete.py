"""`cryptobench delete` asks on a terminal, takes --yes in scripts, and never waits in a pipe.

It deleted at once, wherever it ran: a mistyped prefix at a terminal was gone without a
word. Now a terminal is shown the runs and asked; `--yes` skips the question; without a
terminal and without `--yes` nothing is read and nothing deleted (exit 2, one line naming
--yes), so a pipe or CI job can never hang on a question.
"""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from app.cli.main import main
from app.core.store.store import Store
from tests.helpers import records
from tests.helpers.paths import ROOT

Capture = pytest.CaptureFixture[str]
IDS = ("20260101-000000-aaaaaa", "20260102-000000-bbbbbb")


class _Terminal(io.StringIO):
    """Standard input or a screen that says it is a terminal (or not)."""

    def __init__(self, text: str = "", tty: bool = True) -> None:
        super().__init__(text)
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


class _NeverRead(_Terminal):
    def readline(self, size: int | None = -1) -> str:
        raise AssertionError("delete read standard input off a terminal")


def _store(tmp_path: Path) -> str:
    path = tmp_path / "s.sqlite3"
    with Store(path) as store:
        for run_id in IDS:
            store.add_run(records.run(run_id, [records.job(run_id, 0)]))
    return str(path)


def _left(path: str) -> set[str]:
    with Store(path) as store:
        return {summary.id for summary in store.list_runs()}


def _at_a_terminal(monkeypatch: pytest.MonkeyPatch, answer: str) -> _Terminal:
    screen = _Terminal()
    monkeypatch.setattr("sys.stdin", _Terminal(answer))
    monkeypatch.setattr("sys.stderr", screen)
    monkeypatch.setenv("COLUMNS", "400")  # wide enough for the temporary store's path
    return screen


def test_off_a_terminal_without_yes_nothing_is_read_or_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capture
) -> None:
    path = _store(tmp_path)
    monkeypatch.setattr("sys.stdin", _NeverRead(tty=False))
    assert main(["delete", *IDS, "--store", path]) == 2
    assert capsys.readouterr().err == (
        "cryptobench: error: delete: not on a terminal, so nothing was asked and nothing deleted; "
        "add --yes to delete the 2 runs without asking\n"
    )
    assert _left(path) == set(IDS)


def test_yes_deletes_without_asking(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capture) -> None:
    path = _store(tmp_path)
    monkeypatch.setattr("sys.stdin", _NeverRead(tty=True))  # even at a terminal: nothing asked
    assert main(["delete", "--yes", IDS[0], "--store", path]) == 0
    assert capsys.readouterr().out == f"deleted run {IDS[0]} “p” (1 jobs) from {path}\n"
    assert _left(path) == {IDS[1]}


@pytest.mark.parametrize("answer", ["y\n", "YES\n", " yes \n"])
def test_at_a_terminal_yes_deletes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capture, answer: str
) -> None:
    path = _store(tmp_path)
    screen = _at_a_terminal(monkeypatch, answer)
    assert main(["delete", IDS[0], "--store", path]) == 0
    asked = screen.getvalue()
    assert asked == (f"to delete from {path}:\n  {IDS[0]} “p” (1 jobs)\nDelete the run? This cannot be undone. [y/N] ")
    assert _left(path) == {IDS[1]}
    assert "deleted run" in capsys.readouterr().out


@pytest.mark.parametrize("answer", ["\n", "n\n", "no\n", "yep\n", ""])
def test_at_a_terminal_anything_else_deletes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capture, answer: str
) -> None:
    path = _store(tmp_path)
    screen = _at_a_terminal(monkeypatch, answer)
    assert main(["delete", *IDS, "--store", path]) == 0
    assert "Delete the 2 runs? This cannot be undone. [y/N] " in screen.getvalue()
    # A typed answer's newline is the terminal's echo; at the end of input (Ctrl-D) the
    # command ends the prompt's line itself.
    assert screen.getvalue().endswith("[y/N] " if answer else "[y/N] \n")
    assert capsys.readouterr().out == "nothing deleted\n"
    assert _left(path) == set(IDS)


def test_a_wrong_id_is_said_before_anything_is_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capture
) -> None:
    path = _store(tmp_path)
    screen = _at_a_terminal(monkeypatch, "y\n")
    assert main(["delete", IDS[0], "nope", "--store", path]) == 2
    assert "Delete" not in screen.getvalue() and "no run with id 'nope'" in screen.getvalue()
    assert _left(path) == set(IDS)


def _delete(path: str, stdin: int | None, stdout: int | None = None) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    return subprocess.Popen(
        [sys.executable, "-m", "app", "delete", IDS[0], "--store", path],
        stdin=stdin,
        stdout=stdout if stdout is not None else subprocess.PIPE,
        stderr=stdout if stdout is not None else subprocess.PIPE,
        cwd=ROOT,
        env=env,
    )


def test_in_a_pipe_left_open_it_refuses_at_once_instead_of_waiting(tmp_path: Path) -> None:
    """Standard input a pipe nobody writes to or closes: a read would wait for ever."""
    path = _store(tmp_path)
    read_end, write_end = os.pipe()
    try:
        child = _delete(path, stdin=read_end)
        out, err = child.communicate(timeout=60)
    finally:
        os.close(read_end)
        os.close(write_end)
    assert child.returncode == 2, err
    assert b"add --yes" in err and out == b""
    assert _left(path) == set(IDS)


def _read_until(fd: int, marker: bytes, deadline: float) -> bytes:
    seen = b""
    while marker not in seen:
        left = deadline - time.monotonic()
        assert left > 0, seen
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
    return seen


def test_on_a_real_pseudo_terminal_it_asks_and_deletes_on_yes(tmp_path: Path) -> None:
    path = _store(tmp_path)
    master, slave = pty.openpty()
    try:
        child = _delete(path, stdin=slave, stdout=slave)
        os.close(slave)
        deadline = time.monotonic() + 60
        asked = _read_until(master, b"[y/N] ", deadline)
        assert b"This cannot be undone." in asked and IDS[0].encode() in asked
        os.write(master, b"y\n")
        said = _read_until(master, b"deleted run", deadline)
        assert b"deleted run " + IDS[0].encode() in said
        assert child.wait(timeout=60) == 0
    finally:
        os.close(master)
    assert _left(path) == {IDS[1]}

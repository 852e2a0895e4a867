"""Prose printed outside rich: whole lines in a pipe, words wrapped on a terminal.

A terminal cuts a line longer than itself wherever its width runs out: run's stability
warnings (300 characters) and its last lines came out cut mid-word at 80 columns. Every
line of prose the command line prints outside rich goes through `say`, which wraps it at
spaces on a terminal and leaves it one line elsewhere; `print` of prose is left nowhere.
"""

from __future__ import annotations

import ast
import io
import re

import pytest

from app.cli.terminal import lines
from app.cli.terminal.lines import say, wrap_words
from tests.helpers.paths import ROOT

WARNING = (
    "cryptobench: warning: Stability: other programs used 155 % of one core over 0.20 s: competing programs "
    "take CPU time, caches, memory bandwidth and turbo headroom from the benchmark. Fix: stop other programs "
    "(browsers, builds, indexers, other benchmarks), then run again, using the stream relay"
)


class _Screen(io.StringIO):
    """A stream that says it is a terminal, or not."""

    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize("width", range(40, 201, 8))
def test_on_a_terminal_no_line_is_wider_than_it_and_no_word_is_cut(width: int, monkeypatch: pytest.MonkeyPatch) -> None:
    screen = _Screen(tty=True)
    monkeypatch.setattr("sys.stderr", screen)
    monkeypatch.setenv("COLUMNS", str(width))
    say(WARNING, err=True)
    shown = screen.getvalue().splitlines()
    assert all(len(line) <= width for line in shown), shown
    assert " ".join(" ".join(shown).split()) == WARNING  # every word whole, in its order
    assert all(line.startswith("  ") for line in shown[1:])  # the continuation reads as one message


@pytest.mark.parametrize("columns", ["40", "80", None])
def test_in_a_pipe_a_message_stays_one_line_whatever_columns_says(
    columns: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    screen = _Screen(tty=False)
    monkeypatch.setattr("sys.stdout", screen)
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    say(WARNING)
    assert screen.getvalue() == WARNING + "\n"


def test_a_word_wider_than_the_terminal_stays_whole() -> None:
    path = "/tmp/" + "x" * 60 + "/results.sqlite3"
    wrapped = wrap_words(f"moved {path} to {path}.broken", 40).splitlines()
    assert path in wrapped[1] and all(len(line) <= 40 or path in line for line in wrapped)


def test_lines_already_short_are_left_as_they_are() -> None:
    assert wrap_words("a\n    b  c\n", 40) == "a\n    b  c\n"
    assert lines.terminal_width(_Screen(tty=False)) is None


def _prose_prints() -> list[str]:
    """`print(...)` calls in app/cli other than JSON documents (data, not prose) and `say`'s own."""
    found = []
    for path in sorted((ROOT / "app" / "cli").rglob("*.py")):
        if path.name == "lines.py" and path.parent.name == "terminal":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print"):
                continue
            first = node.args[0] if node.args else None
            if isinstance(first, ast.Call) and re.fullmatch(r"json\.dumps", ast.unparse(first.func)):
                continue
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_the_command_line_prints_prose_only_through_say() -> None:
    assert _prose_prints() == []

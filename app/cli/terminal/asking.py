"""A question the command line asks before it does what cannot be undone.

Only a person at a terminal is asked: standard input must be a terminal, and so must
the stream the question is written on (standard error, else standard output, so that
`delete ... > log` still shows it). Anywhere else (a pipe, a file, CI, `nohup`) nothing is
read: a command that would have asked refuses instead, naming the option that says yes
(`delete --yes`), so a script can never hang on a question nobody sees.
"""

from __future__ import annotations

import sys
from typing import TextIO

from app.cli.terminal.lines import say, terminal_width, wrap_words

__all__ = ["can_ask", "confirm"]

#: The answers that mean yes; anything else, an empty line or the end of input is no.
_YES = frozenset({"y", "yes"})


def _screen() -> TextIO | None:
    """Where a question is written: the terminal on standard error, else on standard output."""
    for stream in (sys.stderr, sys.stdout):
        if terminal_width(stream) is not None:
            return stream
    return None


def can_ask() -> bool:
    """Whether a person at a terminal can answer: standard input and a screen are terminals."""
    try:
        reads_a_terminal = bool(sys.stdin is not None and sys.stdin.isatty())
    except (AttributeError, OSError, ValueError):
        reads_a_terminal = False
    return reads_a_terminal and _screen() is not None


def confirm(lines: list[str], question: str) -> bool:
    """Show `lines` (what would be done), ask `question` ("[y/N]" is added) and read one
    answer: True only for y or yes. Call only when `can_ask()`; Ctrl-C raises
    KeyboardInterrupt as anywhere else (the command is then stopped, nothing done)."""
    screen = _screen()
    if screen is None:  # not a terminal after all: no answer is a no
        return False
    for line in lines:
        say(line, err=screen is sys.stderr)
    width = terminal_width(screen) or 80
    screen.write(wrap_words(f"{question} [y/N] ", width))
    screen.flush()
    answer = sys.stdin.readline()
    if not answer.endswith("\n"):  # the end of input (Ctrl-D): the prompt's line ends here
        screen.write("\n")
    return answer.strip().lower() in _YES

"""Lines of prose the command line prints outside rich (errors, warnings, notes, a
command's account of what it did): whole in a pipe, words wrapped on a terminal.

A terminal cuts a line longer than itself wherever its width runs out, so a warning
printed with `print` came out cut mid-word at 80 columns ("usi" / "ng the stream
relay"). On a terminal, `say` wraps such a line at spaces, its continuation indented so
that it still reads as one message; in a pipe, a file or CI every message stays one
line, for `grep`. rich's consoles wrap their own output; this is for the rest.
"""

from __future__ import annotations

import os
import sys
import textwrap
from typing import TextIO

__all__ = ["say", "terminal_width", "wrap_words"]

#: The continuation of a wrapped message: indented under its first line.
INDENT = "  "


def terminal_width(stream: TextIO) -> int | None:
    """How wide the terminal `stream` writes to is (COLUMNS first, as rich reads it), or
    None when it writes to no terminal: a pipe, a file, CI."""
    try:
        if not stream.isatty():
            return None
    except (AttributeError, OSError, ValueError):
        return None
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(stream.fileno()).columns or 80  # 0: a terminal that never said
    except (AttributeError, OSError, ValueError):  # a terminal without a descriptor (a test's)
        return 80


def wrap_words(text: str, width: int) -> str:
    """`text` with every line longer than `width` wrapped at spaces, never inside a word
    (a word wider than the line, a long path, stays whole on a line of its own)."""
    lines: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            lines.append(line)
            continue
        lead = line[: len(line) - len(line.lstrip(" "))]
        lines += textwrap.wrap(
            line,
            width=max(width, len(lead + INDENT) + 1),
            initial_indent="",
            subsequent_indent=lead + INDENT,
            break_long_words=False,
            break_on_hyphens=False,
        ) or [line]
    return "\n".join(lines)


def say(text: str, *, err: bool = False) -> None:
    """Print `text` on standard output (standard error with `err`): its words wrapped to
    the width on a terminal, each line whole elsewhere."""
    stream = sys.stderr if err else sys.stdout
    width = terminal_width(stream)
    print(text if width is None else wrap_words(text, width), file=stream)

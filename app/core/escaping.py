"""Showing text that came from outside: a peer's error, a profile's name, a stored label.

Such text may hold terminal escape sequences (clear the screen, move the cursor, set
the window title), carriage returns and newlines that fake further output lines, or
bidirectional overrides that reorder what a reader sees. `escape_control` makes every
such character visible as a backslash escape, so that text from a peer or a file can
say what it likes but never do anything to the screen, a report or a log.
"""

from __future__ import annotations

import unicodedata

#: Unicode categories shown escaped: controls (C0, DEL, C1), format characters
#: (bidi overrides, zero-width joiners), surrogates, private use, unassigned,
#: and the line and paragraph separators.
_ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escaped(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def escape_control(text: str, limit: int | None = None) -> str:
    """`text` with every control or format character written as a visible escape.

    Ordinary text (letters of any script, punctuation, spaces, emoji) is unchanged;
    backslashes are left alone, so that a Windows path reads as itself. `limit`
    shortens the result to about that many characters (with "…" appended), for text
    a peer chose the length of.
    """
    if text.isprintable():
        out = text
    else:
        out = "".join(_escaped(c) if unicodedata.category(c) in _ESCAPED_CATEGORIES else c for c in text)
    if limit is not None and len(out) > limit:
        out = out[:limit] + "…"
    return out

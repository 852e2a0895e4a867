"""The closest known name to one a user typed, for "did you mean" in an error message."""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable


def closest(value: str, choices: Iterable[str]) -> str | None:
    """The known name closest to `value` (case, "-", "_" and spaces aside), or None when none
    is close: `aes-gmc` -> `aes-gcm`, `pycryptodom` -> `pycryptodome`, `LTE` -> `lte`. The
    cutoff (0.7) keeps one typo in a five-letter name and refuses a shared digit or two:
    `rot13` is no misspelling of `tls13`."""
    names = list(dict.fromkeys(choices))
    folded = {_fold(name): name for name in names}
    key = _fold(value)
    if key in folded:
        return folded[key]
    found = difflib.get_close_matches(key, list(folded), n=1, cutoff=0.7)
    return folded[found[0]] if found else None


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """ "; did you mean "x"?" for the closest known name, or "" when none is close."""
    name = closest(value, choices)
    return f"; did you mean {json.dumps(name)}?" if name is not None and name != value else ""


def _fold(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch not in "-_ ")

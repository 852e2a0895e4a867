"""escape_control: text from outside is shown, never obeyed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.escaping import escape_control


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("AES-256-GCM [cryptography]", "AES-256-GCM [cryptography]"),
        ("Ünïcödé · 暗号 — ok ✓ 🔐", "Ünïcödé · 暗号 — ok ✓ 🔐"),
        ("C:\\Users\\bench", "C:\\Users\\bench"),  # backslashes stay as typed
        ("a\u00a0b", "a\u00a0b"),  # a no-break space is a space, not a control
        ("\x1b[2J\x1b[Hhi", "\\x1b[2J\\x1b[Hhi"),
        ("line\nfake line\r\tx", "line\\nfake line\\r\\tx"),
        ("\x00\x07\x7f\x9b", "\\x00\\x07\\x7f\\x9b"),  # NUL, BEL, DEL, the C1 CSI
        ("abc\u202edcba", "abc\\u202edcba"),  # a right-to-left override
        ("x\u2028y\u2029z", "x\\u2028y\\u2029z"),  # line and paragraph separators
        ("\U000e0001tag", "\\U000e0001tag"),  # a tag character (format, outside the BMP)
        ("\ud800", "\\ud800"),  # a lone surrogate (from a "surrogateescape" decode)
    ],
)
def test_escape_control(text: str, shown: str) -> None:
    assert escape_control(text) == shown


def test_limit_shortens_a_long_text() -> None:
    assert escape_control("x" * 1000, 10) == "x" * 10 + "…"
    assert escape_control("short", 10) == "short"


@given(st.text())
def test_the_result_never_holds_a_control_character(text: str) -> None:
    shown = escape_control(text)
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 or c in "\u2028\u2029\u202e" for c in shown)
    if text.isprintable():
        assert shown == text

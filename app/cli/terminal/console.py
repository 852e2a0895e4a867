"""The console every command prints through, and text made safe to print on it."""

from __future__ import annotations

from typing import Any


def escape(text: str) -> str:
    """Text for rich: control characters shown as escapes (a peer's, a profile's or a stored
    text must not drive the terminal) and markup escaped ("AES-256-GCM [cryptography]")."""
    from rich.markup import escape as rich_escape

    from app.core.escaping import escape_control

    return rich_escape(escape_control(text))


def make_console() -> Any:
    """A rich console. On a terminal, lines fit its width; elsewhere nothing is wrapped
    (rich would otherwise cut every line at 80 columns, or at COLUMNS, mid-word)."""
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=False)
    if not console.is_terminal:
        # soft_wrap: printed lines are never cut, whatever COLUMNS says; the width only
        # matters for a table, and none is printed off a terminal (see print_table).
        console = Console(highlight=False, soft_wrap=True, width=1000)
    return console

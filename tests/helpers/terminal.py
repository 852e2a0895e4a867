"""The command line's summary of a run as a terminal or a pipe shows it (no colour)."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from app.cli.terminal.printing import print_summary


def printed_summary(run: Any, terminal: bool, width: int = 80) -> str:
    """`print_summary` of `run`: on a terminal `width` columns wide, or piped (no wrapping)."""
    out = io.StringIO()
    console = Console(
        file=out,
        force_terminal=terminal,
        width=width if terminal else 1000,
        soft_wrap=not terminal,
        highlight=False,
        color_system=None,
    )
    print_summary(console, run)
    return out.getvalue()

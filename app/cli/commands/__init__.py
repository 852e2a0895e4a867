"""The commands of the command line, one module each.

A command module holds its parser and its handler:

    NAME = "compare"                                  # what the user types
    HELP = "compare runs metric by metric ..."        # its line in `cryptobench --help`
    GUIDES = ("docs/comparing.md",)                   # the guides its --help points to
    def add_arguments(parser: argparse.ArgumentParser) -> None: ...
    def run(args: argparse.Namespace) -> int: ...    # the exit code

`all_commands` finds them, so adding a command is adding a module here (asv's
`commands/` works the same way); nothing else lists them. A handler imports what it
needs inside `run`: every module here is imported to build the parser, and `--help`
should not load the crypto libraries or Qt.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from collections.abc import Callable
from types import ModuleType
from typing import Protocol, cast


class Command(Protocol):
    """What a command module provides (checked when the parser is built)."""

    NAME: str
    HELP: str
    GUIDES: tuple[str, ...]
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def all_commands() -> list[Command]:
    """Every command module of this package, in alphabetical order of the command's name."""
    modules: list[ModuleType] = [
        importlib.import_module(f"{__name__}.{info.name}") for info in pkgutil.iter_modules(__path__)
    ]
    for module in modules:
        missing = [attr for attr in ("NAME", "HELP", "GUIDES", "add_arguments", "run") if not hasattr(module, attr)]
        if missing:
            raise TypeError(f"{module.__name__} is not a command module: it lacks {', '.join(missing)}")
    return sorted((cast(Command, module) for module in modules), key=lambda command: command.NAME)

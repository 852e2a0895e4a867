"""docs/command-line.md names every command and every option, read from the real parser.

The page says it covers every command and option; `run --cluster`, `--generators` and
`--cluster-plain-tcp` were added to the parser and not to the page. These tests build the
parser `cryptobench` itself uses and hold the page to it both ways: every command and
every option string of every command is in that command's entry of the page's command
list, no entry names an option its command lacks, a choice shown as `a|b|c` is the
option's choices, and no option anywhere on the page is one the parser does not have.
"""

from __future__ import annotations

import argparse
import re
from functools import cache

import pytest

from app.cli.main import build_parser
from tests.helpers.paths import ROOT

PAGE = ROOT / "docs" / "command-line.md"
#: An option string as the page writes it: `--store`, `--link-emulation` (not a dash in
#: prose, not part of a longer word).
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
#: Choices as the page shows them: `packet|stream-relay|auto`.
ALTERNATION = r"[\w.-]+(?:\|[\w.-]+)+"
#: argparse adds these to every command itself; the page does not list them per command.
IMPLIED = {"-h", "--help"}


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


@cache
def _commands() -> dict[str, argparse.ArgumentParser]:
    return _subparsers(build_parser())


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {option for action in parser._actions for option in action.option_strings} - IMPLIED


def _text() -> str:
    return PAGE.read_text(encoding="utf-8")


@cache
def _entries() -> dict[str, str]:
    """The page's command list (the first code block under "## Commands"), one entry per
    command: its `cryptobench NAME` line and the lines under it, up to the next command.
    `cryptobench --version` is the entry of the top-level parser, keyed ""."""
    section = _text().split("\n## Commands\n", 1)[1]
    block = re.search(r"^```[^\n]*\n(.*?)^```", section, flags=re.M | re.S)
    assert block is not None, "docs/command-line.md: no code block under ## Commands"
    entries: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in block.group(1).splitlines():
        match = re.match(r"cryptobench (\S+)", line)
        if match:
            name = "" if match.group(1).startswith("-") else match.group(1)
            assert name not in entries, f"docs/command-line.md lists `cryptobench {name}` twice"
            current = entries[name] = []
        assert current is not None, f"docs/command-line.md: a line before the first command: {line!r}"
        current.append(line)
    return {name: "\n".join(lines) for name, lines in entries.items()}


def test_the_page_lists_every_command_and_no_other() -> None:
    listed = set(_entries()) - {""}
    assert listed == set(_commands()), (
        f"docs/command-line.md lists {sorted(listed - set(_commands()))} that the parser lacks and lacks "
        f"{sorted(set(_commands()) - listed)}"
    )


@pytest.mark.parametrize("name", sorted(_commands()))
def test_a_command_s_entry_names_exactly_its_options(name: str) -> None:
    named = set(OPTION.findall(_entries()[name]))
    options = _options(_commands()[name])
    assert named == options, (
        f"docs/command-line.md, `cryptobench {name}`: lacks {sorted(options - named)}; "
        f"names {sorted(named - options)} that the command does not have"
    )


def test_the_top_level_options_are_listed() -> None:
    assert set(OPTION.findall(_entries()[""])) == _options(build_parser())


@pytest.mark.parametrize("name", sorted(_commands()))
def test_choices_shown_on_the_page_are_the_parser_s(name: str) -> None:
    """`--placement same|split|free` on the page is exactly what the option accepts, and a
    positional with choices (`store [check|copy]`) shows them."""
    entry = _entries()[name]
    for action in _commands()[name]._actions:
        if not action.choices or isinstance(action, argparse._SubParsersAction):
            continue
        choices = {str(choice) for choice in action.choices}
        if action.option_strings:
            shown = re.findall(rf"{re.escape(action.option_strings[-1])}(?![\w-]) ({ALTERNATION})", entry)
        else:
            shown = [group for group in re.findall(ALTERNATION, entry) if set(group.split("|")) == choices]
            assert shown, f"docs/command-line.md, `cryptobench {name}`: {action.dest} shows no {sorted(choices)}"
        for group in shown:
            assert set(group.split("|")) == choices, (
                f"docs/command-line.md, `cryptobench {name}`: shows {group}, the parser takes {sorted(choices)}"
            )


def test_the_page_names_no_option_that_no_command_has() -> None:
    """Anywhere on the page (prose, tables, examples): an option must exist somewhere."""
    every = _options(build_parser()) | {o for parser in _commands().values() for o in _options(parser)} | IMPLIED
    unknown = sorted(set(OPTION.findall(_text())) - every)
    assert not unknown, f"docs/command-line.md names options no command has: {unknown}"


def test_an_option_named_with_its_command_belongs_to_it() -> None:
    """`run --per-sample`, `show --per-sample` in the prose and the table: each option
    after a command's name in one code span is that command's."""
    wrong = []
    for span in re.findall(r"`cryptobench ([a-z]+)\b([^`]*)`|`([a-z]+)( --[^`]*)`", _text()):
        name, rest = (span[0], span[1]) if span[0] else (span[2], span[3])
        if name not in _commands():
            continue
        wrong += [
            f"{name} {option}" for option in OPTION.findall(rest) if option not in _options(_commands()[name]) | IMPLIED
        ]
    assert not wrong, f"docs/command-line.md names options under a command that lacks them: {wrong}"


def test_the_checks_see_what_they_check() -> None:
    """The extraction itself works: the entries are found and a missing option would show."""
    assert "--cluster-plain-tcp" in OPTION.findall(_entries()["run"])
    assert "--version" in _entries()[""]
    assert OPTION.findall("a -- b, a---c, x--y, `--no-store`") == ["--no-store"]

"""The command table is derived from app/cli/commands/, and every command's --help points to
guides that exist."""

from __future__ import annotations

import pkgutil

import pytest

import app.cli.commands as commands_package
from app.cli.commands import all_commands
from app.cli.main import build_parser
from tests.helpers.paths import ROOT


def test_every_module_of_the_package_is_a_command_and_every_name_is_unique() -> None:
    modules = {info.name for info in pkgutil.iter_modules(commands_package.__path__)}
    names = [command.NAME for command in all_commands()]
    assert len(names) == len(modules) and len(set(names)) == len(names)
    assert {"run", "compare", "import", "list", "report", "serve"} <= set(names)


@pytest.mark.parametrize("command", all_commands(), ids=lambda command: command.NAME)
def test_a_command_s_help_names_guides_that_exist(command, capsys: pytest.CaptureFixture[str]) -> None:
    assert command.GUIDES and all((ROOT / guide).is_file() for guide in command.GUIDES), command.GUIDES
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args([command.NAME, "--help"])
    assert exited.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert all(guide in shown for guide in command.GUIDES), shown


def test_every_option_and_argument_of_every_command_says_what_it_is() -> None:
    """`history --help` and `show --help` listed `--store` and `--json` with no words."""
    import argparse

    from app.cli.main import build_parser

    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    silent = [
        f"{name} {action.option_strings[0] if action.option_strings else action.dest}"
        for name, sub in commands.choices.items()
        for action in sub._actions
        if not isinstance(action, argparse._HelpAction) and not action.help
    ]
    assert not silent, silent


def test_an_unknown_option_is_named_with_its_command_s_usage(capsys: pytest.CaptureFixture[str]) -> None:
    """`run --reduse` printed the top-level usage, which names no option of run's."""
    from app.cli.main import main

    with pytest.raises(SystemExit) as exited:
        main(["run", "--reduse", "quick"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: cryptobench run ") and "--reduced" in err
    assert err.rstrip().endswith("cryptobench run: error: unrecognized arguments: --reduse")

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

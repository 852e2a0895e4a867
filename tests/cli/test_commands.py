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


def _helps() -> dict[str, str]:
    import argparse

    parser = build_parser()
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return {
        f"{name} {action.option_strings[0] if action.option_strings else action.dest}": " ".join(
            (action.help or "").split()
        )
        for name, sub in commands.choices.items()
        for action in sub._actions
        if not isinstance(action, argparse._HelpAction)
    }


def test_every_option_s_help_is_a_sentence_not_a_label() -> None:
    """ "machine-readable output", "results store (default: user data dir)", "the theme to
    show": words that name the option again and tell nothing it does."""
    short = {option: text for option, text in _helps().items() if len(text.split()) < 6}
    assert not short, short


def test_store_and_json_say_what_they_hold_and_where() -> None:
    helps = _helps()
    stores = {option: text for option, text in helps.items() if option.endswith(" --store")}
    assert {"history --store", "show --store", "run --store", "compare --store"} <= set(stores)
    for option, text in stores.items():  # which file, what the command does with it, the default
        assert "SQLite" in text and "default" in text and "CRYPTOBENCH_HOME" in text, option
    assert len(set(stores.values())) == len(stores)  # each says its own use
    printed = {option: text for option, text in helps.items() if option.endswith(" --json") and "stdout" in text}
    assert {"history --json", "show --json", "list --json", "links --json", "system --json"} <= set(printed)
    for option, text in printed.items():  # what is printed, and instead of what
        assert "JSON" in text and "instead of" in text and "(" in text, option


def test_an_unknown_option_is_named_with_its_command_s_options(capsys: pytest.CaptureFixture[str]) -> None:
    """`run --reduse` printed the top-level usage, which names no option of run's; then run's
    usage block before the error. Now one line: the closest option of run's, run's --help."""
    from app.cli.main import main

    with pytest.raises(SystemExit) as exited:
        main(["run", "--reduse", "quick"])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err == (
        'cryptobench run: error: unknown option --reduse; did you mean "--reduced"? (see `cryptobench run --help`)\n'
    )

"""Every argument-parser error of every command is one line, exit code 2.

argparse printed the command's usage block (eight lines for `run`) before the error, and
knew no "did you mean": `cryptobench histroy` listed the fifteen commands. Each kind of
mistake is made here on every command that can have it, from the real parser: an unknown
command, an unknown option (one close to a real one, one close to none), a value outside
an option's choices, a value of the wrong type, a missing argument. Each must be one
line naming what was wrong, with the closest known name where one is close, and
"(see `cryptobench CMD --help`)".
"""

from __future__ import annotations

import argparse
from functools import cache

import pytest

from app.cli.main import build_parser, main

Capture = pytest.CaptureFixture[str]


@cache
def _commands() -> dict[str, argparse.ArgumentParser]:
    (action,) = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def _positionals(name: str) -> list[str]:
    """A value for each required positional argument of the command (parsing stops before using it)."""
    parser = _commands()[name]
    return [
        "x"
        for action in parser._actions
        if not action.option_strings and action.nargs not in ("?", "*") and action.default is None
    ]


def _error(argv: list[str], capsys: Capture) -> str:
    """The one line `cryptobench ARGV` says on stderr; it exits 2 and prints nothing on stdout."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2, argv
    out, err = capsys.readouterr()
    assert out == "", argv
    lines = err.splitlines()
    assert len(lines) == 1, (argv, err)  # no usage block before it
    assert "usage:" not in err
    return lines[0]


def _typo(word: str) -> str:
    """`word` with two different letters from its middle on swapped: close, but not a prefix of it."""
    body = word.lstrip("-")
    dashes = word[: len(word) - len(body)]
    k = next(k for k in range(len(body) // 2, len(body)) if body[k - 1] != body[k])
    return dashes + body[: k - 1] + body[k] + body[k - 1] + body[k + 1 :]


@pytest.mark.parametrize(("typed", "meant"), [("histroy", "history"), ("comapre", "compare"), ("presest", "presets")])
def test_a_mistyped_command_gets_did_you_mean(typed: str, meant: str, capsys: Capture) -> None:
    line = _error([typed], capsys)
    assert line == (
        f'cryptobench: error: unknown command "{typed}"; did you mean "{meant}"? (see `cryptobench --help`)'
    )


def test_a_command_close_to_none_is_named_with_the_help_to_read(capsys: Capture) -> None:
    assert (
        _error(["frobnicate"], capsys) == 'cryptobench: error: unknown command "frobnicate" (see `cryptobench --help`)'
    )


def test_a_mistyped_top_level_option_gets_did_you_mean(capsys: Capture) -> None:
    line = _error(["--versoin"], capsys)
    assert line == 'cryptobench: error: unknown option --versoin; did you mean "--version"? (see `cryptobench --help`)'


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_command_names_an_unknown_option_and_the_closest_one(name: str, capsys: Capture) -> None:
    parser = _commands()[name]
    options = sorted(
        (o for a in parser._actions for o in a.option_strings if o.startswith("--") and o != "--help"),
        key=len,
        reverse=True,
    )
    line = _error([name, *_positionals(name), "--no-such-option-at-all"], capsys)
    assert line == (
        f"cryptobench {name}: error: unknown option --no-such-option-at-all (see `cryptobench {name} --help`)"
    )
    if not options or len(options[0]) < 8:
        return
    typed = _typo(options[0])
    line = _error([name, *_positionals(name), typed], capsys)
    assert line == (
        f'cryptobench {name}: error: unknown option {typed}; did you mean "{options[0]}"? '
        f"(see `cryptobench {name} --help`)"
    )


def _choice_actions() -> list[tuple[str, argparse.Action]]:
    return [
        (name, action)
        for name, parser in sorted(_commands().items())
        for action in parser._actions
        if action.choices and not isinstance(action, argparse._SubParsersAction)
    ]


@pytest.mark.parametrize(
    ("name", "action"), _choice_actions(), ids=[f"{n} {a.option_strings or a.dest}" for n, a in _choice_actions()]
)
def test_every_choice_outside_its_list_gets_did_you_mean(name: str, action: argparse.Action, capsys: Capture) -> None:
    choices = [str(c) for c in action.choices or ()]
    meant = max(choices, key=len)
    typed = _typo(meant)
    option = action.option_strings[-1] if action.option_strings else None
    argv = [name, *_positionals(name), *((option, typed) if option else (typed,))]
    line = _error(argv, capsys)
    where = f"{option}: " if option else ""
    assert line == (
        f'cryptobench {name}: error: {where}"{typed}" is not one of {", ".join(choices)}; did you mean "{meant}"? '
        f"(see `cryptobench {name} --help`)"
    )


def _typed_actions() -> list[tuple[str, argparse.Action]]:
    return [
        (name, action)
        for name, parser in sorted(_commands().items())
        for action in parser._actions
        if action.type in (int, float) and action.option_strings
    ]


@pytest.mark.parametrize(
    ("name", "action"), _typed_actions(), ids=[f"{n} {a.option_strings[-1]}" for n, a in _typed_actions()]
)
def test_every_number_option_says_what_it_expected(name: str, action: argparse.Action, capsys: Capture) -> None:
    option = action.option_strings[-1]
    line = _error([name, *_positionals(name), option, "soon"], capsys)
    expected = "a whole number" if action.type is int else "a number"
    assert (
        line
        == f"cryptobench {name}: error: {option}: expected {expected}, not 'soon' (see `cryptobench {name} --help`)"
    )


@pytest.mark.parametrize("name", [name for name in sorted(_commands()) if _positionals(name)])
def test_every_missing_argument_is_one_line(name: str, capsys: Capture) -> None:
    line = _error([name], capsys)
    assert line.startswith(f"cryptobench {name}: error: the following arguments are required: ")
    assert line.endswith(f"(see `cryptobench {name} --help`)")


def test_an_option_without_its_value_and_an_extra_argument_are_one_line(capsys: Capture) -> None:
    assert _error(["run", "quick", "--samples"], capsys) == (
        "cryptobench run: error: --samples: expected one argument (see `cryptobench run --help`)"
    )
    assert _error(["history", "extra"], capsys) == (
        "cryptobench history: error: unexpected argument 'extra' (see `cryptobench history --help`)"
    )


def test_an_option_written_with_its_value_is_named_without_it(capsys: Capture) -> None:
    line = _error(["run", "quick", "--placment=split"], capsys)
    assert line.startswith('cryptobench run: error: unknown option --placment; did you mean "--placement"?')


def test_the_checks_make_each_mistake_they_mean() -> None:
    """The typo is close and not a prefix argparse would take as the option itself."""
    assert _typo("--reduced") == "--reudced" and _typo("Letter") == "Letetr"
    assert not "--reduced".startswith(_typo("--reduced"))
    assert _positionals("compare") == ["x", "x"] and _positionals("history") == []
    assert {name for name, _ in _choice_actions()} >= {"run", "gui", "report", "store"}
    assert {a.option_strings[-1] for _, a in _typed_actions()} >= {
        "--samples",
        "--generators",
        "--quit-after",
        "--port",
    }

"""The command line's argument parser and its errors: one line each, exit code 2.

argparse answered a mistake with its usage block (eight lines for `run`) and then the
error, and knew no "did you mean": `cryptobench histroy` listed every command. Every
parser of the command line is a `Parser`, whose errors are one line naming what was
wrong (the command, the option, the value), the closest known name when one is close,
and where to read more:

    cryptobench: error: unknown command "histroy"; did you mean "history"? (see `cryptobench --help`)
    cryptobench run: error: --placement: "splt" is not one of same, split, free; did you mean "split"? (see ...)
    cryptobench run: error: unknown option --reduse; did you mean "--reduced"? (see `cryptobench run --help`)
    cryptobench run: error: --samples: expected a whole number, not 'x' (see `cryptobench run --help`)
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import Any, NoReturn

from app.cli.common import EXIT_USAGE
from app.core.suggest import did_you_mean

__all__ = ["Parser", "unrecognized"]

#: What a value of these types is, in words ("invalid int value" named a Python type).
_TYPE_WORDS: dict[Any, str] = {int: "a whole number", float: "a number"}


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line, with a did-you-mean and the --help to read."""

    def error(self, message: str) -> NoReturn:
        from app.cli.terminal.lines import say
        from app.core.escaping import escape_control

        # argparse says "argument --samples: ..."; the option's name is enough.
        message = message.removeprefix("argument ")
        say(escape_control(f"{self.prog}: error: {message} (see `{self.prog} --help`)"), err=True)
        self.exit(EXIT_USAGE)

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """A value outside an option's choices, or an unknown command, with the closest one."""
        if action.choices is None or value in action.choices:
            return
        names = [str(choice) for choice in action.choices]
        hint = did_you_mean(str(value), names)
        shown = json.dumps(str(value), ensure_ascii=False)
        if isinstance(action, argparse._SubParsersAction):
            raise argparse.ArgumentError(None, f"unknown command {shown}{hint}")
        what = f"{shown} is not one of {', '.join(names)}{hint}"
        raise argparse.ArgumentError(action if action.option_strings else None, what)

    def _get_value(self, action: argparse.Action, arg_string: str) -> Any:
        """A value of the wrong type, said in words: "expected a whole number, not 'x'"."""
        try:
            return super()._get_value(action, arg_string)
        except argparse.ArgumentError:
            if action.type not in _TYPE_WORDS:
                raise
            raise argparse.ArgumentError(action, f"expected {_TYPE_WORDS[action.type]}, not {arg_string!r}") from None


def unrecognized(parser: argparse.ArgumentParser, unknown: Sequence[str]) -> str:
    """What `parse_known_args` left over, in one phrase: the first unknown option (with
    the closest option of `parser`), else the arguments nothing expected."""
    options = [text.split("=", 1)[0] for text in unknown if text.startswith("-") and text != "-"]
    if options:
        known = [option for action in parser._actions for option in action.option_strings]
        return f"unknown option {options[0]}{did_you_mean(options[0], known)}"
    listed = " ".join(repr(text) for text in unknown)
    return f"unexpected argument{'s' if len(unknown) > 1 else ''} {listed}"

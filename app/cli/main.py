"""Command line: the headless face of CryptoBench over the same runner as the GUI.

Exit codes: 0 all good; 1 a job or a self-test failed, or the result a command prints
could not be written (a full disk; a closed pipe is not an error); 2 bad usage or bad input
(the message names the file, the field and the value). Never a traceback for a
user's mistake.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from app import __version__
from app.cli.commands import all_commands
from app.cli.common import EXIT_FAILED, EXIT_OK, EXIT_USAGE, UsageError
from app.cli.terminal.lines import say
from app.cli.usage import Parser, unrecognized


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="cryptobench",
        description="Benchmark cryptographic schemes as they are deployed.",
        epilog="Guides: README.md and docs/ in the CryptoBench source (docs/command-line.md for every command).",
    )
    parser.add_argument("--version", action="version", version=f"cryptobench {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for command in all_commands():
        guides = ", ".join(command.GUIDES)
        epilog = f"Guide{'s' if len(command.GUIDES) > 1 else ''}: {guides} in the CryptoBench source."
        command.add_arguments(commands.add_parser(command.NAME, help=command.HELP, epilog=epilog))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from app.cli.terminal.streams import tolerant_console

    # Every command prints through streams that survive a closed pipe, a closed terminal
    # and a legacy encoding: output is a courtesy, it must never stop the work.
    with tolerant_console() as (out, _err):
        prints_result = [True]  # --help and --version print their result too
        try:
            code = _main(argv, prints_result)
        except SystemExit as exc:
            out.flush()
            if out.failed and exc.code in (None, EXIT_OK):
                raise SystemExit(EXIT_FAILED) from None
            raise
        out.flush()  # here, not after: a full disk must still change the exit code
        if out.failed and prints_result[0] and code == EXIT_OK:
            return EXIT_FAILED  # the message is out already (TolerantStream.on_lost)
        return code


def _main(argv: Sequence[str] | None, prints_result: list[bool]) -> int:
    """Parse and run one command; `prints_result[0]` is set to whether what the command
    prints is its result (`compare`, `history`: lost output fails it) or an account of
    work whose result is elsewhere (`run`, `report`, `import`: the store and the files
    they write; a command module says so with PRINTS_RESULT = False)."""
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        # The command's own parser says it, with the closest of its options (`run --reduse`
        # used to get the top-level usage, which names no option of run's).
        subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        owner = (subparsers.choices.get(args.command) if args.command else None) or parser
        owner.error(unrecognized(owner, unknown))
    if args.command is None:
        parser.print_help()
        return EXIT_OK
    command = {command.NAME: command for command in all_commands()}[args.command]
    prints_result[0] = bool(getattr(command, "PRINTS_RESULT", True))
    from app.cli.terminal.streams import TolerantStream

    if isinstance(sys.stdout, TolerantStream):
        sys.stdout.fails_command = prints_result[0]
    handler = command.run
    from app.core.errors import CryptoBenchError

    try:
        return handler(args)
    # A layer's error that no command turned into a UsageError is still the user's
    # message, not a defect: one line and exit code 2 all the same, never a traceback.
    except (UsageError, CryptoBenchError) as exc:
        from app.core.escaping import escape_control

        for line in exc.lines if isinstance(exc, UsageError) else (str(exc),):
            say(f"cryptobench: error: {escape_control(line)}", err=True)
        return EXIT_USAGE
    except OSError as exc:
        # A path no command checked (a name past the system's 255 characters, a loop of
        # symbolic links, a file used as a folder, no permission): one line, never a
        # traceback. Commands name the file themselves where they can; this is the net.
        from app.cli.common import os_error_line

        say(os_error_line(exc), err=True)
        return EXIT_USAGE
    except KeyboardInterrupt:
        say("cryptobench: interrupted", err=True)
        return 130


if __name__ == "__main__":
    sys.exit(main())

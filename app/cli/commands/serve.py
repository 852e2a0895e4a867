"""`cryptobench serve`: receive session jobs from `run --remote`, one at a time."""

from __future__ import annotations

import argparse
from pathlib import Path

from app.cli.common import EXIT_OK, UsageError
from app.cli.common import console as _console
from app.cli.terminal.console import escape
from app.core.serve import DEFAULT_PORT

NAME = "serve"
HELP = "receive session jobs from `run --remote`, one at a time"
GUIDES = ("docs/remote.md",)
#: What it prints is an account of the work, whose result is the store and the files it
#: writes: standard output lost to a full disk is said, and does not fail it (`app.cli.main`).
PRINTS_RESULT = False


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--bind",
        metavar="ADDR",
        default="127.0.0.1",
        help="address to listen on (default 127.0.0.1; any other needs --token-file)",
    )
    p.add_argument(
        "--port",
        metavar="N",
        type=int,
        default=None,
        help=f"port to listen on (default {DEFAULT_PORT}; 0 picks a free one)",
    )
    p.add_argument(
        "--token-file", metavar="FILE", type=Path, help="token file (64 hex characters, mode 0600); created if missing"
    )


def run(args: argparse.Namespace) -> int:
    from app.core.serve.server import (
        Server,
        TokenFileError,
        create_token_file,
        default_token_path,
        is_loopback,
        load_token,
    )

    port = DEFAULT_PORT if args.port is None else args.port
    if not 0 <= port < 65536:
        raise UsageError(f"--port: must be 0..65535 (got {port})")
    if args.token_file is None and not is_loopback(args.bind):
        raise UsageError(
            f"--bind {args.bind} is not a loopback address: pass --token-file FILE (mode 0600) and "
            "give the client a copy of it"
        )
    path = args.token_file or default_token_path()
    console = _console()
    try:
        if path.exists():
            token = load_token(path)
        else:
            token = create_token_file(path)
            console.print(f"created token file {escape(str(path))} (copy it to the client machine, keep it private)")
    except TokenFileError as exc:
        raise UsageError(str(exc)) from None

    def log(text: str) -> None:
        from datetime import datetime

        console.print(f"{datetime.now():%H:%M:%S} {escape(text)}")

    try:
        server = Server(token, args.bind, port, log=log)
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.bind}:{port}: {exc.strerror or exc}") from None
    host, bound = server.address
    console.print(f"serving on {host}:{bound} with token file {escape(str(path))}; Ctrl-C stops")
    console.print(
        f"client: cryptobench run PROFILE --remote {args.bind if ':' not in args.bind else f'[{args.bind}]'}"
        f":{bound} --token-file {escape(str(path))}",
        soft_wrap=True,
    )
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        console.print(f"stopped after {server.served} job(s), {server.refused} connection(s) refused")
    return EXIT_OK

"""`cryptobench list`: every scheme with its family, backends, parameters and security."""

from __future__ import annotations

import argparse
import json

from app.cli.common import EXIT_OK
from app.cli.common import console as _console
from app.cli.terminal.lists import print_scheme_list

NAME = "list"
HELP = "list every scheme with family, backends, parameters, security"
GUIDES = ("docs/profiles.md",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--json",
        action="store_true",
        help="print every scheme to stdout as a JSON array (family, variants with their security bits, backends, parameters and their ranges) instead of the tables",
    )


def run(args: argparse.Namespace) -> int:
    from app.core.schemes import registry

    described = [registry.describe(spec) for spec in registry.all_specs()]
    if args.json:
        print(json.dumps(described, indent=2, allow_nan=False))
        return EXIT_OK
    print_scheme_list(_console(), described)
    return EXIT_OK

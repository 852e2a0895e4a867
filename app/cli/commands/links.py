"""`cryptobench links`: the named link presets, their figures and where they come from."""

from __future__ import annotations

import argparse
import json

from app.cli.common import EXIT_OK
from app.cli.common import console as _console
from app.cli.terminal.lists import print_link_list

NAME = "links"
HELP = "list the named link presets: their figures and where they come from"
GUIDES = ("docs/links.md",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--json",
        action="store_true",
        help="print every link preset to stdout as a JSON object by name (delay, jitter, rates, loss, description, source) instead of the table",
    )


def run(args: argparse.Namespace) -> int:
    from app.core.settings.links import link_presets

    presets = {name: preset.model_dump(mode="json", exclude_none=True) for name, preset in link_presets().items()}
    if args.json:
        print(json.dumps(presets, indent=2, allow_nan=False))
        return EXIT_OK
    print_link_list(_console(), link_presets())
    return EXIT_OK

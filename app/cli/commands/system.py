"""`cryptobench system`: what on this machine makes timings unstable, each with its fix."""

from __future__ import annotations

import argparse
import json

from app.cli.common import EXIT_OK
from app.cli.common import console as _console
from app.cli.terminal.lists import print_stability_facts

NAME = "system"
HELP = (
    "report what on this machine makes timings unstable (governor, turbo, SMT, VM steal, other load), each "
    "with its fix; changes nothing"
)
GUIDES = ("docs/measuring.md",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--json",
        action="store_true",
        help="print every pre-flight fact to stdout as a JSON array (code, status, what was found, why it matters, the fix) instead of the table",
    )


def run(args: argparse.Namespace) -> int:
    """The stability pre-flight every run records (`python -m pyperf system show` is the model);
    exit 0 whatever it finds: it only reports."""
    from app.core.machine.preflight import facts_to_dict, read_facts

    facts = facts_to_dict(read_facts())["facts"]
    if args.json:
        print(json.dumps(facts, indent=2, allow_nan=False))
        return EXIT_OK
    print_stability_facts(_console(), facts)
    return EXIT_OK

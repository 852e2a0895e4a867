"""`cryptobench selftest`: known-answer tests from the standards, every backend, also through the app's scheme adapters."""

from __future__ import annotations

import argparse

from app.cli.common import EXIT_FAILED, EXIT_OK
from app.cli.terminal.lines import say

NAME = "selftest"
HELP = "known-answer tests for every backend"
GUIDES = ("docs/measuring.md",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    pass


def run(args: argparse.Namespace) -> int:
    from app.core.selftest import run_selftests

    results = run_selftests()
    for r in results:
        status = "PASS" if r.passed else "FAIL"
        say(f"{status}  {r.backend:13s} {r.kind:12s} {r.name} — {r.source}" + (f": {r.detail}" if r.detail else ""))
    failed = sum(1 for r in results if not r.passed)
    say(f"{len(results) - failed} passed, {failed} failed")
    return EXIT_OK if failed == 0 and results else EXIT_FAILED

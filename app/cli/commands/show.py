"""`cryptobench show`: one stored run, its jobs and their figures."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.cli.common import EXIT_OK, UsageError, open_store, warn_damaged
from app.cli.common import console as _console
from app.cli.terminal.console import escape
from app.cli.terminal.printing import print_per_sample, print_summary

NAME = "show"
HELP = "show a stored run"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_id", metavar="RUN_ID")
    p.add_argument("--store", metavar="PATH", type=Path)
    p.add_argument("--json", action="store_true", help="print the run as results JSON")
    p.add_argument(
        "--per-sample",
        action="store_true",
        help="also print each sample's computation and communication delay (session jobs)",
    )


def run(args: argparse.Namespace) -> int:
    from app.core.results import model as results
    from app.core.results.store import StoreError

    store = open_store(args.store)
    with store:
        try:
            run = store.load_run(args.run_id)
        except StoreError as exc:  # RunNotFound too: its message names the id
            raise UsageError(str(exc)) from None
    warn_damaged(run)
    if args.json:
        sys.stdout.write(results.to_json(run))
        return EXIT_OK
    console = _console()
    env = run.environment
    cpu = env.get("cpu", {})
    console.print(f"run {run.id} · {escape(run.name)} · {run.status} · {run.started} → {run.finished or '-'}")
    console.print(
        escape(
            f"machine: {cpu.get('model')} · {cpu.get('logical_cores')} logical cores · "
            f"{env.get('os', {}).get('pretty_name') or env.get('os', {}).get('platform')}"
        )
    )
    emulation = env.get("link_emulation")
    if any(job.link is not None for job in run.jobs) and isinstance(emulation, dict):
        console.print(
            escape(
                "links: user-space delay line"
                + ("" if emulation.get("netem") else f" (no netem: {emulation.get('netem_reason')})")
            )
        )
    print_summary(console, run)
    if args.per_sample:
        print_per_sample(console, run)
    return EXIT_OK

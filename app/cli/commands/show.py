"""`cryptobench show`: one stored run, its jobs and their figures."""

from __future__ import annotations

import argparse
import sys

from app.cli.common import EXIT_OK, UsageError, add_store_option, open_store, warn_damaged
from app.cli.common import console as _console
from app.cli.terminal.console import escape
from app.core.vocab import LinkEmulation

NAME = "show"
HELP = "show a stored run"
GUIDES = ("docs/command-line.md", "docs/results-format.md")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_id", metavar="RUN_ID", help="a stored run's id, or a unique start of it (cryptobench history)")
    add_store_option(p, "read the run from")
    p.add_argument(
        "--json",
        action="store_true",
        help="print the whole run to stdout as results JSON (every job, sample and statistic; the format of run --json, docs/results-format.md) instead of the summary",
    )
    p.add_argument(
        "--per-sample",
        action="store_true",
        help="also print each sample's computation and communication delay (session jobs)",
    )


def run(args: argparse.Namespace) -> int:
    from app.cli.terminal.printing import print_per_sample, print_summary
    from app.core.results import model as results
    from app.core.store.store import StoreError

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
    env = run.environment_view
    machine = (
        env.cpu_model or "unknown CPU",
        f"{env.logical_cores or 'unknown'} logical cores",
        env.os_name or "unknown OS",
    )
    emulations = {job.link.emulation for job in run.jobs if job.link is not None}
    links = "; ".join(_EMULATION_WORDS.get(e, e) for e in sorted(emulations))
    if console.is_terminal:
        console.print(f"run {run.id} · {escape(run.name)} · {run.status} · {run.started} → {run.finished or '-'}")
        console.print(escape("machine: " + " · ".join(machine)))
        if links:
            console.print(escape(f"links: {links}"))
    else:  # lines led by their kind, as the summary's (its `run` line names the run)
        console.print(f"times | {run.started} | {run.finished or '-'}")
        console.print(escape("machine | " + " | ".join(machine)))
        if links:
            console.print(escape(f"links | {links}"))
    print_summary(console, run)
    if args.per_sample:
        print_per_sample(console, run)
    return EXIT_OK


#: How `show` names each emulation a run's links used.
_EMULATION_WORDS = {
    LinkEmulation.PACKET: "packet path (the kernel's TCP over emulated IP packets)",
    LinkEmulation.DELAY_LINE: "stream relay (each direction's bytes through a delay line; no TCP on the path)",
}

"""The commands over stored runs and results files: `history`, `show` and `report`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from app.cli_common import EXIT_OK, EXIT_USAGE, UsageError, load_run_source, open_store, warn_damaged
from app.cli_common import console as _console
from app.cli_print import escape, print_history, print_per_sample, print_summary
from app.core.vocab import ExportFormat


def cmd_history(args: argparse.Namespace) -> int:
    from app.core.store import StoreError

    store = open_store(args.store)
    with store:
        try:
            runs = store.list_runs()
        except StoreError as exc:
            raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps([r.__dict__ for r in runs], indent=2))
        return EXIT_OK
    if not runs:
        print(f"no runs in {store.path}")
        return EXIT_OK
    print_history(_console(), runs, store.path)
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    from app.core import results
    from app.core.store import StoreError

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
    console.print(escape(f"machine: {cpu.get('model')} · {cpu.get('logical_cores')} logical cores · "
                         f"{env.get('os', {}).get('pretty_name') or env.get('os', {}).get('platform')}"))
    emulation = env.get("link_emulation")
    if any(job.link is not None for job in run.jobs) and isinstance(emulation, dict):
        console.print(escape("links: user-space delay line" + ("" if emulation.get("netem") else
                                                               f" (no netem: {emulation.get('netem_reason')})")))
    print_summary(console, run)
    if args.per_sample:
        print_per_sample(console, run)
    return EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    from app.report.exporters import EXPORTERS, export

    order = (ExportFormat.PDF, ExportFormat.MARKDOWN, ExportFormat.JSON, ExportFormat.CSV)
    outputs = [(name, getattr(args, name)) for name in order if getattr(args, name)]
    if not outputs:
        raise UsageError("nothing to write: give at least one of --pdf FILE, --markdown FILE, --json FILE, --csv FILE")
    from app.cli_exports import DestinationError, check_destinations, write_all

    try:  # every destination before the first is rendered (a PDF takes seconds)
        check_destinations([(f"--{name}", path) for name, path in outputs])
    except DestinationError as exc:
        raise UsageError(str(exc)) from None
    run = load_run_source(args.source, args.store)
    baseline = load_run_source(args.baseline, args.store) if args.baseline else None
    console = _console()

    def writer(name: ExportFormat, path: Path) -> Any:
        def write() -> None:
            with console.status(f"writing {name} {path}…"):
                export(name, run, path, baseline=baseline if EXPORTERS[name].is_report else None,
                       page_size=args.page_size, appendix=args.appendix)
            console.print(f"wrote {escape(str(path))}")
        return write

    # One output failing (a full disk) does not cost the others.
    unwritten = write_all([(path, writer(name, path)) for name, path in outputs],
                          lambda line: print(f"cryptobench: error: {line}", file=sys.stderr))
    return EXIT_USAGE if unwritten else EXIT_OK

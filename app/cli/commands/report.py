"""`cryptobench report`: a report (PDF, Markdown) or an export (JSON, CSV) of a stored run or results file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from app.cli.common import EXIT_OK, EXIT_USAGE, UsageError, add_store_option, load_run_source, stored_movement
from app.cli.common import console as _console
from app.cli.terminal.console import escape
from app.cli.terminal.lines import say
from app.core.vocab import ExportFormat, PageSize

NAME = "report"
HELP = "write a report (PDF, Markdown) or export a stored run or results file"
GUIDES = ("docs/reports.md",)
#: What it prints is an account of the work, whose result is the store and the files it
#: writes: standard output lost to a full disk is said, and does not fail it (`app.cli.main`).
PRINTS_RESULT = False


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "source",
        metavar="RUN_ID_OR_RESULTS_JSON",
        help="a stored run's id (or a unique prefix), or a results JSON file",
    )
    p.add_argument(
        "--pdf",
        metavar="FILE",
        type=Path,
        help="write the report to FILE as a PDF (summary, plots, method, every job's figures)",
    )
    p.add_argument(
        "--markdown",
        metavar="FILE",
        type=Path,
        help="write the report to FILE as Markdown (the PDF's content, as text)",
    )
    p.add_argument(
        "--json", metavar="FILE", type=Path, help="write the run to FILE as results JSON (docs/results-format.md)"
    )
    p.add_argument("--csv", metavar="FILE", type=Path, help="write the run to FILE as CSV, one row per job and metric")
    p.add_argument(
        "--baseline",
        metavar="RUN_ID_OR_RESULTS_JSON",
        help="compare against this run (reports: ratio and 95 %% interval per matching job)",
    )
    p.add_argument(
        "--page-size",
        choices=[size.value for size in PageSize],
        default=PageSize.A4.value,
        help="the PDF's paper size: A4 (the default) or US Letter",
    )
    p.add_argument(
        "--appendix",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="end reports with every statistic of every job (default: on)",
    )
    add_store_option(p, "read RUN_ID and --baseline from (a results JSON file is read directly)")


def run(args: argparse.Namespace) -> int:
    from app.report.exporters import EXPORTERS, export

    order = (ExportFormat.PDF, ExportFormat.MARKDOWN, ExportFormat.JSON, ExportFormat.CSV)
    outputs = [(name, getattr(args, name)) for name in order if getattr(args, name)]
    if not outputs:
        raise UsageError("nothing to write: give at least one of --pdf FILE, --markdown FILE, --json FILE, --csv FILE")
    from app.cli.exports import DestinationError, check_destinations, write_all

    try:  # every destination before the first is rendered (a PDF takes seconds)
        check_destinations([(f"--{name}", path) for name, path in outputs])
    except DestinationError as exc:
        raise UsageError(str(exc)) from None
    run = load_run_source(args.source, args.store)
    baseline = load_run_source(args.baseline, args.store) if args.baseline else None
    # One run a side: its verdicts need how much runs move here, from the store's runs.
    movement = stored_movement(args.store, [baseline], [run]) if baseline is not None else None
    console = _console()

    def writer(name: ExportFormat, path: Path) -> Any:
        def write() -> None:
            with console.status(f"writing {name} {path}…"):
                export(
                    name,
                    run,
                    path,
                    baseline=baseline if EXPORTERS[name].is_report else None,
                    movement=movement if EXPORTERS[name].is_report else None,
                    page_size=args.page_size,
                    appendix=args.appendix,
                )
            console.print(f"wrote {escape(str(path))}")

        return write

    # One output failing (a full disk) does not cost the others.
    unwritten = write_all(
        [(path, writer(name, path)) for name, path in outputs],
        lambda line: say(f"cryptobench: error: {line}", err=True),
    )
    return EXIT_USAGE if unwritten else EXIT_OK

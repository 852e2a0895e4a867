"""`cryptobench gui`: the window (the same as no command), optionally driven to a state and saved."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.cli.common import UsageError, add_store_option
from app.gui.vocab import PlotTab, Theme

NAME = "gui"
HELP = "open the window (the same as no command)"
GUIDES = ("docs/window.md",)
#: What it prints is an account of the work, whose result is the store and the files it
#: writes: standard output lost to a full disk is said, and does not fail it (`app.cli.main`).
PRINTS_RESULT = False


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--quit-after",
        metavar="SECONDS",
        type=float,
        help="close the window after this many seconds (smoke tests, startup budgets)",
    )
    p.add_argument(
        "--startup-report",
        metavar="FILE",
        type=Path,
        help="with --quit-after: write launch time, first paint and peak memory as JSON",
    )
    p.add_argument("--profile", metavar="NAME|FILE", help="open this preset or profile file")
    p.add_argument("--run", action="store_true", help="with --profile: run it at once")
    p.add_argument(
        "--screenshot",
        metavar="FILE",
        type=Path,
        help="save a PNG of the window (after the run with --run), then quit; settings and "
        "results go to a temporary folder",
    )
    # Names as the window labels them work too ("Samples", "Dark"): compared in lower case.
    p.add_argument(
        "--tab", type=str.lower, choices=[tab.value for tab in PlotTab], help="the plot tab the window opens on"
    )
    p.add_argument(
        "--theme",
        type=str.lower,
        choices=[theme.value for theme in Theme],
        help="the window's colours: light, dark, or the desktop's (system)",
    )
    p.add_argument("--size", metavar="WxH", help="window size in pixels, e.g. 1024x700")
    add_store_option(p, "show in History and Trend and record the window's runs in, for this session")


def run(args: argparse.Namespace) -> int:
    if args.quit_after is not None and not args.quit_after > 0:
        raise UsageError(f"--quit-after: must be a positive number of seconds, not {args.quit_after}")
    if args.startup_report is not None and args.quit_after is None:
        raise UsageError("--startup-report: needs --quit-after (the report is written when the window closes)")
    if args.run and args.profile is None:
        raise UsageError("--run: needs --profile (the preset or file to run)")
    size = None
    if args.size is not None:
        width, _, height = args.size.lower().partition("x")
        if not (width.isdigit() and height.isdigit() and 320 <= int(width) <= 10000 and 240 <= int(height) <= 10000):
            raise UsageError(
                f"--size: expected WIDTHxHEIGHT in pixels (320x240 or more), e.g. 1024x700, not {args.size!r}"
            )
        size = (int(width), int(height))
    from app.gui.preflight import check

    problem = check()  # before Qt is imported: no display or a missing library aborts Qt
    if problem is not None:
        raise UsageError(problem.message)
    from app.gui.app import main as gui_main
    from app.gui.screenshot import Plan

    plan = Plan(args.profile, args.run, args.screenshot, args.tab, args.theme, size)
    return gui_main(
        sys.argv[:1],
        quit_after=args.quit_after,
        startup_report=args.startup_report,
        plan=plan if plan != Plan() else None,
        store=args.store,
    )

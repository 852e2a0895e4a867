"""`cryptobench store`: check the results store, or move a broken one aside."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from app.cli.common import EXIT_FAILED, EXIT_OK, MOVE_ASIDE_HINT, UsageError, add_store_option

NAME = "store"
HELP = "check the results store, or move a broken one aside"
GUIDES = ("docs/command-line.md",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    add_store_option(p, "check (and, with --move-aside, to rename)")
    p.add_argument(
        "--move-aside",
        action="store_true",
        help="rename a corrupted or foreign store file to NAME.broken-DATE (kept, not deleted)",
    )


def run(args: argparse.Namespace) -> int:
    from app.core.results.store import BrokenStoreError, Store, StoreError, default_store_path, move_aside

    path = args.store or default_store_path()
    runs: list[Any] = []
    damaged: list[str] = []
    try:
        with Store(path) as store:
            try:
                problems = store.integrity_problems()
                runs = store.list_runs()
                if not problems:  # rows SQLite finds sound but that do not read back as results
                    damaged = store.damaged_rows()
                problem = f"{path}: SQLite integrity check failed: {'; '.join(problems[:5])}" if problems else None
            except StoreError as exc:  # it opened, so not busy: pages SQLite cannot read, a damaged file
                problem = str(exc)
    except BrokenStoreError as exc:
        problem = str(exc)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    if problem is None and damaged:
        more = f"; and {len(damaged) - 3} more" if len(damaged) > 3 else ""
        print(
            f"cryptobench: error: {path}: {len(damaged)} damaged row(s): {'; '.join(damaged[:3])}{more}; the "
            "other jobs of their runs stay readable (`cryptobench show RUN` marks the damaged ones)",
            file=sys.stderr,
        )
        if not args.move_aside:
            return EXIT_FAILED
        problem = f"{path}: {len(damaged)} damaged row(s)"
    elif problem is None:
        if args.move_aside:
            raise UsageError(f"{path}: the store is sound ({len(runs)} runs); nothing was moved")
        print(f"{path}: sound, {len(runs)} runs")
        return EXIT_OK
    if not damaged:
        print(f"cryptobench: error: {problem}{MOVE_ASIDE_HINT}", file=sys.stderr)
    if not args.move_aside:
        return EXIT_FAILED
    try:
        moved = move_aside(path)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    print(f"moved {path} to {moved}; the next run starts a new store at {path}")
    return EXIT_OK

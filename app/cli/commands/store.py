"""`cryptobench store`: check the results store, move a broken one aside, or copy its runs
into another store (`store copy --to URL`: a local history into a shared one)."""

from __future__ import annotations

import argparse
from typing import Any

from app.cli.common import EXIT_FAILED, EXIT_OK, MOVE_ASIDE_HINT, UsageError, add_store_option, open_store
from app.cli.terminal.lines import say

NAME = "store"
HELP = "check the results store, move a broken one aside, or copy its runs to another store"
GUIDES = ("docs/command-line.md", "docs/shared-store.md")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "action",
        nargs="?",
        choices=("check", "copy"),
        default="check",
        help="check (the default): say whether the store is sound; copy: copy every run to --to",
    )
    add_store_option(p, "check, move aside or copy from")
    p.add_argument(
        "--move-aside",
        action="store_true",
        help="rename a corrupted or foreign store file to NAME.broken-DATE (kept, not deleted)",
    )
    p.add_argument(
        "--to",
        metavar="PATH_OR_URL",
        help="with copy: the store to copy into (postgresql://... or an SQLite file); runs already "
        "there (same id, or same content) are skipped, so a copy can be run again",
    )


def run(args: argparse.Namespace) -> int:
    if args.action == "copy":
        return _copy(args)
    if args.to is not None:
        raise UsageError("--to goes with `store copy`")
    return _check(args)


def _copy(args: argparse.Namespace) -> int:
    from app.core.escaping import escape_control
    from app.core.store.copying import copy_runs
    from app.core.store.store import StoreError

    if args.to is None:
        raise UsageError("store copy needs --to PATH_OR_URL, the store to copy the runs into")
    if args.move_aside:
        raise UsageError("--move-aside goes with `store` (check), not with `store copy`")
    with open_store(args.store) as source, open_store(args.to) as target:
        if source.where == target.where:
            raise UsageError(f"{source.where}: --store and --to name the same store")

        def said(run_id: str, what: str) -> None:
            say(f"{escape_control(run_id)}: {escape_control(what)}")

        try:
            outcome = copy_runs(source, target, said)
        except StoreError as exc:
            raise UsageError(f"{exc} (runs copied before this stay; running the copy again skips them)") from None
        say(
            f"copied {len(outcome.copied)} run(s) from {source.where} to {target.where}; "
            f"{len(outcome.present)} already there, {len(outcome.skipped)} left behind"
        )
    return EXIT_FAILED if outcome.skipped else EXIT_OK


def _check(args: argparse.Namespace) -> int:
    from app.core.store.store import BrokenStoreError, Store, StoreError, move_aside
    from app.core.store.target import store_target

    target = store_target(args.store)
    path = target.shown
    if args.move_aside and target.is_postgres:
        raise UsageError(f"{path}: --move-aside renames an SQLite file; a PostgreSQL store is never moved")
    runs: list[Any] = []
    damaged: list[str] = []
    security = None
    try:
        with Store(target) as store:
            security = store.security
            try:
                problems = store.integrity_problems()
                runs = store.list_runs()
                if not problems:  # rows the database finds sound but that do not read back as results
                    damaged = store.damaged_rows()
                problem = f"{path}: SQLite integrity check failed: {'; '.join(problems[:5])}" if problems else None
            except StoreError as exc:  # it opened, so not busy: pages SQLite cannot read, a damaged file
                problem = str(exc)
    except BrokenStoreError as exc:
        if target.is_postgres:
            raise UsageError(str(exc)) from None
        problem = str(exc)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    if problem is None and damaged:
        more = f"; and {len(damaged) - 3} more" if len(damaged) > 3 else ""
        say(
            f"cryptobench: error: {path}: {len(damaged)} damaged row(s): {'; '.join(damaged[:3])}{more}; the "
            "other jobs of their runs stay readable (`cryptobench show RUN` marks the damaged ones)",
            err=True,
        )
        if not args.move_aside or target.path is None:
            return EXIT_FAILED
        problem = f"{path}: {len(damaged)} damaged row(s)"
    elif problem is None:
        if args.move_aside:
            raise UsageError(f"{path}: the store is sound ({len(runs)} runs); nothing was moved")
        say(f"{path}: sound, {len(runs)} runs" + (f" ({security})" if security else ""))
        return EXIT_OK
    if not damaged:
        say(f"cryptobench: error: {problem}{MOVE_ASIDE_HINT}", err=True)
    if not args.move_aside or target.path is None:
        return EXIT_FAILED
    try:
        moved = move_aside(target.path)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    say(f"moved {path} to {moved}; the next run starts a new store at {path}")
    return EXIT_OK

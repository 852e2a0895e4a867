"""`cryptobench delete`: remove stored runs, as the window's History does."""

from __future__ import annotations

import argparse

from app.cli.common import EXIT_OK, UsageError, add_store_option, open_store
from app.cli.terminal.lines import say

NAME = "delete"
HELP = "delete stored runs (their jobs too); this cannot be undone"
GUIDES = ("docs/command-line.md",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "run_ids", metavar="RUN_ID", nargs="+", help="a run's id, or a unique prefix of it (matched literally)"
    )
    add_store_option(p, "delete the runs from")


def run(args: argparse.Namespace) -> int:
    from app.core.escaping import escape_control
    from app.core.store.store import StoreError

    store = open_store(args.store)
    with store:
        # Every id is resolved before anything is deleted: a typo in the third id must not
        # leave the first two deleted and the command failed.
        try:
            ids = list(dict.fromkeys(store.resolve_run_id(text) for text in args.run_ids))
            summaries = {summary.id: summary for summary in store.list_runs()}
        except StoreError as exc:  # RunNotFound, AmbiguousRunId: the message names the id
            raise UsageError(str(exc)) from None
        for run_id in ids:
            try:
                deleted = store.delete_run(run_id)  # the same call as the window's History
            except StoreError as exc:
                raise UsageError(str(exc)) from None
            summary = summaries.get(run_id)
            if not deleted:  # removed meanwhile by another process: nothing left to delete
                say(f"run {escape_control(run_id)} was already gone from {store.where}")
                continue
            what = f" “{escape_control(summary.name)}” ({summary.jobs} jobs)" if summary is not None else ""
            say(f"deleted run {escape_control(run_id)}{what} from {store.where}")
    return EXIT_OK

"""`cryptobench delete`: remove stored runs, as the window's History does."""

from __future__ import annotations

import argparse
from typing import Any

from app.cli.common import EXIT_OK, UsageError, add_store_option, open_store

NAME = "delete"
HELP = "delete stored runs (their jobs too); this cannot be undone"
GUIDES = ("docs/command-line.md",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "run_ids", metavar="RUN_ID", nargs="+", help="a run's whole id (cryptobench history); never a part of it"
    )
    add_store_option(p, "delete the runs from")


def run(args: argparse.Namespace) -> int:
    from app.core.escaping import escape_control
    from app.core.store.store import StoreError

    store = open_store(args.store)
    with store:
        # Every id is checked before anything is deleted: a typo in the third id must not
        # leave the first two deleted and the command failed. Whole ids only: "" and "2026"
        # are the start of every id, and a delete must never pick a run for the user.
        try:
            for text in args.run_ids:
                if not store.has_run(text):
                    raise UsageError(_not_a_run(store, text))
            ids = list(dict.fromkeys(args.run_ids))
            summaries = {summary.id: summary for summary in store.list_runs()}
        except StoreError as exc:
            raise UsageError(str(exc)) from None
        for run_id in ids:
            try:
                deleted = store.delete_run(run_id)  # the same call as the window's History
            except StoreError as exc:
                raise UsageError(str(exc)) from None
            summary = summaries.get(run_id)
            if not deleted:  # removed meanwhile by another process: nothing left to delete
                print(f"run {escape_control(run_id)} was already gone from {store.where}")
                continue
            what = f" “{escape_control(summary.name)}” ({summary.jobs} jobs)" if summary is not None else ""
            print(f"deleted run {escape_control(run_id)}{what} from {store.where}")
    return EXIT_OK


def _not_a_run(store: Any, text: str) -> str:
    """Why `text` names no run to delete, and the whole id when it is the start of exactly one."""
    from app.core.escaping import escape_control
    from app.core.store.store import AmbiguousRunId, RunNotFound

    shown = escape_control(repr(text))
    if not text.strip():
        return f"{shown} is not a run id; give the whole id of each run to delete (cryptobench history)"
    try:
        whole = store.resolve_run_id(text)
    except AmbiguousRunId as exc:
        return f"no run with id {shown} in {store.where}; delete takes a whole id ({escape_control(str(exc))})"
    except RunNotFound:
        return f"no run with id {shown} in {store.where}"
    return f"no run with id {shown} in {store.where}; delete takes a whole id (did you mean {whole}?)"

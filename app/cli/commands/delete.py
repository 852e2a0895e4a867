"""`cryptobench delete`: remove stored runs, as the window's History does.

On a terminal it names the runs and asks first (History asks too); `--yes` deletes
without asking, for scripts. Anywhere else without `--yes` (a pipe, CI) it asks nothing
and deletes nothing: one line says to add `--yes`, exit code 2, never a wait for an
answer nobody can give."""

from __future__ import annotations

import argparse
from typing import Any

from app.cli.common import EXIT_OK, UsageError, add_store_option, open_store
from app.cli.terminal.lines import say

NAME = "delete"
HELP = "delete stored runs (their jobs too); this cannot be undone"
GUIDES = ("docs/command-line.md",)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "run_ids", metavar="RUN_ID", nargs="+", help="a run's whole id (cryptobench history); never a part of it"
    )
    p.add_argument(
        "--yes",
        action="store_true",
        help="delete without asking first (for scripts: off a terminal, delete refuses to run without it)",
    )
    add_store_option(p, "delete the runs from")


def run(args: argparse.Namespace) -> int:
    from app.cli.terminal.asking import can_ask, confirm
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

        def what(run_id: str) -> str:
            summary = summaries.get(run_id)
            shown = f" “{summary.name}” ({summary.jobs} jobs)" if summary is not None else ""
            return escape_control(f"{run_id}{shown}")

        # A read-only store says so at the first delete, before anyone is asked anything.
        if not args.yes and not store.read_only:
            runs = f"{len(ids)} runs" if len(ids) > 1 else "run"
            if not can_ask():
                raise UsageError(
                    f"delete: not on a terminal, so nothing was asked and nothing deleted; add --yes to delete "
                    f"the {runs} without asking"
                )
            listed = [f"  {what(run_id)}" for run_id in ids]
            if not confirm([f"to delete from {store.where}:", *listed], f"Delete the {runs}? This cannot be undone."):
                say("nothing deleted")
                return EXIT_OK
        for run_id in ids:
            try:
                deleted = store.delete_run(run_id)  # the same call as the window's History
            except StoreError as exc:
                raise UsageError(str(exc)) from None
            if not deleted:  # removed meanwhile by another process: nothing left to delete
                say(f"run {escape_control(run_id)} was already gone from {store.where}")
                continue
            say(f"deleted run {what(run_id)} from {store.where}")
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

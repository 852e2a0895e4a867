"""Runs measured elsewhere (a laptop, a server, a Raspberry Pi) into the local history.

A results file is input like any other (docs/ARCHITECTURE.md, "Trust boundaries"):
`results.load_results_file` checks every field the app reads, and this module adds
what storing needs on top: a run id of a sane shape, and job ids that belong to the
run (`RUN/INDEX`, each once), so a file can never write over another run's rows.
The run then goes into the store in one transaction (`Store.add_run`): all of it or
nothing.

A file already imported is found and skipped, never added twice: either its run id
is stored with the same content, or its content is stored under another id (the same
run exported twice and one file's id edited). The same id with other content is a
conflict (`RunIdTaken`), refused: neither run is the obvious one to keep.
"""

from __future__ import annotations

import enum
import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from app.core.results.model import ResultsFileError, RunResult, load_results_file
from app.core.store.store import RunNotFound, Store, StoreError
from app.core.vocab import RunStatus

__all__ = ["Duplicate", "ImportOutcome", "RunIdTaken", "content_digest", "duplicate_of", "import_results"]

#: A run id as this app writes them ("20261124-012254-aa0d69"), with room for other
#: tools' ids: letters, digits and . _ : - , at most 100 characters, no spaces or
#: slashes (a job id is RUN/INDEX).
RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,99}")


class RunIdTaken(StoreError):
    """The store holds another run (other content) under the imported run's id."""


class Duplicate(enum.StrEnum):
    """How an imported file was found to be in the store already."""

    SAME_ID = "same run id"
    SAME_CONTENT = "same content"


@dataclass(frozen=True)
class ImportOutcome:
    path: Path
    run: RunResult
    #: None: the run was added. Otherwise how it was found in the store, as `existing_id`.
    duplicate: Duplicate | None = None
    existing_id: str | None = None

    @property
    def added(self) -> bool:
        return self.duplicate is None

    @property
    def machine(self) -> str | None:
        return self.run.environment_view.hostname


def content_digest(run: RunResult) -> str:
    """A digest of what was measured: times, environment, profile and every job, leaving
    out the ids (and the run's status, which the store may turn to "interrupted")."""
    data = run.to_dict()
    data["run"].pop("id")
    data["run"].pop("status")
    for job in data["jobs"]:
        job.pop("id")
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _check_ids(run: RunResult, path: Path) -> None:
    if not RUN_ID_PATTERN.fullmatch(run.id):
        shown = json.dumps(run.id)[:60]
        raise ResultsFileError(
            f"{path}: run.id: {shown} is not a run id (letters, digits and . _ : -, at most 100 characters)"
        )
    seen: set[int] = set()
    for i, job in enumerate(run.jobs):
        if job.index in seen:
            raise ResultsFileError(f"{path}: jobs[{i}].index: {job.index} appears twice")
        seen.add(job.index)
        if job.id != f"{run.id}/{job.index}":
            raise ResultsFileError(
                f"{path}: jobs[{i}].id: {json.dumps(job.id)[:60]} is not the run's id and "
                f"the job's index ({run.id}/{job.index})"
            )


def duplicate_of(store: Store, run: RunResult) -> tuple[Duplicate, str] | None:
    """The stored run this one already is, if any; RunIdTaken for the same id with other content."""
    digest = content_digest(run)
    try:
        stored = store.load_run(run.id) if run.id in _ids_like(store, run.id) else None
    except RunNotFound:  # deleted meanwhile
        stored = None
    if stored is not None:
        if content_digest(stored) == digest:
            return Duplicate.SAME_ID, stored.id
        raise RunIdTaken(
            f"{store.where}: another run with id {run.id} is already stored (different "
            "content); delete it first to import this one"
        )
    # Only runs that started at the same moment can hold the same content.
    for summary in store.list_runs():
        if summary.started == run.started and summary.id != run.id:
            other = store.load_run(summary.id)
            if content_digest(other) == digest:
                return Duplicate.SAME_CONTENT, other.id
    return None


def _ids_like(store: Store, run_id: str) -> set[str]:
    try:
        return {store.resolve_run_id(run_id)}
    except RunNotFound:  # AmbiguousRunId too: several ids start with it, none is it
        return set()


def import_results(store: Store, path: Path) -> ImportOutcome:
    """Check the results JSON at `path` and add its run to `store` (see the module docstring).

    Raises ResultsFileError (naming the file and field) for a file that is not valid
    results, RunIdTaken for an id stored with other content, StoreError when the
    store cannot be read or written; nothing is written in any of these cases.
    """
    path = Path(path)
    run = load_results_file(path)
    _check_ids(run, path)
    if run.status == RunStatus.RUNNING:  # exported mid-run: nothing runs it here
        run.status = RunStatus.INTERRUPTED
    found = duplicate_of(store, run)
    if found is not None:
        return ImportOutcome(path, run, found[0], found[1])
    store.add_run(run)
    return ImportOutcome(path, run)

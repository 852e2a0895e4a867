"""Runs measured elsewhere (a laptop, a server, a Raspberry Pi) into the local history.

A results file is input like any other (docs/ARCHITECTURE.md, "Trust boundaries"):
`results.load_results_file` checks every field the app reads, and this module adds
what storing needs on top: a run id of a sane shape, and job ids that belong to the
run (`RUN/INDEX`, each once), so a file can never write over another run's rows.
The run then goes into the store in one transaction (`Store.add_run`): all of it or
nothing.

A file already imported is found and skipped, never added twice: either its run id
is stored with the same content, or its content is stored under another id (the same
run exported twice and one file's id edited). Both are looked up by index (the id, and
the instant the run started), never by listing the store: importing into a store of
10,000 runs takes as long as into an empty one.

The same id with other content is a conflict (`RunIdTaken`), refused: neither run is the
obvious one to keep. Except one case, which is not a conflict but the reason the file
exists: a run whose store failed mid-run (a server stopped, a disk full) is kept whole in
`unstored/RUN_ID.json`, while the store holds its start and the jobs stored before the
failure. When the stored run is such a part of the file's (the same run, every stored job
identical to the file's, and no process writing it any more), the import completes it,
in one transaction (`Store.add_run(replacing=True)`).
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

__all__ = [
    "Duplicate",
    "Found",
    "ImportOutcome",
    "RunIdTaken",
    "content_digest",
    "duplicate_of",
    "import_results",
    "look_up",
]

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
    #: The stored part this run completed (a run whose store failed mid-run), else None.
    completed: RunResult | None = None

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


@dataclass(frozen=True)
class Found:
    """How a run is in a store already: the same (`duplicate`, as `existing_id`), or in part
    (`partial`: the stored run this one completes)."""

    duplicate: Duplicate | None = None
    existing_id: str | None = None
    partial: RunResult | None = None


def _header(run: RunResult) -> dict[str, object]:
    """What was measured of a run apart from its jobs, its status and when it ended."""
    data = run.to_dict()
    data.pop("jobs")
    for key in ("id", "status", "finished"):
        data["run"].pop(key, None)
    return data


def part_of(stored: RunResult, run: RunResult) -> bool:
    """Whether `stored` is the start of `run`: the same run (times, environment, profile),
    nothing damaged, and each of its jobs one of `run`'s, identical. It may say another
    status and end (its writer lost the store before it could finish it)."""
    if stored.id != run.id or stored.damaged or _header(stored) != _header(run):
        return False
    jobs = {job.id: job.to_dict() for job in run.jobs}
    return all(jobs.get(job.id) == job.to_dict() for job in stored.jobs)


def look_up(store: Store, run: RunResult) -> Found | None:
    """How `run` is in `store` already, if at all. RunIdTaken for its id stored with other
    content, and for a part of it still being written. By index: the id, and the runs that
    started at the same instant (only they can hold the same content)."""
    digest = content_digest(run)
    try:
        stored = store.load_run(run.id) if store.has_run(run.id) else None
    except RunNotFound:  # deleted meanwhile
        stored = None
    if stored is not None:
        if content_digest(stored) == digest:
            return Found(Duplicate.SAME_ID, stored.id)
        if part_of(stored, run):
            # A file that says how the run ended was written once its process stopped writing
            # the store (finished, or gave up on it): only a lock held now says otherwise. The
            # lease its writer left lasts a while after a server restart, and must not make
            # the recovery wait for it.
            ended = run.status in (RunStatus.FINISHED, RunStatus.FAILED, RunStatus.CANCELLED)
            if stored.status == RunStatus.RUNNING and (not ended or store.run_locked(run.id)):
                raise RunIdTaken(
                    f"{store.where}: run {run.id} is still being written there (its process holds it); "
                    "import this file once that run has stopped"
                )
            if len(stored.jobs) < len(run.jobs) or stored.status == RunStatus.INTERRUPTED:
                return Found(partial=stored)  # fewer jobs, or every job but never told how it ended
            return Found(Duplicate.SAME_ID, stored.id)
        if part_of(run, stored):  # the file is an earlier part of the stored run (exported mid-run)
            return Found(Duplicate.SAME_ID, stored.id)
        raise RunIdTaken(
            f"{store.where}: another run with id {run.id} is already stored (different "
            "content); delete it first to import this one"
        )
    for other_id in store.runs_started_at(run.started):
        if other_id == run.id:
            continue
        try:
            other = store.load_run(other_id)
        except RunNotFound:
            continue
        if content_digest(other) == digest:
            return Found(Duplicate.SAME_CONTENT, other.id)
    return None


def duplicate_of(store: Store, run: RunResult) -> tuple[Duplicate, str] | None:
    """The stored run this one already is, if any; RunIdTaken for the same id with other
    content (a stored part of this run counts as other content here: `look_up` tells it)."""
    found = look_up(store, run)
    if found is None:
        return None
    if found.duplicate is None or found.existing_id is None:
        raise RunIdTaken(f"{store.where}: run {run.id} is stored in part; `cryptobench import` its file completes it")
    return found.duplicate, found.existing_id


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
    found = look_up(store, run)
    if found is not None and found.partial is not None:
        store.add_run(run, replacing=True)
        return ImportOutcome(path, run, completed=found.partial)
    if found is not None:
        return ImportOutcome(path, run, found.duplicate, found.existing_id)
    store.add_run(run)
    return ImportOutcome(path, run)

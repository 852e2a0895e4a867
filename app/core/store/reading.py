"""Reading the store: the listing, a run by id, a job's trend, the damaged rows.

The queries are the same text on SQLite and PostgreSQL; every row read back is checked
(`store_rows`) as a results file is, since a shared store is input from other machines:
a damaged row is named, never trusted, and a job row must belong to the run it is read
with. A run and its jobs are read in one transaction (`_snapshot`), so a run deleted or
still being written meanwhile is read whole or not at all, never as a finished run with
none of its jobs. The listing and a job's trend read the columns kept beside each row's
JSON (store/columns.py), never the JSON itself. `Store` (store.py) keeps the connection,
the transactions and the writes; this mixin only reads through them.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError

from app.core.records.recorded import RecordedProfile
from app.core.results.check import check_environment, check_profile
from app.core.results.check_fields import check_values
from app.core.results.errors import ResultsDataError
from app.core.results.model import RunResult
from app.core.results.plausible import parse_time, time_problem
from app.core.store import backends as store_backends
from app.core.store.columns import (
    Figure,
    FigureDamage,
    as_utc,
    instant,
    job_figures,
    job_identity,
    read_brief,
    read_figures,
    run_brief,
)
from app.core.store.errors import AmbiguousRunId, RunNotFound, StoreError
from app.core.store.rows import (
    DamagedRow,
    decode_block,
    placeholder_job,
    read_job_of,
    row_name,
    run_time,
)
from app.core.vocab import JobStatus


@dataclass(frozen=True)
class RunSummary:
    id: str
    name: str
    started: str
    finished: str | None
    status: str
    host: str | None
    jobs: int
    ok_jobs: int


def _run_marks(name: Any, profile: Any) -> tuple[str, ...]:
    """A stored run's marks from its name and the profile column's `reduced` and `overrides`;
    anything malformed (a damaged row) reads as no mark of that kind."""
    try:
        decoded = json.loads(profile) if isinstance(profile, str | bytes) else None
    except (ValueError, RecursionError):
        decoded = None
    fields = decoded if isinstance(decoded, dict) else {}
    marks = {
        "name": name if isinstance(name, str) else "",
        "reduced": fields.get("reduced") is True,
        "overrides": fields.get("overrides"),
    }
    return RecordedProfile.from_dict(marks).marks


class StoredJob(NamedTuple):
    """One stored job's figures beside what its run says about where it ran (`Store.jobs_matching`):
    what a trend reads, from the columns kept beside the job's JSON (store/columns.py). A
    tuple: a trend makes one per stored run."""

    run_id: str
    run_started: str
    #: The run's environment as far as a trend reads it (machine, CPU, OS, Python, library
    #: versions), in the environment's own shape; rows of one environment share one dict.
    environment: dict[str, Any]
    job_id: str
    job_index: int
    status: str
    backend: str
    mode: str
    #: Each metric's n, median and 95 % interval.
    metrics: dict[str, Figure]
    #: What sets the run apart from a full run of its profile ("reduced", "--samples 3"):
    #: a trend marks such points (`RecordedProfile.marks`).
    run_marks: tuple[str, ...] = ()


class StoreReading:
    """The reading half of `Store`; the other half supplies these."""

    _db: Connection

    @property
    def where(self) -> str:
        raise NotImplementedError

    def _reading(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def _snapshot(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    @property
    def _postgres(self) -> bool:
        raise NotImplementedError

    def _status(self, run_id: str, status: str) -> str:
        raise NotImplementedError

    def _problem(self, exc: BaseException, action: str) -> str:
        raise NotImplementedError

    # --- reading -----------------------------------------------------------------

    def list_runs(self, limit: int | None = None) -> list[RunSummary]:
        """The stored runs, the latest start first (by the instant, whatever offset each time
        was written with; runs without a readable time last)."""
        # Each run's job counts from the index of (run_id, status), one probe a run, both counts
        # in one text ("6 5"): a join to the counts grouped over every job cost twice as much.
        query = (
            "SELECT r.id, r.name, r.started, r.finished, r.status, r.host, (SELECT COUNT(*) || ' ' || "
            "SUM(CASE WHEN j.status = :ok THEN 1 ELSE 0 END) FROM jobs j WHERE j.run_id = r.id) "
            "FROM runs r ORDER BY r.started_at DESC NULLS LAST, r.id DESC"
        )
        if limit is not None:
            query += f" LIMIT {int(limit)}"
        with self._reading():
            rows = self._db.execute(text(query), {"ok": JobStatus.OK}).fetchall()
            statuses = [self._status(row[0], row[4]) for row in rows]
        # A time that is not one (naive, year 9999, not text) reads as unknown: it stopped the
        # window, whose presets subtract and whose History converts them (`damaged_rows` names it).
        found = []
        for row, status in zip(rows, statuses, strict=True):
            jobs, _, ok = (row[6] or "0 0").partition(" ")
            found.append(
                RunSummary(
                    row[0],
                    row[1],
                    run_time(row[2]) or "",
                    run_time(row[3]),
                    status,
                    row[5],
                    jobs=int(jobs),
                    ok_jobs=int(ok or 0),
                )
            )
        return found

    def resolve_run_id(self, prefix: str) -> str:
        """A full run id from a unique prefix; RunNotFound (AmbiguousRunId for several). An
        empty or blank prefix matches nothing: it is the start of every id."""
        if not prefix.strip():
            raise RunNotFound(f"no run with id {prefix!r} in {self.where} (give a run's id)")
        if self.has_run(prefix):  # the id itself, by its index
            return prefix
        # A literal prefix: LIKE would take "%" and "_" as wildcards (and ignore case).
        with self._reading():
            rows = [
                str(r[0])
                for r in self._db.execute(
                    text("SELECT id FROM runs WHERE substr(id, 1, :n) = :p"), {"n": len(prefix), "p": prefix}
                )
            ]
        if prefix in rows:
            return prefix
        if not rows:
            raise RunNotFound(f"no run with id {prefix!r} in {self.where}")
        if len(rows) > 1:
            raise AmbiguousRunId(f"run id prefix {prefix!r} is ambiguous ({len(rows)} runs match)")
        return rows[0]

    def has_run(self, run_id: str) -> bool:
        """Whether a run has exactly this id (the primary key's index; never a prefix)."""
        if not run_id:
            return False
        with self._reading():
            return self._db.execute(text("SELECT 1 FROM runs WHERE id = :id"), {"id": run_id}).first() is not None

    def runs_started_at(self, started: str) -> list[str]:
        """The ids of the runs that started at the instant `started` names (indexed): only
        they can hold the same content as a run that started then (`importing.duplicate_of`)."""
        moment = instant(started, postgres=self._postgres)
        if moment is None:
            return []
        with self._reading():
            rows = self._db.execute(text("SELECT id FROM runs WHERE started_at = :at ORDER BY id"), {"at": moment})
            return [str(row[0]) for row in rows]

    def load_run(self, run_id: str) -> RunResult:
        """The run with every job that reads back intact. A damaged row (cut short, edited,
        wrong types, another run's job) becomes a failed placeholder job whose error names the
        damage, and a line in `RunResult.damaged`: one bad row must not hide the rest of the run.
        The run and its jobs are read as one moment of the store (`_snapshot`).
        RunNotFound for an unknown id, StoreError when the store cannot be read."""
        run_id = self.resolve_run_id(run_id)
        try:
            with self._snapshot():
                return self._load_run(run_id)
        except DBAPIError as exc:  # a page SQLite cannot read (`cryptobench store` checks the file), a server gone
            cause = store_backends.cause_of(exc)
            if isinstance(cause, sqlite3.Error):
                raise StoreError(f"{self.where}: cannot read run {run_id}: {cause}") from None
            raise StoreError(f"{self._problem(cause, 'reading')} (run {run_id})") from None

    def _load_run(self, run_id: str) -> RunResult:
        row = self._db.execute(
            text("SELECT id, started, finished, status, environment, profile, name FROM runs WHERE id = :id"),
            {"id": run_id},
        ).fetchone()
        if row is None:  # deleted (by another window or process) since its id was resolved
            raise RunNotFound(f"no run with id {run_id!r} in {self.where}")
        damaged: list[str] = []
        times = {}
        for column, value in (("started", row[1]), ("finished", row[2])):
            times[column] = run_time(value)
            problem = time_problem(value) if value is not None else None
            if problem is not None:
                damaged.append(f"run record: {column}: {problem}")
        blocks: dict[str, dict[str, Any]] = {}
        for column, text_, check in (("environment", row[4], check_environment), ("profile", row[5], check_profile)):
            try:
                blocks[column] = decode_block(text_, column, check)
            except DamagedRow as exc:
                blocks[column] = {"name": str(row[6])} if column == "profile" else {}
                damaged.append(f"run record: {exc}")
        jobs = []
        for job_id, idx, _status, result in self._db.execute(
            text("SELECT id, idx, status, result FROM jobs WHERE run_id = :id ORDER BY idx"), {"id": run_id}
        ):
            try:
                jobs.append(read_job_of(result, run_id, job_id, idx))
            except DamagedRow as exc:
                # Named as this run's job, whatever id the row claims: a placeholder is never
                # stored (`store copy` leaves a damaged run behind), and must not pass for another run's.
                own = job_id if isinstance(job_id, str) and job_id == f"{run_id}/{idx}" else f"{run_id}/{idx}"
                jobs.append(placeholder_job(own, idx, result, str(exc)))
                damaged.append(f"{row_name(job_id, idx)}: {exc}")
        return RunResult(
            id=row[0],
            started=times["started"] or "",
            finished=times["finished"],
            status=self._status(row[0], row[3]),
            environment=blocks["environment"],
            profile=blocks["profile"],
            jobs=jobs,
            damaged=damaged,
        )

    def jobs_matching(self, identity: str) -> list[StoredJob]:
        """Every stored job whose identity (`columns.identity_text` of its `match_key`) is
        `identity`, the runs in the order they started (by the instant; runs without a
        readable time first), then by job index. Read from the indexed columns beside each
        row (store/columns.py), never from a job's JSON: a trend over 10,000 runs reads in a
        fraction of a second (benchmarks/README.md, "A team's store at scale"). A row whose
        columns do not read back, or that is not its run's job (`RUN/INDEX`), is left out;
        a run whose brief does not read back gives an empty environment (`damaged_rows`
        names both)."""
        query = (
            "SELECT r.id, r.started, r.brief, r.name, j.id, j.idx, j.status, j.backend, j.mode, j.figures, "
            "r.started_at FROM jobs j JOIN runs r ON r.id = j.run_id WHERE j.identity = :identity"
        )
        with self._reading():
            rows = list(self._db.execute(text(query), {"identity": identity}).fetchall())
        # Sorted here, not by the database: its sort carried every row's brief along (a fifth
        # of SQLite's time). The instant's type is one per database (text or datetime).
        rows.sort(key=_trend_order)
        found: list[StoredJob] = []
        runs: dict[tuple[Any, Any], tuple[dict[str, Any], tuple[str, ...]]] = {}
        for run_id, started, brief, name, job_id, idx, status, backend, mode, figures, _ in rows:
            if type(idx) is not int or job_id != f"{run_id}/{idx}" or type(status) is not str:
                continue
            try:
                metrics = read_figures(figures)
            except FigureDamage:
                continue
            known = runs.get((brief, name))
            if known is None:  # runs of one machine and profile share a brief: read it once
                known = runs[(brief, name)] = _read_brief(brief, name)
            found.append(
                StoredJob(
                    run_id,
                    started if parse_time(started) is not None else "",  # `run_time`, inlined
                    known[0],
                    job_id,
                    idx,
                    status,
                    backend if type(backend) is str else "",
                    mode if type(mode) is str else "",
                    metrics,
                    known[1],
                )
            )
        return found

    def damaged_rows(self) -> list[str]:
        """Rows the database finds sound but that do not read back as results (a job row cut
        short, edited by hand, with a wrong type or a NaN, or another run's job), or whose
        columns beside the JSON (store/columns.py: the start's instant, the brief, the job's
        identity and figures) disagree with it: one line each, naming the row. SQLite's
        `integrity_check` cannot see these; `load_run` shows the rest of their run."""
        found: list[str] = []
        with self._reading(), self._snapshot():
            for run_id, started, finished, environment, profile, started_at, finished_at, brief in self._db.execute(
                text(
                    "SELECT id, started, finished, environment, profile, started_at, finished_at, brief "
                    "FROM runs ORDER BY id"
                )
            ):
                for column, value, kept in (("started", started, started_at), ("finished", finished, finished_at)):
                    problem = time_problem(value) if value is not None else None
                    if problem is not None:
                        found.append(f"run {run_id}: {column}: {problem}")
                    elif value is not None and as_utc(kept) != as_utc(instant(value, postgres=self._postgres)):
                        found.append(f"run {run_id}: {column}_at: not the instant {column} names")
                blocks = {}
                for column, text_, check in (
                    ("environment", environment, check_environment),
                    ("profile", profile, check_profile),
                ):
                    try:
                        blocks[column] = decode_block(text_, column, check)
                    except DamagedRow as exc:
                        found.append(f"run {run_id}: {exc}")
                if len(blocks) == 2 and brief != run_brief(blocks["environment"], blocks["profile"]):
                    found.append(f"run {run_id}: brief: not what its environment and profile say")
            for job_id, run_id, idx, result, identity, figures in self._db.execute(
                text("SELECT id, run_id, idx, result, identity, figures FROM jobs ORDER BY run_id, idx")
            ):
                try:
                    job = read_job_of(result, str(run_id), job_id, idx)
                except DamagedRow as exc:
                    found.append(f"{row_name(job_id, idx)}: {exc}")
                    continue
                if identity != job_identity(job) or figures != job_figures(job):
                    found.append(f"{row_name(job_id, idx)}: identity/figures: not what its result says")
        return found


def _trend_order(row: Any) -> tuple[bool, Any, str, int]:
    """Runs by start (runs without a readable one first), then id; jobs by index. A value of
    the wrong type (SQLite keeps any in any column) sorts as text, or as index -1."""
    at, run_id, idx = row[10], row[0], row[5]
    return (
        at is not None,
        at if isinstance(at, datetime) else "" if at is None else str(at),
        str(run_id),
        idx if type(idx) is int else -1,
    )


def _read_brief(brief: Any, name: Any) -> tuple[dict[str, Any], tuple[str, ...]]:
    """A run's brief as a trend reads it: (environment, marks); a brief that does not read
    back gives an empty environment and the marks of the name alone."""
    try:
        environment, profile = read_brief(brief)
        check_values(environment, "brief.environment")
        check_environment(environment, "brief.environment")
    except (FigureDamage, ResultsDataError):
        environment, profile = {}, {}
    return environment, _run_marks(name, json.dumps(profile) if profile else None)

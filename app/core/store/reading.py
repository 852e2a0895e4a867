"""Reading the store: the listing, a run by id, a job's trend, the damaged rows.

The queries are the same text on SQLite and PostgreSQL; every row read back is checked
(`store_rows`) as a results file is, since a shared store is input from other machines:
a damaged row is named, never trusted. `Store` (store.py) keeps the connection, the
transactions and the writes; this mixin only reads through them.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError

from app.core.records.recorded import RecordedProfile
from app.core.results.check import check_environment, check_profile
from app.core.results.model import JobResult, RunResult
from app.core.results.plausible import time_problem
from app.core.store import backends as store_backends
from app.core.store.errors import AmbiguousRunId, RunNotFound, StoreError
from app.core.store.rows import DamagedRow, decode_block, placeholder_job, read_job, row_name, run_time
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


@dataclass(frozen=True)
class StoredJob:
    """One stored job beside what its run says about where it ran (`Store.jobs_like`)."""

    run_id: str
    run_started: str
    environment: dict[str, Any]
    job: JobResult
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

    def _status(self, run_id: str, status: str) -> str:
        raise NotImplementedError

    def _problem(self, exc: BaseException, action: str) -> str:
        raise NotImplementedError

    # --- reading -----------------------------------------------------------------

    def list_runs(self, limit: int | None = None) -> list[RunSummary]:
        query = (
            "SELECT r.id, r.name, r.started, r.finished, r.status, r.host, "
            "COUNT(j.id), SUM(CASE WHEN j.status = :ok THEN 1 ELSE 0 END) "
            "FROM runs r LEFT JOIN jobs j ON j.run_id = r.id GROUP BY r.id ORDER BY r.started DESC, r.id DESC"
        )
        if limit is not None:
            query += f" LIMIT {int(limit)}"
        with self._reading():
            rows = self._db.execute(text(query), {"ok": JobStatus.OK}).fetchall()
            statuses = [self._status(row[0], row[4]) for row in rows]
        # A time that is not one (naive, year 9999, not text) reads as unknown: it stopped the
        # window, whose presets subtract and whose History converts them (`damaged_rows` names it).
        return [
            RunSummary(
                row[0],
                row[1],
                run_time(row[2]) or "",
                run_time(row[3]),
                status,
                row[5],
                jobs=int(row[6]),
                ok_jobs=int(row[7] or 0),
            )
            for row, status in zip(rows, statuses, strict=True)
        ]

    def resolve_run_id(self, prefix: str) -> str:
        """A full run id from a unique prefix; RunNotFound (AmbiguousRunId for several)."""
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

    def load_run(self, run_id: str) -> RunResult:
        """The run with every job that reads back intact. A damaged row (cut short, edited,
        wrong types) becomes a failed placeholder job whose error names the damage, and a
        line in `RunResult.damaged`: one bad row must not hide the rest of the run.
        RunNotFound for an unknown id, StoreError when the store cannot be read."""
        run_id = self.resolve_run_id(run_id)
        try:
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
                jobs.append(read_job(result))
            except DamagedRow as exc:
                jobs.append(placeholder_job(job_id, idx, result, str(exc)))
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

    def jobs_like(self, scheme: str, backend: str, mode: str, message_size: int) -> list[StoredJob]:
        """Every job of every run with this scheme, backend, mode and message size, oldest
        run first, then by job index. The key columns pick the rows (schema 2, indexed), so
        only those are decoded: a job's history over 200 runs of 40 jobs reads in a fraction
        of loading every run (benchmarks/README.md, "A job's trend"). A damaged job row is
        left out and a damaged run record gives an empty environment (`damaged_rows` and
        `load_run` name them)."""
        query = (
            "SELECT r.id, r.started, r.environment, j.result, r.name, r.profile "
            "FROM jobs j JOIN runs r ON r.id = j.run_id WHERE j.scheme = :scheme AND j.backend = :backend "
            "AND j.mode = :mode AND j.message_size = :size ORDER BY r.started, r.id, j.idx"
        )
        found: list[StoredJob] = []
        environments: dict[str, dict[str, Any]] = {}
        marks: dict[str, tuple[str, ...]] = {}
        with self._reading():
            rows = self._db.execute(
                text(query), {"scheme": scheme, "backend": backend, "mode": mode, "size": message_size}
            ).fetchall()
        for run_id, started, environment, result, name, profile in rows:
            try:
                job = read_job(result)
            except DamagedRow:
                continue
            if run_id not in environments:
                try:
                    environments[run_id] = decode_block(environment, "environment", check_environment)
                except DamagedRow:
                    environments[run_id] = {}
                marks[run_id] = _run_marks(name, profile)
            found.append(StoredJob(str(run_id), run_time(started) or "", environments[run_id], job, marks[run_id]))
        return found

    def damaged_rows(self) -> list[str]:
        """Rows the database finds sound but that do not read back as results (a job row cut
        short, edited by hand, with a wrong type or a NaN): one line each, naming the row.
        SQLite's `integrity_check` cannot see these; `load_run` shows the rest of their run."""
        found: list[str] = []
        with self._reading():
            for run_id, started, finished, environment, profile in self._db.execute(
                text("SELECT id, started, finished, environment, profile FROM runs ORDER BY id")
            ):
                for column, value in (("started", started), ("finished", finished)):
                    problem = time_problem(value) if value is not None else None
                    if problem is not None:
                        found.append(f"run {run_id}: {column}: {problem}")
                for column, text_, check in (
                    ("environment", environment, check_environment),
                    ("profile", profile, check_profile),
                ):
                    try:
                        decode_block(text_, column, check)
                    except DamagedRow as exc:
                        found.append(f"run {run_id}: {exc}")
            for job_id, idx, result in self._db.execute(text("SELECT id, idx, result FROM jobs ORDER BY run_id, idx")):
                try:
                    read_job(result)
                except DamagedRow as exc:
                    found.append(f"{row_name(job_id, idx)}: {exc}")
        return found

"""The results format on the wire, pinned by a golden file.

`golden/results-v1.json` was written by `cryptobench run golden/profile.json --json`
at commit bf587d9, before a job's CPU, memory, validation and security became typed
records (a cancelled placeholder job was appended with that commit's own code, so the
file also holds a job that never ran). `golden/results-v1.csv` is that commit's CSV
export of the same run, with columns appended since: `link` and `placement`,
`placement_cpus`, `placement_seen`, then a load job's step and generator columns
(app.core.results.load_csv), empty for these jobs, then `exchange` (the x25519 jobs,
written before jobs named their exchange, read as what they measured: session);
regenerated each time
with every earlier column checked unchanged. Reading either back
and writing it again must give the same bytes: the typed records are a change of the
code, never of the contract other tools read. Columns are only ever appended.
"""

from __future__ import annotations

import json
from pathlib import Path

from app.core.records.job_records import CpuUsage, MemoryUsage, ProcessUsage, Security, Validation
from app.core.results.model import load_results_file, to_csv, to_json
from app.core.store.store import Store
from app.core.vocab import Exchange, JobStatus, Mode, Role
from tests.helpers.paths import GOLDEN


def test_golden_results_file_reads_back_to_the_same_json() -> None:
    path = GOLDEN / "results-v1.json"
    run = load_results_file(path)
    assert to_json(run) == path.read_text(encoding="utf-8")


def test_golden_results_file_exports_the_same_csv() -> None:
    run = load_results_file(GOLDEN / "results-v1.json")
    assert to_csv(run) == (GOLDEN / "results-v1.csv").read_text(encoding="utf-8")


def test_golden_jobs_read_as_typed_records() -> None:
    run = load_results_file(GOLDEN / "results-v1.json")
    ops, session, signature, cancelled = run.jobs
    assert isinstance(ops.cpu, CpuUsage) and ops.cpu.interval_s == 0.1
    worker = ops.cpu.measuring(ops.mode)
    assert isinstance(worker, ProcessUsage) and worker is ops.cpu.role(Role.WORKER)
    assert isinstance(ops.memory, MemoryUsage) and ops.memory.measuring_rss(ops.mode) == worker.rss_peak_bytes
    assert isinstance(ops.validation, Validation) and ops.validation.checked > 0 and ops.validation.failed == 0
    assert isinstance(ops.security, Security) and ops.security.classical_bits == 128
    # A session's figures are the sender's; the receiver is recorded beside it, not instead.
    assert session.mode == Mode.LOOPBACK and set(session.cpu.processes) == {Role.SENDER, Role.RECEIVER}
    assert session.cpu.measuring(session.mode) is session.cpu.role(Role.SENDER)
    assert signature.security.pq_category == 0
    # The placeholder of a job that never ran has no CPU or memory record at all (not zeros).
    assert cancelled.status == JobStatus.CANCELLED
    assert cancelled.cpu == CpuUsage() and cancelled.cpu.measuring(cancelled.mode) is None
    assert cancelled.memory == MemoryUsage() and cancelled.validation == Validation()
    assert cancelled.security.known  # the scheme was known, so its strength is
    assert all(job.link is None and job.placement is None and job.load is None for job in run.jobs)
    # Written before jobs named their exchange pattern: none recorded, each read as what it
    # measured (a key agreement once per session), and none added when written back.
    assert [job.exchange for job in run.jobs] == [None] * 4
    assert [job.exchange_used for job in run.jobs] == [None, Exchange.SESSION, None, Exchange.SESSION]


def test_golden_run_survives_the_store(tmp_path: Path) -> None:
    """The store keeps jobs as JSON plus packed samples: what comes back is the same document."""
    run = load_results_file(GOLDEN / "results-v1.json")
    store = Store(tmp_path / "history.sqlite3")
    try:
        store.begin_run(run)
        for job in run.jobs:
            store.add_job(run.id, job)
        store.finish_run(run.id, run.status, run.finished or run.started)
        loaded = store.load_run(run.id)
    finally:
        store.close()
    original = json.loads(to_json(run))
    again = json.loads(to_json(loaded))
    assert again["jobs"] == original["jobs"]

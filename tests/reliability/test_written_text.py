"""Free text is bounded on import and on load, what the app writes is cut to fit, and every
report of the longest allowed texts renders.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from app.core.records.job_conditions import MAX_QUEUE_BYTES, MAX_QUEUE_PACKETS
from app.core.results import model as results
from app.core.results.model import parse_results_text
from app.core.store.store import Store
from app.core.vocab import ExportFormat, JobStatus
from app.report.exporters import export
from tests.helpers import records, written
from tests.helpers.written import RUN_ID, STARTED

# --- free text: bounded on import and load, and every report renders the longest allowed ---------
# Before: a 1.6-million-character label imported, and `report --pdf` of it never finished;
# a 1-million-character error took the PDF 28 s, a 2 MB description 14 s.


def _texts_at(limit_offset: int) -> list[tuple[str, Any]]:
    """(where, mutation) pairs setting each bounded text of a results document to its bound + offset."""
    from app.core.results.check import MAX_JOB_LABEL_CHARS
    from app.core.results.check_fields import MAX_TEXT_CHARS
    from app.core.settings.profile import MAX_DESCRIPTION_CHARS, MAX_LABEL_CHARS

    n = limit_offset

    def job_field(key: str, size: int) -> Any:
        return lambda d: d["jobs"][0].__setitem__(key, "x" * size)

    def profile_field(key: str, size: int) -> Any:
        return lambda d: d["run"]["profile"].__setitem__(key, "x" * size)

    return [
        ("jobs[0].label", job_field("label", MAX_JOB_LABEL_CHARS + n)),
        ("jobs[0].error", job_field("error", MAX_TEXT_CHARS + n)),
        ("jobs[0].notes[0]", lambda d: d["jobs"][0].__setitem__("notes", ["x" * (MAX_TEXT_CHARS + n)])),
        ("run.profile.name", profile_field("name", MAX_LABEL_CHARS + n)),
        ("run.profile.description", profile_field("description", MAX_DESCRIPTION_CHARS + n)),
        (
            "run.profile.jobs[0].label",
            lambda d: d["run"]["profile"].__setitem__(
                "jobs", [{"scheme": "aes-gcm", "label": "x" * (MAX_LABEL_CHARS + n)}]
            ),
        ),
        (
            "run.environment.hostname",
            lambda d: d["run"]["environment"].__setitem__("hostname", "x" * (MAX_TEXT_CHARS + n)),
        ),
        ("jobs[0].params", lambda d: d["jobs"][0]["params"].__setitem__("k" * (MAX_TEXT_CHARS + n), 1)),
    ]


@pytest.mark.parametrize("index", range(8), ids=[where for where, _ in _texts_at(0)])
def test_each_free_text_reads_back_at_its_bound_and_is_refused_past_it(index: int, tmp_path: Path) -> None:
    where, at_bound = _texts_at(0)[index]
    data = written.document(records.job(RUN_ID, 0, metrics={"encrypt": [1e-6, 2e-6, 3e-6]}))
    at_bound(data)
    written.accepted(data)
    _, past = _texts_at(1)[index]
    past(data)
    refusal = written.refusal(data)
    assert refusal.startswith(f"f.json: {where}: "), refusal
    assert "characters" in refusal and len(refusal) < 300  # the length, not the text


def test_a_stored_row_with_a_label_past_its_bound_reads_as_damaged(tmp_path: Path) -> None:
    from app.core.results.check import MAX_JOB_LABEL_CHARS

    path = tmp_path / "s.sqlite3"
    with Store(path) as store:
        store.add_run(records.run(RUN_ID, [records.job(RUN_ID, 0)], started=STARTED))
    with sqlite3.connect(path) as db:
        job_id, text = db.execute("SELECT id, result FROM jobs").fetchone()
        row = json.loads(text)
        row["label"] = "L" * (MAX_JOB_LABEL_CHARS + 1)
        db.execute("UPDATE jobs SET result = ? WHERE id = ?", (json.dumps(row), job_id))
    with Store(path) as store:
        job = store.load_run(RUN_ID).jobs[0]
        assert len(store.damaged_rows()) == 1
    assert job.status == "failed" and f"expected text of at most {MAX_JOB_LABEL_CHARS}" in (job.error or "")
    assert len(job.label) <= 200  # the placeholder never carries the long label on


def test_an_error_of_any_length_is_written_cut_and_reads_back(tmp_path: Path) -> None:
    """An exception's message may be any length; what is written says it was cut."""
    from app.core.results.check_fields import MAX_TEXT_CHARS

    job = records.job(RUN_ID, 0, status=JobStatus.FAILED, error="E" * 1_000_000, notes=["n" * 50_000])
    run = records.run(RUN_ID, [job], started=STARTED)
    back = parse_results_text(results.to_json(run), "export.json").jobs[0]
    assert back.error is not None and len(back.error) == MAX_TEXT_CHARS
    assert back.error.endswith("… (cut: 1,000,000 characters in all)")
    assert back.notes[0].endswith("… (cut: 50,000 characters in all)")
    with Store(tmp_path / "s.sqlite3") as store:
        store.add_run(run)
        assert store.load_run(RUN_ID).jobs[0].error == back.error and store.damaged_rows() == []


def test_the_longest_profile_label_over_the_wordiest_link_reads_back() -> None:
    """The job label a profile can produce: its label at the bound, " over " and a custom
    link's numbers with every part set (resolve_jobs)."""
    from app.core.profile.files import parse_profile
    from app.core.profile.resolve import resolve_jobs
    from app.core.results.check import MAX_JOB_LABEL_CHARS
    from app.core.settings.profile import MAX_LABEL_CHARS

    link = {
        "delay_ms": 9999.123456789,
        "jitter_ms": 1234.56789,
        "rate_kbit": {"up": 123456.789123, "down": 98765.4321123},
        "burst_loss": {
            "p_percent": 12.3456789,
            "r_percent": 98.7654321,
            "bad_loss_percent": 87.654321,
            "good_loss_percent": 1.23456789,
        },
        "queue_packets": MAX_QUEUE_PACKETS,
        "queue_bytes": MAX_QUEUE_BYTES,
    }
    job = {
        "scheme": "x25519",
        "mode": "loopback",
        "label": "L" * MAX_LABEL_CHARS,
        "links": [link],
        "link_emulation": "packet",
    }
    (resolved,) = resolve_jobs(parse_profile({"name": "p", "jobs": [job]}), has_remote=True)
    assert MAX_LABEL_CHARS < len(resolved.label) <= MAX_JOB_LABEL_CHARS, resolved.label
    written.accepted(written.document(records.job(RUN_ID, 0, label=resolved.label)))


def _longest_texts_run() -> results.RunResult:
    from app.core.results.check import MAX_JOB_LABEL_CHARS
    from app.core.results.check_fields import MAX_TEXT_CHARS
    from app.core.settings.profile import MAX_DESCRIPTION_CHARS, MAX_LABEL_CHARS

    jobs = [
        records.job(
            RUN_ID,
            i,
            label=chr(65 + i) * MAX_JOB_LABEL_CHARS,  # one word: nowhere to wrap
            metrics={"encrypt": [1e-6, 2e-6, 3e-6] * 5, "decrypt": [2e-6, 3e-6, 4e-6] * 5},
            notes=["n" * MAX_TEXT_CHARS],
        )
        for i in range(6)
    ]
    jobs.append(records.job(RUN_ID, 6, label="F" * MAX_JOB_LABEL_CHARS, status=JobStatus.FAILED, error="E" * 10**6))
    profile = {
        "name": "N" * MAX_LABEL_CHARS,
        "description": "D" * MAX_DESCRIPTION_CHARS,
        "jobs": [{"scheme": "aes-gcm", "label": "L" * MAX_LABEL_CHARS}],
    }
    run = records.run(RUN_ID, jobs, started=STARTED, finished="2026-04-01T12:05:00.000+00:00", profile=profile)
    return parse_results_text(results.to_json(run), "longest.json")  # what an import holds at most


@pytest.mark.timeout(60)
def test_the_markdown_report_of_the_longest_texts_renders(tmp_path: Path) -> None:
    from app.core.results.check import MAX_JOB_LABEL_CHARS

    run = _longest_texts_run()
    target = tmp_path / "r.md"
    export(ExportFormat.MARKDOWN, run, target)
    text = target.read_text(encoding="utf-8")
    assert "A" * MAX_JOB_LABEL_CHARS in text  # shown whole, not approximated


@pytest.mark.timeout(60)  # before: a 1.6-million-character label never finished
def test_the_pdf_report_of_the_longest_texts_renders(qapp: Any, tmp_path: Path) -> None:
    target = tmp_path / "r.pdf"
    export(ExportFormat.PDF, _longest_texts_run(), target)
    assert target.read_bytes().startswith(b"%PDF") and target.stat().st_size > 10_000

"""Results documents for the written-and-read-back tests: a run of one job as its JSON
export would hold it, and what parsing it says (tests/reliability/test_written_*.py)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.core.records.job_conditions import Load, LoadStep
from app.core.results import model as results
from app.core.results.model import JobResult, ResultsFileError, parse_results_text
from app.core.settings.load import (
    MAX_CLIENTS,
    MAX_DURATION_S,
    MAX_RATE_PER_S,
    MAX_SERVER_WORKERS,
    MAX_STEPS,
    MAX_WARMUP_S,
)
from tests.helpers import records

RUN_ID = "20260401-120000-wrback"
STARTED = "2026-04-01T12:00:00.000+00:00"


def document(job: JobResult, **run_fields: Any) -> dict[str, Any]:
    run = records.run(RUN_ID, [job], started=STARTED, finished="2026-04-01T12:05:00.000+00:00")
    data = json.loads(results.to_json(run))
    data["run"].update(run_fields)
    return data


def refusal(data: dict[str, Any]) -> str:
    with pytest.raises(ResultsFileError) as caught:
        parse_results_text(json.dumps(data), "f.json")
    return str(caught.value)


def accepted(data: dict[str, Any]) -> results.RunResult:
    return parse_results_text(json.dumps(data), "f.json")


def load_job(load_record: Load, index: int = 0, **fields: Any) -> JobResult:
    return records.job(
        RUN_ID,
        index,
        message_size=32,
        metrics={"latency": [1e-3, 2e-3, 3e-3], "server": [1e-4, 2e-4, 3e-4]},
        mode="load",
        load=load_record,
        **fields,
    )


def step(offered: float, sent: int, completed: int, errors: int = 0, achieved: float | None = None) -> LoadStep:
    return LoadStep(
        offered_per_s=offered,
        achieved_per_s=completed / (sent / offered) if achieved is None else achieved,
        errors=errors,
        latency_s={"p50": 1e-3, "p90": 2e-3, "p99": 3e-3, "p99.9": 4e-3, "max": 5e-3},
        sent=sent,
        completed=completed,
    )


def max_load(**overrides: Any) -> Load:
    """The largest load record a valid profile can produce: every bound at the profile's limit."""
    sent = round(MAX_DURATION_S * MAX_RATE_PER_S)
    steps = tuple(step(MAX_RATE_PER_S, sent, sent) for _ in range(MAX_STEPS))
    fields: dict[str, Any] = {
        "clients": MAX_CLIENTS,
        "server_workers": MAX_SERVER_WORKERS,
        "steps": steps,
        "duration_s": MAX_DURATION_S,
        "warmup_s": MAX_WARMUP_S,
        "pool": 64,
        "knee_per_s": steps[0].achieved_per_s,
        "sustained_per_s": steps[0].achieved_per_s,
        "sustained_p99_s": 3e-3,
    }
    fields.update(overrides)
    return Load(**fields)

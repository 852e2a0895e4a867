"""A tls13 job's `tls` record read back (app/core/results/check_tls.py): every field a
handshake could have, anything else refused naming the field."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.core.results.check import check_job
from app.core.results.errors import ResultsDataError
from app.core.results.model import JobResult
from tests.helpers import loads, records

RECORD = records.tls_record()


def _job(tls: dict[str, Any]) -> dict[str, Any]:
    data = records.job(scheme="tls13").to_dict()
    data["tls"] = tls
    return data


def test_a_record_reads_back_whole() -> None:
    data = _job(RECORD.to_dict())
    check_job(json.loads(json.dumps(data)), "jobs[0]")
    assert JobResult.from_dict(data).tls == RECORD


@pytest.mark.parametrize(
    ("change", "field", "expected"),
    [
        ({"group": ""}, "jobs[0].tls.group", "a non-empty string"),
        ({"handshakes": 0}, "jobs[0].tls.handshakes", "an integer"),
        ({"client_bytes": [10, 5]}, "jobs[0].tls.client_bytes", "in order"),
        ({"server_bytes": "10333"}, "jobs[0].tls.server_bytes", "[fewest, most]"),
        ({"resumed": "no"}, "jobs[0].tls.resumed", "true or false"),
        ({"chain_bytes": [-1]}, "jobs[0].tls.chain_bytes", "certificate sizes"),
        ({"round_trips": 99}, "jobs[0].tls.round_trips", "an integer 0..16"),
        ({"flights": [{"sender": "proxy", "bytes": 5, "messages": []}]}, "jobs[0].tls.flights[0].sender", "one of"),
        ({"server_bytes": [1, 2]}, "jobs[0].tls.flights", "the server's flights add up to 10,333 bytes"),
    ],
)
def test_a_record_no_handshake_could_have_written_is_refused(change: dict[str, Any], field: str, expected: str) -> None:
    with pytest.raises(ResultsDataError) as caught:
        check_job(_job({**RECORD.to_dict(), **change}), "jobs[0]")
    assert str(caught.value).startswith(field) and expected in str(caught.value), str(caught.value)


# --- a load job's handshakes per step ---------------------------------------------------

LOAD_JOB = loads.tls_load_job(resumed=True)


def test_a_load_job_s_steps_read_back_whole() -> None:
    data = json.loads(json.dumps(LOAD_JOB.to_dict()))
    check_job(data, "jobs[0]")
    back = JobResult.from_dict(data)
    assert back.tls == LOAD_JOB.tls and back.tls is not None
    assert len(back.tls.steps) == len(loads.TLS_STEPS) and back.tls.steps[-1].resumed < back.tls.steps[-1].handshakes


@pytest.mark.parametrize(
    ("steps", "field", "expected"),
    [
        (lambda s: s[:-1], "jobs[0].tls.steps", "one per load step (4)"),
        (lambda s: [{**s[0], "resumed": s[0]["handshakes"] + 1}, *s[1:]], "jobs[0].tls.steps[0].resumed", "at most"),
        (lambda s: [{**s[0], "failed": -1}, *s[1:]], "jobs[0].tls.steps[0].failed", "an integer"),
        (lambda s: ["50"] + s[1:], "jobs[0].tls.steps[0]", "an object"),
    ],
)
def test_load_steps_no_run_could_have_written_are_refused(steps: Any, field: str, expected: str) -> None:
    data = LOAD_JOB.to_dict()
    data["tls"]["steps"] = steps(data["tls"]["steps"])
    with pytest.raises(ResultsDataError) as caught:
        check_job(data, "jobs[0]")
    assert str(caught.value).startswith(field) and expected in str(caught.value), str(caught.value)


def test_steps_on_a_job_that_ran_no_load_are_refused() -> None:
    tls = {**RECORD.to_dict(), "steps": [{"handshakes": 1, "resumed": 0, "failed": 0, "retries": 0}]}
    with pytest.raises(ResultsDataError, match=r"^jobs\[0\]\.tls\.steps: .*no steps"):
        check_job(_job(tls), "jobs[0]")

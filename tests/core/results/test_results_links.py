"""A job's link in its results: recorded on every result, written to JSON, CSV and the store,
read back the same, and checked as input when a results file comes back."""

from __future__ import annotations

import copy
import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from app.core.profile.files import parse_profile
from app.core.profile.resolve import resolve_jobs
from app.core.results.model import CSV_COLUMNS, ResultsFileError, load_results_file, parse_results_text, to_csv, to_json
from app.core.run.runner import placeholder_result
from app.core.settings.links import resolve_link
from app.core.store.store import Store
from app.core.vocab import JobStatus
from tests.helpers.paths import GOLDEN

GOLDEN_RESULTS = GOLDEN / "results-v1.json"
LINKS = [resolve_link("3g"), resolve_link("satellite"), resolve_link("lan")]


def _golden_with_links() -> str:
    """The golden run with the session job over 3G and the cancelled one over a custom link,
    as `cryptobench run` would now write it, and with the run's environment probe."""
    data = json.loads(GOLDEN_RESULTS.read_text(encoding="utf-8"))
    data["run"]["environment"]["link_emulation"] = {
        "delay_line": True,
        "netem": False,
        "netem_reason": "this kernel was built without sch_netem",
    }
    data["jobs"][1]["link"] = LINKS[0].to_dict()
    data["jobs"][3]["link"] = {
        "name": None,
        "delay_ms": 20.0,
        "jitter_ms": 2.5,
        "rate_kbit": {"up": 8000.0, "down": None},
        "loss_percent": 0.0,
        "emulation": "delay-line",
    }
    return json.dumps(data, indent=2) + "\n"


def test_a_run_with_links_reads_back_to_the_same_json(tmp_path: Path) -> None:
    text = _golden_with_links()
    path = tmp_path / "links.json"
    path.write_text(text, encoding="utf-8")
    run = load_results_file(path)
    assert to_json(run) == text
    operations, session, _, cancelled = run.jobs
    assert operations.link is None and "link" not in json.loads(to_json(run))["jobs"][0]
    assert session.link == LINKS[0]
    assert cancelled.link is not None and cancelled.link.rate_kbit_up == 8000 and cancelled.link.rate_kbit_down is None
    assert run.environment["link_emulation"]["netem"] is False


def test_the_csv_link_column_is_last_and_names_the_link(tmp_path: Path) -> None:
    path = tmp_path / "links.json"
    path.write_text(_golden_with_links(), encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(to_csv(load_results_file(path)))))
    assert CSV_COLUMNS[CSV_COLUMNS.index("warnings") + 1] == "link"  # the first column appended
    by_job = {row["job_id"].rsplit("/", 1)[1]: row["link"] for row in rows}
    assert by_job == {
        "0": "",
        "1": "3g",
        "2": "",
        "3": "custom: 20 ms ± 2.5 ms, 8000 kbit/s up, unlimited down (stream relay)",
    }


def test_a_run_with_links_survives_the_store(tmp_path: Path) -> None:
    path = tmp_path / "links.json"
    path.write_text(_golden_with_links(), encoding="utf-8")
    run = load_results_file(path)
    store = Store(tmp_path / "history.sqlite3")
    try:
        store.begin_run(run)
        for job in run.jobs:
            store.add_job(run.id, job)
        loaded = store.load_run(run.id)
    finally:
        store.close()
    assert [job.link for job in loaded.jobs] == [job.link for job in run.jobs]


def test_every_result_of_a_job_carries_its_link() -> None:
    """The runner builds each size's result (measured, failed or cancelled) from the job's placeholder."""
    profile = parse_profile(
        {
            "name": "t",
            "jobs": [
                {
                    "scheme": "x25519",
                    "mode": "loopback",
                    "message_sizes": [64, 1024],
                    "links": ["lte", "satellite"],
                    "link_emulation": "stream-relay",  # runs anywhere
                },
                {"scheme": "x25519", "message_sizes": [64]},
            ],
        }
    )
    for job in resolve_jobs(profile):
        for index, size in enumerate(job.message_sizes):
            result = placeholder_result(job, "run", index, size, JobStatus.CANCELLED, "cancelled before start")
            assert result.link == job.link
            assert result.link is None or result.link.emulation == "delay-line"


# --- a results file is input --------------------------------------------------------------------


def _refusal(mutate: Any) -> str:
    data = json.loads(_golden_with_links())
    mutate(data)
    with pytest.raises(ResultsFileError) as info:
        parse_results_text(json.dumps(data), "r.json")
    message = str(info.value)
    assert "\n" not in message
    return message


def _set(path: list[str | int], value: Any) -> Any:
    def mutate(data: Any) -> None:
        target = data
        for key in path[:-1]:
            target = target[key]
        if value is _DELETE:
            del target[path[-1]]
        else:
            target[path[-1]] = copy.deepcopy(value)

    return mutate


_DELETE = object()
LINK = ["jobs", 1, "link"]


@pytest.mark.parametrize(
    ("path", "value", "fragment"),
    [
        (LINK, "3g", "r.json: jobs[1].link: expected an object"),
        ([*LINK, "delay_ms"], -1, "jobs[1].link.delay_ms: expected a non-negative number, got -1"),
        ([*LINK, "delay_ms"], "150", 'jobs[1].link.delay_ms: expected a non-negative number, got "150"'),
        ([*LINK, "delay_ms"], 86_400_000, "jobs[1].link.delay_ms: expected at most 10000 ms"),
        ([*LINK, "delay_ms"], _DELETE, "jobs[1].link.delay_ms: required field is missing"),
        ([*LINK, "jitter_ms"], 151, "jobs[1].link.jitter_ms: expected at most delay_ms (150.0), got 151"),
        ([*LINK, "rate_kbit", "up"], 0, "jobs[1].link.rate_kbit.up: expected a positive number or null, got 0"),
        ([*LINK, "rate_kbit", "down"], True, "jobs[1].link.rate_kbit.down: expected a positive number or null"),
        ([*LINK, "rate_kbit", "down"], 1e12, "jobs[1].link.rate_kbit.down: expected at most 100000000 kbit/s or null"),
        ([*LINK, "rate_kbit"], [768, 1600], "jobs[1].link.rate_kbit: expected an object or null"),
        ([*LINK, "loss_percent"], 250, "jobs[1].link.loss_percent: expected a percentage 0..100, got 250"),
        (
            [*LINK, "emulation"],
            "carrier-pigeon",
            'jobs[1].link.emulation: expected one of "none", "delay-line", "packet", "netem"',
        ),
        ([*LINK, "emulation"], _DELETE, "jobs[1].link.emulation: required field is missing"),
        ([*LINK, "name"], 7, "jobs[1].link.name: expected a string or null, got 7"),
        (
            ["run", "environment", "link_emulation", "netem"],
            "no",
            "run.environment.link_emulation.netem: expected true or false",
        ),
        (["run", "environment", "link_emulation", "netem_reason"], 0, "link_emulation.netem_reason: expected a string"),
        (["run", "environment", "link_emulation"], [], "run.environment.link_emulation: expected an object or null"),
    ],
)
def test_a_damaged_link_is_refused_naming_the_field(path: list[str | int], value: Any, fragment: str) -> None:
    assert fragment in _refusal(_set(path, value))


def test_a_non_finite_delay_is_refused() -> None:
    text = _golden_with_links().replace('"delay_ms": 150.0', '"delay_ms": NaN', 1)
    with pytest.raises(ResultsFileError, match=r"jobs\[1\]\.link\.delay_ms: expected a finite number, got NaN"):
        parse_results_text(text, "r.json")


@pytest.mark.parametrize("value", [None, {}])
def test_an_absent_link_reads_as_none(value: Any) -> None:
    data = json.loads(_golden_with_links())
    data["jobs"][1]["link"] = value
    assert parse_results_text(json.dumps(data), "r.json").jobs[1].link is None

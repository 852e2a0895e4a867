"""Durations no machine measures are refused where they come in, naming the field.

Before: samples of 5e-324 s, or 1e18 s beside 1e-300 s, passed the results checker (and
the PDF, `compare --json` and the gate then failed on them). Now a time metric's samples
and statistics must be durations a timed operation can take (1 ns to a day,
`check_metrics.MIN_SAMPLE_SECONDS`/`MAX_SAMPLE_SECONDS`), on import, on `report`/`compare`
of a file and on reading a store row, and the runner never writes one outside them (what
it writes, it reads back).
"""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from app.cli.main import main as cli_main
from app.core.results import model as results
from app.core.results.check import check_results
from app.core.results.check_metrics import MAX_SAMPLE_SECONDS, MIN_SAMPLE_SECONDS
from app.core.results.errors import ResultsDataError
from app.core.results.model import ResultsFileError, load_results_file
from app.core.store.store import Store
from tests.helpers.extreme_runs import OTHER_ID, RUN_ID, hand_document, unchecked_run, write_document

# --- the checker: impossible durations are refused, naming the field ------------------------------------


@pytest.mark.parametrize(
    ("samples", "named"),
    [
        ([5e-324] * 8, "metrics.keygen.min: 5e-324 s is not a duration"),
        ([1e18 if i % 2 else 1e-300 for i in range(8)], "metrics.keygen.min: 1e-300 s is not a duration"),
        ([1e-6] * 7 + [1e18], "metrics.keygen.max: 1e+18 s is not a duration"),
        ([0.0] * 8, "metrics.keygen.min: 0.0 s is not a duration"),
        ([9.99e-10] * 8, "metrics.keygen.min: 9.99e-10 s is not a duration"),
        ([86_400.5] * 8, "metrics.keygen.min: 86400.5 s is not a duration"),
    ],
    ids=["subnormal", "1e18-beside-1e-300", "one-huge", "zero", "under-1ns", "over-a-day"],
)
def test_the_checker_refuses_a_duration_no_machine_measures(samples: list[float], named: str) -> None:
    with pytest.raises(ResultsDataError) as refused:
        check_results(hand_document(samples=samples, job=0))
    assert named in str(refused.value), str(refused.value)
    assert "(1e-09 s to 86400 s, 1 ns to a day)" in str(refused.value)


def test_a_single_impossible_sample_is_named_by_its_index() -> None:
    data = hand_document()
    metric = data["jobs"][2]["metrics"]["encrypt"]
    metric["samples"][5] = 5e-324  # the statistics of the other seven still hold
    with pytest.raises(ResultsDataError) as refused:
        check_results(data)
    assert str(refused.value).startswith("jobs[2].metrics.encrypt.samples[5]: 5e-324 s is not a duration")


@pytest.mark.parametrize("value", [MIN_SAMPLE_SECONDS, MAX_SAMPLE_SECONDS], ids=["1ns", "a-day"])
def test_the_bounds_themselves_are_possible(value: float) -> None:
    check_results(hand_document(samples=[value] * 8, job=0))  # both ends of the range are accepted


def test_a_ci95_end_out_of_range_is_named() -> None:
    data = hand_document()
    data["jobs"][0]["metrics"]["keygen"]["ci95"] = [1e-300, 1e-6]
    with pytest.raises(ResultsDataError, match=r"jobs\[0\]\.metrics\.keygen\.ci95\[0\]: 1e-300 s"):
        check_results(data)


@pytest.mark.parametrize("command", ["report", "compare", "import"])
def test_every_reader_of_a_file_refuses_it_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    bad = write_document(tmp_path, "tiny.json", hand_document(samples=[5e-324] * 8))
    good = write_document(tmp_path, "good.json", hand_document(OTHER_ID))
    store = ["--store", str(tmp_path / "s.db")]
    argv = {
        "report": ["report", str(bad), "--markdown", str(tmp_path / "r.md"), *store],
        "compare": ["compare", str(bad), str(good), "--json", *store],
        "import": ["import", str(bad), *store],
    }[command]
    code = cli_main(argv)
    out, err = capsys.readouterr()
    assert code == 2
    assert "jobs[0].metrics.keygen.min: 5e-324 s is not a duration any machine measures" in err
    assert "Traceback" not in err and "Infinity" not in out
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "r.md").exists()


def test_a_store_row_holding_an_impossible_sample_reads_as_damaged(tmp_path: Path) -> None:
    store_path = tmp_path / "s.db"
    with Store(store_path) as store:
        store.add_run(load_results_file(write_document(tmp_path, "ok.json", hand_document())))
    with sqlite3.connect(store_path) as db:  # one packed sample rewritten to 5e-324, as damage would
        job_id, text = db.execute("SELECT id, result FROM jobs ORDER BY idx LIMIT 1").fetchone()
        row = json.loads(text)
        metric = next(iter(row["metrics"].values()))
        packed = np.frombuffer(base64.b64decode(metric["samples_f64"]), dtype="<f8").copy()
        packed[3] = 5e-324
        metric["samples_f64"] = base64.b64encode(packed.astype("<f8").tobytes()).decode()
        db.execute("UPDATE jobs SET result = ? WHERE id = ?", (json.dumps(row), job_id))
    with Store(store_path) as store:
        run = store.load_run(RUN_ID)
    first = run.jobs[0]
    assert first.status == "failed"
    assert "samples_f64[3]: 5e-324 s is not a duration any machine measures" in (first.error or "")
    assert all(job.status != "failed" or job is first or job.error for job in run.jobs)


def test_the_runner_never_stores_a_duration_it_could_not_read_back() -> None:
    """A measurement that came out below a nanosecond (a clock too coarse, a broken timer)
    fails its job naming the metric, instead of writing a row the store then calls damaged."""
    from app.core.contracts.events import RawMetric, SizeMeasured
    from app.core.profile.files import parse_profile
    from app.core.run.runner import Runner, _JobRun

    profile = parse_profile(
        {"name": "t", "jobs": [{"scheme": "aes-gcm", "message_sizes": [64], "samples": 3, "warmup": 0}]}
    )
    runner = Runner(profile)
    (job,) = runner.jobs
    raw = {"encrypt": RawMetric(samples=[2e-6, 0.0, 2e-6]), "decrypt": RawMetric(samples=[2e-6, 3e-6, 2e-6])}
    result = _JobRun(runner, job, RUN_ID, 0)._build(SizeMeasured(0, 64, metrics=raw, checked=3), {}, 0.0)
    assert result.status == "failed"
    assert "encrypt sample 1: 0.0 s is not a duration any machine measures" in (result.error or "")
    assert "encrypt" not in result.metrics and "decrypt" in result.metrics
    run = unchecked_run(RUN_ID, None)
    run.jobs = [result]
    check_results(json.loads(results.to_json(run)))  # what it wrote reads back


def test_load_results_file_names_the_file(tmp_path: Path) -> None:
    path = write_document(tmp_path, "x.json", hand_document(samples=[2e5] * 8, job=1))
    with pytest.raises(ResultsFileError, match=r"x\.json: jobs\[1\]\.metrics\.\w+\.min: 200000\.0 s"):
        load_results_file(path)

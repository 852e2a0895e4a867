"""A load job's steps in the CSV: a row per step, and per generator of a cluster job
(app/core/results/load_csv.py through `to_csv`, and the CSV exporter the CLI and the window use)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from app.core.results.load_csv import GENERATOR_METRIC, LOAD_CSV_COLUMNS, STEP_METRIC
from app.core.results.model import CSV_COLUMNS, RunResult, to_csv
from app.core.vocab import ExportFormat
from app.report.exporters import export
from tests.helpers.loads import INCOMPLETE_REASON, KNEE_STEPS, cluster_load, load, load_job, load_run

LABEL = "X25519 + HKDF-SHA256 + AES-256-GCM [cryptography]"


def _rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def _cluster_run(**kwargs: object) -> RunResult:
    return load_run([load_job(0, LABEL, cluster_load(**kwargs), family="key-agreement", scheme="x25519", pq=0)])  # type: ignore[arg-type]


def test_load_columns_are_appended_after_every_earlier_column() -> None:
    start = CSV_COLUMNS.index("placement_seen") + 1
    assert CSV_COLUMNS[start : start + len(LOAD_CSV_COLUMNS)] == LOAD_CSV_COLUMNS
    assert CSV_COLUMNS[start + len(LOAD_CSV_COLUMNS) :] == ("exchange",)  # appended after them


def test_one_generator_job_gets_a_row_per_step_and_its_metric_rows_keep_their_cells() -> None:
    run = load_run([load_job(0, LABEL, load(KNEE_STEPS))])
    rows = _rows(to_csv(run))
    metrics = [row for row in rows if row["metric"] in ("latency", "server")]
    assert len(metrics) == 2 and all(row[column] == "" for row in metrics for column in LOAD_CSV_COLUMNS)
    steps = [row for row in rows if row["metric"] == STEP_METRIC]
    assert [row["load_step"] for row in steps] == [str(k) for k in range(1, len(KNEE_STEPS) + 1)]
    assert [float(row["offered_per_s"]) for row in steps] == [s.offered_per_s for s in KNEE_STEPS]
    assert [float(row["latency_p99"]) for row in steps] == [s.latency_s["p99"] for s in KNEE_STEPS]
    assert all(row["load_generator"] == "" and row["generator_host"] == "" for row in steps)
    assert not [row for row in rows if row["metric"] == GENERATOR_METRIC]
    assert all(row["label"] == LABEL and row["mode"] == "load" for row in steps)  # the job's identity on each


def test_each_generator_has_a_row_per_step_with_its_own_figures_and_place() -> None:
    run = _cluster_run(rates=(400, 800, 1600), generators=3, late=(3, 800))
    the_load = run.jobs[0].load
    assert the_load is not None
    rows = _rows(to_csv(run))
    steps = [row for row in rows if row["metric"] == STEP_METRIC]
    generators = [row for row in rows if row["metric"] == GENERATOR_METRIC]
    assert len(steps) == 3 and len(generators) == 9
    for step_row, step in zip(steps, the_load.steps, strict=True):
        mine = [row for row in generators if row["load_step"] == step_row["load_step"]]
        assert [row["load_generator"] for row in mine] == ["1", "2", "3"]
        # The merged step's counts are the sum of its generators' rows; its offered rate too.
        assert sum(int(row["completed"]) for row in mine) == int(step_row["completed"]) == step.completed
        assert sum(float(row["offered_per_s"]) for row in mine) == float(step_row["offered_per_s"])
        assert {float(row["latency_p99"]) for row in mine} != {step.latency_s["p99"]}  # not the merge's, copied
        for row, part, place in zip(mine, step.generators, the_load.generators, strict=True):
            assert float(row["latency_p50"]) == part.latency_s["p50"]
            assert float(row["send_lag_p99"]) == part.send_lag_p99_s
            assert float(row["generator_cpu_percent"]) == part.generator_cpu_percent
            assert (row["generator_host"], row["generator_worker"]) == (place.host, place.worker)
            assert float(row["generator_clock_offset"]) == place.clock_offset_s
            assert row["unit"] == "s"
    late = next(row for row in generators if row["load_step"] == "2" and row["load_generator"] == "3")
    assert late["load_note"].startswith("the generator handed requests to the kernel up to 2.50 ms late")


def test_a_generator_missing_from_an_incomplete_step_has_a_row_that_says_so() -> None:
    rows = _rows(to_csv(_cluster_run(rates=(400, 800), incomplete_at=800)))
    step = next(row for row in rows if row["metric"] == STEP_METRIC and row["load_step"] == "2")
    assert step["load_note"] == INCOMPLETE_REASON
    missing = next(
        row
        for row in rows
        if row["metric"] == GENERATOR_METRIC and row["load_step"] == "2" and row["load_generator"] == "2"
    )
    assert missing["generator_host"] == "loadgen-b" and missing["completed"] == "" and missing["latency_p99"] == ""
    assert missing["load_note"] == f"did not return this step: {INCOMPLETE_REASON}"


def test_the_csv_export_the_cli_and_the_window_write_has_the_generator_rows(tmp_path: Path) -> None:
    path = export(ExportFormat.CSV, _cluster_run(), tmp_path / "out.csv")
    rows = _rows(path.read_text(encoding="utf-8"))
    assert [(row["load_step"], row["load_generator"]) for row in rows if row["metric"] == GENERATOR_METRIC] == [
        ("1", "1"),
        ("1", "2"),
        ("2", "1"),
        ("2", "2"),
    ]

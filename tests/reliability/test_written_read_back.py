"""What the app writes, it can read back; what it accepts, it can show.

Three sides of one promise, each tested both ways:

- every bound of the results checker is the producers' own limit: the largest record a
  valid profile can produce passes, one past it is refused (naming the field);
- every record shape a producer builds (ok, failed on a size, cancelled, each mode and
  condition) round-trips through the store (write -> read, `store` finds nothing) and
  through an export (to_json -> import);
- what cannot have been measured is refused on import and on load from the store alike:
  times without a UTC offset or far outside any run's, negative durations, counts that do
  not add up, a knee no step reached. A run holding such a time can be deleted from the
  command line, as from the window.
"""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hdrh.histogram import HdrHistogram
from hypothesis import given, settings
from hypothesis import strategies as st

from app.cli.exports import write_all
from app.cli.main import main as cli_main
from app.core.link.presets import MAX_DELAY_MS, MAX_RATE_KBIT
from app.core.load import generator as load_generator
from app.core.load.generator import HISTOGRAM_RANGE, MIN_DRAIN_S, sample_stride
from app.core.load.settings import (
    MAX_CLIENTS,
    MAX_DURATION_S,
    MAX_RATE_PER_S,
    MAX_SERVER_WORKERS,
    MAX_STEPS,
    MAX_WARMUP_S,
)
from app.core.load.sweep import sweep_rates
from app.core.profile.model import MAX_MESSAGE_SIZE, MAX_SAMPLES
from app.core.results import model as results
from app.core.results.check import check_job
from app.core.results.errors import ResultsDataError
from app.core.results.job_conditions import MAX_QUEUE_BYTES, MAX_QUEUE_PACKETS, Link, Load, LoadStep
from app.core.results.job_records import Validation
from app.core.results.model import JobResult, ResultsFileError, parse_results_text
from app.core.results.store import Store
from app.core.run.events import SizeMeasured
from app.core.vocab import ExportFormat, JobStatus
from app.report.exporters import ExportTooLarge, export
from tests.helpers import records
from tests.helpers.loads import KNEE_STEPS, load

RUN_ID = "20260401-120000-wrback"
STARTED = "2026-04-01T12:00:00.000+00:00"


# --- helpers ------------------------------------------------------------------------------


def _document(job: JobResult, **run_fields: Any) -> dict[str, Any]:
    run = records.run(RUN_ID, [job], started=STARTED, finished="2026-04-01T12:05:00.000+00:00")
    data = json.loads(results.to_json(run))
    data["run"].update(run_fields)
    return data


def _refusal(data: dict[str, Any]) -> str:
    with pytest.raises(ResultsFileError) as caught:
        parse_results_text(json.dumps(data), "f.json")
    return str(caught.value)


def _accepted(data: dict[str, Any]) -> results.RunResult:
    return parse_results_text(json.dumps(data), "f.json")


def _load_job(load_record: Load, index: int = 0, **fields: Any) -> JobResult:
    return records.job(
        RUN_ID,
        index,
        message_size=32,
        metrics={"latency": [1e-3, 2e-3, 3e-3], "server": [1e-4, 2e-4, 3e-4]},
        mode="load",
        load=load_record,
        **fields,
    )


def _step(offered: float, sent: int, completed: int, errors: int = 0, achieved: float | None = None) -> LoadStep:
    return LoadStep(
        offered_per_s=offered,
        achieved_per_s=completed / (sent / offered) if achieved is None else achieved,
        errors=errors,
        latency_s={"p50": 1e-3, "p90": 2e-3, "p99": 3e-3, "p99.9": 4e-3, "max": 5e-3},
        sent=sent,
        completed=completed,
    )


def _max_load(**overrides: Any) -> Load:
    """The largest load record a valid profile can produce: every bound at the profile's limit."""
    sent = round(MAX_DURATION_S * MAX_RATE_PER_S)
    steps = tuple(_step(MAX_RATE_PER_S, sent, sent) for _ in range(MAX_STEPS))
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


# --- 1. bounds: the largest valid output passes, one past it is refused --------------------


def test_a_load_metric_keeps_at_most_max_samples_whatever_the_step_measures() -> None:
    # 2,500/s for 404 s measured 1,010,000 requests: the metric's n was 1,010,000 and its own
    # export was refused (n: expected an integer 1..1000000).
    assert sample_stride(1_010_000) == 2
    assert -(-1_010_000 // 2) == 505_000
    assert sample_stride(MAX_SAMPLES) == 1 and sample_stride(MAX_SAMPLES + 1) == 2
    largest = round(MAX_RATE_PER_S * MAX_DURATION_S)
    assert -(-largest // sample_stride(largest)) <= MAX_SAMPLES


@given(st.integers(min_value=1, max_value=round(MAX_RATE_PER_S * MAX_DURATION_S)))
@settings(max_examples=300, deadline=None)
def test_the_stride_bounds_the_samples_of_every_step_a_profile_allows(measured: int) -> None:
    stride = sample_stride(measured)
    kept = len(range(0, measured, stride))
    assert kept <= MAX_SAMPLES
    assert stride == 1 or kept > MAX_SAMPLES // 2  # never thrown away beyond need


def test_the_generator_records_one_sample_in_stride_and_counts_every_request(monkeypatch: pytest.MonkeyPatch) -> None:
    # The filter in LoadGenerator._replied, at a small MAX_SAMPLES: 25 measured requests
    # after 5 of warm-up, at most 10 samples kept (every 3rd), all 25 in the histogram.
    monkeypatch.setattr(load_generator, "MAX_SAMPLES", 10)
    warm, measured = 5, 25
    step = load_generator._StepRecord(
        histogram=HdrHistogram(*HISTOGRAM_RANGE),
        window_start=0,
        window_end=10**12,
        first_measured=warm,
        sample_every=sample_stride(measured),
    )
    base = 1 << load_generator.STEP_SHIFT
    for k in range(warm + measured):
        step.outstanding[base | k] = 0
    for k in range(warm + measured):
        load_generator.LoadGenerator._replied(None, step, base | k, 7, 0, 1000 + k)  # type: ignore[arg-type]
    assert step.sample_every == 3
    assert len(step.latencies) == len(step.server_ns) == 9
    assert step.histogram.get_total_count() == measured


def test_a_load_job_at_every_profile_limit_reads_back() -> None:
    job = _load_job(_max_load())
    assert _accepted(_document(job)).jobs[0].load == job.load


@pytest.mark.parametrize(
    ("field", "past", "message"),
    [
        ("clients", MAX_CLIENTS + 1, f"an integer 1..{MAX_CLIENTS}"),
        ("server_workers", MAX_SERVER_WORKERS + 1, f"an integer 1..{MAX_SERVER_WORKERS}"),
        ("duration_s", MAX_DURATION_S * 1.001, f"at most {MAX_DURATION_S:g} s"),
        ("warmup_s", MAX_WARMUP_S + 1, f"at most {MAX_WARMUP_S:g} s"),
    ],
)
def test_one_past_each_load_limit_is_refused(field: str, past: Any, message: str) -> None:
    data = _document(_load_job(_max_load()))
    data["jobs"][0]["load"][field] = past
    assert f"jobs[0].load.{field}: expected {message}" in _refusal(data)


def test_more_steps_than_a_profile_allows_are_refused() -> None:
    data = _document(_load_job(_max_load()))
    steps = data["jobs"][0]["load"]["steps"]
    steps.append(copy.deepcopy(steps[0]))
    assert f"jobs[0].load.steps: expected at most {MAX_STEPS} steps" in _refusal(data)


def test_an_offered_rate_past_the_profile_limit_is_refused_and_a_sweep_never_plans_one() -> None:
    data = _document(_load_job(_max_load()))
    data["jobs"][0]["load"]["steps"][0]["offered_per_s"] = MAX_RATE_PER_S * 1.01
    assert "jobs[0].load.steps[0].offered_per_s: expected at most 1,000,000 requests/s" in _refusal(data)
    # 64 workers at 0.1 us a request: an estimate of 640M/s.
    assert max(sweep_rates(MAX_SERVER_WORKERS / 1e-7)) <= MAX_RATE_PER_S


@pytest.mark.parametrize(("n", "ok"), [(MAX_SAMPLES, True), (MAX_SAMPLES + 1, False)])
def test_a_metric_of_max_samples_reads_back_and_one_more_is_refused(n: int, ok: bool) -> None:
    job = records.job(RUN_ID, 0, metrics={"encrypt": [1e-6 * (1 + (i % 7) / 10) for i in range(n)]})
    data = _document(job)
    if ok:
        assert _accepted(data).jobs[0].metrics["encrypt"].stats.n == n
    else:
        assert f"jobs[0].metrics.encrypt.n: expected an integer 1..{MAX_SAMPLES}" in _refusal(data)


@pytest.mark.parametrize(("size", "ok"), [(MAX_MESSAGE_SIZE, True), (MAX_MESSAGE_SIZE + 1, False)])
def test_the_largest_message_size_reads_back_and_one_more_is_refused(size: int, ok: bool) -> None:
    data = _document(records.job(RUN_ID, 0, message_size=size, metrics={"encrypt": [1.0, 2.0]}))
    if ok:
        assert _accepted(data).jobs[0].message_size == size
    else:
        assert "jobs[0].message_size: expected an integer 0..1073741824" in _refusal(data)


def _link(**fields: Any) -> Link:
    base: dict[str, Any] = {
        "name": None,
        "delay_ms": MAX_DELAY_MS,
        "jitter_ms": MAX_DELAY_MS,
        "rate_kbit_up": MAX_RATE_KBIT,
        "rate_kbit_down": MAX_RATE_KBIT,
        "loss_percent": 100.0,
        "emulation": "packet",
        "queue_packets": MAX_QUEUE_PACKETS,
        "queue_bytes": MAX_QUEUE_BYTES,
    }
    base.update(fields)
    return Link(**base)


def test_a_link_at_every_profile_limit_reads_back() -> None:
    job = records.job(RUN_ID, 0, metrics={"rtt": [1.0, 2.0]}, mode="loopback", link=_link())
    assert _accepted(_document(job)).jobs[0].link == job.link


@pytest.mark.parametrize(
    ("key", "past", "field"),
    [
        ("delay_ms", MAX_DELAY_MS + 1, "delay_ms"),
        ("rate_kbit_up", MAX_RATE_KBIT * 1.01, "rate_kbit.up"),
        ("queue_packets", MAX_QUEUE_PACKETS + 1, "queue_packets"),
        ("queue_bytes", MAX_QUEUE_BYTES + 1, "queue_bytes"),
    ],
)
def test_one_past_each_link_limit_is_refused(key: str, past: Any, field: str) -> None:
    job = records.job(RUN_ID, 0, metrics={"rtt": [1.0, 2.0]}, mode="loopback", link=_link(**{key: past}))
    assert f"jobs[0].link.{field}: expected" in _refusal(_document(job))


def test_the_fullest_histogram_a_step_can_write_fits_the_checkers_bound() -> None:
    from app.core.results.check_job_parts import _MAX_HISTOGRAM_CHARS

    histogram = HdrHistogram(*HISTOGRAM_RANGE)
    for i in range(histogram.counts_len):  # every bucket, each with a count no varint shortens
        histogram.counts[i] = (1 << 62) - i
    histogram.total_count = sum(histogram.counts[i] for i in range(histogram.counts_len))
    histogram.min_value, histogram.max_value = 1, HISTOGRAM_RANGE[1]
    assert len(histogram.encode()) <= _MAX_HISTOGRAM_CHARS


def test_the_histogram_holds_the_longest_latency_a_step_can_see() -> None:
    # A request sent at the end of the longest window and answered at the end of its drain
    # (as long again, plus the slowest link's round trip, jitter included); HdrHistogram
    # drops a value above its range without a word.
    longest_ns = (MAX_DURATION_S + max(MIN_DRAIN_S, MAX_DURATION_S) + 4 * MAX_DELAY_MS / 1000) * 1e9
    histogram = HdrHistogram(*HISTOGRAM_RANGE)
    assert histogram.record_value(int(longest_ns))
    assert histogram.get_total_count() == 1


# --- 2. every written shape round-trips -------------------------------------------------------


def _shapes() -> list[tuple[str, JobResult]]:
    """The record shapes producers build: measured ok, a size that failed on its message
    (SizeMeasured.failure, as sessions and operations build it), a tampering failure, a
    cancelled or failed placeholder (no metrics), every mode, with and without conditions."""
    failed = SizeMeasured.failure(0, 1024, ValueError("the receiver could not open a genuine message"))
    shapes: list[tuple[str, JobResult]] = [
        ("operations ok", records.job(RUN_ID, 0, metrics={"encrypt": [1e-6, 2e-6, 3e-6]})),
        (
            "size failed validation",
            records.job(
                RUN_ID,
                1,
                mode="loopback",
                status=JobStatus.FAILED,
                error=failed.error,
                validation=Validation(checked=failed.checked, failed=failed.failed),
            ),
        ),
        (
            "tampering not rejected",
            records.job(
                RUN_ID,
                2,
                status=JobStatus.FAILED,
                error="tampered payload not rejected",
                validation=Validation(checked=30, failed=0, tamper_tried=5, tamper_rejected=4),
                metrics={"encrypt": [1e-6, 2e-6]},
            ),
        ),
        ("cancelled placeholder", records.job(RUN_ID, 3, status=JobStatus.CANCELLED, error="cancelled by the user")),
        ("failed placeholder", records.job(RUN_ID, 4, status=JobStatus.FAILED, error="the child died")),
        (
            "loopback over a link",
            records.job(
                RUN_ID, 5, mode="loopback", link=_link(), metrics={"rtt": [1e-3, 2e-3], "network": [1e-6, 1e-4]}
            ),
        ),
        ("load at the knee", _load_job(load(list(KNEE_STEPS)), index=6)),
        ("load at every limit", _load_job(_max_load(), index=7)),
        (
            "load with no step kept up",
            _load_job(
                Load(clients=1, server_workers=1, steps=(_step(50.0, 100, 10, errors=90),), duration_s=2.0),
                index=8,
            ),
        ),
        ("the shortest samples", records.job(RUN_ID, 9, metrics={"hash": [1e-9, 1e-9, 2e-9]})),
        (
            "timestamps at the range's ends",
            records.job(RUN_ID, 10, started="1970-01-01T00:00:00+00:00", finished="2199-12-31T23:59:59.999+00:00"),
        ),
    ]
    return shapes


def test_a_size_that_failed_on_its_message_counts_it_checked() -> None:
    # failed=1, checked=0 was stored and then read back as a damaged row.
    measured = SizeMeasured.failure(2, 4096, ValueError("boom"))
    assert (measured.checked, measured.failed) == (1, 1)
    assert measured.error == "ValueError: boom"
    data = _document(records.job(RUN_ID, 0, status="failed", validation=Validation(checked=0, failed=1)))
    assert "jobs[0].validation.failed: expected at most checked (0), got 1" in _refusal(data)


@pytest.mark.parametrize(("name", "job"), _shapes(), ids=[name for name, _ in _shapes()])
def test_every_written_shape_round_trips_through_the_store_and_an_export(
    name: str, job: JobResult, tmp_path: Path
) -> None:
    run = records.run(RUN_ID, [job], started=STARTED, finished="2026-04-01T12:05:00.000+00:00")
    with Store(tmp_path / "s.sqlite3") as store:
        store.add_run(run)
        back = store.load_run(RUN_ID)
        assert back.damaged == [] and store.damaged_rows() == []
    assert back.jobs[0].to_dict() == job.to_dict()
    exported = parse_results_text(results.to_json(run), "export.json")
    assert exported.jobs[0].to_dict() == job.to_dict()


# --- 3. times: aware and in range, on import and on load; deleting a run -------------------


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("finished", "2026-04-01T12:05:00"),  # no UTC offset: naive minus aware in the window
        ("started", "2026-04-01 12:00:00"),
        ("finished", "9999-12-31T23:59:59-23:59"),  # OverflowError in History and the report
        ("started", "0001-01-01T00:00:00+23:59"),
        ("started", "1969-12-31T23:59:59+00:00"),
        ("finished", "2200-01-01T00:00:00+00:00"),
        ("started", "yesterday"),
        ("finished", ""),
    ],
)
def test_an_import_with_a_time_no_run_can_carry_is_refused(where: str, value: str) -> None:
    data = _document(records.job(RUN_ID, 0, metrics={"encrypt": [1e-6, 2e-6]}))
    data["run"][where] = value
    message = _refusal(data)
    assert message.startswith(f"f.json: run.{where}: expected an ISO 8601 time with a UTC offset, from 1970")
    assert json.dumps(value)[1:-1][:20] in message


def test_a_job_time_without_an_offset_is_refused_too() -> None:
    data = _document(records.job(RUN_ID, 0, started="2026-04-01T12:00:01"))
    assert "jobs[0].started: expected an ISO 8601 time with a UTC offset" in _refusal(data)


def _store_with_bad_times(path: Path) -> None:
    with Store(path) as store:
        store.add_run(records.run("good", [records.job("good", 0)], started=STARTED, finished=STARTED))
        store.add_run(records.run("naive", [records.job("naive", 0)], started=STARTED, finished=STARTED))
        store.add_run(records.run("far", [records.job("far", 0)], started=STARTED, finished=STARTED))
    db = sqlite3.connect(path)
    with db:  # what an older version's import let in, or a hand edit
        db.execute("UPDATE runs SET finished = '2026-04-01T12:05:00' WHERE id = 'naive'")
        db.execute("UPDATE runs SET started = '9999-12-31T23:59:59-23:59' WHERE id = 'far'")
    db.close()


def test_a_stored_time_no_run_can_carry_reads_as_unknown_and_is_named(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    _store_with_bad_times(path)
    with Store(path) as store:
        summaries = {s.id: s for s in store.list_runs()}
        assert (summaries["naive"].finished, summaries["far"].started) == (None, "")
        assert summaries["good"].finished == STARTED
        far = store.load_run("far")
        assert far.started == "" and far.jobs[0].status == JobStatus.OK  # its jobs stay readable
        assert far.damaged == [
            "run record: started: expected an ISO 8601 time with a UTC offset, from 1970 to before 2200 "
            "(e.g. 2024-05-01T12:00:00+00:00), got '9999-12-31T23:59:59-23:59'"
        ]
        problems = store.damaged_rows()
    assert len(problems) == 2
    assert any(p.startswith("run naive: finished: expected an ISO 8601 time") for p in problems)
    assert any(p.startswith("run far: started: expected an ISO 8601 time") for p in problems)


def test_store_names_the_runs_with_bad_times_and_delete_removes_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "s.sqlite3"
    _store_with_bad_times(path)
    assert cli_main(["store", "--store", str(path)]) == 1
    err = capsys.readouterr().err
    assert "2 damaged row(s): run " in err and "finished: expected an ISO 8601 time with a UTC offset" in err
    # The report of such a run works (it failed with OverflowError).
    assert cli_main(["report", "far", "--store", str(path), "--markdown", str(tmp_path / "r.md")]) == 0
    capsys.readouterr()
    assert cli_main(["delete", "naive", "far", "--store", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"deleted run naive “p” (1 jobs) from {path}" in out and "deleted run far" in out
    assert cli_main(["store", "--store", str(path)]) == 0
    assert capsys.readouterr().out.strip() == f"{path}: sound, 1 runs"


def test_delete_resolves_every_id_before_deleting_any(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.sqlite3"
    with Store(path) as store:
        for run_id in ("20260101-a", "20260101-b", "other"):
            store.add_run(records.run(run_id, [records.job(run_id, 0)]))
    assert cli_main(["delete", "other", "nope", "--store", str(path)]) == 2
    assert "no run with id 'nope'" in capsys.readouterr().err
    assert cli_main(["delete", "other", "20260101-", "--store", str(path)]) == 2
    assert "ambiguous (2 runs match)" in capsys.readouterr().err
    with Store(path) as store:
        assert {s.id for s in store.list_runs()} == {"20260101-a", "20260101-b", "other"}
    assert cli_main(["delete", "20260101-b", "--store", str(path)]) == 0
    with Store(path) as store:
        assert {s.id for s in store.list_runs()} == {"20260101-a", "other"}


def test_delete_refuses_a_run_still_being_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.sqlite3"
    with Store(path) as store:
        store.begin_run(records.run("live", status="running"))  # holds the run's lock, as a run does
        try:
            assert cli_main(["delete", "live", "--store", str(path)]) == 2
            assert "run live is still running" in capsys.readouterr().err
            assert [s.id for s in store.list_runs()] == ["live"]
        finally:
            store.finish_run("live", "finished", STARTED)
    assert cli_main(["delete", "live", "--store", str(path)]) == 0


def test_a_stored_job_row_with_a_negative_time_is_damaged_not_shown(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    with Store(path) as store:
        store.add_run(records.run(RUN_ID, [records.job(RUN_ID, 0, metrics={"encrypt": [1e-6, 2e-6, 3e-6]})]))
    db = sqlite3.connect(path)
    row = json.loads(db.execute("SELECT result FROM jobs").fetchone()[0])
    row["metrics"]["encrypt"]["min"] = -4.98e-5
    with db:
        db.execute("UPDATE jobs SET result = ?", (json.dumps(row),))
    db.close()
    with Store(path) as store:
        run = store.load_run(RUN_ID)
        assert run.jobs[0].status == JobStatus.FAILED
        assert len(run.damaged) == 1
        assert run.damaged[0].startswith(f"job #0 ({RUN_ID}/0): result.metrics.encrypt.min: ")
        assert "-4.98e-05" in run.damaged[0]


def test_check_job_on_a_store_row_refuses_an_impossible_load() -> None:
    job = _load_job(load(list(KNEE_STEPS))).to_dict()
    job["load"]["knee_per_s"] = 1e15
    with pytest.raises(ResultsDataError) as caught:
        check_job(job, "result")
    assert str(caught.value).startswith("result.load.knee_per_s: expected one of the steps' achieved rates")


def test_the_window_s_readers_of_run_times_take_a_store_with_bad_times(tmp_path: Path) -> None:
    # The presets' durations (the Presets menu, the pre-run question) subtracted a naive time
    # from an aware one, and History's local time overflowed on year 9999 at -23:59: the
    # window did not start. Both read `list_runs`, which now gives such a time as unknown.
    from app.gui.config.presets import last_durations
    from app.gui.history.compare_dialog import local_time

    path = tmp_path / "s.sqlite3"
    _store_with_bad_times(path)
    assert last_durations(path) == {"p": 0.0}  # the good run's; the others have no duration
    with Store(path) as store:
        shown = {s.id: (local_time(s.started), local_time(s.finished)) for s in store.list_runs()}
    assert shown["far"][0] == "-" and shown["naive"][1] == "-"


@pytest.mark.parametrize("command", ["import", "report", "compare"])
def test_the_faces_refuse_a_file_with_a_naive_time_in_one_line(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _document(records.job(RUN_ID, 0, metrics={"encrypt": [1e-6, 2e-6]}))
    data["run"]["finished"] = "2026-04-01T12:05:00"
    path = tmp_path / "naive.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    store = ["--store", str(tmp_path / "s.sqlite3")]
    argv = {
        "import": ["import", str(path), *store],
        "report": ["report", str(path), "--markdown", str(tmp_path / "r.md"), *store],
        "compare": ["compare", str(path), str(path), *store],
    }[command]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert f"{path}: run.finished: expected an ISO 8601 time with a UTC offset" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    with Store(tmp_path / "s.sqlite3") as stored:
        assert stored.list_runs() == []  # nothing imported


# --- a results file larger than the app reads back ----------------------------------------------


def test_an_export_larger_than_the_read_bound_is_written_and_said_at_once(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A run with more samples than a 512 MiB file holds (some 14 million) exported fine,
    then `import`, `report` and `compare` refused the file. The export says so when it is
    written, naming the store as where to report it from; just under the bound is silent."""
    run = records.run("20261126-010203-abcdef", [records.job()])
    size = len(results.to_json(run).encode())
    target = tmp_path / "r.json"
    monkeypatch.setattr(results, "MAX_RESULTS_FILE_BYTES", size)
    export(ExportFormat.JSON, run, target)  # exactly at the bound: read back
    assert results.load_results_file(target).id == run.id
    monkeypatch.setattr(results, "MAX_RESULTS_FILE_BYTES", size - 1)
    with pytest.raises(ExportTooLarge, match=r"r\.json: written \(0 MiB\), but over the 0 MiB results file"):
        export(ExportFormat.JSON, run, target)
    assert json.loads(target.read_text())["run"]["id"] == run.id  # written all the same
    said: list[str] = []
    assert write_all([(target, lambda: export(ExportFormat.JSON, run, target))], said.append) == [target]
    assert run.id in said[0] and "from the store by its id" in said[0]


# --- free text: bounded on import and load, and every report renders the longest allowed ---------
# Before: a 1.6-million-character label imported, and `report --pdf` of it never finished;
# a 1-million-character error took the PDF 28 s, a 2 MB description 14 s.


def _texts_at(limit_offset: int) -> list[tuple[str, Any]]:
    """(where, mutation) pairs setting each bounded text of a results document to its bound + offset."""
    from app.core.profile.model import MAX_DESCRIPTION_CHARS, MAX_LABEL_CHARS
    from app.core.results.check import MAX_JOB_LABEL_CHARS
    from app.core.results.check_fields import MAX_TEXT_CHARS

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
    data = _document(records.job(RUN_ID, 0, metrics={"encrypt": [1e-6, 2e-6, 3e-6]}))
    at_bound(data)
    _accepted(data)
    _, past = _texts_at(1)[index]
    past(data)
    refusal = _refusal(data)
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
    from app.core.profile.model import MAX_LABEL_CHARS
    from app.core.profile.resolve import resolve_jobs
    from app.core.results.check import MAX_JOB_LABEL_CHARS

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
    _accepted(_document(records.job(RUN_ID, 0, label=resolved.label)))


def _longest_texts_run() -> results.RunResult:
    from app.core.profile.model import MAX_DESCRIPTION_CHARS, MAX_LABEL_CHARS
    from app.core.results.check import MAX_JOB_LABEL_CHARS
    from app.core.results.check_fields import MAX_TEXT_CHARS

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

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
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hdrh.histogram import HdrHistogram
from hypothesis import given, settings
from hypothesis import strategies as st

from app.cli.exports import write_all
from app.core.contracts.events import SizeMeasured
from app.core.load import generator as load_generator
from app.core.load.generator import MIN_DRAIN_S, sample_stride
from app.core.load.sweep import sweep_rates
from app.core.records.job_conditions import (
    MAX_QUEUE_BYTES,
    MAX_QUEUE_PACKETS,
    Link,
    Load,
    LoadGeneratorPlace,
    LoadStep,
)
from app.core.records.job_records import Validation
from app.core.records.load_histogram import HISTOGRAM_RANGE, max_histogram_chars
from app.core.results import model as results
from app.core.results.check_fields import MAX_TEXT_CHARS
from app.core.results.model import JobResult, parse_results_text
from app.core.settings.links import MAX_DELAY_MS, MAX_RATE_KBIT
from app.core.settings.load import (
    MAX_CLIENTS,
    MAX_CLOCK_OFFSET_S,
    MAX_CLUSTER_ADDRESS_CHARS,
    MAX_DURATION_S,
    MAX_GENERATORS,
    MAX_HOST_CHARS,
    MAX_RATE_PER_S,
    MAX_SERVER_WORKERS,
    MAX_STEPS,
    MAX_WARMUP_S,
    schedule_share,
    split_rate,
    step_schedule,
)
from app.core.settings.profile import MAX_MESSAGE_SIZE, MAX_SAMPLES
from app.core.store.store import Store
from app.core.vocab import ExportFormat, JobStatus
from app.report.exporters import ExportTooLarge, export
from tests.helpers import records, written
from tests.helpers.loads import KNEE_STEPS, cluster_load, load
from tests.helpers.written import RUN_ID, STARTED

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
    step = load_generator.StepState(
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


@pytest.mark.parametrize("generators", [1, 2, 3, 7])
def test_generators_sharing_a_step_keep_at_most_max_samples_together(
    generators: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each generator used to keep up to MAX_SAMPLES of its own share: two at 2,500/s for
    # 404 s kept 505,000 each, a metric of 1,010,000 samples its own export refused. Now
    # they keep the places of the step's one schedule that one generator would.
    monkeypatch.setattr(load_generator, "MAX_SAMPLES", 10)
    warm, measured = 5, 25
    base = 1 << load_generator.STEP_SHIFT
    kept: list[float] = []
    counted = 0
    for k in range(generators):
        step = load_generator.StepState(
            histogram=HdrHistogram(*HISTOGRAM_RANGE),
            window_start=0,
            window_end=10**12,
            first_measured=warm,
            sample_every=sample_stride(measured),
            measured=measured,
            generators=generators,
            generator=k,
        )
        own = schedule_share(warm + measured, generators, k)
        for i in range(own):
            step.outstanding[base | i] = 0
        for i in range(own):
            # latency = the request's place in the schedule, to see which were kept
            load_generator.LoadGenerator._replied(None, step, base | i, 7, 0, i * generators + k)  # type: ignore[arg-type]
        kept += step.latencies
        counted += step.histogram.get_total_count()
    assert counted == measured
    assert sorted(round(x * 1e9) for x in kept) == list(range(warm, warm + measured, 3))


def _cluster_step(rate: float, sent: list[int], window: float | None) -> LoadStep:
    """A step of len(sent) generators, each having sent (and completed, in the window) its
    count. `window`: the step's, which its generators share; None: each its own, its count
    at its share of the rate (as each generator rounded its own share before)."""
    parts = tuple(
        replace(
            written.step(share, count, count, achieved=count / (window or count / share)),
            generator=k + 1,
        )
        for k, (share, count) in enumerate(zip(split_rate(rate, len(sent)), sent, strict=True))
    )
    total = sum(sent)
    return replace(
        written.step(rate, total, total, achieved=sum(part.achieved_per_s for part in parts)), generators=parts
    )


def _cluster_job(rate: float, duration: float, sent: list[int], shared: bool = True) -> JobResult:
    places = tuple(LoadGeneratorPlace(f"tcp://127.0.0.1:{40001 + k}", "h", 1, 0.0, 1e-4) for k in range(len(sent)))
    window = step_schedule(rate, 0.0, duration)[1] / rate if shared else None
    step = _cluster_step(rate, sent, window)
    the_load = Load(
        clients=len(sent),
        server_workers=1,
        steps=(step,),
        duration_s=duration,
        warmup_s=0.0,
        cluster="tcp://127.0.0.1:8786",
        generators=places,
    )
    return written.load_job(the_load)


@pytest.mark.parametrize(
    ("rate", "duration", "generators"), [(3.0, 1.0, 2), (153.5, 2.0, 2), (20.0, 0.1, 3), (1.0, 1.0, 3)]
)
def test_a_cluster_step_reads_back_with_the_schedule_its_generators_share(
    rate: float, duration: float, generators: int
) -> None:
    _, measured = step_schedule(rate, 0.0, duration)
    exact = [schedule_share(measured, generators, k) for k in range(generators)]
    written.accepted(written.document(_cluster_job(rate, duration, exact)))
    # Written before the generators shared one schedule: each rounded its own share. Those
    # runs read back too (they are in stores), one request more than even that does not.
    legacy = [max(1, round(duration * share)) for share in split_rate(rate, generators)]
    written.accepted(written.document(_cluster_job(rate, duration, legacy, shared=False)))
    most = max(measured, sum(legacy))
    over = [*legacy[:-1], legacy[-1] + most - sum(legacy) + 1]
    message = (
        f"jobs[0].load.steps[0].sent: expected at most {most} (a {duration:g} s window at {rate:g}/s), got {most + 1}"
    )
    assert message in written.refusal(written.document(_cluster_job(rate, duration, over, shared=False)))


@pytest.mark.parametrize(("generators", "address", "ok"), [(64, 512, True), (65, 512, False), (64, 513, False)])
def test_a_cluster_job_of_the_most_generators_and_the_longest_address_reads_back(
    generators: int, address: int, ok: bool
) -> None:
    # The profile's own limits (settings.load), not copies of them.
    assert (MAX_GENERATORS, MAX_CLUSTER_ADDRESS_CHARS) == (64, 512)
    job = _cluster_job(1000.0, 1.0, [schedule_share(1000, generators, k) for k in range(generators)])
    assert job.load is not None
    scheduler = "tcp://" + "h" * (address - len("tcp://:8786")) + ":8786"
    assert len(scheduler) == address
    job.load = replace(job.load, cluster=scheduler)
    data = written.document(job)
    if ok:
        assert written.accepted(data).jobs[0].load == job.load
    elif generators > MAX_GENERATORS:
        assert f"jobs[0].load.generators: expected at most {MAX_GENERATORS} generators" in written.refusal(data)
    else:
        assert "jobs[0].load.cluster: expected a scheduler address (at most 512 characters)" in written.refusal(data)


@pytest.mark.parametrize(
    ("key", "value", "ok"),
    [
        ("host", "h" * MAX_HOST_CHARS, True),
        ("host", "h" * (MAX_HOST_CHARS + 1), False),
        ("worker", "tls://" + "w" * (MAX_CLUSTER_ADDRESS_CHARS - 6), True),
        ("worker", "tls://" + "w" * (MAX_CLUSTER_ADDRESS_CHARS - 5), False),
        ("clock_offset_s", -MAX_CLOCK_OFFSET_S, True),
        ("clock_offset_s", MAX_CLOCK_OFFSET_S * 1.001, False),
        ("clock_uncertainty_s", MAX_CLOCK_OFFSET_S * 1.001, False),
    ],
)
def test_a_generators_place_reads_back_within_what_the_coordinator_writes(key: str, value: Any, ok: bool) -> None:
    """The coordinator cuts a worker's host name and address and bounds its clock where they
    enter (app.core.load.cluster.replies); the reader holds them to the same bounds."""
    job = written.load_job(cluster_load(rates=(400,)))
    data = written.document(job)
    data["jobs"][0]["load"]["generators"][0][key] = value
    if ok:
        assert written.accepted(data).jobs[0].load is not None
    else:
        assert f"jobs[0].load.generators[0].{key}: expected" in written.refusal(data)


def test_a_load_job_at_every_profile_limit_reads_back() -> None:
    job = written.load_job(written.max_load())
    assert written.accepted(written.document(job)).jobs[0].load == job.load


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
    data = written.document(written.load_job(written.max_load()))
    data["jobs"][0]["load"][field] = past
    assert f"jobs[0].load.{field}: expected {message}" in written.refusal(data)


def test_each_generator_s_start_reads_back_and_a_start_that_is_no_number_is_refused() -> None:
    """A cluster job's generators' records keep how late each began its share (negative:
    early), as the coordinator writes them; a step's own record has none."""
    job = written.load_job(cluster_load(rates=(400, 800), late_start=(2, 800)))
    data = written.document(job)
    read = written.accepted(data).jobs[0].load
    assert read == job.load and read is not None
    assert [[part.started_late_s for part in step.generators] for step in read.steps] == [[-0.25, -0.24], [-0.25, 0.08]]
    assert all("started_late_s" not in step for step in data["jobs"][0]["load"]["steps"])
    data["jobs"][0]["load"]["steps"][1]["generators"][1]["started_late_s"] = "late"
    assert "jobs[0].load.steps[1].generators[1].started_late_s: expected a finite number or null" in written.refusal(
        data
    )


def test_more_steps_than_a_profile_allows_are_refused() -> None:
    data = written.document(written.load_job(written.max_load()))
    steps = data["jobs"][0]["load"]["steps"]
    steps.append(copy.deepcopy(steps[0]))
    assert f"jobs[0].load.steps: expected at most {MAX_STEPS} steps" in written.refusal(data)


def test_an_offered_rate_past_the_profile_limit_is_refused_and_a_sweep_never_plans_one() -> None:
    data = written.document(written.load_job(written.max_load()))
    data["jobs"][0]["load"]["steps"][0]["offered_per_s"] = MAX_RATE_PER_S * 1.01
    assert "jobs[0].load.steps[0].offered_per_s: expected at most 1,000,000 requests/s" in written.refusal(data)
    # 64 workers at 0.1 us a request: an estimate of 640M/s.
    assert max(sweep_rates(MAX_SERVER_WORKERS / 1e-7)) <= MAX_RATE_PER_S


@pytest.mark.parametrize(("n", "ok"), [(MAX_SAMPLES, True), (MAX_SAMPLES + 1, False)])
def test_a_metric_of_max_samples_reads_back_and_one_more_is_refused(n: int, ok: bool) -> None:
    job = records.job(RUN_ID, 0, metrics={"encrypt": [1e-6 * (1 + (i % 7) / 10) for i in range(n)]})
    data = written.document(job)
    if ok:
        assert written.accepted(data).jobs[0].metrics["encrypt"].stats.n == n
    else:
        assert f"jobs[0].metrics.encrypt.n: expected an integer 1..{MAX_SAMPLES}" in written.refusal(data)


@pytest.mark.parametrize(("size", "ok"), [(MAX_MESSAGE_SIZE, True), (MAX_MESSAGE_SIZE + 1, False)])
def test_the_largest_message_size_reads_back_and_one_more_is_refused(size: int, ok: bool) -> None:
    data = written.document(records.job(RUN_ID, 0, message_size=size, metrics={"encrypt": [1.0, 2.0]}))
    if ok:
        assert written.accepted(data).jobs[0].message_size == size
    else:
        assert "jobs[0].message_size: expected an integer 0..1073741824" in written.refusal(data)


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
    assert written.accepted(written.document(job)).jobs[0].link == job.link


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
    assert f"jobs[0].link.{field}: expected" in written.refusal(written.document(job))


def _fullest_histogram(counts: list[int]) -> str:
    """A step's histogram with every bucket of its range holding the given counts."""
    histogram = HdrHistogram(*HISTOGRAM_RANGE)
    assert len(counts) == histogram.counts_len
    for i, count in enumerate(counts):
        histogram.counts[i] = count
    histogram.total_count = sum(counts)
    histogram.min_value, histogram.max_value = 1, HISTOGRAM_RANGE[1]
    return histogram.encode().decode("ascii")


@pytest.mark.parametrize("counts", ["largest", "incompressible"])
def test_the_fullest_histogram_a_step_can_write_fits_the_checkers_bound_and_reads_back(counts: str) -> None:
    # The bound follows from the range and precision (every counter a varint of the most
    # bytes, zlib gaining nothing); the longest a real step wrote, 15,408 characters at
    # 2,500/s for 404 s, was refused by the 10,000 every other text is held to.
    length = HdrHistogram(*HISTOGRAM_RANGE).counts_len
    rng = random.Random(7)
    values = (
        [(1 << 62) - i for i in range(length)]  # no varint shortens them
        if counts == "largest"
        else [rng.randrange(1 << 55, 1 << 62) for _ in range(length)]  # nor zlib
    )
    encoded = _fullest_histogram(values)
    most = max_histogram_chars()
    assert MAX_TEXT_CHARS < len(encoded) <= most
    if counts == "incompressible":
        assert len(encoded) > 0.9 * most  # the bound is the worst case, not far above it
    step = replace(written.step(100.0, 200, 200), histogram=encoded)
    job = written.load_job(Load(clients=1, server_workers=1, steps=(step,), duration_s=2.0))
    assert written.accepted(written.document(job)).jobs[0].load == job.load
    # One character more than any histogram of the range: refused, naming the field.
    data = written.document(job)
    data["jobs"][0]["load"]["steps"][0]["histogram"] = "A" * (most + 1)
    assert f"jobs[0].load.steps[0].histogram: expected text of at most {most:,} characters" in written.refusal(data)


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
        ("load at the knee", written.load_job(load(list(KNEE_STEPS)), index=6)),
        ("load at every limit", written.load_job(written.max_load(), index=7)),
        (
            "load with no step kept up",
            written.load_job(
                Load(clients=1, server_workers=1, steps=(written.step(50.0, 100, 10, errors=90),), duration_s=2.0),
                index=8,
            ),
        ),
        ("the shortest samples", records.job(RUN_ID, 9, metrics={"hash": [1e-9, 1e-9, 2e-9]})),
        (
            "tls13 handshakes",
            records.job(RUN_ID, 11, scheme="tls13", family="tls", mode="loopback", tls=records.tls_record()),
        ),
        (
            "tls13 handshakes resumed",
            records.job(
                RUN_ID,
                12,
                scheme="tls13",
                family="tls",
                tls=records.tls_record(resumed=True, signature=None, chain_bytes=(), chain_signatures=()),
            ),
        ),
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
    data = written.document(records.job(RUN_ID, 0, status="failed", validation=Validation(checked=0, failed=1)))
    assert "jobs[0].validation.failed: expected at most checked (0), got 1" in written.refusal(data)


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

"""Numbers no machine produces: refused where they come in, survived where they are shown.

Before: samples of 5e-324 s, or 1e18 s beside 1e-300 s, passed the results checker; the
PDF then failed with ZeroDivisionError in its log-axis code, `compare --json` printed
`Infinity` 213 times and the regression gate passed "inf× … within noise". Now:

- a time metric's samples and statistics must be durations a timed operation can take
  (1 ns to a day, `check_metrics.MIN_SAMPLE_SECONDS`/`MAX_SAMPLE_SECONDS`), on import, on
  `report`/`compare` of a file and on reading a store row, and the runner never writes
  one outside them (what it writes, it reads back);
- every face copes with any positive finite float anyway: the PDF's axes and charts, the
  window's plot axes, the compare statistics (a ratio that is not finite is no verdict,
  which neither passes nor fails the gate) and every JSON export (strict: never
  `Infinity`/`NaN`).
"""

from __future__ import annotations

import base64
import json
import math
import sqlite3
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage, QPainter

from app.cli.main import main as cli_main
from app.core.analysis import median_ratio
from app.core.analysis.compare import compare_runs, compare_sides
from app.core.results import model as results
from app.core.results.check import check_results
from app.core.results.check_metrics import MAX_SAMPLE_SECONDS, MIN_SAMPLE_SECONDS
from app.core.results.errors import ResultsDataError
from app.core.results.model import ResultsFileError, load_results_file
from app.core.statistics import stats
from app.core.store.store import Store
from app.report.model import BarChart, Histogram, LineChart, Series, StackedBars
from app.report.pdf.charts import paint_chart
from tests.helpers.report_runs import build_run

RUN_ID = "20261121-100400-hand01"
OTHER_ID = "20261121-110400-hand02"

#: Any positive finite float: subnormals (5e-324), the smallest normal, the largest float.
POSITIVE = st.floats(min_value=5e-324, max_value=sys.float_info.max, allow_nan=False, allow_infinity=False)
EXTREMES = [5e-324, 1e-320, sys.float_info.min, 1e-300, 1e-12, 1e-9, 1.0, 86_400.0, 1e18, 1e300, sys.float_info.max]


# --- documents ------------------------------------------------------------------------------------


def _document(run_id: str = RUN_ID, samples: list[float] | None = None, job: int | None = None) -> dict[str, Any]:
    """The hand run as a results document; with `samples`, every time metric of job `job`
    (all jobs when None) holds them, its statistics recomputed so that only magnitudes are wrong."""
    data = json.loads(results.to_json(build_run(run_id, "2026-11-21T10:04:00+00:00")))
    for j, entry in enumerate(data["jobs"]):
        for name, metric in entry["metrics"].items():
            # Twelve a side: enough for a verdict (app.core.analysis.evidence), so what these
            # tests see is the magnitude's effect, not the sample count's.
            values = samples if samples is not None and job in (None, j) else (metric["samples"] * 12)[:12]
            with np.errstate(all="ignore"):
                summary = stats.summarize(values).to_dict()
            summary.update({k: metric[k] for k in ("batch", "traced_peak_bytes") if k in metric})
            summary["samples"] = list(values)
            entry["metrics"][name] = summary
        entry["throughput_bytes_per_s"] = None
    return data


def _write(tmp_path: Path, name: str, data: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


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
        check_results(_document(samples=samples, job=0))
    assert named in str(refused.value), str(refused.value)
    assert "(1e-09 s to 86400 s, 1 ns to a day)" in str(refused.value)


def test_a_single_impossible_sample_is_named_by_its_index() -> None:
    data = _document()
    metric = data["jobs"][2]["metrics"]["encrypt"]
    metric["samples"][5] = 5e-324  # the statistics of the other seven still hold
    with pytest.raises(ResultsDataError) as refused:
        check_results(data)
    assert str(refused.value).startswith("jobs[2].metrics.encrypt.samples[5]: 5e-324 s is not a duration")


@pytest.mark.parametrize("value", [MIN_SAMPLE_SECONDS, MAX_SAMPLE_SECONDS], ids=["1ns", "a-day"])
def test_the_bounds_themselves_are_possible(value: float) -> None:
    check_results(_document(samples=[value] * 8, job=0))  # both ends of the range are accepted


def test_a_ci95_end_out_of_range_is_named() -> None:
    data = _document()
    data["jobs"][0]["metrics"]["keygen"]["ci95"] = [1e-300, 1e-6]
    with pytest.raises(ResultsDataError, match=r"jobs\[0\]\.metrics\.keygen\.ci95\[0\]: 1e-300 s"):
        check_results(data)


@pytest.mark.parametrize("command", ["report", "compare", "import"])
def test_every_reader_of_a_file_refuses_it_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    bad = _write(tmp_path, "tiny.json", _document(samples=[5e-324] * 8))
    good = _write(tmp_path, "good.json", _document(OTHER_ID))
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
        store.add_run(load_results_file(_write(tmp_path, "ok.json", _document())))
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
    run = _run(RUN_ID, None)
    run.jobs = [result]
    check_results(json.loads(results.to_json(run)))  # what it wrote reads back


# --- compare and the gate: a ratio that is not finite is no verdict ----------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.lists(POSITIVE, min_size=1, max_size=12), new=st.lists(POSITIVE, min_size=1, max_size=12))
def test_stats_compare_gives_finite_figures_or_no_verdict(base: list[float], new: list[float]) -> None:
    try:
        result = median_ratio.compare(base, new, resamples=50)
    except ValueError as exc:
        assert "no verdict" in str(exc) or "undefined" in str(exc), str(exc)
        return
    for value in (result.ratio, result.ci95_low, result.ci95_high):
        assert math.isfinite(value) and value > 0
    json.dumps(result.to_dict(), allow_nan=False)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    base=st.lists(st.lists(POSITIVE, min_size=1, max_size=5), min_size=2, max_size=3),
    new=st.lists(st.lists(POSITIVE, min_size=1, max_size=5), min_size=2, max_size=3),
)
def test_a_repeated_comparison_gives_finite_figures_or_no_verdict(
    base: list[list[float]], new: list[list[float]]
) -> None:
    from app.core.analysis.compare import compare_repeated

    try:
        result = compare_repeated(base, new, resamples=40)
    except ValueError as exc:
        assert "no verdict" in str(exc) or "undefined" in str(exc), str(exc)
        return
    assert all(math.isfinite(v) and v > 0 for v in (result.ratio, result.ci95_low, result.ci95_high))


def _run(run_id: str, samples: list[float] | None) -> results.RunResult:
    """A run as the app holds it (the checker bypassed: the faces must cope on their own)."""
    return results.RunResult.from_dict(_document(run_id, samples))


@pytest.mark.parametrize(
    "samples",
    [[5e-324] * 12, [1e18 if i % 2 else 1e-300 for i in range(12)], [1e300] * 8],
    ids=["subnormal", "1e18-beside-1e-300", "1e300"],
)
def test_compare_of_extreme_runs_has_strict_json_and_no_verdict_where_no_ratio(samples: list[float]) -> None:
    for base, new in ((_run(RUN_ID, samples), _run(OTHER_ID, None)), (_run(RUN_ID, None), _run(OTHER_ID, samples))):
        comparison = compare_runs(base, new)
        text = json.dumps(comparison.to_dict(), allow_nan=False)  # raises on Infinity/NaN anywhere
        assert "Infinity" not in text
        for _, metric in comparison.metrics:
            c = metric.comparison
            if c is not None:
                assert all(math.isfinite(v) and v > 0 for v in (c.ratio, c.ci95_low, c.ci95_high))
            if metric.undecided:
                assert metric.verdict == "not comparable" and "no verdict" in (metric.reason or "")
        repeated = compare_sides([base, base], [new, new])
        json.dumps(repeated.to_dict(), allow_nan=False)


def test_a_subnormal_baseline_is_no_verdict_in_compare_and_the_gate_neither_passes_nor_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: 213 `Infinity` in the JSON and "inf× … within noise", exit 0 from the gate."""
    import app.cli.common as common

    base, new = _run(RUN_ID, [5e-324] * 12), _run(OTHER_ID, None)
    monkeypatch.setattr(common, "load_run_source", lambda text, store: {"base": base, "new": new}[text])
    monkeypatch.setattr("app.cli.commands.compare.load_run_source", common.load_run_source)
    assert cli_main(["compare", "base", "new", "--json"]) == 0
    out, _ = capsys.readouterr()
    data = json.loads(out, parse_constant=lambda name: pytest.fail(f"{name} in compare --json"))
    metrics = [m for p in data["comparisons"][0]["pairs"] for m in p["metrics"]]
    assert metrics and all(m["ratio"] is None and m["verdict"] == "not comparable" for m in metrics)
    assert all("no verdict" in m["reason"] for m in metrics)
    code = cli_main(["compare", "base+base+base", "new+new+new", "--fail-on-regression"])  # runs enough for the gate
    out, err = capsys.readouterr()
    assert code == 2, err
    assert "have no finite ratio, so the gate cannot decide" in err
    assert "inf" not in out.replace("info", "")
    assert "within noise" not in " ".join(line for line in out.splitlines() if "keygen" in line)


# --- the PDF's charts: any positive finite value draws ---------------------------------------------------


def _paint(chart: Any) -> None:
    image = QImage(480, 320, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    try:
        paint_chart(painter, QRectF(10, 10, 460, 300), chart)
    finally:
        painter.end()


def _charts(values: list[float]) -> list[Any]:
    n = len(values)
    labels = [f"job {i}" for i in range(n)]
    sizes = [float(64 << i) for i in range(n)]
    ordered = sorted(values)
    edges = ordered if len(set(ordered)) == n and n > 1 else [ordered[0] * (1 + i) for i in range(2)]
    return [
        BarChart("bars", labels, values, [v / 2 for v in values], [v * 2 for v in values]),
        BarChart("log bars", labels, values, [v / 2 for v in values], [min(v * 2, v) for v in values], log=True),
        LineChart("lines", "size", "B", "time", "s", [Series("a", sizes, values)], log_x=True, log_y=True),
        LineChart("linear", "security", "bits", "time", "s", [Series("a", list(range(n)), values)]),
        LineChart("x log", "time", "s", "time", "s", [Series("a", values, values)], log_x=True, log_y=True),
        Histogram("samples", edges, [1] * (len(edges) - 1), median=ordered[n // 2]),
        StackedBars("round trip", labels, {"compute": values, "network": values[::-1]}),
    ]


@pytest.mark.parametrize("values", [[v] for v in EXTREMES] + [EXTREMES, [5e-324, 1e18], [1e-300, 1e18]])
def test_every_pdf_chart_draws_extreme_values(qapp: Any, values: list[float]) -> None:
    for chart in _charts(values):
        _paint(chart)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(values=st.lists(POSITIVE, min_size=1, max_size=6))
def test_every_pdf_chart_draws_any_positive_finite_values(qapp: Any, values: list[float]) -> None:
    for chart in _charts(values):
        _paint(chart)


@settings(max_examples=80, deadline=None)
@given(low=POSITIVE, high=POSITIVE)
def test_the_pdf_log_axis_spans_any_positive_range(qapp: Any, low: float, high: float) -> None:
    from app.report.pdf.charts.axes import make_log_axis
    from app.report.pdf.charts.context import Ctx

    image = QImage(200, 200, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    try:
        ctx = Ctx(painter, None, 8.0)
        for unit in ("s", "B", "bits"):
            axis = make_log_axis(ctx, min(low, high), max(low, high), unit, "x", 300.0, ctx.font(), horizontal=True)
            assert 0 < axis.lo < axis.hi < math.inf
            for value in (low, high, *axis.ticks, *axis.minor):
                assert math.isfinite(axis.frac(value))
            assert len(axis.ticks) <= 40 and len(axis.minor) <= 400
    finally:
        painter.end()


def test_a_report_of_extreme_samples_renders_when_handed_over_unchecked(qapp: Any, tmp_path: Path) -> None:
    """The faces do not rely on the checker: a run holding 5e-324 s and 1e18 s (as a newer
    or another tool's file might) still renders to Markdown and PDF."""
    from app.report.exporters import EXPORTERS, ExportFormat, ExportOptions

    run = _run(RUN_ID, [1e18 if i % 2 else 5e-324 for i in range(8)])
    baseline = _run(OTHER_ID, None)
    for kind, name in ((ExportFormat.MARKDOWN, "r.md"), (ExportFormat.PDF, "r.pdf")):
        EXPORTERS[kind].write(run, tmp_path / name, ExportOptions(baseline=baseline))
    assert (tmp_path / "r.pdf").stat().st_size > 0
    text = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "inf" not in text.replace("info", "").replace("Info", "")
    assert "nan" not in text.lower().replace("nanosec", "")


def test_results_json_is_strict_on_export() -> None:
    run = _run(RUN_ID, None)
    run.jobs[0].metrics["keygen"].samples[0] = math.inf
    with pytest.raises(ValueError, match="not JSON compliant"):
        results.to_json(run)


def test_load_results_file_names_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path, "x.json", _document(samples=[2e5] * 8, job=1))
    with pytest.raises(ResultsFileError, match=r"x\.json: jobs\[1\]\.metrics\.\w+\.min: 200000\.0 s"):
        load_results_file(path)


# --- the window's plots (pyqtgraph): any positive finite value draws ------------------------------------


@pytest.mark.parametrize(
    "values",
    [[5e-324] * 6, [1e18, 1e-300, 1e18, 1e-300, 2e-300, 1e17], EXTREMES[:-2], [1e-9, 86_400.0, 1e-9, 86_400.0]],
    ids=["subnormal", "1e18-beside-1e-300", "every-extreme", "the-bounds"],
)
def test_every_plot_of_the_window_draws_extreme_values(qtbot: Any, values: list[float]) -> None:
    from app.gui.plots.panel import PlotsPanel
    from tests.helpers import records

    panel = PlotsPanel()
    qtbot.addWidget(panel)
    panel.resize(700, 450)
    panel.show()
    qtbot.waitExposed(panel)
    jobs = [
        records.job("run", 0, 64, {"encrypt": values, "decrypt": [2e-6] * len(values)}),
        records.job("run", 1, 4096, {"encrypt": [v * 0.5 or v for v in values], "decrypt": values}),
    ]
    panel.begin_job(0, "job")
    panel.add_samples(0, "encrypt", values)
    panel.refresh()
    panel.show_results(jobs)
    panel.select_result(jobs[0])
    for log in (False, True):
        panel._samples_log.setChecked(log)
        panel._cmp_log.setChecked(log)
        for i in range(panel.tabs.count()):
            panel.tabs.setCurrentIndex(i)
            assert not panel.grab().isNull()


# --- an authenticated peer's times: they fit the round trip that contains them -------------------------


def test_on_one_machine_a_receiver_time_may_not_pass_its_round_trip_by_a_nanosecond() -> None:
    from app.core.session.protocol import PeerLied, check_within

    assert check_within("open time", 1_000_000, 1_000_000, shared_clock=True) == 1_000_000
    with pytest.raises(
        PeerLied, match=r"open time = 1000001 ns, longer than the 1000000 ns round trip that contains it$"
    ):
        check_within("open time", 1_000_001, 1_000_000, shared_clock=True)
    # Before: anything up to 5 ms (+1 %) beyond was believed.
    with pytest.raises(PeerLied):
        check_within("open time", 1_000_000 + 4_000_000, 1_000_000, shared_clock=True)


def test_a_remote_receiver_time_may_pass_it_only_by_what_two_clocks_disagree() -> None:
    from app.core.session.protocol import PeerLied, check_within, clock_slack_ns

    slack = clock_slack_ns(1_000_000, shared_clock=False)
    assert slack == 1_000 + 2_000  # 1000 ppm of 1 ms, and one 1 µs tick of each clock
    assert check_within("open time", 1_000_000 + slack, 1_000_000, shared_clock=False)
    with pytest.raises(PeerLied, match=r"by more than two clocks can disagree \(3000 ns\)"):
        check_within("open time", 1_000_000 + slack + 1, 1_000_000, shared_clock=False)


@pytest.mark.parametrize(
    ("receiver", "round_trip", "floor", "named"),
    [
        (1_000_001, 1_000_000, None, "the network time would be -1 ns"),
        (10_000, 60_000, 600_000, "network time of 50000 ns (round trip 60000 ns, receiver 10000 ns) is under 10%"),
    ],
    ids=["negative-network", "far-under-the-floor"],
)
def test_a_network_time_is_never_negative_nor_far_under_the_floor(
    receiver: int, round_trip: int, floor: int | None, named: str
) -> None:
    from app.core.session.protocol import PeerLied, check_network

    with pytest.raises(PeerLied, match=named.replace("(", r"\(").replace(")", r"\)")):
        check_network(receiver, round_trip, floor)


def test_a_network_time_a_hair_under_the_floor_is_kept() -> None:
    from app.core.session.protocol import check_network

    assert check_network(10_000, 60_000, 60_000) == 50_000  # 0.83 of the floor: noise, not a lie
    assert check_network(10_000, 60_000, 500_000) == 50_000  # exactly a tenth
    assert check_network(0, 0, None) == 0


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ('{"rss_bytes": Infinity}', "X rss_bytes = Infinity is not a finite JSON number"),
        ('{"tcp_info": {"rtt_var_s": -Infinity}}', "X tcp_info.rtt_var_s = -Infinity is not"),
        ('{"a": [1, 2, NaN]}', "X a[2] = NaN is not"),
        ('{"cpu_seconds": 1e400}', "X cpu_seconds = 1e400 is not"),
        ("NaN", "X the document = NaN is not"),
    ],
)
def test_a_non_finite_number_from_a_peer_names_its_field(text: str, named: str) -> None:
    from app.core.session.protocol import PeerLied, decode_json

    with pytest.raises(PeerLied) as refused:
        decode_json(text.encode(), "X")
    assert str(refused.value).startswith(named), str(refused.value)


def test_a_non_finite_number_in_a_job_description_names_its_field() -> None:
    from app.core.session.protocol import JobRejected, parse_job

    body = b'{"scheme": "aes-gcm", "backend": "cryptography", "message_sizes": [64, Infinity]}'
    with pytest.raises(
        JobRejected, match=r"^job description message_sizes\[1\] = Infinity is not a finite JSON number$"
    ):
        parse_job(body)


def test_wall_seconds_on_one_clock_may_not_pass_the_senders_interval() -> None:
    from app.core.session.protocol import PeerLied, parse_resources

    report = b'{"cpu_seconds": 0.01, "wall_seconds": 0.0105, "cpu_percent_mean": 95.0, "rss_bytes": 1000}'
    assert parse_resources(report, 0.0105, shared_clock=True)["wall_seconds"] == 0.0105
    with pytest.raises(PeerLied, match=r"wall_seconds = 0\.0105 is longer than the 0\.010000 s"):
        parse_resources(report, 0.01, shared_clock=True)  # 0.5 ms beyond: the old slack took 5 ms
    assert parse_resources(report, 0.01049, shared_clock=False)["wall_seconds"] == 0.0105  # within 1000 ppm + ticks


# --- a metric in any unit but seconds: refused, so the duration checks reach every metric -------------
# Before: the duration bounds and the no-negative-time rule ran only when `unit` was "s";
# a file saying "ms" (or "x") brought back negative times, 5e-324 s and a gate passing on
# "3.42e-318× faster", while every face showed the values as seconds anyway.


@pytest.mark.parametrize(
    ("unit", "shown"),
    [
        ("ms", '"ms"'),
        ("x", '"x"'),
        ("", '""'),
        ("S", '"S"'),
        ("µs", '"\\u00b5s"'),
        ("s ", '"s "'),
        ("B/s", '"B/s"'),
        (1, "1"),
    ],
    ids=["ms", "x", "empty", "capital", "micro", "trailing-space", "rate", "number"],
)
def test_a_metric_unit_the_app_never_writes_is_refused_naming_the_field(unit: Any, shown: str) -> None:
    data = _document()
    data["jobs"][1]["metrics"]["encrypt"]["unit"] = unit
    with pytest.raises(ResultsDataError) as refused:
        check_results(data)
    expected = f'expected "s", got {shown}' if isinstance(unit, str) else f"expected a string, got {shown}"
    assert str(refused.value) == f"jobs[1].metrics.encrypt.unit: {expected}"


@pytest.mark.parametrize("missing", [True, False], ids=["missing", "null"])
def test_a_metric_without_a_unit_is_refused(missing: bool) -> None:
    data = _document()
    metric = data["jobs"][0]["metrics"]["keygen"]
    if missing:
        del metric["unit"]
    else:
        metric["unit"] = None
    with pytest.raises(ResultsDataError, match=r"^jobs\[0\]\.metrics\.keygen\.unit: "):
        check_results(data)


@pytest.mark.parametrize(
    ("unit", "samples"),
    [("ms", [-5e-5] * 8), ("x", [5e-324] * 8), ("x", [1e18] * 8), ("ms", [0.0] * 8), ("us", [1e-300] * 8)],
    ids=["negative-ms", "subnormal-x", "1e18-x", "zero-ms", "tiny-us"],
)
def test_impossible_times_under_another_unit_are_refused_on_the_unit(unit: str, samples: list[float]) -> None:
    """The outside round's cases: with the unit fixed to seconds, the duration checks apply."""
    data = _document(samples=samples, job=0)
    for metric in data["jobs"][0]["metrics"].values():
        metric["unit"] = unit
    with pytest.raises(ResultsDataError) as refused:
        check_results(data)
    assert str(refused.value).startswith(f'jobs[0].metrics.keygen.unit: expected "s", got "{unit}"')
    for metric in data["jobs"][0]["metrics"].values():
        metric["unit"] = "s"
    with pytest.raises(ResultsDataError, match=r"^jobs\[0\]\.metrics\.keygen\.min: "):
        check_results(data)  # and in seconds, the times themselves are refused


@pytest.mark.parametrize("command", ["report", "compare", "import"])
def test_every_reader_of_a_file_refuses_another_unit_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    data = _document()
    for metric in data["jobs"][0]["metrics"].values():
        metric["unit"] = "ms"
    bad = _write(tmp_path, "ms.json", data)
    good = _write(tmp_path, "good.json", _document(OTHER_ID))
    store = ["--store", str(tmp_path / "s.db")]
    argv = {
        "report": ["report", str(bad), "--markdown", str(tmp_path / "r.md"), *store],
        "compare": [
            "compare",
            str(good),
            str(bad),
            "--fail-on-regression",
            "--json",
            *store,
        ],
        "import": ["import", str(bad), *store],
    }[command]
    code = cli_main(argv)
    out, err = capsys.readouterr()
    assert code == 2
    assert 'jobs[0].metrics.keygen.unit: expected "s", got "ms"' in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "regression" not in out and "faster" not in out  # no verdict drawn from the file
    assert not (tmp_path / "r.md").exists()


def test_a_store_row_with_another_unit_reads_as_damaged(tmp_path: Path) -> None:
    store_path = tmp_path / "s.db"
    with Store(store_path) as store:
        store.add_run(load_results_file(_write(tmp_path, "ok.json", _document())))
    with sqlite3.connect(store_path) as db:
        job_id, text = db.execute("SELECT id, result FROM jobs ORDER BY idx LIMIT 1").fetchone()
        row = json.loads(text)
        next(iter(row["metrics"].values()))["unit"] = "ms"
        db.execute("UPDATE jobs SET result = ? WHERE id = ?", (json.dumps(row), job_id))
    with Store(store_path) as store:
        run = store.load_run(RUN_ID)
        damaged = store.damaged_rows()
    assert run.jobs[0].status == "failed"
    assert 'unit: expected "s", got "ms"' in (run.jobs[0].error or "")
    assert len(damaged) == 1


def test_every_producer_summarises_its_metrics_in_seconds() -> None:
    """The checker's one unit is the producers' own: every `summarize(...)` call in app/
    gives no unit (the default) or the literal "s", and the default is "s"."""
    import ast
    import inspect

    from app.core.results.check_metrics import METRIC_UNIT

    assert inspect.signature(stats.summarize).parameters["unit"].default == METRIC_UNIT
    root = Path(__file__).resolve().parents[2] / "app"
    calls = 0
    for source in root.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name != "summarize" or not node.args:
                continue  # SizeMeasured.summarize() takes no samples: it calls stats.summarize itself
            calls += 1
            unit = (
                node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "unit"), None)
            )
            where = f"{source.relative_to(root.parent)}:{node.lineno}"
            assert unit is None or (isinstance(unit, ast.Constant) and unit.value == METRIC_UNIT), where
    assert calls >= 4  # runner, events (sessions, operations), load job, the E2 experiment


# --- a load step's achieved rate: its own completed requests and the warm-up's, no more ------------
# The outside round saw "sent 948, completed 0, errors 948, achieved 1,144/s" (1 M/s over a
# 1 Mbit/s link): honest, since the window's throughput counts the warm-up's replies it
# answered (the server's work in the window). Without a warm-up, no completed request
# leaves nothing to count: such a rate is refused.


def test_warm_up_replies_in_the_window_are_the_achieved_rate_of_a_step_whose_own_requests_failed() -> None:
    from hdrh.histogram import HdrHistogram

    from app.core.load.generator import LoadGenerator, StepState
    from app.core.records.load_histogram import HISTOGRAM_RANGE
    from app.core.session.protocol import Verdict

    step = StepState(HdrHistogram(*HISTOGRAM_RANGE), window_start=1_000, window_end=2_000, first_measured=10)
    step.outstanding = dict.fromkeys(range(20), 0)
    for ident in range(10):  # the warm-up's, answered inside the window
        LoadGenerator._replied(None, step, ident, 0, Verdict.OK, 1_500)  # type: ignore[arg-type]
    for ident in range(10, 20):  # the step's own, each refused
        LoadGenerator._replied(None, step, ident, 0, Verdict.ERROR, 1_600)  # type: ignore[arg-type]
    assert step.completed_in_window == 10 and step.histogram.get_total_count() == 0
    assert sum(step.refused.values()) == 10


def _errored_step_document(warmup_s: float, achieved: float) -> dict[str, Any]:
    """The outside round's step: 948 sent, 948 errors, none completed, in a 0.948 s window."""
    from app.core.records.job_conditions import Load, LoadStep
    from tests.helpers import records

    step = LoadStep(offered_per_s=1000.0, achieved_per_s=achieved, errors=948, latency_s={}, sent=948, completed=0)
    load = Load(clients=4, server_workers=1, steps=(step,), duration_s=0.948, warmup_s=warmup_s)
    job = records.job(RUN_ID, 0, mode="load", load=load)
    return json.loads(results.to_json(records.run(RUN_ID, [job], started="2026-11-21T10:04:00+00:00")))


@pytest.mark.parametrize(
    ("warmup_s", "achieved", "ok"),
    [(0.2, 212.0, True), (0.2, 213.0, False), (0.0, 1.0, True), (0.0, 1_144.3, False), (0.0, 3.0, False)],
    ids=["warm-up-backlog", "past-the-backlog", "rounding", "no-warm-up", "no-warm-up-small"],
)
def test_an_achieved_rate_without_completed_requests_needs_a_warm_up(
    warmup_s: float, achieved: float, ok: bool
) -> None:
    data = _errored_step_document(warmup_s, achieved)
    if ok:
        check_results(data)
        return
    with pytest.raises(ResultsDataError) as refused:
        check_results(data)
    assert str(refused.value).startswith("jobs[0].load.steps[0].achieved_per_s: expected at most "), str(refused.value)
    assert "(0 requests completed and " in str(refused.value)

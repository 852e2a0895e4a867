"""Damaged stored data: a results file with one field changed, a store row cut short.

Results files and store rows are input (docs/ARCHITECTURE.md, "Trust boundaries"). Before the
fix, `report` on a results file with one field changed (a string where a number was,
a missing key, a negative count) ended in a traceback in about 1 of 9 mutations, and
one job row cut short in an otherwise sound store made its whole run unreadable
while `cryptobench store` called the store sound. Now every results file is
checked on load (exit 2, one line naming the field path), and a damaged row is
found by `store` and shown as a failed job by `show`/`report`, next to the intact ones.
"""

from __future__ import annotations

import base64
import json
import math
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.cli.main import main as cli_main
from app.core.results import model as results
from app.core.results.model import ResultsFileError, load_results_file, parse_results_text
from app.core.store.store import Store
from tests.helpers.report_runs import build_run

RUN_ID = "20261121-100400-hand01"
#: The hand run's jobs kept for the mutations: an operations AEAD job, the loopback session,
#: the failed job and the hash job with a stability warning (every kind of block, few jobs:
#: each accepted mutation renders a whole report).
KEPT_JOBS = (0, 7, 8, 9)


def _document() -> dict[str, Any]:
    run = build_run(RUN_ID, "2026-11-21T10:04:00+00:00")
    data = json.loads(results.to_json(run))
    data["jobs"] = [data["jobs"][i] for i in KEPT_JOBS]
    for job in data["jobs"]:  # short sample lists keep the document small; n follows
        for metric in job["metrics"].values():
            metric["samples"] = metric["samples"][:8]
            metric["n"] = 8
            metric["outlier_indices"] = [i for i in metric["outlier_indices"] if i < 8]
            metric["outliers"] = len(metric["outlier_indices"])
    return data


BASE = _document()
BASE_TEXT = json.dumps(BASE)


def _paths(value: Any, loc: tuple[Any, ...] = (), *, items: int = 2) -> Iterator[tuple[Any, ...]]:
    """Every location in the document; arrays and objects contribute their first `items`
    items where they repeat one shape (metrics, samples, libraries), all jobs and all keys elsewhere."""
    if loc:
        yield loc
    limit = None if loc == ("jobs",) else items
    if isinstance(value, dict):
        keys = list(value)[:limit] if loc and loc[-1] in ("metrics", "libraries", "flags") else list(value)
        for key in keys:
            yield from _paths(value[key], (*loc, key), items=items)
    elif isinstance(value, list):
        for index, child in enumerate(value[:limit]):
            yield from _paths(child, (*loc, index), items=items)


#: All locations (for the property test) and a smaller set, still every field of every
#: kind of block, for the exhaustive one: each case runs the CLI.
PATHS = list(_paths(BASE, items=10_000))
FEW_PATHS = list(_paths(BASE, items=1))
MISSING = object()
REPLACEMENTS: dict[str, Any] = {
    "string": "x",
    "null": None,
    "negative": -1,
    "NaN": math.nan,
    "huge float": 1e308,
    "huge int": 10**30,
    "array": [],
    "object": {},
    "boolean": True,
    "lone surrogate": "\ud800",
    "missing": MISSING,
}


def _mutated(loc: tuple[Any, ...], value: Any) -> dict[str, Any]:
    data = json.loads(BASE_TEXT)  # a fresh copy, faster than deepcopy
    parent = data
    for part in loc[:-1]:
        parent = parent[part]
    if value is MISSING:
        if isinstance(parent, list):
            del parent[loc[-1]]
        else:
            del parent[loc[-1]]
    else:
        parent[loc[-1]] = value
    return data


def _report(tmp_path: Path, data: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    source = tmp_path / "mutated.json"
    source.write_text(json.dumps(data), encoding="utf-8")  # NaN as the NaN literal, "\ud800" escaped
    code = cli_main(
        [
            "report",
            str(source),
            "--markdown",
            str(tmp_path / "r.md"),
            "--csv",
            str(tmp_path / "r.csv"),
            "--store",
            str(tmp_path / "unused.sqlite3"),
        ]
    )
    return code, capsys.readouterr().err


def _assert_clean(code: int, err: str, what: str) -> None:
    assert code in (0, 2), f"{what}: exit {code}: {err}"
    if code == 2:
        assert err.count("\n") == 1 and err.startswith("cryptobench: error: "), f"{what}: {err!r}"
        assert "Traceback" not in err


@pytest.mark.exhaustive  # make test: test_any_value_anywhere_is_reported_or_refused, the same class drawn at random
def test_every_single_field_mutation_is_reported_or_refused() -> None:
    """Each location × each replacement (type swap, missing key, negative, NaN, huge,
    lone surrogate): the file loads and every exporter renders it, or it is refused with
    one line naming the file (what `report` prints with exit 2); never another exception.
    In process, the same calls `report` makes (the CLI path itself is the property test's)."""
    from app.report.content import build_report
    from app.report.markdown import render_markdown

    codes = {"rendered": 0, "refused": 0}
    for loc in FEW_PATHS:
        for kind, value in REPLACEMENTS.items():
            try:  # load_results_file after reading the file: what `report FILE` calls
                run = parse_results_text(json.dumps(_mutated(loc, value)), "mutated.json")
            except ResultsFileError as exc:
                assert "\n" not in str(exc) and str(exc).startswith("mutated.json: "), (loc, kind, str(exc))
                codes["refused"] += 1
                continue
            render_markdown(build_report(run))
            results.to_csv(run).encode("utf-8")
            results.to_json(run).encode("utf-8")
            codes["rendered"] += 1
    # Most mutations must be refused (the check is not a pass-through).
    assert codes["refused"] > 3 * codes["rendered"]


@pytest.mark.parametrize(
    ("loc", "value", "expected"),
    [
        (("jobs", 1, "metrics", "rtt", "n"), -1, "jobs[1].metrics.rtt.n: expected an integer 1..1000000, got -1"),
        (
            ("jobs", 0, "validation", "checked"),
            "100",
            'jobs[0].validation.checked: expected a non-negative integer, got "100"',
        ),
        (
            ("jobs", 0, "metrics", "encrypt", "median"),
            math.nan,
            "jobs[0].metrics.encrypt.median: expected a finite number, got NaN",
        ),
        (("jobs", 3, "status"), MISSING, "jobs[3].status: required field is missing"),
        (
            ("jobs", 0, "metrics", "keygen", "samples", 5),
            math.nan,
            "jobs[0].metrics.keygen.samples[5]: expected a finite number, got NaN",
        ),
        (
            ("jobs", 0, "metrics", "keygen", "samples", 6),
            True,
            "jobs[0].metrics.keygen.samples[6]: expected a finite number, got true",
        ),
        (
            ("run", "environment", "cpu", "governors"),
            5,
            "run.environment.cpu.governors: expected an array or null, got 5",
        ),
        (
            ("jobs", 0, "memory", "rss_peak_bytes"),
            "x",
            'jobs[0].memory.rss_peak_bytes: expected an object or null, got "x"',
        ),
        (
            ("jobs", 0, "label"),
            "\ud800",
            'jobs[0].label: text that cannot be written as UTF-8 (a lone surrogate), got "\\ud800"',
        ),
    ],
)
def test_refusal_names_the_file_and_the_field_path(
    tmp_path: Path, loc: tuple[Any, ...], value: Any, expected: str
) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(_mutated(loc, value)), encoding="utf-8")
    with pytest.raises(ResultsFileError) as caught:
        load_results_file(path)
    assert str(caught.value) == f"{path}: {expected}"


def test_the_unmutated_document_loads_and_round_trips(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(BASE), encoding="utf-8")
    run = load_results_file(path)
    assert json.loads(results.to_json(run)) == BASE


def test_a_real_export_of_every_job_kind_loads(tmp_path: Path) -> None:
    """The check must not refuse what the app writes: the full hand run, all 10 jobs."""
    path = tmp_path / "results.json"
    path.write_text(results.to_json(build_run(RUN_ID, "2026-11-21T10:04:00+00:00")), encoding="utf-8")
    assert len(load_results_file(path).jobs) == 10


SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(["\ud800", "\udfff", "x\x00y"]),
)
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=3), st.dictionaries(st.text(max_size=4), SCALARS, max_size=3))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(loc=st.sampled_from(PATHS), value=st.one_of(VALUES, st.just(MISSING)))
def test_any_value_anywhere_is_reported_or_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], loc: tuple[Any, ...], value: Any
) -> None:
    code, err = _report(tmp_path, _mutated(loc, value), capsys)
    _assert_clean(code, err, f"{loc} = {value!r}")


# --- the store: one damaged row ---------------------------------------------------------------


def _store_with_run(path: Path) -> None:
    run = build_run(RUN_ID, "2026-11-21T10:04:00+00:00")
    with Store(path) as store:
        store.begin_run(run)
        for job in run.jobs:
            store.add_job(run.id, job)
        store.finish_run(run.id, "finished", run.finished or "")


def _damage(path: Path, sql: str, *args: Any) -> None:
    db = sqlite3.connect(path)
    db.execute(sql, args)
    db.commit()
    db.close()


def _edit_row(path: Path, idx: int, edit: Any) -> None:
    db = sqlite3.connect(path)
    (text,) = db.execute("SELECT result FROM jobs WHERE idx = ?", (idx,)).fetchone()
    data = json.loads(text)
    edit(data)
    db.execute("UPDATE jobs SET result = ? WHERE idx = ?", (json.dumps(data), idx))
    db.commit()
    db.close()


def _nan_sample(data: dict[str, Any]) -> None:
    metric = data["metrics"]["encrypt"]
    samples = np.frombuffer(base64.b64decode(metric["samples_f64"]), dtype="<f8").copy()
    samples[3] = math.nan
    metric["samples_f64"] = base64.b64encode(samples.tobytes()).decode("ascii")


DAMAGE: dict[str, Any] = {
    "row cut short": lambda p: _damage(p, "UPDATE jobs SET result = substr(result, 1, 300) WHERE idx = 2"),
    "not JSON": lambda p: _damage(p, "UPDATE jobs SET result = ? WHERE idx = 2", b"\x00\xff garbage"),
    "wrong type": lambda p: _edit_row(p, 2, lambda d: d.update(message_size="1 KiB")),
    "NaN sample": lambda p: _edit_row(p, 2, _nan_sample),
    "samples cut short": lambda p: _edit_row(
        p, 2, lambda d: d["metrics"]["encrypt"].update(samples_f64=d["metrics"]["encrypt"]["samples_f64"][:40])
    ),
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_a_damaged_job_row_is_found_and_the_rest_of_its_run_reads(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "results.sqlite3"
    _store_with_run(path)
    DAMAGE[kind](path)
    job_id = f"{RUN_ID}/2"

    # `store` finds it: SQLite's own check cannot, the page is sound.
    assert cli_main(["store", "--store", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "1 damaged row(s)" in err and job_id in err, err

    # The run loads: nine intact jobs as stored, the damaged one a failed job naming the damage.
    with Store(path) as store:
        run = store.load_run(RUN_ID)
    assert len(run.jobs) == 10
    damaged = run.jobs[2]
    assert damaged.status == "failed" and damaged.id == job_id
    assert damaged.error is not None and "damaged" in damaged.error
    assert len(run.damaged) == 1 and job_id in run.damaged[0]
    intact = build_run(RUN_ID, "2026-11-21T10:04:00+00:00")
    for job, expected in zip(run.jobs, intact.jobs):
        if job is not damaged:
            assert job.to_dict() == expected.to_dict()

    # `show` and `report` show the intact jobs and name the damaged one.
    assert cli_main(["show", RUN_ID, "--store", str(path)]) == 0
    out, err = capsys.readouterr()
    assert "RSA-KEM-2048" in out and "damaged" in out
    assert job_id in err and "Traceback" not in err
    report = tmp_path / "report.md"
    assert cli_main(["report", RUN_ID, "--store", str(path), "--markdown", str(report)]) == 0
    text = report.read_text(encoding="utf-8")
    assert "ML-KEM-768" in text and "the stored result of this job is damaged" in text


def test_a_row_cut_short_keeps_its_name(tmp_path: Path) -> None:
    """A row is written with its id, scheme and label first: the placeholder says which job it was."""
    path = tmp_path / "results.sqlite3"
    _store_with_run(path)
    DAMAGE["row cut short"](path)
    with Store(path) as store:
        job = store.load_run(RUN_ID).jobs[2]
    assert (job.label, job.message_size, job.family) == ("ChaCha20-Poly1305 [cryptography]", 1024, "aead")


def test_a_damaged_run_record_keeps_the_jobs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "results.sqlite3"
    _store_with_run(path)
    _damage(path, "UPDATE runs SET environment = substr(environment, 1, 50)")
    with Store(path) as store:
        run = store.load_run(RUN_ID)
        assert len(store.damaged_rows()) == 1
    intact = build_run(RUN_ID, "2026-11-21T10:04:00+00:00")
    assert run.environment == {} and [j.to_dict() for j in run.jobs] == [j.to_dict() for j in intact.jobs]
    assert run.damaged == ["run record: environment: JSON cut short (50 characters)"]
    assert cli_main(["store", "--store", str(path)]) == 1
    assert "environment: JSON cut short" in capsys.readouterr().err


def test_a_sound_store_stays_sound(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "results.sqlite3"
    _store_with_run(path)
    assert cli_main(["store", "--store", str(path)]) == 0
    assert "sound, 1 runs" in capsys.readouterr().out
    with Store(path) as store:
        assert store.damaged_rows() == [] and store.load_run(RUN_ID).damaged == []


def test_the_window_opens_a_run_with_a_damaged_row(qtbot: Any, tmp_path: Path) -> None:
    from app.gui.history.panel import HistoryPanel

    path = tmp_path / "results.sqlite3"
    _store_with_run(path)
    DAMAGE["row cut short"](path)
    panel = HistoryPanel(path)
    qtbot.addWidget(panel)
    run = panel.load_run(RUN_ID)
    assert run is not None and len(run.jobs) == 10 and run.jobs[2].status == "failed"
    assert not panel.message_label.isHidden()
    assert f"{RUN_ID}/2" in panel.message_label.text() and "other jobs are intact" in panel.message_label.text()


def test_a_stored_profile_with_text_that_cannot_be_encoded_is_damaged_not_fatal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run stored by an older version, before profiles refused lone surrogates: its
    description used to break `report --markdown`; now the run reports without it."""
    path = tmp_path / "results.sqlite3"
    _store_with_run(path)
    _damage(path, "UPDATE runs SET profile = ?", json.dumps({"name": "old", "description": "x\ud800"}))
    report = tmp_path / "report.md"
    assert cli_main(["report", RUN_ID, "--store", str(path), "--markdown", str(report)]) == 0
    assert "profile.description: text that cannot be written as UTF-8" in capsys.readouterr().err
    assert "RSA-KEM-2048" in report.read_text(encoding="utf-8")

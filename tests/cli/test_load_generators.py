"""What the command line prints about a load job whose generators ran on Dask workers: where
each ran, each one's figures per step, and the incomplete steps (app/cli/terminal/load_printing.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli.main import main
from app.core.load.verdict import step_calls
from app.core.records.job_conditions import StepLimit
from app.core.results.model import RunResult
from app.core.store.store import Store
from app.report.load_generator_words import signed_seconds
from app.report.units import format_seconds
from tests.helpers.loads import (
    CLUSTER,
    INCOMPLETE_REASON,
    KNEE_STEPS,
    STARTED_LATE_S,
    cluster_load,
    load,
    load_job,
    load_run,
)
from tests.helpers.terminal import printed_summary

LABEL = "X25519 + HKDF-SHA256 + AES-256-GCM [cryptography]"


def _cluster_run(**kwargs: object) -> RunResult:
    the_load = cluster_load(**kwargs)  # type: ignore[arg-type]
    return load_run([load_job(0, LABEL, the_load, family="key-agreement", scheme="x25519", pq=0)])


def test_piped_each_generator_has_one_line_per_step_with_its_own_figures() -> None:
    run = _cluster_run(rates=(400, 800, 1600), generators=3, late=(1, 1600))
    the_load = run.jobs[0].load
    assert the_load is not None
    lines = printed_summary(run, terminal=False).splitlines()
    head = next(k for k, line in enumerate(lines) if line.strip().startswith("per generator: step/s | generator"))
    rows = [(line.strip() + " ").split(" | ") for line in lines[head + 1 : head + 10]]
    assert [(row[0], row[1]) for row in rows] == [(r, f"#{g}") for r in ("400", "800", "1,600") for g in (1, 2, 3)]
    for row, (step, part) in zip(rows, [(s, p) for s in the_load.steps for p in s.generators], strict=True):
        # offered share, achieved, completed, p50, p99, send lag, start: the generator's own record, not the merge
        assert part.started_late_s is not None
        assert row[2:9] == [
            f"{part.offered_per_s:,.0f}",
            f"{part.achieved_per_s:,.0f}",
            f"{part.completed:,}",
            format_seconds(part.latency_s["p50"]),
            format_seconds(part.latency_s["p99"]),
            format_seconds(part.send_lag_p99_s),
            signed_seconds(part.started_late_s),
        ]
        assert row[2] != f"{step.offered_per_s:,.0f}"
    late = rows[6]
    assert late[:2] == ["1,600", "#1"] and late[-1].startswith(
        "the generator handed requests to the kernel up to 2.50 ms"
    )
    assert all(row[-1] == "" for row in rows[:6])
    assert all(len(row) == 11 for row in rows)  # one field per column, mark last
    assert rows[0][8] == "-250 ms" and rows[1][8] == "-240 ms"  # began early, as they should
    places = lines[head - 1].strip()
    assert places.startswith(f"3 generators through the Dask scheduler {CLUSTER}: #1 loadgen-a (worker tcp://")
    assert "#2 loadgen-b" in places and "clock -2.4 ms ± 400 µs" in places


def test_the_conditions_name_the_generators_machines_not_the_coordinators_cpu() -> None:
    text = printed_summary(_cluster_run(), terminal=False)
    assert "server on CPU 1 (split), 2 generators on Dask workers (loadgen-a, loadgen-b)" in text
    assert "generator on CPU" not in text
    # One local generator: its CPU, as before.
    assert "server on CPU 1, generator on CPU 0 (split)" in printed_summary(load_run(), terminal=False)


def test_an_incomplete_step_names_the_generator_missing_and_why() -> None:
    text = printed_summary(_cluster_run(rates=(400, 800), incomplete_at=800), terminal=False)
    lines = text.splitlines()
    missing = next(line for line in lines if " | #2 | " in line and "missing" in line)
    assert missing.strip().split(" | ")[2:10] == ["-"] * 8
    assert missing.strip().endswith("missing: it did not return this step")
    step = next(line for line in lines if line.strip().startswith("400 | ") and "generator limited" in line)
    assert f"incomplete: {INCOMPLETE_REASON}" in step  # the merged step's own mark


def test_on_a_terminal_the_generators_are_a_table_that_fits_80_columns() -> None:
    text = printed_summary(_cluster_run(rates=(400, 800, 1600), generators=3, late=(2, 800), incomplete_at=1600), True)
    lines = text.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    head = next(k for k, line in enumerate(lines) if line.split()[:3] == ["step/s", "gen", "offered"])
    rows = [line.split() for line in lines[head + 1 : head + 10]]
    assert [row[0] for row in rows if row[0][0].isdigit()] == ["400", "800", "1,067"]  # the step's rate, once
    assert "#2†" in lines[head + 5]  # 800/s, generator #2 was late
    assert "† 800/s, generator #2: the generator handed requests to the kernel up to 2.50 ms late" in " ".join(
        line.strip() for line in lines
    )
    assert "…" not in text
    # Ten columns do not fit 80: the completed counts (achieved times the window) are left out,
    # said under the table, and the start stays; at 120 columns every column is there.
    assert lines[head].split()[-4:] == ["p99", "start", "gen", "%"] and "completed" not in lines[head]
    assert "(left out to fit 80 columns: completed;" in " ".join(text.split())
    assert rows[0][-2:] == ["ms", "7"] and "-250" in rows[0]
    wide = printed_summary(_cluster_run(rates=(400, 800), generators=3), True, width=120).splitlines()
    assert any(line.split()[:5] == ["step/s", "gen", "offered", "achieved", "completed"] for line in wide)
    assert not any("left out" in line for line in wide)


def test_a_generator_that_began_a_step_late_marks_it_and_shows_how_late() -> None:
    """Its share began 80 ms after the agreed start, beyond 2 % of the 1 s step (20 ms): the
    requests due meanwhile went out in a burst, so the step is the generator's limit, not the
    server's, and every face says how late it began."""
    run = _cluster_run(rates=(400, 800), generators=2, late_start=(2, 800))
    the_load = run.jobs[0].load
    assert the_load is not None
    late = the_load.steps[1].generators[1]
    assert late.started_late_s == STARTED_LATE_S and late.generator_saturated
    assert [call.limit for call in step_calls(the_load)] == [StepLimit.KEPT_UP, StepLimit.GENERATOR]
    piped = printed_summary(run, terminal=False)
    line = next(line.strip() for line in piped.splitlines() if line.strip().startswith("800 | #2 | "))
    assert line.split(" | ")[8] == "+80 ms"
    assert line.endswith(
        "the generator began its share 80 ms after the agreed start (limit 20 ms, 2% of the 1 s step): the "
        "requests due meanwhile went out late, in a burst"
    )
    step = next(line for line in piped.splitlines() if line.strip().startswith("800 | "))
    assert "generator #2: the generator began its share 80 ms after the agreed start" in step
    terminal = " ".join(printed_summary(run, terminal=True).split())
    assert "+80 ms" in terminal and "† 800/s, generator #2: the generator began its share 80 ms after" in terminal


def test_one_generator_prints_no_generator_lines() -> None:
    for terminal in (False, True):
        text = printed_summary(load_run([load_job(0, LABEL, load(KNEE_STEPS))]), terminal)
        assert "per generator" not in text and "Dask" not in text


def test_show_prints_a_stored_cluster_jobs_generators(
    tmp_path: Path, isolated_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _cluster_run()
    path = tmp_path / "store.sqlite3"
    with Store(path) as store:
        store.begin_run(run)
        store.add_job(run.id, run.jobs[0])
        store.finish_run(run.id, "finished", "2026-03-01T10:01:00+00:00")
    assert main(["show", run.id, "--store", str(path)]) == 0
    out = capsys.readouterr().out
    assert "per generator: step/s | generator" in out and f"through the Dask scheduler {CLUSTER}" in out
    assert "800 | #2 | 400 | 400 | 400 |" in out

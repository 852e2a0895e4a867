"""The history panel over a real store file, and the comparison of two runs."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import psutil
import pytest

from app.core.records.job_conditions import Link
from app.core.results.model import JobResult, RunResult
from app.core.store.store import Store
from app.gui.history.compare_dialog import (
    FASTER,
    NO_VERDICT,
    NOT_COMPARABLE,
    ONLY_IN_BASELINE,
    ONLY_IN_CANDIDATE,
    SLOWER,
    WITHIN_NOISE,
    CompareColumn,
    CompareDialog,
    compare_runs,
    environment_line,
)
from app.gui.history.panel import HistoryPanel
from tests.helpers import records
from tests.helpers.comparisons import STILL

RUN_A = "20260101-100000-aaaaaa"
RUN_B = "20260102-100000-bbbbbb"


def _samples(median: float, n: int = 30, spread: float = 0.02, phase: int = 0) -> list[float]:
    return [median * (1 + spread * (((i + phase) % 7) - 3) / 3) for i in range(n)]


def _run(run_id: str, name: str, started: str, host: str, jobs: list[JobResult]) -> RunResult:
    return records.run(run_id, jobs, started=started, status="running", environment={"hostname": host}, name=name)


def _baseline() -> RunResult:
    return _run(
        RUN_A,
        "baseline",
        "2026-01-01T10:00:00+00:00",
        "alpha",
        [
            records.job(RUN_A, 0, 1024, {"encrypt": _samples(10e-6), "decrypt": _samples(11e-6)}),
            records.job(RUN_A, 1, 65536, {"encrypt": _samples(40e-6)}),
            records.job(
                RUN_A,
                2,
                64,
                {"sign": _samples(50e-6)},
                scheme="ed25519",
                params={},
                label="Ed25519",
                family="signature",
            ),
        ],
    )


def _candidate() -> RunResult:
    return _run(
        RUN_B,
        "candidate",
        "2026-01-02T10:00:00+00:00",
        "beta",
        [
            # identical-ish encrypt (other phase of the same spread), 2x slower decrypt
            records.job(RUN_B, 0, 1024, {"encrypt": _samples(10e-6, phase=3), "decrypt": _samples(22e-6)}),
            records.job(RUN_B, 1, 65536, {"encrypt": _samples(20e-6)}),
            records.job(RUN_B, 2, 4096, {}, status="failed", error="boom"),
        ],
    )


def _write(path: Path, run: RunResult, status: str = "finished") -> None:
    with Store(path) as store:
        store.begin_run(run)
        for job in run.jobs:
            store.add_job(run.id, job)
        store.finish_run(run.id, status, run.started.replace("10:00:00", "10:05:00"))


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    path = tmp_path / "results.sqlite3"
    _write(path, _baseline())
    _write(path, _candidate(), status="failed")
    return path


@pytest.fixture
def panel(qtbot: Any, store_path: Path) -> HistoryPanel:
    widget = HistoryPanel(store_path)
    qtbot.addWidget(widget)
    return widget


def _row_texts(panel: HistoryPanel, run_id: str) -> list[str]:
    row = panel.run_ids().index(run_id)
    item = panel.tree.topLevelItem(row)
    return [item.text(c) for c in range(panel.tree.columnCount())]


def test_panel_lists_both_runs_newest_first(panel: HistoryPanel, store_path: Path) -> None:
    assert panel.run_ids() == [RUN_B, RUN_A]
    assert panel.error is None and panel.message_label.isHidden()
    date, name, status, jobs, host = _row_texts(panel, RUN_A)
    assert (name, status, jobs, host) == ("baseline", "finished", "3/3", "alpha")
    assert date.startswith("2026-01-0")  # local time of the start
    assert _row_texts(panel, RUN_B)[1:] == ["candidate", "failed", "2/3", "beta"]
    # the store is closed again after reading
    open_paths = {Path(f.path) for f in psutil.Process().open_files()}
    assert store_path not in open_paths


def test_actions_follow_the_selection(panel: HistoryPanel) -> None:
    assert not panel.open_action.isEnabled() and not panel.compare_action.isEnabled()
    panel.select_runs([RUN_A])
    assert panel.open_action.isEnabled() and panel.delete_action.isEnabled()
    assert not panel.compare_action.isEnabled()
    panel.select_runs([RUN_A, RUN_B])
    assert panel.compare_action.isEnabled() and not panel.open_action.isEnabled()


def test_open_emits_the_loaded_run(panel: HistoryPanel, qtbot: Any) -> None:
    panel.select_runs([RUN_A])
    with qtbot.waitSignal(panel.run_opened, timeout=1000) as blocker:
        panel.open_action.trigger()
    run = blocker.args[0]
    assert isinstance(run, RunResult) and run.id == RUN_A and run.name == "baseline"
    assert [job.index for job in run.jobs] == [0, 1, 2]
    assert run.jobs[0].to_dict() == _baseline().jobs[0].to_dict()


def test_double_click_opens_the_run(panel: HistoryPanel, qtbot: Any) -> None:
    item = panel.tree.topLevelItem(panel.run_ids().index(RUN_B))
    with qtbot.waitSignal(panel.run_opened, timeout=1000) as blocker:
        panel.tree.itemDoubleClicked.emit(item, 0)
    assert blocker.args[0].id == RUN_B


def test_delete_asks_and_refreshes(panel: HistoryPanel, store_path: Path, qtbot: Any) -> None:
    asked: list[str] = []
    panel.confirm = lambda title, text: asked.append(text) is not None and False
    panel.select_runs([RUN_A])
    assert panel.delete_selected() == 0
    assert "baseline" in asked[0] and panel.run_ids() == [RUN_B, RUN_A]

    panel.confirm = lambda title, text: True
    panel.select_runs([RUN_A])
    with qtbot.waitSignal(panel.run_deleted, timeout=1000) as blocker:
        panel.delete_action.trigger()
    assert blocker.args == [RUN_A]
    assert panel.run_ids() == [RUN_B]
    with Store(store_path) as store:
        assert [r.id for r in store.list_runs()] == [RUN_B]


def test_garbage_store_file_shows_an_error(qtbot: Any, tmp_path: Path) -> None:
    path = tmp_path / "garbage.sqlite3"
    path.write_bytes(b"this is not a database\n" * 200)
    panel = HistoryPanel(path)
    qtbot.addWidget(panel)
    assert panel.run_ids() == []
    assert panel.error is not None and "not a usable CryptoBench results store" in panel.error
    assert not panel.message_label.isHidden()
    assert str(path) in panel.message_label.text()
    assert not panel.refresh()
    assert not panel.delete_action.isEnabled() and not panel.compare_action.isEnabled()


def test_foreign_sqlite_file_shows_an_error(qtbot: Any, tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite3"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE photos (id INTEGER)")
    db.commit()
    db.close()
    panel = HistoryPanel(path)
    qtbot.addWidget(panel)
    assert "not a CryptoBench results store" in panel.message_label.text()


def test_unreadable_store_is_a_message_not_a_crash(qtbot: Any, tmp_path: Path) -> None:
    """A store that opens but whose pages SQLite cannot read: the store's StoreError, shown
    in the panel as before (when sqlite3.DatabaseError escaped and the panel worded it)."""
    from tests.helpers.stores import RUN_ID, damage_jobs_table, stored_run

    path = stored_run(tmp_path / "results.sqlite3")
    damage_jobs_table(path)
    panel = HistoryPanel(path)
    qtbot.addWidget(panel)
    assert not panel.refresh() and panel.run_ids() == []
    assert panel.error == f"{path}: cannot read the results store: database disk image is malformed"
    assert panel.error in panel.message_label.text()
    assert panel.move_aside_button.isHidden()  # not a foreign or newer file: nothing to move aside yet
    assert panel.load_run(RUN_ID) is None
    assert panel.message_label.text() == (
        f"Cannot load run {RUN_ID} from {path}: {path}: cannot read run {RUN_ID}: database disk image is malformed"
    )


def test_a_run_gone_from_the_store_is_named_without_quotes(panel: HistoryPanel, store_path: Path) -> None:
    assert panel.load_run("20990101") is None
    assert (
        panel.message_label.text() == f"no run with id '20990101' in {store_path} (it may have been deleted meanwhile)."
    )


def test_empty_store_says_so(qtbot: Any, isolated_home: Path) -> None:
    panel = HistoryPanel()  # the default store, under the test's private CRYPTOBENCH_HOME
    qtbot.addWidget(panel)
    assert panel.path().path == isolated_home / "results.sqlite3"
    assert panel.run_ids() == [] and panel.error is None
    assert "No runs yet" in panel.message_label.text()


def test_compare_selected_uses_the_older_run_as_baseline(panel: HistoryPanel) -> None:
    panel.select_runs([RUN_A, RUN_B])
    dialog = panel.compare_selected()
    assert dialog is not None and dialog.isVisible()
    assert dialog.baseline.id == RUN_A and dialog.candidate.id == RUN_B
    assert len(dialog.rows()) == 5
    assert dialog.is_complete()


def test_compare_rows() -> None:
    a, b = _baseline(), _candidate()
    rows = compare_runs(a, b, STILL)  # judged as if runs never moved: the statistics themselves
    by_metric = {(r.message_size, r.metric): r for r in rows if r.metric}
    same = by_metric[(1024, "encrypt")]
    assert same.ratio == pytest.approx(same.median_b / same.median_a)
    assert same.ratio == pytest.approx(1.0, abs=0.02)
    assert same.verdict == WITHIN_NOISE and same.significant is False
    assert same.ci95_low is not None and same.ci95_high is not None and same.ci95_low <= 1.0 <= same.ci95_high

    slower = by_metric[(1024, "decrypt")]
    assert slower.ratio == pytest.approx(2.0, rel=0.01)
    assert slower.verdict == SLOWER and slower.significant is True and slower.ci95_low > 1.5

    faster = by_metric[(65536, "encrypt")]
    assert faster.verdict == FASTER and faster.ratio == pytest.approx(0.5, rel=0.01)

    unmatched = [(r.label, r.message_size, r.verdict) for r in rows if r.metric is None]
    assert unmatched == [("Ed25519", 64, ONLY_IN_BASELINE), ("AES-128-GCM", 4096, ONLY_IN_CANDIDATE)]
    # One run a side, and no stored runs to measure how runs move: ratios, and no verdict.
    alone = [r for r in compare_runs(a, b) if r.metric]
    assert {r.verdict for r in alone} == {NO_VERDICT} and all(r.ratio is not None for r in alone)
    assert all(r.note == "one run a side" for r in alone)


def test_jobs_over_other_links_are_other_measurements() -> None:
    """The dialog pairs as the report and `cryptobench compare` do (compare.match_key)."""
    lte = Link("lte", 25.0, 5.0, 50_000.0, 100_000.0, 0.0, "delay-line")
    a = _run(
        RUN_A,
        "a",
        "2026-01-01T10:00:00+00:00",
        "alpha",
        [records.job(RUN_A, 0, 1024, {"compute": _samples(10e-6)}, mode="loopback", link=lte)],
    )
    b = _run(
        RUN_B,
        "b",
        "2026-01-02T10:00:00+00:00",
        "alpha",
        [records.job(RUN_B, 0, 1024, {"compute": _samples(10e-6)}, mode="loopback")],
    )
    assert [row.verdict for row in compare_runs(a, b)] == [ONLY_IN_BASELINE, ONLY_IN_CANDIDATE]
    assert [row.verdict for row in compare_runs(a, a, STILL)] == [WITHIN_NOISE]


def test_compare_dialog_shows_the_rows(qtbot: Any) -> None:
    dialog = CompareDialog(_baseline(), _candidate(), movement=lambda base, new: STILL)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(dialog.is_complete, timeout=5000)  # bootstraps run on the event loop
    rows = dialog.rows()
    assert [r.verdict for r in rows] == [WITHIN_NOISE, SLOWER, FASTER, ONLY_IN_BASELINE, ONLY_IN_CANDIDATE]
    model = dialog.model
    assert model.rowCount() == 5
    assert model.item(1, CompareColumn.VERDICT).text() == SLOWER
    assert model.item(1, CompareColumn.RATIO).text() == f"{rows[1].ratio:.3f}×"
    assert model.item(1, CompareColumn.MEDIAN_A).text() == "11 µs"
    assert "1 faster, 1 slower, 1 within noise" in dialog.summary_label.text()
    assert "different machines" in dialog.summary_label.text()
    assert dialog.environment_label.text() == "Differs between the runs: machine (alpha → beta)."

    dialog.swap()
    swapped = dialog.rows()
    assert dialog.baseline.id == RUN_B
    assert swapped[1].verdict == FASTER and swapped[1].ratio == pytest.approx(1 / rows[1].ratio)


def test_compare_dialog_without_measured_movement_gives_ratios_and_no_verdict(qtbot: Any) -> None:
    """Two runs, one a side, and a store without runs enough to measure how runs move (as the
    history panel finds it): the ratios, "no verdict", and the summary says why."""
    dialog = CompareDialog(_baseline(), _candidate(), movement=lambda base, new: None)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(dialog.is_complete, timeout=5000)
    compared = [row for row in dialog.rows() if row.metric]
    assert [row.verdict for row in compared] == [NO_VERDICT] * 3
    assert dialog.model.item(1, CompareColumn.VERDICT).text() == NO_VERDICT
    assert dialog.model.item(1, CompareColumn.RATIO).text() == f"{compared[1].ratio:.3f}×"
    summary = dialog.summary_label.text()
    assert "3 metrics compared: 0 faster, 0 slower, 0 within noise, 3 no verdict" in summary
    assert "one run a side: no verdict where the store holds fewer than 3 runs of the job" in summary


def test_compare_dialog_gives_a_reduced_run_no_verdict_and_names_an_overridden_one(qtbot: Any) -> None:
    """Before: Compare of a reduced run against a full one said "40 faster", no caveat."""
    reduced = _candidate()
    reduced.profile = {**reduced.profile, "name": "p (reduced)", "reduced": True}
    dialog = CompareDialog(_baseline(), reduced)
    qtbot.addWidget(dialog)
    assert dialog.is_complete()  # nothing to bootstrap: no verdict is computed
    compared = [row for row in dialog.rows() if row.verdict not in (ONLY_IN_BASELINE, ONLY_IN_CANDIDATE)]
    assert compared and {row.verdict for row in compared} == {NO_VERDICT}
    assert all("the new side's run is reduced (a smoke test, not for comparison)" in row.note for row in compared)
    assert "0 faster, 0 slower, 0 within noise" in dialog.summary_label.text()
    assert "no verdict for any metric: the new side's run is reduced" in dialog.summary_label.text()
    assert "p (reduced)" in dialog.runs_label.text()

    overridden = _baseline()
    overridden.profile = {**overridden.profile, "overrides": {"--samples": "40"}}
    dialog = CompareDialog(overridden, _candidate())
    qtbot.addWidget(dialog)
    qtbot.waitUntil(dialog.is_complete, timeout=5000)
    assert "the baseline ran with settings overridden from the command line (--samples 40)" in (
        dialog.summary_label.text()
    )
    assert "baseline (--samples 40)" in dialog.runs_label.text()


def test_the_environment_line_names_what_differs() -> None:
    a, b = _baseline(), _candidate()
    assert environment_line(a, a) == ("Same machine and libraries: the environments recorded do not differ.", "")
    a.environment.update(
        {
            "cpu": {"model": "A"},
            "python": {"version": "3.11.7"},
            "os": {"pretty_name": "X"},
            "libraries": {"cryptography": {"version": "41.0.7", "openssl": "OpenSSL 3.0.13"}},
        }
    )
    b.environment.update(
        {
            "cpu": {"model": "B\x1b[2J"},
            "python": {"version": "3.12.1"},
            "os": {"pretty_name": "Y"},
            "libraries": {"cryptography": {"version": "42.0.1", "openssl": "OpenSSL 3.2.1"}},
        }
    )
    text, tip = environment_line(a, b)
    assert text.startswith("Differs between the runs: machine (alpha → beta), CPU model (A → B\\x1b[2J), ")
    assert text.endswith(", Python (3.11.7 → 3.12.1) and 2 more (hover to see them).")
    assert tip.splitlines()[-2:] == [
        "cryptography version (41.0.7 → 42.0.1)",
        "cryptography OpenSSL (OpenSSL 3.0.13 → OpenSSL 3.2.1)",
    ]
    assert len(tip.splitlines()) == 6


def test_failed_job_with_nothing_to_compare_is_listed(qtbot: Any) -> None:
    a = _baseline()
    b = _candidate()
    b.jobs[2] = records.job(
        RUN_B,
        2,
        64,
        {},
        scheme="ed25519",
        params={},
        label="Ed25519",
        family="signature",
        status="failed",
        error="boom",
    )
    rows = compare_runs(a, b)
    row = next(r for r in rows if r.label == "Ed25519")
    assert row.verdict == NOT_COMPARABLE and "candidate failed: boom" in row.note


def test_compare_verdicts_are_the_reports(qtbot: Any) -> None:
    """Compare and the report say the same of the same two runs, 3 % within noise included."""
    from app.report.baseline import match_baseline

    a = _run(
        RUN_A,
        "a",
        "2026-01-01T10:00:00+00:00",
        "alpha",
        [
            records.job(RUN_A, 0, 1024, {"encrypt": _samples(10e-6, n=12, spread=0.2)}),
            records.job(RUN_A, 1, 2048, {"encrypt": _samples(10e-6)}),
            records.job(RUN_A, 2, 4096, {"encrypt": _samples(10e-6, n=5)}),
        ],
    )
    b = _run(
        RUN_B,
        "b",
        "2026-01-02T10:00:00+00:00",
        "alpha",
        [
            records.job(RUN_B, 0, 1024, {"encrypt": _samples(10.3e-6, n=12, spread=0.2, phase=2)}),
            records.job(RUN_B, 1, 2048, {"encrypt": _samples(13e-6)}),
            records.job(RUN_B, 2, 4096, {"encrypt": _samples(30e-6, n=5)}),  # 3x, from 5 samples a side
        ],
    )
    compare = {(r.message_size, r.metric): r.verdict for r in compare_runs(a, b, STILL)}
    report = {(p.job.message_size, p.metric): p.verdict for p in match_baseline(b, a, STILL).pairs}
    assert compare == report
    assert compare[(1024, "encrypt")] == WITHIN_NOISE and compare[(2048, "encrypt")] == SLOWER
    assert compare[(4096, "encrypt")] == NO_VERDICT  # too few samples: no verdict in either face
    # One run a side and nothing measured of how runs move: no verdict in either face.
    alone = {(r.message_size, r.metric): r.verdict for r in compare_runs(a, b)}
    assert alone == {(p.job.message_size, p.metric): p.verdict for p in match_baseline(b, a).pairs}
    assert set(alone.values()) == {NO_VERDICT}


def test_compare_dialog_is_as_wide_as_its_table(qtbot: Any) -> None:
    dialog = CompareDialog(_baseline(), _candidate())
    qtbot.addWidget(dialog)
    qtbot.waitUntil(dialog.is_complete, timeout=5000)
    limit = dialog.screen().availableGeometry().width() - 40
    assert dialog.width() >= min(dialog.table_width(), limit)


def test_a_long_store_path_is_shortened_and_does_not_widen_the_panel(qtbot: Any, tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*["a-folder-of-the-store"] * 12, "results.sqlite3")
    panel, short = HistoryPanel(deep), HistoryPanel(tmp_path / "results.sqlite3")
    qtbot.addWidget(panel)
    qtbot.addWidget(short)
    assert panel.minimumSizeHint().width() == short.minimumSizeHint().width()
    panel.resize(600, 200)
    panel.show()
    qtbot.waitExposed(panel)
    assert "…" in panel.path_label.text() and panel.path_label.text().endswith("sqlite3")
    assert panel.path_label.full_text() == str(deep) and panel.path_label.toolTip().endswith(str(deep))


def test_the_panel_s_compare_judges_one_run_a_side_against_its_store_s_runs(qtbot: Any, tmp_path: Path) -> None:
    """With five runs of the same jobs on one machine in the store, History > Compare judges
    two of them against how much those runs moved: within it "within noise", beyond it a
    verdict; with too few stored runs, "no verdict" (the same rule as `compare`)."""
    from app.core.store.store import Store
    from tests.helpers.comparisons import base_run, scaled

    path = tmp_path / "store.sqlite3"
    ids = []
    with Store(path) as store:
        for k, factor in enumerate([1.0, 1.04, 0.97, 1.02, 0.99, 3.0]):
            run = scaled(base_run(), factor, run_id=f"20260101-10000{k}-aaaaa{k}")
            store.add_run(replace(run, started=f"2026-01-01T10:0{k}:00+00:00"))
            ids.append(run.id)
    panel = HistoryPanel(path)
    qtbot.addWidget(panel)
    panel.select_runs([ids[3], ids[4]])
    dialog = panel.compare_selected()
    assert dialog is not None
    qtbot.waitUntil(dialog.is_complete, timeout=5000)
    verdicts = {row.verdict for row in dialog.rows() if row.metric}
    assert verdicts == {WITHIN_NOISE} and all("stored runs here allow" in r.note for r in dialog.rows() if r.metric)
    panel.select_runs([ids[4], ids[5]])
    dialog = panel.compare_selected()
    assert dialog is not None
    qtbot.waitUntil(dialog.is_complete, timeout=5000)
    assert {row.verdict for row in dialog.rows() if row.metric} == {SLOWER}
    lone = HistoryPanel(tmp_path / "empty.sqlite3")
    qtbot.addWidget(lone)
    assert lone.movement(base_run(), scaled(base_run(), 3.0)) is not None  # a store, but no runs in it
    assert lone.movement(base_run(), scaled(base_run(), 3.0)).moved == {}  # type: ignore[union-attr]

"""The main window against real runs (pytest-qt, offscreen, no sleeps)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
from PySide6.QtCore import QSettings

from app.core.contracts.events import SampleBatch
from app.core.processes.jobstart import job_processes
from app.core.profile.edits import reduced
from app.core.profile.files import load_profile, read_profile_file, save_profile
from app.core.store.store import Store
from app.gui.main_window import MainWindow
from tests.helpers.paths import ROOT
from tests.helpers.windows import opened_window

ARTIFACTS = ROOT / "build" / "test-artifacts"


@pytest.fixture
def window(qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MainWindow]:
    with opened_window(qtbot, tmp_path, monkeypatch=monkeypatch, show=True) as win:
        yield win


def test_profile_built_in_the_panel_survives_save_and_reopen(window: MainWindow, tmp_path: Path) -> None:
    panel = window.panel
    panel.set_checked("aes-gcm")
    row = panel.set_checked("ecdh")
    panel.tree.setCurrentItem(row)
    panel._editors["curve"].setCurrentText("P-384")  # the per-scheme editor
    panel.size_boxes[18].setChecked(True)
    panel.custom_sizes.setText("4K")
    panel.samples.setValue(12)
    panel.mode.setCurrentIndex(panel.mode.findData("loopback"))
    assert panel.is_valid, panel.reason
    window.profile_name = "mine"
    built = panel.profile("mine")
    assert window.is_modified()
    path = tmp_path / "mine.json"
    assert window._write_profile(path)
    assert not window.is_modified()
    assert read_profile_file(path) == built

    window.new_profile()
    assert not panel.checked_rows()
    assert window.open_profile(path, ask=False)
    assert panel.profile("mine") == built
    ecdh = next(job for job in panel.profile("mine").jobs if job.scheme == "ecdh")
    assert ecdh.params["curve"] == "P-384" and ecdh.message_sizes == [18, 1024, 4096] and ecdh.mode == "loopback"


def test_invalid_values_block_run_with_a_visible_reason(window: MainWindow) -> None:
    panel = window.panel
    assert not window.run_action.isEnabled()  # nothing selected
    # Nothing ticked: the hint above the tree says what to do, not a red error.
    assert "Select at least one scheme" in panel.reason and panel.empty_state.isVisibleTo(window)
    panel.set_checked("sha256")
    assert window.run_action.isEnabled()
    panel.custom_sizes.setText("64, lots")
    assert not window.run_action.isEnabled()
    assert "'lots' is not a size" in panel.problem.text() and panel.problem.isVisibleTo(window)
    assert "'lots' is not a size" in panel.settings_editor.sizes_note.full_text()  # next to the field
    assert "lots" in window.run_action.toolTip()
    panel.custom_sizes.setText("")
    row = panel.set_checked("rsa-oaep")
    panel.tree.setCurrentItem(row)
    panel.size_boxes[1 << 20].setChecked(True)  # 1 MiB does not fit one RSA block
    assert not window.run_action.isEnabled()
    assert "does not fit one RSA-OAEP" in panel.problem.text()
    assert window.start_run() is False


def test_quick_preset_runs_to_completion_and_fills_table_plots_history(
    window: MainWindow, qtbot: Any, tmp_path: Path
) -> None:
    # The quick preset's every job, reduced (3 samples): the window's path is the same at
    # any sample count, and the preset's full numbers are tests/test_preset_runs.py's.
    profile = reduced(load_profile("quick"))
    save_profile(profile, tmp_path / "quick-reduced.json")
    assert window.open_profile(tmp_path / "quick-reduced.json", ask=False)
    expected = sum(len(job.message_sizes or [1]) for job in profile.jobs)
    with qtbot.waitSignal(window.controller.run_finished, timeout=240_000) as finished:
        assert window.start_run()
    run = finished.args[0]
    assert run.status == "finished"
    assert len(run.jobs) == expected
    assert all(job.status == "ok" for job in run.jobs), [job.error for job in run.jobs if job.status != "ok"]
    assert len(window.table.results()) == expected
    window.table.select_index(0)
    assert window.table.selected_result() is not None
    with Store(window.store_path) as store:
        assert [summary.id for summary in store.list_runs()] == [run.id]
    assert window.history.run_ids() == [run.id]
    assert "21/21 jobs ok" in window.status_job.text() or f"{expected}/{expected} jobs ok" in window.status_job.text()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pixmap = window.grab()
    assert not pixmap.isNull()
    image = pixmap.toImage()
    colours = {image.pixel(x, y) for x in range(0, image.width(), 7) for y in range(0, image.height(), 7)}
    assert len(colours) > 20, "the window grab looks blank"
    assert pixmap.save(str(ARTIFACTS / "main_window_after_run.png"))


def test_stop_mid_run_cancels_and_leaves_no_process(window: MainWindow, qtbot: Any) -> None:
    panel = window.panel
    panel.set_checked("aes-gcm")
    panel.set_checked("sha256")
    panel.mode.setCurrentIndex(panel.mode.findData("loopback"))
    panel.samples.setValue(1_000_000)
    seen: list[Any] = []
    window.controller.events.connect(lambda events: seen.extend(e for e in events if isinstance(e, SampleBatch)))
    asked: list[str] = []
    window.ask = lambda title, text: asked.append(text) is None  # type: ignore[method-assign]
    assert window.start_run()
    assert "estimated to take" in asked[0]  # a million samples a job: it asked first
    qtbot.waitUntil(lambda: bool(seen), timeout=60_000)  # streaming: stop "mid-stream"
    children = job_processes()
    assert len(children) == 2, "the job's receiver and sender should be running"
    with qtbot.waitSignal(window.controller.run_finished, timeout=30_000) as finished:
        window.stop_run()
    run = finished.args[0]
    assert run.status == "cancelled"
    assert {job.status for job in run.jobs} == {"cancelled"}
    for child in children:
        assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE
    assert window.run_action.isEnabled() and not window.stop_action.isEnabled()


def test_preferences_apply_workers_and_theme_and_persist_them(window: MainWindow, tmp_path: Path, qtbot: Any) -> None:
    from PySide6.QtGui import QPalette
    from PySide6.QtWidgets import QApplication

    from app.gui.theme import apply_theme

    app = QApplication.instance()
    assert isinstance(app, QApplication)
    try:
        dialog = window.show_preferences()
        assert dialog.isVisible() and not dialog.warning.isVisible()
        dialog.workers.setValue(3)
        assert dialog.warning.isVisible()  # the interference warning shows beside more than one worker
        dialog.theme.setCurrentIndex(dialog.theme.findData("dark"))
        dialog.accept()
        assert window.controller.pool.maxThreadCount() == 3
        window_colour = app.palette().color(QPalette.ColorRole.Window)
        assert window_colour.lightness() < 80
        # The plots follow through their palette-change event, delivered by the event loop.
        qtbot.waitUntil(lambda: window.plots._samples_plot.backgroundBrush().color() == window_colour)
        window.settings.sync()
        reread = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
        assert (int(reread.value("workers")), reread.value("theme")) == (3, "dark")

        cancelled = window.show_preferences()  # reopened with the stored values; Cancel changes nothing
        assert cancelled.workers.value() == 3 and cancelled.theme.currentData() == "dark"
        cancelled.workers.setValue(1)
        cancelled.reject()
        assert window.controller.pool.maxThreadCount() == 3

        window.apply_preferences(1, "light")
        assert app.palette().color(QPalette.ColorRole.Window).lightness() > 180
    finally:
        apply_theme(app, "system")  # the palette is the application's: leave it as other tests expect


def _store_runs(path: Path) -> tuple[str, str]:
    from tests.helpers.report_runs import BASELINE_ID, RUN_ID, build_run

    with Store(path) as store:
        for run in (
            build_run(RUN_ID, "2026-11-21T10:04:00+00:00"),
            build_run(BASELINE_ID, "2026-11-20T09:04:00+00:00", slower=0.5),
        ):
            store.begin_run(run)
            for job in run.jobs:
                store.add_job(run.id, job)
            store.finish_run(run.id, "finished", run.started)
    return RUN_ID, BASELINE_ID


def test_export_report_of_a_stored_run_against_a_baseline(window: MainWindow, tmp_path: Path, qtbot: Any) -> None:
    import shutil
    import subprocess

    from app.gui.report_dialog import NO_BASELINE

    run_id, baseline_id = _store_runs(window.store_path)
    dialog = window.export_report()
    ok = dialog.buttons.button(dialog.buttons.StandardButton.Ok)
    assert {dialog.run.itemData(i) for i in range(dialog.run.count())} == {run_id, baseline_id}
    dialog.run.setCurrentIndex(dialog.run.findData(run_id))
    baselines = {dialog.baseline.itemData(i) for i in range(dialog.baseline.count())}
    assert baselines == {NO_BASELINE, baseline_id}  # never the run itself
    dialog.run.setCurrentIndex(dialog.run.findData(baseline_id))
    assert dialog.baseline.findData(baseline_id) < 0 and dialog.baseline.findData(run_id) >= 0
    dialog.run.setCurrentIndex(dialog.run.findData(run_id))
    dialog.path.setText(str(tmp_path / "missing-folder" / "r.pdf"))
    dialog.baseline.setCurrentIndex(dialog.baseline.findData(NO_BASELINE))
    assert not ok.isEnabled() and "does not exist" in dialog.problem.text()
    dialog.baseline.setCurrentIndex(dialog.baseline.findData(baseline_id))
    dialog.format.setCurrentIndex(dialog.format.findData("markdown"))
    assert dialog.path.text().endswith(".md") and not dialog.page_size.isEnabled()
    dialog.format.setCurrentIndex(dialog.format.findData("pdf"))
    target = tmp_path / "report.pdf"
    dialog.path.setText(str(target))
    assert ok.isEnabled(), dialog.problem.text()
    with qtbot.waitSignal(window.report_written, timeout=60_000) as written:
        ok.click()
    assert written.args == [str(target)]
    assert target.read_bytes().startswith(b"%PDF")
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", str(target), "-"], capture_output=True, text=True, check=True).stdout
        assert "Comparison with baseline" in text and run_id in text


def test_a_plot_saved_from_the_window_names_the_run_shown_and_its_machine(window: MainWindow, tmp_path: Path) -> None:
    from app.gui.vocab import PlotTab

    run_id, _baseline = _store_runs(window.store_path)
    with Store(window.store_path) as store:
        run = store.load_run(run_id)
    window.show_run(run)
    window.plots.tabs.setCurrentIndex(list(PlotTab).index(PlotTab.COMPARISON))
    machine = run.environment_view.hostname or "unnamed host"
    for suffix in ("png", "svg", "csv"):
        assert window.write_plot(tmp_path / f"plot.{suffix}")
    for suffix in ("svg", "csv"):
        text = (tmp_path / f"plot.{suffix}").read_text(encoding="utf-8")
        assert f"Run {run_id} of profile" in text and f"Machine: {machine}" in text, suffix


def test_export_report_failure_is_a_dialog_not_a_traceback(window: MainWindow, tmp_path: Path, qtbot: Any) -> None:
    from app.gui.report_dialog import ReportRequest

    run_id, _ = _store_runs(window.store_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    request = ReportRequest(run_id=run_id, baseline_id="", format="pdf", page_size="A4", path=blocker / "r.pdf")
    with qtbot.waitSignal(window.report_written, timeout=60_000) as written:
        assert window.write_report(request) is not None
    assert written.args == [""]
    assert window.last_error is not None
    title, message, _ = window.last_error
    assert title == "Cannot write the report" and str(blocker / "r.pdf") in message


def test_report_of_an_unknown_run_names_it_without_quotes(window: MainWindow, tmp_path: Path) -> None:
    from app.gui.report_dialog import ReportRequest

    request = ReportRequest(run_id="20990101", baseline_id="", format="pdf", page_size="A4", path=tmp_path / "r.pdf")
    assert window.write_report(request) is None
    assert window.last_error is not None
    title, message, _ = window.last_error
    assert (title, message) == ("Cannot write the report", f"no run with id '20990101' in {window.store_path}")


def test_a_token_file_others_can_read_stops_the_run_with_its_message(window: MainWindow, tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("ab" * 32 + "\n")
    token.chmod(0o644)
    panel = window.panel
    panel.set_checked("sha256")
    panel.mode.setCurrentIndex(panel.mode.findData("remote"))
    panel.remote_host.setText("127.0.0.1")
    panel.token_file.setText(str(token))
    assert panel.is_valid, panel.reason
    assert window.start_run() is False
    assert window.last_error is not None
    title, message, _ = window.last_error
    assert title == "Cannot start the run"
    assert message == f"{token}: other users can access this token file (mode 0644); run `chmod 600 {token}`"


@pytest.mark.parametrize(
    "name",
    [
        "ecdh-vs-elgamal",
        "cnsa-suite",
        "rsa-vs-elgamal",
        "rsa-kem-vs-ecies",
        "post-quantum",
        "aead-shootout",
        "backends",
    ],
)
def test_every_preset_survives_the_panel_unchanged(window: MainWindow, name: str) -> None:
    """What the window runs for a preset is the preset: same jobs, the experiment it
    reproduces (so the report has its section) and the Nagle-on job of E1."""
    from app.core.profile.resolve import resolve_jobs

    window.presets_menu.aboutToShow.emit()  # filled when opened
    assert name in [action.data() for action in window.presets_menu.actions()]
    window.open_preset(name)
    shown, preset = window.panel.profile(window.profile_name), load_profile(name)
    assert shown.experiment == preset.experiment and shown.description == preset.description

    def jobs(profile: Any) -> list[dict[str, Any]]:
        return sorted((vars(job) | {"index": 0} for job in resolve_jobs(profile)), key=repr)

    assert jobs(shown) == jobs(preset)
    window.new_profile()
    window.panel.set_checked("sha256")
    assert window.panel.profile("fresh").experiment is None  # a new profile reproduces nothing


@pytest.mark.parametrize("size", [(1024, 700), (800, 550)])
def test_small_windows_keep_the_plot_and_every_control(window: MainWindow, qtbot: Any, size: tuple[int, int]) -> None:
    from PySide6.QtCore import QCoreApplication

    from app.gui.main_window import MIN_WINDOW_SIZE, PLOT_MIN_HEIGHT

    hint = window.minimumSizeHint()
    assert hint.width() <= MIN_WINDOW_SIZE[0] and hint.height() <= MIN_WINDOW_SIZE[1], hint
    window.resize(*size)
    QCoreApplication.processEvents()
    assert (window.width(), window.height()) == size
    plots = window.plots.height()
    assert plots >= PLOT_MIN_HEIGHT  # the plot has priority: the docks below give way
    assert plots >= window.results_dock.height()
    assert window.results_dock.widget().height() >= 80 and window.config_dock.width() >= 300

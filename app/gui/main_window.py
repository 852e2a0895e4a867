"""The main window: configuration on the left, live plots in the centre, results, log
and history below, menus and a status bar as desktop users expect.

The window owns no measurement: it builds a profile from the panel, hands it to the
`RunController` (its own worker pool), and turns the controller's batched events into
plot updates, table rows and status text on one 30 Hz timer. Window geometry, dock
layout, recent files, last folders, theme and worker count persist in QSettings;
every piece of domain data stays in the core formats (profile JSON, the store).
"""

from __future__ import annotations

import inspect
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QSettings, Qt, QThreadPool, QTimer
from PySide6.QtGui import QAction, QCloseEvent, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QWidget,
)

from app.core.analysis.run_wide import stated_before_the_run
from app.core.contracts.events import (
    JobFinished,
    JobStarted,
    LogMessage,
    Progress,
    ResourceSample,
    RunEvent,
    RunFinished,
    RunStarted,
    SampleBatch,
)
from app.core.errors import SessionError
from app.core.profile.edits import REDUCED_MAX_SIZE
from app.core.profile.edits import reduced as reduced_profile
from app.core.profile.sizes import human_size
from app.core.results.model import JobResult, RunResult
from app.core.run.estimate import Refined
from app.core.run.runner import preload
from app.core.serve import DEFAULT_PORT
from app.core.settings.profile import Profile, ProfileError
from app.core.store.store import BrokenStoreError, Store, StoreError
from app.core.store.target import StoreLike
from app.core.vocab import ExportFormat, JobStatus, LogLevel, Mode
from app.gui.config.panel import ConfigPanel
from app.gui.config.panel_scroll import PanelScroll
from app.gui.config.presets import long_run_warning, preset_entries, run_estimate
from app.gui.dialogs import AboutDialog, GettingStartedDialog, PreferencesDialog
from app.gui.eta import time_left
from app.gui.history.panel import HistoryPanel
from app.gui.icon import app_icon
from app.gui.log_view import LogView
from app.gui.plots.panel import PlotsPanel
from app.gui.profile_files import ProfileFileActions
from app.gui.report_dialog import ReportWriter
from app.gui.results.result_log import ResultLog
from app.gui.results.table import ResultsTable
from app.gui.run_controller import RunController
from app.gui.store_choice import fixed_reason, save_store, saved_store, window_store
from app.gui.theme import apply_theme
from app.gui.vocab import Theme
from app.gui.window_exports import ExportActions
from app.gui.words import plural

#: The smallest plot area: below it the docks shrink instead.
PLOT_MIN_WIDTH, PLOT_MIN_HEIGHT = 380, 260
#: The configuration dock's narrowest: the panel's widest row (a load job's leave to send
#: the token over plain TCP) fits beside the vertical scroll bar.
CONFIG_MIN_WIDTH = 320
#: The smallest window in which every control is reachable (the panel and the docks scroll).
MIN_WINDOW_SIZE = (800, 550)
#: The reduced form's budget, from `reduced` itself: at most this many samples, messages up to this size.
_REDUCED_BUDGET = (
    f"at most {inspect.signature(reduced_profile).parameters['samples'].default} samples, "
    f"messages up to {human_size(REDUCED_MAX_SIZE)}"
)
#: What a quick check is, in the log line that starts one.
REDUCED_NOTE = (
    f"a quick check (reduced: {_REDUCED_BUDGET}, no pause): it checks everything end to end; "
    "its numbers are not for comparison"
)
#: Long enough for the window to be shown and painted first.
PRELOAD_DELAY_MS = 300
ORGANIZATION, APPLICATION = "CryptoBench", "CryptoBench"


class MainWindow(ProfileFileActions, ExportActions, QMainWindow):
    def __init__(self, settings: QSettings | None = None, store_path: StoreLike | None = None) -> None:
        super().__init__()
        self.setWindowIcon(app_icon())
        # Reports are written off the GUI thread, one at a time, apart from the run's workers.
        self.report_pool = QThreadPool(self)
        self.report_pool.setMaxThreadCount(1)
        self._report_writer: ReportWriter | None = None
        self.settings = settings or QSettings(ORGANIZATION, APPLICATION)
        self.store_path = window_store(self.settings, store_path)
        self._store_fixed = fixed_reason(store_path)  # Preferences cannot change it, and why
        self.profile_path: Path | None = None
        self.profile_name = "untitled"
        self._saved_text = ""
        self.last_run: RunResult | None = None
        self._progress: dict[int, tuple[int, int]] = {}
        self._total_jobs = 0
        self._result_log = ResultLog()
        self._finished_jobs = 0
        self._run_started_at = 0.0
        #: The estimate of the running run, refined as its jobs finish (None: no estimate).
        self._refined: Refined | None = None
        self._current_index: int | None = None
        self._current_started: float | None = None
        self._current_label = ""
        self.last_error: tuple[str, str, str] | None = None
        #: The run going (or last run) is a quick check (Run > Quick check (reduced)).
        self._reduced = False

        self.controller = RunController(
            self, workers=self._int_setting("workers", 1), store_factory=lambda: Store(self.store_path)
        )
        self.controller.events.connect(self._on_events)
        self.controller.run_finished.connect(self._on_run_finished)
        # Idle, once the window has painted: the first run's one-time imports, so they
        # do not stall the event loop in the middle of a job (see runner.preload).
        QTimer.singleShot(PRELOAD_DELAY_MS, preload)

        self.panel = ConfigPanel()
        self.plots = PlotsPanel()
        self.table = ResultsTable()
        self.log = LogView()
        self.history = HistoryPanel(self.store_path)
        self.setCentralWidget(self.plots)
        scroll = PanelScroll(self.panel)
        # Narrow enough for a 1024-pixel screen, wide enough for every row of the panel
        # (tests/gui/config/test_panel_scroll.py); the tree scrolls sideways when it must.
        scroll.setMinimumWidth(CONFIG_MIN_WIDTH)
        # The plot has priority over the docks below it: when the window shrinks, the
        # results, log and history give up height first (they scroll), never the plot.
        self.plots.setMinimumSize(PLOT_MIN_WIDTH, PLOT_MIN_HEIGHT)
        self.config_dock = self._dock("Configuration", scroll, Qt.DockWidgetArea.LeftDockWidgetArea)
        self.results_dock = self._dock("Results", self.table, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.log_dock = self._dock("Log", self.log, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.history_dock = self._dock("History", self.history, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.results_dock, self.log_dock)
        self.tabifyDockWidget(self.log_dock, self.history_dock)
        self.results_dock.raise_()
        for dock in (self.results_dock, self.log_dock, self.history_dock):
            dock.widget().setMinimumHeight(80)
        self.resizeDocks([self.results_dock], [240], Qt.Orientation.Vertical)

        self._build_actions()
        self._build_menus()
        self._build_status()
        self.panel.changed.connect(self._update_title)
        self.panel.valid_changed.connect(self._on_valid_changed)
        self.table.result_selected.connect(self._on_result_selected)
        self.history.run_opened.connect(self.show_run)
        self.setAcceptDrops(True)
        self.setMinimumSize(*MIN_WINDOW_SIZE)
        self.resize(1400, 900)
        self._restore_state()
        self._mark_saved()
        self._update_run_actions()

    # --- construction -------------------------------------------------------------------

    def _dock(self, title: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(title.lower() + "-dock")  # saveState needs names
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _action(self, text: str, slot: Any, shortcut: Any = None, tip: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.setStatusTip(tip or text.replace("&", "").rstrip("."))
        action.triggered.connect(slot)
        return action

    def _build_actions(self) -> None:
        keys = QKeySequence.StandardKey
        self.new_action = self._action("&New", self.new_profile, keys.New, "Start an empty profile")
        self.open_action = self._action("&Open profile...", self.open_profile_dialog, keys.Open)
        self.save_action = self._action("&Save", self.save_profile, keys.Save)
        self.save_as_action = self._action("Save &As...", self.save_profile_as, keys.SaveAs)
        self.export_json_action = self._action("Results as &JSON...", lambda: self.export_results(ExportFormat.JSON))
        self.export_csv_action = self._action("Results as &CSV...", lambda: self.export_results(ExportFormat.CSV))
        self.export_report_action = self._action(
            "&Report (PDF, Markdown)...",
            self.export_report,
            "Ctrl+P",
            "Write a report of this run or any stored run, optionally against a baseline",
        )
        self.export_png_action = self._action(
            "Plot as &PNG...", lambda: self.export_plot("png"), tip="Save the plot of the visible tab as a PNG image"
        )
        self.export_svg_action = self._action(
            "Plot as &SVG...", lambda: self.export_plot("svg"), tip="Save the plot of the visible tab as an SVG drawing"
        )
        self.export_plot_csv_action = self._action(
            "Plot &data as CSV...",
            lambda: self.export_plot("csv"),
            tip="Save the numbers the visible plot draws, under its caption, as CSV",
        )
        self.quit_action = self._action("&Quit", self.close, keys.Quit)
        self.run_action = self._action("&Run", self.start_run, "Ctrl+R", "Run the profile")
        self.quick_action = self._action(
            "&Quick check (reduced)",
            lambda: self.start_run(reduced=True),
            "Ctrl+Shift+R",
            f"Run the profile on a tiny budget ({_REDUCED_BUDGET}), as `run --reduced` does: "
            "checks everything end to end in seconds; its numbers are not for comparison",
        )
        self.stop_action = self._action("&Stop", self.stop_run, "Esc", "Stop the run; running jobs are cancelled")
        self.preferences_action = self._action("&Preferences...", self.show_preferences, keys.Preferences)
        self.about_action = self._action("&About CryptoBench", lambda: AboutDialog(self).exec())
        self.getting_started_action = self._action(
            "&Getting started", self.show_getting_started, keys.HelpContents, "A five-minute tour of CryptoBench"
        )

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addActions([self.new_action, self.open_action])
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.presets_menu = file_menu.addMenu("&Presets")
        self.presets_menu.setToolTipsVisible(True)
        # Filled when opened, not at start-up (each preset is resolved and estimated, and the
        # estimate reads how busy the machine is over 0.2 s): the durations also come from
        # the runs stored meanwhile.
        self.presets_menu.aboutToShow.connect(self._fill_presets_menu)
        file_menu.addSeparator()
        file_menu.addActions([self.save_action, self.save_as_action])
        file_menu.addSeparator()
        export_menu = file_menu.addMenu("&Export")
        export_menu.addActions([self.export_json_action, self.export_csv_action, self.export_report_action])
        export_menu.addSeparator()
        export_menu.addActions([self.export_png_action, self.export_svg_action, self.export_plot_csv_action])
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        edit_menu = bar.addMenu("&Edit")
        edit_menu.addAction(self.preferences_action)
        run_menu = bar.addMenu("&Run")
        run_menu.addActions([self.run_action, self.quick_action, self.stop_action])
        view_menu = bar.addMenu("&View")
        for dock in (self.config_dock, self.results_dock, self.log_dock, self.history_dock):
            view_menu.addAction(dock.toggleViewAction())
        help_menu = bar.addMenu("&Help")
        help_menu.addActions([self.getting_started_action, self.about_action])
        toolbar = self.addToolBar("Main")
        toolbar.setObjectName("main-toolbar")
        toolbar.addActions([self.new_action, self.open_action, self.save_action])
        toolbar.addSeparator()
        toolbar.addActions([self.run_action, self.quick_action, self.stop_action])
        self._refresh_recent_menu()

    def _fill_presets_menu(self) -> None:
        self.presets_menu.clear()
        for entry in preset_entries(self.store_path):
            # `checked` takes triggered's argument, so `name` keeps this entry's name.
            def open_it(checked: bool = False, name: str = entry.name) -> None:
                self.open_preset(name)

            action = self.presets_menu.addAction(entry.menu_text(), open_it)
            action.setData(entry.name)
            action.setToolTip(
                f"{entry.description}\n\n{plural(entry.measured_jobs, 'job')}, "
                f"{entry.samples:,} samples; {entry.tooltip_time()}"
            )
            action.setStatusTip(entry.description)

    def _build_status(self) -> None:
        self.status_job = QLabel("Ready")
        self.status_eta = QLabel("")
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(240)
        self.progress.setTextVisible(True)
        self.progress.setVisible(False)
        status = self.statusBar()
        status.addWidget(self.status_job, 1)
        status.addPermanentWidget(self.status_eta)
        status.addPermanentWidget(self.progress)

    # --- settings -----------------------------------------------------------------------

    def _restore_state(self) -> None:
        geometry = self.settings.value("geometry")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        state = self.settings.value("window_state")
        if isinstance(state, QByteArray):
            self.restoreState(state)
        host = self.settings.value("remote/host", "")
        self.panel.remote_host.setText(str(host or ""))
        self.panel.remote_port.setValue(self._int_setting("remote/port", DEFAULT_PORT))
        self.panel.token_file.setText(str(self.settings.value("remote/token_file", "") or ""))

    def _save_state(self) -> None:
        self.settings.setValue("geometry", self.saveGeometry())
        self.settings.setValue("window_state", self.saveState())
        host, port, token = self.panel.remote_settings()
        self.settings.setValue("remote/host", host)
        self.settings.setValue("remote/port", port)
        self.settings.setValue("remote/token_file", token)
        self.settings.sync()

    def _int_setting(self, key: str, default: int) -> int:
        """A whole-number setting (QSettings hands back an untyped value: a string from an INI file)."""
        value = self.settings.value(key, default)
        return int(value) if isinstance(value, int | float | str) else default

    def _folder(self, kind: str) -> str:
        return str(self.settings.value(f"folders/{kind}", str(Path.home())))

    def _remember_folder(self, kind: str, path: Path) -> None:
        self.settings.setValue(f"folders/{kind}", str(path.parent))

    # --- running ------------------------------------------------------------------------

    def _update_run_actions(self) -> None:
        running = self.controller.running
        for action, tip in ((self.run_action, "Run the profile"), (self.quick_action, self.quick_action.statusTip())):
            action.setEnabled(not running and self.panel.is_valid)
            action.setToolTip(tip if self.panel.is_valid else f"Cannot run: {self.panel.reason}")
        self.stop_action.setEnabled(running)
        self.panel.setEnabled(not running)

    def _on_valid_changed(self, valid: bool, reason: str) -> None:
        """Why Run is off is said where it is seen (the status bar and above the tree),
        not only in the disabled button's tooltip."""
        self._update_run_actions()
        if not self.controller.running:
            self.status_job.setText("Ready" if valid else f"Cannot run: {reason}")

    def start_run(self, reduced: bool = False, asked: bool = False) -> bool:
        """Run the panel's profile; `reduced`: its quick check (Run > Quick check), the
        same jobs on a tiny budget, as `cryptobench run --reduced` (named "… (reduced)").
        `asked`: the command line asked for this run (`gui --run`): a long one is not
        questioned again, as `cryptobench run` never waits for an answer; the log says it."""
        if self.controller.running or not self.panel.is_valid:
            return False
        try:
            profile = self.panel.profile(self.profile_name)
            if reduced:
                profile = reduced_profile(profile)
        except ProfileError as exc:
            self.error("Cannot start the run", str(exc), "Fix the problem named above and press Run again.")
            return False
        guess = run_estimate(profile)
        warning = long_run_warning(profile, guess)
        if warning is not None and asked and guess is not None:
            self.append_log(
                LogLevel.WARNING,
                f"{profile.name}: estimated {guess.text()} on this machine; started without asking, as the "
                "command line asked for the run (Stop ends it)",
            )
        elif warning is not None and not self.ask("Long run", warning):
            return False
        try:
            remote = self._remote_target(profile)
            self.controller.start(profile, remote=remote, source=self.profile_name)
        except BrokenStoreError as exc:
            fix = (
                "Upgrade CryptoBench, or choose another store in Edit > Preferences."
                if self.store_path.is_postgres  # a database is never moved aside
                else "Move the file aside from the History panel (it is renamed, not deleted), then press Run again."
            )
            self.error("Cannot start the run", str(exc), fix)
            self.history.refresh()  # shows the reason and the Move-aside button
            self.history_dock.raise_()  # after the log line, which raises the log
            return False
        except (ProfileError, StoreError, SessionError) as exc:  # SessionError: the token file
            self.error("Cannot start the run", str(exc), "Fix the problem named above and press Run again.")
            return False
        self._reduced = reduced
        self.plots.reset()
        self.plots.set_run(self.controller.run)  # a plot saved mid-run names this run
        self.table.model.clear()
        self._progress, self._finished_jobs = {}, 0
        self._current_index, self._current_started = None, None
        self._run_started_at = time.monotonic()
        self._refined = Refined(guess) if guess is not None and not guess.unknown else None
        self.progress.setVisible(True)
        self.progress.setValue(0)
        self.results_dock.raise_()
        self._current_label = ""
        self._update_run_actions()
        self._update_status()  # "Starting…", and at once whether it is a quick check
        return True

    def _remote_target(self, profile: Profile) -> Any:
        if not any(job.mode == Mode.REMOTE for job in profile.jobs):
            return None
        from app.core.serve.server import load_token
        from app.core.transport.connect import RemoteTarget

        host, port, token_file = self.panel.remote_settings()
        return RemoteTarget(host, port, load_token(Path(token_file).expanduser()))  # TokenFileError names the file

    def stop_run(self) -> None:
        if self.controller.running:
            self.controller.stop()
            self.status_job.setText("Stopping: killing the running job's processes…")

    def _on_events(self, events: list[RunEvent]) -> None:
        """One drain tick: feed plots (data only), then redraw once."""
        for event in events:
            if isinstance(event, SampleBatch):
                self.plots.add_samples(event.job_index, event.metric, event.values)
            elif isinstance(event, ResourceSample):
                self.plots.add_resource(event.job_index, event.role, event.t, event.cpu_percent, event.rss_bytes)
            elif isinstance(event, Progress):
                self._progress[event.job_index] = (event.done, event.total)
            elif isinstance(event, JobStarted):
                self._current_label = f"{event.label} · {event.message_size} B"
                self._current_index, self._current_started = event.job_index, time.monotonic()
                self.plots.begin_job(event.job_index, self._current_label)
            elif isinstance(event, JobFinished):
                self._finished_jobs += 1
                if event.job_index == self._current_index:
                    self._current_started = None
                self._progress.pop(event.job_index, None)
                self.table.model.add_result(event.result)
                self.plots.add_load_result(event.result)  # a load job's curves at once, not at the run's end
                for level, text in self._result_log.lines(event.result):
                    self.append_log(level, text)
            elif isinstance(event, RunStarted):
                self._total_jobs = event.total_jobs
                run = self.controller.run  # set by the time the event is drained
                self._result_log = ResultLog(stated_before_the_run(run.environment if run is not None else {}))
                self.append_log(
                    LogLevel.INFO,
                    f"Run {event.run_id} started: {plural(event.total_jobs, 'job')} of {event.profile_name}"
                    + (f" — {REDUCED_NOTE}" if self._reduced else ""),
                )
            elif isinstance(event, LogMessage):
                self.append_log(event.level, event.text)
            elif isinstance(event, RunFinished):
                pass  # handled by run_finished, after the store is closed
        self.plots.refresh()
        self._update_status()

    def _update_status(self) -> None:
        if not self.controller.running:
            return
        partial = sum(done / max(1, total) for done, total in self._progress.values())
        fraction = (self._finished_jobs + partial) / max(1, self._total_jobs)
        self.progress.setValue(int(fraction * 100))
        self.progress.setFormat(f"{self._finished_jobs}/{plural(self._total_jobs, 'job')}")
        doing = f"Running {self._current_label}" if self._current_label else "Starting…"
        self.status_job.setText(f"Quick check (reduced): {doing}" if self._reduced else doing)
        now = time.monotonic()
        done, total = (0, 0) if self._current_index is None else self._progress.get(self._current_index, (0, 0))
        eta = time_left(
            self._refined if self._total_jobs == self._estimated_jobs() else None,
            now - self._run_started_at,
            self._finished_jobs,
            self._total_jobs,
            None if self._current_started is None else now - self._current_started,
            done / total if total else 0.0,
        )
        self.status_eta.setText(eta.text)

    def _estimated_jobs(self) -> int:
        return len(self._refined.estimate.jobs) if self._refined is not None else -1

    def _on_run_finished(self, run: RunResult) -> None:
        self.last_run = run
        self.progress.setVisible(False)
        self.status_eta.setText("")
        for level, text in self._result_log.finish():
            self.append_log(level, text)
        ok = sum(1 for job in run.jobs if job.status == JobStatus.OK)
        kind = " (quick check, reduced: not for comparison)" if self._reduced else ""
        self.status_job.setText(f"Run {run.id}{kind} {run.status}: {ok}/{plural(len(run.jobs), 'job')} ok")
        for level, text in ResultLog.kinds(run.jobs):  # each repeated warning once, counted
            self.append_log(level, text)
        self.append_log(
            LogLevel.INFO, f"Run {run.id}{kind} {run.status}: {ok}/{plural(len(run.jobs), 'job')} ok (stored)"
        )
        self.plots.set_run(run)
        self.plots.end_run(run.status)  # no plot says "Live" once no sample can arrive
        self.plots.show_results(run.jobs)
        self.history.refresh()
        self._update_run_actions()

    def show_run(self, run: RunResult) -> None:
        """Open a stored run: its table and plots."""
        self.last_run = run
        self.table.model.set_results(run.jobs)
        self.plots.reset()
        self.plots.set_run(run)
        self.plots.show_results(run.jobs)
        self.results_dock.raise_()
        self.status_job.setText(f"Showing run {run.id} ({run.name}, {run.started})")

    def _on_result_selected(self, result: JobResult | None) -> None:
        self.plots.select_result(result)

    def append_log(self, level: LogLevel, text: str) -> None:
        # A job's error may quote a remote peer: the log shows its control characters, not obeys them.
        self.log.append(level, text)
        if level == LogLevel.ERROR:
            self.log_dock.raise_()

    # --- dialogs ------------------------------------------------------------------------

    def error(self, title: str, message: str, next_step: str) -> None:
        """An error a person can act on: what happened and what to do next."""
        self.append_log(LogLevel.ERROR, f"{title}: {message}")
        self.last_error = (title, message, next_step)
        box = QMessageBox(QMessageBox.Icon.Warning, title, message, QMessageBox.StandardButton.Ok, self)
        box.setInformativeText(next_step)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()  # window-modal without a nested event loop

    def ask(self, title: str, question: str) -> bool:
        """A yes/no question (tests replace it)."""
        answer = QMessageBox.question(self, title, question)
        return answer == QMessageBox.StandardButton.Yes

    def show_getting_started(self) -> GettingStartedDialog:
        """Help > Getting started: the README's five-minute tour, bundled with the app."""
        dialog = GettingStartedDialog(self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def show_preferences(self) -> PreferencesDialog:
        """Open the (window-modal) Preferences; OK applies and persists them."""
        dialog = PreferencesDialog(
            self._int_setting("workers", 1), str(self.settings.value("theme", Theme.SYSTEM)), self
        )
        dialog.show_store(saved_store(self.settings), self.store_path, self._store_fixed)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.accepted.connect(
            lambda: self.apply_preferences(dialog.workers.value(), dialog.theme.currentData(), dialog.store_text())
        )
        dialog.open()
        return dialog

    def apply_preferences(self, workers: int, theme: str, store: str | None = None) -> None:
        self.settings.setValue("workers", workers)
        self.settings.setValue("theme", theme)
        if store is not None and self._store_fixed is None and store.strip() != saved_store(self.settings):
            self.store_path = save_store(self.settings, store)  # the next run writes there
            self.history.set_store_path(self.store_path)
        self.controller.set_workers(workers)
        app = QApplication.instance()
        if isinstance(app, QApplication):
            apply_theme(app, theme)  # the plots follow through their own palette-change event

    # --- closing ------------------------------------------------------------------------

    def stop_for_signal(self, signum: int) -> int:
        """A stop signal (app/gui/stop_signals.py): stop the run as Stop does (its finished
        jobs stay in the store, the run is recorded as cancelled), finish a report being
        written, save the window state, close without asking. Returns the exit code,
        128 + the signal's number, as a shell reports a process a signal stopped."""
        self.append_log(LogLevel.WARNING, f"stopped by signal {signum}: the run is cancelled and the window closes")
        self._closing_for_signal = True
        self.controller.shutdown()
        self.report_pool.waitForDone()
        self._save_state()
        self.close()
        return 128 + signum

    def closeEvent(self, event: QCloseEvent) -> None:
        if getattr(self, "_closing_for_signal", False):
            event.accept()  # stop_for_signal already stopped, waited and saved
            return
        if self.controller.running:
            answer = QMessageBox.question(self, "Run in progress", "A run is in progress. Stop it and quit?")
            if answer != QMessageBox.StandardButton.Yes:
                event.ignore()
                return
        if not self.confirm_discard():
            event.ignore()
            return
        self.controller.shutdown()
        self.report_pool.waitForDone()  # a report being written is finished, never left half-written
        self._save_state()
        event.accept()

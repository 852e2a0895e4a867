"""Drive the real window from the command line: open a profile, run it, show a tab and
save a screenshot (`cryptobench gui --profile quick --run --screenshot OUT.png`).

The screenshots in the README and docs/window.md are made this way (docs/screenshots/make.sh), so they show
the window as it is, and tests use the same path. A screenshot session keeps its
settings and results store in a temporary folder: it neither reads nor changes the
user's theme, window layout or history.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication


@dataclass(frozen=True)
class Plan:
    profile: str | None = None  # a preset name or a profile file
    run: bool = False
    screenshot: Path | None = None
    tab: str | None = None  # a PlotTab value
    theme: str | None = None  # a Theme value
    size: tuple[int, int] | None = None

    @property
    def isolated(self) -> bool:
        """A screenshot never touches the user's settings or history."""
        return self.screenshot is not None


def _fail(app: QApplication, message: str, code: int) -> None:
    print(f"cryptobench gui: {message}", file=sys.stderr)
    app.exit(code)


def drive(app: QApplication, window: Any, plan: Plan) -> None:
    """Schedule the plan on the running event loop; the loop's exit code tells the outcome
    when a screenshot is asked for (0 saved, 1 the run failed, 2 bad input)."""
    from app.core.profile.files import load_profile
    from app.core.settings.profile import ProfileError
    from app.core.vocab import JobStatus, RunStatus
    from app.gui.vocab import PlotTab

    if plan.size is not None:
        window.resize(*plan.size)

    def start() -> None:
        if plan.profile is not None:
            try:
                profile = load_profile(plan.profile)
                window._show_profile(profile)
            except ProfileError as exc:
                _fail(app, str(exc), 2)
                return
            window.profile_name = profile.name
            path = Path(plan.profile)
            window.profile_path = path if path.suffix == ".json" and path.exists() else None
            window._mark_saved()
        if plan.run:
            window.controller.run_finished.connect(lambda run: QTimer.singleShot(0, lambda: finish(run)))
            if not window.start_run(asked=True):  # `gui --run` asked for it: no question in the way
                _fail(app, f"cannot run {plan.profile}: {window.panel.reason or 'see the log'}", 2)
        else:
            finish(None)

    def finish(run: Any) -> None:
        if plan.tab is not None:
            window.plots.tabs.setCurrentIndex(list(PlotTab).index(PlotTab(plan.tab)))
        if window.table.model.rowCount():
            window.table.view.selectRow(0)  # the Samples, Histogram and Resources tabs show a job
        if plan.screenshot is None:
            return
        # Two turns of the loop: layouts settle, then pyqtgraph paints at the final size.
        QTimer.singleShot(50, lambda: QTimer.singleShot(50, lambda: save(run)))

    def save(run: Any) -> None:
        assert plan.screenshot is not None
        window.plots.refresh()
        pixmap = window.grab()
        if not pixmap.save(str(plan.screenshot)):
            _fail(app, f"{plan.screenshot}: cannot write the screenshot (folder missing or not writable?)", 2)
            return
        print(f"saved {plan.screenshot} ({pixmap.width()}x{pixmap.height()})")
        failed = run is not None and (
            run.status != RunStatus.FINISHED or any(job.status != JobStatus.OK for job in run.jobs)
        )
        window.controller.shutdown()
        window.setWindowModified(False)
        window._saved_text = window._current_text()  # nothing to save: quit without asking
        app.exit(1 if failed else 0)

    QTimer.singleShot(0, start)

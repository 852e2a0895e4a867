"""Start the desktop window (`python -m app` with no arguments, `cryptobench gui`, `make run`)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QEvent, QObject

if TYPE_CHECKING:
    import tempfile

    from PySide6.QtWidgets import QApplication

    from app.gui.main_window import MainWindow


class _FirstPaint(QObject):
    """Records when the main window first paints: "launch to window shown" ends there."""

    def __init__(self) -> None:
        super().__init__()
        self.painted_at: float | None = None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if self.painted_at is None and event.type() == QEvent.Type.Paint:
            self.painted_at = time.time()
        return False


def peak_rss_bytes() -> int | None:
    """This process's peak resident memory so far, or None where the OS does not say."""
    try:
        import resource
    except ImportError:  # Windows: the working-set peak is psutil's
        import psutil

        return int(getattr(psutil.Process().memory_info(), "peak_wset", 0)) or None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)  # macOS bytes, Linux KiB


def _write_startup_report(path: Path, painter: _FirstPaint, quit_after: float | None) -> None:
    import psutil

    process = psutil.Process()
    report = {
        "process_created_at": process.create_time(),
        "window_painted_at": painter.painted_at,
        "idle_seconds": quit_after,
        "peak_rss_bytes": peak_rss_bytes(),
        "rss_bytes": process.memory_info().rss,
        "frozen": bool(getattr(sys, "frozen", False)),
    }
    path.write_text(json.dumps(report, indent=2, allow_nan=False) + "\n", encoding="utf-8")


def main(
    argv: Sequence[str] | None = None,
    *,
    quit_after: float | None = None,
    startup_report: Path | None = None,
    plan: Any = None,
    store: str | None = None,
) -> int:
    """Open the window; with `quit_after`, close it after that many idle seconds.

    `startup_report` names a JSON file written just before quitting: the process's
    creation time, when the window first painted, and peak memory. The package smoke
    test and packaging/README.md's budgets are measured with it.

    `plan` (app.gui.screenshot.Plan) opens a profile, runs it, shows a tab and saves a
    screenshot; a screenshot session keeps its settings and store in a temporary folder.
    `store` (`--store`): the results store for this session, over the Preferences' and any
    screenshot's own.
    """
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app import __version__
    from app.gui.gui_thread_gc import collected_on_the_gui_thread
    from app.gui.icon import app_icon
    from app.gui.main_window import APPLICATION, ORGANIZATION, MainWindow
    from app.gui.theme import apply_theme
    from app.gui.vocab import Theme

    # A QApplication that exists already (a test's) is reused. instance() is typed as the
    # QCoreApplication it may be: one without widgets cannot show a window, and making a
    # QApplication beside it fails with Qt's own message.
    existing = QApplication.instance()
    app = existing if isinstance(existing, QApplication) else QApplication(list(argv if argv is not None else sys.argv))
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationVersion(__version__)
    app.setWindowIcon(app_icon())
    # Lets Wayland compositors and docks match the window to cryptobench.desktop.
    app.setDesktopFileName("cryptobench")
    scratch = None
    if plan is not None and plan.isolated:
        import tempfile

        scratch = tempfile.TemporaryDirectory(prefix="cryptobench-gui-")
        settings = QSettings(str(Path(scratch.name) / "settings.ini"), QSettings.Format.IniFormat)
        window_args: dict[str, Any] = {"store_path": Path(scratch.name) / "store.sqlite3"}
    else:
        settings = QSettings(ORGANIZATION, APPLICATION)
        window_args = {}
    if store is not None:
        window_args["store_path"] = store
    # --theme shows a theme for this session only; Preferences is where it is chosen for good.
    theme = plan.theme if plan is not None and plan.theme is not None else settings.value("theme", Theme.SYSTEM)
    apply_theme(app, str(theme))
    with collected_on_the_gui_thread():
        return _show(app, MainWindow(settings, **window_args), quit_after, startup_report, plan, scratch)


def _show(
    app: QApplication,
    window: MainWindow,
    quit_after: float | None,
    startup_report: Path | None,
    plan: Any,
    scratch: tempfile.TemporaryDirectory[str] | None,
) -> int:
    """Show the window, run the event loop until it closes, and destroy it on this thread."""
    from PySide6.QtCore import QTimer

    from app.gui.stop_signals import SignalStop

    # Ctrl-C, SIGTERM and SIGHUP stop a run and close the window as Quit does (no question).
    # `window` is deleted below only after `stopper.uninstall()`: the lambda never sees it gone.
    stopper = SignalStop(lambda signum: app.exit(window.stop_for_signal(signum)))  # noqa: F821
    painter = _FirstPaint()
    window.installEventFilter(painter)
    window.show()
    if quit_after is not None:

        def finish() -> None:
            if startup_report is not None:
                _write_startup_report(startup_report, painter, quit_after)
            app.closeAllWindows()
            app.quit()

        QTimer.singleShot(int(quit_after * 1000), finish)
    if plan is not None:
        from app.gui.screenshot import drive

        drive(app, window, plan)
    code = int(app.exec())
    stopper.uninstall()
    window.removeEventFilter(painter)
    # Destroy the window while the QApplication still exists: left to interpreter
    # shutdown, PySide 6.12 tears the wrappers down after the application and aborts
    # in the garbage collector ("bool_dealloc"), measured after any widget grab.
    import gc

    window.deleteLater()
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    del window
    gc.collect()
    if scratch is not None:
        scratch.cleanup()
    return code


if __name__ == "__main__":
    sys.exit(main())

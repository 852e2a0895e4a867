"""The painting child of tests/gui/test_every_picture.py: every dialog, tab and plot of the
window, painted in one theme, each picture saved for the test to judge.

    python -X faulthandler -m tests.helpers.painting STORE EVENTS REAL_ID CLUSTER_ID THEME OUT

A crash while painting (pyqtgraph's legend ended the process with a segmentation fault)
then ends this child, not the pytest worker, and faulthandler's trace on its stderr says
where. The store and the events are tests/helpers/window_runs.py's. Each picture is
`grab()`bed from the window at 1024×700, or from a dialog at that size, and saved as
OUT/NAME.png; OUT/pictures.json lists them with the theme's background colours and, for
each plot shown, where its view box is in the picture and how many points its items hold.
The test starts it with tests/helpers/paint_child.py.
"""

from __future__ import annotations

import json
import pickle
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: The size every picture is taken at: the window's smallest supported screen.
SIZE = (1024, 700)
#: The picture list the child writes beside the pictures.
MANIFEST = "pictures.json"
#: A BarGraphItem's options that place its bars: one value, or one per bar.
_BAR_OPTIONS = ("x", "x0", "x1", "y", "y0", "y1", "width", "height")


def _settle(app: Any, turns: int = 4) -> None:
    """Layouts settle, then pyqtgraph has laid out its items at the final size."""
    for _ in range(turns):
        app.processEvents()


def _points(item: Any) -> int:
    """How many data points a plot item holds (0 for what draws no data: lines, labels)."""
    import pyqtgraph as pg

    if isinstance(item, pg.PlotDataItem):
        xs = item.getData()[0]
        return 0 if xs is None else len(xs)
    if isinstance(item, pg.ScatterPlotItem):
        return len(item.data)
    if isinstance(item, pg.BarGraphItem):  # one bar per value of whichever option holds a list
        sizes = [len(value) for key, value in item.opts.items() if key in _BAR_OPTIONS and hasattr(value, "__len__")]
        return max(sizes, default=0)
    return 0


def _plots(root: Any) -> list[dict[str, Any]]:
    """Each plot visible in `root`: its view box's rectangle in root's picture, and the data
    points its items hold."""
    import pyqtgraph as pg

    found = []
    for view in root.findChildren(pg.GraphicsView):
        if not view.isVisibleTo(root) or not view.isVisible():
            continue
        for item in view.scene().items():
            if not isinstance(item, pg.ViewBox) or not item.isVisible():
                continue
            rect = view.mapFromScene(item.sceneBoundingRect()).boundingRect()
            corner = view.mapTo(root, rect.topLeft())
            points = sum(_points(child) for child in item.addedItems if child.isVisible())
            found.append({"rect": [corner.x(), corner.y(), rect.width(), rect.height()], "points": points})
    return found


class Pictures:
    """The pictures taken so far, and the manifest they are listed in."""

    def __init__(self, app: Any, out: Path) -> None:
        from PySide6.QtGui import QPalette

        self.app, self.out, self.taken = app, out, []
        palette = app.palette()
        self.colours = {
            "window": palette.color(QPalette.ColorRole.Window).name(),
            "base": palette.color(QPalette.ColorRole.Base).name(),
            "alternate": palette.color(QPalette.ColorRole.AlternateBase).name(),
        }

    def take(self, name: str, widget: Any) -> None:
        _settle(self.app)
        picture = widget.grab()
        file = name.replace("/", "-") + ".png"
        if not picture.save(str(self.out / file), "PNG", 80):  # little compression: quick to write
            raise OSError(f"cannot write {file}")
        size = [picture.width(), picture.height()]
        self.taken.append({"name": name, "file": file, "size": size, "plots": _plots(widget)})

    def exported(self, name: str, window: Any) -> None:
        """The visible tab's plot as File > Export > Plot as PNG writes it (painted again, caption above)."""
        file = name.replace("/", "-") + ".png"
        window.plots.export_plot(self.out / file)
        self.taken.append({"name": name, "file": file, "size": None, "plots": []})

    def write(self) -> None:
        manifest = {"colours": self.colours, "pictures": self.taken}
        (self.out / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")


@contextmanager
def _dialog(app: Any, dialog: Any) -> Iterator[Any]:
    """A dialog shown at the pictures' size, closed afterwards."""
    dialog.resize(*SIZE)
    dialog.show()
    _settle(app)
    try:
        yield dialog
    finally:
        dialog.close()
        dialog.deleteLater()


def _tabs(pictures: Pictures, window: Any, prefix: str, tabs: tuple[str, ...]) -> None:
    from app.gui.vocab import PlotTab

    for tab in tabs:
        window.plots.tabs.setCurrentIndex(list(PlotTab).index(PlotTab(tab)))
        pictures.take(f"{prefix}/{tab}", window)


def _open(window: Any, run_id: str) -> Any:
    history = window.history
    history.select_runs([run_id])
    run = history.open_selected()
    assert run is not None, f"run {run_id} did not open: {history.error}"
    return run


def _replay_live(pictures: Pictures, window: Any, events: list[Any], load_index: int) -> None:
    """The real run's events up to its load job's end, as the controller hands them to the
    window: the live Samples and Resources tabs, then the job chosen in the table."""
    from app.core.contracts.events import JobFinished

    end = next(k for k, e in enumerate(events) if isinstance(e, JobFinished) and e.job_index == load_index)
    for start in range(0, end + 1, 50):  # batches, as the 30 Hz drain hands them over
        window._on_events(events[start : min(start + 50, end + 1)])
    _tabs(pictures, window, "live", ("samples", "resources", "load"))
    window.log_dock.raise_()
    pictures.take("dock/log", window)
    window.results_dock.raise_()
    assert window.table.select_index(load_index)
    _tabs(pictures, window, "live-selected", ("samples", "histogram", "resources"))


def _real_run(pictures: Pictures, window: Any, run: Any) -> None:
    """Every job kind of the real run in the tabs of one job, the run in the others."""
    kinds: dict[str, Any] = {}
    for job in run.jobs:
        kind = str(job.status) if job.status != "ok" else job.mode
        if job.link is not None:
            kind = "packet-link" if job.link.emulation == "packet" else "relay-link"
        kinds.setdefault(kind, job)
    for kind, job in kinds.items():
        assert window.table.select_index(job.index)
        _tabs(pictures, window, f"run/{kind}", ("samples", "histogram"))
    _tabs(pictures, window, "run", ("comparison", "scaling", "load"))
    pictures.exported("export/run-load", window)
    for tab in ("comparison", "scaling"):
        _tabs(pictures, window, "run", (tab,))
        pictures.exported(f"export/run-{tab}", window)


def _config(pictures: Pictures, app: Any, window: Any) -> None:
    """The configuration panel: the first-launch hint, and each editor a job can open."""
    from app.core.vocab import Mode

    panel = window.panel
    window.new_profile()
    pictures.take("config/start", window)
    row = panel.set_checked("x25519")
    panel.tree.setCurrentItem(row)
    panel.mode.setCurrentIndex(panel.mode.findData(Mode.LOOPBACK))
    link = panel.settings_editor.link
    scroll = window.config_dock.widget()  # each editor scrolled into sight, as a user would
    for name, prefix in (("custom-link", "Custom"), ("sweep", "Sweep")):
        choices = [link.choice.itemText(k) for k in range(link.choice.count())]
        link.choice.setCurrentIndex(next(k for k, text in enumerate(choices) if text.startswith(prefix)))
        _settle(app)
        scroll.ensureWidgetVisible(link.path, 0, 0)
        pictures.take(f"config/{name}", window)
    panel.mode.setCurrentIndex(panel.mode.findData(Mode.LOAD))
    panel.settings_editor.load.cluster.setText("tcp://10.0.0.5:8786")
    _settle(app)
    scroll.ensureWidgetVisible(panel.settings_editor.load.cluster, 0, 0)
    pictures.take("config/load-cluster", window)
    panel.mode.setCurrentIndex(panel.mode.findData(Mode.REMOTE))
    _settle(app)
    scroll.ensureWidgetVisible(panel.remote_host, 0, 0)
    pictures.take("config/remote", window)
    window.new_profile()


def _dialogs(pictures: Pictures, app: Any, window: Any, real_id: str, out: Path) -> None:
    from PySide6.QtWidgets import QMessageBox

    from app.gui.dialogs import AboutDialog
    from tests.helpers import trend_cases

    with _dialog(app, AboutDialog(window)) as dialog:
        pictures.take("dialog/about", dialog)
    for name, show in (
        ("getting-started", window.show_getting_started),
        ("preferences", window.show_preferences),
        ("report", window.export_report),
    ):
        with _dialog(app, show()) as dialog:
            pictures.take(f"dialog/{name}", dialog)
    history = window.history
    history.select_runs([trend_cases.RUNS[0][0], trend_cases.RUNS[2][0]])
    with _dialog(app, history.compare_selected()) as dialog:
        dialog.rows()  # every bootstrap done: the table as it ends up
        pictures.take("dialog/compare", dialog)
    for run_id, name in ((trend_cases.RUNS[1][0], "trend"), (real_id, "trend-one-run")):
        history.select_runs([run_id])
        with _dialog(app, history.trend_selected()) as dialog:
            pictures.take(f"dialog/{name}", dialog)
    bad = out / "bad-profile.json"
    bad.write_text('{"name": "bad", "jobs": [{"scheme": "nope"}, {"scheme": "aes-gcm", "samples": -1}]}')
    window.open_profile(bad, ask=False)
    (box,) = [child for child in window.findChildren(QMessageBox) if child.isVisible()]
    pictures.take("dialog/error", box)
    box.close()


def paint(store: Path, events: list[Any], real_id: str, cluster_id: str, theme: str, out: Path) -> None:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication, QMessageBox

    from app.gui.main_window import MainWindow
    from app.gui.theme import apply_theme
    from tests.helpers import loads

    app = QApplication([])
    apply_theme(app, theme)
    # Every question answered "Discard" (a new profile over the edited one): nothing waits.
    QMessageBox.question = lambda *args, **kwargs: QMessageBox.StandardButton.Discard
    pictures = Pictures(app, out)
    window = MainWindow(QSettings(str(out / "settings.ini"), QSettings.Format.IniFormat), store)
    window.resize(*SIZE)
    window.show()
    _settle(app)
    try:
        _replay_live(pictures, window, events, _load_index(events))
        _real_run(pictures, window, _open(window, real_id))
        window.history_dock.raise_()
        pictures.take("dock/history", window)
        window.results_dock.raise_()
        sweeps = _open(window, loads.RUN_ID)
        cluster = next(job for job in sweeps.jobs if job.load is not None and job.load.generators)
        window.plots._load_each.setChecked(True)  # each generator's own p99, dotted
        _tabs(pictures, window, "sweeps", ("load", "comparison"))
        pictures.exported("export/sweeps-load", window)
        assert window.table.select_index(cluster.index)
        _tabs(pictures, window, "sweeps/cluster", ("samples", "histogram"))
        pictures.take("dock/results-load", window)
        tls = next(job for job in sweeps.jobs if job.scheme == "tls13")  # handshakes, resumed
        assert window.table.select_index(tls.index)
        _tabs(pictures, window, "sweeps/tls", ("samples", "load"))
        failed_cluster = _open(window, cluster_id)
        assert window.table.select_index(failed_cluster.jobs[0].index)
        _tabs(pictures, window, "cluster-failed", ("samples", "load"))
        for run_id, status in _ended_early(store, cluster_id):  # a real failed run, and an interrupted one
            run = _open(window, run_id)
            assert window.table.select_index(run.jobs[0].index)
            _tabs(pictures, window, status, ("samples", "comparison"))
        _config(pictures, app, window)
        _dialogs(pictures, app, window, real_id, out)
    finally:
        pictures.write()
        window.controller.shutdown()
        window.setWindowModified(False)
        window._saved_text = window._current_text()
        window.close()


def _ended_early(store: Path, cluster_id: str) -> list[tuple[str, str]]:
    """The stored runs that failed or were interrupted, but the cluster's: (id, status)."""
    from app.core.store.store import Store
    from app.core.vocab import RunStatus

    with Store(store) as opened:
        runs = opened.list_runs()
    ended = (RunStatus.FAILED, RunStatus.INTERRUPTED)
    return [(run.id, str(run.status)) for run in runs if run.status in ended and run.id != cluster_id]


def _load_index(events: list[Any]) -> int:
    """The real run's load job's index, from its events (the one with a load result)."""
    from app.core.contracts.events import JobFinished

    return next(e.job_index for e in events if isinstance(e, JobFinished) and e.result.load is not None)


def main(argv: list[str]) -> int:
    store, events, real_id, cluster_id, theme, out = argv
    Path(out).mkdir(parents=True, exist_ok=True)
    paint(Path(store), pickle.loads(Path(events).read_bytes()), real_id, cluster_id, theme, Path(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

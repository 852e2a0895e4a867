"""Test-wide isolation: offscreen Qt, a private data directory, no leftover processes."""

from __future__ import annotations

import os

# Forced, not defaulted: a developer's QT_QPA_PLATFORM=xcb (or wayland) would open real
# windows, depend on their display and its scale, and hang where no display answers.
os.environ["QT_QPA_PLATFORM"] = "offscreen"
# Qt reads these for HiDPI scaling; set by a desktop session they change every pixel size.
for _name in ("QT_SCALE_FACTOR", "QT_SCREEN_SCALE_FACTORS", "QT_FONT_DPI", "QT_ENABLE_HIGHDPI_SCALING"):
    os.environ.pop(_name, None)
# Runs skip the stability pre-flight: it waits 0.2 s per run, and its warnings on stderr and
# in the log judge the test machine (a VM, a powersave governor), not the code. Its own tests
# (tests/core/machine/test_preflight.py) turn it back on.
os.environ["CRYPTOBENCH_PREFLIGHT"] = "0"
# The tests' own Dask clusters (and the workers they spawn, which inherit this environment):
# no statistical profiler sampling every worker's threads every 10 ms, and the event loop's
# health tick once a second instead of every 20 ms. Neither carries a message; together they
# took an idle two-worker cluster from 12 % of a core to 5 % (2026-11-28, the 2-core VM).
os.environ.setdefault("DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED", "False")
os.environ.setdefault("DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL", "1s")

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import psutil  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

# Hypothesis's default 200 ms deadline per example measures the machine, not the code:
# a loaded 2-core CI runner fails examples a fast laptop passes. Property tests bound
# their own work (max_examples, sizes); a hang is caught by pytest-timeout.
settings.register_profile("cryptobench", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("cryptobench")


def _live_children() -> list[psutil.Process]:
    """Child processes still running, except multiprocessing's resource tracker and fork
    server, which live as long as this process on purpose and run no job."""
    from app.core.processes.jobstart import job_processes

    return job_processes()


@pytest.fixture(autouse=True, scope="session")
def children_skip_pytests_main() -> Iterator[None]:
    """Spawned job processes do not re-import pytest.

    multiprocessing's spawn makes each child import the parent's `__main__` first: the
    app's children import `app.__main__` (nothing), but under `python -m pytest` they
    import pytest and its plugins, 0.2 s a process that no user's run pays. The children
    import what they run by its own module name, so nothing else changes.
    """
    import multiprocessing.spawn as spawn

    original = spawn.get_preparation_data

    def preparation_data(name: str) -> dict[str, object]:
        data = original(name)
        data.pop("init_main_from_name", None)
        data.pop("init_main_from_path", None)
        return data

    spawn.get_preparation_data = preparation_data
    try:
        yield
    finally:
        spawn.get_preparation_data = original


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Never touch the real user data directory: the store lives under tmp_path."""
    home = tmp_path / "cryptobench-home"
    monkeypatch.setenv("CRYPTOBENCH_HOME", str(home))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.delenv("CRYPTOBENCH_STORE", raising=False)  # a developer's shared store stays out
    return home


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[object]:
    """One throwaway PostgreSQL server for the session (tests/helpers/postgres.py); the tests
    that use it skip, with the reason, where none can be started. Mark them
    `@pytest.mark.xdist_group("postgres")` so that one worker starts one server."""
    from tests.helpers import postgres

    problem = postgres.find_problem()
    if problem is not None:
        pytest.skip(f"no PostgreSQL for these tests: {problem}")
    import signal

    cluster = postgres.start_cluster()
    previous = signal.getsignal(signal.SIGTERM)

    def stop_then_terminate(signum: int, frame: object) -> None:
        # `timeout` and CI cancel with SIGTERM, which ends pytest without its teardown: the
        # server would outlive the session (a later session reaps it, `reap_orphans`).
        cluster.stop()
        signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop_then_terminate)
    try:
        yield cluster
    finally:
        if signal.getsignal(signal.SIGTERM) is stop_then_terminate:
            signal.signal(signal.SIGTERM, previous if previous is not None else signal.SIG_DFL)
        cluster.stop()


@pytest.fixture
def pg_url(postgres_cluster: object, request: pytest.FixtureRequest) -> str:
    """A fresh empty database of the session's server, for this test alone; its admin URL."""
    import re

    from tests.helpers.postgres import Cluster

    assert isinstance(postgres_cluster, Cluster)
    name = "t_" + re.sub(r"[^a-z0-9]+", "_", request.node.name.lower())[:50] + f"_{len(postgres_cluster.databases)}"
    return postgres_cluster.new_database(name)


@pytest.fixture(autouse=True)
def no_leftover_processes() -> Iterator[None]:
    """Fail a test that leaves a worker or child process running."""
    before = {p.pid for p in _live_children()}
    yield
    leftovers = [p for p in _live_children() if p.pid not in before]
    if leftovers:
        for process in leftovers:
            try:
                process.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(leftovers, timeout=5)
        pytest.fail(f"test left child processes running: {[p.pid for p in leftovers]}")


@pytest.fixture(autouse=True)
def widgets_capable_application(request: pytest.FixtureRequest) -> None:
    """The worker's Qt application is pytest-qt's QApplication from its first Qt test on.
    A test that writes a PDF without asking for `qapp` made the PDF exporter's
    QGuiApplication, and the next widget test in the same worker aborted the whole worker
    ("QWidget: Cannot create a QWidget without QApplication"): which tests met decided it."""
    import sys

    gui = sys.modules.get("PySide6.QtGui")
    if gui is not None and gui.QGuiApplication.instance() is None:
        request.getfixturevalue("qapp")


@pytest.fixture(autouse=True)
def cycles_collected_on_the_gui_thread(request: pytest.FixtureRequest) -> Iterator[None]:
    """A Qt test collects cycles on its main thread only, as the window does
    (app/gui/gui_thread_gc.py): the collector run by a run controller's pool thread freed an
    earlier test's pyqtgraph object there and deadlocked with the main thread, and the
    worker hung past every timeout."""
    if not {"qtbot", "qapp"} & set(request.fixturenames):
        yield
        return
    from app.gui.gui_thread_gc import collected_on_the_gui_thread

    request.getfixturevalue("qapp")  # the collector's timer needs the application
    with collected_on_the_gui_thread():
        yield


@pytest.fixture(autouse=True)
def qt_application_look_restored() -> Iterator[None]:
    """A test that switches the shared QApplication's theme (style, palette, font, style
    sheet) must not change how the next test's widgets measure: widths depend on them,
    so a test of the window's minimum size would depend on which tests ran before it."""
    import sys

    widgets = sys.modules.get("PySide6.QtWidgets")
    app = widgets.QApplication.instance() if widgets is not None else None
    # instance() is typed QApplication but returns the QGuiApplication the PDF exporter
    # makes when no window test ran first: it has no style to restore.
    if widgets is None or not isinstance(app, widgets.QApplication):
        yield
        return
    style, name = app.style(), app.style().name()
    palette, font, sheet = app.palette(), app.font(), app.styleSheet()
    yield
    if app.styleSheet() != sheet:
        app.setStyleSheet(sheet)
    if app.style() is not style:  # the old style object is gone with setStyle: make its kind anew
        app.setStyle(widgets.QStyleFactory.create(name))
    if app.palette() != palette:
        app.setPalette(palette)
    if app.font() != font:
        app.setFont(font)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `--dist loadgroup` (make test), a worker names each test of an xdist_group as
    `NODEID@GROUP`, which is all the scheduler sees: tests sharing a group go to one worker.

    pytest-xdist (3.6-3.8) writes that name into `item._nodeid`, which pytest 9.2 no longer
    reads (it keeps the id as a NodeId in `item._id`), so every group was silently ignored:
    both workers ran all the presets of tests/test_preset_runs.py, a minute and a half each.
    This names the grouped tests where pytest reads it, after xdist's own hook has run.
    """
    if not getattr(config.option, "loadgroup", False):  # set by xdist on its workers
        return
    for item in items:
        mark = item.get_closest_marker("xdist_group")
        if mark is None:
            continue
        group = str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
        if item.nodeid.endswith(f"@{group}"):  # xdist's name took effect (pytest before 9.2)
            continue
        node_id = getattr(item, "_id", None)
        if node_id is not None and hasattr(node_id, "parse"):
            item._id = type(node_id).parse(f"{item.nodeid}@{group}")
        if not item.nodeid.endswith(f"@{group}"):  # a pytest that keeps its id elsewhere again
            raise pytest.UsageError(
                f"cannot put {item.nodeid} in xdist_group {group!r}: the group would be ignored "
                "and its shared work done once per worker (tests/conftest.py)"
            )


def _freeze_what_lives() -> None:
    """Collect the garbage there is, then move every live object out of the collector's
    reach (`gc.freeze`); objects made after it are collected as before."""
    import gc

    gc.collect()
    gc.freeze()


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what collection made: every test module, the app, Qt's wrappers (some
    330,000 objects), none of which is ever garbage.

    The product calls `gc.collect()` outside its timed regions (between message sizes, before
    a load step), which in a job's own process scans a small heap. Tests that run senders,
    receivers and generators in this process made each of those calls scan the whole suite
    instead, 200 ms a call on the 2-core VM.
    """
    _freeze_what_lives()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    """Freeze again after each test module, once its module fixtures are gone: what a module
    keeps for the session (test_round_trip's producers keep some 120,000 objects) made
    every later `gc.collect()` cost 120-270 ms again. A collection here scans only what
    the module made since the last freeze."""
    yield
    module = getattr(item, "module", None)
    if nextitem is None or getattr(nextitem, "module", None) is not module:
        _freeze_what_lives()

"""Load jobs in the window: the results table's headline row and the Load tab's curves,
from hand-made `Load` records (no load job is run)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from PySide6 import QtCore, QtGui

from app.core.load.verdict import step_calls
from app.core.records.job_conditions import Load, LoadStep
from app.core.records.job_records import CpuUsage, ProcessUsage
from app.core.results.model import JobResult
from app.gui.plots.load import SATURATED_LEGEND
from app.gui.plots.panel import PlotsPanel
from app.gui.results.cells import Column
from app.gui.results.load_cells import LOAD_ROW, load_row, step_line
from app.gui.results.table import EVERY_METRIC, ResultsTable
from app.gui.vocab import PlotTab
from tests.helpers import records


def _step(
    offered: float, achieved: float, p50: float, p99: float, *, saturated: bool = False, errors: int = 0
) -> LoadStep:
    return LoadStep(
        offered_per_s=offered,
        achieved_per_s=achieved,
        errors=errors,
        latency_s={"p50": p50, "p90": (p50 + p99) / 2, "p99": p99, "p99.9": p99 * 1.5, "max": p99 * 2},
        generator_saturated=saturated,
        sent=int(offered),
        completed=int(achieved),
        generator_cpu_percent=30.0,
        server_cpu_percent=80.0,
        saturation_reason="the generator handed requests to the kernel up to 2.00 ms late (p99, limit 1 ms)"
        if saturated
        else None,
    )


def _load_job(
    index: int,
    load: Load,
    *,
    scheme: str = "x25519",
    label: str = "X25519 [cryptography] (session)",
    family: str = "key-agreement",
    status: str = "ok",
) -> JobResult:
    cpu = CpuUsage(
        {
            "sender": ProcessUsage(samples=10, mean_percent=35.0, max_percent=60.0),
            "receiver": ProcessUsage(samples=10, mean_percent=90.0, max_percent=99.0),
        },
        0.1,
    )
    metrics = {"latency": records.metric_at(2e-4), "server": records.metric_at(5e-5)}
    return records.job(
        "run",
        index,
        32,
        metrics,
        scheme=scheme,
        params={},
        label=label,
        family=family,
        mode="load",
        status=status,
        cpu=cpu,
        load=load,
    )


#: A sweep past the knee: 1,800/s the most achieved, the server kept up to 1,500/s (p99 2 ms).
#: Its last step carries the generator's mark (sent late), yet its p50 is 100× the low-load
#: p99: the server had fallen behind, and the step counts as the server's.
SWEEP = Load(
    clients=4,
    server_workers=1,
    request="handshake",
    duration_s=3.0,
    warmup_s=0.5,
    server_request_s=5e-4,
    client_prepare_s=3e-4,
    knee_per_s=1800.0,
    sustained_per_s=1500.0,
    sustained_p99_s=2e-3,
    saturated=True,
    steps=(
        _step(500, 500, 3e-4, 1e-3),
        _step(1500, 1500, 6e-4, 2e-3),
        _step(2000, 1800, 5e-2, 0.2),
        _step(2500, 1700, 0.1, 0.4, saturated=True),
    ),
)
#: Every step kept up with: the knee is only a lower bound.
UNDER = Load(
    clients=2,
    server_workers=1,
    request="signed message",
    duration_s=1.0,
    warmup_s=0.2,
    knee_per_s=400.0,
    sustained_per_s=400.0,
    sustained_p99_s=9e-4,
    saturated=False,
    steps=(_step(200, 200, 2e-4, 8e-4), _step(400, 400, 2.5e-4, 9e-4)),
)
#: One fixed rate, which the generator could not keep to.
FIXED = Load(clients=4, server_workers=2, steps=(_step(200, 199, 1.9e-4, 5.9e-3, saturated=True),))


def _operations_job(index: int) -> JobResult:
    return records.job("run", index, metrics={"encrypt": records.metric_at(2e-6)}, label="AES-128-GCM [cryptography]")


# ------------------------------------------------------------------------ the table


def _texts(table: ResultsTable) -> list[list[str]]:
    return [line.split("\t") for line in table.table_text(selected_only=False).splitlines()[1:]]


def test_the_headline_row_of_a_load_job_holds_its_knee_and_p99(qtbot: Any) -> None:
    table = ResultsTable()
    qtbot.addWidget(table)
    table.set_results(
        [
            _load_job(0, SWEEP),
            _load_job(1, UNDER, scheme="ed25519", label="Ed25519 [cryptography]", family="signature"),
            _load_job(2, FIXED),
            _operations_job(3),
        ]
    )
    rows = _texts(table)
    pick = [(row[Column.METRIC], row[Column.MEDIAN], row[Column.P95], row[Column.CI95]) for row in rows]
    assert pick == [
        ("handshakes/s", "knee 1,800/s", "p99 2 ms", "-"),
        ("signed messages/s", "≥ 400/s", "p99 900 µs", "-"),
        ("handshakes/s", "199/s", "p99 5.9 ms", "-"),
        ("encrypt", "2.04 µs", rows[3][Column.P95], rows[3][Column.CI95]),
    ]
    assert rows[0][Column.MODE] == "load · session"  # no placement recorded: the mode, then its exchange
    model = table.model
    # Sorted as numbers: the knee, then the p99 in seconds.
    assert [model.index(row, Column.MEDIAN).data(int(QtCore.Qt.ItemDataRole.UserRole)) for row in range(3)] == [
        1800.0,
        400.0,
        199.0,
    ]
    assert model.index(0, Column.P95).data(int(QtCore.Qt.ItemDataRole.UserRole)) == 2e-3


def test_the_tooltips_give_every_step_and_what_each_figure_is() -> None:
    cells = load_row(_load_job(0, SWEEP))
    tip = cells[Column.MEDIAN].tip or ""
    assert tip.startswith(
        "Verdict: server overloaded at 1,800 handshakes/s in one server process, the knee, at the step offered "
        "2,000/s: "
        "p50 50 ms, 50× the low-load p99 (1 ms), server CPU only 80 %: held back by the machine or the link, not "
        "by its own work; sustains 1,500/s at p99 under 2 ms\n"
    )
    assert "4 client connections (one generator process), 1 server worker" in tip
    assert "the server's crypto 500 µs" in tip
    for step, call in zip(SWEEP.steps, step_calls(SWEEP), strict=True):
        assert f"• {step_line(step, call, cpu=True)}" in tip
    assert (
        "offered 2,500/s → achieved 1,700/s · p50 100 ms, p99 400 ms, max 800 ms · generator CPU 30 %, "
        "server CPU 80 % · server overloaded: p50 100 ms, 100× the low-load p99 (1 ms); achieved 68 % of "
        "offered; server CPU only 80 %: held back by the machine or the link, not by its own work; the "
        "generator's marks (the generator handed requests" in tip
    )
    assert "p99 latency at 1,500/s, the highest rate the server kept up with" in (cells[Column.P95].tip or "")
    assert (cells[Column.CPU].tip or "").startswith("sender = the load generator")
    assert (load_row(_load_job(1, UNDER))[Column.MEDIAN].tip or "").startswith(
        "Verdict: at least 400 signed messages/s in one server process at p99 under 900 µs: no step showed "
        "server overload, so its limit lies higher"
    )
    fixed = load_row(_load_job(2, FIXED))
    assert fixed[Column.MEDIAN].foreground is not None  # generator-limited: in the warning colour
    assert "Verdict: generator limited: the load generator, not the server, was the limit at its one step" in (
        fixed[Column.MEDIAN].tip or ""
    )
    assert "includes its own delay" in (fixed[Column.P95].tip or "")


def test_a_load_job_without_a_server_figure_says_so() -> None:
    generator_bound = Load(
        clients=4,
        server_workers=1,
        knee_per_s=None,
        steps=(_step(200, 200, 2e-4, 6e-3, saturated=True), _step(1000, 1000, 1e-4, 7e-3, saturated=True)),
    )
    cells = load_row(_load_job(0, generator_bound))
    assert (cells[Column.MEDIAN].text, cells[Column.MEDIAN].key, cells[Column.P95].text) == (
        "generator-bound",
        None,
        "-",
    )
    failed = load_row(_load_job(1, None, status="failed"))  # type: ignore[arg-type]  # failed before a step
    assert (failed[Column.METRIC].text, failed[Column.MEDIAN].text) == (LOAD_ROW, "-")


def test_every_metric_puts_the_load_row_first_and_a_named_metric_shows_its_samples(qtbot: Any) -> None:
    table = ResultsTable()
    qtbot.addWidget(table)
    table.set_results([_load_job(0, SWEEP)])
    table.set_metric(EVERY_METRIC)
    assert [row[Column.METRIC] for row in _texts(table)] == ["handshakes/s", "latency", "server"]
    table.set_metric("latency")
    (row,) = _texts(table)
    assert (row[Column.METRIC], row[Column.MEDIAN]) == ("latency", "204 µs")


# ------------------------------------------------------------------------ the Load tab


@pytest.fixture
def panel(qtbot: Any) -> PlotsPanel:
    widget = PlotsPanel()
    qtbot.addWidget(widget)
    widget.resize(900, 600)
    return widget


def _drawn(panel: PlotsPanel) -> list[Any]:
    return [item for item in panel._load_plot.getPlotItem().items if item in panel._load_items]


def test_the_load_tab_draws_p50_and_p99_against_achieved_rate_one_pair_per_job(panel: PlotsPanel) -> None:
    assert panel.tabs.tabText(list(PlotTab).index(PlotTab.LOAD)) == "Load"
    panel.show_results([_operations_job(0), _load_job(1, SWEEP), _load_job(2, FIXED)])
    items = _drawn(panel)
    assert len(items) == 4  # p99 and p50 of two jobs; the operations job has no curve
    sweep_p99, sweep_p50, fixed_p99, _ = items
    x, y = sweep_p99.getData()
    # Log mode: pyqtgraph hands back log10 of what it was given.
    np.testing.assert_allclose(10 ** np.asarray(x), [500, 1500, 1800, 1700])
    np.testing.assert_allclose(10 ** np.asarray(y), [1e-3, 2e-3, 0.2, 0.4])
    np.testing.assert_allclose(10 ** np.asarray(sweep_p50.getData()[1]), [3e-4, 6e-4, 5e-2, 0.1])
    assert sweep_p99.opts["pen"].style() == QtCore.Qt.PenStyle.SolidLine
    assert sweep_p50.opts["pen"].style() == QtCore.Qt.PenStyle.DashLine
    assert sweep_p99.opts["pen"].color() != fixed_p99.opts["pen"].color()  # a colour per job
    # The sweep's last step, marked by the generator but with the server fallen behind, is the
    # server's: filled. The fixed job's step the generator limited is hollow (the background).
    fills = [brush.color() for brush in sweep_p99.opts["symbolBrush"]]
    assert fills == [sweep_p99.opts["pen"].color()] * 4
    assert [brush.color() for brush in fixed_p99.opts["symbolBrush"]] == [panel._bg]
    legend = [label.text for _, label in panel._load_legend.items]
    assert legend == [
        "X25519 [cryptography] (session) · 4 clients × 1 workers",
        "X25519 [cryptography] (session) · 4 clients × 2 workers",
        "p99",
        "p50",
        SATURATED_LEGEND,
    ]
    header = panel._load_header.text()
    assert "1 step hollow: the load generator, not the server, was the limit" in header
    # Each job's verdict, as the report and the terminal say it.
    assert "server overloaded at 1,800 handshakes/s in one server process, the knee" in header
    assert "generator limited: the load generator, not the server, was the limit at its one step" in header


def test_load_curves_fill_as_jobs_finish_and_clear_on_reset(panel: PlotsPanel) -> None:
    assert "Finished load jobs appear here" in panel._load_header.text()
    panel.add_load_result(_operations_job(0))
    panel.add_load_result(_load_job(1, UNDER))
    assert len(_drawn(panel)) == 2
    assert SATURATED_LEGEND not in [label.text for _, label in panel._load_legend.items]  # nothing hollow
    panel.add_load_result(_load_job(2, SWEEP))
    panel.add_load_result(_load_job(2, UNDER, label="again"))  # the same job again replaces it
    assert len(_drawn(panel)) == 4 and [c.name for c in panel._load_curves] == [
        "X25519 [cryptography] (session)",
        "again (session)",
    ]
    panel.reset()
    assert _drawn(panel) == [] and panel._load_curves == []
    # A stored run opened: its load jobs, failed ones and steps without a completed request left out.
    empty = Load(
        clients=1,
        server_workers=1,
        steps=(LoadStep(offered_per_s=100, achieved_per_s=0, errors=100, latency_s={}), _step(50, 50, 1e-4, 2e-4)),
    )
    panel.show_results([_load_job(0, empty), _load_job(1, SWEEP, status="failed")])
    assert [c.rates.tolist() for c in panel._load_curves] == [[50.0]]
    assert "1 step with no completed request not shown" in panel._load_header.text()


def test_hollow_points_follow_the_theme_and_the_hover_names_the_step(panel: PlotsPanel, qtbot: Any) -> None:
    panel.show_results([_load_job(0, FIXED)])
    palette = QtGui.QPalette(panel.palette())
    palette.setColor(QtGui.QPalette.ColorRole.Window, QtGui.QColor(30, 30, 30))
    panel.setPalette(palette)  # a PaletteChange redraws
    assert _drawn(panel)[0].opts["symbolBrush"][0].color() == QtGui.QColor(30, 30, 30)
    panel.tabs.setCurrentIndex(list(PlotTab).index(PlotTab.LOAD))
    panel.show()
    qtbot.waitExposed(panel)
    vb = panel._load_plot.getPlotItem().vb
    vb.setRange(xRange=(2.0, 2.6), yRange=(-4.0, -2.0), padding=0)
    panel._on_load_hover((vb.mapViewToScene(QtCore.QPointF(np.log10(199), np.log10(5.9e-3))),))
    assert panel._load_readout.text() == (
        "X25519 [cryptography] (session) · offered 200/s → achieved 199/s · p50 190 µs, "
        "p99 5.9 ms, max 11.8 ms · generator-limited: the generator handed "
        "requests to the kernel up to 2.00 ms late (p99, limit 1 ms)\n"
        "generator limited: the load generator, not the server, was the limit at its one step, so no rate here "
        "is the server's: the generator handed requests to the kernel up to 2.00 ms late (p99, limit 1 ms)"
    )


def test_the_live_latency_stream_goes_to_the_samples_tab_only(panel: PlotsPanel) -> None:
    panel.begin_job(0, "X25519 [cryptography] (session) · 32 B")
    panel.add_samples(0, "latency", [2e-4, 3e-4, 1e-2])
    panel.refresh()
    assert panel._samples_curves["latency"].getData()[1].tolist() == [2e-4, 3e-4, 1e-2]
    assert _drawn(panel) == []
    panel.add_load_result(_load_job(0, FIXED))
    panel.refresh()
    assert len(_drawn(panel)) == 2 and panel.sample_count() == 3


def test_a_finished_load_job_reaches_the_table_and_the_load_tab_at_once(qtbot: Any, tmp_path: Any) -> None:
    from PySide6.QtCore import QSettings

    from app.core.contracts.events import JobFinished
    from app.gui.main_window import MainWindow

    window = MainWindow(
        settings=QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat),
        store_path=tmp_path / "store.sqlite3",
    )
    qtbot.addWidget(window)
    try:
        window._on_events([JobFinished(0, _load_job(0, SWEEP)), JobFinished(1, _operations_job(1))])
        assert [curve.name for curve in window.plots._load_curves] == ["X25519 [cryptography] (session)"]
        assert [row[Column.MEDIAN] for row in _texts(window.table)] == ["knee 1,800/s", "2.04 µs"]
    finally:
        window.controller.shutdown()


def test_a_row_added_later_widens_its_columns(qtbot: Any) -> None:
    table = ResultsTable()
    qtbot.addWidget(table)
    table.resize(1400, 300)
    table.show()
    table.add_result(_operations_job(0))
    table.add_result(_load_job(1, UNDER, scheme="ed25519", label="Ed25519 [cryptography]", family="signature"))
    header = table.view.horizontalHeader()
    for column in (Column.METRIC, Column.MEDIAN, Column.P95):
        assert header.sectionSize(column) >= table.view.sizeHintForColumn(column)  # "signed messages/s" whole


def test_the_load_tab_says_the_issue_sweeps_verdict_and_draws_no_step_hollow(panel: PlotsPanel) -> None:
    """An X25519 sweep past its knee: its last two steps were marked generator-saturated for
    1.2 ms of send lag while the server sat at 99-100 % CPU; the tab now calls them the
    server's (filled) and says the core's verdict, as the report and the terminal do."""
    from app.core.load.verdict import verdict_text
    from tests.helpers.loads import OVERLOADED_SWEEP, load, load_job

    job = load_job(0, "X25519 [cryptography] (session)", load(OVERLOADED_SWEEP), family="key-agreement", pq=0)
    assert job.load is not None
    panel.show_results([job])
    (curve,) = panel._load_curves
    assert curve.saturated == (False,) * 10
    assert SATURATED_LEGEND not in [label.text for _, label in panel._load_legend.items]
    said = verdict_text(job, job.load)
    assert said.startswith("server overloaded from the step offered 24,868/s (achieved 24,252/s: ")
    assert (
        "the knee, the most it achieved, 24,649 handshakes/s on one core (CPU 1) at the step offered 34,599/s" in said
    )
    assert curve.verdict == said and said in panel._load_header.text()

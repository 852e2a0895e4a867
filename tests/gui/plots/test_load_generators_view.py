"""A cluster load job in the window: the Load tab's read-out gives each generator's own record
of the step under the pointer, and the results table's tooltips say where the load came from
(app/gui/plots/load.py, app/gui/results/load_cells.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from PySide6 import QtCore

from app.core.records.job_records import CpuUsage, ProcessUsage
from app.core.results.model import JobResult
from app.gui.plots.panel import PlotsPanel
from app.gui.results.cells import Column
from app.gui.results.load_cells import generator_lines, load_row, step_line
from app.gui.vocab import PlotTab
from app.report.load_generator_words import signed_seconds
from app.report.units import format_seconds
from tests.helpers.loads import CLUSTER, KNEE_STEPS, cluster_load, load, load_job

LABEL = "X25519 [cryptography] (session)"


def _cluster_job(**kwargs: Any) -> JobResult:
    job = load_job(0, LABEL, cluster_load(**kwargs), family="key-agreement", scheme="x25519", pq=0)
    job.cpu = CpuUsage(
        {
            "sender": ProcessUsage(samples=10, mean_percent=5.0, max_percent=9.0),
            "receiver": ProcessUsage(samples=10, mean_percent=40.0, max_percent=60.0),
        },
        0.1,
    )
    return job


@pytest.fixture
def panel(qtbot: Any) -> PlotsPanel:
    widget = PlotsPanel()
    qtbot.addWidget(widget)
    widget.resize(900, 600)
    return widget


def test_each_generators_line_gives_its_own_figures_or_says_it_is_missing() -> None:
    job = _cluster_job(rates=(400, 800), generators=3, late=(3, 400), incomplete_at=800)
    the_load = job.load
    assert the_load is not None
    first, second = the_load.steps
    lines = generator_lines(the_load, first)
    assert len(lines) == 3
    for line, part, place in zip(lines, first.generators, the_load.generators, strict=True):
        assert line.startswith(
            f"#{part.generator} ({place.host}, worker {place.worker}): {step_line(part)} · send lag "
        )
        assert f"CPU {part.generator_cpu_percent:.0f} %" in line
        assert f"p99 {format_seconds(part.latency_s['p99'])}" in line
        assert part.started_late_s is not None and f" · start {signed_seconds(part.started_late_s)} · " in line
    assert lines[2].endswith(" · generator-limited") and not lines[0].endswith(" · generator-limited")
    assert generator_lines(the_load, second)[1] == (
        "#2 (loadgen-b, worker tcp://10.0.0.12:40001): missing: it did not return this step (the step is incomplete)"
    )
    assert generator_lines(load(KNEE_STEPS), KNEE_STEPS[0]) == []  # one generator: nothing more to say


def test_generators_on_machines_of_one_name_are_told_apart_by_their_workers() -> None:
    from dataclasses import replace

    job = _cluster_job(rates=(400,), generators=2)
    assert job.load is not None
    same = replace(job.load, generators=tuple(replace(p, host="vm") for p in job.load.generators))
    first, second = generator_lines(same, same.steps[0])
    assert first.startswith("#1 (vm, worker tcp://10.0.0.11:40001): ")
    assert second.startswith("#2 (vm, worker tcp://10.0.0.12:40001): ")


def test_the_tooltips_say_where_the_load_came_from() -> None:
    cells = load_row(_cluster_job())
    tip = cells[Column.MEDIAN].tip or ""
    assert f"4 client connections (2 generators on Dask workers (loadgen-a, loadgen-b), through {CLUSTER})" in tip
    assert "one generator process" not in tip
    cpu = cells[Column.CPU].tip or ""
    assert cpu.startswith("sender = this machine's process that coordinated the generators on Dask workers")


def test_the_readout_lists_each_generator_under_the_step_pointed_at(panel: PlotsPanel, qtbot: Any) -> None:
    job = _cluster_job(rates=(400,), generators=2)
    the_load = job.load
    assert the_load is not None
    (step,) = the_load.steps
    panel.show_results([job])
    panel.tabs.setCurrentIndex(list(PlotTab).index(PlotTab.LOAD))
    panel.show()
    qtbot.waitExposed(panel)
    vb = panel._load_plot.getPlotItem().vb
    x, y = np.log10(step.achieved_per_s), np.log10(step.latency_s["p99"])
    vb.setRange(xRange=(x - 0.3, x + 0.3), yRange=(y - 1, y + 1), padding=0)
    panel._on_load_hover((vb.mapViewToScene(QtCore.QPointF(x, y)),))
    lines = panel._load_readout.text().split("\n")
    assert lines[0].startswith(f"{LABEL} · offered 400/s → achieved 400/s")
    assert lines[1:3] == generator_lines(the_load, step)
    assert lines[1].startswith("#1 (loadgen-a, worker tcp://10.0.0.11:40001): offered 200/s → achieved 200/s")
    assert lines[2].startswith("#2 (loadgen-b, worker tcp://10.0.0.12:40001)")
    assert lines[3].startswith("at least 400 handshakes/s")  # the verdict, last


def test_each_generators_p99_is_drawn_when_asked_and_its_numbers_go_to_the_plots_csv(panel: PlotsPanel) -> None:
    job = _cluster_job(rates=(400, 800), generators=2, incomplete_at=800)
    the_load = job.load
    assert the_load is not None
    panel.show_results([job])
    panel.tabs.setCurrentIndex(list(PlotTab).index(PlotTab.LOAD))
    assert panel._load_each.isVisibleTo(panel) and not panel._load_each.isChecked()
    assert len(panel._load_items) == 2  # p99 and p50 of the merged steps
    names = [row[0] for row in panel.plot_table().rows]
    assert names == [LABEL, LABEL]
    panel._load_each.setChecked(True)
    assert len(panel._load_items) == 4  # and one dotted p99 per generator
    first, second = panel._load_items[2:]
    xs, ys = first.getData()
    # Generator #1 returned both steps, at the steps' achieved rates; #2 only the first.
    assert 10 ** np.asarray(xs) == pytest.approx([s.achieved_per_s for s in the_load.steps])
    assert 10 ** np.asarray(ys) == pytest.approx([s.generators[0].latency_s["p99"] for s in the_load.steps])
    assert len(second.getData()[0]) == 1
    rows = panel.plot_table().rows
    assert [row[0] for row in rows] == [LABEL, LABEL] + [
        f"{LABEL} · generator #1 (loadgen-a, worker tcp://10.0.0.11:40001)"
    ] * 2 + [f"{LABEL} · generator #2 (loadgen-b, worker tcp://10.0.0.12:40001)"]
    assert rows[4][3] == the_load.steps[0].generators[1].latency_s["p99"]
    panel._load_each.setChecked(False)
    assert len(panel._load_items) == 2


def test_one_generator_jobs_offer_no_generator_curves(panel: PlotsPanel) -> None:
    panel.show_results([load_job(0, LABEL, load(KNEE_STEPS))])
    panel.tabs.setCurrentIndex(list(PlotTab).index(PlotTab.LOAD))
    assert not panel._load_each.isVisibleTo(panel)
    panel._load_each.setChecked(True)  # ticked by some earlier run: nothing to draw, nothing extra in the CSV
    assert len(panel._load_items) == 2 and len(panel.plot_table().rows) == len(KNEE_STEPS)

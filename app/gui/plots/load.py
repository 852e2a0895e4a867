"""The Load tab: latency percentiles (p50 and p99) against achieved rate, one curve pair
per load job, from the steps of `JobResult.load` (app.core.records.job_conditions `Load`).

Both axes are logarithmic: a sweep spans 0.1x to 1.6x a server's capacity, and schemes'
capacities differ a hundredfold (RSA beside X25519); latency runs from microseconds at
low load to seconds past the knee. A step the load generator limited (app.core.load.verdict
calls it: it sent late or short and the server was not shown to fall behind, so its
latency measures the generator too) is drawn hollow and named so in the legend and the
read-out. Each job's verdict, the sentence the report and the terminal say, is in the
header (a few jobs) and under the plot beside the step the pointer is on.

A mixin of `PlotsPanel`: its state lives on the panel."""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from app.core.load.verdict import StepCall, step_calls, verdict_text
from app.core.records.job_conditions import Load, LoadStep, StepLimit
from app.core.results.model import JobResult
from app.core.vocab import JobStatus
from app.gui.plots.axes import GridAxis, HoverEvent, SIAxis, hover_proxy, new_plot, outside_legend, view_point
from app.gui.plots.caption import PlotCaption, job_name
from app.gui.plots.common import FloatArray, label_style, series_colour, short_distinct
from app.gui.plots.state import PanelState
from app.gui.results.load_cells import generator_lines, step_line
from app.gui.vocab import PlotTab
from app.gui.words import plural
from app.report.load_generator_words import generator_where

#: The two percentiles drawn, with their pen style: p99 solid (the figure a server is
#: sized by), p50 dashed.
DRAWN_PERCENTILES: tuple[tuple[str, QtCore.Qt.PenStyle], ...] = (
    ("p99", QtCore.Qt.PenStyle.SolidLine),
    ("p50", QtCore.Qt.PenStyle.DashLine),
)
#: Symbols of the two percentiles' points (a triangle for p99, a circle for p50).
_SYMBOLS = {"p99": "t1", "p50": "o"}
#: Legend entries are shortened to this many characters (the read-out names the whole job).
LEGEND_CHARS = 26
SATURATED_LEGEND = "hollow: generator-limited"
#: The legend's key to the generators' own curves (shown with "Each generator" on).
GENERATORS_LEGEND = "dotted ×: each generator's p99"
#: Up to this many jobs, the header gives each job's verdict (more: the read-out does).
HEADER_VERDICTS = 3


@dataclass(frozen=True)
class GeneratorCurve:
    """One generator of a cluster job, as drawn when "Each generator" is on: its own p50 and
    p99 at each step it returned, placed at the step's achieved rate (the merged point's x),
    so each generator's latency stands right above or below the step's."""

    number: int
    #: Where it ran (`generator_where`: its host and its worker's address, which tell
    #: generators on machines of one name apart).
    where: str
    rates: FloatArray
    p50: FloatArray
    p99: FloatArray


@dataclass(frozen=True)
class LoadCurve:
    """A load job as drawn: its legend name, achieved rates, p50 and p99 (seconds) and
    which points the generator saturated; only the steps with a positive rate and both
    percentiles (log axes have no place for 0)."""

    name: str
    result: JobResult
    steps: tuple[LoadStep, ...]
    rates: FloatArray
    p50: FloatArray
    p99: FloatArray
    saturated: tuple[bool, ...]
    calls: tuple[StepCall, ...]
    verdict: str
    #: A cluster job's generators (empty for one generator).
    generators: tuple[GeneratorCurve, ...] = ()


def _has_latency(step: LoadStep) -> bool:
    return all(step.latency_s.get(name, 0.0) > 0 for name, _ in DRAWN_PERCENTILES) and all(
        math.isfinite(step.latency_s[name]) for name, _ in DRAWN_PERCENTILES
    )


def _drawable(step: LoadStep) -> bool:
    return step.achieved_per_s > 0 and _has_latency(step)


def load_curves(results: list[JobResult]) -> tuple[list[LoadCurve], int]:
    """The curves of the finished load jobs (ok, with steps), in job order, and how many
    steps had nothing to place on log axes (no request completed)."""
    jobs = [r for r in results if r.status == JobStatus.OK and r.load is not None and r.load.steps]
    names = [_name(r, jobs) for r in jobs]
    curves, skipped = [], 0
    for result, name in zip(jobs, names):
        load = result.load
        assert load is not None  # filtered above
        pairs = [(step, call) for step, call in zip(load.steps, step_calls(load), strict=True) if _drawable(step)]
        steps = tuple(step for step, _ in pairs)
        skipped += len(load.steps) - len(steps)
        curves.append(
            LoadCurve(
                name,
                result,
                steps,
                np.array([s.achieved_per_s for s in steps], dtype=np.float64),
                np.array([s.latency_s["p50"] for s in steps], dtype=np.float64),
                np.array([s.latency_s["p99"] for s in steps], dtype=np.float64),
                tuple(call.limit == StepLimit.GENERATOR for _, call in pairs),
                tuple(call for _, call in pairs),
                verdict_text(result, load),
                _generator_curves(load, steps),
            )
        )
    return curves, skipped


def _generator_curves(load: Load, steps: tuple[LoadStep, ...]) -> tuple[GeneratorCurve, ...]:
    """Each generator's points over the drawn steps (those it returned, with both percentiles)."""
    curves = []
    for number, place in enumerate(load.generators, start=1):
        points = [
            (step.achieved_per_s, part)
            for step in steps
            for part in step.generators
            if part.generator == number and _has_latency(part)
        ]
        curves.append(
            GeneratorCurve(
                number,
                generator_where(place),
                np.array([x for x, _ in points], dtype=np.float64),
                np.array([part.latency_s["p50"] for _, part in points], dtype=np.float64),
                np.array([part.latency_s["p99"] for _, part in points], dtype=np.float64),
            )
        )
    return tuple(curves)


def _name(result: JobResult, jobs: list[JobResult]) -> str:
    """The job's label, with its clients and server workers when another job has the same label."""
    if sum(other.named == result.named for other in jobs) < 2 or result.load is None:
        return result.named
    return f"{result.named} · {result.load.clients} clients × {result.load.server_workers} workers"


class _RateAxis(GridAxis):
    """Requests per second on a log axis: plain numbers ("100", "1,000", "10,000")."""

    def logTickStrings(self, values: list[float], scale: float, spacing: float) -> list[str]:
        out = []
        for v in values:
            rate = 10.0 ** float(v)
            out.append(
                f"{rate:,.0f}" if math.isfinite(rate) and rate >= 1 else f"{rate:.2g}" if math.isfinite(rate) else ""
            )
        return out


def _legend_key(
    pen: QtGui.QPen | None,
    symbol: str | None = None,
    symbol_pen: QtGui.QPen | None = None,
    brush: QtGui.QBrush | None = None,
) -> pg.PlotDataItem:
    """A legend-only sample, never added to the plot. The legend draws a PlotDataItem's
    symbol from its scatter's defaults, which per-point brushes (hollow or filled) leave
    unset: a job's entry is its colour's line, and the symbols get keys of their own."""
    key = pg.PlotDataItem(pen=pen)
    if symbol is not None:
        key.setSymbol(symbol)
        key.scatter.setSymbol(symbol)
        key.scatter.setPen(symbol_pen)
        key.scatter.setBrush(brush)
        key.scatter.setSize(9)
    return key


class LoadTab(PanelState):
    def _build_load_tab(self) -> None:
        self._load_plot = new_plot(left=SIAxis("left"), bottom=_RateAxis("bottom"))
        item = self._load_plot.getPlotItem()
        item.setLabel("bottom", "achieved rate (requests/s, log scale)")
        item.setLabel("left", "latency", units="s")
        item.setLogMode(x=True, y=True)
        self._load_legend = outside_legend(item)
        self._load_items: list[pg.PlotDataItem] = []
        self._load_header = QtWidgets.QLabel()
        self._load_header.setWordWrap(True)  # a long header must not widen the window
        self._load_readout = self._readout()
        self._load_readout.setWordWrap(True)  # a job's verdict must not widen the window
        # Shown only when a job's generators ran on Dask workers: their own p99 beside the merge's.
        self._load_each = QtWidgets.QCheckBox("Each generator's p99")
        self._load_each.setToolTip(
            "For jobs whose generators ran on Dask workers: each generator's own p99 at every step "
            "(dotted, ×), at the step's achieved rate; point at a step to read each generator's figures"
        )
        self._load_each.setVisible(False)
        self._load_each.toggled.connect(self._on_load_each_toggled)
        self.tabs.addTab(
            self._page(self._load_header, self._load_each, self._load_plot, self._load_readout), PlotTab.LOAD.label
        )
        self._load_proxy = hover_proxy(self._load_plot, self._on_load_hover)

    def add_load_result(self, result: JobResult) -> None:
        """A finished job (JobFinished): a load job's curves appear at once, replacing the
        result of the same index; any other job is ignored."""
        if result.load is None:
            return
        self._load_results = [r for r in self._load_results if r.index != result.index] + [result]
        self._draw_load()

    def _set_load_results(self, results: list[JobResult]) -> None:
        self._load_results = [r for r in results if r.load is not None]
        self._draw_load()

    def _draw_load(self) -> None:
        plot = self._load_plot.getPlotItem()
        for curve in self._load_items:
            plot.removeItem(curve)
        self._load_items = []
        self._load_legend.clear()
        self._load_readout.clear()
        curves, skipped = load_curves(self._load_results)
        self._load_curves = curves
        entries: list[tuple[pg.PlotDataItem, str]] = []
        for k, curve in enumerate(curves):
            colour = series_colour(k)
            hollow = pg.mkBrush(self._bg)
            for percentile, style in DRAWN_PERCENTILES:
                ys = curve.p99 if percentile == "p99" else curve.p50
                item = pg.PlotDataItem(
                    curve.rates,
                    ys,
                    pen=pg.mkPen(colour, width=2, style=style),
                    symbol=_SYMBOLS[percentile],
                    symbolSize=9,
                    symbolPen=pg.mkPen(colour, width=1.5),
                    symbolBrush=[hollow if sat else pg.mkBrush(colour) for sat in curve.saturated],
                )
                item.setLogMode(True, True)
                plot.addItem(item)
                self._load_items.append(item)
            if self._load_each.isChecked():
                self._draw_generator_curves(curve, colour)
            entries.append((_legend_key(pg.mkPen(colour, width=2)), curve.name))
        for (item, _name), shown in zip(entries, short_distinct([name for _, name in entries], LEGEND_CHARS)):
            self._load_legend.addItem(item, shown)
        self._load_each.setVisible(any(c.generators for c in curves))
        if curves:
            self._add_load_keys(any(any(c.saturated) for c in curves))
        if not curves:
            self._load_header.setText(
                label_style(
                    "Finished load jobs appear here: latency against achieved rate, one curve per job."
                    if not self._load_results
                    else "No load job finished ok.",
                    muted=True,
                )
            )
        else:
            text = (
                f"{plural(len(curves), 'load job')} · latency p99 (solid, ▲) and p50 (dashed, ●) against "
                f"achieved rate; each point one offered rate"
            )
            saturated = sum(sum(c.saturated) for c in curves)
            if saturated:
                text += (
                    f" · {plural(saturated, 'step')} hollow: the load generator, not the server, was the "
                    f"limit there (its latency includes the generator's delay)"
                )
            if skipped:
                text += f" · {plural(skipped, 'step')} with no completed request not shown"
            if len(curves) <= HEADER_VERDICTS:
                text += "".join(f"<br><b>{escape(c.name)}</b>: {escape(c.verdict)}" for c in curves)
            else:
                text += " · point at a step: its job's verdict shows below the plot"
            self._load_header.setText(text)
        plot.enableAutoRange()

    def _draw_generator_curves(self, curve: LoadCurve, colour: QtGui.QColor) -> None:
        """A cluster job's generators' own p99, thin and dotted in the job's colour."""
        plot = self._load_plot.getPlotItem()
        for generator in curve.generators:
            if not len(generator.rates):
                continue
            item = pg.PlotDataItem(
                generator.rates,
                generator.p99,
                pen=pg.mkPen(colour, width=1, style=QtCore.Qt.PenStyle.DotLine),
                symbol="x",
                symbolSize=7,
                symbolPen=pg.mkPen(colour, width=1),
                symbolBrush=None,
            )
            item.setLogMode(True, True)
            plot.addItem(item)
            self._load_items.append(item)

    def _on_load_each_toggled(self, _checked: bool) -> None:
        self._draw_load()

    def load_generators_shown(self) -> bool:
        """Each generator's own curves are drawn (the box is there and ticked)."""
        return self._load_each.isChecked() and any(c.generators for c in self._load_curves)

    def _load_caption(self) -> PlotCaption:
        """The exported plot's title, and each load job it left out (failed, or no step)."""
        skipped = [
            f"{job_name(job)}: {job.status if job.status != JobStatus.OK else 'no load step measured'}"
            for job in self._load_results
            if job.status != JobStatus.OK or job.load is None or not job.load.steps
        ]
        return PlotCaption(
            "Latency p99 and p50 (s) against achieved rate (requests/s), one curve pair per load job",
            left_out=tuple(skipped),
        )

    def _add_load_keys(self, saturated: bool) -> None:
        """The legend's key to the encoding, in the text colour: the percentiles' lines and
        symbols, and the hollow point when some step was generator-saturated."""
        fg = self._fg
        for percentile, style in DRAWN_PERCENTILES:
            self._load_legend.addItem(
                _legend_key(
                    pg.mkPen(fg, width=2, style=style), _SYMBOLS[percentile], pg.mkPen(fg, width=1.5), pg.mkBrush(fg)
                ),
                percentile,
            )
        if saturated:
            self._load_legend.addItem(
                _legend_key(None, "o", pg.mkPen(fg, width=1.5), pg.mkBrush(self._bg)), SATURATED_LEGEND
            )
        if self.load_generators_shown():
            self._load_legend.addItem(
                _legend_key(pg.mkPen(fg, width=1, style=QtCore.Qt.PenStyle.DotLine), "x", pg.mkPen(fg, width=1)),
                GENERATORS_LEGEND,
            )

    def _on_load_hover(self, event: HoverEvent) -> None:
        point = view_point(self._load_plot, event)
        if point is None or not self._load_curves:
            return
        vb = self._load_plot.getPlotItem().vb
        (x0, x1), (y0, y1) = vb.viewRange()
        sx, sy = max(x1 - x0, 1e-12), max(y1 - y0, 1e-12)
        best: tuple[float, LoadCurve, int] | None = None
        for curve in self._load_curves:
            if not curve.steps:
                continue
            for ys in (curve.p50, curve.p99):
                d = np.hypot((np.log10(curve.rates) - point.x()) / sx, (np.log10(ys) - point.y()) / sy)
                j = int(np.argmin(d))
                if best is None or d[j] < best[0]:
                    best = (float(d[j]), curve, j)
        if best is None or best[0] > 0.04:
            self._load_readout.clear()
            return
        _, curve, j = best
        load = curve.result.load
        # A cluster job: each generator's own record of the step, under the merged one.
        parts = generator_lines(load, curve.steps[j]) if load is not None else []
        self._load_readout.setText(
            "\n".join([f"{curve.name} · {step_line(curve.steps[j], curve.calls[j])}", *parts, curve.verdict])
        )

"""A plot's numbers as CSV: exactly what the visible tab draws, one row per bar, point,
sample or bin, under the same caption the PNG and SVG carry (as "#" comment lines, which
spreadsheets and pandas' `comment="#"` skip).

Times are in seconds, sizes in bytes, rates per second: the units are in the column
names, so a figure needs no guessing once it leaves the window.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from app.core.fileio import atomic_write_text
from app.gui.plots.caption import PlotCaption, job_name
from app.gui.plots.common import FloatArray, SampleBuffer
from app.gui.plots.load import LoadCurve
from app.gui.plots.state import ComparisonRow, ScalingGroup

Cell = str | int | float


@dataclass(frozen=True)
class PlotTable:
    """The columns of a plot's data and its rows."""

    columns: tuple[str, ...]
    rows: list[tuple[Cell, ...]]


def comparison_table(metric: str, rows: Sequence[ComparisonRow]) -> PlotTable:
    out: list[tuple[Cell, ...]] = []
    for job, median, ci in rows:
        n = job.metrics[metric].stats.n
        low, high = ci if ci is not None else ("", "")
        out.append((job.index + 1, job_name(job), job.message_size, metric, median, low, high, n))
    columns = ("job", "label", "message_size_bytes", "metric", "median_s", "ci95_low_s", "ci95_high_s", "n")
    return PlotTable(columns, out)


def scaling_table(metric: str, groups: Sequence[ScalingGroup]) -> PlotTable:
    out: list[tuple[Cell, ...]] = []
    for name, sizes, medians, jobs in groups:
        for size, median, job in zip(sizes, medians, jobs):
            out.append((name, job.index + 1, int(size), metric, float(median)))
    return PlotTable(("curve", "job", "message_size_bytes", "metric", "median_s"), out)


def samples_table(source: Mapping[str, FloatArray]) -> PlotTable:
    out: list[tuple[Cell, ...]] = []
    for metric, values in source.items():
        out.extend((metric, k, float(value)) for k, value in enumerate(values))
    return PlotTable(("metric", "sample_index", "time_s"), out)


def histogram_table(metric: str, edges: FloatArray, counts: FloatArray) -> PlotTable:
    out: list[tuple[Cell, ...]] = [
        (metric, float(edges[k]), float(edges[k + 1]), int(count)) for k, count in enumerate(counts)
    ]
    return PlotTable(("metric", "bin_low_s", "bin_high_s", "samples"), out)


def resources_table(series: Mapping[str, SampleBuffer] | None) -> PlotTable:
    out: list[tuple[Cell, ...]] = []
    for role, buffer in (series or {}).items():
        times, cpu, rss = buffer.column(0), buffer.column(1), buffer.column(2)
        out.extend((role, float(t), float(c), float(r)) for t, c, r in zip(times, cpu, rss))
    return PlotTable(("process", "time_since_start_s", "cpu_percent_of_one_core", "rss_mib"), out)


def load_table(curves: Sequence[LoadCurve], generators: bool = False) -> PlotTable:
    """A row per drawn point; with `generators` (their curves shown) each generator's own
    points too, as curves of their own ("... · generator #1 (host, worker ADDRESS)", at the step's
    achieved rate)."""
    out: list[tuple[Cell, ...]] = []
    for curve in curves:
        for rate, low, high, flag in zip(curve.rates, curve.p50, curve.p99, curve.saturated):
            out.append((curve.name, float(rate), float(low), float(high), "yes" if flag else "no"))
        for generator in curve.generators if generators else ():
            name = f"{curve.name} · generator #{generator.number} ({generator.where})"
            for rate, low, high in zip(generator.rates, generator.p50, generator.p99):
                out.append((name, float(rate), float(low), float(high), ""))
    return PlotTable(("curve", "achieved_per_s", "latency_p50_s", "latency_p99_s", "generator_saturated"), out)


def csv_text(caption: PlotCaption, table: PlotTable) -> str:
    """The caption as "#" lines, then the header and the rows (floats in full precision)."""
    out = io.StringIO()
    for line in (caption.title, *caption.lines()):
        out.write(f"# {' '.join(line.splitlines())}\n")  # a label's own line breaks stay inside its comment
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(table.columns)
    writer.writerows([repr(cell) if isinstance(cell, float) else cell for cell in row] for row in table.rows)
    return out.getvalue()


def save_csv(caption: PlotCaption, table: PlotTable, path: Path) -> None:
    atomic_write_text(path, csv_text(caption, table))

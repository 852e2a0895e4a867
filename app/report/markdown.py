"""Render the report model as GitHub-flavoured Markdown.

Markdown is the report for a terminal, a code review or a wiki: it has no pictures, so
each chart becomes its title, caption and data as a small table. Nothing the PDF shows
is lost in text form, only drawn differently. Headings: the title is `#`, sections `##`
and subsections `###` (one top-level heading per document, as GitHub renders best).
"""

from __future__ import annotations

from app.core.escaping import escape_control
from app.report.model import (
    BarChart,
    Block,
    Bullets,
    Chart,
    Histogram,
    LineChart,
    Paragraph,
    Report,
    Section,
    StackedBars,
    Table,
)
from app.report.units import format_bytes, format_rate, format_seconds, span_text, time_unit_for

__all__ = ["render_markdown"]

_MISSING = "-"
_ALIGN = {"left": ":---", "right": "---:", "center": ":---:"}


def render_markdown(report: Report) -> str:
    """The whole report as one Markdown document (ends with a newline)."""
    parts = [f"# {_inline(report.title)}", f"*{_inline(report.subtitle)}*" if report.subtitle else ""]
    if report.notice:
        parts.append(f"> **{_inline(report.notice)}**")
    if report.facts:
        parts.append("\n".join(f"- **{_inline(k)}**: {_inline(v)}" for k, v in report.facts))
    for section in report.sections:
        parts.append(_section(section))
    if report.footer:
        parts.append(f"---\n\n*{_inline(report.footer)}*")
    return "\n\n".join(p for p in parts if p) + "\n"


def _section(section: Section) -> str:
    heading = "#" * (section.level + 1)
    out = [f"{heading} {_inline(section.title)}"]
    out += [_block(block) for block in section.blocks]
    return "\n\n".join(p for p in out if p)


def _block(block: Block) -> str:
    if isinstance(block, Paragraph):
        text = _inline(block.text)
        return f"> {text}" if block.style == "note" else text
    if isinstance(block, Bullets):
        return "\n".join(f"- {_inline(item)}" for item in block.items)
    if isinstance(block, Table):
        return _table(block)
    if isinstance(block, Chart):
        return _chart(block)
    raise TypeError(f"unknown report block {type(block).__name__}")  # pragma: no cover - model is closed


def _inline(text: str) -> str:
    """One line of text: newlines would end a list item or a paragraph early; other
    control characters (from a job's error, a profile's name) are shown as escapes."""
    return escape_control(" ".join(str(text).split("\n")))


def _cell(text: str) -> str:
    return _inline(text).replace("|", "\\|").strip()


def _table(table: Table) -> str:
    lines = []
    if table.caption:
        lines.append(f"*{_inline(table.caption)}*\n")
    lines.append("| " + " | ".join(_cell(c) or " " for c in table.columns) + " |")
    lines.append("|" + "|".join(_ALIGN[table.alignment(i)] for i in range(len(table.columns))) + "|")
    for index, row in enumerate(table.rows):
        cells = [_cell(c) for c in row] + [""] * (len(table.columns) - len(row))
        if index in table.emphasis:
            cells = [f"**{c}**" if c else c for c in cells]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _value(value: float | None, unit: str) -> str:
    """A chart value in its unit (charts carry raw seconds, bytes and bits)."""
    if value is None:
        return _MISSING
    if unit == "s":
        return format_seconds(value)
    if unit == "B":
        return format_bytes(value)
    if unit == "B/s":
        return format_rate(value)
    return f"{value:g} {unit}".strip()


def _chart(chart: Chart) -> str:
    data = chart.chart
    head = [f"**Chart: {_inline(_chart_title(data))}**"]
    if chart.caption:
        head.append(f"*{_inline(chart.caption)}*")
    return "\n\n".join(head + [_table(_chart_table(data))])


def _edges_text(edges: list[float], unit: str) -> list[str]:
    """Histogram bin edges with as many decimals as it takes for neighbours to differ: bins
    narrower than three digits read "999.6 µs – 999.8 µs", never "1 ms – 1 ms"."""
    if unit != "s":
        return [_value(edge, unit) for edge in edges]
    name, scale = time_unit_for(edges)
    for decimals in range(10):
        texts = [f"{edge / scale:,.{decimals}f} {name}" for edge in edges]
        if all(a != b for a, b in zip(texts, texts[1:])):
            break
    return texts


def _chart_title(data: BarChart | LineChart | Histogram | StackedBars) -> str:
    return data.title or type(data).__name__


def _chart_table(data: BarChart | LineChart | Histogram | StackedBars) -> Table:
    """The data behind a chart as a table: what a reader would read off the picture."""
    if isinstance(data, BarChart):
        columns = ["Entry", data.value_label, "95 % CI"]
        marked = data.marked or [False] * len(data.labels)
        if data.marked:
            columns.append(data.marked_label or "marked")
        rows = []
        for i, label in enumerate(data.labels):
            low, high = data.low[i], data.high[i]
            ci = (
                span_text(low, high, lambda v: _value(v, data.unit), joint=" – ")
                if low is not None and high is not None
                else _MISSING
            )
            row = [label, _value(data.values[i], data.unit), ci]
            if data.marked:
                row.append("yes" if marked[i] else "")
            rows.append(row)
        return Table(columns, rows)
    if isinstance(data, LineChart):
        points = any(s.point_labels is not None for s in data.series)
        marks = any(any(s.hollow or ()) for s in data.series)
        rows = []
        for series in data.series:
            labels = series.point_labels or [""] * len(series.xs)
            name = series.name + (" (marked)" if series.marked else "")
            hollow = list(series.hollow or []) + [False] * len(series.xs)
            for x, y, label, open_marker in zip(series.xs, series.ys, labels, hollow):
                rows.append(
                    [name, _value(x, data.x_unit), _value(y, data.y_unit)]
                    + ([label] if points else [])
                    + ([data.hollow_label or "open marker" if open_marker else ""] if marks else [])
                )
        columns = ["Series", data.x_label, data.y_label] + (["Point"] if points else []) + (["Mark"] if marks else [])
        return Table(columns, rows)
    if isinstance(data, Histogram):
        edges = _edges_text(data.edges, data.unit)
        rows = [[f"{lo} – {hi}", str(count)] for lo, hi, count in zip(edges, edges[1:], data.counts)]
        rows.append([f"median {_value(data.median, data.unit)}", ""])
        if data.clipped_above:
            rows.append([f"beyond {_value(data.edges[-1], data.unit)} (not drawn)", str(data.clipped_above)])
        return Table(["Bin", "Samples"], rows)
    if isinstance(data, StackedBars):
        parts = list(data.parts)
        rows = []
        for i, label in enumerate(data.labels):
            values = [data.parts[p][i] for p in parts]
            rows.append([label] + [_value(v, data.unit) for v in values] + [_value(sum(values), data.unit)])
        return Table(["Entry"] + parts + ["sum"], rows)
    raise TypeError(f"unknown chart {type(data).__name__}")  # pragma: no cover - model is closed

"""A report as data: sections of paragraphs, tables and charts, with no Qt in sight.

`app.report.content.build_report` fills it from a run (and an optional baseline);
renderers turn it into a format: `markdown.render_markdown` (text) and
`pdf.write_pdf` (Qt painting). Keeping the content in one model means the PDF, the
Markdown and the tests all see the same findings, tables and chart data.

Charts carry their data, not pixels, so a renderer draws them as vectors at the size
it has. Times are in seconds and sizes in bytes; renderers pick SI prefixes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Align = Literal["left", "right", "center"]


@dataclass
class Paragraph:
    """Plain text; `**bold**` spans are the only markup."""

    text: str
    style: Literal["body", "note", "finding"] = "body"


@dataclass
class Bullets:
    items: list[str]


@dataclass
class Table:
    """A table whose header row repeats on every page it spans.

    `widths` are relative column widths (None: share by content); `align` one entry
    per column (None: left for the first column, right for the rest, as numbers are).
    `emphasis` marks rows by index to draw in bold (e.g. the fastest per family).
    """

    columns: list[str]
    rows: list[list[str]]
    caption: str | None = None
    widths: list[float] | None = None
    align: list[Align] | None = None
    emphasis: set[int] = field(default_factory=set)

    def alignment(self, column: int) -> Align:
        if self.align is not None:
            return self.align[column]
        return "left" if column == 0 else "right"


@dataclass
class BarChart:
    """One bar per entry: the median, with its 95 % interval as a whisker.

    `low`/`high` are None where no interval exists. `marked` entries (e.g. post-quantum
    schemes) are drawn in the accent colour and named in the legend as `marked_label`.
    """

    title: str
    labels: list[str]
    values: list[float]
    low: list[float | None]
    high: list[float | None]
    unit: str = "s"
    value_label: str = "median time"
    log: bool = False
    marked: list[bool] | None = None
    marked_label: str | None = None


@dataclass
class Series:
    name: str
    xs: list[float]
    ys: list[float]
    #: Per-point text drawn beside the marker (cost vs security: scheme names).
    point_labels: list[str] | None = None
    marked: bool = False  # e.g. post-quantum: drawn with the marked style
    #: Per point: drawn as an open marker (a load step the generator saturated), which the
    #: chart's `hollow_label` names in the legend.
    hollow: list[bool] | None = None


@dataclass
class LineChart:
    """Curves of y against x: scaling (size -> time) or cost against security level.
    `lines=False` draws markers only (a scatter)."""

    title: str
    x_label: str
    x_unit: str
    y_label: str
    y_unit: str
    series: list[Series]
    log_x: bool = False
    log_y: bool = False
    lines: bool = True
    #: What an open marker means, as a legend entry (shown when some point is hollow).
    hollow_label: str | None = None


@dataclass
class Histogram:
    """Counts per bin of one metric's samples; `median` drawn as a vertical line."""

    title: str
    edges: list[float]  # len(counts) + 1
    counts: list[int]
    median: float
    unit: str = "s"
    clipped_above: int = 0  # samples beyond the last edge (a long tail), said in the caption


@dataclass
class StackedBars:
    """Per loopback job, the median round trip split into parts (compute, receiver,
    network), stacked in the order of `parts`."""

    title: str
    labels: list[str]
    parts: dict[str, list[float]]
    unit: str = "s"


ChartData = BarChart | LineChart | Histogram | StackedBars


@dataclass
class Chart:
    chart: ChartData
    caption: str | None = None
    #: Height as a fraction of the text width (bar charts grow with their entries).
    aspect: float = 0.5


Block = Paragraph | Bullets | Table | Chart


@dataclass
class Section:
    title: str
    blocks: list[Block] = field(default_factory=list)
    level: int = 1  # 1: section, 2: subsection
    page_break_before: bool = False


@dataclass
class Report:
    title: str
    subtitle: str
    #: Title page facts, in order: ("Date", "2026-11-21 10:04 UTC"), ("Machine", ...).
    facts: list[tuple[str, str]]
    sections: list[Section]
    #: Shown in every page footer beside the page number.
    footer: str = ""
    #: A warning for the first page, above the facts (a reduced run, too few samples, a
    #: failed or cancelled run): what the reader must know before any number.
    notice: str | None = None

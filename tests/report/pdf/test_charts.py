"""Vector charts for the PDF report: painted inside their rect, as text in a PDF, never raising."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QFontMetricsF, QImage, QPageSize, QPainter, QPdfWriter

from app.report.model import (
    BarChart,
    ChartData,
    Histogram,
    LineChart,
    Series,
    StackedBars,
)
from app.report.pdf import charts
from app.report.pdf.charts import paint_chart, preferred_aspect
from app.report.pdf.charts.axes import make_linear_axis, make_log_axis
from app.report.pdf.charts.bar import _bar_layout
from app.report.pdf.charts.ticks import axis_prefix, axis_title, format_value, log_ticks, multiples_of, nice_step
from app.report.style import MARKED, PALETTE

NAMES = ["AES-256-GCM (cryptography)", "ChaCha20-Poly1305", "ML-KEM-768 + AES-256-GCM hybrid", "RSA-2048 OAEP"]


def _bar(**kw: object) -> BarChart:
    values = [3.1e-6, 2.9e-6, 95e-6, 48e-6]
    chart = BarChart(
        "Encrypt medians",
        list(NAMES),
        values,
        [v * 0.9 for v in values],
        [v * 1.1 if i != 1 else None for i, v in enumerate(values)],
        marked=[False, False, True, False],
        marked_label="post-quantum",
    )
    for key, value in kw.items():
        setattr(chart, key, value)
    return chart


def _line() -> LineChart:
    sizes = [64.0, 1024.0, 16384.0, 262144.0]
    return LineChart(
        "Scaling with size",
        "message size",
        "B",
        "median time",
        "s",
        [
            Series("AES-256-GCM", sizes, [1e-6 + s * 1e-9 for s in sizes]),
            Series(
                "ML-KEM-768", sizes, [40e-6 + s * 2e-9 for s in sizes], marked=True, point_labels=["a", "b", "c", "d"]
            ),
        ],
        log_x=True,
        log_y=True,
    )


def _scatter() -> LineChart:
    return LineChart(
        "Cost against security",
        "security",
        "bits",
        "median time",
        "s",
        [
            Series("classical", [112, 128, 192], [48e-6, 42e-6, 120e-6], point_labels=["RSA", "X25519", "P-384"]),
            Series(
                "post-quantum",
                [128, 192, 256],
                [30e-6, 45e-6, 70e-6],
                marked=True,
                point_labels=["ML-KEM-512", "ML-KEM-768", "ML-KEM-1024"],
            ),
        ],
        lines=False,
    )


def _histogram() -> Histogram:
    counts = [1, 4, 12, 30, 55, 61, 40, 22, 9, 3]
    edges = [5e-6 + i * 1e-6 for i in range(len(counts) + 1)]
    return Histogram("Encrypt samples", edges, counts, median=9.6e-6, clipped_above=7)


def _stacked() -> StackedBars:
    return StackedBars(
        "Loopback round trip",
        NAMES[:3],
        {"compute": [20e-6, 22e-6, 120e-6], "receiver": [10e-6, 11e-6, 60e-6], "network": [35e-6, 38e-6, 40e-6]},
    )


CHARTS: dict[str, Callable[[], ChartData]] = {
    "bar": _bar,
    "bar-log": lambda: _bar(log=True),
    "line": _line,
    "scatter": _scatter,
    "histogram": _histogram,
    "stacked": _stacked,
}
#: Per chart: texts that must come out of the PDF as text (title, an axis label, a tick label).
PDF_TEXTS = {
    "bar": ["Encrypt medians", "median time (µs)", "100"],
    "bar-log": ["Encrypt medians", "median time (log scale)", "10 µs"],
    "line": ["Scaling with size", "message size (log scale)", "1 KiB"],
    "scatter": ["Cost against security", "security (bits)", "160"],
    "histogram": ["Encrypt samples", "time (µs)", "samples", "median 9.6 µs", "7 samples beyond"],
    "stacked": ["Loopback round trip", "median time (µs)", "compute"],
}


def _pixels(image: QImage) -> np.ndarray:
    image = image.convertToFormat(QImage.Format.Format_RGB32)
    data = np.frombuffer(image.constBits(), dtype=np.uint8, count=image.sizeInBytes())
    rows = data.reshape(image.height(), image.bytesPerLine())[:, : image.width() * 4]
    # BGR (the unused alpha byte dropped), copied: the view would outlive the image's memory
    return rows.reshape(image.height(), image.width(), 4)[:, :, :3].copy()


def _paint_image(chart: ChartData, size: tuple[int, int] = (800, 500), margin: int = 40) -> tuple[np.ndarray, QRectF]:
    image = QImage(size[0], size[1], QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    rect = QRectF(margin, margin, size[0] - 2 * margin, size[1] - 2 * margin)
    painter = QPainter(image)
    try:
        paint_chart(painter, rect, chart)
    finally:
        painter.end()
    return _pixels(image), rect


def _has_colour(px: np.ndarray, rgb: tuple[int, int, int], tolerance: int = 12) -> bool:
    bgr = np.array(rgb[::-1], dtype=np.int16)
    return bool((np.abs(px.astype(np.int16) - bgr).max(axis=2) <= tolerance).any())


@pytest.mark.parametrize("name", list(CHARTS))
def test_paints_inside_its_rect_only(qapp: object, name: str) -> None:
    px, rect = _paint_image(CHARTS[name]())
    inside = px[int(rect.top()) : int(rect.bottom()), int(rect.left()) : int(rect.right())]
    assert (inside != 255).any(axis=2).sum() > 2000, "chart looks blank"
    outside = px.copy()
    outside[int(rect.top()) : int(rect.bottom()), int(rect.left()) : int(rect.right())] = 255
    stray = np.argwhere((outside != 255).any(axis=2))
    assert not len(stray), f"painted outside the rect at (y, x) {stray[:5].tolist()}"
    # coloured data appears, not only grey text and grid
    spread = inside.max(axis=2).astype(np.int16) - inside.min(axis=2)
    assert (spread > 60).sum() > 100


def test_bar_colours_marked_entries_and_grid_is_opaque_grey(qapp: object) -> None:
    px, _ = _paint_image(_bar())
    assert _has_colour(px, PALETTE[0], 0) and _has_colour(px, MARKED, 0)
    assert _has_colour(px, (0xE0, 0xE0, 0xE0), 0)


@pytest.mark.parametrize("name", list(CHARTS))
def test_pdf_is_vector_text(qapp: object, tmp_path: Path, name: str) -> None:
    path = tmp_path / "c.pdf"
    writer = QPdfWriter(str(path))
    writer.setResolution(1200)
    writer.setPageSize(QPageSize(QPageSize.PageSizeId.A4))
    painter = QPainter(writer)
    try:
        width = writer.width() * 0.8
        paint_chart(
            painter,
            QRectF(writer.width() * 0.1, writer.width() * 0.1, width, width * preferred_aspect(CHARTS[name]())),
            CHARTS[name](),
        )
    finally:
        painter.end()
    data = path.read_bytes()
    assert data.startswith(b"%PDF") and len(data) > 1000
    assert b"/Subtype /Image" not in data  # no raster fallback
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext not installed: text extraction not checked")
    text = subprocess.run(
        ["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, check=True, timeout=30
    ).stdout
    for expected in PDF_TEXTS[name]:
        assert expected in text, f"{expected!r} not extractable from the PDF: {text!r}"


def nice_ticks(lo: float, hi: float, target: int = 5, *, integer: bool = False) -> list[float]:
    """Ticks at multiples of a 1-2-5 step inside [lo, hi], as the linear axes make them."""
    return multiples_of(lo, hi, nice_step(hi - lo, target, integer=integer))


def test_nice_ticks_use_1_2_5_steps() -> None:
    assert nice_ticks(0, 17.3) == [0, 5, 10, 15]
    assert nice_ticks(0, 1) == pytest.approx([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    assert nice_ticks(0.1, 0.35, 5) == pytest.approx([0.1, 0.15, 0.2, 0.25, 0.3, 0.35])
    assert nice_ticks(-3, 7) == [-2, 0, 2, 4, 6]
    assert nice_ticks(0, 3, integer=True) == [0, 1, 2, 3]
    assert nice_ticks(0, 0.3) == pytest.approx([0, 0.1, 0.2, 0.3])
    assert nice_ticks(0, 0.3)[-1] == 0.3  # no binary noise (0.30000000000000004)
    assert nice_step(100, 4) == 50
    assert nice_step(7.3e-6, 5) == pytest.approx(2e-6)


def test_log_ticks_are_decades_or_powers_of_two() -> None:
    assert log_ticks(1e-6, 3e-3) == [1e-6, 1e-5, 1e-4, 1e-3]
    assert log_ticks(2e-6, 9e-6) == []
    assert log_ticks(1e-9, 1.0, stride=3) == [1e-9, 1e-6, 1e-3, 1.0]
    assert log_ticks(64, 1 << 20, base=2, stride=5) == [1024, 32768, 1 << 20]


def test_si_units_for_axes_and_values() -> None:
    assert axis_prefix("s", 17.3e-6) == (1e-6, "µs")
    assert axis_prefix("s", 0.25) == (1e-3, "ms")
    assert axis_prefix("s", 3.0) == (1.0, "s")
    assert axis_prefix("s", 5e-10) == (1e-9, "ns")
    assert axis_prefix("B", 3e6) == (1024.0**2, "MiB")
    assert axis_prefix("B", 100) == (1.0, "B")
    assert axis_prefix("bits", 256) == (1.0, "bits")
    assert axis_prefix("B/s", 4.2e6) == (1e6, "MB/s")
    assert axis_title("median time", "s", unit_text="µs") == "median time (µs)"
    assert axis_title("message size", "B", log=True) == "message size (log scale)"
    assert axis_title("samples", "") == "samples"
    assert format_value(12.3e-6, "s") == "12.3 µs"
    assert format_value(1536, "B") == "1.5 KiB"
    assert format_value(128, "bits") == "128 bits"


def _axis(qapp: object, vmin: float, vmax: float, unit: str, *, log: bool = False, length_pt: float = 400):
    image = QImage(10, 10, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    try:
        ctx = charts.Ctx(painter, None, 8.0)
        font = ctx.font(0.9)
        if log:
            axis = make_log_axis(ctx, vmin, vmax, unit, "median time", ctx.pt(length_pt), font, horizontal=True)
        else:
            axis = make_linear_axis(
                ctx,
                vmin,
                vmax,
                unit,
                "median time",
                ctx.pt(length_pt),
                font,
                horizontal=True,
                include_zero=True,
                extend=True,
            )
        widths = [QFontMetricsF(font, image).horizontalAdvance(s) for s in axis.labels]
    finally:
        painter.end()
    return axis, widths


def test_linear_axis_picks_one_prefix_from_the_max(qapp: object) -> None:
    axis, _ = _axis(qapp, 0, 17.3e-6, "s")
    assert axis.title == "median time (µs)"
    assert axis.labels[:4] == ["0", "5", "10", "15"] or axis.labels[:3] == ["0", "2", "4"]
    # an extended end that reaches 1000 µs switches to ms instead of printing "1000"
    axis, _ = _axis(qapp, 0, 0.97e-3, "s")
    assert axis.title == "median time (ms)" and axis.labels[-1] in ("1", "1.0")


def test_log_axis_labels_carry_their_own_prefix_and_thin_out(qapp: object) -> None:
    axis, _ = _axis(qapp, 1.5e-6, 3e-3, "s", log=True)
    assert axis.labels == ["1 µs", "10 µs", "100 µs", "1 ms", "10 ms"]
    assert axis.title == "median time (log scale)"
    narrow, widths = _axis(qapp, 1e-9, 50.0, "s", log=True, length_pt=90)
    assert 2 <= len(narrow.labels) < 12
    for i in range(1, len(narrow.label_pos)):  # no two labels touch
        assert narrow.label_pos[i] - narrow.label_pos[i - 1] >= (widths[i] + widths[i - 1]) / 2


@pytest.mark.parametrize(
    "chart",
    [
        BarChart("Empty bars", [], [], [], []),
        BarChart("No values", ["a"], [float("nan")], [None], [None]),
        LineChart("Empty lines", "size", "B", "time", "s", []),
        LineChart("No points", "size", "B", "time", "s", [Series("x", [], [])], log_x=True),
        Histogram("Empty histogram", [], [], median=0.0),
        Histogram("Zero counts", [0.0, 1.0], [0], median=0.5),
        StackedBars("Empty stack", [], {}),
    ],
    ids=lambda c: c.title,
)
def test_empty_data_paints_title_and_no_data(qapp: object, chart: ChartData) -> None:
    px, _ = _paint_image(chart)
    assert (px != 255).any(axis=2).sum() > 50
    assert 0.3 <= preferred_aspect(chart) <= 1.2


def test_degenerate_values_do_not_raise(qapp: object) -> None:
    odd: list[ChartData] = [
        BarChart("zeros", ["a", "b"], [0.0, 0.0], [None, None], [None, None]),
        BarChart("log with zero", ["a", "b"], [0.0, 2e-6], [None, -1.0], [None, 3e-6], log=True),
        BarChart("one", ["a"], [1.0], [None], [None], marked=[True], marked_label="pq"),
        LineChart("flat", "x", "bits", "y", "s", [Series("s", [128, 128], [1e-6, 1e-6])]),
        LineChart("log with zero", "x", "B", "y", "s", [Series("s", [0, 64], [1e-6, 0])], log_x=True, log_y=True),
        Histogram("median outside", [1.0, 2.0, 3.0], [3, 4], median=10.0, clipped_above=1),
        StackedBars("short parts", ["a", "b"], {"x": [1e-6]}),
    ]
    for chart in odd:
        _paint_image(chart, (300, 200), 10)


def test_tiny_rect_and_big_fonts_stay_inside(qapp: object) -> None:
    image = QImage(400, 300, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    rect = QRectF(50, 50, 300, 200)
    paint_chart(painter, rect, _bar(), base_point_size=11)
    paint_chart(painter, QRectF(0, 0, 0, 0), _bar())  # nothing to paint into: no error
    painter.end()
    px = _pixels(image)
    outside = px.copy()
    outside[50:250, 50:350] = 255
    assert not (outside != 255).any()


def test_painter_state_is_restored(qapp: object) -> None:
    image = QImage(400, 300, QImage.Format.Format_RGB32)
    painter = QPainter(image)
    font, pen = painter.font(), painter.pen()
    paint_chart(painter, QRectF(10, 10, 380, 280), _line())
    assert painter.font() == font and painter.pen() == pen
    assert painter.worldTransform().isIdentity()
    painter.end()


def test_preferred_aspect_grows_with_bars_and_is_clamped() -> None:
    few = preferred_aspect(_bar())
    many = preferred_aspect(BarChart("x", ["a"] * 12, [1.0] * 12, [None] * 12, [None] * 12))
    assert 0.3 <= few < many <= 1.2
    assert preferred_aspect(BarChart("x", ["a"] * 40, [1.0] * 40, [None] * 40, [None] * 40)) == 1.2
    assert preferred_aspect(BarChart("x", ["a"], [1.0], [None], [None])) == 0.3
    assert 0.3 <= preferred_aspect(_line()) <= 1.2 and 0.3 <= preferred_aspect(_histogram()) <= 1.2


def test_forty_long_labels_are_wrapped_whole_in_the_label_column(qapp: object) -> None:
    """Labels identify the bars: wrapped onto lines of the label column, never cut."""
    labels = [f"{NAMES[i % 4]} variant {i} with a very long descriptive suffix (library)" for i in range(40)]
    chart = BarChart("Forty", labels, [1e-6 * (i + 1) for i in range(40)], [None] * 40, [None] * 40)
    width = 600.0
    rect = QRectF(20, 20, width, width * preferred_aspect(chart))
    image = QImage(int(rect.right()) + 20, int(rect.bottom()) + 20, QImage.Format.Format_RGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    try:
        layout = _bar_layout(painter, rect, chart)
        fm = QFontMetricsF(layout.label_font, image)
        paint_chart(painter, rect, chart)
    finally:
        painter.end()
    assert layout.label_width <= 0.45 * width + 0.5
    assert None not in layout.labels  # every row labelled
    assert [s.replace("\n", " ") for s in layout.labels if s] == labels  # wrapped, nothing lost
    lines = [line for s in layout.labels if s for line in s.split("\n")]
    assert all(fm.horizontalAdvance(line) <= layout.label_width + 0.01 for line in lines)
    # rows do not overlap: the tallest wrapped label fits the row pitch
    assert max(s.count("\n") + 1 for s in layout.labels if s) * fm.height() <= layout.band * 1.02 + 0.01
    px = _pixels(image)
    outside = px.copy()
    outside[int(rect.top()) : int(rect.bottom()), int(rect.left()) : int(rect.right())] = 255
    assert not (outside != 255).any()

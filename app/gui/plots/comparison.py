"""The Comparison tab: one bar per job, the median of one metric with its 95 % CI.

Where a metric means different work in the two exchange patterns (a session job's encrypt
is AEAD alone, a per-message job's holds its key exchange), the bars keep like with like:
the session jobs (and those without a key exchange) first, a line, then the per-message
jobs, and the header says why.

A mixin of `PlotsPanel`: its state lives on the panel."""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from app.core.vocab import Exchange, Mode
from app.gui.plots.axes import CategoryAxis, HoverEvent, SIAxis, hover_proxy, new_plot, view_point
from app.gui.plots.caption import PlotCaption, left_out
from app.gui.plots.common import (
    LINK_ROOM,
    FloatArray,
    fmt_bytes,
    fmt_time,
    label_style,
    mixed_exchange_note,
    tail_start,
)
from app.gui.plots.state import ComparisonRow, PanelState
from app.gui.vocab import PlotTab
from app.gui.words import plural

#: The widest a bar label may be, as a share of the plot's width.
LABEL_SHARE = 0.45
#: Pixels between the end of a bar's whisker and its value label.
VALUE_GAP = 6


def _fit_bar_label(text: str, width: float, metrics: QtGui.QFontMetricsF, backend_too: bool) -> str:
    """One bar label in `width` pixels (see `bar_labels`)."""
    cut = tail_start(text)
    head, tail = (text[:cut], text[cut:]) if cut > 0 else (text, "")
    head_least = metrics.horizontalAdvance("#00 ABC…")
    over = tail.find(" over ")
    if over >= 0:
        # Over a link: the link, then the size and mode after it, are what tell bars apart;
        # a custom link's numbers are cut at their end, the backend kept only if asked.
        backend, rest = (tail[:over] if backend_too else ""), tail[over:]
        dot = rest.find(" · ")
        link, after = (rest[:dot], rest[dot:]) if dot >= 0 else (rest, "")
        link_room = max(
            width - metrics.horizontalAdvance(backend + after) - head_least, metrics.averageCharWidth() * LINK_ROOM
        )
        tail = backend + metrics.elidedText(link, QtCore.Qt.TextElideMode.ElideRight, link_room) + after
    room = width - metrics.horizontalAdvance(tail)
    if room < head_least and tail.startswith(" [") and "]" in tail:
        # Squeezed: the backend goes before what follows it (an exchange pattern, the size).
        tail = tail[tail.index("]") + 1 :]
        room = width - metrics.horizontalAdvance(tail)
    if room < head_least:
        return metrics.elidedText(text, QtCore.Qt.TextElideMode.ElideMiddle, width)
    return metrics.elidedText(head, QtCore.Qt.TextElideMode.ElideRight, room) + tail


def bar_labels(texts: list[str], width_px: float, metrics: QtGui.QFontMetricsF) -> list[str]:
    """Labels that fit `width_px` and stay distinct. What tells two jobs apart is at the
    end ("[tinyec] (Nagle on) · 18 B · loopback"), so that tail is kept whole and the
    scheme name before it is shortened ("ECDH brainpoolP256r1 + SHA…"). Over links the
    link is kept ("… over LTE · 1 KiB"), and the backend only where two bars need it;
    when shortening makes two labels equal, they get more room."""
    for backend_too in (False, True):
        width = max(width_px, 40.0)
        for _ in range(12):
            shown = [_fit_bar_label(text, width, metrics, backend_too) for text in texts]
            if len(set(shown)) == len(set(texts)):
                return shown
            width *= 1.25
    return list(texts)


def alike_together(rows: list[ComparisonRow], metric: str) -> tuple[list[ComparisonRow], int]:
    """`rows` with the per-message jobs after every other (each in job order) where `metric`
    means different work in the two patterns, and how many rows come before them (the
    line between the two blocks); `rows` unchanged and 0 otherwise."""
    if mixed_exchange_note([r for r, _, _ in rows], metric) is None:
        return rows, 0
    first = [row for row in rows if row[0].exchange_used is not Exchange.PER_MESSAGE]
    return first + [row for row in rows if row[0].exchange_used is Exchange.PER_MESSAGE], len(first)


class ComparisonTab(PanelState):
    def _build_comparison_tab(self) -> None:
        self._cmp_axis = CategoryAxis("left")
        self._cmp_value_axis = SIAxis("bottom")
        self._cmp_plot = new_plot(left=self._cmp_axis, bottom=self._cmp_value_axis)
        item = self._cmp_plot.getPlotItem()
        item.setLabel("bottom", "median time", units="s")
        item.showGrid(x=True, y=False, alpha=0.25)
        item.vb.invertY(True)  # first job at the top
        item.vb.setMouseEnabled(x=True, y=True)
        self._cmp_bars = pg.BarGraphItem(x0=[0.0], y=[0.0], width=[0.0], height=0.6)
        self._cmp_bars.setVisible(False)
        self._cmp_whiskers = pg.ErrorBarItem(beam=0.3)
        item.addItem(self._cmp_bars)
        item.addItem(self._cmp_whiskers)
        # Between the session and the per-message bars of a metric that differs between them.
        self._cmp_divider = pg.InfiniteLine(angle=0, movable=False)  # its pen: apply_palette
        self._cmp_divider.setVisible(False)
        item.addItem(self._cmp_divider, ignoreBounds=True)
        self._cmp_texts: list[pg.TextItem] = []  # value labels at the bar ends, reused across redraws
        self._cmp_full_labels: list[str] = []
        self._cmp_range: tuple[float, float] | None = None
        self._cmp_value_labels: tuple[list[str], FloatArray, FloatArray] = ([], np.empty(0), np.empty(0))
        # Label widths and value-label positions depend on the plot's size in pixels.
        item.vb.sigResized.connect(lambda _vb: self._layout_comparison_labels())

        self._cmp_combo = QtWidgets.QComboBox()
        self._cmp_combo.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToContents)
        self._cmp_combo.currentTextChanged.connect(lambda _text: self._draw_comparison())
        self._cmp_log = QtWidgets.QCheckBox("Log scale")
        self._cmp_log.setToolTip("Medians span nanoseconds to seconds: a log axis shows them all")
        self._cmp_log.toggled.connect(lambda _on: self._draw_comparison())
        self._cmp_header = QtWidgets.QLabel()
        self._cmp_header.setWordWrap(True)  # a long header must not widen the window
        top = QtWidgets.QHBoxLayout()
        top.addWidget(QtWidgets.QLabel("Metric:"))
        top.addWidget(self._cmp_combo)
        top.addWidget(self._cmp_log)
        top.addWidget(self._cmp_header, 1)
        self._cmp_readout = self._readout()
        self.tabs.addTab(self._page(top, self._cmp_plot, self._cmp_readout), PlotTab.COMPARISON.label)
        self._cmp_proxy = hover_proxy(self._cmp_plot, self._on_cmp_hover)

    @staticmethod
    def _fill_combo(
        combo: QtWidgets.QComboBox,
        names: list[str],
        default: str | None,
        counts: dict[str, int] | None = None,
        total: int = 0,
    ) -> None:
        """The metric names; with `counts`, each item's tooltip says how many jobs have it."""
        previous = combo.currentText()
        combo.blockSignals(True)
        combo.clear()
        combo.addItems(names)
        for k, name in enumerate(names):
            if counts is not None:
                combo.setItemData(
                    k,
                    f"{counts.get(name, 0)} of {plural(total, 'job')} have {name}",
                    QtCore.Qt.ItemDataRole.ToolTipRole,
                )
        choice = previous if previous in names else default
        if choice is not None and choice in names:
            combo.setCurrentIndex(names.index(choice))
        combo.blockSignals(False)

    def _draw_comparison(self) -> None:
        metric = self._cmp_combo.currentText()
        log = self._cmp_log.isChecked()
        rows, apart = alike_together(self._rows_with(metric, log=log), metric)
        self._comparison_rows = rows
        self._cmp_divider.setVisible(apart > 0)
        self._cmp_divider.setValue(apart - 0.5)
        plot = self._cmp_plot.getPlotItem()
        plot.setLogMode(x=log, y=False)
        several_modes = len({r.mode for r, _, _ in rows}) > 1  # then sessions say so
        self._cmp_full_labels = [
            f"#{r.index + 1} {r.named} · {fmt_bytes(r.message_size)}"
            + (f" · {r.mode}" if several_modes and r.mode != Mode.OPERATIONS else "")
            for r, _, _ in rows
        ]
        self._cmp_readout.clear()
        if not rows:
            self._cmp_range = None
            self._cmp_bars.setVisible(False)
            self._cmp_whiskers.setData(x=None, y=None)
            self._set_value_labels([], np.empty(0), np.empty(0))
            self._layout_comparison_labels()
            self._cmp_header.setText(
                label_style(
                    "Finished jobs appear here." if not self._results else f"No job has {metric!r}.", muted=True
                )
            )
            return
        y = np.arange(len(rows), dtype=np.float64)
        medians = np.array([med for _, med, _ in rows])
        with_ci = [(i, med, ci) for i, (_, med, ci) in enumerate(rows) if ci is not None]
        base = 0.0
        if log:
            lows = [ci[0] for _, _, ci in with_ci if ci[0] > 0] + list(medians)
            base = float(math.floor(math.log10(min(lows))))
            self._cmp_bars.setOpts(x0=np.full(len(rows), float(base)), width=np.log10(medians) - base, y=y, height=0.6)
        else:
            self._cmp_bars.setOpts(x0=np.zeros(len(rows)), width=medians, y=y, height=0.6)
        self._cmp_bars.setVisible(True)
        self._draw_whiskers(with_ci, log=log)
        ends = np.log10(medians) if log else medians.copy()
        for i, _, ci in with_ci:
            ends[i] = max(ends[i], math.log10(ci[1]) if log else ci[1])
        self._set_value_labels([fmt_time(m) for m in medians], ends, y)
        right = float(ends.max())
        self._cmp_range = (base, right)
        plot.setXRange(base, right + 0.22 * max(right - base, 1e-300), padding=0)  # refined by the layout
        plot.setYRange(-0.6, len(rows) - 0.4, padding=0)
        missing = len(self._results) - len(rows)
        text = f"{plural(len(rows), 'job')} · bars: median {metric} · whiskers: 95 % CI of the median"
        if missing:
            text += f" · {missing} without {metric!r} not shown (choose another metric above)"
        mixed = mixed_exchange_note([r for r, _, _ in rows], metric)
        if mixed:
            text += f" · {mixed}: per-message jobs below the line"
        self._cmp_header.setText(text)

    def _rows_with(self, metric: str, *, log: bool) -> list[ComparisonRow]:
        """Each finished job with samples of `metric`: its median and the median's 95 % CI
        (a median that is not positive has no place on a log axis)."""
        rows: list[ComparisonRow] = []
        for result in self._results:
            m = result.metrics.get(metric)
            if m is None or m.stats.n == 0:
                continue
            median = float(m.stats.median)
            if log and median <= 0:
                continue
            ci = m.stats.ci95
            rows.append((result, median, (float(ci[0]), float(ci[1])) if ci is not None else None))
        return rows

    def _draw_whiskers(self, with_ci: list[tuple[int, float, tuple[float, float]]], *, log: bool) -> None:
        """The 95 % CI of each median that has one, as whiskers on its bar (none: cleared)."""
        if not with_ci:
            self._cmp_whiskers.setData(x=None, y=None)
            return
        idx = np.array([i for i, _, _ in with_ci], dtype=np.float64)
        med = np.array([m for _, m, _ in with_ci])
        lo = np.array([c[0] for _, _, c in with_ci])
        hi = np.array([c[1] for _, _, c in with_ci])
        if log:
            lo = np.where(lo > 0, lo, med)
            left, right = np.log10(med) - np.log10(lo), np.log10(hi) - np.log10(med)
            xs = np.log10(med)
        else:
            left, right, xs = med - lo, hi - med, med
        self._cmp_whiskers.setData(
            x=xs,
            y=idx,
            left=np.maximum(left, 0),
            right=np.maximum(right, 0),
            top=None,
            bottom=None,
            height=None,
            width=None,
            beam=0.3,
        )

    def _comparison_caption(self) -> PlotCaption:
        """The exported plot's title: the metric and its unit, and each job left out."""
        metric = self._cmp_combo.currentText()
        log = self._cmp_log.isChecked()
        title = f"Median {metric} time per operation (s), one bar per job" if metric else "Median times: no metric"
        details: tuple[str, ...] = (
            ("Whiskers: the 95 % confidence interval of the median (none where n < 6)",) if metric else ()
        )
        mixed = mixed_exchange_note(self._results, metric) if metric else None
        if mixed:
            details += (mixed[0].upper() + mixed[1:],)
        return PlotCaption(title, details, left_out=tuple(left_out(self._all_results, metric, log_values=log)))

    def _set_value_labels(self, texts: list[str], xs: FloatArray, ys: FloatArray) -> None:
        """Value labels at the given data points (the whisker or bar ends)."""
        plot = self._cmp_plot.getPlotItem()
        while len(self._cmp_texts) < len(texts):
            label = pg.TextItem(anchor=(0, 0.5), color=self._fg)
            plot.addItem(label, ignoreBounds=True)
            self._cmp_texts.append(label)
        self._cmp_value_labels = (list(texts), np.asarray(xs, dtype=np.float64), np.asarray(ys, dtype=np.float64))
        for k, label in enumerate(self._cmp_texts):
            if k < len(texts):
                label.setText(texts[k])
        self._layout_comparison_labels()

    def _layout_comparison_labels(self) -> None:
        """Fit the bar labels to the plot's width and place the value labels VALUE_GAP
        pixels right of each whisker; value labels taller than a row are hidden (the
        read-out under the plot gives the value on hover) rather than drawn over the
        next row's whisker."""
        font = self._cmp_axis.style.get("tickFont") or QtGui.QFont()
        metrics = QtGui.QFontMetricsF(font)
        plot = self._cmp_plot.getPlotItem()
        shown = bar_labels(self._cmp_full_labels, LABEL_SHARE * max(self._cmp_plot.width(), 200), metrics)
        if shown != self._cmp_axis.labels():
            self._cmp_axis.set_labels(shown)
        widest = max((metrics.horizontalAdvance(text) for text in shown), default=0.0)
        self._cmp_axis.setWidth(int(math.ceil(widest)) + 12)
        texts, xs, ys = self._cmp_value_labels
        px_x, px_y = plot.vb.viewPixelSize()
        row_px = 1.0 / px_y if px_y > 0 else 0.0
        fits = row_px >= metrics.height()
        for k, label in enumerate(self._cmp_texts):
            visible = k < len(texts) and fits
            if visible:
                label.setPos(float(xs[k]) + VALUE_GAP * px_x, float(ys[k]))
            label.setVisible(visible)
        if self._cmp_range is not None:
            # Room right of the longest whisker for its value label, in pixels turned data units.
            base, right = self._cmp_range
            view_px = plot.vb.width()
            room = max((metrics.horizontalAdvance(text) for text in texts), default=0.0) + VALUE_GAP + 8
            share = min(room / view_px, 0.6) if view_px > 50 else 0.22
            span = max(right - base, 1e-300)
            plot.setXRange(base, right + span * share / (1 - share), padding=0)

    def _on_cmp_hover(self, event: HoverEvent) -> None:
        point = view_point(self._cmp_plot, event)
        if point is None or not self._comparison_rows:
            return
        i = round(point.y())
        if not 0 <= i < len(self._comparison_rows):
            self._cmp_readout.clear()
            return
        result, median, ci = self._comparison_rows[i]
        m = result.metrics[self._cmp_combo.currentText()]
        ci_text = f"95 % CI {fmt_time(ci[0])} – {fmt_time(ci[1])}" if ci else "no CI (n < 6)"
        self._cmp_readout.setText(
            f"#{result.index + 1} {result.named} · {fmt_bytes(result.message_size)}: "
            f"median {fmt_time(median)}, {ci_text}, n = {m.stats.n:,}"
        )

"""The plots panel: live streaming structure, result plots' numbers, reset, rendering."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtCore, QtGui

from app.core.results.model import JobResult
from app.gui.plots.common import default_metric
from app.gui.plots.panel import PlotsPanel
from tests.helpers import records

RNG_SEED = 1234


def _samples(median: float, n: int, seed: int = RNG_SEED) -> list[float]:
    rng = np.random.default_rng(seed)
    return list(median * (1.0 + 0.05 * rng.standard_normal(n)).clip(0.5, None))


def _job(index: int, metrics: dict[str, list[float]], *, size: int = 1024, **fields: Any) -> JobResult:
    """Job `index` of run "run", labelled with its backend as a run labels it."""
    return records.job("run", index, size, metrics, **{"label": "AES-128-GCM [cryptography]", **fields})


@pytest.fixture
def panel(qtbot: Any) -> PlotsPanel:
    widget = PlotsPanel()
    qtbot.addWidget(widget)
    widget.resize(900, 600)
    return widget


def _stream_items(panel: PlotsPanel) -> tuple[int, int, int]:
    item = panel._samples_plot.getPlotItem()
    return len(item.items), len(item.vb.addedItems), len(item.scene().items())


def _xy(curve: pg.PlotDataItem) -> tuple[np.ndarray, np.ndarray]:
    x = curve.xData if curve.xData is not None else np.empty(0)
    y = curve.yData if curve.yData is not None else np.empty(0)
    return np.asarray(x), np.asarray(y)


# ------------------------------------------------------------------------ live stream


def test_tabs_in_order(panel: PlotsPanel) -> None:
    names = [panel.tabs.tabText(i) for i in range(panel.tabs.count())]
    assert names == ["Samples", "Histogram", "Comparison", "Scaling", "Resources", "Load"]


def test_streaming_100k_samples_reuses_items_and_keeps_every_sample(panel: PlotsPanel) -> None:
    rng = np.random.default_rng(RNG_SEED)
    panel.begin_job(0, "AES-128-GCM [cryptography]")
    sent: dict[str, list[np.ndarray]] = {"compute": [], "receiver": [], "rtt": []}
    counts = []
    for _batch in range(100):
        for metric, batches in sent.items():
            values = rng.uniform(1e-6, 5e-5, 1000 if metric == "compute" else 300)
            batches.append(values)
            panel.add_samples(0, metric, values.tolist())
        panel.refresh()
        counts.append(_stream_items(panel))
    # The first refresh creates one curve per metric; no batch after it adds anything.
    assert len(set(counts)) == 1
    assert set(panel._samples_curves) == {"compute", "receiver", "rtt"}
    assert len(panel._samples_legend.items) == 3
    for metric, curve in panel._samples_curves.items():
        assert curve.opts["autoDownsample"] is True
        assert curve.opts["downsampleMethod"] == "peak"
        assert curve.opts["clipToView"] is True
        x, y = _xy(curve)
        expected = np.concatenate(sent[metric])
        assert y.size == x.size == expected.size
        np.testing.assert_array_equal(y, expected)
        np.testing.assert_array_equal(x, np.arange(expected.size))
    assert panel.sample_count() == 100_000 + 2 * 30_000


def test_add_samples_does_not_touch_the_curves_until_refresh(panel: PlotsPanel) -> None:
    panel.begin_job(0, "job")
    panel.add_samples(0, "encrypt", [1e-6, 2e-6])
    panel.refresh()
    panel.add_samples(0, "encrypt", [3e-6])
    assert _xy(panel._samples_curves["encrypt"])[1].size == 2
    assert panel.sample_count() == 3
    panel.refresh()
    assert _xy(panel._samples_curves["encrypt"])[1].tolist() == [1e-6, 2e-6, 3e-6]


def test_refresh_without_new_samples_calls_no_set_data(panel: PlotsPanel, monkeypatch: pytest.MonkeyPatch) -> None:
    panel.begin_job(0, "job")
    panel.add_samples(0, "sign", [1e-4] * 10)
    panel.refresh()
    calls = []
    curve = panel._samples_curves["sign"]
    monkeypatch.setattr(curve, "setData", lambda *a, **k: calls.append(a))
    panel.refresh()
    panel.refresh()
    assert calls == []


def test_hidden_samples_tab_catches_up_when_shown(panel: PlotsPanel) -> None:
    panel.begin_job(0, "job")
    panel.tabs.setCurrentIndex(1)
    panel.add_samples(0, "hash", [1e-6] * 5)
    panel.refresh()
    assert "hash" not in panel._samples_curves or _xy(panel._samples_curves["hash"])[1].size == 0
    panel.tabs.setCurrentIndex(0)  # switching tabs pushes what is pending
    assert _xy(panel._samples_curves["hash"])[1].size == 5


def test_begin_job_clears_data_keeps_items_and_ignores_other_jobs(panel: PlotsPanel) -> None:
    panel.begin_job(0, "first")
    panel.add_samples(0, "compute", [1e-6] * 100)
    panel.add_samples(0, "rtt", [2e-6] * 100)
    panel.refresh()
    items = _stream_items(panel)
    panel.begin_job(1, "second")
    assert panel.sample_count() == 0
    assert all(_xy(c)[1].size == 0 for c in panel._samples_curves.values())
    assert len(panel._samples_legend.items) == 0
    panel.add_samples(0, "compute", [1.0] * 7)  # a late batch of the previous job
    panel.add_samples(1, "compute", [3e-6] * 4)
    panel.refresh()
    assert _stream_items(panel)[:2] == items[:2]  # same curves (the scene differs by one legend row)
    assert _xy(panel._samples_curves["compute"])[1].tolist() == [3e-6] * 4
    assert _xy(panel._samples_curves["rtt"])[1].size == 0
    assert len(panel._samples_legend.items) == 1


def test_samples_hover_reads_out_the_values_under_the_mouse(panel: PlotsPanel, qtbot: Any) -> None:
    panel.show()
    qtbot.waitExposed(panel)
    panel.begin_job(0, "job")
    panel.add_samples(0, "compute", [1e-6, 2e-6, 3e-6, 4e-6])
    panel.refresh()
    vb = panel._samples_plot.getPlotItem().vb
    vb.setRange(xRange=(0, 3), yRange=(0, 5e-6), padding=0)
    scene_pos = vb.mapViewToScene(QtCore.QPointF(2.1, 2e-6))
    panel._on_samples_hover((scene_pos,))
    assert "sample #2" in panel._samples_readout.text()
    assert "compute 3 µs" in panel._samples_readout.text()
    assert panel._samples_cursor.isVisible() and panel._samples_cursor.value() == 2


def test_sample_colours_follow_the_legend_and_log_scale_reaches_the_curves(panel: PlotsPanel) -> None:
    panel.begin_job(0, "session")
    for metric in ("compute", "receiver", "rtt"):
        panel.add_samples(0, metric, [1e-6, 2e-6])
    panel.refresh()
    panel.select_result(_job(1, {"sign": [1e-4] * 6, "verify": [2e-5] * 6}))
    pens = {m: panel._samples_curves[m].opts["pen"].color().getRgb()[:3] for m in ("sign", "verify")}
    assert pens == {"sign": (31, 119, 180), "verify": (255, 127, 14)}  # first and second colour again
    panel._samples_log.setChecked(True)
    assert all(c.opts["logMode"] == [False, True] for c in panel._samples_curves.values())
    assert panel._samples_plot.getPlotItem().getAxis("left").logMode


# ------------------------------------------------------------------------ results


def _results() -> list[JobResult]:
    return [
        _job(
            0,
            {"keygen": _samples(1e-3, 20, 1), "encrypt": _samples(2e-6, 200, 2), "decrypt": _samples(1.8e-6, 200, 3)},
            size=64,
        ),
        _job(
            1,
            {"keygen": _samples(1e-3, 20, 4), "encrypt": _samples(9e-6, 200, 5), "decrypt": _samples(8e-6, 200, 6)},
            size=4096,
        ),
        _job(
            2,
            {
                "keygen": _samples(1e-3, 20, 7),
                "encrypt": _samples(3e-6, 4, 8),  # n < 6: no CI
                "decrypt": _samples(3e-6, 4, 9),
            },
            size=1024,
        ),
        _job(
            3,
            {"encrypt": _samples(5e-4, 50, 10)},
            scheme="rsa-oaep",
            params={"bits": 2048},
            label="RSA-2048-OAEP [cryptography]",
            size=190,
        ),
        _job(4, {}, status="failed"),
        _job(5, {"encrypt": _samples(1.0, 50, 11)}, status="cancelled"),
    ]


def test_default_metric_prefers_the_per_message_metric() -> None:
    ops = _results()
    assert default_metric(ops) == "encrypt"
    session = [
        _job(
            0,
            {"handshake": [1e-3] * 6, "compute": [1e-6] * 6, "receiver": [1e-6] * 6, "rtt": [5e-5] * 6},
            mode="loopback",
        )
    ]
    assert default_metric(session) == "compute"
    assert default_metric([_job(0, {"keygen": [1.0] * 6, "sign": [1.0] * 6, "verify": [1.0] * 6})]) == "sign"
    assert default_metric([_job(0, {"keygen": [1.0] * 6, "exchange": [1.0] * 6})]) == "exchange"
    assert default_metric([]) is None


def test_comparison_bars_are_the_medians_with_ci95_whiskers(panel: PlotsPanel) -> None:
    results = _results()
    panel.show_results(results)
    assert panel._cmp_combo.currentText() == "encrypt"
    assert panel._cmp_log.isChecked()  # medians 250x apart: log from the start
    panel._cmp_log.setChecked(False)
    ok = results[:4]  # failed and cancelled jobs are left out
    medians = np.array([r.metrics["encrypt"].stats.median for r in ok])
    bars = panel._cmp_bars.opts
    assert panel._cmp_bars.isVisible()
    np.testing.assert_allclose(bars["width"], medians)
    np.testing.assert_allclose(bars["x0"], 0.0)
    np.testing.assert_allclose(bars["y"], np.arange(4))
    assert len(panel._cmp_axis.labels()) == 4
    assert panel._cmp_axis.labels()[3].startswith("#4 RSA-2048-OAEP")

    whiskers = panel._cmp_whiskers.opts
    with_ci = [i for i, r in enumerate(ok) if r.metrics["encrypt"].stats.ci95 is not None]
    assert with_ci == [0, 1, 3]  # job 2 has 4 samples: no whisker
    lows = np.array([ok[i].metrics["encrypt"].stats.ci95[0] for i in with_ci])
    highs = np.array([ok[i].metrics["encrypt"].stats.ci95[1] for i in with_ci])
    np.testing.assert_allclose(whiskers["y"], with_ci)
    np.testing.assert_allclose(whiskers["x"], medians[with_ci])
    np.testing.assert_allclose(whiskers["x"] - whiskers["left"], lows)
    np.testing.assert_allclose(whiskers["x"] + whiskers["right"], highs)

    texts = [label.textItem.toPlainText().strip() for label in panel._cmp_texts if label.isVisible()]
    assert texts == [pg.siFormat(m, precision=4, suffix="s") for m in medians]

    panel._cmp_log.setChecked(True)
    bars = panel._cmp_bars.opts
    np.testing.assert_allclose(np.asarray(bars["x0"]) + np.asarray(bars["width"]), np.log10(medians))
    assert np.all(np.asarray(bars["width"]) > 0)
    whiskers = panel._cmp_whiskers.opts
    np.testing.assert_allclose(whiskers["x"] - whiskers["left"], np.log10(lows))
    np.testing.assert_allclose(whiskers["x"] + whiskers["right"], np.log10(highs))
    assert panel._cmp_plot.getPlotItem().getAxis("bottom").logMode


def test_comparison_metric_choice_survives_new_results(panel: PlotsPanel) -> None:
    results = _results()
    panel.show_results(results[:1])
    panel._cmp_combo.setCurrentText("decrypt")
    np.testing.assert_allclose(panel._cmp_bars.opts["width"], [results[0].metrics["decrypt"].stats.median])
    panel.show_results(results)
    assert panel._cmp_combo.currentText() == "decrypt"
    assert len(panel._cmp_axis.labels()) == 3  # RSA has no decrypt


def test_scaling_has_one_sorted_point_per_size_and_one_curve_per_group(panel: PlotsPanel) -> None:
    results = _results()
    panel.show_results([results[1], results[3], results[0], results[2]])  # sizes out of order
    curves = panel._scl_curves
    assert len(curves) == 2
    assert len(panel._scl_legend.items) == 2
    aes, rsa = curves
    x, y = _xy(aes)
    assert x.tolist() == [64, 1024, 4096]
    by_size = {r.message_size: r.metrics["encrypt"].stats.median for r in results[:3]}
    np.testing.assert_allclose(y, [by_size[64], by_size[1024], by_size[4096]])
    x, y = _xy(rsa)
    assert x.tolist() == [190]
    np.testing.assert_allclose(y, [results[3].metrics["encrypt"].stats.median])
    assert rsa.opts["symbol"] == "o"
    plot = panel._scl_plot.getPlotItem()
    assert plot.getAxis("bottom").logMode and plot.getAxis("left").logMode
    panel.show_results(results)  # redrawing replaces the curves, it does not add to them
    assert len(panel._scl_curves) == 2
    assert len([i for i in plot.items if isinstance(i, pg.PlotDataItem)]) == 2


def test_select_result_shows_its_samples_and_histogram(panel: PlotsPanel) -> None:
    panel.begin_job(7, "live job")
    panel.add_samples(7, "compute", [5e-6] * 30)
    panel.refresh()
    result = _results()[0]
    panel.select_result(result)
    for name, metric in result.metrics.items():
        np.testing.assert_array_equal(_xy(panel._samples_curves[name])[1], metric.samples)
    assert _xy(panel._samples_curves["compute"])[1].size == 0  # nothing live while a result is shown
    panel.add_samples(7, "compute", [5e-6] * 10)
    panel.refresh()
    assert _xy(panel._samples_curves["compute"])[1].size == 0
    assert panel.sample_count() == 40

    assert panel._hist_combo.currentText() == "encrypt"
    assert [panel._hist_combo.itemText(i) for i in range(panel._hist_combo.count())] == ["keygen", "encrypt", "decrypt"]
    x, y = _xy(panel._hist_curve)
    assert x.size == y.size + 1
    assert y.sum() == len(result.metrics["encrypt"].samples)
    panel._hist_combo.setCurrentText("keygen")
    assert _xy(panel._hist_curve)[1].sum() == 20
    assert panel._hist_median.isVisible()
    assert panel._hist_median.value() == pytest.approx(result.metrics["keygen"].stats.median)

    panel.select_result(None)  # back to live
    assert _xy(panel._samples_curves["compute"])[1].size == 40
    assert _xy(panel._samples_curves["encrypt"])[1].size == 0
    assert _xy(panel._hist_curve)[1].size == 0
    assert panel._hist_combo.count() == 0


def test_histogram_of_a_heavy_tail_still_counts_every_sample(panel: PlotsPanel) -> None:
    rng = np.random.default_rng(RNG_SEED)
    samples = list(rng.normal(1e-6, 2e-8, 5000).clip(5e-7)) + [1e-2, 5e-2, 1.0]  # three huge stalls
    panel.select_result(_job(0, {"hash": samples}))
    x, y = _xy(panel._hist_curve)
    assert y.sum() == len(samples)
    assert 10 <= y.size <= 150
    assert x[-1] < 1e-5  # the stalls are folded into the last bin, not stretching the axis
    assert "counted in the last bin" in panel._hist_header.text()


def test_resources_one_curve_per_role(panel: PlotsPanel) -> None:
    panel.begin_job(0, "session")
    panel.tabs.setCurrentIndex(4)
    for k in range(20):
        panel.add_resource(0, "sender", k * 0.1, 50.0 + k, 100 << 20)
        panel.add_resource(0, "receiver", k * 0.1, 20.0, 64 << 20)
    panel.refresh()
    cpu, rss = panel._res_curves["sender"]
    assert _xy(cpu)[1].tolist() == [50.0 + k for k in range(20)]
    np.testing.assert_allclose(_xy(rss)[1], 100.0)  # MiB
    np.testing.assert_allclose(_xy(rss)[0], np.arange(20) * 0.1)
    assert len(panel._cpu_legend.items) == len(panel._rss_legend.items) == 2
    items = len(panel._cpu_plot.items), len(panel._rss_plot.items)
    panel.begin_job(1, "next")
    assert all(_xy(c)[1].size == 0 for pair in panel._res_curves.values() for c in pair)
    panel.add_resource(1, "sender", 0.0, 10.0, 1 << 20)
    panel.refresh()
    assert (len(panel._cpu_plot.items), len(panel._rss_plot.items)) == items
    assert len(panel._cpu_legend.items) == 1


def test_reset_clears_everything(panel: PlotsPanel) -> None:
    results = _results()
    panel.begin_job(0, "job")
    panel.add_samples(0, "compute", [1e-6] * 50)
    panel.add_resource(0, "worker", 0.5, 99.0, 1 << 20)
    panel.refresh()
    panel.show_results(results)
    panel.select_result(results[0])
    panel.reset()
    assert panel.sample_count() == 0
    assert all(_xy(c)[1].size == 0 for c in panel._samples_curves.values())
    assert len(panel._samples_legend.items) == 0
    assert _xy(panel._hist_curve)[1].size == 0
    assert not panel._cmp_bars.isVisible()
    assert not panel._cmp_whiskers.isVisible()
    assert panel._cmp_axis.labels() == []
    assert panel._scl_curves == [] and len(panel._scl_legend.items) == 0
    assert panel._cmp_combo.count() == panel._scl_combo.count() == panel._hist_combo.count() == 0
    panel.tabs.setCurrentIndex(4)
    panel.refresh()
    assert all(_xy(c)[1].size == 0 for pair in panel._res_curves.values() for c in pair)


def test_every_tab_renders(panel: PlotsPanel, qtbot: Any) -> None:
    results = _results()
    panel.show()
    qtbot.waitExposed(panel)
    panel.begin_job(0, "job")
    panel.add_samples(0, "encrypt", _samples(2e-6, 500))
    panel.add_resource(0, "worker", 0.1, 95.0, 50 << 20)
    panel.refresh()
    panel.show_results(results)
    for i in range(panel.tabs.count()):
        panel.tabs.setCurrentIndex(i)
        pixmap = panel.grab()
        assert not pixmap.isNull() and pixmap.width() > 0 and pixmap.height() > 0
    panel.select_result(results[0])
    panel.tabs.setCurrentIndex(1)
    assert not panel.grab().isNull()


def test_apply_palette_follows_a_theme_switch(panel: PlotsPanel) -> None:
    dark = QtGui.QPalette()
    dark.setColor(QtGui.QPalette.ColorRole.Window, QtGui.QColor(30, 30, 30))
    dark.setColor(QtGui.QPalette.ColorRole.WindowText, QtGui.QColor(230, 230, 230))
    panel.setPalette(dark)  # a palette change re-applies by itself
    assert panel._samples_plot.backgroundBrush().color() == QtGui.QColor(30, 30, 30)
    axis = panel._cmp_plot.getPlotItem().getAxis("bottom")
    assert axis.textPen().color() == QtGui.QColor(230, 230, 230)
    assert panel._scl_legend.opts["labelTextColor"] == QtGui.QColor(230, 230, 230)


def test_grid_lines_are_opaque_blends_of_the_axis_colour_onto_the_background(panel: PlotsPanel) -> None:
    """Translucent grid lines cost Qt's raster engine ~40x an opaque line (65 ms a frame)."""
    dark = QtGui.QPalette()
    dark.setColor(QtGui.QPalette.ColorRole.Window, QtGui.QColor(30, 30, 30))
    dark.setColor(QtGui.QPalette.ColorRole.WindowText, QtGui.QColor(230, 230, 230))
    panel.setPalette(dark)
    plots = [
        panel._samples_plot.getPlotItem(),
        panel._hist_plot.getPlotItem(),
        panel._cmp_plot.getPlotItem(),
        panel._scl_plot.getPlotItem(),
        panel._cpu_plot,
        panel._rss_plot,
    ]
    panel._cmp_axis.set_labels([f"job {k}" for k in range(101)])
    checked = 0
    for plot in plots:
        log_x, log_y = plot.getAxis("bottom").logMode, plot.getAxis("left").logMode
        plot.vb.setRange(xRange=(0, 2) if log_x else (0, 100), yRange=(-6, -4) if log_y else (0, 1e-5), padding=0)
        for name in ("left", "bottom"):
            axis = plot.getAxis(name)
            _, ticks, _ = axis.generateDrawSpecs(QtGui.QPainter())
            assert ticks, (plots.index(plot), name)
            colours = {pen.color().rgba() for pen, _, _ in ticks}
            assert all(QtGui.QColor.fromRgba(c).alpha() == 255 for c in colours)
            if axis.grid is not False:
                # Between the background (30) and the text colour (230): a faint grid.
                greys = sorted(QtGui.QColor.fromRgba(c).red() for c in colours)
                assert 30 < greys[0] <= greys[-1] < 230, greys
                checked += 1
    assert checked == len(plots) * 2 - 1  # all but the comparison's category axis
    curve_opts = panel._curve("compute").opts
    assert curve_opts["autoDownsampleFactor"] == 1.0


def test_sample_index_axis_ticks_whole_numbers_only(panel: PlotsPanel) -> None:
    axis = panel._samples_plot.getPlotItem().getAxis("bottom")
    for lo, hi in ((0, 3), (0, 9), (-0.5, 4.5), (0, 100_000)):
        levels = axis.tickValues(lo, hi, 800)
        values = [v for _, vs in levels for v in vs]
        assert values, (lo, hi)
        assert all(float(v).is_integer() for v in values), (lo, hi, values)


# ------------------------------------------------------------------------ legibility


def _text_rects(axis: pg.AxisItem) -> list[QtCore.QRectF]:
    """The label rectangles the axis would draw, measured by an active painter."""
    image = QtGui.QImage(8, 8, QtGui.QImage.Format.Format_ARGB32)
    painter = QtGui.QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [rect for rect, _, _ in specs[2]] if specs else []


def test_comparison_opens_on_a_metric_most_jobs_have() -> None:
    jobs = [_job(k, {"keygen": [1e-3] * 6, "encrypt": [1e-6] * 6}) for k in range(21)]
    jobs.append(_job(21, {"compute": [1e-6] * 6, "handshake": [1e-3] * 6}, mode="loopback"))
    assert default_metric(jobs) == "encrypt"  # not "compute", which 1 of 22 jobs has


def test_log_axis_labels_never_overlap(panel: PlotsPanel, qtbot: Any) -> None:
    panel.show()
    qtbot.waitExposed(panel)
    panel.show_results(_results())
    scaling = panel._scl_plot.getPlotItem()
    samples = panel._samples_plot.getPlotItem()
    samples.setLogMode(x=False, y=True)
    cases = [
        (3, scaling.getAxis("bottom"), scaling, (np.log10(18), np.log10(80)), "x"),  # 18 B .. 80 B
        (3, scaling.getAxis("bottom"), scaling, (0.0, 9.0), "x"),  # 1 B .. 1 GB
        (0, samples.getAxis("left"), samples, (-5.5, -4.1), "y"),  # 3 µs .. 80 µs: "10 µs/9/8"
        (3, scaling.getAxis("left"), scaling, (-9.0, 1.0), "y"),
    ]
    for tab, axis, plot, span, which in cases:
        panel.tabs.setCurrentIndex(tab)  # an axis has its size once its tab is shown
        QtCore.QCoreApplication.processEvents()
        plot.vb.setRange(**{f"{which}Range": span}, padding=0)
        rects = _text_rects(axis)
        assert rects, (axis.orientation, span)
        for i, a in enumerate(rects):
            for b in rects[i + 1 :]:
                assert not a.intersects(b), (axis.orientation, span, a, b)


def test_size_axis_uses_binary_units(panel: PlotsPanel) -> None:
    axis = panel._scl_plot.getPlotItem().getAxis("bottom")
    levels = axis.tickValues(np.log10(16), np.log10(2 << 20), 2000)
    texts = axis.tickStrings([v for _, vs in levels for v in vs], 1.0, 1.0)
    assert "1 KiB" in texts and "1 MiB" in texts and "16 B" in texts
    assert not any("kB" in text or "MB" in text for text in texts)


def test_legends_sit_outside_the_plotted_area(panel: PlotsPanel, qtbot: Any) -> None:
    panel.show()
    qtbot.waitExposed(panel)
    panel.begin_job(0, "job")
    panel.add_samples(0, "encrypt", _samples(2e-6, 50))
    panel.add_samples(0, "decrypt", _samples(3e-6, 50))
    panel.add_resource(0, "worker", 0.1, 95.0, 50 << 20)
    panel.show_results(_results())
    for tab, plot, legend in (
        (0, panel._samples_plot.getPlotItem(), panel._samples_legend),
        (3, panel._scl_plot.getPlotItem(), panel._scl_legend),
        (4, panel._cpu_plot, panel._cpu_legend),
    ):
        panel.tabs.setCurrentIndex(tab)
        panel.refresh()
        QtCore.QCoreApplication.processEvents()
        assert legend.items and legend.isVisible()
        box, view = legend.sceneBoundingRect(), plot.vb.sceneBoundingRect()
        assert box.width() > 20 and not box.adjusted(1, 1, -1, -1).intersects(view), (tab, box, view)


def test_bar_labels_fit_stay_distinct_and_keep_what_tells_them_apart() -> None:
    from app.gui.plots.comparison import bar_labels

    metrics = QtGui.QFontMetricsF(QtGui.QFont())
    texts = [
        f"#{k} ECDH brainpoolP256r1 + SHA-256 + AES-256-GCM [{backend}] · 18 B"
        for k, backend in ((1, "tinyec"), (2, "cryptography"), (3, "tinyec (Nagle on)"))
    ]
    budget = metrics.horizontalAdvance(texts[0]) * 0.6
    shown = bar_labels(texts, budget, metrics)
    assert len(set(shown)) == 3
    for full, short in zip(texts, shown):
        assert short.endswith(full[full.rfind(" [") :])  # backend, Nagle and size kept whole
        assert short != full and metrics.horizontalAdvance(short) <= budget + 1


def test_value_labels_sit_right_of_the_whiskers(panel: PlotsPanel, qtbot: Any) -> None:
    panel.show()
    qtbot.waitExposed(panel)
    panel.show_results(_results())
    for log in (False, True):
        panel._cmp_log.setChecked(log)
        QtCore.QCoreApplication.processEvents()
        vb = panel._cmp_plot.getPlotItem().vb
        whiskers = panel._cmp_whiskers.opts
        ends = dict(zip(np.asarray(whiskers["y"]).tolist(), np.asarray(whiskers["x"]) + whiskers["right"]))
        labels = [label for label in panel._cmp_texts if label.isVisible()]
        assert len(labels) == 4
        for row, label in enumerate(labels):
            end = ends.get(float(row), float(panel._cmp_bars.opts["x0"][row] + panel._cmp_bars.opts["width"][row]))
            end_x = vb.mapViewToScene(QtCore.QPointF(end, row)).x()
            assert label.sceneBoundingRect().left() > end_x, (log, row)
        row_px = abs(vb.mapViewToScene(QtCore.QPointF(0, 1)).y() - vb.mapViewToScene(QtCore.QPointF(0, 0)).y())
        assert all(label.sceneBoundingRect().height() <= row_px * 1.5 for label in labels)


def test_any_plot_exports_as_png_and_svg(panel: PlotsPanel, qtbot: Any, tmp_path: Any) -> None:
    panel.show()
    qtbot.waitExposed(panel)
    panel.show_results(_results())
    for tab in range(panel.tabs.count()):
        panel.tabs.setCurrentIndex(tab)
        png, svg = tmp_path / f"{tab}.png", tmp_path / f"{tab}.svg"
        panel.export_plot(png)
        panel.export_plot(svg)
        assert not QtGui.QImage(str(png)).isNull()
        assert "<svg" in svg.read_text(encoding="utf-8")[:2000]
    with pytest.raises(ValueError, match=r"\.png, \.svg or \.csv"):
        panel.export_plot(tmp_path / "plot.jpg")


def test_resources_follow_the_selected_job_and_say_why_they_are_empty(panel: PlotsPanel) -> None:
    jobs = _results()
    panel.tabs.setCurrentIndex(4)
    panel.begin_job(0, "long job")
    for k in range(5):
        panel.add_resource(0, "worker", 0.1 * (k + 1), 90.0 + k, 40 << 20)
    panel.refresh()
    panel.begin_job(1, "short job")  # finishes before the first 100 ms sample
    panel.select_result(jobs[0])
    assert _xy(panel._res_curves["worker"][0])[1].tolist() == [90.0, 91.0, 92.0, 93.0, 94.0]
    assert "Job #1" in panel._res_header.text() and panel._res_view.isVisibleTo(panel)
    panel.select_result(jobs[1])
    assert "no CPU sample: job shorter than 100 ms" in panel._res_header.text()
    assert not panel._res_view.isVisibleTo(panel)  # no empty axes
    panel.select_result(jobs[3])  # not run in this window: its stored summary instead
    assert "kept only for runs made in this window" in panel._res_header.text()
    panel.select_result(None)
    assert "Live: job #2" in panel._res_header.text()


def test_metric_choices_say_how_many_jobs_have_each(panel: PlotsPanel) -> None:
    panel.show_results(_results())
    combo = panel._cmp_combo
    tips = {combo.itemText(k): combo.itemData(k, QtCore.Qt.ItemDataRole.ToolTipRole) for k in range(combo.count())}
    assert tips["encrypt"] == "4 of 4 jobs have encrypt" and tips["keygen"] == "3 of 4 jobs have keygen"


def test_legend_labels_keep_the_backend_whole_and_stay_distinct() -> None:
    from app.gui.plots.common import short_distinct

    names = [
        "X25519 + HKDF-SHA256 + AES-256-GCM [cryptography]",
        "X25519 + HKDF-SHA256 + AES-256-GCM [cryptography] · loopback",
        "ChaCha20-Poly1305 [cryptography]",
        "AES-256-GCM [pycryptodome]",
    ]
    shown = short_distinct(names, 26)
    assert len(set(shown)) == len(names)
    assert all(label.endswith(name[name.rfind(" [") :]) for label, name in zip(shown, names))
    assert shown[3] == "AES-256-GCM [pycryptodome]"  # short enough: untouched
    assert len(shown[2]) < len(names[2]) + 1 and shown[0] != names[0]


def _kem(index: int, exchange: str | None, encrypt: float, *, size: int = 1024) -> JobResult:
    label = "ML-KEM-768 + AES-256-GCM [cryptography]" + (f" ({exchange})" if exchange else "")
    metrics = {"encrypt": _samples(encrypt, 30, seed=index), "exchange": _samples(60e-6, 30, seed=index + 50)}
    return _job(
        index,
        metrics,
        size=size,
        scheme="ml-kem",
        params={"level": 768},
        family="hybrid",
        label=label,
        exchange=exchange,
    )


def test_comparison_of_both_exchange_patterns_says_which_and_why_not_alike(panel: PlotsPanel, qtbot: Any) -> None:
    """A session job's encrypt is AEAD alone, a per-message job's holds its encapsulation: the
    bars say which is which, the header why they are not alike; a key establishment timed
    apart (exchange) is the same work in both, said without the note."""
    results = [_kem(0, "session", 0.6e-6), _kem(1, "per-message", 60e-6), _kem(2, None, 61e-6)]
    results.append(_kem(3, "session", 0.7e-6))
    panel.show_results(results)
    panel.tabs.setCurrentIndex(panel.tabs.indexOf(panel._cmp_plot.parentWidget()))
    panel._cmp_combo.setCurrentText("encrypt")
    labels = panel._cmp_axis.labels()
    # Like with like: both session bars together, a line, then the per-message ones (the
    # result from before jobs named their exchange among them, as it measured).
    assert [label.split(" ")[0] for label in labels] == ["#1", "#4", "#2", "#3"]
    assert [
        label.split(" · ")[0].endswith(suffix)
        for label, suffix in zip(labels, ("(session)", "(session)", "(per-message)", "(per-message)"))
    ] == [True] * 4
    assert panel._cmp_divider.isVisible() and panel._cmp_divider.value() == 1.5
    assert [r.index for r, _, _ in panel._comparison_rows] == [0, 3, 1, 2]  # the hover reads the bar it is over
    header = panel._cmp_header.text()
    assert (
        "exchange patterns mixed: encrypt is AEAD alone with session, holds a key exchange with per-message:"
        " per-message jobs below the line" in header
    )
    assert "Exchange patterns mixed" in " ".join(panel._comparison_caption().details)
    panel._cmp_combo.setCurrentText("exchange")  # the same work in both: job order, no line
    assert "patterns mixed" not in panel._cmp_header.text() and not panel._cmp_divider.isVisible()
    assert [label.split(" ")[0] for label in panel._cmp_axis.labels()] == ["#1", "#2", "#3", "#4"]
    panel.resize(1024, 700)
    qtbot.waitExposed(panel) if panel.isVisible() else None
    image = panel.grab().toImage()
    assert not image.isNull() and image.width() > 0  # painted


def test_scaling_draws_each_exchange_pattern_as_a_curve_of_its_own(panel: PlotsPanel) -> None:
    results = [_kem(0, "session", 0.6e-6), _kem(1, "session", 2e-6, size=65536)]
    results += [_kem(2, "per-message", 60e-6), _kem(3, "per-message", 62e-6, size=65536)]
    panel.show_results(results)
    panel._scl_combo.setCurrentText("encrypt")
    names = [name for name, *_ in panel._scaling_groups]
    assert len(names) == 2 and {name.split(" [")[0] for name in names} == {"ML-KEM-768 + AES-256-GCM"}
    assert [name.endswith(suffix) for name, suffix in zip(names, ("(session)", "(per-message)"))] == [True, True]

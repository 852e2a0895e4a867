"""A legend entry of a curve whose points each have their own symbol, size, pen or brush
is painted, one symbol, never the list (app/gui/plots/axes.py, `_OneSymbolSample`):
pyqtgraph 0.14's own sample hands the list to QPainter and the process ends with a
segmentation fault, so the painting runs in a child process (tests/helpers/paint_child.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6.QtGui import QColor, QImage

from app.gui.plots.common import series_colour
from tests.helpers.paint_child import finish_child, run_child

PAINT = """
import sys
import pyqtgraph as pg
from PySide6.QtWidgets import QApplication
from app.gui.plots.axes import new_plot, outside_legend
from app.gui.plots.common import series_colour

app = QApplication([])
plot = new_plot()
legend = outside_legend(plot.getPlotItem())
colour = series_colour(1)
curve = pg.PlotDataItem(
    [1, 2, 3], [1, 3, 2], pen=None, symbol=["x", "o", "t"], symbolSize=[13, 9, 9],
    symbolBrush=[pg.mkBrush(colour)] * 3, symbolPen=[pg.mkPen(colour)] * 3,
)
plot.getPlotItem().addItem(curve)
legend.addItem(curve, "per point")
plot.resize(400, 300)
plot.show()
for _ in range(4):
    app.processEvents()
(sample, _label), = legend.items
box = sample.mapRectToScene(sample.boundingRect())
corner = plot.mapFromScene(box.topLeft())
picture = plot.grab()
assert picture.save(sys.argv[1])
print(corner.x(), corner.y())
"""


def test_a_curve_with_a_symbol_per_point_gets_one_symbol_in_the_legend(tmp_path: Path) -> None:
    script, picture = tmp_path / "legend.py", tmp_path / "legend.png"
    script.write_text(PAINT, encoding="utf-8")
    x, y = (int(v) for v in finish_child(run_child([str(script), str(picture)]), 120, "the legend").split())
    image = QImage(str(picture)).convertToFormat(QImage.Format.Format_RGB888)
    sample = image.copy(x, y, 20, 20)  # the legend's sample: its first point's symbol, an ×
    colour = series_colour(1)
    wanted = np.array([colour.red(), colour.green(), colour.blue()])
    pixels = np.array([[QColor(sample.pixel(i, j)).getRgb()[:3] for i in range(20)] for j in range(20)])
    assert (np.abs(pixels - wanted).max(axis=2) < 40).sum() >= 10, "no symbol in the curve's colour"

"""The plots panel, one module per tab (see panel.py)."""

from app.gui.plots.common import default_metric
from app.gui.plots.panel import PlotsPanel

__all__ = ["PlotsPanel", "default_metric"]

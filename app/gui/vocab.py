"""The GUI's closed vocabularies, defined once (the core's are in `app.core.vocab`).

Qt-free on purpose: the command line's `gui` options (`--theme`, `--tab`) offer these
values without loading Qt. Each is a `StrEnum`, so a member equals the string stored in
QSettings or given on the command line.
"""

from __future__ import annotations

import enum


class Theme(enum.StrEnum):
    """The window's colours: the platform's palette, or one of the app's own."""

    SYSTEM = "system"
    LIGHT = "light"
    DARK = "dark"

    @property
    def label(self) -> str:
        """The name in Preferences."""
        return _THEME_LABELS[self]


_THEME_LABELS = {Theme.SYSTEM: "Follow the system", Theme.LIGHT: "Light", Theme.DARK: "Dark"}


class PlotTab(enum.StrEnum):
    """The plot panel's tabs, in their order there (`--tab` names one)."""

    SAMPLES = "samples"
    HISTOGRAM = "histogram"
    COMPARISON = "comparison"
    SCALING = "scaling"
    RESOURCES = "resources"
    #: Load jobs: latency percentiles against achieved rate (app.gui.plots.load).
    LOAD = "load"

    @property
    def label(self) -> str:
        """The tab's title."""
        return self.value.capitalize()


class Tone(enum.StrEnum):
    """What a coloured text says: `app.gui.theme.STATUS_COLOURS` gives each a colour that
    reads on light and dark backgrounds."""

    GOOD = "good"
    BAD = "bad"
    WARN = "warn"
    MUTED = "muted"
    INFO = "info"

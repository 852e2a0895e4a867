"""The look shared by the app's plots and the report's charts."""

from __future__ import annotations

#: Series colours, in order (matplotlib's "tab10", readable on light and dark).
PALETTE: tuple[tuple[int, int, int], ...] = (
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
)
#: Post-quantum (and other "marked") entries in charts.
MARKED = (214, 39, 40)

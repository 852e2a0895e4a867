"""Python's cycle collector runs on the window's thread only, never on a worker thread.

The collector runs on whichever thread happens to allocate when a threshold is crossed.
On one of the run controller's pool threads it once freed a pyqtgraph `WidgetGroup`
left in a cycle by an earlier window: the QObject destructor took Qt's lock and waited
for the GIL, while the window's thread held the GIL and waited for that lock, deleting
a menu. Both threads stopped for good (a test of Stop hung past every timeout). Qt
objects must be destroyed on the thread that owns them, so the automatic collector is
off while the window lives and pyqtgraph's `GarbageCollector` collects on a timer of
the window's thread instead (the same thresholds, so no more garbage is kept).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: How often the window's thread looks at the collector's counts (pyqtgraph's default).
CHECK_INTERVAL_S = 1.0


@contextmanager
def collected_on_the_gui_thread(interval_s: float = CHECK_INTERVAL_S) -> Iterator[None]:
    """Within this block, cycles are collected by a timer of the calling (Qt main) thread;
    after it, the young generations once more there and the automatic collector is back
    on as it was."""
    from pyqtgraph.util.garbage_collector import GarbageCollector

    was_enabled = gc.isenabled()
    collector = GarbageCollector(interval=interval_s)  # disables the automatic collector
    try:
        yield
    finally:
        collector.timer.stop()
        # What the block left in cycles (its windows, dialogs and plots) is freed here, on
        # this thread, not later by whichever thread allocates next. The young generations
        # only: everything made since the last timer tick is still in them.
        gc.collect(1)
        if was_enabled:
            gc.enable()

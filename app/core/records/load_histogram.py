"""A load step's latency histogram: the range every generator records it over (the
producer's setting, which the results checker reads too)."""

from __future__ import annotations

#: Latencies recorded in nanoseconds, from 1 ns to an hour, to 3 significant digits. The
#: top must hold the longest latency a step can record: a request sent at the end of a
#: step's longest window (`MAX_DURATION_S`) and answered at the end of its drain (as long
#: again, plus a link's round trip); HdrHistogram silently drops a value above its range.
HISTOGRAM_RANGE = (1, 3_600_000_000_000, 3)

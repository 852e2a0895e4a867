"""A load step's latency histogram: the range every generator records it over, and the
longest text its encoded form can be (the producer's setting, which the results checker
bounds the `histogram` field by).
"""

from __future__ import annotations

from functools import cache

#: Latencies recorded in nanoseconds, from 1 ns to an hour, to 3 significant digits. The
#: top must hold the longest latency a step can record: a request sent at the end of a
#: step's longest window (`MAX_DURATION_S`) and answered at the end of its drain (as long
#: again, plus a link's round trip); HdrHistogram silently drops a value above its range.
HISTOGRAM_RANGE = (1, 3_600_000_000_000, 3)


def zlib_bound(size: int) -> int:
    """The most bytes zlib's `compress` makes of `size` bytes, whatever they are (zlib's own
    `compressBound`: incompressible data is stored, with a few bytes of framing per block)."""
    return size + (size >> 12) + (size >> 14) + (size >> 25) + 13


@cache
def max_encoded_chars(lowest: int, highest: int, significant_figures: int) -> int:
    """The longest base64 text `HdrHistogram.encode` can make of a histogram over this range
    (hdrh's V2 encoding): its header, then every counter of the range as a ZigZag LEB128
    varint of at most `V2_MAX_WORD_SIZE_IN_BYTES` (every bucket full, no run of zeros to
    shorten), zlib-compressed with nothing to gain, behind the external header, in base64.
    It grows with the range and the precision: 1 ns to an hour at 3 digits is 33,792
    counters, 405,708 characters at most; a real step's is a few hundred to some tens of
    thousands (2,500/s for 404 s: 15,408)."""
    from hdrh.codec import V2_MAX_WORD_SIZE_IN_BYTES, ext_header_size, payload_header_size
    from hdrh.histogram import HdrHistogram

    counters = int(HdrHistogram(lowest, highest, significant_figures).counts_len)
    payload = int(payload_header_size) + counters * int(V2_MAX_WORD_SIZE_IN_BYTES)
    wire = int(ext_header_size) + zlib_bound(payload)
    return 4 * -(-wire // 3)


def max_histogram_chars() -> int:
    """The longest encoded histogram a load step can hold (`HISTOGRAM_RANGE`'s): what every
    generator records, and what a merge of generators' records adds up to (the same range)."""
    return max_encoded_chars(*HISTOGRAM_RANGE)

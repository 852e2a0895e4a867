"""What the kernel knows about a session's TCP connection: Linux's `TCP_INFO`.

`read(sock)` asks the kernel for its `struct tcp_info` (include/uapi/linux/tcp.h) and
keeps the fields CryptoBench records; `window(start, end)` turns two readings, taken
around one message size, into the job's `TcpInfo` record (counters as differences,
RTT and congestion window as the end's values: app.core.records.job_tcp_info.TcpInfo says
which is which).

The kernel fills at most the buffer it is given and at most its own struct, and says
how many bytes it wrote: a field beyond that length is None (an older kernel), never
read from the zero padding. Elsewhere there is no reading at all: macOS has
`TCP_CONNECTION_INFO`, a different struct, and Windows nothing comparable, so `read`
returns `Unavailable` with the reason and the job records that, never zeros.

A reading is one system call (about a microsecond); both ends take theirs outside
every timed region.
"""

from __future__ import annotations

import platform
import socket
import struct
import sys
from dataclasses import dataclass, replace

from app.core.records.job_tcp_info import TcpInfo

#: TCP_INFO's option number in linux/tcp.h (Python's socket module names it on Linux only).
TCP_INFO = int(getattr(socket, "TCP_INFO", 11))
#: Bytes asked for: more than any kernel's struct so far (232 bytes in 5.x, 248 in 6.x);
#: the kernel copies min(this, its own size) and returns that length.
BUFFER_BYTES = 512

#: The fields read, with their offset in struct tcp_info and their C type (native byte
#: order, as the kernel writes them). Offsets checked with offsetof() against
#: /usr/include/linux/tcp.h; the first Linux version that filled each is noted.
_LAYOUT: dict[str, tuple[int, str]] = {
    "snd_mss": (16, "I"),
    "rtt": (68, "I"),  # microseconds
    "rttvar": (72, "I"),  # microseconds
    "snd_cwnd": (80, "I"),  # segments
    "total_retrans": (100, "I"),
    "bytes_acked": (120, "Q"),  # 4.1
    "bytes_received": (128, "Q"),  # 4.1
    "segs_out": (136, "I"),  # 4.2
    "segs_in": (140, "I"),  # 4.2
    "data_segs_in": (152, "I"),  # 4.6
    "data_segs_out": (156, "I"),  # 4.6
}
_STRUCTS = {name: (offset, struct.Struct("=" + kind)) for name, (offset, kind) in _LAYOUT.items()}
#: The u32 counters wrap; a difference is taken modulo 2**32.
_WRAP = {"I": 1 << 32, "Q": 1 << 64}


@dataclass(frozen=True)
class KernelReading:
    """The recorded fields of one TCP_INFO reading, as the kernel gave them (None: beyond
    the length it filled)."""

    snd_mss: int | None = None
    rtt: int | None = None
    rttvar: int | None = None
    snd_cwnd: int | None = None
    total_retrans: int | None = None
    bytes_acked: int | None = None
    bytes_received: int | None = None
    segs_out: int | None = None
    segs_in: int | None = None
    data_segs_in: int | None = None
    data_segs_out: int | None = None


@dataclass(frozen=True)
class Unavailable:
    """No reading: why (not Linux, or the kernel refused the call)."""

    reason: str


Reading = KernelReading | Unavailable

#: A connection before its first segment: a fresh connection's counters are read against it.
NEW_CONNECTION = KernelReading(**dict.fromkeys(_LAYOUT, 0))


def parse(buffer: bytes) -> KernelReading:
    """The recorded fields of a struct tcp_info of `len(buffer)` bytes, as the kernel filled it."""
    values: dict[str, int | None] = {}
    for name, (offset, layout) in _STRUCTS.items():
        values[name] = layout.unpack_from(buffer, offset)[0] if offset + layout.size <= len(buffer) else None
    return KernelReading(**values)


def unavailable_reason(system: str = sys.platform) -> str | None:
    """Why this OS gives no TCP_INFO; None on Linux."""
    if system.startswith("linux"):
        return None
    name = platform.system() or system
    return f"not available on this OS ({name}): TCP_INFO is Linux's"


def read(sock: socket.socket) -> Reading:
    """The kernel's TCP_INFO for a connected TCP socket, or why there is none."""
    reason = unavailable_reason()
    if reason is not None:
        return Unavailable(reason)
    if sock.family not in (socket.AF_INET, socket.AF_INET6):  # a Unix socketpair in tests
        return Unavailable("not a TCP connection")
    try:
        buffer = sock.getsockopt(socket.IPPROTO_TCP, TCP_INFO, BUFFER_BYTES)
    except OSError as exc:
        return Unavailable(f"getsockopt(TCP_INFO) failed: {exc.strerror or exc}")
    return parse(buffer)


def _difference(name: str, start: KernelReading, end: KernelReading) -> int | None:
    before, after = getattr(start, name), getattr(end, name)
    if before is None or after is None:
        return None
    difference: int = (after - before) % _WRAP[_LAYOUT[name][1]]
    return difference


def window(start: Reading, end: Reading, exchanges: int | None = None) -> TcpInfo:
    """The record of one message size: counters from `start` to `end`, the rest at `end`."""
    if isinstance(end, Unavailable):
        return TcpInfo(unavailable=end.reason)
    if isinstance(start, Unavailable):
        return TcpInfo(unavailable=start.reason)
    return TcpInfo(
        smoothed_rtt_s=None if end.rtt is None else end.rtt / 1e6,
        rtt_var_s=None if end.rttvar is None else end.rttvar / 1e6,
        retransmits_total=_difference("total_retrans", start, end),
        segments_out=_difference("segs_out", start, end),
        segments_in=_difference("segs_in", start, end),
        data_segments_out=_difference("data_segs_out", start, end),
        data_segments_in=_difference("data_segs_in", start, end),
        bytes_acked=_difference("bytes_acked", start, end),
        bytes_received=_difference("bytes_received", start, end),
        congestion_window_segments=end.snd_cwnd,
        mss_bytes=end.snd_mss,
        exchanges=exchanges,
    )


def add(total: TcpInfo, later: TcpInfo) -> TcpInfo:
    """Two connections' records over one size as one: counters summed; the RTT, its variation,
    the congestion window and the MSS those of `later`, the connection the size's exchanges
    used last (a fresh connection's, after the session's own); `total`'s exchange count."""
    if total.unavailable is not None:
        return total
    if later.unavailable is not None:
        return later

    def plus(name: str) -> int | None:
        a, b = getattr(total, name), getattr(later, name)
        return None if a is None or b is None else int(a) + int(b)

    return replace(
        later,
        exchanges=total.exchanges,
        retransmits_total=plus("retransmits_total"),
        segments_out=plus("segments_out"),
        segments_in=plus("segments_in"),
        data_segments_out=plus("data_segments_out"),
        data_segments_in=plus("data_segments_in"),
        bytes_acked=plus("bytes_acked"),
        bytes_received=plus("bytes_received"),
    )

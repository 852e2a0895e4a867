"""The typed record of what each end's kernel saw of its TCP connection over one message
size (`TcpInfo`, from Linux `TCP_INFO`), frozen and converted to and from the results
contract's JSON like the other parts of a job's result (`app.core.records.job_records`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.core.records.job_records import opt_float, opt_int


@dataclass(frozen=True)
class TcpInfo:
    """What one end's kernel knew about its TCP connection over one message size
    (Linux `TCP_INFO`, read by app/core/transport/tcpinfo.py).

    Two readings are taken per size, one before the sender's SIZE request and one after
    its SIZE_END (the receiver: on SIZE and on SIZE_END). Counters (segments, bytes,
    retransmissions) are the difference between them: this size's traffic only, floor
    ping-pong, messages, tampered payloads and the traced one included, but not the
    handshakes. RTT, its variation, the congestion window and the MSS are the kernel's
    values at the size's end (its smoothed estimates over the connection so far).

    A figure is None when the kernel did not fill it (an older kernel returns a shorter
    struct); a reading that could not be taken at all (not Linux) has only `unavailable`,
    the reason, never zeros.

    Over an emulated link (app/core/link/) each end's connection is to the link process,
    not to the other end: the kernel times that loopback hop, and its congestion window
    never meets the emulated rate. The emulated delay shows in its RTT only where an
    acknowledgement waited to ride on the reply (a delayed ACK: a small message's sRTT
    then matches the emulated round trip, a 64 KiB one's, acknowledged at once, does not).
    """

    #: tcpi_rtt: the kernel's smoothed round-trip time, in seconds (it keeps microseconds).
    smoothed_rtt_s: float | None = None
    #: tcpi_rttvar: its mean deviation, in seconds.
    rtt_var_s: float | None = None
    #: tcpi_total_retrans over the size: segments this end sent again.
    retransmits_total: int | None = None
    #: tcpi_segs_out / tcpi_segs_in over the size: every segment, pure acknowledgements included.
    segments_out: int | None = None
    segments_in: int | None = None
    #: tcpi_data_segs_out / tcpi_data_segs_in over the size: segments that carried data.
    data_segments_out: int | None = None
    data_segments_in: int | None = None
    #: tcpi_bytes_acked / tcpi_bytes_received over the size: stream bytes acknowledged by the
    #: peer, and received from it.
    bytes_acked: int | None = None
    bytes_received: int | None = None
    #: tcpi_snd_cwnd at the size's end, in segments of `mss_bytes`.
    congestion_window_segments: int | None = None
    #: tcpi_snd_mss: the largest segment this end sends, in bytes.
    mss_bytes: int | None = None
    #: Request/reply exchanges of the session protocol over the size (counted by the sender,
    #: not the kernel): each floor ping, message, tampered payload and the traced one is one,
    #: plus SIZE and SIZE_END. Divides the counters into "per exchange" figures.
    exchanges: int | None = None
    #: Why there is no reading ("not available on this OS (Darwin) ..."); None: read.
    unavailable: str | None = None

    def per_exchange(self, count: int | None) -> float | None:
        """A counter of this record divided by its exchanges (None when either is unknown)."""
        return None if count is None or not self.exchanges else count / self.exchanges

    def to_dict(self) -> dict[str, Any]:
        if self.unavailable is not None:
            return {"unavailable": self.unavailable}
        return {name: getattr(self, name) for name in _TCP_INFO_FIGURES}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TcpInfo:
        if data.get("unavailable") is not None:
            return cls(unavailable=str(data["unavailable"]))
        return cls.of(
            opt_float(data.get("smoothed_rtt_s")),
            opt_float(data.get("rtt_var_s")),
            {name: opt_int(data.get(name)) for name in TCP_INFO_COUNTS},
        )

    @classmethod
    def of(cls, smoothed_rtt_s: float | None, rtt_var_s: float | None, counts: Mapping[str, int | None]) -> TcpInfo:
        """A reading from its two times and its counts by name (`TCP_INFO_COUNTS`; missing: None)."""
        return cls(
            smoothed_rtt_s=smoothed_rtt_s,
            rtt_var_s=rtt_var_s,
            retransmits_total=counts.get("retransmits_total"),
            segments_out=counts.get("segments_out"),
            segments_in=counts.get("segments_in"),
            data_segments_out=counts.get("data_segments_out"),
            data_segments_in=counts.get("data_segments_in"),
            bytes_acked=counts.get("bytes_acked"),
            bytes_received=counts.get("bytes_received"),
            congestion_window_segments=counts.get("congestion_window_segments"),
            mss_bytes=counts.get("mss_bytes"),
            exchanges=counts.get("exchanges"),
        )


#: TcpInfo's integer figures (counts of segments, bytes and exchanges; window and MSS).
TCP_INFO_COUNTS = (
    "retransmits_total",
    "segments_out",
    "segments_in",
    "data_segments_out",
    "data_segments_in",
    "bytes_acked",
    "bytes_received",
    "congestion_window_segments",
    "mss_bytes",
    "exchanges",
)
#: Every figure of TcpInfo, in its JSON order.
_TCP_INFO_FIGURES = ("smoothed_rtt_s", "rtt_var_s", *TCP_INFO_COUNTS)


__all__ = [
    "TCP_INFO_COUNTS",
    "TcpInfo",
]

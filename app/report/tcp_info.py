"""What the kernel saw: each session end's TCP_INFO (`JobResult.tcp_info`) in words, and,
over a packet link, what the path did (`JobResult.path`: packets, drops, the loss it
achieved, the emulator's lateness).

One wording for the results table's tooltips, the CLI and the report's session
section ("What the kernel saw"), so the three say the same thing.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.records.job_tcp_info import TcpInfo
from app.core.records.link_path import PathDirection, wilson_interval
from app.core.results.model import JobResult
from app.core.vocab import JobStatus, LinkEmulation, Role
from app.report.content_common import aligns
from app.report.job_figures import size_text
from app.report.model import Block, Bullets, Paragraph, Table
from app.report.units import MISSING, format_bytes, format_seconds

__all__ = ["KERNEL_TITLE", "kernel_blocks", "kernel_line", "kernel_lines", "path_lines"]

KERNEL_TITLE = "What the kernel saw"

#: Ends in the order every face lists them (Role's own: sender, then receiver).
_ORDER: dict[str, int] = {role: i for i, role in enumerate(Role)}


def _ends(job: JobResult) -> list[str]:
    return sorted(job.tcp_info, key=lambda role: _ORDER.get(role, len(_ORDER)))


def _number(value: int | None) -> str:
    """A count with narrow no-break spaces between thousands; "?" when the kernel did not say."""
    return "?" if value is None else f"{value:,}".replace(",", "\u202f")


def _per_exchange(info: TcpInfo, count: int | None) -> str:
    per = info.per_exchange(count)
    return MISSING if per is None else f"{per:.1f}"


def kernel_line(info: TcpInfo) -> str:
    """One end in a line: "sRTT 41 µs, 112 segments out (1.0 per exchange), 112 in,
    0 retransmissions, cwnd 18 segments", or why there is no reading."""
    if info.unavailable is not None:
        return f"no reading: {info.unavailable}"
    parts = []
    if info.smoothed_rtt_s is not None:
        parts.append(f"sRTT {format_seconds(info.smoothed_rtt_s)}")
    out = f"{_number(info.segments_out)} segments out"
    if info.per_exchange(info.segments_out) is not None:
        out += f" ({_per_exchange(info, info.segments_out)} per exchange)"
    retransmits = info.retransmits_total
    parts += [
        out,
        f"{_number(info.segments_in)} in",
        f"{_number(retransmits)} retransmission{'' if retransmits == 1 else 's'}",
    ]
    if info.congestion_window_segments is not None:
        parts.append(f"cwnd {_number(info.congestion_window_segments)} segments")
    return ", ".join(parts)


def kernel_lines(job: JobResult) -> list[str]:
    """ "kernel (sender): ..." per end that recorded TCP_INFO (none for operations jobs and
    results from before it), then the packet path's lines (`path_lines`)."""
    return [f"kernel ({role}): {kernel_line(job.tcp_info[role])}" for role in _ends(job)] + path_lines(job)


def _direction_text(direction: PathDirection, bursty: bool = False) -> str:
    text = f"{_number(direction.packets_in)} packets"
    if direction.dropped_loss or direction.loss_trials:
        interval = wilson_interval(direction.dropped_loss, direction.loss_trials)
        lost = f"{_number(direction.dropped_loss)} lost"
        if direction.loss_rate is not None and interval is not None:
            # The interval is a binomial one: losses in bursts are not independent trials,
            # so there it is narrower than the truth, and says so.
            which = "95 % if independent" if bursty else "95 %"
            lost += f" ({direction.loss_rate:.2%}, {which} {interval[0]:.2%}–{interval[1]:.2%})"
        text += f", {lost}"
    if direction.dropped_queue:
        text += f", {_number(direction.dropped_queue)} dropped by the full queue"
    return text


def path_lines(job: JobResult) -> list[str]:
    """ "path (up): 1 308 packets, 16 lost (1.22 %, 95 % 0.75 %–1.98 %)", the same down, and
    the emulator's own lateness; none for a job without a packet path."""
    path = job.path
    if path is None:
        return []
    bursty = job.link is not None and job.link.burst_loss is not None
    late = "nothing released"
    if path.late_p50_s is not None:
        late = (
            f"p50 {format_seconds(path.late_p50_s)}, p99 {format_seconds(path.late_p99_s)}, "
            f"max {format_seconds(path.late_max_s)}"
        )
    settings = ", ".join(
        part
        for part in (
            f"congestion control {path.congestion_control}" if path.congestion_control else "",
            ""
            if path.slow_start_after_idle is None
            else f"slow start after idle {'on' if path.slow_start_after_idle else 'off'}",
        )
        if part
    )
    return [
        f"path (up): {_direction_text(path.up, bursty)}",
        f"path (down): {_direction_text(path.down, bursty)}",
        f"emulator: released late by {late}"
        + (
            f"; {path.read_late_packets} packets read late (up to {format_seconds(path.read_late_max_s)})"
            if path.read_late_packets
            else ""
        )
        + f"{' (over the limit: the figures carry its delay)' if path.late else ''}; "
        f"{format_seconds(path.emulator_cpu_s)} CPU{', real-time priority' if path.realtime else ''}"
        + (f"; {settings}" if settings else ""),
    ]


def _row(job: JobResult, role: str, info: TcpInfo) -> list[str]:
    def number(value: int | None) -> str:
        return MISSING if value is None else _number(value)

    cwnd = number(info.congestion_window_segments)
    if info.congestion_window_segments is not None and info.mss_bytes:
        cwnd += f" × {format_bytes(info.mss_bytes)}"
    return [
        f"{job.label} · {size_text(job)}",
        role,
        format_seconds(info.smoothed_rtt_s),
        f"{number(info.segments_out)} / {number(info.segments_in)}",
        _per_exchange(info, info.data_segments_out),
        number(info.retransmits_total),
        format_bytes(info.bytes_acked) if info.bytes_acked is not None else MISSING,
        cwnd,
    ]


def kernel_blocks(jobs: Sequence[JobResult]) -> list[Block]:
    """The report's small table of each session job's TCP_INFO, one row per end, with the
    words that say how to read it; nothing when no job recorded any."""
    recorded = [job for job in jobs if job.tcp_info and job.status == JobStatus.OK]
    if not recorded:
        return []
    rows, missing = [], []
    for job in recorded:
        for role in _ends(job):
            info = job.tcp_info[role]
            if info.unavailable is not None:
                missing.append(f"{job.label} · {size_text(job)}, {role}: {info.unavailable}")
            else:
                rows.append(_row(job, role, info))
    words = (
        "Each end of a session reads its kernel's TCP statistics (Linux TCP_INFO) before and after each "
        "message size: segments, retransmissions and acknowledged bytes are counted over the size; the smoothed "
        "round-trip time (sRTT) and the congestion window (cwnd, in segments of the connection's MSS) are as at "
        "its end. A size's exchanges are its request/reply pairs (floor pings, messages, tampered payloads, the "
        "traced message, the size's start and end); per exchange is the data segments one of them took. A "
        "message larger than one MSS travels as several segments; while they fit in the congestion window they "
        "leave together and the message costs one round trip, beyond it each further window's worth costs "
        "another. Retransmissions should be 0 on loopback: each is a lost segment, paid for with a timeout or a "
        "fast retransmit. The kernel times a segment until its acknowledgement, which often rides on the "
        "reply, so its sRTT can include the other end's work and exceed the loopback floor."
    )
    blocks: list[Block] = [Paragraph(words)]
    packet = [job for job in recorded if job.path is not None]
    if packet:
        blocks.append(
            Paragraph(
                "Over the packet path each end's kernel talks to the other through the emulated path itself, so "
                "its sRTT, congestion window and retransmissions are the path's. The emulator counts the IP "
                "packets it forwarded each way and the ones it dropped (a full queue, or loss), and how late it "
                "released packets against its model (a p99 beyond 0.5 ms flags the size):",
                style="note",
            )
        )
        blocks.append(Bullets([f"{job.label} · {size_text(job)}: " + "; ".join(path_lines(job)) for job in packet]))
    if any(job.link is not None and job.link.emulation == LinkEmulation.DELAY_LINE for job in recorded):
        blocks.append(
            Paragraph(
                "Over an emulated link each end's connection is to the link process, not to the other end: the "
                "kernel times that loopback hop, and its congestion window never meets the emulated rate. The "
                "emulated delay shows in its sRTT only where an acknowledgement waited to ride on the reply (a "
                "delayed ACK, typical of small messages); a segment acknowledged at once shows the hop alone.",
                style="note",
            )
        )
    if rows:
        blocks.append(
            Table(
                [
                    "Job · size",
                    "End",
                    "sRTT",
                    "Segments out / in",
                    "Per exchange",
                    "Retransmits",
                    "Bytes acked",
                    "cwnd",
                ],
                rows,
                caption="Per end and message size: counts over the size, sRTT and cwnd at its end; per exchange = "
                "data segments out / exchanges.",
                widths=[3.4, 0.8, 0.8, 1.1, 0.9, 0.9, 0.9, 1.2],
                align=aligns("llrrrrrr"),
            )
        )
    if missing:
        blocks.append(Bullets([f"No TCP_INFO from {text}" for text in missing]))
    return blocks

"""What a packet link's path did over one message size: `JobResult.path`.

Per direction (up: sender -> receiver) the IP packets and bytes the emulator read from
the near end and delivered to the far end, and the packets it dropped by cause (a full
queue, loss on the way); the loss it achieved, with a 95 % interval, to set beside the
loss asked for; how late the emulator released packets against the times its model
gave them, and how many packets it read from a device later than the line could have
sent them (its own error, which a job must not hide: `late` marks a size whose release
p99 passed `LATE_LIMIT_S`, or whose reads ran that late for more than one packet in a
hundred); the emulator's CPU time; and the TCP settings of the path's namespaces.
Absent from the JSON of a job that had no packet path.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: The emulator's release lateness (p99) above which a size's figures carry the
#: emulator's error, not the path's, at the least: half a millisecond (its design target,
#: benchmarks/README.md "Packet link fidelity", is a tenth of that). On a slower link the
#: limit is `LATE_SHARE` of its round trip (`LinkPath.late_limit_s`): the fidelity
#: target is 2 % of the model or 1 ms, and 0.5 ms late on a 600 ms satellite hop is noise.
LATE_LIMIT_S = 0.0005
LATE_SHARE = 0.02
#: The share of packets read late (beyond `LATE_LIMIT_S`) above which a size is flagged,
#: as a release p99 beyond the limit is: more than one in a hundred.
READ_LATE_SHARE = 0.01


def wilson_interval(hits: int, trials: int, z: float = 1.96) -> tuple[float, float] | None:
    """The 95 % Wilson score interval of a proportion (None for no trials): it stays inside
    [0, 1] and is honest for few hits, where the normal approximation is not."""
    if trials <= 0:
        return None
    p = hits / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class PathDirection:
    """One direction of the path over a message size."""

    packets_in: int
    bytes_in: int
    packets_out: int
    bytes_out: int
    dropped_queue: int
    dropped_loss: int

    @property
    def loss_trials(self) -> int:
        """Packets that reached the line (a packet the queue refused was never at risk)."""
        return self.packets_in - self.dropped_queue

    @property
    def loss_rate(self) -> float | None:
        return self.dropped_loss / self.loss_trials if self.loss_trials > 0 else None

    def to_dict(self) -> dict[str, Any]:
        interval = wilson_interval(self.dropped_loss, self.loss_trials)
        return {
            "packets_in": self.packets_in,
            "bytes_in": self.bytes_in,
            "packets_out": self.packets_out,
            "bytes_out": self.bytes_out,
            "dropped_queue": self.dropped_queue,
            "dropped_loss": self.dropped_loss,
            "loss_rate": self.loss_rate,
            "loss_ci95": list(interval) if interval is not None else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PathDirection:
        return cls(*(int(data[name]) for name in _COUNTS))


_COUNTS = ("packets_in", "bytes_in", "packets_out", "bytes_out", "dropped_queue", "dropped_loss")


@dataclass(frozen=True)
class LinkPath:
    """The packet path over one message size (see the module's docstring)."""

    up: PathDirection
    down: PathDirection
    #: Release lateness: the median, the 99th percentile (each the upper edge of its
    #: histogram bucket, within 9 %) and the worst; None when nothing was released.
    late_p50_s: float | None
    late_p99_s: float | None
    late_max_s: float | None
    emulator_cpu_s: float
    congestion_control: str | None
    slow_start_after_idle: bool | None
    #: Whether the emulator ran at a real-time priority (app.core.link.packet_link).
    realtime: bool = False
    #: The drop-tail queue each direction held: packets, bytes (None: a file from before).
    queue_packets: int | None = None
    queue_bytes: int | None = None
    #: Packets the emulator read from a device more than `LATE_LIMIT_S` after the line fell
    #: idle with the device's queue holding them (an upper bound per packet: it may have
    #: arrived after the emulator last emptied that queue), and the longest such wait. A
    #: reader that cannot keep up with the rate shows here, not in the release lateness.
    #: None: a file from before.
    read_late_packets: int | None = None
    read_late_max_s: float | None = None
    #: Packets the two ends' devices dropped before the emulator read them (or when it wrote
    #: them): a loss the link never asked for. None: not read (a file from before).
    device_dropped: int | None = None
    #: The release lateness this size was held to: the larger of `LATE_LIMIT_S` and
    #: `LATE_SHARE` of the link's round trip (None: a file from before, held to `LATE_LIMIT_S`).
    late_limit_s: float | None = None
    #: The timed round trips (floor pings and messages) during which the emulator released
    #: a packet later than that limit, or read one later than `LATE_LIMIT_S`: samples whose
    #: figures carry the emulator's delay, however few of the size's packets it touched.
    #: None: not counted (a file from before).
    late_samples: int | None = None

    @property
    def limit_s(self) -> float:
        return self.late_limit_s if self.late_limit_s is not None else LATE_LIMIT_S

    @property
    def reads_late(self) -> bool:
        """More than `READ_LATE_SHARE` of the packets were read later than `LATE_LIMIT_S`."""
        packets = self.up.packets_in + self.down.packets_in
        return bool(self.read_late_packets) and (self.read_late_packets or 0) > READ_LATE_SHARE * packets

    @property
    def late(self) -> bool:
        """The emulator released packets later than its limit at p99, or read them that
        late too often, or did either during a timed round trip: the figures carry its
        delay. The p99 of packets alone missed a stall of 120 ms that touched under 1 % of
        them, and a few samples 13 times the median."""
        return (
            (self.late_p99_s is not None and self.late_p99_s > self.limit_s)
            or self.reads_late
            or bool(self.device_dropped)
            or bool(self.late_samples)
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "up": self.up.to_dict(),
            "down": self.down.to_dict(),
            "late_p50_s": self.late_p50_s,
            "late_p99_s": self.late_p99_s,
            "late_max_s": self.late_max_s,
            "late": self.late,
            "emulator_cpu_s": self.emulator_cpu_s,
            "congestion_control": self.congestion_control,
            "slow_start_after_idle": self.slow_start_after_idle,
            "realtime": self.realtime,
            "queue_packets": self.queue_packets,
            "queue_bytes": self.queue_bytes,
            "read_late_packets": self.read_late_packets,
            "read_late_max_s": self.read_late_max_s,
            "device_dropped": self.device_dropped,
            "late_limit_s": self.late_limit_s,
            "late_samples": self.late_samples,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LinkPath:
        def seconds(name: str) -> float | None:
            value = data.get(name)
            return None if value is None else float(value)

        idle = data.get("slow_start_after_idle")
        control = data.get("congestion_control")
        return cls(
            up=PathDirection.from_dict(data["up"]),
            down=PathDirection.from_dict(data["down"]),
            late_p50_s=seconds("late_p50_s"),
            late_p99_s=seconds("late_p99_s"),
            late_max_s=seconds("late_max_s"),
            emulator_cpu_s=float(data.get("emulator_cpu_s", 0.0)),
            congestion_control=None if control is None else str(control),
            slow_start_after_idle=None if idle is None else bool(idle),
            realtime=bool(data.get("realtime", False)),
            queue_packets=None if data.get("queue_packets") is None else int(data["queue_packets"]),
            queue_bytes=None if data.get("queue_bytes") is None else int(data["queue_bytes"]),
            read_late_packets=None if data.get("read_late_packets") is None else int(data["read_late_packets"]),
            read_late_max_s=seconds("read_late_max_s"),
            device_dropped=None if data.get("device_dropped") is None else int(data["device_dropped"]),
            late_limit_s=seconds("late_limit_s"),
            late_samples=None if data.get("late_samples") is None else int(data["late_samples"]),
        )


def emulator_late_text(path: LinkPath) -> str:
    """Why a size's path is flagged (`LinkPath.late`), in one sentence with its figures."""
    reasons = []
    if path.late_p99_s is not None and path.late_p99_s > path.limit_s:
        reasons.append(
            f"released packets up to {path.late_p99_s * 1e3:.2f} ms late at p99 (limit {path.limit_s * 1e3:.2g} ms)"
        )
    if path.reads_late:
        reasons.append(
            f"read {path.read_late_packets} of {path.up.packets_in + path.down.packets_in} packets later than the "
            f"line could have sent them (up to {(path.read_late_max_s or 0) * 1e3:.2f} ms; limit "
            f"{LATE_LIMIT_S * 1e3:g} ms): it could not keep up with the rate"
        )
    if path.late_samples:
        worst = max(path.late_max_s or 0.0, path.read_late_max_s or 0.0)
        reasons.append(
            f"held packets late (up to {worst * 1e3:.2f} ms; limit {path.limit_s * 1e3:.2g} ms) during "
            f"{path.late_samples} of the size's timed round trips, whose figures carry that delay"
        )
    if path.device_dropped:
        reasons.append(
            f"lost {path.device_dropped} packets in the ends' devices before it read them (it could not keep up "
            "with the rate)"
        )
    return f"the packet link {' and '.join(reasons)}: the path added delay the link did not ask for"

"""How faithful is the packet path? Measured round trips against a model a reader can check.

For a one-way delay d and a rate r (both directions), a loopback AES-256-GCM job over
the packet path (the real runner: link, receiver and sender processes; the kernel's TCP
in the job's namespaces) reports `rtt` per message on its warm connection. The model is
the path's: the request's IP packets serialized at r (every packet carries its 20-byte IP
and 32-byte TCP header with timestamps: 52 bytes per MSS of 1448 payload bytes), the
acknowledgement frame likewise the other way, and the delay each way:

    model = 2 d + 8 * (frame + 52 * ceil(frame / 1448)) / r + 8 * (ack + 52) / r

with `frame` the MESSAGE frame and `ack` the ACK frame the job reports (`wire_bytes`). It
holds on a warm connection whose congestion window covers the path's bandwidth-delay
product (the job's warm-up has grown it).

On a fresh connection (`--connection fresh`: a new connection per message) the model is
slow start from the initial window (IW = 10 segments), simulated segment by segment: the
first IW segments leave at once; the receiver acknowledges every second segment (on a
connection it has not answered on yet, Linux acknowledges the first ones one by one, which
takes up to ~1.5 ms off a size; not modelled), each acknowledgement returning
d + 8 * 52 / r after the second of its pair arrived; each acknowledged segment lets two
more go (the window grows by one per acknowledged segment); the link serializes them in
order at r, and the reply leaves when the last segment arrives. This is cubic's and
reno's behaviour, which send what the window allows at once; BBR paces its sends and
lands between this model and one with an acknowledgement per segment. Within the
initial window the two models agree; beyond it the fresh one is about a round trip more,
less the serialization it overlaps.

Also printed: the stream relay's model for the same message (8 * frame / r: no headers),
the emulator's lateness (p50/p99/max) and the path's packets and drops.

Target: |median rtt - model| <= max(2 % of the model, 1 ms). With `--loss P` the round
trips include retransmissions, which no closed model predicts; the target is then the
loss itself: P inside the 95 % (Wilson) interval of the drops the path counted, both
ways, over all packets of the size.

Needs root (the packet path's namespaces). Run:
    .venv/bin/python benchmarks/bench_packet_link.py [--samples N] [--delay-ms 20] [--rate-kbit 8000]
        [--sizes 1024,4096,16384,65536,262144,1048576] [--loss 0] [--connection warm|fresh|both]
        [--congestion-control cubic|reno|bbr|default]
Exit 0 when every size meets the target, else 1.
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.profile.files import parse_profile
from app.core.records.link_path import wilson_interval
from app.core.run.runner import Runner
from app.core.transport.netns import packet_path_refusal, try_packet_path

HEADERS, MSS = 52, 1448
INITIAL_WINDOW = 10  # segments (RFC 6928; Linux's TCP_INIT_CWND)


def warm_model(frame: int, ack: int, delay: float, rate: float) -> float:
    """Both delays, the request's IP packets and the acknowledgement serialized at the rate."""
    up_bytes = frame + HEADERS * math.ceil(frame / MSS)
    return 2 * delay + 8 * up_bytes / rate + 8 * (ack + HEADERS) / rate


def fresh_model(frame: int, ack: int, delay: float, rate: float) -> float:
    """Slow start from the initial window, segment by segment (the module's docstring)."""
    segments = [MSS] * (frame // MSS) + ([frame % MSS] if frame % MSS else [])
    link_free = 0.0
    arrivals: list[float] = []
    for i, size in enumerate(segments):
        # segment i may leave once acked + window > i, with window = IW + acked: acked >= (i - IW + 1) / 2
        needed = math.ceil((i - INITIAL_WINDOW + 1) / 2)
        ready = 0.0
        if needed > 0:  # the acknowledgement covering segment needed - 1 left with the last of its pair
            pair_end = min(len(segments) - 1, (needed - 1) | 1)
            ready = arrivals[pair_end] + delay + 8 * HEADERS / rate
        departure = max(ready, link_free) + 8 * (size + HEADERS) / rate
        link_free = departure
        arrivals.append(departure + delay)
    return arrivals[-1] + delay + 8 * (ack + HEADERS) / rate


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=15)
    parser.add_argument("--delay-ms", type=float, default=20.0)
    parser.add_argument("--rate-kbit", type=float, default=8000.0)
    parser.add_argument("--loss", type=float, default=0.0)
    parser.add_argument("--sizes", default="1024,4096,16384,65536,262144,1048576")
    parser.add_argument("--connection", choices=["warm", "fresh", "both"], default="both")
    # The models send whole windows at once, as cubic and reno do; BBR paces its sends at its
    # estimate of the bottleneck, which on a connection that has only carried small messages
    # is below the rate (the job's record says which control ran).
    parser.add_argument("--congestion-control", choices=["cubic", "reno", "bbr", "default"], default="cubic")
    args = parser.parse_args()
    refusal = packet_path_refusal() or try_packet_path()
    if refusal is not None:
        print(f"the packet path is not available here: {refusal}")
        return 2
    sizes = [int(s) for s in args.sizes.split(",")]
    link = {"delay_ms": args.delay_ms, "rate_kbit": args.rate_kbit, "loss_percent": args.loss}
    connections = ["warm", "fresh"] if args.connection == "both" else [args.connection]
    jobs = [
        {
            "scheme": "aes-gcm",
            "mode": "loopback",
            "message_sizes": sizes,
            "samples": args.samples,
            "warmup": 3,
            "keygen_samples": 1,
            "tamper": 1,
            "link": link,
            "link_emulation": "packet",
            "tcp_connection": connection,
            **({} if args.congestion_control == "default" else {"tcp_congestion_control": args.congestion_control}),
        }
        for connection in connections
    ]
    started = time.monotonic()
    run = Runner(parse_profile({"name": "packet link fidelity", "jobs": jobs}), cancel=threading.Event()).run()
    print(
        f"packet path fidelity, {time.strftime('%Y-%m-%d')}, {platform.node()} ({platform.machine()}, "
        f"{platform.python_version()}), {args.samples} samples a size, link {link}, "
        f"congestion control {run.jobs[0].path.congestion_control if run.jobs and run.jobs[0].path else '?'}, "
        f"{time.monotonic() - started:.0f} s"
    )
    rate = args.rate_kbit * 1000
    delay = args.delay_ms / 1000
    header = (
        "connection | size | median rtt | model | diff | ratio | relay model | late p50/p99/max | "
        "packets up (lost, queue) | ok"
    )
    print(header)
    failures = 0
    for result in run.jobs:
        connection = result.link.connection if result.link is not None else "?"
        if result.status != "ok" or "rtt" not in result.metrics or result.path is None:
            print(f"{connection} | {result.message_size} | failed: {result.error}")
            failures += 1
            continue
        frame, ack = result.wire_bytes["frame"], result.wire_bytes["ack_frame"]
        model = (fresh_model if connection == "fresh" else warm_model)(frame, ack, delay, rate)
        relay = 2 * delay + 8 * frame / rate + 8 * ack / rate
        median = result.metrics["rtt"].stats.median
        path = result.path
        if args.loss > 0:  # the loss asked for, within the interval of what the path did
            losses = []
            for direction in (path.up, path.down):
                low, high = wilson_interval(direction.dropped_loss, direction.loss_trials) or (0.0, 1.0)
                losses.append(f"{direction.dropped_loss}/{direction.loss_trials} [{low:.2%}, {high:.2%}]")
                within = low <= args.loss / 100 <= high
                failures += not within
                losses[-1] += "" if within else " MISS"
            print(f"{connection} | {result.message_size} | lost up ; down: {' ; '.join(losses)}")
        ok = abs(median - model) <= max(0.02 * model, 0.001) or args.loss > 0
        failures += not ok
        late = "/".join(f"{(v or 0) * 1e6:.0f}" for v in (path.late_p50_s, path.late_p99_s, path.late_max_s))
        print(
            f"{connection} | {result.message_size} | {median * 1e3:.1f} ms | {model * 1e3:.1f} ms | "
            f"{(median - model) * 1e3:+.1f} ms | {median / model:.3f} | {relay * 1e3:.1f} ms | {late} us | "
            f"{path.up.packets_in} ({path.up.dropped_loss}, {path.up.dropped_queue}) | {'ok' if ok else 'MISS'}"
            + (f" | read late {path.read_late_packets} (max {(path.read_late_max_s or 0) * 1e3:.2f} ms)")
            + f", device drops {path.device_dropped}, retransmitted {result.tcp_info['sender'].retransmits_total}"
            + (" (emulator late: flagged)" if path.late else "")
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

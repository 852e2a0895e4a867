"""How faithful is the stream relay? Measured network time against its delay line's model.

For a one-way delay d, a rate r (both directions) and a message size s, a loopback job
over the link (the real runner: receiver, link and sender processes, AES-256-GCM) reports
`network` = rtt - receiver time per message. The model is what an ideal link adds to
what plain loopback already costs:

    model = 2 d + 8 * frame / r + 8 * ack_frame / r + floor(s)

with `frame` the MESSAGE frame (12-byte header + sealed payload) and `ack_frame` the
ACK frame as the job reports them (`wire_bytes`), and floor(s) the median `network` of
the same job over plain loopback (no link), measured first in this run. The grid:
d in {0.5, 5, 50, 300} ms, r in {50 kbit/s, 1 Mbit/s, 100 Mbit/s, 1 Gbit/s},
s in {18 B, 1 KiB, 64 KiB, 1 MiB}; a point whose job would take longer than
--max-point-seconds (a 1 MiB message at 50 kbit/s is 168 s a message, and a size is
2 x (warm-up + samples) + 1 messages and pings) is skipped and listed as such.

Target: |median network - model| <= max(2 % of the model, 0.2 ms). Also printed per
job: the link process's own CPU (mean % of one core while each size ran, from the
supervisor's sampler; and its total CPU seconds), and its own timing error (how late
it released segments against the delay line's times, mean and worst): the part of any
miss that is the link's own wake-up, apart from the ends'.

A control without any link says what a wake-up after idling costs on this machine:
a plain ping-pong of the same frames (58 B up, 21 B down) whose server waits d in
select() (the link's own timer) before it answers, so each round trip has one timer
wake-up and two ends woken after idling d; its excess over d is the machine's, not
the link's. Over the link a round trip has two timer wake-ups (one per direction) and
three processes woken after idling (receiver, link on the ACK, sender).

Then the issue's acceptance case: link {delay_ms: 20, rate_kbit: 8000} with 64 KiB
messages, more samples.

Run: .venv/bin/python benchmarks/bench_link.py [--samples N] [--max-point-seconds S]
     [--delays 0.5,5] [--rates 1000] [--sizes 18,1024]   (a part of the grid)
Exit 0 when every measured point and the acceptance case meet the target, else 1.
"""

from __future__ import annotations

import argparse
import multiprocessing
import platform
import select
import socket
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.contracts.events import LinkDone, LinkMessage
from app.core.profile.files import parse_profile
from app.core.results.model import JobResult
from app.core.run import supervisor
from app.core.run.runner import Runner
from app.core.vocab import JobStatus, LinkEmulation, Role

DELAYS_MS = (0.5, 5.0, 50.0, 300.0)
RATES_KBIT = (50.0, 1_000.0, 100_000.0, 1_000_000.0)
SIZES = (18, 1024, 64 * 1024, 1024 * 1024)
TARGET_RELATIVE = 0.02
TARGET_ABSOLUTE_S = 0.0002
WARMUP = 1
#: The acceptance case of the link emulation: 20 ms one way at 8 Mbit/s (benchmarks/README.md).
ACCEPTANCE = (20.0, 8000.0, 64 * 1024)

#: LinkDone of the last job run, captured on its way through the supervisor.
_link_reports: list[LinkDone] = []
_original_handle_link = supervisor.ChildSupervisor._handle_link


def _capture_link(self: supervisor.ChildSupervisor, message: LinkMessage) -> None:
    if isinstance(message, LinkDone):
        _link_reports.append(message)
    _original_handle_link(self, message)


supervisor.ChildSupervisor._handle_link = _capture_link  # type: ignore[method-assign]


def _link(delay_ms: float, rate_kbit: float) -> dict[str, float]:
    """A profile job's "link", as a user writes it (both directions at `rate_kbit`)."""
    return {"delay_ms": delay_ms, "rate_kbit": rate_kbit}


def run_job(link: dict[str, float] | None, sizes: list[int], samples: int) -> tuple[list[JobResult], LinkDone | None]:
    """One loopback AES-256-GCM job over `link` (None: plain loopback), one result per size."""
    job: dict[str, object] = {
        "scheme": "aes-gcm",
        "backend": "cryptography",
        "mode": "loopback",
        "message_sizes": sizes,
        "samples": samples,
        "warmup": WARMUP,
        "keygen_samples": 1,
        "tamper": 0,
    }
    if link is not None:
        job["link"] = link
        job["link_emulation"] = "stream-relay"  # this benchmark measures the relay's delay line
    run = Runner(parse_profile({"name": "bench-link", "jobs": [job]})).run()
    for result in run.jobs:
        if result.status != JobStatus.OK:
            raise SystemExit(f"job failed at {result.message_size} B over {link}: {result.error}")
        recorded = result.link
        if link is not None and (recorded is None or recorded.emulation != LinkEmulation.DELAY_LINE):
            raise SystemExit(f"the job's results record the link as {recorded}, not the delay line")
    report = _link_reports.pop() if _link_reports else None
    _link_reports.clear()
    return run.jobs, report


def _sleeping_server(listener: socket.socket, delay_s: float, rounds: int) -> None:
    sock, _ = listener.accept()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    with sock:
        for _ in range(rounds):
            got = 0
            while got < 58:
                got += len(sock.recv(58 - got))
            if delay_s:
                select.select([], [], [], delay_s)
            sock.sendall(bytes(21))


def idle_wake_control(delay_ms: float, rounds: int = 100) -> float:
    """Median of (round trip - d) for a ping-pong whose server waits d before answering
    (no link): what waking after idling costs here, in seconds."""
    listener = socket.create_server(("127.0.0.1", 0))
    context = multiprocessing.get_context("fork")
    server = context.Process(target=_sleeping_server, args=(listener, delay_ms / 1000, rounds + 10), daemon=True)
    server.start()
    excess = []
    with socket.create_connection(listener.getsockname()) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for k in range(rounds + 10):
            start = time.perf_counter()
            sock.sendall(bytes(58))
            got = 0
            while got < 21:
                got += len(sock.recv(21 - got))
            if k >= 10:
                excess.append(time.perf_counter() - start - delay_ms / 1000)
    server.join(10)
    listener.close()
    return statistics.median(excess)


def messages_per_size(samples: int) -> int:
    """Round trips carrying the payload per size: floor pings and messages (each with
    warm-up), and the traced message."""
    return 2 * (WARMUP + samples) + 1


def model_seconds(delay_ms: float, rate_kbit: float, frame: int, ack: int, floor: float) -> float:
    return 2 * delay_ms / 1000 + 8 * (frame + ack) / (rate_kbit * 1000) + floor


def target_seconds(model: float) -> float:
    return max(TARGET_RELATIVE * model, TARGET_ABSOLUTE_S)


@dataclass
class Point:
    delay_ms: float
    rate_kbit: float
    size: int
    model: float
    measured: float | None = None
    link_cpu_percent: float | None = None
    skipped: str | None = None

    @property
    def error(self) -> float:
        assert self.measured is not None
        return self.measured - self.model

    @property
    def meets(self) -> bool:
        return self.measured is not None and abs(self.error) <= target_seconds(self.model)


def _rate(rate_kbit: float) -> str:
    return (
        f"{rate_kbit / 1e6:g} Gbit/s"
        if rate_kbit >= 1e6
        else (f"{rate_kbit / 1e3:g} Mbit/s" if rate_kbit >= 1e3 else f"{rate_kbit:g} kbit/s")
    )


def _size(size: int) -> str:
    return (
        f"{size // (1024 * 1024)} MiB"
        if size >= 1024 * 1024
        else (f"{size // 1024} KiB" if size >= 1024 else f"{size} B")
    )


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=5, help="messages per point (after 1 warm-up)")
    parser.add_argument("--floor-samples", type=int, default=50)
    parser.add_argument("--acceptance-samples", type=int, default=30)
    parser.add_argument("--max-point-seconds", type=float, default=30.0)
    parser.add_argument("--delays", default=",".join(f"{d:g}" for d in DELAYS_MS))
    parser.add_argument("--rates", default=",".join(f"{r:g}" for r in RATES_KBIT), help="kbit/s")
    parser.add_argument("--sizes", default=",".join(str(s) for s in SIZES))
    args = parser.parse_args()
    delays = [float(x) for x in args.delays.split(",")]
    rates = [float(x) for x in args.rates.split(",")]
    sizes = [int(x) for x in args.sizes.split(",")]
    started = time.monotonic()
    print(
        f"{time.strftime('%Y-%m-%d')} on {platform.node()} ({platform.machine()}, "
        f"{platform.python_implementation()} {platform.python_version()})"
    )

    floor_jobs, _ = run_job(None, sorted(set(sizes) | {18, ACCEPTANCE[2]}), args.floor_samples)
    floor = {job.message_size: job.metrics["network"].stats.median for job in floor_jobs}
    frames = {job.message_size: (job.wire_bytes["frame"], job.wire_bytes["ack_frame"]) for job in floor_jobs}
    print(
        "plain loopback floor (median network): " + ", ".join(f"{_size(s)} {_ms(floor[s])} ms" for s in sorted(floor))
    )
    print(
        "control, a ping-pong whose server waits d before answering, no link: median round trip - d = "
        + ", ".join(f"{_ms(idle_wake_control(d))} ms at d = {d:g} ms" for d in (0.0, 0.5, 5.0, 50.0))
    )
    hop_jobs, _ = run_job({"delay_ms": 0.0}, [18], args.floor_samples)
    print(
        f"a link with no delay and no rate limit (the relay's own hops), 18 B: median network "
        f"{_ms(hop_jobs[0].metrics['network'].stats.median)} ms against the floor's {_ms(floor[18])} ms"
    )

    points: list[Point] = []
    reports: list[tuple[float, float, LinkDone | None, float]] = []
    for delay_ms in delays:
        for rate_kbit in rates:
            group: list[Point] = []
            for size in sizes:
                frame, ack = frames[size]
                model = model_seconds(delay_ms, rate_kbit, frame, ack, floor[size])
                point = Point(delay_ms, rate_kbit, size, model)
                estimate = messages_per_size(args.samples) * (model - floor[size]) + 2 * 2 * delay_ms / 1000
                if estimate > args.max_point_seconds:
                    point.skipped = f"~{estimate:.0f} s a point (> {args.max_point_seconds:g} s)"
                else:
                    group.append(point)
                points.append(point)
            if not group:
                continue
            job_start = time.monotonic()
            results, report = run_job(_link(delay_ms, rate_kbit), [p.size for p in group], args.samples)
            reports.append((delay_ms, rate_kbit, report, time.monotonic() - job_start))
            for point, result in zip(group, results):
                point.measured = result.metrics["network"].stats.median
                usage = result.cpu.role(Role.LINK)
                point.link_cpu_percent = usage.mean_percent if usage is not None else None
                print(
                    f"  d {point.delay_ms:g} ms, {_rate(point.rate_kbit)}, {_size(point.size)}: model "
                    f"{_ms(point.model)} ms, measured {_ms(point.measured)} ms, error {_ms(point.error)} ms "
                    f"{'ok' if point.meets else 'MISS'}",
                    flush=True,
                )

    print()
    print("| d | rate | size | model | measured | error | error % | target | meets | link CPU |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for p in points:
        head = f"| {p.delay_ms:g} ms | {_rate(p.rate_kbit)} | {_size(p.size)} |"
        if p.measured is None:
            print(f"{head} {_ms(p.model)} ms | skipped: {p.skipped} | | | | | |")
            continue
        cpu = "n/a" if p.link_cpu_percent is None else f"{p.link_cpu_percent:.1f} %"
        print(
            f"{head} {_ms(p.model)} ms | {_ms(p.measured)} ms | {p.error * 1e3:+.3f} ms | "
            f"{100 * p.error / p.model:+.2f} % | {_ms(target_seconds(p.model))} ms | "
            f"{'yes' if p.meets else '**no**'} | {cpu} |"
        )

    print()
    print("| d | rate | link CPU time | job wall time | segments | link late, mean | link late, worst |")
    print("|---|---|---|---|---|---|---|")
    for delay_ms, rate_kbit, report, wall in reports:
        if report is None:
            print(f"| {delay_ms:g} ms | {_rate(rate_kbit)} | no report | {wall:.1f} s | | | |")
            continue
        print(
            f"| {delay_ms:g} ms | {_rate(rate_kbit)} | {report.cpu_s:.2f} s | {wall:.1f} s | {report.segments} | "
            f"{report.late_mean_s * 1e6:.0f} us | {report.late_max_s * 1e3:.2f} ms |"
        )

    measured = [p for p in points if p.measured is not None]
    meeting = [p for p in measured if p.meets]
    print()
    print(f"{len(meeting)} of {len(measured)} measured points meet the target; {len(points) - len(measured)} skipped")

    delay_ms, rate_kbit, size = ACCEPTANCE
    results, report = run_job(_link(delay_ms, rate_kbit), [size], args.acceptance_samples)
    (result,) = results
    frame, ack = result.wire_bytes["frame"], result.wire_bytes["ack_frame"]
    model = model_seconds(delay_ms, rate_kbit, frame, ack, floor[size])
    network = result.metrics["network"]
    error = network.stats.median - model
    accepted = abs(error) <= target_seconds(model)
    samples = list(network.samples)
    print(
        f"acceptance: link delay {delay_ms:g} ms, {_rate(rate_kbit)}, {_size(size)} messages, "
        f"{len(samples)} samples: model {_ms(model)} ms, median {_ms(network.stats.median)} ms "
        f"(min {_ms(min(samples))}, max {_ms(max(samples))}, stdev {_ms(statistics.pstdev(samples))}), "
        f"error {error * 1e3:+.3f} ms ({100 * error / model:+.2f} %), target {_ms(target_seconds(model))} ms: "
        f"{'MEETS' if accepted else 'MISSES'}"
        + (f"; link CPU {report.cpu_s:.2f} s, late mean {report.late_mean_s * 1e6:.0f} us" if report else "")
    )
    sender_tcp = result.tcp_info.get(Role.SENDER)
    print(
        f"  recorded with the result: link {result.link.to_dict() if result.link else None}; sender TCP_INFO "
        + (
            "none"
            if sender_tcp is None
            else f"sRTT {sender_tcp.smoothed_rtt_s and sender_tcp.smoothed_rtt_s * 1e3} ms, "
            f"{sender_tcp.data_segments_out} data segments out over {sender_tcp.exchanges} exchanges, "
            f"{sender_tcp.retransmits_total} retransmitted"
        )
    )
    print(f"total {time.monotonic() - started:.0f} s")
    return 0 if accepted and len(meeting) == len(measured) else 1


if __name__ == "__main__":
    sys.exit(main())

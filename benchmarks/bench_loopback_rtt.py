"""How much does CryptoBench's loopback session add to a round trip?

The app's reported median "rtt" for 64-byte AES-256-GCM messages (through the real
runner: a spawned receiver process and a spawned sender process over TCP 127.0.0.1
with TCP_NODELAY; "rtt" = send of the sealed MESSAGE frame until its ACK is read,
which includes the receiver's open and validation) is divided by the median round
trip of a minimal Python ping-pong between two spawned processes in this same run:
a client sends a frame as long as the app's MESSAGE frame (12-byte header + sealed
payload, taken from the app's `wire_bytes["frame"]`), a server reads it and answers
with as many bytes as the app's ACK frame (`wire_bytes["ack_frame"]`), blocking
sockets, TCP_NODELAY, `perf_counter_ns` around each round trip, the same sample and
warm-up counts. App and baseline alternate for several rounds (the order flips every
round) so that machine drift affects both alike.

If `sockperf` (Debian package "sockperf") is on PATH, its TCP ping-pong of 64-byte
messages on 127.0.0.1 is printed as the floor: what a C client and server pay for a
round trip on this machine. It is run with `--full-rtt`, so its figures are full
round trips (without that flag sockperf reports latency = RTT / 2).

Run: .venv/bin/python benchmarks/bench_loopback_rtt.py [--samples N] [--rounds R]
Target: median over rounds of (app rtt / baseline rtt) <= 1.5. Exit 0 on PASS, 1 on FAIL.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.profile import parse_profile  # noqa: E402
from app.core.runner import Runner  # noqa: E402

MESSAGE_SIZE = 64
TARGET = 1.5
APP_METRICS = ("rtt", "floor_rtt", "network", "receiver", "compute")


# --- the app ----------------------------------------------------------------------------


@dataclass
class AppRound:
    medians: dict[str, float]  # seconds
    frame: int  # bytes of the MESSAGE frame on the wire (header + payload)
    ack_frame: int  # bytes of the ACK frame


def app_round(samples: int, warmup: int) -> AppRound:
    job = {"scheme": "aes-gcm", "backend": "cryptography", "params": {"key_bits": 256}, "mode": "loopback",
           "message_sizes": [MESSAGE_SIZE], "samples": samples, "warmup": warmup, "keygen_samples": 1,
           "tamper": 1}
    run = Runner(parse_profile({"name": "loopback-rtt", "jobs": [job]}), store=None).run()
    bad = [j for j in run.jobs if j.status != "ok"]
    if bad or not run.jobs:
        raise SystemExit(f"app run failed: {[(j.label, j.error) for j in bad] or 'no result'}")
    result = run.jobs[0]
    return AppRound(medians={name: result.metrics[name].stats.median for name in APP_METRICS},
                    frame=int(result.wire_bytes["frame"]), ack_frame=int(result.wire_bytes["ack_frame"]))


# --- the minimal Python ping-pong (both ends are spawned processes) ----------------------


def _tune(sock: socket.socket) -> None:
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _read_exactly(sock: socket.socket, view: memoryview) -> bool:
    got, total = 0, len(view)
    while got < total:
        n = sock.recv_into(view[got:], total - got)
        if n == 0:
            return False
        got += n
    return True


def echo_server(conn: Any, frame: int, reply: int) -> None:
    """Reads `frame` bytes, answers `reply` bytes, until the client closes."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    conn.send(server.getsockname()[1])
    sock, _ = server.accept()
    server.close()
    _tune(sock)
    view = memoryview(bytearray(frame))
    answer = bytes(reply)
    with sock:
        while _read_exactly(sock, view):
            sock.sendall(answer)
    conn.close()


def ping_client(conn: Any, port: int, frame: int, reply: int, samples: int, warmup: int) -> None:
    """Sends `frame` bytes, reads `reply` bytes; sends the round-trip times (ns) back."""
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(None)  # blocking, no poll() before each call
    _tune(sock)
    message = bytes(frame)
    view = memoryview(bytearray(reply))
    clock = time.perf_counter_ns
    times: list[int] = []
    with sock:
        for i in range(warmup + samples):
            start = clock()
            sock.sendall(message)
            if not _read_exactly(sock, view):
                raise SystemExit("baseline server closed the connection")
            elapsed = clock() - start
            if i >= warmup:
                times.append(elapsed)
    conn.send(times)
    conn.close()


def baseline_round(frame: int, reply: int, samples: int, warmup: int) -> float:
    """Median round trip (seconds) of the minimal ping-pong."""
    ctx = multiprocessing.get_context("spawn")
    server_recv, server_send = ctx.Pipe(duplex=False)
    client_recv, client_send = ctx.Pipe(duplex=False)
    server = ctx.Process(target=echo_server, args=(server_send, frame, reply), daemon=True)
    server.start()
    server_send.close()
    client = None
    try:
        if not server_recv.poll(30):
            raise SystemExit("baseline server did not start listening within 30 s")
        port = server_recv.recv()
        client = ctx.Process(target=ping_client, args=(client_send, port, frame, reply, samples, warmup),
                             daemon=True)
        client.start()
        client_send.close()
        if not client_recv.poll(600):
            raise SystemExit("baseline client did not finish within 600 s")
        times = client_recv.recv()
    finally:
        for process in (client, server):
            if process is not None:
                process.join(5)
                if process.is_alive():
                    process.kill()
                    process.join()
    return statistics.median(times) / 1e9


# --- sockperf (the floor, when installed) --------------------------------------------------


@dataclass
class SockperfFigure:
    median_rtt: float  # seconds, full round trip
    avg_rtt: float
    observations: int
    converted: bool  # True if sockperf reported one-way latency and we doubled it


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def parse_sockperf(text: str) -> SockperfFigure:
    """Median and mean round trip from `sockperf ping-pong` output.

    With --full-rtt sockperf prints "avg-rtt=" and percentiles of the round trip; an
    older sockperf without that flag prints "avg-latency=" and percentiles of
    latency = RTT / 2, which are doubled here.
    """
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
    avg = re.search(r"avg-(rtt|latency)=([0-9.]+)", text)
    median = re.search(r"percentile 50\.000 =\s*([0-9.]+)", text)
    total = re.search(r"Total (\d+) observations", text)
    if avg is None or median is None:
        raise ValueError("no latency figures in sockperf's output")
    factor = 1.0 if avg.group(1) == "rtt" else 2.0
    return SockperfFigure(median_rtt=float(median.group(1)) * factor / 1e6, avg_rtt=float(avg.group(2)) * factor / 1e6,
                          observations=int(total.group(1)) if total else 0, converted=factor != 1.0)


def sockperf_round(seconds: int) -> SockperfFigure | str:
    """One sockperf TCP ping-pong of 64-byte messages, or why there is none."""
    binary = shutil.which("sockperf")
    if binary is None:
        return "not installed (Debian package: sockperf; apt-get install sockperf)"
    port = _free_port()
    with tempfile.TemporaryFile() as log:
        server = subprocess.Popen([binary, "server", "-i", "127.0.0.1", "-p", str(port), "--tcp"],
                                  stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and server.poll() is None:
                log.seek(0)
                if b"block on socket" in log.read():  # "using recvfrom() to block on socket(s)"
                    break
                time.sleep(0.05)
            if server.poll() is not None:
                log.seek(0)
                return "server failed: " + log.read().decode(errors="replace").strip()[-200:]
            args = [binary, "ping-pong", "-i", "127.0.0.1", "-p", str(port), "--tcp", "-m", str(MESSAGE_SIZE),
                    "-t", str(seconds), "--full-rtt"]
            client = subprocess.run(args, capture_output=True, text=True, timeout=seconds + 60)
            output = client.stdout + client.stderr
            if client.returncode != 0 and "avg-" not in output:
                return f"ping-pong failed (exit {client.returncode}): {output.strip()[-200:]}"
            try:
                return parse_sockperf(output)
            except ValueError as exc:
                return str(exc)
        finally:
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGTERM)
                try:
                    server.wait(5)
                except subprocess.TimeoutExpired:
                    os.killpg(server.pid, signal.SIGKILL)
                    server.wait()


# --- main -------------------------------------------------------------------------------------


def us(seconds: float) -> str:
    return f"{seconds * 1e6:8.2f}us"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sockperf-seconds", type=int, default=3)
    parser.add_argument("--no-sockperf", action="store_true")
    args = parser.parse_args()

    frame, ack_frame = 0, 0
    rows = []
    for r in range(args.rounds):
        app_first = r % 2 == 0
        app: AppRound | None = None
        base = 0.0
        for step in ("app", "base") if app_first else ("base", "app"):
            if step == "app":
                app = app_round(args.samples, args.warmup)
                frame, ack_frame = app.frame, app.ack_frame
            else:  # round 1 runs the app first, so the frame sizes are known here
                base = baseline_round(frame, ack_frame, args.samples, args.warmup)
        assert app is not None
        rows.append((r + 1, "app, base" if app_first else "base, app", app, base))
        print(f"round {r + 1}: app rtt {us(app.medians['rtt']).strip()}, baseline {us(base).strip()}, "
              f"ratio {app.medians['rtt'] / base:.3f}", flush=True)

    floors: list[SockperfFigure] = []
    sockperf_note = "skipped (--no-sockperf)"
    if not args.no_sockperf:
        for _ in range(args.rounds):
            figure = sockperf_round(args.sockperf_seconds)
            if isinstance(figure, str):
                sockperf_note = figure
                break
            floors.append(figure)

    print()
    print(f"AES-256-GCM, {MESSAGE_SIZE}-byte messages, loopback; MESSAGE frame {frame} B, ACK frame {ack_frame} B; "
          f"{args.samples} samples + {args.warmup} warm-up per side; medians")
    print(f"{'round':>5s}  {'order':9s} {'app rtt':>10s} {'floor_rtt':>10s} {'network':>10s} {'receiver':>10s} "
          f"{'compute':>10s} {'baseline':>10s} {'ratio':>7s}")
    ratios = []
    for index, order, app, base in rows:
        ratio = app.medians["rtt"] / base
        ratios.append(ratio)
        m = app.medians
        print(f"{index:5d}  {order:9s} {us(m['rtt']):>10s} {us(m['floor_rtt']):>10s} {us(m['network']):>10s} "
              f"{us(m['receiver']):>10s} {us(m['compute']):>10s} {us(base):>10s} {ratio:7.3f}")
    median_ratio = statistics.median(ratios)
    floor_ratios = [app.medians["floor_rtt"] / base for _, _, app, base in rows]
    print(f"app floor_rtt / baseline (framing only, no crypto) per round: "
          + ", ".join(f"{x:.3f}" for x in floor_ratios))
    if floors:
        for i, figure in enumerate(floors, 1):
            print(f"sockperf {i}: TCP ping-pong {MESSAGE_SIZE} B, full round trip: median {us(figure.median_rtt).strip()}, "
                  f"mean {us(figure.avg_rtt).strip()} ({figure.observations} observations"
                  f"{'; one-way latency x 2' if figure.converted else '; --full-rtt'})")
        floor = statistics.median(f.median_rtt for f in floors)
        print(f"sockperf floor (median of the runs' medians): {us(floor).strip()}; "
              f"app rtt / sockperf = {statistics.median(app.medians['rtt'] for _, _, app, _ in rows) / floor:.2f}, "
              f"baseline / sockperf = {statistics.median(base for *_, base in rows) / floor:.2f}")
    else:
        print(f"sockperf: {sockperf_note}")
    verdict = "PASS" if median_ratio <= TARGET else "FAIL"
    print(f"median ratio app/baseline {median_ratio:.3f} (target <= {TARGET}): {verdict}")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())

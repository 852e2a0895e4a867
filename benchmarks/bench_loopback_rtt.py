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

Where the two processes run decides the figure more than anything either does: on a
virtual machine a wake-up on the other CPU costs tens of microseconds, on the same
CPU a few. Left alone, the scheduler may put the app's pair on two CPUs and the
baseline's pair on one (it did, every time, on the 2-core development VM: 15x), or the
other way round. Each round is therefore measured per placement, both sides pinned alike:

    same   receiver (server), sender (client) and this supervisor on one CPU
    split  receiver (server) and this supervisor on one CPU, sender (client) on another
    free   nothing pinned: what the scheduler happens to do (noisy; not the default)

The app also places its own processes (the job's placement, default `same`) on CPUs its
supervisor may use; with the supervisor pinned to the receiver's CPU that is the same CPU,
and for `split` the sender is moved after the app placed it, so both agree.
`bench_loopback_steps.py` splits one round trip's CPU time into its steps.

If `sockperf` (Debian package "sockperf") is on PATH, its TCP ping-pong of 64-byte
messages on 127.0.0.1, pinned the same way, is printed as the floor: what a C client
and server pay for a round trip here. It runs with `--full-rtt`, so its figures are
full round trips (without that flag sockperf reports latency = RTT / 2; an older
sockperf without the flag is parsed and doubled).

Run: .venv/bin/python benchmarks/bench_loopback_rtt.py [--samples N] [--rounds R] [--placements same,split]
Target: for every placement, median over rounds of (app rtt / baseline rtt) <= 1.5.
Exit 0 on PASS, 1 on FAIL.
"""

from __future__ import annotations

import argparse
import contextlib
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
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.profile.files import parse_profile
from app.core.run.runner import Runner
from app.core.vocab import JobStatus, Mode, Role

try:  # the runner announces each job's process ids (newer versions)
    from app.core.contracts.events import JobProcesses
except ImportError:  # pragma: no cover - older app: find the sender with psutil
    JobProcesses = None  # type: ignore[assignment,misc]

MESSAGE_SIZE = 64
TARGET = 1.5
APP_METRICS = ("rtt", "floor_rtt", "network", "receiver", "compute")
PLACEMENTS = ("same", "split", "free")


# --- CPU placement ------------------------------------------------------------------------


@dataclass(frozen=True)
class Placement:
    name: str
    receiver_cpu: int | None  # also where this supervisor runs while measuring
    sender_cpu: int | None


def placements(names: list[str]) -> tuple[list[Placement], list[str]]:
    """The requested placements this machine can provide, and notes on the others."""
    if not hasattr(os, "sched_setaffinity"):
        return [Placement("free", None, None)], ["no sched_setaffinity here: only 'free' is measured"]
    cpus = sorted(os.sched_getaffinity(0))
    chosen, notes = [], []
    for name in names:
        if name == "same":
            chosen.append(Placement(name, cpus[0], cpus[0]))
        elif name == "split" and len(cpus) >= 2:
            chosen.append(Placement(name, cpus[0], cpus[1]))
        elif name == "split":
            notes.append("only one CPU available: 'split' skipped")
        else:
            chosen.append(Placement(name, None, None))
    return chosen, notes


@contextlib.contextmanager
def supervisor_on(cpu: int | None) -> Iterator[None]:
    """Pin this process (and so every child it spawns) to `cpu` for the duration."""
    if cpu is None:
        yield
        return
    original = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {cpu})
    try:
        yield
    finally:
        os.sched_setaffinity(0, original)


def _pin(pid: int, cpu: int | None) -> None:
    if cpu is not None:
        os.sched_setaffinity(pid, {cpu})


# --- the app ----------------------------------------------------------------------------


@dataclass
class AppRound:
    medians: dict[str, float]  # seconds
    frame: int  # bytes of the MESSAGE frame on the wire (header + payload)
    ack_frame: int  # bytes of the ACK frame


def app_round(samples: int, warmup: int, placement: Placement) -> AppRound:
    job = {
        "scheme": "aes-gcm",
        "backend": "cryptography",
        "params": {"key_bits": 256},
        "mode": Mode.LOOPBACK,
        "message_sizes": [MESSAGE_SIZE],
        "samples": samples,
        "warmup": warmup,
        "keygen_samples": 1,
        "tamper": 1,
    }
    moved: list[int] = []

    def on_event(event: Any) -> None:
        # The receiver inherits this process's CPU; the sender is moved as soon as it
        # exists, long before its interpreter has even imported the app.
        if placement.sender_cpu == placement.receiver_cpu:
            return
        if JobProcesses is not None and isinstance(event, JobProcesses) and Role.SENDER in event.pids:
            pid = event.pids[Role.SENDER]
        elif JobProcesses is None and type(event).__name__ == "JobStarted":
            import psutil

            spawned = [p for p in psutil.Process().children() if "spawn_main" in " ".join(p.cmdline())]
            pid = max(spawned, key=lambda p: p.create_time()).pid
        else:
            return
        if pid not in moved:
            _pin(pid, placement.sender_cpu)
            moved.append(pid)

    with supervisor_on(placement.receiver_cpu):
        run = Runner(parse_profile({"name": "loopback-rtt", "jobs": [job]}), store=None, on_event=on_event).run()
    bad = [j for j in run.jobs if j.status != JobStatus.OK]
    if bad or not run.jobs:
        raise SystemExit(f"app run failed: {[(j.label, j.error) for j in bad] or 'no result'}")
    if placement.sender_cpu != placement.receiver_cpu and not moved:
        raise SystemExit("could not find the sender process to pin it")
    result = run.jobs[0]
    return AppRound(
        medians={name: result.metrics[name].stats.median for name in APP_METRICS},
        frame=int(result.wire_bytes["frame"]),
        ack_frame=int(result.wire_bytes["ack_frame"]),
    )


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


def baseline_round(frame: int, reply: int, samples: int, warmup: int, placement: Placement) -> float:
    """Median round trip (seconds) of the minimal ping-pong."""
    ctx = multiprocessing.get_context("spawn")
    server_recv, server_send = ctx.Pipe(duplex=False)
    client_recv, client_send = ctx.Pipe(duplex=False)
    server = client = None
    with supervisor_on(placement.receiver_cpu):
        try:
            server = ctx.Process(target=echo_server, args=(server_send, frame, reply), daemon=True)
            server.start()
            server_send.close()
            if not server_recv.poll(30):
                raise SystemExit("baseline server did not start listening within 30 s")
            port = server_recv.recv()
            client = ctx.Process(
                target=ping_client, args=(client_send, port, frame, reply, samples, warmup), daemon=True
            )
            client.start()
            assert client.pid is not None
            if placement.sender_cpu != placement.receiver_cpu:
                _pin(client.pid, placement.sender_cpu)
            client_send.close()
            if not client_recv.poll(600):
                raise SystemExit("baseline client did not finish within 600 s")
            times = client_recv.recv()
        finally:
            for process in (client, server):
                if process is not None and process.pid is not None:
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
    return SockperfFigure(
        median_rtt=float(median.group(1)) * factor / 1e6,
        avg_rtt=float(avg.group(2)) * factor / 1e6,
        observations=int(total.group(1)) if total else 0,
        converted=factor != 1.0,
    )


def _sockperf_supports_full_rtt(binary: str) -> bool:
    help_text = subprocess.run([binary, "ping-pong", "--help"], capture_output=True, text=True, check=False).stdout
    return "--full-rtt" in help_text


def sockperf_round(seconds: int, placement: Placement) -> SockperfFigure | str:
    """One sockperf TCP ping-pong of 64-byte messages, or why there is none."""
    binary = shutil.which("sockperf")
    if binary is None:
        return "not installed (Debian package: sockperf; apt-get install sockperf)"
    port = _free_port()
    with tempfile.TemporaryFile() as log:
        server = subprocess.Popen(
            [binary, "server", "-i", "127.0.0.1", "-p", str(port), "--tcp"],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        _pin(server.pid, placement.receiver_cpu)  # it only listens until the client connects
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
            args = [
                binary,
                "ping-pong",
                "-i",
                "127.0.0.1",
                "-p",
                str(port),
                "--tcp",
                "-m",
                str(MESSAGE_SIZE),
                "-t",
                str(seconds),
            ]
            if _sockperf_supports_full_rtt(binary):
                args.append("--full-rtt")
            client = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            _pin(client.pid, placement.sender_cpu)  # pinned long before its 400 ms warm-up ends
            try:
                output, _ = client.communicate(timeout=seconds + 60)
            except subprocess.TimeoutExpired:
                client.kill()
                client.wait()
                return "ping-pong did not finish"
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
    return f"{seconds * 1e6:.2f}us"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--placements", default="same,split", help=f"comma-separated, of {', '.join(PLACEMENTS)} (default: same,split)"
    )
    parser.add_argument("--sockperf-seconds", type=int, default=3)
    parser.add_argument("--no-sockperf", action="store_true")
    args = parser.parse_args()
    names = [n.strip() for n in args.placements.split(",") if n.strip()]
    unknown = [n for n in names if n not in PLACEMENTS]
    if unknown or not names:
        parser.error(f"unknown placement(s) {unknown}; choose from {', '.join(PLACEMENTS)}")
    chosen, notes = placements(names)
    for note in notes:
        print(f"note: {note}")
    for p in chosen:
        where = (
            "not pinned"
            if p.receiver_cpu is None
            else f"receiver/server + supervisor on CPU {p.receiver_cpu}, sender/client on CPU {p.sender_cpu}"
        )
        print(f"placement {p.name}: {where}")

    frame, ack_frame = 0, 0
    rows: dict[str, list[tuple[int, str, AppRound, float]]] = {p.name: [] for p in chosen}
    floors: dict[str, list[SockperfFigure]] = {p.name: [] for p in chosen}
    sockperf_note = "skipped (--no-sockperf)" if args.no_sockperf else ""
    for r in range(args.rounds):
        app_first = r % 2 == 0
        for placement in chosen:
            app: AppRound | None = None
            base = 0.0
            for step in ("app", "base") if app_first or not frame else ("base", "app"):
                if step == "app":
                    app = app_round(args.samples, args.warmup, placement)
                    frame, ack_frame = app.frame, app.ack_frame
                else:
                    base = baseline_round(frame, ack_frame, args.samples, args.warmup, placement)
            assert app is not None
            order = "app, base" if app_first or r == 0 else "base, app"
            rows[placement.name].append((r + 1, order, app, base))
            line = (
                f"round {r + 1} {placement.name:5s}: app rtt {us(app.medians['rtt'])}, baseline {us(base)}, "
                f"ratio {app.medians['rtt'] / base:.3f}"
            )
            if not sockperf_note:
                figure = sockperf_round(args.sockperf_seconds, placement)
                if isinstance(figure, str):
                    sockperf_note = figure
                else:
                    floors[placement.name].append(figure)
                    line += f"; sockperf {us(figure.median_rtt)}"
            print(line, flush=True)

    print()
    print(
        f"AES-256-GCM, {MESSAGE_SIZE}-byte messages, loopback TCP; MESSAGE frame {frame} B, ACK frame {ack_frame} B; "
        f"{args.samples} samples + {args.warmup} warm-up per side; all figures are medians"
    )
    verdicts = []
    for placement in chosen:
        print()
        print(f"[{placement.name}]")
        print(
            f"{'round':>5s}  {'order':9s} {'app rtt':>10s} {'floor_rtt':>10s} {'network':>10s} {'receiver':>10s} "
            f"{'compute':>10s} {'baseline':>10s} {'ratio':>7s} {'floor/base':>10s}"
        )
        ratios = []
        for index, order, app, base in rows[placement.name]:
            m = app.medians
            ratio = m["rtt"] / base
            ratios.append(ratio)
            print(
                f"{index:5d}  {order:9s} {us(m['rtt']):>10s} {us(m['floor_rtt']):>10s} {us(m['network']):>10s} "
                f"{us(m['receiver']):>10s} {us(m['compute']):>10s} {us(base):>10s} {ratio:7.3f} "
                f"{m['floor_rtt'] / base:10.3f}"
            )
        median_ratio = statistics.median(ratios)
        figures = floors[placement.name]
        if figures:
            runs = ", ".join(f"{us(f.median_rtt)} (mean {us(f.avg_rtt)}, n={f.observations})" for f in figures)
            how = "one-way latency x 2" if any(f.converted for f in figures) else "--full-rtt"
            floor = statistics.median(f.median_rtt for f in figures)
            app_rtt = statistics.median(row[2].medians["rtt"] for row in rows[placement.name])
            base_rtt = statistics.median(row[3] for row in rows[placement.name])
            print(f"sockperf TCP ping-pong {MESSAGE_SIZE} B, full round trip ({how}), median per run: {runs}")
            print(
                f"floor {us(floor)}: app rtt = {app_rtt / floor:.1f}x sockperf, "
                f"baseline = {base_rtt / floor:.1f}x sockperf"
            )
        else:
            print(f"sockperf: {sockperf_note}")
        ok = median_ratio <= TARGET
        verdicts.append(ok)
        print(
            f"median ratio app/baseline [{placement.name}] {median_ratio:.3f} (target <= {TARGET}): "
            f"{'PASS' if ok else 'FAIL'}"
        )
    verdict = "PASS" if all(verdicts) else "FAIL"
    print()
    print(f"verdict: {verdict}")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())

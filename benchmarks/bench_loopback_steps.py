"""Where the CPU time of one loopback round trip goes, step by step, against bare socket calls.

Both ends of a loopback TCP connection live in this one process, so nothing waits and
nothing is scheduled: each step's time is the CPU it costs. Per round trip of a 64-byte
AES-256-GCM message (MESSAGE frame 104 B, ACK frame 21 B), `perf_counter_ns` around:

    send     the sender's `send_frame(MESSAGE)`        | baseline: sendall(104 B)
    read     the receiver's `FrameReader.read()`       | baseline: recv_into(104 B)
    handle   the receiver's dispatch: open, validate,  | baseline: sendall(21 B)
             ACK built and sent
    ack      the sender's `FrameReader.expect(ACK)`    | baseline: recv_into(21 B)

The seal is done before the clock starts (it is the app's "compute", not the round trip's).
Repetitions alternate app and baseline; the figures are medians over repetitions of the
median per step. On one CPU a real round trip is these CPU times of both sides plus two
context switches, which cost the app and the baseline alike (benchmarks/README.md,
"Same-CPU overhead"). Pin it to one CPU: `taskset -c 1 .venv/bin/python benchmarks/bench_loopback_steps.py`.
"""

from __future__ import annotations

import argparse
import gc
import inspect
import os
import socket
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.schemes import registry
from app.core.session.protocol import plaintext_for
from app.core.session.receiver import ReceiverSession
from app.core.transport import wire
from app.core.transport.wire import FrameReader, FrameType, send_frame, tune

STEPS = ("send", "read", "handle", "ack")
WARMUP = 1000


def connected_pair() -> tuple[socket.socket, socket.socket]:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        a = socket.create_connection(listener.getsockname())
        b, _ = listener.accept()
    tune(a)
    tune(b)
    return a, b


def app_steps(rounds: int) -> list[list[int]]:
    scheme = registry.create("aes-gcm", "cryptography", {"key_bits": 256})
    receiver = scheme.new_receiver()
    sender = scheme.new_sender()
    receiver.handshake(sender.handshake(receiver.setup()))
    plaintext = plaintext_for(os.urandom(16), 64)
    a, b = connected_pair()
    # A session's readers read ahead once authenticated (older versions have no such option).
    ahead = {"read_ahead": True} if "read_ahead" in inspect.signature(FrameReader).parameters else {}
    sender_reader = FrameReader(a, wire.MAX_CONTROL_FRAME, idle_timeout=30, **ahead)  # type: ignore[arg-type]
    receiver_reader = FrameReader(b, 1 << 20, idle_timeout=30, **ahead)  # type: ignore[arg-type]
    session = ReceiverSession(b, b"\0" * 32)
    session.receiver, session.handshaken, session.expected = receiver, True, plaintext
    clock = time.perf_counter_ns
    times: list[list[int]] = [[] for _ in STEPS]
    with a, b:
        for i in range(WARMUP + rounds):
            parts = sender.seal(plaintext)
            t0 = clock()
            send_frame(a, FrameType.MESSAGE, parts)
            t1 = clock()
            kind, body = receiver_reader.read()
            t2 = clock()
            session._dispatch(kind, body)
            t3 = clock()
            sender_reader.expect(FrameType.ACK)
            t4 = clock()
            if i >= WARMUP:
                for step, value in zip(times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
                    step.append(value)
    return times


def _read_exactly(sock: socket.socket, view: memoryview) -> None:
    got = 0
    while got < len(view):
        got += sock.recv_into(view[got:] if got else view, len(view) - got)


def baseline_steps(rounds: int) -> list[list[int]]:
    a, b = connected_pair()
    message, ack = bytes(104), bytes(21)
    into_b, into_a = memoryview(bytearray(104)), memoryview(bytearray(21))
    clock = time.perf_counter_ns
    times: list[list[int]] = [[] for _ in STEPS]
    with a, b:
        for i in range(WARMUP + rounds):
            t0 = clock()
            a.sendall(message)
            t1 = clock()
            _read_exactly(b, into_b)
            t2 = clock()
            b.sendall(ack)
            t3 = clock()
            _read_exactly(a, into_a)
            t4 = clock()
            if i >= WARMUP:
                for step, value in zip(times, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)):
                    step.append(value)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20_000, help="round trips per repetition")
    parser.add_argument("--repetitions", type=int, default=5)
    args = parser.parse_args()
    kinds: dict[str, Callable[[int], list[list[int]]]] = {"app": app_steps, "baseline": baseline_steps}
    medians: dict[str, list[list[float]]] = {kind: [[] for _ in STEPS] for kind in kinds}
    gc.disable()  # as in the measuring children
    for repetition in range(args.repetitions):
        order = list(kinds) if repetition % 2 == 0 else list(reversed(kinds))
        for kind in order:
            for per_step, values in zip(medians[kind], kinds[kind](args.rounds)):
                per_step.append(statistics.median(values))
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    print(f"{args.repetitions} repetitions x {args.rounds} round trips, CPUs {cpus}; median ns per step")
    for kind in kinds:
        figures = [statistics.median(values) for values in medians[kind]]
        print(
            f"{kind:9s} "
            + "  ".join(f"{name} {value:6.0f}" for name, value in zip(STEPS, figures))
            + f"  total {sum(figures):6.0f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

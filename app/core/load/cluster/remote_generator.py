"""The generator subprocess a worker's actor starts (`python -m app.core.load.cluster.remote_generator`).

It runs app.core.load.generator's `LoadGenerator` in a process of its own, so that neither the
Dask worker's event loop nor its GIL perturbs the schedule, and answers one command at a
time on its stdin/stdout (app.core.load.cluster.pipe_frames): connect, seal, prepare,
tamper, calibrate, step, tls (a tls13 job's handshakes of the size, its generator being
app.core.load.tls_generator's `TlsLoadGenerator`), close; its first frame is its pid. With `--detach` it first forks
and lets the process the actor started exit, so that it is reparented to init, which reaps
it when it ends (a stopped worker cannot). It exits when its stdin closes, when its lease's
pipe closes (the worker died), and when its lease is not renewed (the coordinator renews it
every second through the actor; `--lease-fd`, `--lease-s`).
"""

from __future__ import annotations

import argparse
import os
import select
import sys
import threading
import time
from dataclasses import fields
from typing import IO, Any

from app.core.contracts.events import MeasuringMessage, SampleBatch, SizeMeasured
from app.core.contracts.plan import JobPlan
from app.core.load.cluster.pipe_frames import PipeClosed, StepReport, read_frame, write_frame
from app.core.load.generator import LoadGenerator
from app.core.load.job import generator_for

#: Live latencies a step sends back for the window's plot (the local generator sends 400 a
#: quarter second; the coordinator passes these on when the step ends).
LIVE_KEPT = 400
#: The exit code of a generator whose lease ran out.
LEASE_EXPIRED_EXIT = 3


class _Session:
    """One job's generator in this process."""

    def __init__(self) -> None:
        self.generator: LoadGenerator | None = None
        self.live: list[float] = []

    def _drop(self, message: MeasuringMessage) -> None:
        """Progress stays here (the coordinator reports its own); a few live latencies are
        kept for the window's live plot, sent back with the step."""
        if isinstance(message, SampleBatch) and len(self.live) < LIVE_KEPT:
            self.live.extend(message.values[: LIVE_KEPT - len(self.live)])

    def handle(self, command: str, args: tuple[Any, ...]) -> Any:
        if command == "connect":
            (plan,) = args
            assert isinstance(plan, JobPlan)
            self.generator = generator_for(plan, self._drop)
            self.generator.connect_all(seal=False)
            return None
        generator = self.generator
        if generator is None:
            raise RuntimeError(f"command {command!r} before connect")
        if command == "seal":
            generator.server_cpu_ns()
            return None
        if command == "prepare":
            (size,) = args
            costs = generator.prepare(size)
            return costs, generator.pool_size()
        if command == "tamper":
            size, result = args
            assert isinstance(result, SizeMeasured)
            generator.check_tampering(size, result)
            return {f.name: getattr(result, f.name) for f in fields(result)}
        if command == "calibrate":
            return generator.calibrate()
        if command == "tls":
            return generator.tls_record()
        if command == "step":
            rate, generators, number, start_wall, samples = args
            now = generator.clock()
            start_ns = now + int((start_wall - time.time()) * 1e9)
            live: list[float] = []
            self.live = live
            step, record = generator.run_step(
                rate, lambda fraction: None, start_ns=start_ns, generators=generators, generator=number
            )
            return StepReport(
                step=step,
                latencies=record.latencies if samples else [],
                server_ns=record.server_ns if samples else [],
                refused=record.refused,
                abandoned=record.abandoned,
                sample_every=record.sample_every,
                started_late_s=record.start_lag_ns / 1e9,
                live=live[:LIVE_KEPT],
                handshakes=record.handshakes,
            )
        raise RuntimeError(f"unknown command {command!r}")

    def close(self) -> None:
        if self.generator is not None:
            self.generator.close()
            self.generator = None


def serve(commands: IO[bytes], replies: IO[bytes]) -> None:
    session = _Session()
    try:
        while True:
            try:
                command, *args = read_frame(commands)
            except PipeClosed:
                return
            if command == "close":
                session.close()
                write_frame(replies, ("ok", None))
                return
            try:
                write_frame(replies, ("ok", session.handle(command, tuple(args))))
            except Exception as exc:  # noqa: BLE001 - every failure goes back, named, to the coordinator
                write_frame(replies, ("error", f"{type(exc).__name__}: {exc}"))
    finally:
        session.close()


def _watch_lease(fd: int, lease_s: float) -> None:
    """Exit when the lease is not renewed within `lease_s`, or its pipe closes (the actor
    is gone): a coordinator that died without stopping us. Wakes once per renewal."""
    while True:
        ready, _, _ = select.select([fd], [], [], lease_s)
        if not ready or not os.read(fd, 64):
            os._exit(LEASE_EXPIRED_EXIT)


def _detach() -> None:
    """Fork and let the parent exit at once: this process, the child, is then an orphan,
    reparented to init (or the nearest subreaper), which reaps it when it exits. Before any
    thread starts, so the fork is safe."""
    if os.fork() > 0:
        os._exit(0)


def main() -> None:
    parser = argparse.ArgumentParser(prog="remote_generator")
    parser.add_argument("--lease-fd", type=int)
    parser.add_argument("--lease-s", type=float, default=10.0)
    parser.add_argument("--detach", action="store_true")
    # Which worker started it: for `ps` and the tests (the worker is no longer its parent).
    parser.add_argument("--worker-pid", type=int)
    args = parser.parse_args()
    # The frames own stdout; anything printed goes to stderr, not into them.
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    if args.detach:
        _detach()
    write_frame(replies, ("pid", os.getpid()))
    if args.lease_fd is not None:
        threading.Thread(target=_watch_lease, args=(args.lease_fd, args.lease_s), daemon=True).start()
    serve(sys.stdin.buffer, replies)


if __name__ == "__main__":
    main()

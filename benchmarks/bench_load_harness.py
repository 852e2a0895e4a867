"""Is load mode's harness honest? Check it against a server of known cost.

The load server is started with `spin_ns` (app.core.load.server.LoadServerPlan): instead
of the scheme's work it spins for exactly that long per request, so one server process
can take at most 1 / cost requests a second, and a lone request should take the cost
plus what any request pays on this loopback (the floor). The real generator
(app.core.load.generator, the code a load job runs) then:

  floor   times zero-cost requests one at a time on a second server (spin 0): the
          round trip of a request that costs the server nothing: the loopback floor,
          with the server's and generator's own bookkeeping in it
  sweep   offers fractions of 1 / cost, open loop, `--clients` connections, `--duration`
          seconds a step after `--warmup`; the knee (highest achieved rate of a step the
          generator did not saturate) must be within 5 % of 1 / cost, and the p50 latency
          of the lowest step within 5 % of cost + floor

Processes are pinned apart (the server on one CPU, this generator on another) where the
machine has two CPUs or more; with one CPU the check is refused (the generator would
take the server's CPU and the knee would measure both).

Run: .venv/bin/python benchmarks/bench_load_harness.py [--cost-ms 1] [--clients 4] [--duration 2] [--warmup 0.3]
Exit 0 on PASS, 1 on FAIL, 2 when this machine cannot run the check.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import secrets
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.events import Listening  # noqa: E402
from app.core.load import sweep  # noqa: E402
from app.core.load.generator import LoadGenerator  # noqa: E402
from app.core.load.server import LoadServerPlan, load_server_main  # noqa: E402
from app.core.plan import JobPlan, SessionPeer  # noqa: E402
from app.core.profile import parse_profile, resolve_jobs  # noqa: E402
from app.core.session.protocol import TOKEN_BYTES  # noqa: E402
from app.core.supervisor import stop_process  # noqa: E402

FRACTIONS = (0.1, 0.5, 0.8, 0.9, 1.0, 1.1, 1.3, 1.6)
TOLERANCE = 0.05


def _server(spin_ns: int, cpu: int | None) -> tuple[multiprocessing.Process, int, bytes]:
    token = secrets.token_bytes(TOKEN_BYTES)
    receive, send = multiprocessing.Pipe(duplex=False)
    plan = LoadServerPlan(token, "x25519", "cryptography", {}, (32,), spin_ns=spin_ns)
    process = multiprocessing.Process(target=load_server_main, args=(send, plan), daemon=True)
    process.start()
    send.close()
    if cpu is not None and process.pid is not None:
        os.sched_setaffinity(process.pid, {cpu})
    message = receive.recv()
    if not isinstance(message, Listening):
        raise SystemExit(f"the load server did not start: {message}")
    return process, message.port, token


def _generator(port: int, token: bytes, args: argparse.Namespace, rates: list[float] | None) -> LoadGenerator:
    job = {"scheme": "x25519", "mode": "load", "clients": args.clients, "duration_s": args.duration,
           "warmup_s": args.warmup, **({"rates": rates} if rates else {})}
    (resolved,) = resolve_jobs(parse_profile({"name": "bench", "jobs": [job]}))
    generator = LoadGenerator(JobPlan(resolved, 0, SessionPeer("127.0.0.1", port, token)), emit=lambda message: None)
    generator.connect_all()
    generator.prepare(32)
    return generator


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cost-ms", type=float, default=1.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--duration", type=float, default=2.0)
    parser.add_argument("--warmup", type=float, default=0.3)
    args = parser.parse_args()
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(cpus) < 2:
        print("refused: the check needs two CPUs to keep the generator off the server's CPU", file=sys.stderr)
        return 2
    server_cpu, generator_cpu = cpus[-1], cpus[0]
    os.sched_setaffinity(0, {generator_cpu})
    cost_s = args.cost_ms / 1e3

    process, port, token = _server(0, server_cpu)
    try:
        generator = _generator(port, token, args, None)
        server_s, floor_s = generator.calibrate()
        generator.close()
    finally:
        stop_process(process)

    process, port, token = _server(round(cost_s * 1e9), server_cpu)
    capacity = 1 / cost_s
    steps = []
    try:
        generator = _generator(port, token, args, None)
        for fraction in FRACTIONS:
            step, _ = generator.run_step(capacity * fraction, lambda done: None)
            steps.append(step)
            mark = f"  generator saturated: {step.saturation_reason}" if step.generator_saturated else ""
            print(f"offered {step.offered_per_s:8.1f}/s  achieved {step.achieved_per_s:8.1f}/s  errors {step.errors:4d}  "
                  f"p50 {step.latency_s.get('p50', 0) * 1e3:8.3f} ms  p99 {step.latency_s.get('p99', 0) * 1e3:9.3f} ms  "
                  f"lag p99 {(step.send_lag_p99_s or 0) * 1e6:7.1f} µs  generator CPU {step.generator_cpu_percent or 0:5.1f} %  "
                  f"server CPU {step.server_cpu_percent or 0:5.1f} %{mark}")
        generator.close()
    finally:
        stop_process(process)

    knee, sustained, _, saturated = sweep.summarise(steps)
    low = steps[0].latency_s.get("p50")
    expected_low = cost_s + floor_s
    print(f"\nserver cost {args.cost_ms:g} ms (1 / cost = {capacity:.1f}/s); floor (zero-cost request, one at a "
          f"time) {floor_s * 1e6:.1f} µs, the server's own time in it {server_s * 1e6:.1f} µs")
    ok = True
    if knee is None or not saturated:
        print("FAIL: no step overloaded the server; no knee to compare")
        return 1
    knee_ratio = knee / capacity
    ok &= abs(knee_ratio - 1) <= TOLERANCE
    print(f"knee {knee:.1f}/s = {knee_ratio:.3f} x 1/cost (target within {TOLERANCE:.0%}); sustained {sustained}")
    if low is None:
        print("FAIL: the lowest step has no latency")
        return 1
    low_ratio = low / expected_low
    ok &= abs(low_ratio - 1) <= TOLERANCE
    print(f"p50 at {FRACTIONS[0]:g} x capacity {low * 1e6:.1f} µs = {low_ratio:.3f} x (cost + floor = "
          f"{expected_low * 1e6:.1f} µs) (target within {TOLERANCE:.0%})")
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

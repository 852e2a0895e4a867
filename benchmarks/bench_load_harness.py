"""Is load mode's harness honest? Check it against a server of known cost.

The load server is started with `spin_ns` (app.core.load.server.LoadServerPlan): instead
of the scheme's work it spins for exactly that long per request, so one server process
can take at most 1 / cost requests a second, and a lone request should take the cost
plus what any request pays on this loopback (the floor). The real generator
(app.core.load.generator, the code a load job runs) then:

  floor   the p50 latency of requests a server does no work for (spin 0), offered
          open loop at the sweep's lowest rate: the loopback, both ends' bookkeeping
          and the server waking from idle, as a request at that rate pays them
  sweep   offers fractions of 1 / cost, open loop, `--clients` connections, `--duration`
          seconds a step after `--warmup`; the knee (highest achieved rate of a step the
          generator did not limit) must be within 5 % of 1 / cost, some step must be
          called the server's (app.core.load.verdict: the verdict names the server as the
          limit, not "at least"), and the p50 latency of the lowest step within 5 % of
          cost + floor

Processes are pinned apart (the server on one CPU, this generator on another) where the
machine has two CPUs or more; with one CPU the check is refused (the generator would
take the server's CPU and the knee would measure both).

Run: .venv/bin/python benchmarks/bench_load_harness.py [--cost-ms 1 [5 ...]] [--clients 4] [--duration 2] [--warmup 0.3]
Exit 0 on PASS, 1 on FAIL, 2 when this machine cannot run the check.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import secrets
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.core.contracts.events import Listening
from app.core.contracts.plan import JobPlan, SessionPeer
from app.core.load import verdict
from app.core.load.generator import LoadGenerator
from app.core.load.server import LoadServerPlan, load_server_main
from app.core.profile.files import parse_profile
from app.core.profile.resolve import resolve_jobs
from app.core.run.supervisor import stop_process
from app.core.transport.auth import TOKEN_BYTES

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
    job = {
        "scheme": "x25519",
        "mode": "load",
        "clients": args.clients,
        "duration_s": args.duration,
        "warmup_s": args.warmup,
        **({"rates": rates} if rates else {}),
    }
    (resolved,) = resolve_jobs(parse_profile({"name": "bench", "jobs": [job]}))
    generator = LoadGenerator(JobPlan(resolved, 0, SessionPeer("127.0.0.1", port, token)), emit=lambda message: None)
    generator.connect_all()
    generator.prepare(32)
    return generator


def _floor(rate: float, args: argparse.Namespace, server_cpu: int) -> float:
    """The p50 latency of requests the server does nothing for, offered open loop at `rate`:
    what any request pays here at that rate (the loopback, both ends' bookkeeping, and
    the server waking from idle between requests)."""
    process, port, token = _server(0, server_cpu)
    try:
        generator = _generator(port, token, args, None)
        step, _ = generator.run_step(rate, lambda done: None)
        generator.close()
    finally:
        stop_process(process)
    return step.latency_s["p50"]


def _check(cost_s: float, args: argparse.Namespace, server_cpu: int) -> bool:
    """One server cost: sweep it, compare the knee and the low-load latency to the targets."""
    capacity = 1 / cost_s
    floor_s = _floor(capacity * FRACTIONS[0], args, server_cpu)
    print(
        f"cost {cost_s * 1e3:g} ms: floor (p50 of requests costing nothing, at {capacity * FRACTIONS[0]:g}/s): "
        f"{floor_s * 1e6:.1f} µs"
    )
    process, port, token = _server(round(cost_s * 1e9), server_cpu)
    steps = []
    try:
        generator = _generator(port, token, args, None)
        for fraction in FRACTIONS:
            step, _ = generator.run_step(capacity * fraction, lambda done: None)
            steps.append(step)
            mark = f"  generator's marks: {step.saturation_reason}" if step.saturation_reason else ""
            print(
                f"offered {step.offered_per_s:8.1f}/s  achieved {step.achieved_per_s:8.1f}/s  errors {step.errors:4d}  "
                f"p50 {step.latency_s.get('p50', 0) * 1e3:8.3f} ms  p99 {step.latency_s.get('p99', 0) * 1e3:9.3f} ms  "
                f"lag p99 {(step.send_lag_p99_s or 0) * 1e6:7.1f} µs  generator CPU {step.generator_cpu_percent or 0:5.1f} %  "
                f"server CPU {step.server_cpu_percent or 0:5.1f} %{mark}"
            )
        generator.close()
    finally:
        stop_process(process)
    knee, sustained, _, saturated = verdict.summarise(steps)
    low = steps[0].latency_s.get("p50")
    if knee is None or not saturated or low is None:
        print(f"cost {cost_s * 1e3:g} ms: FAIL: no step overloaded the server (or none measured latency)\n")
        return False
    knee_ratio = knee / capacity
    overhead_us = (1 / knee - cost_s) * 1e6
    low_ratio = low / (cost_s + floor_s)
    ok = abs(knee_ratio - 1) <= TOLERANCE and abs(low_ratio - 1) <= TOLERANCE
    print(
        f"cost {cost_s * 1e3:g} ms: knee {knee:.1f}/s = {knee_ratio:.3f} x 1/cost (the server's own work per request "
        f"beyond the cost: {overhead_us:.0f} µs); p50 at {FRACTIONS[0]:g} x 1/cost {low * 1e6:.1f} µs = "
        f"{low_ratio:.3f} x (cost + floor); sustained "
        + (f"{sustained:.1f}/s" if sustained is not None else "none (no step kept up with)")
        + f"; {'PASS' if ok else 'FAIL'} "
        f"(targets: both within {TOLERANCE:.0%})\n"
    )
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cost-ms", type=float, nargs="+", default=[1.0])
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

    results = [_check(cost_ms / 1e3, args, server_cpu) for cost_ms in args.cost_ms]
    print("PASS" if all(results) else "FAIL")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Load from many machines: do 1, 2 and 3 generators placed by Dask measure the same server alike?

Against a server of known cost (bench_load_harness's: it spins `--cost-ms` per request, so
one server process takes at most 1 / cost requests a second), generators on the workers of
a Dask LocalCluster on 127.0.0.1 (worker processes, as `dask worker` starts them) drive it
through the coordinator a load job uses (app.core.load.cluster.coordinator.ClusterDriver):

  same rate   1, 2 and 3 generators offer one total rate (`--fraction` of 1 / cost), each
              configuration `--repeats` times, interleaved; the medians of the merged
              p50 and p99 of 2 and 3 generators must be within 5 % of 1 generator's
  beyond one  a server doing no work, offered `--high-rate` requests/s: 1, 2 and 3 generators,
              each reporting whether it kept its schedule (the step's generator marks)

On one machine the generators share CPUs with each other (the server is pinned to a CPU of
its own where there are two): what this shows is that splitting and merging do not change
what is measured, not what N machines give (see benchmarks/README.md for what the design
predicts there).

Run: .venv/bin/python benchmarks/bench_load_cluster.py [--cost-ms 1] [--fraction 0.5] [--repeats 3]
Exit 0 on PASS, 1 on FAIL, 2 when the cluster extra is missing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_load_harness import _server

from app.core.contracts.plan import JobPlan, SessionPeer
from app.core.load.cluster.coordinator import ClusterDriver
from app.core.profile.files import parse_profile
from app.core.profile.resolve import resolve_jobs
from app.core.records.job_conditions import LoadStep
from app.core.run.supervisor import stop_process

TOLERANCE = 0.05


def _step(client: Any, address: str, generators: int, spin_ns: int, rate: float, args: argparse.Namespace) -> LoadStep:
    """One step at `rate` from `generators` generators against a fresh known-cost server."""
    process, port, token = _server(spin_ns, args.server_cpu)
    job = {
        "scheme": "x25519",
        "mode": "load",
        "clients": max(args.clients, generators),
        "duration_s": args.duration,
        "warmup_s": args.warmup,
        "rates": [rate],
        "cluster": address,
        "cluster_plain_tcp": True,  # a LocalCluster on plain TCP: the token needs the leave
        "generators": generators,
    }
    (resolved,) = resolve_jobs(parse_profile({"name": "bench", "jobs": [job]}))
    driver = ClusterDriver(JobPlan(resolved, 0, SessionPeer("127.0.0.1", port, token)), lambda m: None, client)
    try:
        driver.place()
        driver.prepare(32)
        step, _ = driver.run_step(rate, lambda done: None)
        driver.close(False)
    except BaseException:
        driver.close(True)
        raise
    finally:
        stop_process(process)
    return step


def _line(generators: int, step: LoadStep) -> str:
    mark = step.saturation_reason or "kept its schedule"
    return (
        f"  {generators} generator{'s' if generators > 1 else ' '}: offered {step.offered_per_s:8.0f}/s  achieved "
        f"{step.achieved_per_s:8.0f}/s  p50 {step.latency_s.get('p50', 0) * 1e6:8.1f} µs  p99 "
        f"{step.latency_s.get('p99', 0) * 1e6:8.1f} µs  completed {step.completed:7d} = "
        f"{' + '.join(str(p.completed) for p in step.generators)}  [{mark[:110]}]"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cost-ms", type=float, default=1.0)
    parser.add_argument("--fraction", type=float, default=0.5)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--high-rate", type=float, default=40_000)
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--duration", type=float, default=2.0)
    parser.add_argument("--warmup", type=float, default=0.3)
    args = parser.parse_args()
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        print("refused: the cluster extra (Dask distributed) is not installed", file=sys.stderr)
        return 2
    cost_s = args.cost_ms / 1e3
    rate = args.fraction / cost_s
    with (
        LocalCluster(n_workers=3, threads_per_worker=1, host="127.0.0.1", dashboard_address=":0") as cluster,
        Client(cluster) as client,
    ):
        address = cluster.scheduler_address
        cpus = sorted(os.sched_getaffinity(0))
        args.server_cpu = None
        if len(cpus) >= 2:
            # The server alone on one CPU, as on a machine of its own; every generator (the
            # workers' event loops, whose threads start them) and this coordinator on the others.
            args.server_cpu = cpus[-1]
            others = set(cpus[:-1])
            os.sched_setaffinity(0, others)
            client.run(os.sched_setaffinity, 0, others)
            print(f"server on CPU {args.server_cpu}; generators, workers and coordinator on CPUs {sorted(others)}")
        print(f"same rate: {rate:g}/s against a server of {args.cost_ms:g} ms a request ({args.fraction:g} x 1/cost)")
        figures: dict[int, list[LoadStep]] = {1: [], 2: [], 3: []}
        for _ in range(args.repeats):
            for generators in (1, 2, 3):
                step = _step(client, address, generators, round(cost_s * 1e9), rate, args)
                figures[generators].append(step)
                print(_line(generators, step))
        ok = True
        base = {p: statistics.median(s.latency_s[p] for s in figures[1]) for p in ("p50", "p99")}
        for generators in (2, 3):
            for p in ("p50", "p99"):
                median = statistics.median(s.latency_s[p] for s in figures[generators])
                ratio = median / base[p]
                within = abs(ratio - 1) <= TOLERANCE
                ok &= within
                print(
                    f"  {generators} generators: median {p} {median * 1e6:.1f} µs = {ratio:.3f} x one generator's "
                    f"({base[p] * 1e6:.1f} µs): {'within' if within else 'NOT within'} {TOLERANCE:.0%}"
                )
        print(f"beyond one: {args.high_rate:g}/s against a server doing no work")
        for generators in (1, 2, 3):
            print(_line(generators, _step(client, address, generators, 0, args.high_rate, args)))
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

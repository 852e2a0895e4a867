"""Load jobs with hand-made steps for the command line and report tests (no load is run)."""

from __future__ import annotations

from typing import Any

from app.core.load.verdict import summarise
from app.core.results.job_conditions import Load, LoadStep, Placement, ProcessPlacement
from app.core.results.job_records import Security
from app.core.results.model import JobResult, RunResult
from tests.helpers.comparisons import ENVIRONMENT, run, samples
from tests.helpers.records import job

RUN_ID = "20260301-100000-cccccc"
#: The generator's mark on a late step, as the core words it.
LAG_REASON = "the generator handed requests to the kernel up to 2.50 ms late (p99, limit 1 ms)"


def step(
    offered: float,
    achieved: float,
    p50: float,
    p99: float,
    *,
    errors: int = 0,
    saturated: bool = False,
    generator_cpu: float = 20.0,
    server_cpu: float = 50.0,
) -> LoadStep:
    """One step; p90 between p50 and p99, p99.9 and max above p99."""
    return LoadStep(
        offered_per_s=offered,
        achieved_per_s=achieved,
        errors=errors,
        latency_s={"p50": p50, "p90": (p50 + p99) / 2, "p99": p99, "p99.9": 1.5 * p99, "max": 2 * p99},
        generator_saturated=saturated,
        sent=int(offered),
        completed=int(achieved),
        generator_cpu_percent=generator_cpu,
        send_lag_p99_s=0.0025 if saturated else 0.0002,
        server_cpu_percent=server_cpu,
        saturation_reason=LAG_REASON if saturated else None,
    )


def load(steps: list[LoadStep], *, clients: int = 8, server_workers: int = 1, request: str = "handshake") -> Load:
    """A Load whose knee, sustained rate and saturation come from the core's own rule (its
    steps carry no recorded call: the faces call them from their figures, as for results
    written before calls were recorded)."""
    knee, sustained, p99, saturated = summarise(steps, server_workers)
    return Load(
        clients=clients,
        server_workers=server_workers,
        steps=tuple(steps),
        request=request,
        duration_s=2.0,
        warmup_s=0.5,
        pool=64,
        client_prepare_s=40e-6,
        server_request_s=900e-6,
        knee_per_s=knee,
        sustained_per_s=sustained,
        sustained_p99_s=p99,
        saturated=saturated,
    )


def placed(server: tuple[int, ...] = (1,), generator: tuple[int, ...] = (0,), policy: str = "split") -> Placement:
    return Placement(
        policy, {"receiver": ProcessPlacement(server, server), "sender": ProcessPlacement(generator, generator)}
    )


#: A server that keeps up to 900/s and is overloaded from 1,000/s (p50 20× the low-load
#: p99, 93 % achieved), topping out at 960/s; at 1,200/s the generator sent 2.5 ms late
#: (p99) while latency stayed low: the generator's limit, left out of the knee (figures
#: made to show each call, not one physical run).
KNEE_STEPS = [
    step(100, 100, 1.0e-3, 2.0e-3),
    step(500, 499, 1.2e-3, 3.0e-3),
    step(900, 897, 2.0e-3, 8.0e-3),
    step(1000, 930, 40e-3, 90e-3),
    step(1100, 960, 80e-3, 150e-3),
    step(1200, 1150, 5e-3, 15e-3, saturated=True),
]


def load_job(
    index: int,
    label: str,
    the_load: Load,
    *,
    family: str = "hybrid",
    scheme: str = "ml-kem",
    params: dict[str, Any] | None = None,
    placement: Placement | None = None,
    pq: int = 3,
) -> JobResult:
    result = job(
        RUN_ID,
        index,
        32,
        {"latency": samples(1e-3, seed=index), "server": samples(0.9e-3, seed=index + 50)},
        scheme=scheme,
        params=params or {},
        label=label,
        family=family,
        mode="load",
    )
    result.load = the_load
    result.placement = placement if placement is not None else placed()
    result.security = Security(classical_bits=192 if pq else 128, pq_category=pq)
    return result


def load_run(jobs: list[JobResult] | None = None) -> RunResult:
    """ML-KEM-768 with a knee, X25519 never overloaded, Ed25519 limited by the generator."""
    if jobs is None:
        jobs = [
            load_job(0, "ML-KEM-768 + AES-256-GCM [cryptography]", load(KNEE_STEPS)),
            load_job(
                1,
                "X25519 + HKDF-SHA256 + AES-256-GCM [cryptography]",
                load([step(200, 200, 0.3e-3, 0.6e-3), step(1000, 998, 0.4e-3, 1.1e-3)]),
                family="key-agreement",
                scheme="x25519",
                pq=0,
            ),
            load_job(
                2,
                "Ed25519 [cryptography]",
                load([step(3000, 2900, 5e-3, 80e-3, saturated=True)], request="signed message"),
                family="signature",
                scheme="ed25519",
                pq=0,
            ),
        ]
    result = run(RUN_ID, jobs, ENVIRONMENT)
    result.profile = {"name": "handshakes-under-load", "jobs": []}
    return result

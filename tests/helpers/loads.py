"""Load jobs with hand-made steps for the command line and report tests (no load is run)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from hdrh.histogram import HdrHistogram

from app.core.load.merge import merge_steps, with_start
from app.core.load.verdict import summarise
from app.core.records.job_conditions import (
    LOAD_PERCENTILES,
    Load,
    LoadGeneratorPlace,
    LoadStep,
    Placement,
    ProcessPlacement,
)
from app.core.records.job_records import Security
from app.core.records.load_histogram import HISTOGRAM_RANGE
from app.core.records.tls_record import TlsStep
from app.core.results.model import JobResult, RunResult
from app.core.settings.load import split_rate
from tests.helpers.comparisons import ENVIRONMENT, run, samples
from tests.helpers.records import job, tls_record

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


#: The scheduler a cluster job's generators were placed through, in `cluster_load`.
CLUSTER = "tcp://10.0.0.5:8786"
#: When a cluster job's generators began a step against the agreed start: early, as they
#: should (the first generator; each next one 10 ms later), and one begun late, beyond the
#: limit of a 1 s step (20 ms).
STARTED_EARLY_S = -0.25
STARTED_LATE_S = 0.08
#: Why a step of `cluster_load(..., incomplete_at=...)` lacks generator #2, as the coordinator says it.
INCOMPLETE_REASON = (
    "generator #2 (loadgen-b, worker tcp://10.0.0.12:40001) did not answer within 4 s: "
    "their share of the rate is missing"
)


def generator_part(
    number: int, offered: float, duration_s: float, p50: float, *, lag: float = 0.0002, cpu: float = 30.0
) -> LoadStep:
    """One generator's record of a step, as a worker returns it: `offered * duration_s`
    requests sent and completed, their latencies in a real HdrHistogram around `p50` (a
    spread up to 4x it), so a merge reads its percentiles from added histograms."""
    histogram = HdrHistogram(*HISTOGRAM_RANGE)
    count = max(1, int(offered * duration_s))  # never more than the window holds at its rate
    for k in range(count):
        histogram.record_value(int(p50 * 1e9 * (0.5 + 3.5 * (k / count) ** 4)))
    latency = {name: histogram.get_value_at_percentile(p) / 1e9 for name, p in LOAD_PERCENTILES}
    latency["max"] = histogram.get_max_value() / 1e9
    late = lag > 0.001
    return LoadStep(
        offered_per_s=offered,
        achieved_per_s=count / duration_s,
        errors=0,
        latency_s=latency,
        generator_saturated=late,
        sent=count,
        completed=count,
        histogram=histogram.encode().decode("ascii"),
        generator_cpu_percent=cpu,
        send_lag_p99_s=lag,
        server_cpu_percent=40.0,
        saturation_reason=(
            f"the generator handed requests to the kernel up to {lag * 1e3:.2f} ms late (p99, limit 1 ms)"
            if late
            else None
        ),
        generator=number,
    )


def cluster_load(
    rates: Sequence[float] = (400, 800),
    *,
    generators: int = 2,
    clients: int = 4,
    duration_s: float = 1.0,
    late: tuple[int, float] | None = None,
    incomplete_at: float | None = None,
    late_start: tuple[int, float] | None = None,
) -> Load:
    """A load job whose `generators` generators (at most 3) ran on Dask workers: each step
    split over them (`split_rate`), each generator's record a real histogram, the step
    their merge (`merge_steps`), as app.core.load.cluster's coordinator writes it.
    `late`: (generator, rate) that generator sent 2.5 ms late at; `incomplete_at`: the rate
    whose step lacks generator #2's share (it did not answer), named in `incomplete`. Each
    generator began its share early (`STARTED_EARLY_S`, less 10 ms a generator), except
    `late_start`: (generator, rate) that generator began `STARTED_LATE_S` after the agreed
    start, beyond the limit (`with_start` marks it, as the coordinator does)."""
    hosts = ("loadgen-a", "loadgen-b", "loadgen-c")[:generators]
    places = tuple(
        LoadGeneratorPlace(
            worker=f"tcp://10.0.0.{11 + k}:40001",
            host=host,
            clients=clients // generators + (1 if k < clients % generators else 0),
            clock_offset_s=(-1) ** k * 0.0012 * (k + 1),
            clock_uncertainty_s=0.0004,
        )
        for k, host in enumerate(hosts)
    )
    steps = []
    for rate in rates:
        parts = [
            with_start(
                generator_part(
                    k + 1,
                    share,
                    duration_s,
                    (0.2e-3 + rate * 1e-7) * (1 + 0.2 * k),
                    lag=0.0025 if late == (k + 1, rate) else 0.0002 + 0.0001 * k,
                    cpu=rate / generators / 20 + 5 * k,
                ),
                STARTED_LATE_S if late_start == (k + 1, rate) else STARTED_EARLY_S + 0.01 * k,
                duration_s,
            )
            for k, share in enumerate(split_rate(rate, generators))
        ]
        missing = None
        if rate == incomplete_at:
            parts = [part for part in parts if part.generator != 2]
            missing = INCOMPLETE_REASON
        steps.append(replace(merge_steps(parts), generators=tuple(parts), incomplete=missing))
    knee, sustained, p99, saturated = summarise(steps)
    return Load(
        clients=clients,
        server_workers=1,
        steps=tuple(steps),
        duration_s=duration_s,
        warmup_s=0.3,
        pool=64,
        client_prepare_s=65e-6,
        server_request_s=60e-6,
        knee_per_s=knee,
        sustained_per_s=sustained,
        sustained_p99_s=p99,
        saturated=saturated,
        cluster=CLUSTER,
        generators=places,
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
    step(1000, 930, 40e-3, 90e-3, server_cpu=98.0),
    step(1100, 960, 80e-3, 150e-3, server_cpu=99.0),
    step(1200, 1150, 5e-3, 15e-3, saturated=True),
]


def _x25519_step(
    offered: float, achieved: float, p50: float, p99: float, server_cpu: float, lag: float = 0.0004
) -> LoadStep:
    """One step of the sweep in OVERLOADED_SWEEP, as the generator wrote it then (its mark on a
    step sent more than 1 ms late, no call recorded: results from before calls were)."""
    late = lag > 0.001
    return LoadStep(
        offered_per_s=offered,
        achieved_per_s=achieved,
        errors=0,
        latency_s={"p50": p50, "p90": (p50 + p99) / 2, "p99": p99, "p99.9": 1.2 * p99, "max": 1.5 * p99},
        generator_saturated=late,
        sent=round(offered * 2),
        completed=round(achieved * 2),
        generator_cpu_percent=100.0,
        send_lag_p99_s=lag,
        server_cpu_percent=server_cpu,
        saturation_reason=(
            f"the generator handed requests to the kernel up to {lag * 1e3:.2f} ms late (p99, limit 1 ms)"
            if late
            else None
        ),
    )


#: An X25519 sweep past its knee (8 clients, the server on one core, 2 s steps), as a user ran it
#: and it was recorded: up to 21,624/s offered, achieved = offered, p99 at most 3 ms; at 24,868/s
#: 24,252 achieved (97.5 %), p50 61 ms, p99 134 ms; at 28,112 and 34,599/s 24,396 and
#: 24,649 achieved, p99 435 ms and 1.06 s, server CPU 99-100 %, sent 1.17 and 1.25 ms late
#: (p99), which marked them generator-saturated. The figures that report did not give (the
#: lower steps' latency, the last two p50s) are what such a sweep shows.
OVERLOADED_SWEEP = [
    _x25519_step(2_162, 2_162, 0.25e-3, 0.6e-3, 10),
    _x25519_step(5_406, 5_406, 0.26e-3, 0.7e-3, 24),
    _x25519_step(10_812, 10_810, 0.28e-3, 0.9e-3, 47),
    _x25519_step(15_137, 15_135, 0.32e-3, 1.2e-3, 66),
    _x25519_step(17_299, 17_297, 0.36e-3, 1.5e-3, 75),
    _x25519_step(19_462, 19_460, 0.45e-3, 2.1e-3, 85),
    _x25519_step(21_624, 21_624, 0.6e-3, 3.0e-3, 93),
    _x25519_step(24_868, 24_252, 61e-3, 134e-3, 98),
    _x25519_step(28_112, 24_396, 220e-3, 435e-3, 99, lag=1.17e-3),
    _x25519_step(34_599, 24_649, 540e-3, 1.06, 100, lag=1.25e-3),
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


#: A tls13 load sweep (X25519MLKEM768 with ML-DSA-65), as this VM measured one: kept up
#: with to 26/s, overloaded from 60/s at 32/s achieved (figures rounded).
TLS_STEPS = [
    step(13, 13, 6e-3, 20e-3),
    step(26, 26, 7e-3, 40e-3),
    step(40, 36, 90e-3, 400e-3, server_cpu=97.0),
    step(60, 32, 1.2, 1.6, server_cpu=99.0),
]


def tls_load_job(index: int = 3, resumed: bool = False) -> JobResult:
    """A tls13 load job over TLS_STEPS with its `tls` record counting each step's
    handshakes (a resumed one's as they came past the knee: tickets still in flight, so
    half made first visits)."""
    steps = tuple(
        TlsStep(
            handshakes=int(s.offered_per_s * 2),
            resumed=(int(s.offered_per_s * 2) // (2 if (s.server_cpu_percent or 0) > 90 else 1)) if resumed else 0,
        )
        for s in TLS_STEPS
    )
    params = {"group": "X25519MLKEM768", "certificate": "ml-dsa-65", "resumption": "ticket" if resumed else "none"}
    result = load_job(
        index,
        "TLS 1.3 X25519MLKEM768 + ML-DSA-65 (chain 2, resumed) [pyopenssl]",
        load(TLS_STEPS),
        family="tls",
        scheme="tls13",
        params=params,
        pq=0,
    )
    result.backend = "pyopenssl"
    result.tls = tls_record(handshakes=sum(s.handshakes for s in steps), resumed=resumed, steps=steps)
    return result

"""A load job in words and cells, the same in the terminal and in the reports.

A load result (`JobResult.load`, docs/ARCHITECTURE.md "Links, placement and load") is a
list of steps (an offered rate each: what was achieved, errors, latency percentiles
from the merged HdrHistogram, the generator's and the server's CPU) and what they add up
to (knee, sustained rate and its p99). This module says what they mean: the step cells,
the mark on a step the server did not keep up with (what limited it, and the evidence:
app.core.load.verdict makes the call), the job's verdict (the core's one sentence:
"server overloaded at N handshakes/s ...", "at least N ...", "generator limited: ...")
and the conditions behind it (clients, server processes, step length, which CPUs server
and generator ran on, the pool of requests prepared ahead).

Qt-free: the CLI (app/cli/terminal/load_printing.py) and the report section (app/report/load.py) use it.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.load.verdict import (
    SERVER_ROLE,
    StepCall,
    clock_fault_text,
    generators_text,
    load_verdict,
    rate_text,
    requests_word,
    step_calls,
    verdict_text,
    where_text,
)
from app.core.records.job_conditions import LOAD_PERCENTILES, Load, LoadStep, StepLimit
from app.core.records.placement_words import cpus_text
from app.core.results.model import JobResult
from app.core.vocab import Role
from app.report.network_links import link_text
from app.report.units import MISSING, format_seconds, format_seconds_in

__all__ = ["load_verdict", "rate_text", "requests_word", "step_calls", "verdict_text", "where_text"]

#: The latency columns of a step, in order: the recorded percentiles, then the largest.
LATENCY_COLUMNS: tuple[str, ...] = (*(name for name, _ in LOAD_PERCENTILES), "max")
#: A step's cells: offered, achieved, errors, missed (requests never sent: the generator's
#: backlog was full), its latencies, then the generator's and the server's CPU.
STEP_COLUMNS: tuple[str, ...] = (
    "offered/s",
    "achieved/s",
    "errors",
    "missed",
    *LATENCY_COLUMNS,
    "generator CPU",
    "server CPU",
)
#: How many of STEP_COLUMNS come before the latencies.
STEP_HEAD = STEP_COLUMNS.index(LATENCY_COLUMNS[0])
#: In a load job the sender is the load generator (the server's role is the core's).
GENERATOR_ROLE = Role.SENDER


def cpu_text(percent: float | None) -> str:
    return MISSING if percent is None else f"{percent:.0f} %"


def step_cells(step: LoadStep) -> list[str]:
    """The STEP_COLUMNS of one step, formatted."""
    latency = [format_seconds(step.latency_s.get(name)) for name in LATENCY_COLUMNS]
    return [
        rate_text(step.offered_per_s),
        rate_text(step.achieved_per_s),
        f"{step.errors:,}",
        f"{step.missed:,}",
        *latency,
        cpu_text(step.generator_cpu_percent),
        cpu_text(step.server_cpu_percent),
    ]


def latency_unit(steps: Sequence[LoadStep]) -> tuple[str, float]:
    """One unit for every latency of a job's steps: ms from 1 ms up (µs otherwise), so a
    table's columns read alike and a 100 ms tail does not become 100,000 µs."""
    largest = max((v for step in steps for v in step.latency_s.values()), default=0.0)
    return ("ms", 1e-3) if largest >= 1e-3 else ("µs", 1e-6)


def latency_cells(step: LoadStep, unit: str) -> list[str]:
    """The LATENCY_COLUMNS of one step as numbers in `unit` (the header names it)."""
    return [format_seconds_in(step.latency_s.get(name), unit) for name in LATENCY_COLUMNS]


def step_mark(step: LoadStep, call: StepCall) -> str:
    """Why a step does not count as the server keeping up (its call, `step_calls`): the
    server fell behind, or the generator was the limit, with the evidence; empty for a
    step the server kept up with."""
    mark = ""
    if call.limit == StepLimit.GENERATOR:
        mark = f"generator limited ({call.reason or 'no reason recorded'})"
    elif call.limit == StepLimit.SERVER:
        mark = f"server overloaded ({call.reason or 'no reason recorded'})"
    fault = clock_fault_text(step)  # flagged whatever limited the step
    return "; ".join(part for part in (mark, fault) if part)


def step_marks(load: Load) -> list[str]:
    """Every step's mark, in order."""
    return [step_mark(step, call) for step, call in zip(load.steps, step_calls(load), strict=True)]


def _cpus(job: JobResult, role: Role) -> tuple[int, ...]:
    if job.placement is None or role not in job.placement.processes:
        return ()
    return tuple(job.placement.processes[role].allowed_cpus)


def verdict(job: JobResult, load: Load) -> str:
    """The job's verdict, as every face says it (app.core.load.verdict.verdict_text)."""
    return verdict_text(job, load)


def placement_text(job: JobResult) -> str:
    """ "server on CPU 1, generator on CPU 0 (split)", or why it is not known; a cluster
    job: "server on CPU 1 (split), 2 generators on Dask workers (loadgen-a, loadgen-b)"."""
    # A cluster job's local "generator" process is the coordinator: its CPUs say nothing of
    # where the load came from, which `generators_text` says after the policy.
    remote = generators_text(job.load) if job.load is not None else None
    if job.placement is None:
        return "CPUs not recorded" + (f", {remote}" if remote else "")
    parts = []
    roles = ((SERVER_ROLE, "server"), *(() if remote else ((GENERATOR_ROLE, "generator"),)), (Role.LINK, "link"))
    for role, name in roles:
        cpus = _cpus(job, role)
        if cpus:
            parts.append(f"{name} on {cpus_text(cpus)}")
    policy = job.placement.policy
    if job.placement.unavailable:
        policy = f"{policy} not applied, ran as free: {job.placement.unavailable}"
    text = (", ".join(parts) + f" ({policy})") if parts else f"{policy}; no process recorded"
    return text + (f", {remote}" if remote else "")


#: The clauses of a load job's conditions, by what they say (`condition_parts`).
SETUP, POOL, CLIENT_CRYPTO, SERVER_CRYPTO = "setup", "pool", "client crypto", "server crypto"


def condition_parts(job: JobResult, load: Load) -> dict[str, str]:
    """The conditions behind a load job's figures, clause by clause (a report says the
    clauses every job shares once, and each job's own beside its figures)."""
    workers = f"{load.server_workers} server process{'es' if load.server_workers != 1 else ''}"
    over = f" over {link_text(job.link)}" if job.link is not None else ""
    parts = {
        SETUP: f"{load.clients} client{'s' if load.clients != 1 else ''}{over}, {workers}, "
        f"{load.duration_s:g} s per step after {load.warmup_s:g} s warm-up, {placement_text(job)}"
    }
    if load.pool:
        parts[POOL] = f"requests prepared ahead, a pool of {load.pool} per client"
        if load.client_prepare_s is not None:
            parts[CLIENT_CRYPTO] = f"{format_seconds(load.client_prepare_s)} of client crypto each, outside the latency"
    if load.server_request_s is not None:
        parts[SERVER_CRYPTO] = f"the server's crypto {format_seconds(load.server_request_s)} a request (median)"
    return parts


def conditions(job: JobResult, load: Load) -> str:
    """The conditions behind a load job's figures, in one line."""
    return join_conditions(condition_parts(job, load))


def join_conditions(parts: dict[str, str]) -> str:
    """Clauses of `condition_parts` as one line ("...; a pool of 64 per client (40 µs of client crypto ...)")."""
    text = ""
    for key, part in parts.items():
        if key == CLIENT_CRYPTO and POOL in parts:
            text += f" ({part})"
        else:
            text += f"{'; ' if text else ''}{part}"
    return text

"""A load job in words and cells, the same in the terminal and in the reports.

A load result (`JobResult.load`, docs/ARCHITECTURE.md "Links, placement and load") is a
list of steps (an offered rate each: what was achieved, errors, latency percentiles
from the merged HdrHistogram, the generator's and the server's CPU) and what they add up
to (knee, sustained rate and its p99). This module says what they mean: the step cells,
the mark on a step that did not measure the server, the one sentence per job ("sustains
N handshakes/s on one core at p99 under X") and the conditions behind it (clients,
server processes, step length, which CPUs server and generator ran on, the pool of
requests prepared ahead).

Qt-free: the CLI (app/cli/terminal/load_printing.py) and the report section (app/report/load.py) use it.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.core.load.sweep import kept_up
from app.core.machine.placement import cpus_text
from app.core.results.job_conditions import LOAD_PERCENTILES, Load, LoadStep
from app.core.results.model import JobResult
from app.core.vocab import Role
from app.report.network_links import link_text
from app.report.units import MISSING, format_seconds, format_seconds_in

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
#: In a load job the sender is the load generator and the receiver the server.
GENERATOR_ROLE, SERVER_ROLE = Role.SENDER, Role.RECEIVER


def rate_text(rate: float | None) -> str:
    """Requests per second without the unit: 1,941 or 20 or 0.5."""
    if rate is None:
        return MISSING
    return f"{rate:,.0f}" if rate >= 10 else f"{rate:.2g}"


def requests_word(load: Load) -> str:
    """ "handshakes" or "signed messages": what one request of this job is, plural."""
    return f"{load.request}s" if not load.request.endswith("s") else load.request


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


def step_mark(step: LoadStep) -> str:
    """Why a step does not count as the server keeping up: the generator saturated (its
    reason), or the server fell behind; empty for a step the server kept up with."""
    if step.generator_saturated:
        return f"generator saturated: {step.saturation_reason or 'no reason recorded'}"
    if not kept_up(step):
        errors = f", {step.errors:,} errors" if step.errors else ""
        return (
            f"server overloaded (achieved {100 * step.achieved_per_s / step.offered_per_s:.0f} % of offered{errors})"
            if step.offered_per_s > 0
            else "server overloaded"
        )
    return ""


def _cpus(job: JobResult, role: Role) -> tuple[int, ...]:
    if job.placement is None or role not in job.placement.processes:
        return ()
    return tuple(job.placement.processes[role].allowed_cpus)


def where_text(job: JobResult, load: Load) -> str:
    """Where the server ran, as the knee sentence says it: "on one core (CPU 1)", "on 2
    server processes (CPUs 0-1)", "in one server process" (not pinned to one CPU)."""
    cpus = _cpus(job, SERVER_ROLE)
    pinned = job.placement is not None and job.placement.unavailable is None and bool(cpus)
    if load.server_workers > 1:
        return f"on {load.server_workers} server processes" + (f" ({cpus_text(cpus)})" if pinned else "")
    if pinned and len(cpus) == 1:
        return f"on one core ({cpus_text(cpus)})"
    return "in one server process" + (f" ({cpus_text(cpus)})" if pinned else "")


def verdict(job: JobResult, load: Load) -> str:
    """What the steps add up to, to follow the job's name: "sustains 1,200 handshakes/s
    on one core (CPU 1) at p99 under 8.4 ms; ..."; a step the generator saturated never
    counts (the knee and the sustained rate leave them out)."""
    what = requests_word(load)
    where = where_text(job, load)
    left_out = sum(1 for step in load.steps if step.generator_saturated)
    tail = f" ({left_out} step{'s' if left_out != 1 else ''} the generator saturated left out)" if left_out else ""
    if load.knee_per_s is None:
        if not load.steps:
            return "has no load step"
        steps = "every step" if len(load.steps) > 1 else "its one step"
        return (
            f"has no measured knee: the load generator, not the server, was the limit at {steps}, so no "
            "rate here is the server's"
        )
    p99 = format_seconds(load.sustained_p99_s) if load.sustained_p99_s is not None else None
    if not load.saturated:
        sustained = load.sustained_per_s if load.sustained_per_s is not None else load.knee_per_s
        return (
            f"sustains at least {rate_text(sustained)} {what}/s {where}"
            + (f" at p99 under {p99}" if p99 else "")
            + f": no step overloaded the server, so its limit lies higher{tail}"
        )
    if load.sustained_per_s is None:
        return f"kept up with no step: at most {rate_text(load.knee_per_s)} {what}/s {where} when overloaded{tail}"
    text = f"sustains {rate_text(load.sustained_per_s)} {what}/s {where}" + (f" at p99 under {p99}" if p99 else "")
    if load.knee_per_s > load.sustained_per_s * 1.005:
        text += f"; overloaded, it achieved at most {rate_text(load.knee_per_s)}/s"
    return text + tail


def placement_text(job: JobResult) -> str:
    """ "server on CPU 1, generator on CPU 0 (split)", or why it is not known."""
    if job.placement is None:
        return "CPUs not recorded"
    parts = []
    for role, name in ((SERVER_ROLE, "server"), (GENERATOR_ROLE, "generator"), (Role.LINK, "link")):
        cpus = _cpus(job, role)
        if cpus:
            parts.append(f"{name} on {cpus_text(cpus)}")
    policy = job.placement.policy
    if job.placement.unavailable:
        policy = f"{policy} not applied, ran as free: {job.placement.unavailable}"
    return (", ".join(parts) + f" ({policy})") if parts else f"{policy}; no process recorded"


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

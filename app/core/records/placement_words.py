"""A recorded placement in words: the CPUs a job's processes were allowed and seen on, for
the results table, the CSV, the report and a load step's evidence."""

from __future__ import annotations

from collections.abc import Iterable

from app.core.records.job_conditions import Placement
from app.core.vocab import PlacementPolicy


def cpu_ranges(cpus: Iterable[int]) -> list[str]:
    """(0, 1, 2, 5) -> ["0-2", "5"]: consecutive CPUs as one range, in order."""
    ordered = sorted(set(cpus))
    runs: list[str] = []
    if not ordered:
        return runs
    start = prev = ordered[0]
    for cpu in [*ordered[1:], None]:
        if cpu is not None and cpu == prev + 1:
            prev = cpu
            continue
        runs.append(str(start) if start == prev else f"{start}-{prev}")
        if cpu is not None:
            start = prev = cpu
    return runs


def cpus_text(cpus: Iterable[int]) -> str:
    """(1,) -> "CPU 1", (0, 1, 2, 5) -> "CPUs 0-2, 5", () -> "no CPU recorded"."""
    ordered = set(cpus)
    if not ordered:
        return "no CPU recorded"
    return ("CPU " if len(ordered) == 1 else "CPUs ") + ", ".join(cpu_ranges(ordered))


def measured_under(placement: Placement) -> str:
    """The policy a job's figures were measured under: the one asked for, or `free` where it
    could not be applied (the CSV's `placement` column, the results table's Mode cell)."""
    return PlacementPolicy.FREE if placement.unavailable else placement.policy


def describe(placement: Placement) -> str:
    """One line: "sender on CPU 1, receiver on CPU 1 (same)"; what a process was seen on
    is added where it differs from what it was allowed."""
    parts = []
    for role, process in placement.processes.items():
        text = f"{role} on {cpus_text(process.allowed_cpus)}"
        if process.observed_cpus and set(process.observed_cpus) != set(process.allowed_cpus):
            text += f" (seen on {cpus_text(process.observed_cpus)})"
        parts.append(text)
    policy = placement.policy
    if placement.unavailable:
        policy = f"{policy} not applied, ran as free: {placement.unavailable}"
    return (", ".join(parts) + f" ({policy})") if parts else f"{policy}; no process recorded"


def anomalies(placement: Placement) -> list[str]:
    """What is worth a sentence: a process seen outside the CPUs it was allowed (which
    the kernel does not allow: a wrong record), or a job left to the scheduler whose
    processes were seen on more than one CPU (its round trips may mix both costs)."""
    found = []
    for role, process in placement.processes.items():
        outside = set(process.observed_cpus) - set(process.allowed_cpus)
        if process.allowed_cpus and outside:
            found.append(
                f"the {role} was seen on {cpus_text(outside)}, outside the "
                f"{cpus_text(process.allowed_cpus)} it was allowed: the placement record is not right"
            )
    ran_free = placement.policy == PlacementPolicy.FREE or placement.unavailable is not None
    seen = {cpu for process in placement.processes.values() for cpu in process.observed_cpus}
    if ran_free and len(seen) > 1:
        found.append(
            f"left to the scheduler, its processes were seen on {cpus_text(seen)}: the figures may mix "
            "runs on one CPU with runs across CPUs"
        )
    return found

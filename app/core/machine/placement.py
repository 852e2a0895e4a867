"""CPU placement of a job's processes: which CPUs each may run on.

The supervisor asks a `Placer` for each process right after it starts; the placer pins
it with `os.sched_setaffinity` to CPUs chosen from those this process may use
(`os.sched_getaffinity(0)`: a container may allow fewer than the machine has). Where
that cannot be done (no sched_setaffinity on macOS and Windows, EPERM in a restricted
container, `split` with one allowed CPU) the job runs as `free` and the record says why
(`Placement.unavailable`); it never fails a job. `record()` then gives, per process, the
CPUs it was allowed and the CPUs the resource sampler saw it on.
"""

from __future__ import annotations

import errno
import os
import threading
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from app.core.records.job_conditions import Placement, ProcessPlacement
from app.core.records.job_records import ResourceSeries
from app.core.records.placement_words import cpus_text
from app.core.statistics.stability_warnings import StabilityWarning, WarningCode
from app.core.vocab import Mode, PlacementPolicy, Role

#: Where Linux lists each CPU's SMT siblings ("0-1", "0,4"; just "3" without SMT).
SIBLINGS_FILE = "/sys/devices/system/cpu/cpu{}/topology/thread_siblings_list"

#: The CPUs pinned by jobs running now in this process (CPU -> how many jobs), so that
#: jobs run in parallel (the GUI's pool) are spread over CPUs instead of sharing one.
_claims: Counter[int] = Counter()
_claims_lock = threading.Lock()


def roles_of(mode: Mode, has_link: bool) -> tuple[Role, ...]:
    """The local processes of a job in `mode`, in the order they start."""
    if mode == Mode.OPERATIONS:
        return (Role.WORKER,)
    if mode == Mode.LOOPBACK:
        return (Role.RECEIVER, Role.LINK, Role.SENDER) if has_link else (Role.RECEIVER, Role.SENDER)
    if mode == Mode.LOAD:  # the server, then the generator of every client connection
        return (Role.RECEIVER, Role.LINK, Role.SENDER) if has_link else (Role.RECEIVER, Role.SENDER)
    return (Role.SENDER,)


def usable_cpus() -> tuple[int, ...] | None:
    """The CPUs this process may run on, or None where the platform cannot say (no
    sched_getaffinity: macOS, Windows)."""
    getaffinity = getattr(os, "sched_getaffinity", None)
    if getaffinity is None:
        return None
    try:
        return tuple(sorted(getaffinity(0)))
    except OSError:
        return None


def _parse_cpu_list(text: str) -> set[int]:
    cpus: set[int] = set()
    for part in text.strip().split(","):
        if "-" in part:
            low, high = part.split("-", 1)
            cpus.update(range(int(low), int(high) + 1))
        elif part:
            cpus.add(int(part))
    return cpus


def core_of(cpus: Iterable[int], root: str = SIBLINGS_FILE) -> dict[int, int] | None:
    """CPU -> the lowest-numbered SMT sibling (one id per physical core), from sysfs; None
    when the topology cannot be read (then whether two CPUs share a core is unknown)."""
    core: dict[int, int] = {}
    for cpu in cpus:
        try:
            siblings = _parse_cpu_list(Path(root.format(cpu)).read_text(encoding="ascii"))
        except (OSError, ValueError):
            return None
        core[cpu] = min(siblings | {cpu})
    return core


class Placer:
    """The CPUs each process of one job gets, applied as each starts, and the record of it.

    Args:
        policy: the job's placement.
        roles: the job's local processes (`roles_of`).
        cpus: the CPUs to choose from (default: `usable_cpus()`).
        core: CPU -> physical core id (default: read from sysfs; `core_of`).
        busy: CPU -> jobs pinned there now; each choice takes the least busy CPU, the
            highest-numbered among equals (`claim()` chooses again with the jobs running now).
    """

    def __init__(
        self,
        policy: PlacementPolicy,
        roles: Iterable[Role],
        *,
        cpus: tuple[int, ...] | None = None,
        core: Mapping[int, int] | None = None,
        busy: Mapping[int, int] | None = None,
        receiver_processes: int = 1,
    ) -> None:
        self.policy = policy
        #: A load job's server processes (`server_workers`): under split they get a CPU each
        #: where there are enough, all apart from the sender's (the generator's).
        self.receiver_processes = receiver_processes
        self.roles = tuple(roles)
        self.cpus = usable_cpus() if cpus is None else cpus
        self.core = core if core is not None else (core_of(self.cpus) if self.cpus else None)
        #: Why the policy could not be applied (the job then runs as `free`), or None.
        self.unavailable: str | None = None
        #: A sentence on the choice made (for split: siblings of one core, or different cores).
        self.note: str | None = None
        #: Per started process, the CPUs it was allowed after placement (None: unknown).
        self.allowed: dict[Role, tuple[int, ...] | None] = {}
        self._pids: dict[Role, int] = {}
        self._busy: Mapping[int, int] = busy or {}
        self._claimed: list[int] = []
        self.targets = self._choose()

    def claim(self) -> None:
        """Choose again, with the CPUs that jobs running now have pinned, and pin ours: a
        job run alone always gets the same CPU; jobs run together get different ones."""
        with _claims_lock:
            self._busy = Counter(_claims)
            self.unavailable, self.note = None, None
            self.targets = self._choose()
            self._claimed = sorted({cpu for cpus in self.targets.values() for cpu in cpus})
            _claims.update(self._claimed)

    def release(self) -> None:
        """The job is over: its CPUs are free for the next one."""
        with _claims_lock:
            _claims.subtract(self._claimed)
            for cpu in self._claimed:
                if _claims[cpu] <= 0:
                    del _claims[cpu]
            self._claimed = []

    def _least_busy(self, cpus: Iterable[int]) -> int:
        """The least busy of `cpus`, the highest-numbered among equals."""
        return max(cpus, key=lambda cpu: (-self._busy.get(cpu, 0), cpu))

    def _choose(self) -> dict[Role, frozenset[int]]:
        if self.policy == PlacementPolicy.FREE:
            return {}
        if not hasattr(os, "sched_setaffinity") or self.cpus is None:
            self.unavailable = "this platform cannot set CPU affinity (no sched_setaffinity)"
            return {}
        if not self.cpus:
            self.unavailable = "this process may run on no CPU it can name (sched_getaffinity was empty)"
            return {}
        # The highest-numbered allowed CPU: the same one every job, and not CPU 0, which
        # Linux often gives more of the machine's interrupts and housekeeping (unless
        # another job running now has it).
        home = self._least_busy(self.cpus)
        if self.policy == PlacementPolicy.SAME or self.roles == (Role.WORKER,) or Role.RECEIVER not in self.roles:
            if self.policy == PlacementPolicy.SPLIT:
                self.note = "split has one local process here: it is pinned to one CPU"
            return {role: frozenset({home}) for role in self.roles}
        if len(self.cpus) < 2:
            self.unavailable = f"split needs two CPUs; this process may use only CPU {self.cpus[0]}"
            return {}
        others = [cpu for cpu in self.cpus if cpu != home]
        if self.core is None:
            sender = self._least_busy(others)
            self.note = (
                f"sender on CPU {sender}, receiver on CPU {home}: whether they share a core is "
                "unknown (no CPU topology in sysfs)"
            )
        else:
            apart = [cpu for cpu in others if self.core.get(cpu) != self.core.get(home)]
            sender = self._least_busy(apart or others)
            self.note = (
                f"sender on CPU {sender}, receiver on CPU {home}: "
                + (
                    "different cores"
                    if apart
                    else "SMT siblings of one core (no two allowed CPUs are on different cores)"
                )
                + " as the kernel reports them (a virtual machine's CPUs may share host cores)"
            )
        receiver = frozenset({home})
        if self.receiver_processes > 1:
            rest = sorted(cpu for cpu in self.cpus if cpu != sender)
            receiver = frozenset(rest[-self.receiver_processes :])
            self.note = f"{self.note}; the {self.receiver_processes} server processes on {cpus_text(receiver)}" + (
                ""
                if len(receiver) >= self.receiver_processes
                else " (fewer CPUs than server processes: they take turns)"
            )
        return {role: frozenset({sender}) if role == Role.SENDER else receiver for role in self.roles}

    def apply(self, role: Role, pid: int) -> None:
        """Pin a process that just started (no-op under `free` or once unavailable); on
        failure the whole job falls back to `free` and `unavailable` says why."""
        self._pids[role] = pid
        target = self.targets.get(role)
        if target is not None and self.unavailable is None:
            try:
                os.sched_setaffinity(pid, target)
            except OSError as exc:
                name = errno.errorcode.get(exc.errno or 0, "")
                self.unavailable = f"could not set CPU affinity: {exc.strerror or exc}" + (f" ({name})" if name else "")
                self._release()
        self.allowed[role] = _affinity(pid)

    def _release(self) -> None:
        """Undo the pinning of processes placed before a failure: the job runs as `free`."""
        if self.cpus:
            for role, pid in self._pids.items():
                try:
                    os.sched_setaffinity(pid, self.cpus)
                except OSError:
                    pass
                self.allowed[role] = _affinity(pid)

    def notes(self, *, unavailable: bool = False) -> list[str]:
        """What a result of the job says about its placement in its notes: how `split` fell
        on this machine's cores, and (`unavailable`: for a result that carries no
        warnings) why the job ran as `free`."""
        if self.unavailable is not None:
            return (
                [f"CPU placement {self.policy} not applied, the job ran as free: {self.unavailable}"]
                if unavailable
                else []
            )
        return [self.note] if self.note else []

    def warning(self) -> StabilityWarning | None:
        """Why a measured result ran as `free` although the job asked for a placement."""
        if self.unavailable is None:
            return None
        return StabilityWarning.make(
            WarningCode.PLACEMENT_UNAVAILABLE,
            None,
            f"CPU placement {self.policy} not applied, the job ran as free: {self.unavailable}; its figures depend "
            "on where the scheduler put its processes",
        )

    def record(self, series: Mapping[str, ResourceSeries]) -> Placement:
        """The job's placement: per started process, allowed CPUs and the CPUs the sampler
        saw it on within `series` (one message size's window, or the whole job)."""
        processes = {}
        for role in self.roles:
            if role not in self._pids:
                continue
            allowed = self.allowed.get(role) or ()
            seen = series.get(role)
            observed = tuple(sorted({c for c in seen.cpu_nums if c >= 0})) if seen is not None else ()
            processes[str(role)] = ProcessPlacement(allowed_cpus=allowed, observed_cpus=observed)
        return Placement(policy=str(self.policy), processes=processes, unavailable=self.unavailable)


def _affinity(pid: int) -> tuple[int, ...] | None:
    getaffinity = getattr(os, "sched_getaffinity", None)
    if getaffinity is None:
        return None
    try:
        return tuple(sorted(getaffinity(pid)))
    except OSError:
        return None

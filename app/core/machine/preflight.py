"""Stability pre-flight: what on this machine makes timings unstable, each with its fix.

The model is `python -m pyperf system show`: read the CPU frequency governor, turbo/boost,
SMT, whether this is a virtual machine, the hypervisor's steal time and the load of other
programs, and say for each one whether it is fine, a finding (what was found, why it
matters for timings, and the command or setting that fixes it) or unknown (and why).
Nothing is changed: fixes are for the user to apply.

Every read is cheap, read-only and never raises; a file that does not exist makes its fact
"unknown" with the reason, never a guess. The one process it starts is `systemd-detect-virt
--vm` (a few milliseconds), where that is installed. Steal time and other programs' load need two
readings of the CPU counters `interval` seconds apart (0.2 s by default, the only wait);
the CPU time of this process and its children is taken out of "other load", so a run may
start the interval before its own start-up work (`begin_sample`). Tests point `root` at a
fake /sys and /proc tree and pass a fake `reader` of CPU times.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from app.core.processes.descendants import descendants
from app.core.vocab import StabilityCode, StabilityStatus

__all__ = [
    "DEFAULT_INTERVAL",
    "LABELS",
    "CpuTimes",
    "RecentReadings",
    "StabilityFact",
    "StabilityFinding",
    "begin_sample",
    "check_stability",
    "enabled",
    "facts_to_dict",
    "read_cpu_times",
    "read_facts",
]

#: Seconds between the two readings of the CPU counters (steal, other load), and the least
#: any face reports them over: the counters tick every 10 ms, so over 0.02 s one tick of
#: another program read as 50 % of a core. The window and the command line follow one rule:
#: a reading over less than this is "unknown", never a figure (`RecentReadings` lets a face
#: that must not wait start its interval earlier).
DEFAULT_INTERVAL = 0.2
#: Slack on the interval for the clock between "due" and the reading itself.
_INTERVAL_SLACK = 0.005
#: Environment variable: "0" turns a run's pre-flight off (no record, no warning): for test
#: suites and scripts whose output must not depend on the machine. `cryptobench system` ignores it.
SWITCH_VARIABLE = "CRYPTOBENCH_PREFLIGHT"
#: Steal above this share of all CPU time is a finding.
STEAL_PERCENT = 1.0
#: Other programs' CPU use above this, in percent of ONE core, is a finding.
OTHER_LOAD_PERCENT = 10.0

_CPU = Path("sys/devices/system/cpu")
_STOP_OTHERS = "stop other programs (browsers, builds, indexers, other benchmarks), then run again"
_DEDICATED = "ask the host for dedicated vCPUs (pinned, not overcommitted), or measure on bare metal"
_VM_VENDORS = (
    "qemu",
    "kvm",
    "vmware",
    "virtualbox",
    "innotek",
    "xen",
    "bochs",
    "parallels",
    "amazon ec2",
    "google compute engine",
    "openstack",
    "bhyve",
)


#: Each fact's name for humans (the `system` command, the report).
LABELS: dict[StabilityCode, str] = {
    StabilityCode.GOVERNOR: "CPU frequency governor",
    StabilityCode.TURBO: "Turbo / boost",
    StabilityCode.SMT: "SMT (hyper-threading)",
    StabilityCode.VIRTUALIZATION: "Virtualization",
    StabilityCode.STEAL: "Steal time",
    StabilityCode.OTHER_LOAD: "Other programs' CPU use",
    StabilityCode.LOAD_AVERAGE: "Load average",
}


@dataclass(frozen=True, slots=True)
class StabilityFinding:
    """A reason to distrust timings on this machine, and how to remove it."""

    code: StabilityCode
    #: What was read, with its value ("powersave on 2 CPUs").
    found: str
    #: Why it matters for timings.
    why: str
    #: A command or setting the user can apply.
    fix: str


@dataclass(frozen=True, slots=True)
class StabilityFact:
    """One fact of the pre-flight: OK, a finding (with why and fix), or unknown (found says why)."""

    code: StabilityCode
    status: StabilityStatus
    found: str
    why: str | None = None
    fix: str | None = None

    @property
    def finding(self) -> StabilityFinding | None:
        if self.status is not StabilityStatus.FINDING:
            return None
        return StabilityFinding(self.code, self.found, self.why or "", self.fix or "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code.value,
            "status": self.status.value,
            "found": self.found,
            "why": self.why,
            "fix": self.fix,
        }


def _ok(code: StabilityCode, found: str) -> StabilityFact:
    return StabilityFact(code, StabilityStatus.OK, found)


def _unknown(code: StabilityCode, reason: str) -> StabilityFact:
    return StabilityFact(code, StabilityStatus.UNKNOWN, reason)


def _finding(code: StabilityCode, found: str, why: str, fix: str) -> StabilityFact:
    return StabilityFact(code, StabilityStatus.FINDING, found, why, fix)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except (OSError, ValueError):
        return None


# --- the CPU counters: steal time and other programs' load --------------------------------


@dataclass(frozen=True, slots=True)
class CpuTimes:
    """One reading of the CPU counters, in CPU-seconds summed over all CPUs."""

    #: time.monotonic() of the reading.
    wall: float
    #: Time the CPUs ran anything (not idle, not waiting for I/O, not stolen).
    busy: float
    #: All time, stolen included.
    total: float
    #: Time the hypervisor gave this guest's CPUs to others; None where the OS does not say.
    steal: float | None
    #: CPU time of this process and its descendants (their own work is not "other load").
    own: float


def _own_seconds() -> float:
    me = psutil.Process()
    total = 0.0
    for proc in (me, *descendants(me.pid)):
        try:
            t = proc.cpu_times()
        except psutil.Error:  # ended between the listing and the reading
            continue
        total += t.user + t.system + getattr(t, "children_user", 0.0) + getattr(t, "children_system", 0.0)
    return total


def read_cpu_times() -> CpuTimes:
    """The machine's CPU counters now (psutil; /proc/stat on Linux)."""
    t = psutil.cpu_times()
    fields = t._asdict()
    # guest time is already counted in user (and guest_nice in nice) on Linux.
    total = sum(v for k, v in fields.items() if k not in ("guest", "guest_nice"))
    steal = fields.get("steal")
    idle = fields.get("idle", 0.0) + fields.get("iowait", 0.0)
    return CpuTimes(
        wall=time.monotonic(), busy=total - idle - (steal or 0.0), total=total, steal=steal, own=_own_seconds()
    )


def begin_sample(reader: Callable[[], CpuTimes] = read_cpu_times) -> CpuTimes | None:
    """The first reading, taken early so the interval overlaps other start-up work."""
    try:
        return reader()
    except Exception:  # noqa: BLE001 - a pre-flight never fails a run
        return None


class RecentReadings:
    """The last two readings of the CPU counters, for a face that must not wait for the
    interval (the window's event loop): it reads now and then while idle, and a run starts
    its interval at the newest reading at least `interval` old, so the figure rests on as
    long an interval as the command line's, never on a few milliseconds."""

    def __init__(self, reader: Callable[[], CpuTimes] = read_cpu_times) -> None:
        self.reader = reader
        self.readings: list[CpuTimes] = []

    def take(self) -> None:
        reading = begin_sample(self.reader)
        if reading is not None:
            self.readings = [*self.readings[-1:], reading]

    def start(self, interval: float = DEFAULT_INTERVAL, now: float | None = None) -> CpuTimes | None:
        """The newest reading at least `interval` old, or None (then the run reads its own)."""
        now = time.monotonic() if now is None else now
        old = [r for r in self.readings if now - r.wall >= interval]
        return old[-1] if old else None


def enabled() -> bool:
    """Whether a run checks stability: yes unless CRYPTOBENCH_PREFLIGHT is "0"."""
    return os.environ.get(SWITCH_VARIABLE, "").strip() != "0"


def _load_facts(
    interval: float, reader: Callable[[], CpuTimes], sleep: Callable[[float], None], start: CpuTimes | None
) -> list[StabilityFact]:
    if interval <= 0:
        reason = "not sampled (the interval is 0)"
        return [_unknown(StabilityCode.STEAL, reason), _unknown(StabilityCode.OTHER_LOAD, reason)]
    first = start or begin_sample(reader)
    if first is not None:
        # With a caller's early reading, wait only the rest of the interval.
        remaining = interval - (time.monotonic() - first.wall) if start is not None else interval
        if remaining > 0:
            sleep(remaining)
    second = begin_sample(reader) if first is not None else None
    if first is None or second is None:
        reason = "the CPU counters could not be read"
        return [_unknown(StabilityCode.STEAL, reason), _unknown(StabilityCode.OTHER_LOAD, reason)]
    seconds = second.wall - first.wall
    total = second.total - first.total
    if seconds < interval - _INTERVAL_SLACK:
        reason = (
            f"not measured: the readings were {seconds:.2f} s apart, less than the {interval:g} s "
            "a figure needs (the counters tick every 10 ms)"
        )
        return [_unknown(StabilityCode.STEAL, reason), _unknown(StabilityCode.OTHER_LOAD, reason)]
    facts = []
    if first.steal is None or second.steal is None:
        facts.append(_unknown(StabilityCode.STEAL, "this OS reports no steal time (Linux does)"))
    elif total <= 0:
        facts.append(_unknown(StabilityCode.STEAL, f"the CPU counters did not advance in {seconds:.2f} s"))
    else:
        steal = max(0.0, (second.steal - first.steal) / total * 100)
        found = f"{steal:.1f} % of CPU time stolen by the hypervisor over {seconds:.2f} s"
        facts.append(
            _finding(
                StabilityCode.STEAL,
                found,
                "the hypervisor ran other guests on this machine's CPUs: timings include time "
                "the benchmark could not run",
                _DEDICATED,
            )
            if steal > STEAL_PERCENT
            else _ok(StabilityCode.STEAL, found)
        )
    if seconds <= 0:
        facts.append(_unknown(StabilityCode.OTHER_LOAD, "the two readings have no time between them"))
    else:
        other = max(0.0, ((second.busy - first.busy) - (second.own - first.own)) / seconds * 100)
        found = f"other programs used {other:.0f} % of one core over {seconds:.2f} s"
        facts.append(
            _finding(
                StabilityCode.OTHER_LOAD,
                found,
                "competing programs take CPU time, caches, memory bandwidth and turbo headroom from the benchmark",
                _STOP_OTHERS,
            )
            if other > OTHER_LOAD_PERCENT
            else _ok(StabilityCode.OTHER_LOAD, found)
        )
    return facts


# --- the settings read from /sys and /proc ---------------------------------------------------


def _governor(root: Path) -> StabilityFact:
    code = StabilityCode.GOVERNOR
    by_cpu = [_read(path) for path in sorted((root / _CPU).glob("cpu[0-9]*/cpufreq/scaling_governor"))]
    values = [v for v in by_cpu if v]
    if not values:
        return _unknown(code, "not exposed: no CPU has cpufreq/scaling_governor (typical of VMs and containers)")
    counts = {name: values.count(name) for name in sorted(set(values))}
    found = ", ".join(f"{name} on {n} CPU{'s' if n != 1 else ''}" for name, n in counts.items())
    if set(counts) == {"performance"}:
        return _ok(code, found)
    return _finding(
        code,
        found,
        "a governor other than performance changes the clock with the load history, "
        "so the same code runs faster or slower from one sample to the next",
        "sudo cpupower frequency-set -g performance",
    )


def _turbo(root: Path) -> StabilityFact:
    code = StabilityCode.TURBO
    why = (
        "turbo raises the clock above its base only while temperature and power allow, so timings depend "
        "on how hot the CPU is and on what else runs"
    )
    no_turbo = _read(root / _CPU / "intel_pstate/no_turbo")
    if no_turbo in ("0", "1"):
        if no_turbo == "1":
            return _ok(code, "turbo off (intel_pstate/no_turbo = 1)")
        return _finding(
            code,
            "turbo on (intel_pstate/no_turbo = 0)",
            why,
            "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo",
        )
    boost = _read(root / _CPU / "cpufreq/boost")
    if boost in ("0", "1"):
        if boost == "0":
            return _ok(code, "boost off (cpufreq/boost = 0)")
        return _finding(
            code, "boost on (cpufreq/boost = 1)", why, "echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/boost"
        )
    return _unknown(
        code, "not exposed: neither intel_pstate/no_turbo nor cpufreq/boost exists (typical of VMs and containers)"
    )


def _smt(root: Path) -> StabilityFact:
    code = StabilityCode.SMT
    active, control = _read(root / _CPU / "smt/active"), _read(root / _CPU / "smt/control")
    suffix = f" (control: {control})" if control else ""
    on = active == "1" if active in ("0", "1") else control == "on" if control else None
    if on is None:
        return _unknown(code, "not exposed: neither smt/active nor smt/control exists")
    if not on:
        return _ok(code, f"SMT (hyper-threading) not active{suffix}")
    return _finding(
        code,
        f"SMT (hyper-threading) active{suffix}",
        "two hardware threads share one core's execution units and caches: whatever runs on the "
        "sibling thread slows the benchmark",
        "echo off | sudo tee /sys/devices/system/cpu/smt/control (or disable it in the firmware)",
    )


def _detect_virt() -> str | None:
    """systemd-detect-virt --vm's answer, where the tool exists ("none" on bare metal)."""
    tool = shutil.which("systemd-detect-virt")
    if tool is None:
        return None
    try:
        out = subprocess.run([tool, "--vm"], capture_output=True, text=True, timeout=1, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return out.strip() or None


def _virtualization(root: Path) -> StabilityFact:
    code = StabilityCode.VIRTUALIZATION
    evidence: list[str] = []
    looked: list[str] = []
    if root == Path("/"):
        answer = _detect_virt()
        if answer is not None:
            looked.append("systemd-detect-virt")
            if answer != "none":
                evidence.append(f"systemd-detect-virt: {answer}")
    cpuinfo = _read(root / "proc/cpuinfo")
    flags = next(
        (
            line.partition(":")[2].split()
            for line in (cpuinfo or "").splitlines()
            if line.partition(":")[0].strip() == "flags"
        ),
        None,
    )
    if flags is not None:
        looked.append("the CPU flags")
        if "hypervisor" in flags:
            evidence.append("CPU flag hypervisor")
    vendor = " ".join(
        v for v in (_read(root / "sys/class/dmi/id" / name) for name in ("sys_vendor", "product_name")) if v
    )
    if vendor:
        looked.append("the DMI vendor")
        if any(name in vendor.lower() for name in _VM_VENDORS):
            evidence.append(f"DMI: {vendor}")
    if evidence:
        return _finding(
            code,
            "virtual machine (" + "; ".join(evidence) + ")",
            "a VM's vCPUs share physical cores with other guests and the host: timings vary with "
            "their load (see steal time)",
            _DEDICATED,
        )
    if looked:
        return _ok(code, "no hypervisor found (" + ", ".join(looked) + ")")
    return _unknown(code, "no way to tell: no systemd-detect-virt, no CPU flags in /proc/cpuinfo, no DMI vendor")


def _cpu_count(root: Path) -> int | None:
    """CPUs online, from /sys/devices/system/cpu/online ("0-3,6")."""
    text = _read(root / _CPU / "online")
    if not text:
        return None
    count = 0
    try:
        for part in text.split(","):
            low, _, high = part.partition("-")
            count += int(high or low) - int(low) + 1
    except ValueError:
        return None
    return count or None


def _load_average(root: Path) -> StabilityFact:
    code = StabilityCode.LOAD_AVERAGE
    text = _read(root / "proc/loadavg")
    try:
        load = float(text.split()[0]) if text else None
    except (ValueError, IndexError):
        load = None
    if load is None:
        return _unknown(code, "not exposed: /proc/loadavg is missing or unreadable")
    cpus = _cpu_count(root)
    if cpus is None:
        return _unknown(code, f"1-minute load {load:.2f}, but the number of CPUs online is unknown")
    found = f"1-minute load {load:.2f} on {cpus} CPU{'s' if cpus != 1 else ''}"
    if load <= cpus:
        return _ok(code, found)
    return _finding(
        code,
        found,
        "more tasks wanted to run than there are CPUs: the benchmark waits its turn",
        _STOP_OTHERS + ", or wait until `uptime` shows a lower load",
    )


def read_facts(
    root: Path = Path("/"),
    *,
    interval: float = DEFAULT_INTERVAL,
    reader: Callable[[], CpuTimes] = read_cpu_times,
    sleep: Callable[[float], None] = time.sleep,
    start: CpuTimes | None = None,
) -> list[StabilityFact]:
    """Every fact, in a fixed order (pyperf's `system show`). Never raises.

    Args:
        root: Where /sys and /proc are (a fake tree in tests).
        interval: Seconds between the two readings of the CPU counters; 0 skips them.
        reader: Reads the CPU counters (a fake in tests).
        sleep: Waits between the readings (a no-op in tests).
        start: A first reading taken earlier (`begin_sample`); only the rest of the interval is waited.
    """
    facts: list[StabilityFact] = []
    for probe in (_governor, _turbo, _smt, _virtualization):
        try:
            facts.append(probe(root))
        except Exception as exc:  # noqa: BLE001 - a pre-flight never fails a run
            facts.append(_unknown(StabilityCode(probe.__name__.strip("_")), f"could not be read: {exc}"))
    try:
        facts += _load_facts(interval, reader, sleep, start)
    except Exception as exc:  # noqa: BLE001
        facts += [
            _unknown(StabilityCode.STEAL, f"could not be read: {exc}"),
            _unknown(StabilityCode.OTHER_LOAD, f"could not be read: {exc}"),
        ]
    try:
        facts.append(_load_average(root))
    except Exception as exc:  # noqa: BLE001
        facts.append(_unknown(StabilityCode.LOAD_AVERAGE, f"could not be read: {exc}"))
    return facts


def check_stability(
    root: Path = Path("/"),
    *,
    interval: float = DEFAULT_INTERVAL,
    reader: Callable[[], CpuTimes] = read_cpu_times,
    sleep: Callable[[float], None] = time.sleep,
    start: CpuTimes | None = None,
) -> list[StabilityFinding]:
    """The findings only (empty when the machine is fine); arguments as `read_facts`."""
    facts = read_facts(root, interval=interval, reader=reader, sleep=sleep, start=start)
    return [finding for fact in facts if (finding := fact.finding) is not None]


def facts_to_dict(facts: list[StabilityFact]) -> dict[str, Any]:
    """The environment's "stability" object: {"facts": [{code, status, found, why, fix}]}."""
    return {"facts": [fact.to_dict() for fact in facts]}

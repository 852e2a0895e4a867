"""The stability pre-flight (app.core.machine.preflight) on fake /sys and /proc trees and fake CPU
counters: every verdict is the tree's, never this machine's."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from app.core.contracts.events import LogMessage, RunStarted
from app.core.machine import preflight
from app.core.machine.preflight import CpuTimes, StabilityFact, check_stability, facts_to_dict, read_facts
from app.core.profile.files import parse_profile
from app.core.results.check import check_environment
from app.core.results.errors import ResultsDataError
from app.core.run.runner import Runner
from app.core.vocab import LogLevel, StabilityCode, StabilityStatus

CPU = "sys/devices/system/cpu"


def tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text + "\n", encoding="utf-8")
    return root


def reader(*readings: CpuTimes) -> Callable[[], CpuTimes]:
    it: Iterator[CpuTimes] = iter(readings)
    return lambda: next(it)


#: Two CPUs, 0.2 s apart, idle: 0.4 CPU-seconds in all, none of it stolen or busy.
IDLE_READINGS = (
    CpuTimes(wall=0.0, busy=10.0, total=100.0, steal=1.0, own=1.0),
    CpuTimes(wall=0.2, busy=10.0, total=100.4, steal=1.0, own=1.0),
)


def facts(root: Path, read: Callable[[], CpuTimes] | None = None) -> dict[StabilityCode, StabilityFact]:
    found = read_facts(root, interval=0.2, reader=read or reader(*IDLE_READINGS), sleep=lambda s: None)
    return {fact.code: fact for fact in found}


def test_a_tuned_idle_machine_has_no_finding(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            f"{CPU}/cpu0/cpufreq/scaling_governor": "performance",
            f"{CPU}/cpu1/cpufreq/scaling_governor": "performance",
            f"{CPU}/intel_pstate/no_turbo": "1",
            f"{CPU}/smt/active": "0",
            f"{CPU}/smt/control": "off",
            f"{CPU}/online": "0-1",
            "proc/loadavg": "0.50 0.40 0.30 1/100 4242",
            "proc/cpuinfo": "processor : 0\nflags : fpu aes avx2\n",
        },
    )
    got = facts(root)
    assert [fact.code for fact in got.values()] == list(StabilityCode)  # every fact, in a fixed order
    assert all(fact.status is StabilityStatus.OK for fact in got.values()), got
    assert got[StabilityCode.GOVERNOR].found == "performance on 2 CPUs"
    assert check_stability(root, interval=0.2, reader=reader(*IDLE_READINGS), sleep=lambda s: None) == []


def test_powersave_turbo_and_smt_are_findings_with_their_fixes(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            f"{CPU}/cpu0/cpufreq/scaling_governor": "powersave",
            f"{CPU}/cpu1/cpufreq/scaling_governor": "performance",
            f"{CPU}/cpufreq/boost": "1",
            f"{CPU}/smt/active": "1",
            f"{CPU}/smt/control": "on",
        },
    )
    got = facts(root)
    governor = got[StabilityCode.GOVERNOR]
    assert governor.status is StabilityStatus.FINDING
    assert governor.found == "performance on 1 CPU, powersave on 1 CPU"
    assert governor.fix == "sudo cpupower frequency-set -g performance" and governor.why
    assert got[StabilityCode.TURBO].status is StabilityStatus.FINDING
    assert got[StabilityCode.TURBO].fix == "echo 0 | sudo tee /sys/devices/system/cpu/cpufreq/boost"
    assert got[StabilityCode.SMT].status is StabilityStatus.FINDING
    assert got[StabilityCode.SMT].fix is not None
    assert got[StabilityCode.SMT].fix.startswith("echo off | sudo tee /sys/devices/system/cpu/smt/control")
    # intel_pstate's switch wins where both exist; 0 means turbo on.
    tree(tmp_path, {f"{CPU}/intel_pstate/no_turbo": "0"})
    assert facts(root)[StabilityCode.TURBO].fix == "echo 1 | sudo tee /sys/devices/system/cpu/intel_pstate/no_turbo"


def test_missing_files_are_unknown_with_the_reason(tmp_path: Path) -> None:
    got = facts(tmp_path)  # an empty tree: nothing exposed
    for code in (
        StabilityCode.GOVERNOR,
        StabilityCode.TURBO,
        StabilityCode.SMT,
        StabilityCode.VIRTUALIZATION,
        StabilityCode.LOAD_AVERAGE,
    ):
        assert got[code].status is StabilityStatus.UNKNOWN, got[code]
        assert got[code].fix is None
    assert "not exposed" in got[StabilityCode.GOVERNOR].found
    assert "typical of VMs" in got[StabilityCode.GOVERNOR].found

    # Counters that cannot be read, or a platform without steal, are unknown too.
    def broken() -> CpuTimes:
        raise OSError("no /proc/stat")

    assert facts(tmp_path, broken)[StabilityCode.STEAL].status is StabilityStatus.UNKNOWN
    no_steal = reader(CpuTimes(0.0, 1.0, 10.0, None, 0.0), CpuTimes(0.2, 1.0, 10.4, None, 0.0))
    assert "no steal" in facts(tmp_path, no_steal)[StabilityCode.STEAL].found
    skipped = {f.code: f for f in read_facts(tmp_path, interval=0)}
    assert skipped[StabilityCode.OTHER_LOAD].status is StabilityStatus.UNKNOWN
    assert "not sampled" in skipped[StabilityCode.STEAL].found


def test_steal_and_a_busy_machine(tmp_path: Path) -> None:
    root = tree(
        tmp_path,
        {
            "proc/cpuinfo": "flags : fpu hypervisor aes\n",
            f"{CPU}/online": "0",
            "proc/loadavg": "3.00 1.00 1.00 3/100 4242",
        },
    )
    # 0.2 s on two CPUs: 0.4 CPU-s, 0.02 of it stolen (5 %); others busy 0.16 s (80 % of a core)
    # while this process and its children used 0.04 s (not counted as others).
    busy = reader(CpuTimes(0.0, 10.0, 100.0, 1.0, 1.0), CpuTimes(0.2, 10.2, 100.4, 1.02, 1.04))
    got = facts(root, busy)
    steal = got[StabilityCode.STEAL]
    assert steal.status is StabilityStatus.FINDING and steal.found.startswith("5.0 % of CPU time stolen")
    assert steal.fix is not None and "dedicated vCPUs" in steal.fix
    other = got[StabilityCode.OTHER_LOAD]
    assert other.status is StabilityStatus.FINDING and other.found.startswith("other programs used 80 % of one core")
    assert other.fix is not None and "stop other programs" in other.fix
    load = got[StabilityCode.LOAD_AVERAGE]
    assert load.status is StabilityStatus.FINDING and load.found == "1-minute load 3.00 on 1 CPU"
    virt = got[StabilityCode.VIRTUALIZATION]
    assert virt.status is StabilityStatus.FINDING and "CPU flag hypervisor" in virt.found
    codes = [
        f.code
        for f in check_stability(
            root,
            interval=0.2,
            reader=reader(CpuTimes(0.0, 10.0, 100.0, 1.0, 1.0), CpuTimes(0.2, 10.2, 100.4, 1.02, 1.04)),
            sleep=lambda s: None,
        )
    ]
    assert codes == [
        StabilityCode.VIRTUALIZATION,
        StabilityCode.STEAL,
        StabilityCode.OTHER_LOAD,
        StabilityCode.LOAD_AVERAGE,
    ]


def test_an_early_reading_waits_only_the_rest_of_the_interval(tmp_path: Path) -> None:
    waits: list[float] = []
    start = CpuTimes(wall=preflight.time.monotonic() - 10, busy=0.0, total=0.0, steal=0.0, own=0.0)
    read_facts(
        tmp_path, interval=0.2, reader=reader(CpuTimes(1.0, 0.0, 1.0, 0.0, 0.0)), sleep=waits.append, start=start
    )
    assert waits == []  # the start-up work already took longer than the interval


def test_the_environment_record_and_its_check(tmp_path: Path) -> None:
    root = tree(tmp_path, {f"{CPU}/cpu0/cpufreq/scaling_governor": "powersave"})
    record = facts_to_dict(read_facts(root, interval=0.2, reader=reader(*IDLE_READINGS), sleep=lambda s: None))
    env = {"stability": json.loads(json.dumps(record))}
    check_environment(env, "run.environment")
    check_environment({}, "run.environment")  # a run from before the pre-flight
    check_environment({"stability": {"facts": [{"code": "newer-fact", "status": "ok", "found": "x"}]}}, "e")
    bad: list[tuple[Any, str]] = [
        ({"facts": [{"code": "smt", "status": "maybe", "found": "x"}]}, "e.stability.facts[0].status"),
        ({"facts": [{"code": "smt", "status": "ok", "found": 3}]}, "e.stability.facts[0].found"),
        ({"facts": [{"code": "smt", "status": "finding", "found": "x", "fix": ["a"]}]}, "e.stability.facts[0].fix"),
        ({"facts": ["smt"]}, "e.stability.facts[0]"),
        ({}, "e.stability.facts"),
        ([], "e.stability"),
    ]
    for stability, where in bad:
        with pytest.raises(ResultsDataError) as info:
            check_environment({"stability": stability}, "e")
        assert info.value.field == where, (stability, info.value)


FAKE_FACTS = [
    StabilityFact(
        StabilityCode.GOVERNOR,
        StabilityStatus.FINDING,
        "powersave on 2 CPUs",
        "the clock changes",
        "sudo cpupower frequency-set -g performance",
    ),
    StabilityFact(StabilityCode.SMT, StabilityStatus.OK, "SMT (hyper-threading) not active"),
    StabilityFact(StabilityCode.TURBO, StabilityStatus.UNKNOWN, "not exposed"),
]


def test_cli_system_piped_and_json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli.main import main

    monkeypatch.setattr(preflight, "read_facts", lambda *a, **k: list(FAKE_FACTS))
    assert main(["system"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "governor | finding | powersave on 2 CPUs | why: the clock changes | fix: sudo cpupower frequency-set -g "
        "performance",
        "smt | ok | SMT (hyper-threading) not active",
        "turbo | unknown | not exposed",
        "1 finding",
    ]
    assert main(["system", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data[0] == {
        "code": "governor",
        "status": "finding",
        "found": "powersave on 2 CPUs",
        "why": "the clock changes",
        "fix": "sudo cpupower frequency-set -g performance",
    }
    assert [d["status"] for d in data] == ["finding", "ok", "unknown"]


def started(events: list[Any]) -> dict[str, Any]:
    runner = Runner(
        parse_profile({"name": "x", "jobs": [{"scheme": "sha256", "message_sizes": [8], "samples": 2}]}),
        on_event=events.append,
    )
    run = runner.start()
    runner.finish(run)
    return run.environment


@pytest.mark.parametrize("found", [FAKE_FACTS, FAKE_FACTS[1:]])
def test_a_run_records_the_facts_and_logs_one_line_per_finding(
    monkeypatch: pytest.MonkeyPatch, found: list[StabilityFact]
) -> None:
    monkeypatch.delenv(preflight.SWITCH_VARIABLE)  # tests/conftest.py turns it off for every other run
    monkeypatch.setattr(preflight, "read_facts", lambda *a, **k: list(found))
    events: list[Any] = []
    assert started(events)["stability"] == facts_to_dict(found)
    assert isinstance(events[0], RunStarted)
    warnings = [e.text for e in events if isinstance(e, LogMessage) and e.level == LogLevel.WARNING]
    if found is FAKE_FACTS:
        assert warnings == [
            "Stability: powersave on 2 CPUs: the clock changes. Fix: sudo cpupower frequency-set -g performance."
        ]
    else:
        assert warnings == []  # nothing when the machine is fine


def test_the_switch_turns_a_run_s_pre_flight_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(preflight.SWITCH_VARIABLE, "0")
    monkeypatch.setattr(preflight, "read_facts", lambda *a, **k: list(FAKE_FACTS))
    events: list[Any] = []
    assert "stability" not in started(events)
    assert not [e for e in events if isinstance(e, LogMessage)]


def test_the_window_s_runner_never_waits_for_the_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    """The window starts a run on its event loop: the pre-flight must not sleep there."""
    monkeypatch.delenv(preflight.SWITCH_VARIABLE)
    real = preflight.read_facts
    sleeps: list[Callable[[float], None]] = []

    def recording(*args: Any, **kwargs: Any) -> list[StabilityFact]:
        sleeps.append(kwargs.get("sleep", time.sleep))
        return real(*args, **kwargs)

    monkeypatch.setattr(preflight, "read_facts", recording)
    profile = parse_profile({"name": "p", "jobs": [{"scheme": "sha256", "message_sizes": [8], "samples": 2}]})
    run = Runner(profile, preflight_wait=False).start()
    assert "stability" in run.environment
    (no_wait,) = sleeps
    assert no_wait is not time.sleep
    started_at = time.monotonic()
    no_wait(60.0)
    assert time.monotonic() - started_at < 1.0
    Runner(profile).start()  # the CLI's runner waits out the rest of the interval
    assert sleeps[1] is time.sleep


# --- one rule for every face: never a figure over less than the interval --------------------


def test_a_reading_over_less_than_the_interval_is_unknown_not_a_figure(tmp_path: Path) -> None:
    # The window used to measure over its start-up work alone: 0.02 s, two clock ticks, so one
    # tick of another program read as "168 % of one core". Now it is not a figure at all.
    start = CpuTimes(wall=0.0, busy=10.0, total=100.0, steal=1.0, own=1.0)
    late = CpuTimes(wall=0.02, busy=10.03, total=100.04, steal=1.0, own=1.0)
    found = {
        f.code: f for f in read_facts(tmp_path, interval=0.2, reader=reader(late), sleep=lambda s: None, start=start)
    }
    for code in (StabilityCode.STEAL, StabilityCode.OTHER_LOAD):
        assert found[code].status == StabilityStatus.UNKNOWN
        assert "0.02 s apart, less than the 0.2 s a figure needs" in found[code].found
    # The same readings 0.2 s apart give the figure, as `cryptobench run` and `system` do.
    apart = CpuTimes(wall=0.2, busy=10.3, total=100.4, steal=1.0, own=1.0)
    other = {
        f.code: f for f in read_facts(tmp_path, interval=0.2, reader=reader(apart), sleep=lambda s: None, start=start)
    }
    assert other[StabilityCode.OTHER_LOAD].found == "other programs used 150 % of one core over 0.20 s"


def test_recent_readings_start_a_run_s_interval_at_least_the_interval_ago() -> None:
    walls = iter([10.0, 11.0, 12.0])
    readings = preflight.RecentReadings(lambda: CpuTimes(next(walls), 0.0, 0.0, 0.0, 0.0))
    assert readings.start(now=10.5) is None  # nothing read yet
    readings.take()
    assert readings.start(now=10.1) is None  # too recent: the run would read its own
    readings.take()
    readings.take()  # keeps the last two: 11.0 and 12.0
    start = readings.start(now=12.1)
    assert start is not None and start.wall == 11.0  # 12.0 is only 0.1 s old
    newest = readings.start(now=12.5)
    assert newest is not None and newest.wall == 12.0


def test_the_window_s_run_measures_other_load_over_the_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    """The window's runner does not wait, yet its figure rests on at least the interval."""
    monkeypatch.delenv(preflight.SWITCH_VARIABLE)
    early = preflight.read_cpu_times()
    early = CpuTimes(early.wall - 0.5, early.busy, early.total, early.steal, early.own)  # read 0.5 s ago
    profile = parse_profile({"name": "p", "jobs": [{"scheme": "sha256", "message_sizes": [8], "samples": 2}]})
    run = Runner(profile, preflight_wait=False, preflight_start=early).start()
    facts = {f["code"]: f for f in run.environment["stability"]["facts"]}
    found = facts[StabilityCode.OTHER_LOAD]["found"]
    assert facts[StabilityCode.OTHER_LOAD]["status"] != StabilityStatus.UNKNOWN, found
    seconds = float(found.rsplit("over ", 1)[1].removesuffix(" s"))
    assert seconds >= preflight.DEFAULT_INTERVAL

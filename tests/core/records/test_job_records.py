"""The typed parts of a job's result: what they read, what they write, and the one rule
for which process's figures are the job's."""

from __future__ import annotations

import dataclasses

import pytest

from app.core.records.job_conditions import Link, Load, LoadStep, Placement, ProcessPlacement
from app.core.records.job_records import CpuUsage, MemoryUsage, ProcessUsage, ResourceSeries, Security, Validation
from app.core.results.model import JobResult
from app.core.vocab import Mode, Role
from tests.helpers import records


def _usage(mean: float) -> ProcessUsage:
    return ProcessUsage(
        samples=3, mean_percent=mean, max_percent=mean, rss_peak_bytes=int(mean) << 20, other_processes_mean_percent=1.0
    )


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (Mode.OPERATIONS, 10.0),
        (Mode.LOOPBACK, 20.0),
        (Mode.REMOTE, 20.0),
        ("loopback", 20.0),
    ],
)
def test_the_measuring_process_is_chosen_by_mode(mode: str, expected: float) -> None:
    cpu = CpuUsage({Role.RECEIVER: _usage(30.0), Role.SENDER: _usage(20.0), Role.WORKER: _usage(10.0)}, 0.1)
    usage = cpu.measuring(mode)
    assert usage is not None and usage.mean_percent == expected
    memory = MemoryUsage(rss_peak_bytes={role: u.rss_peak_bytes for role, u in cpu.processes.items() if u})
    assert memory.measuring_rss(mode) == int(expected) << 20


def test_a_file_from_another_tool_falls_back_to_the_first_recorded_process() -> None:
    cpu = CpuUsage.from_dict({"client": None, "server": {"mean_percent": 5}, "interval_s": 0.5})
    assert cpu.interval_s == 0.5 and cpu.role("client") is None
    assert cpu.measuring("loopback") == ProcessUsage(mean_percent=5.0)
    assert cpu.measuring("not-a-mode") == ProcessUsage(mean_percent=5.0)


def test_cpu_usage_writes_roles_then_the_interval_as_one_object() -> None:
    remote = ProcessUsage(samples=0, mean_percent=12.5, rss_peak_bytes=1 << 20, source="reported by the peer")
    cpu = CpuUsage({"sender": _usage(20.0), "receiver": remote}, 0.1)
    data = cpu.to_dict()
    assert list(data) == ["sender", "receiver", "interval_s"]
    assert data["receiver"]["source"] == "reported by the peer" and "source" not in data["sender"]
    assert CpuUsage.from_dict(data) == cpu
    assert CpuUsage().to_dict() == {}


def test_a_size_shorter_than_one_sampling_interval_has_no_figures_not_zeros() -> None:
    usage = ProcessUsage.from_series(ResourceSeries("worker"))
    assert usage.samples == 0 and usage.mean_percent is None and usage.rss_peak_bytes is None
    assert not usage.sampled
    assert ProcessUsage(samples=0, source="reported by the remote receiver").sampled


def test_resource_series_summary_is_the_mean_max_and_peak() -> None:
    series = ResourceSeries("sender")
    for t, cpu, rss in ((0.1, 50.0, 10), (0.2, 100.0, 30), (0.3, 60.0, 20)):
        series.times.append(t)
        series.cpu_percent.append(cpu)
        series.rss_bytes.append(rss)
    series.other_cpu_percent.extend([4.0, 8.0])
    usage = ProcessUsage.from_series(series)
    assert usage == ProcessUsage(
        samples=3, mean_percent=70.0, max_percent=100.0, rss_peak_bytes=30, other_processes_mean_percent=6.0
    )


def test_validation_and_security_round_trip_and_say_when_unknown() -> None:
    validation = Validation(checked=10, failed=1, tamper_tried=3, tamper_rejected=2)
    assert (
        Validation.from_dict(validation.to_dict()) == validation
        and validation.tamper_tried - validation.tamper_rejected == 1
    )
    assert Validation.from_dict({}) == Validation()
    security = Security(classical_bits=128, pq_category=0, insecure=False)
    assert Security.from_dict(security.to_dict()) == security and security.known
    assert Security().to_dict() == {} and not Security.from_dict({}).known


def test_records_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        Validation().checked = 3  # type: ignore[misc]


def test_link_placement_and_load_appear_in_a_job_only_when_set() -> None:
    job = records.job("r", 0, 64, scheme="x25519", params={}, label="X25519", family="key-agreement", mode="loopback")
    assert not {"link", "placement", "load"} & set(job.to_dict())
    link = Link(
        name="lte",
        delay_ms=35.0,
        jitter_ms=5.0,
        rate_kbit_up=5_000.0,
        rate_kbit_down=20_000.0,
        loss_percent=0.0,
        emulation="delay-line",
    )
    placement = Placement("same", {"sender": ProcessPlacement((0,), (0,)), "receiver": ProcessPlacement((0,), (0,))})
    load = Load(clients=4, server_workers=1, steps=(LoadStep(200.0, 199.5, 0, {"p50": 1e-3, "p99": 4e-3}),))
    job = dataclasses.replace(job, link=link, placement=placement, load=load)
    again = JobResult.from_dict(job.to_dict())
    assert (again.link, again.placement, again.load) == (link, placement, load)

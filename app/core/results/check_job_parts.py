"""The checks of a job's parts besides its metrics (the records of `job_records`,
`job_conditions`, `job_tcp_info` and `link_path`): CPU usage, validation counts, the link it
ran over, its CPU placement, a load job's steps, both ends' TCP_INFO and a packet link's path.
"""

from __future__ import annotations

import re
from typing import Any

from app.core.records.job_conditions import MAX_QUEUE_BYTES, MAX_QUEUE_PACKETS, StepLimit
from app.core.records.job_tcp_info import TCP_INFO_COUNTS
from app.core.records.load_histogram import max_histogram_chars
from app.core.results import plausible
from app.core.results.check_fields import (
    check_bool,
    check_int,
    check_list,
    check_obj,
    check_str,
    fail,
    is_int,
    is_num,
    join,
    num,
)
from app.core.settings.links import MAX_DELAY_MS, MAX_RATE_KBIT
from app.core.settings.load import (
    MAX_CLIENTS,
    MAX_CLOCK_OFFSET_S,
    MAX_CLUSTER_ADDRESS_CHARS,
    MAX_DURATION_S,
    MAX_GENERATORS,
    MAX_HOST_CHARS,
    MAX_RATE_PER_S,
    MAX_SERVER_WORKERS,
    MAX_STEPS,
    MAX_WARMUP_S,
)
from app.core.settings.profile import MAX_LINK_SEED
from app.core.vocab import (
    CongestionControl,
    LinkEmulation,
    PlacementPolicy,
    TcpConnection,
)

# Bounds taken from the limits the producers are held to, not copied, so the two cannot
# drift apart (tests/reliability/test_written_read_back.py writes the largest each allows):
#: A link's one-way delay and rate (app.core.settings.links).
_MAX_LINK_DELAY_MS = int(MAX_DELAY_MS)
_MAX_LINK_RATE_KBIT = int(MAX_RATE_KBIT)


def check_cpu(cpu: dict[str, Any], path: str) -> None:
    """{"worker" | "sender" | "receiver": {samples, mean_percent, ...}, "interval_s": seconds}."""
    for key, block in cpu.items():
        if key == "interval_s":
            num(cpu, key, path, positive=True, nullable=True)
            continue
        block = check_obj(cpu, key, path, nullable=True)
        where = join(path, key)
        check_int(block, "samples", where, required=False, nullable=True)
        check_int(block, "rss_peak_bytes", where, required=False, nullable=True)
        for name in ("mean_percent", "max_percent", "other_processes_mean_percent"):
            num(block, name, where, non_negative=True, required=False, nullable=True)
        plausible.check_cpu_plausible(block, where)


def check_link(link: dict[str, Any], path: str) -> None:
    """{"name", "delay_ms", "jitter_ms", "rate_kbit": {"up", "down"}, "loss_percent", "emulation"}
    (job_conditions.Link): numbers a link could have been emulated with."""
    check_str(link, "name", path, required=False, nullable=True)
    delay = num(link, "delay_ms", path, non_negative=True)
    assert delay is not None
    if delay > _MAX_LINK_DELAY_MS:
        raise fail(join(path, "delay_ms"), f"at most {_MAX_LINK_DELAY_MS} ms", link["delay_ms"])
    jitter = num(link, "jitter_ms", path, non_negative=True, required=False) or 0.0
    if jitter > delay:
        raise fail(join(path, "jitter_ms"), f"at most delay_ms ({delay!r})", link["jitter_ms"])
    rate_path = join(path, "rate_kbit")
    rate = check_obj(link, "rate_kbit", path, nullable=True)
    for direction in ("up", "down"):
        value = num(rate, direction, rate_path, positive=True, required=False, nullable=True)
        if value is not None and value > _MAX_LINK_RATE_KBIT:
            raise fail(join(rate_path, direction), f"at most {_MAX_LINK_RATE_KBIT} kbit/s or null", value)
    loss = num(link, "loss_percent", path, non_negative=True, required=False)
    if loss is not None and loss > 100:
        raise fail(join(path, "loss_percent"), "a percentage 0..100", link["loss_percent"])
    emulation = check_str(link, "emulation", path, choices=tuple(LinkEmulation))
    check_str(link, "congestion_control", path, required=False, nullable=True, choices=tuple(CongestionControl))
    check_bool(link, "slow_start_after_idle", path, nullable=True)
    check_int(link, "queue_packets", path, low=1, high=MAX_QUEUE_PACKETS, required=False, nullable=True)
    check_int(link, "queue_bytes", path, low=1500, high=MAX_QUEUE_BYTES, required=False, nullable=True)
    check_int(link, "seed", path, high=MAX_LINK_SEED, required=False, nullable=True)
    if link.get("burst_loss") is not None:
        bursts_path = join(path, "burst_loss")
        bursts = check_obj(link, "burst_loss", path)
        for key in ("p_percent", "r_percent", "bad_loss_percent", "good_loss_percent"):
            value = num(bursts, key, bursts_path, non_negative=True, required=key in ("p_percent", "r_percent"))
            if value is not None and value > 100:
                raise fail(join(bursts_path, key), "a percentage 0..100", value)
        if bursts["r_percent"] == 0:
            raise fail(join(bursts_path, "r_percent"), "a percentage above 0 (the bad state must end)", 0)
    connection = check_str(link, "connection", path, required=False, choices=tuple(TcpConnection))
    if connection == TcpConnection.FRESH and emulation != LinkEmulation.PACKET:
        # Only the packet path puts the kernel's TCP on the link; a relay's fresh connection
        # would start slow on loopback, not on the path.
        raise fail(join(path, "connection"), 'fresh only with "emulation": "packet"', connection)


def check_placement(placement: dict[str, Any], path: str) -> None:
    """Where a job's processes ran (job_conditions.Placement): a policy, and per role lists of
    CPU numbers (non-negative integers)."""
    check_str(placement, "policy", path, choices=tuple(PlacementPolicy))
    check_str(placement, "unavailable", path, required=False, nullable=True)
    processes_path = join(path, "processes")
    processes = check_obj(placement, "processes", path, nullable=True)
    for role in processes:
        role_path = join(processes_path, role)
        process = check_obj(processes, role, processes_path, required=True)
        for key in ("allowed_cpus", "observed_cpus"):
            cpus = check_list(process, key, role_path)
            for i, cpu in enumerate(cpus):
                if not is_int(cpu) or cpu < 0:
                    raise fail(f"{join(role_path, key)}[{i}]", "a CPU number (a non-negative integer)", cpu)


_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")


def check_load(load: dict[str, Any], path: str) -> None:
    """A load job's record (job_conditions.Load): counts, rates, and per step the figures
    and the histogram's encoded form (checked as text here; decoded only by code that
    bounds what it accepts)."""
    check_int(load, "clients", path, low=1, high=MAX_CLIENTS)
    check_int(load, "server_workers", path, low=1, high=MAX_SERVER_WORKERS, required=False)
    check_str(load, "request", path, required=False)
    check_int(load, "pool", path, required=False)
    for key in (
        "duration_s",
        "warmup_s",
        "client_prepare_s",
        "server_request_s",
        "knee_per_s",
        "sustained_per_s",
        "sustained_p99_s",
    ):
        num(load, key, path, non_negative=True, required=False, nullable=True)
    for key, most in (("duration_s", MAX_DURATION_S), ("warmup_s", MAX_WARMUP_S)):
        if key in load and load[key] is not None and load[key] > most:
            raise fail(join(path, key), f"at most {most:g} s (the profile's limit)", load[key])
    check_bool(load, "saturated", path)
    if len(check_list(load, "steps", path)) > MAX_STEPS:
        raise fail(join(path, "steps"), f"at most {MAX_STEPS} steps", f"{len(load['steps'])} steps")
    cluster = check_str(load, "cluster", path, required=False, nullable=True)
    if cluster is not None and len(cluster) > MAX_CLUSTER_ADDRESS_CHARS:
        raise fail(
            join(path, "cluster"),
            f"a scheduler address (at most {MAX_CLUSTER_ADDRESS_CHARS} characters)",
            cluster[:40],
        )
    places = check_list(load, "generators", path)
    if len(places) > MAX_GENERATORS:
        raise fail(join(path, "generators"), f"at most {MAX_GENERATORS} generators", f"{len(places)} generators")
    for i, place in enumerate(places):
        where = f"{join(path, 'generators')}[{i}]"
        if not isinstance(place, dict):
            raise fail(where, "an object", place)
        # What the worker reported of itself, as the coordinator cut and bounded it
        # (app.core.load.cluster.replies).
        check_str(place, "worker", where, max_chars=MAX_CLUSTER_ADDRESS_CHARS)
        check_str(place, "host", where, max_chars=MAX_HOST_CHARS)
        check_int(place, "clients", where, low=1, high=MAX_CLIENTS)
        for key in ("clock_offset_s", "clock_uncertainty_s"):
            value = num(place, key, where, non_negative=key == "clock_uncertainty_s")
            if value is not None and abs(value) > MAX_CLOCK_OFFSET_S:
                raise fail(join(where, key), f"at most {MAX_CLOCK_OFFSET_S:,.0f} s from this machine's clock", value)
    steps_path = join(path, "steps")
    for i, step in enumerate(check_list(load, "steps", path)):
        where = f"{steps_path}[{i}]"
        check_step(step, where, generators=max(1, len(places)))
        parts = check_list(step, "generators", where)
        if len(parts) > len(places):
            raise fail(
                join(where, "generators"), f"at most one record per generator ({len(places)})", f"{len(parts)} records"
            )
        check_str(step, "incomplete", where, required=False, nullable=True)
        seen: set[int] = set()
        for k, part in enumerate(parts):
            part_path = f"{join(where, 'generators')}[{k}]"
            check_step(part, part_path)
            number = check_int(part, "generator", part_path, low=1, high=max(1, len(places)))
            if number in seen:
                raise fail(join(part_path, "generator"), "each generator once", number)
            seen.add(number or 0)
            if check_list(part, "generators", part_path):
                raise fail(join(part_path, "generators"), "none (a generator's own record)", part["generators"])
            # How late it began its share (negative: early): a finite number of seconds.
            num(part, "started_late_s", part_path, required=False, nullable=True)
        if parts:
            # The step is the merge of its generators' records: its counts are their sums.
            for key in ("sent", "completed", "missed", "clock_faults"):
                total = sum(int(part.get(key) or 0) for part in parts)
                if int(step.get(key) or 0) != total:
                    raise fail(join(where, key), f"the sum of its generators' ({total})", step.get(key))
    plausible.check_load_plausible(load, path)


def check_step(step: Any, where: str, generators: int = 1) -> None:
    """One load step's record (or one generator's record of it): at most MAX_RATE_PER_S
    offered per generator that offered it."""
    if not isinstance(step, dict):
        raise fail(where, "an object", step)
    offered = num(step, "offered_per_s", where, positive=True)
    most = MAX_RATE_PER_S * generators
    if offered is not None and offered > most:
        raise fail(join(where, "offered_per_s"), f"at most {most:,.0f} requests/s", step["offered_per_s"])
    num(step, "achieved_per_s", where, non_negative=True)
    for key in ("errors", "sent", "completed", "missed", "clock_faults"):
        check_int(step, key, where, required=False)
    check_bool(step, "generator_saturated", where)
    limit = check_str(step, "limit", where, required=False, nullable=True, choices=tuple(m.value for m in StepLimit))
    if step.get("missed") and not step["generator_saturated"] and limit != StepLimit.SERVER:
        # A step that did not send its schedule did not offer its rate: never the server's
        # figure, unless the server was shown to fall behind (its back-pressure filled the backlog).
        raise fail(
            join(where, "generator_saturated"),
            'true for a step with missed requests (or "limit": "server")',
            False,
        )
    if limit is not None and step["generator_saturated"] != (limit == StepLimit.GENERATOR):
        raise fail(
            join(where, "generator_saturated"),
            f"{limit == StepLimit.GENERATOR} for limit {limit!r}",
            step["generator_saturated"],
        )
    check_str(step, "limit_reason", where, required=False, nullable=True)
    for key in ("latency_first_p50_s", "latency_last_p50_s"):
        num(step, key, where, non_negative=True, required=False, nullable=True)
    for key in ("generator_cpu_percent", "send_lag_p99_s", "server_cpu_percent"):
        num(step, key, where, non_negative=True, required=False, nullable=True)
    check_str(step, "saturation_reason", where, required=False, nullable=True)
    latency = check_obj(step, "latency_s", where, nullable=True)
    for name in latency:
        num(latency, name, join(where, "latency_s"), non_negative=True)
    # HdrHistogram's compressed base64, as long as the generators' range and precision can
    # make it (`load_histogram.max_histogram_chars`), not a round number.
    most = max_histogram_chars()
    histogram = check_str(step, "histogram", where, required=False, nullable=True, max_chars=most)
    if histogram is not None and not _BASE64.fullmatch(histogram):
        raise fail(
            join(where, "histogram"), f"HdrHistogram's base64 form (at most {most:,} characters)", histogram[:40]
        )


def check_validation(validation: dict[str, Any], path: str) -> None:
    checked = check_int(validation, "checked", path, required=False) or 0
    failed = check_int(validation, "failed", path, required=False) or 0
    tried = check_int(validation, "tamper_tried", path, required=False) or 0
    rejected = check_int(validation, "tamper_rejected", path, required=False) or 0
    if failed > checked:
        raise fail(join(path, "failed"), f"at most checked ({checked})", failed)
    if rejected > tried:
        raise fail(join(path, "tamper_rejected"), f"at most tamper_tried ({tried})", rejected)


def check_tcp_info(tcp_info: dict[str, Any], path: str) -> None:
    """{"sender" | "receiver": {smoothed_rtt_s, rtt_var_s, segments_out, ...} or {"unavailable": reason}}."""
    for role in tcp_info:
        info = check_obj(tcp_info, role, path, required=True)
        where = join(path, role)
        if check_str(info, "unavailable", where, required=False, nullable=True) is not None:
            continue
        for key in ("smoothed_rtt_s", "rtt_var_s"):
            num(info, key, where, non_negative=True, required=False, nullable=True)
        for key in TCP_INFO_COUNTS:
            check_int(info, key, where, required=False, nullable=True)


def check_path(link_path: dict[str, Any], path: str) -> None:
    """A packet link's path over a size (link_path.LinkPath): counts a path could have."""
    for direction in ("up", "down"):
        where = join(path, direction)
        counts = check_obj(link_path, direction, path, required=True)
        for key in ("packets_in", "bytes_in", "packets_out", "bytes_out", "dropped_queue", "dropped_loss"):
            check_int(counts, key, where)
        if counts["dropped_queue"] + counts["dropped_loss"] > counts["packets_in"]:
            raise fail(join(where, "dropped_loss"), "no more drops than packets in", counts["dropped_loss"])
        num(counts, "loss_rate", where, non_negative=True, required=False, nullable=True)
        interval = check_list(counts, "loss_ci95", where, nullable=True)
        if interval and not (len(interval) == 2 and all(is_num(v) and 0 <= v <= 1 for v in interval)):
            raise fail(join(where, "loss_ci95"), "two proportions from 0 to 1", interval)
    for key in ("late_p50_s", "late_p99_s", "late_max_s"):
        num(link_path, key, path, non_negative=True, nullable=True)
    num(link_path, "emulator_cpu_s", path, non_negative=True)
    check_bool(link_path, "late", path)
    check_bool(link_path, "slow_start_after_idle", path, nullable=True)
    check_bool(link_path, "realtime", path)
    check_str(link_path, "congestion_control", path, required=False, nullable=True)
    check_int(link_path, "read_late_packets", path, required=False, nullable=True)
    check_int(link_path, "device_dropped", path, required=False, nullable=True)
    check_int(link_path, "late_samples", path, required=False, nullable=True)
    num(link_path, "late_limit_s", path, non_negative=True, required=False, nullable=True)
    num(link_path, "read_late_max_s", path, non_negative=True, required=False, nullable=True)
    check_int(link_path, "queue_packets", path, low=1, required=False, nullable=True)
    check_int(link_path, "queue_bytes", path, low=1, required=False, nullable=True)

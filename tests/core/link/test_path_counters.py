"""The packet link's shared counters: what the supervisor reads over a message size."""

from __future__ import annotations

import pytest

from app.core.link import path_counters as pc
from app.core.link.packet_line import LineCounters


def test_buckets_hold_lateness_within_nine_percent() -> None:
    assert pc.bucket_of(0.0) == 0 and pc.bucket_of(1e-6) == 0
    for late in (3e-6, 47e-6, 1.3e-3, 0.04):
        edge = pc.bucket_edge_s(pc.bucket_of(late))
        assert late <= edge <= late * 2 ** (1 / 8) + 1e-12
    assert pc.bucket_of(10.0) == pc.BUCKETS - 1


def test_the_path_over_a_size_is_the_difference_of_two_snapshots() -> None:
    counters = [0.0] * pc.SLOTS
    pc.write_lines(counters, LineCounters(5, 5000, 5, 5000), LineCounters(3, 180, 3, 180))
    counters[pc.CPU] = 1.0
    before = pc.snapshot(counters)
    pc.write_lines(counters, LineCounters(105, 150_000, 100, 145_000, 1, 4), LineCounters(53, 3180, 52, 3120, 0, 1))
    counters[pc.CPU] = 1.25
    for late in [20e-6] * 98 + [300e-6, 2e-3]:
        pc.record_release(counters, late)
    path = pc.path_over(
        before,
        pc.snapshot(counters),
        late_max_s=counters[pc.LATE_MAX],
        congestion_control="cubic",
        slow_start_after_idle=False,
        realtime=True,
    )
    assert (path.up.packets_in, path.up.dropped_queue, path.up.dropped_loss, path.down.packets_out) == (100, 1, 4, 49)
    assert path.late_p50_s == pytest.approx(pc.bucket_edge_s(pc.bucket_of(20e-6)))
    assert 300e-6 <= path.late_p99_s <= 330e-6 and path.late_max_s == 2e-3
    assert path.emulator_cpu_s == pytest.approx(0.25) and not path.late
    record = path.to_dict()
    assert record["congestion_control"] == "cubic" and record["realtime"] is True
    assert type(path).from_dict(record) == path


def test_a_size_with_nothing_released_has_no_lateness() -> None:
    counters = [0.0] * pc.SLOTS
    path = pc.path_over(
        pc.snapshot(counters),
        pc.snapshot(counters),
        late_max_s=0.0,
        congestion_control=None,
        slow_start_after_idle=None,
        realtime=False,
    )
    assert (path.late_p50_s, path.late_p99_s, path.late_max_s, path.late) == (None, None, None, False)

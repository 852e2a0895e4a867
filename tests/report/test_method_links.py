"""The report's Method says how each linked job's link was emulated, with the settings
its figures rest on (queue, congestion control, warm or fresh connections), and how many
jobs the emulator ran late for."""

from __future__ import annotations

from dataclasses import replace

from app.core.records.job_conditions import Link
from app.core.records.link_path import LinkPath, PathDirection
from app.report.content import build_report
from app.report.model import Paragraph
from tests.helpers import records

PACKET = Link(None, 20.0, 0.0, 8000.0, 8000.0, 1.0, "packet", congestion_control="cubic")
DIRECTION = PathDirection(1000, 1_500_000, 990, 1_485_000, 0, 10)
PATH = LinkPath(DIRECTION, DIRECTION, 5e-5, 2e-4, 3e-4, 0.1, "cubic", True, queue_packets=1000, queue_bytes=1_500_000)


def _method(jobs: list) -> str:
    report = build_report(records.run(jobs=jobs))
    method = next(section for section in report.sections if section.title == "Method")
    return " ".join(block.text for block in method.blocks if isinstance(block, Paragraph))


def _session(index: int, **fields: object) -> object:
    return records.job(index=index, mode="loopback", metrics={"rtt": [0.042] * 10}, **fields)


def test_the_packet_path_is_described_with_its_queue_control_and_connections() -> None:
    text = _method(
        [
            _session(0, link=PACKET, path=PATH),
            _session(1, link=replace(PACKET, connection="fresh"), path=replace(PATH, late_p99_s=9e-4)),
        ]
    )
    assert "2 of this run's measured jobs ran over the **packet path**" in text
    assert "drop-tail queue (1,000 packets or 1.5 MB)" in text and "The kernel's own TCP runs over it (cubic)" in text
    assert "1 of them sent every timed message and floor ping-pong on a fresh connection" in text
    assert "the others used the session's warm connection" in text
    assert "1 measured job(s) carry the link-emulator-late warning" in text
    assert "stream relay" not in text
    all_fresh = _method([_session(0, link=replace(PACKET, connection="fresh"), path=PATH)])
    assert "All of them sent every timed message" in all_fresh and "the others" not in all_fresh
    assert "none ran later than its limit" in all_fresh


def test_the_stream_relay_is_described_by_what_it_leaves_out() -> None:
    relay = replace(PACKET, emulation="delay-line", loss_percent=0.0, congestion_control=None)
    text = _method([_session(0, link=relay), _session(1)])
    assert "1 of this run's measured jobs ran over the **stream relay**" in text
    assert "no TCP dynamics on the path (no slow start, no header bytes, no loss)" in text
    assert "packet path" not in text
    assert "packet path" not in _method([_session(0)]) and "stream relay" not in _method([_session(0)])


def test_the_path_lines_give_each_direction_s_loss_with_its_interval_and_say_when_it_assumes_independence() -> None:
    from app.core.records.job_conditions import BurstLoss
    from app.report.tcp_info import path_lines

    independent = [
        line.replace("\u202f", " ").replace("\u00a0", " ") for line in path_lines(_session(0, link=PACKET, path=PATH))
    ]
    assert independent[0] == "path (up): 1 000 packets, 10 lost (1.00%, 95 % 0.54%–1.83%)"
    assert (
        independent[2].startswith("emulator: released late by p50 50") and "congestion control cubic" in independent[2]
    )
    bursty = replace(PACKET, burst_loss=BurstLoss(1.0, 25.0))
    lines = path_lines(_session(0, link=bursty, path=PATH))
    assert "95 % if independent 0.54%–1.83%" in lines[0] and "95 % if independent" in lines[1]
    assert path_lines(_session(0)) == []  # no packet path, nothing to say

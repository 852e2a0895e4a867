"""TCP_INFO: the struct parsed at the kernel's offsets, short structs, other OSes, real
sockets, a loopback job's record of both ends, its JSON, and a peer's report checked."""

from __future__ import annotations

import json
import math
import socket
import struct
import sys
from collections.abc import Iterator
from dataclasses import fields
from typing import Any

import pytest

from app.core.profile.files import parse_profile
from app.core.records.job_tcp_info import TcpInfo
from app.core.results.check import check_job, check_results
from app.core.results.errors import ResultsDataError
from app.core.results.model import JobResult, RunResult
from app.core.run.runner import Runner
from app.core.session.protocol import PeerLied, parse_tcp_info
from app.core.transport import tcpinfo
from app.core.vocab import Role
from tests.helpers import records

LINUX = sys.platform.startswith("linux")

#: Field offsets in struct tcp_info (include/uapi/linux/tcp.h), written out here apart from
#: the module's table: (offset, format, value).
KNOWN = {
    "snd_mss": (16, "I", 65483),
    "rtt": (68, "I", 41),
    "rttvar": (72, "I", 7),
    "snd_cwnd": (80, "I", 10),
    "total_retrans": (100, "I", 2),
    "bytes_acked": (120, "Q", 5 << 32),
    "bytes_received": (128, "Q", 999),
    "segs_out": (136, "I", 12),
    "segs_in": (140, "I", 11),
    "data_segs_in": (152, "I", 9),
    "data_segs_out": (156, "I", 10),
}


def _struct(length: int = 280, **values: int) -> bytes:
    """A struct tcp_info of `length` bytes with KNOWN's values (or `values`) at their offsets,
    and 0xAB in every other byte: a parser reading a wrong offset reads garbage."""
    buffer = bytearray(b"\xab" * max(length, 160))
    for name, (offset, kind, value) in KNOWN.items():
        struct.pack_into("=" + kind, buffer, offset, values.get(name, value))
    return bytes(buffer[:length])


def test_the_layout_names_every_field_of_a_reading() -> None:
    assert {f.name for f in fields(tcpinfo.KernelReading)} == set(KNOWN)


def test_a_hand_built_struct_parses_at_the_kernels_offsets() -> None:
    reading = tcpinfo.parse(_struct())
    assert reading == tcpinfo.KernelReading(**{name: value for name, (_, _, value) in KNOWN.items()})


def test_fields_beyond_the_length_the_kernel_filled_are_none_not_garbage() -> None:
    # 104 bytes: a kernel before 4.1 (no bytes_acked, no segment counts).
    old = tcpinfo.parse(_struct(104))
    assert (old.rtt, old.snd_cwnd, old.total_retrans, old.snd_mss) == (41, 10, 2, 65483)
    assert old.bytes_acked is None and old.segs_out is None and old.data_segs_out is None
    # 144 bytes: 4.2 (segment counts, no data segments); a field cut in half is None too.
    assert tcpinfo.parse(_struct(144)).segs_in == 11 and tcpinfo.parse(_struct(144)).data_segs_in is None
    assert tcpinfo.parse(_struct(127)).bytes_acked is None
    info = tcpinfo.window(tcpinfo.parse(_struct(104)), tcpinfo.parse(_struct(104, total_retrans=5)))
    assert info.retransmits_total == 3 and info.segments_out is None and info.bytes_acked is None
    assert tcpinfo.parse(b"") == tcpinfo.KernelReading()


def test_a_window_takes_differences_of_counters_and_the_end_of_the_rest() -> None:
    start = tcpinfo.parse(_struct(segs_out=2**32 - 3, segs_in=100, bytes_acked=1000, rtt=900, snd_cwnd=10))
    end = tcpinfo.parse(_struct(segs_out=4, segs_in=150, bytes_acked=66536, rtt=41, snd_cwnd=20))
    info = tcpinfo.window(start, end, exchanges=7)
    assert info.segments_out == 7  # a u32 counter that wrapped
    assert (info.segments_in, info.bytes_acked, info.retransmits_total) == (50, 65536, 0)
    assert info.smoothed_rtt_s == pytest.approx(41e-6) and info.rtt_var_s == pytest.approx(7e-6)
    assert (info.congestion_window_segments, info.mss_bytes, info.exchanges) == (20, 65483, 7)
    assert info.per_exchange(info.segments_out) == 1.0


def test_elsewhere_there_is_a_reason_never_zeros() -> None:
    assert tcpinfo.unavailable_reason("linux") is None
    reason = tcpinfo.unavailable_reason("darwin")
    assert reason is not None and reason.startswith("not available on this OS")
    info = tcpinfo.window(tcpinfo.Unavailable(reason), tcpinfo.Unavailable(reason))
    assert info.to_dict() == {"unavailable": reason}
    assert TcpInfo.from_dict(info.to_dict()) == info
    assert tcpinfo.window(tcpinfo.parse(_struct()), tcpinfo.Unavailable("gone")).unavailable == "gone"
    unix_a, unix_b = socket.socketpair()
    with unix_a, unix_b:
        assert tcpinfo.read(unix_a) == tcpinfo.Unavailable("not a TCP connection")


@pytest.fixture
def tcp_pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    with socket.create_server(("127.0.0.1", 0)) as server:
        client = socket.create_connection(server.getsockname(), timeout=5)
        accepted, _ = server.accept()
        with client, accepted:
            for sock in (client, accepted):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            yield client, accepted


@pytest.mark.skipif(not LINUX, reason="TCP_INFO is Linux's")
def test_a_real_loopback_connection_gives_plausible_values(tcp_pair: tuple[socket.socket, socket.socket]) -> None:
    client, server = tcp_pair
    start = tcpinfo.read(client)
    for _ in range(10):
        client.sendall(b"x" * 100)
        assert len(server.recv(4096)) == 100
        server.sendall(b"y")
        assert client.recv(16) == b"y"
    info = tcpinfo.window(start, tcpinfo.read(client), exchanges=10)
    assert info.unavailable is None
    assert info.segments_out is not None and 10 <= info.segments_out <= 30
    assert info.bytes_acked == 1000 and info.bytes_received == 10
    assert info.smoothed_rtt_s is not None and 0 < info.smoothed_rtt_s < 1
    assert info.retransmits_total == 0
    assert info.congestion_window_segments and info.mss_bytes and info.mss_bytes > 1000


# --- the record and its JSON ------------------------------------------------------------

SENDER = TcpInfo(
    smoothed_rtt_s=6.1e-05,
    rtt_var_s=8.6e-05,
    retransmits_total=0,
    segments_out=112,
    segments_in=112,
    data_segments_out=112,
    data_segments_in=112,
    bytes_acked=11488,
    bytes_received=3007,
    congestion_window_segments=18,
    mss_bytes=32768,
    exchanges=112,
)


def _job(**changes: Any) -> JobResult:
    return records.job("r", 0, 64, params={}, label="AES-GCM", mode="loopback", **changes)


def test_a_job_without_tcp_info_has_no_key_and_one_with_it_reads_back() -> None:
    assert "tcp_info" not in _job().to_dict()
    job = _job(tcp_info={Role.SENDER: SENDER, Role.RECEIVER: TcpInfo(unavailable="not available on this OS (X)")})
    data = json.loads(json.dumps(job.to_dict(), allow_nan=False))
    assert data["tcp_info"]["receiver"] == {"unavailable": "not available on this OS (X)"}
    assert data["tcp_info"]["sender"]["segments_out"] == 112
    check_job(data, "jobs[0]")
    assert JobResult.from_dict(data).tcp_info == job.tcp_info
    assert JobResult.from_dict(data).to_dict() == data


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("segments_out", -1, "a non-negative integer or null"),
        ("segments_out", 1.5, "a non-negative integer or null"),
        ("smoothed_rtt_s", -1e-6, "a non-negative number or null"),
        ("smoothed_rtt_s", math.nan, "a finite number"),
        ("rtt_var_s", "fast", "a non-negative number or null"),
        ("unavailable", 3, "a string or null"),
    ],
)
def test_results_check_rejects_a_bad_tcp_info_field(key: str, value: Any, expected: str) -> None:
    data = _job(tcp_info={Role.SENDER: SENDER}).to_dict()
    data["tcp_info"]["sender"][key] = value
    with pytest.raises(ResultsDataError) as caught:
        check_job(data, "jobs[0]")
    assert caught.value.field.startswith("jobs[0].tcp_info.sender")
    assert expected in str(caught.value)


def test_results_check_rejects_a_tcp_info_that_is_not_an_object() -> None:
    data = _job().to_dict()
    data["tcp_info"] = {"sender": [1]}
    with pytest.raises(ResultsDataError, match=r"jobs\[0\].tcp_info.sender: expected an object"):
        check_job(data, "jobs[0]")


# --- the receiver's report, believed only when it can be true ----------------------------


def _report(**changes: Any) -> dict[str, Any]:
    info = SENDER.to_dict() | {"bytes_acked": 3000, "bytes_received": 11000, "exchanges": None}
    info.update(changes)
    return {"cpu_seconds": 0.001, "tcp_info": info}


def test_a_receivers_tcp_info_is_read_with_the_senders_exchange_count() -> None:
    info = parse_tcp_info(_report(exchanges=5), 112, SENDER)
    assert info is not None and info.exchanges == 112 and info.bytes_received == 11000
    assert parse_tcp_info({"cpu_seconds": 0.001}, 112) is None  # a receiver from before TCP_INFO
    assert parse_tcp_info(_report(segments_in=None), 112, SENDER).segments_in is None  # type: ignore[union-attr]
    unavailable = parse_tcp_info({"tcp_info": {"unavailable": "not on \x1b[2J Windows"}}, 3)
    assert unavailable == TcpInfo(unavailable="not on \\x1b[2J Windows")


@pytest.mark.parametrize(
    ("report", "reason"),
    [
        ({"tcp_info": [1]}, "tcp_info = [1] is not an object"),
        ({"tcp_info": {"unavailable": 0}}, "unavailable = 0 is not a text"),
        (_report(segments_out=-1), "segments_out = -1 is not a count"),
        (_report(segments_out=True), "segments_out = True is not a count"),
        (_report(segments_out=1.0), "segments_out = 1.0 is not a count"),
        (_report(segments_out=2**32), "segments_out = 4294967296 is not a count"),
        (_report(mss_bytes=70000), "mss_bytes = 70000 is not a count 0..65535"),
        (_report(bytes_acked=2**60), "bytes_acked = 1152921504606846976 is not a count"),
        (_report(smoothed_rtt_s=-1), "smoothed_rtt_s = -1 is not a finite non-negative number"),
        (_report(smoothed_rtt_s="1"), "smoothed_rtt_s = '1' is not a number"),
        (_report(rtt_var_s=1e6), "rtt_var_s = 1000000.0 is longer than the kernel can hold"),
        (_report(retransmits_total=200), "retransmits_total = 200 is more than its segments_out = 112"),
        (_report(data_segments_in=113), "data_segments_in = 113 is more than its segments_in = 112"),
        (_report(bytes_received=11489), "bytes_received = 11489 is more than the 11488 bytes the sender's kernel"),
    ],
    ids=lambda value: value if isinstance(value, str) and len(value) < 30 else None,
)
def test_a_receivers_tcp_info_that_cannot_be_true_is_a_lie(report: dict[str, Any], reason: str) -> None:
    with pytest.raises(PeerLied) as caught:
        parse_tcp_info(report, 112, SENDER)
    assert reason in str(caught.value)
    assert str(caught.value).startswith("SIZE_END_OK tcp_info")


@pytest.mark.parametrize(
    ("report", "reason"),
    [
        (_report(smoothed_rtt_s=4000.0), "smoothed_rtt_s = 4000 s is longer than the exchanges could make"),
        (_report(rtt_var_s=1.0), "rtt_var_s = 1 s is longer than the exchanges could make"),
        (_report(segments_out=2**32 - 1), "segments_out = 4294967295 is more than the 112 exchanges could make"),
        (_report(segments_in=2**31), "segments_in = 2147483648 is more than the 112 exchanges could make"),
        (
            _report(data_segments_out=100_000, segments_out=100_000),
            "data_segments_out = 100000 is more than the 112 exchanges",
        ),
        (_report(bytes_acked=3008), "bytes_acked = 3008 is more than the 3007 bytes the sender's kernel received"),
    ],
    ids=["rtt-4000-s", "rttvar", "segments-out", "segments-in", "data-segments", "bytes-acked"],
)
def test_a_receivers_tcp_info_beyond_what_the_exchanges_could_make_is_a_lie(
    report: dict[str, Any], reason: str
) -> None:
    """Within the kernel's types, beyond the exchange: the segments against the bytes each
    way (at least one byte a data segment, each byte sent at most 16 times, acknowledgements
    per segment and per exchange), the smoothed RTT against the longest round trip the
    sender timed (here 0.05 s: at most 0.5 s with acknowledgements held back)."""
    with pytest.raises(PeerLied) as caught:
        parse_tcp_info(report, 112, SENDER, longest_round_trip_s=0.05)
    assert reason in str(caught.value), str(caught.value)


def test_a_receivers_honest_tcp_info_passes_the_exchange_s_bounds() -> None:
    honest = _report(smoothed_rtt_s=0.3, rtt_var_s=0.1, segments_out=500, segments_in=600, retransmits_total=20)
    assert parse_tcp_info(honest, 112, SENDER, longest_round_trip_s=0.05) is not None


# --- end to end ------------------------------------------------------------------------------


@pytest.mark.skipif(not LINUX, reason="TCP_INFO is Linux's")
def test_a_loopback_job_records_both_ends_per_size() -> None:
    profile = parse_profile(
        {
            "name": "kernel",
            "jobs": [
                {
                    "scheme": "aes-gcm",
                    "mode": "loopback",
                    "message_sizes": [64, 100_000],
                    "samples": 8,
                    "warmup": 1,
                    "keygen_samples": 1,
                    "tamper": 2,
                }
            ],
        }
    )
    run = Runner(profile).run()
    small, large = run.jobs
    exchanges = 3 + 2 * 1 + 8 + 8 + 2  # SIZE, TRACE, SIZE_END; floor and messages with warm-up; tampered
    for job in run.jobs:
        assert job.status == "ok", job.error
        assert set(job.tcp_info) == {Role.SENDER, Role.RECEIVER}
        for info in job.tcp_info.values():
            assert info.unavailable is None and info.exchanges == exchanges
            assert info.smoothed_rtt_s is not None and info.smoothed_rtt_s > 0
            assert info.retransmits_total == 0
        sender, receiver = job.tcp_info[Role.SENDER], job.tcp_info[Role.RECEIVER]
        assert sender.segments_out is not None and sender.segments_out >= exchanges
        assert receiver.bytes_received is not None and sender.bytes_acked is not None
        assert 0 < receiver.bytes_received <= sender.bytes_acked
        assert not any("link process" in note for note in job.notes)
    # A 100 kB payload is more than one loopback MSS (at most 64 KiB): more segments per exchange.
    assert large.tcp_info[Role.SENDER].data_segments_out > small.tcp_info[Role.SENDER].data_segments_out  # type: ignore[operator]
    data = json.loads(json.dumps(run.to_dict(), allow_nan=False))
    check_results(data)
    assert RunResult.from_dict(data).jobs[1].tcp_info == large.tcp_info


@pytest.mark.skipif(not LINUX, reason="TCP_INFO is Linux's")
def test_over_a_link_process_both_ends_are_recorded_and_the_note_says_whose_connection() -> None:
    profile = parse_profile(
        {
            "name": "kernel over a link",
            "jobs": [
                {
                    "scheme": "aes-gcm",
                    "mode": "loopback",
                    "message_sizes": [64],
                    "samples": 3,
                    "warmup": 0,
                    "keygen_samples": 1,
                    "tamper": 1,
                    "link": {"delay_ms": 2},
                    "link_emulation": "stream-relay",  # what the note is about: each end talks to the relay
                }
            ],
        }
    )
    (job,) = Runner(profile).run().jobs
    assert job.status == "ok", job.error
    assert set(job.tcp_info) == {Role.SENDER, Role.RECEIVER}
    assert all(info.segments_out for info in job.tcp_info.values())
    assert any("TCP_INFO is of each end's connection to the link process" in note for note in job.notes)

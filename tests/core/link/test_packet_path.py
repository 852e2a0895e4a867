"""The packet path end to end: the kernel's own TCP between sender and receiver in network
namespaces of their own, over 20 ms each way, with and without loss.

Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) and /dev/net/tun, as the packet path itself
does; where those are missing the test says why and skips: the refusal is tested on its
own (tests/core/profile/test_profile_links.py)."""

from __future__ import annotations

import threading

import pytest

from app.core.profile.files import parse_profile
from app.core.run.runner import Runner
from app.core.transport.netns import packet_path_refusal, try_packet_path

REFUSAL = packet_path_refusal() or try_packet_path()
pytestmark = pytest.mark.skipif(REFUSAL is not None, reason=f"no packet path here: {REFUSAL}")


def _run(link: dict[str, object], sizes: list[int], samples: int) -> list:
    job = {
        "scheme": "aes-gcm",
        "mode": "loopback",
        "message_sizes": sizes,
        "samples": samples,
        "warmup": 1,
        "keygen_samples": 1,
        "link": link,
        "link_emulation": "packet",
    }
    run = Runner(parse_profile({"name": "packet path", "jobs": [job]}), cancel=threading.Event()).run()
    assert [j.status for j in run.jobs] == ["ok"] * len(sizes), [j.error for j in run.jobs]
    return run.jobs


def test_tcp_runs_over_the_emulated_path_and_the_path_is_recorded() -> None:
    small, large = _run({"delay_ms": 20, "rate_kbit": 8000}, [1024, 16384], samples=4)
    for job in (small, large):
        assert job.link.emulation == "packet"
        sender = job.tcp_info["sender"]
        assert sender.smoothed_rtt_s is not None and 0.038 <= sender.smoothed_rtt_s <= 0.06  # the 40 ms path
        assert job.path is not None and job.path.up.packets_out > 0 and job.path.down.packets_out > 0
        assert job.path.up.dropped_loss == job.path.up.dropped_queue == 0
        assert job.path.congestion_control  # the namespace's default, read back
        assert job.path.device_dropped == 0  # the devices' own counters were read, and nothing was lost there
    # within the initial window: one round trip plus 1 KiB and the headers at 8 Mbit/s
    assert 0.040 < small.metrics["rtt"].stats.median < 0.045
    # a warm connection: 16 KiB arrives in one flight (the window grew on the first sample)
    assert 0.055 < large.metrics["rtt"].stats.median < 0.065
    assert large.path.up.bytes_out > 4 * 16384  # every sample's message crossed as IP packets


def test_loss_is_emulated_and_tcp_retransmits() -> None:
    (job,) = _run({"delay_ms": 20, "rate_kbit": 8000, "loss_percent": 5}, [65536], samples=6)
    path = job.path
    assert path is not None and path.up.dropped_loss > 0
    low, high = path.up.to_dict()["loss_ci95"]
    assert low <= 0.05 <= high or path.up.loss_trials < 200  # the loss asked for, within its interval
    assert job.tcp_info["sender"].retransmits_total > 0
    assert path.late_p99_s is not None
    assert path.late == (path.late_p99_s > path.limit_s or path.reads_late or bool(path.device_dropped))


def test_a_job_sets_its_congestion_control_and_slow_start_after_idle() -> None:
    (job,) = _run_with({"tcp_congestion_control": "cubic", "tcp_slow_start_after_idle": False})
    assert (job.link.congestion_control, job.link.slow_start_after_idle) == ("cubic", False)
    assert (job.path.congestion_control, job.path.slow_start_after_idle) == ("cubic", False)
    assert job.label.endswith("(TCP cubic, no slow start after idle)")


def test_a_message_over_the_initial_window_pays_a_round_trip_more_on_a_fresh_connection() -> None:
    """16 KiB is more than the initial window (10 segments, 14,480 bytes): on a fresh
    connection the last segments wait for the first acknowledgement, about one round trip
    (40 ms) less the serialization they overlap; on the warm one, the window has grown."""
    link = {"link": {"delay_ms": 20, "rate_kbit": 8000}, "message_sizes": [16384], "samples": 4, "warmup": 1}
    (fresh,) = _run_with({**link, "tcp_connection": "fresh"})
    (warm,) = _run_with(link)
    assert fresh.link.connection == "fresh" and warm.link.connection == "warm"
    extra = fresh.metrics["rtt"].stats.median - warm.metrics["rtt"].stats.median
    assert 0.015 < extra < 0.045, extra  # measured: 27 ms (84.3 ms against 57.4 ms)
    connect = fresh.metrics["connect"].stats.median  # SYN to SYN-ACK: one round trip
    assert 0.040 <= connect < 0.045
    assert "connect" not in warm.metrics
    assert fresh.label.endswith("(fresh connections)")


def test_bursty_loss_and_a_short_queue_drop_packets_each_by_its_cause() -> None:
    """A queue of 8 packets at 2 Mbit/s overflows when a 64 KiB flight arrives at once; a
    bad state that lasts 4 packets loses them in runs. The path says which drop was which,
    and records the queue it held."""
    link = {"delay_ms": 5, "rate_kbit": 2000, "burst_loss": {"p_percent": 2, "r_percent": 25}, "queue_packets": 8}
    (job,) = _run_with({"link": link, "message_sizes": [65536], "samples": 3})
    path = job.path
    assert path is not None and (path.queue_packets, path.queue_bytes) == (8, 1_500_000)
    assert path.up.dropped_queue > 0 and path.up.dropped_loss > 0
    assert job.link.burst_loss is not None and job.tcp_info["sender"].retransmits_total > 0


def _run_with(fields: dict[str, object]) -> list:
    job = {
        "scheme": "aes-gcm",
        "mode": "loopback",
        "message_sizes": [4096],
        "samples": 3,
        "warmup": 0,
        "keygen_samples": 1,
        "link": {"delay_ms": 5},
        "link_emulation": "packet",
        **fields,
    }
    run = Runner(parse_profile({"name": "packet tcp", "jobs": [job]}), cancel=threading.Event()).run()
    assert [j.status for j in run.jobs] == ["ok"], [j.error for j in run.jobs]
    return run.jobs


def test_a_tls13_job_runs_its_handshakes_over_the_path_with_loss() -> None:
    """X25519MLKEM768 with an ML-DSA-65 chain over 20 ms, 8 Mbit/s and 1 % loss: each sample a
    new TCP connection on the path, its handshake at least the path's round trip."""
    job = {
        "scheme": "tls13",
        "params": {"group": "X25519MLKEM768", "certificate": "ml-dsa-65"},
        "mode": "loopback",
        "samples": 5,
        "warmup": 1,
        "tamper": 1,
        "link": {"delay_ms": 20, "rate_kbit": 8000, "loss_percent": 1},
    }
    run = Runner(parse_profile({"name": "tls over the path", "jobs": [job]}), cancel=threading.Event()).run()
    (result,) = run.jobs
    assert result.status == "ok", result.error
    assert result.link is not None and result.link.emulation == "packet" and result.link.seed is not None
    record = result.tls
    assert record is not None and (record.group, record.signature) == ("X25519MLKEM768", "mldsa65")
    assert record.chain_signatures == ("ML-DSA-65",) and record.server_bytes.low > 9_000
    assert result.metrics["connect"].stats.median >= 0.040  # SYN to SYN-ACK: one round trip
    assert result.metrics["handshake"].stats.median >= 0.040  # ClientHello to Finished: at least one more
    assert result.metrics["first_byte"].stats.median >= 0.120  # connect, handshake, request and response
    assert result.path is not None and result.path.up.packets_out > 0
    assert result.tcp_info["sender"].smoothed_rtt_s is not None and result.tcp_info["sender"].smoothed_rtt_s >= 0.038

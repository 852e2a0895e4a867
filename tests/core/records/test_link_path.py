"""A packet link's path in a results file: read back whole, and every damage refused naming
the field (a results file is input from anywhere)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from app.core.records.link_path import LinkPath, PathDirection
from app.core.results.model import ResultsFileError, parse_results_text, to_json
from tests.helpers.paths import GOLDEN

PATH = LinkPath(
    up=PathDirection(1308, 1_928_804, 1292, 1_904_804, 0, 16),
    down=PathDirection(807, 46_455, 796, 45_826, 0, 11),
    late_p50_s=4.9e-05,
    late_p99_s=0.000197,
    late_max_s=0.000206,
    emulator_cpu_s=0.107,
    congestion_control="bbr",
    slow_start_after_idle=True,
    realtime=True,
)


def _with_path() -> dict[str, Any]:
    data = json.loads((GOLDEN / "results-v1.json").read_text(encoding="utf-8"))
    data["jobs"][1]["path"] = PATH.to_dict()
    return data


def test_a_path_reads_back_whole_and_writes_the_same_json() -> None:
    run = parse_results_text(json.dumps(_with_path()), "p.json")
    assert run.jobs[1].path == PATH
    assert json.loads(to_json(run))["jobs"][1]["path"] == PATH.to_dict()
    assert "path" not in json.loads(to_json(run))["jobs"][0]  # absent where there was none


@pytest.mark.parametrize(
    ("keys", "value", "message"),
    [
        (["up", "packets_in"], -1, "jobs[1].path.up.packets_in: expected a non-negative integer"),
        (["up", "dropped_loss"], 2000, "jobs[1].path.up.dropped_loss: expected no more drops than packets in"),
        (["down", "loss_ci95"], [0.5], "jobs[1].path.down.loss_ci95: expected two proportions from 0 to 1"),
        (["down", "loss_ci95"], [0.1, 7], "jobs[1].path.down.loss_ci95: expected two proportions from 0 to 1"),
        (["late_p99_s"], float("nan"), "jobs[1].path.late_p99_s: expected a finite number, got NaN"),
        (["late_p50_s"], -1e-6, "jobs[1].path.late_p50_s: expected a non-negative number"),
        (["emulator_cpu_s"], -3, "jobs[1].path.emulator_cpu_s: expected a non-negative number"),
        (["realtime"], "yes", "jobs[1].path.realtime: expected true or false"),
        (["congestion_control"], 3, "jobs[1].path.congestion_control: expected a string or null"),
        (["up"], None, "jobs[1].path.up: required field is missing"),
    ],
)
def test_a_damaged_path_is_refused_naming_the_field(keys: list[str], value: Any, message: str) -> None:
    data = _with_path()
    target = data["jobs"][1]["path"]
    for key in keys[:-1]:
        target = target[key]
    if value is None:
        del target[keys[-1]]
    else:
        target[keys[-1]] = copy.deepcopy(value)
    with pytest.raises(ResultsFileError) as refused:
        parse_results_text(json.dumps(data), "p.json")
    assert message in str(refused.value)


PACKET_LINK = {
    "name": None,
    "delay_ms": 20.0,
    "jitter_ms": 0.0,
    "rate_kbit": {"up": 8000.0, "down": 8000.0},
    "loss_percent": 1.0,
    "emulation": "packet",
    "connection": "fresh",
}


def test_a_fresh_connection_link_reads_back_and_a_warm_one_writes_as_before() -> None:
    data = _with_path()
    data["jobs"][1]["link"] = dict(PACKET_LINK)
    run = parse_results_text(json.dumps(data), "p.json")
    assert run.jobs[1].link is not None and run.jobs[1].link.connection == "fresh"
    assert json.loads(to_json(run))["jobs"][1]["link"] == PACKET_LINK
    data["jobs"][1]["link"].pop("connection")
    warm = parse_results_text(json.dumps(data), "p.json")
    assert warm.jobs[1].link is not None and warm.jobs[1].link.connection == "warm"
    assert "connection" not in json.loads(to_json(warm))["jobs"][1]["link"]  # files before it stay as they were


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"connection": "cold"}, 'jobs[1].link.connection: expected one of "warm", "fresh"'),
        ({"connection": 1}, 'jobs[1].link.connection: expected one of "warm", "fresh"'),
        # a relay's fresh connection would start slow on loopback, not on the path
        ({"emulation": "delay-line"}, 'jobs[1].link.connection: expected fresh only with "emulation": "packet"'),
        ({"queue_packets": 0}, "jobs[1].link.queue_packets: expected an integer 1..1000000"),
        ({"queue_bytes": 100}, "jobs[1].link.queue_bytes: expected an integer 1500..1000000000"),
        ({"burst_loss": {"p_percent": 1}}, "jobs[1].link.burst_loss.r_percent: required field is missing"),
        ({"burst_loss": {"p_percent": 1, "r_percent": 0}}, "jobs[1].link.burst_loss.r_percent: expected a percentage"),
        (
            {"burst_loss": {"p_percent": 101, "r_percent": 5}},
            "jobs[1].link.burst_loss.p_percent: expected a percentage",
        ),
        ({"burst_loss": "gilbert"}, "jobs[1].link.burst_loss: expected an object"),
    ],
)
def test_a_link_s_connection_is_checked(changes: dict[str, Any], message: str) -> None:
    data = _with_path()
    data["jobs"][1]["link"] = {**PACKET_LINK, **changes}
    with pytest.raises(ResultsFileError) as refused:
        parse_results_text(json.dumps(data), "p.json")
    assert message in str(refused.value)


def test_bursty_loss_and_the_queue_read_back_from_the_link_and_the_path() -> None:
    data = _with_path()
    bursts = {"p_percent": 1.0, "r_percent": 25.0, "bad_loss_percent": 100.0, "good_loss_percent": 0.0}
    data["jobs"][1]["link"] = {**PACKET_LINK, "burst_loss": bursts, "queue_packets": 64, "queue_bytes": 96_000}
    data["jobs"][1]["path"].update({"queue_packets": 64, "queue_bytes": 96_000})
    run = parse_results_text(json.dumps(data), "p.json")
    link, path = run.jobs[1].link, run.jobs[1].path
    assert link is not None and link.burst_loss is not None and link.burst_loss.mean_percent == pytest.approx(100 / 26)
    assert (link.queue_packets, link.queue_bytes) == (64, 96_000)
    assert path is not None and (path.queue_packets, path.queue_bytes) == (64, 96_000)
    written = json.loads(to_json(run))["jobs"][1]
    assert written["link"] == data["jobs"][1]["link"] and written["path"]["queue_packets"] == 64
    data["jobs"][1]["path"]["queue_bytes"] = 0
    with pytest.raises(ResultsFileError, match=r"jobs\[1\]\.path\.queue_bytes: expected an integer >= 1"):
        parse_results_text(json.dumps(data), "p.json")


@pytest.mark.parametrize("tls", [False, True], ids=["session", "tls13"])
def test_late_samples_are_at_most_the_size_s_timed_round_trips(tls: bool) -> None:
    """A session's timed round trips are its floor pings and messages (8 + 8 in the golden
    job); a tls13 job's are its connections, one `connect` sample each (10 here)."""
    data = _with_path()
    job = data["jobs"][1]
    if tls:
        metrics = job["metrics"]
        metrics["connect"] = metrics.pop("handshake_rtt")
        for name in ("floor_rtt", "rtt"):
            del metrics[name]
    timed = 10 if tls else 16
    job["path"]["late_samples"] = timed
    assert parse_results_text(json.dumps(data), "p.json").jobs[1].path.late_samples == timed
    job["path"]["late_samples"] = timed + 1
    with pytest.raises(ResultsFileError) as refused:
        parse_results_text(json.dumps(data), "p.json")
    assert f"jobs[1].path.late_samples: expected at most the {timed} timed round trips" in str(refused.value)

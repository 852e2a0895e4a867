"""An error in a value that came from one of `run`'s options names the option, not the file.

`run lte.json --link '{"delay_ms": 5, "loss_percent": 1}' --link-emulation stream-relay`
said "lte.json: jobs[0].link.loss_percent: ... set "link_emulation": "packet"": both
values had come from options, yet the message sent the reader into the file. Each option
of `run` whose value the jobs' checks can refuse is tried here (with a value the file did
not have): the line names the option (and the field inside its value), speaks of another
option's value in that option's words, and still names the file where the file's value
is at fault.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.cli.main import main

Capture = pytest.CaptureFixture[str]

LOOPBACK = {"scheme": "aes-gcm", "backend": "cryptography", "mode": "loopback", "message_sizes": [64]}
LOAD = {
    "scheme": "x25519",
    "backend": "cryptography",
    "mode": "load",
    "message_sizes": [32],
    "clients": 2,
    "rates": [100],
    "duration_s": 1,
}


def _profile(tmp_path: Path, *jobs: dict[str, Any]) -> str:
    path = tmp_path / "lte.json"
    path.write_text(json.dumps({"format_version": 1, "name": "lte", "jobs": list(jobs)}))
    return str(path)


def _refused(argv: list[str], capsys: Capture) -> str:
    """The one error line `run ARGV --no-store` says; it exits 2 and runs nothing."""
    assert main(["run", *argv, "--no-store", "--quiet"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_loss_from_link_on_the_relay_from_link_emulation_names_both_options(tmp_path: Path, capsys: Capture) -> None:
    profile = _profile(tmp_path, {**LOOPBACK, "link": "lte"})
    line = _refused(
        [profile, "--link", '{"delay_ms": 5, "loss_percent": 1}', "--link-emulation", "stream-relay"], capsys
    )
    assert line.startswith("cryptobench: error: --link.loss_percent: 1 % loss asked for: ")
    assert "lte.json" not in line and "jobs[" not in line and '"link_emulation"' not in line


@pytest.mark.parametrize(
    ("link", "field"),
    [
        ('{"delay_ms": 5, "jitter_ms": 10}', "--link.jitter_ms: "),
        ('{"delay_ms": 5, "queue_packets": 10}', "--link.queue_packets: "),
    ],
)
def test_a_link_option_s_figure_is_named_inside_the_option(
    tmp_path: Path, capsys: Capture, link: str, field: str
) -> None:
    profile = _profile(tmp_path, LOOPBACK)
    line = _refused([profile, "--link", link, "--link-emulation", "stream-relay"], capsys)
    assert line.startswith(f"cryptobench: error: {field}"), line
    assert "lte.json" not in line and "jobs[" not in line


def test_loss_on_a_load_job_over_the_stream_relay_names_the_option(tmp_path: Path, capsys: Capture) -> None:
    profile = _profile(tmp_path, {**LOAD, "link": {"delay_ms": 5, "loss_percent": 1}})
    line = _refused([profile, "--link-emulation", "stream-relay"], capsys)
    # A load job's link is emulated as a loopback job's: loss needs the packet path, and the
    # refusal names the option that chose the relay.
    assert "jobs[0].link.loss_percent: 1 % loss asked for: packet loss needs the packet path" in line, line
    assert 'set --link-emulation "packet"' in line, line


def test_the_packet_path_s_tcp_from_an_option_over_the_relay_from_another(tmp_path: Path, capsys: Capture) -> None:
    profile = _profile(tmp_path, {**LOOPBACK, "link": "lan"})
    line = _refused([profile, "--tcp-congestion-control", "reno", "--link-emulation", "stream-relay"], capsys)
    assert line.startswith("cryptobench: error: --tcp-congestion-control: sets the kernel's TCP on the packet path")
    assert line.endswith('(set --link-emulation "packet")') and "lte.json" not in line


def test_an_option_against_the_file_s_value_names_the_file_s_field_in_the_file_s_words(
    tmp_path: Path, capsys: Capture
) -> None:
    profile = _profile(tmp_path, {**LOOPBACK, "link": "lan", "link_emulation": "stream-relay"})
    line = _refused([profile, "--tcp-connection", "fresh"], capsys)
    assert line.startswith("cryptobench: error: --tcp-connection: sets the kernel's TCP on the packet path")
    assert line.endswith('(set "link_emulation": "packet")')  # the file's own value, to change there


def test_samples_from_the_option_are_named_beside_the_file_s_pause(tmp_path: Path, capsys: Capture) -> None:
    profile = _profile(tmp_path, {"scheme": "aes-gcm", "backend": "cryptography", "pause_ms": 60000})
    line = _refused([profile, "--samples", "1000"], capsys)
    assert line.startswith(f"cryptobench: error: {profile}: jobs[0].pause_ms: the job pauses at least")
    assert line.endswith("use a shorter pause_ms or fewer samples (samples came from --samples 1000)")


def test_a_cluster_for_a_load_job_over_a_link_names_the_option(tmp_path: Path, capsys: Capture) -> None:
    profile = _profile(tmp_path, {**LOAD, "link": "lan"})
    line = _refused([profile, "--cluster", "tcp://127.0.0.1:8786", "--generators", "2"], capsys)
    assert line.startswith("cryptobench: error: --cluster: generators on a Dask cluster reach the server")


def test_a_placement_that_makes_two_jobs_one_says_so(tmp_path: Path, capsys: Capture) -> None:
    job = {"scheme": "aes-gcm", "backend": "cryptography", "message_sizes": [64]}
    profile = _profile(tmp_path, {**job, "placement": "same"}, {**job, "placement": "split"})
    line = _refused([profile, "--placement", "free"], capsys)
    assert line.startswith(f"cryptobench: error: {profile}: jobs[1]: repeats jobs[0]: ")
    assert line.endswith("(placement came from --placement free)")


def test_an_error_of_the_file_alone_still_names_the_file(tmp_path: Path, capsys: Capture) -> None:
    profile = _profile(tmp_path, {**LOOPBACK, "link": {"delay_ms": 5, "jitter_ms": 10}})
    line = _refused([profile, "--samples", "5"], capsys)
    assert line.startswith(f"cryptobench: error: {profile}: jobs[0].link.jitter_ms: ")


def test_every_job_the_option_breaks_is_one_line(tmp_path: Path, capsys: Capture) -> None:
    """Several jobs refused for the same option's value: said once, not once per job."""
    profile = _profile(tmp_path, LOOPBACK, {**LOOPBACK, "message_sizes": [128]})
    line = _refused([profile, "--link", '{"delay_ms": 5, "jitter_ms": 10}'], capsys)
    assert line.startswith("cryptobench: error: --link.jitter_ms: ")

"""`cryptobench links` and `run --link`: the presets as a script sees them, refusals in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.cli.common import EXIT_OK, EXIT_USAGE
from app.cli.main import main
from app.core.profile.files import load_profile
from app.core.settings.links import link_presets
from app.core.settings.profile import ProfileError


def test_links_piped_is_one_line_per_preset_with_numbers_and_source(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["links"]) == EXIT_OK
    header, *lines = capsys.readouterr().out.splitlines()
    assert header.endswith("name | title | delay | up | down | description | source")
    assert [line.split(" | ", 1)[0] for line in lines] == list(link_presets())
    fields = {line.split(" | ")[0]: line.split(" | ") for line in lines}
    assert fields["3g"][1:5] == ["3G", "150 ms", "768 kbit/s", "1600 kbit/s"]
    assert fields["satellite"][3:5] == ["unlimited", "unlimited"]
    assert fields["lan"][3] == "1000000 kbit/s"
    for name, preset in link_presets().items():
        assert fields[name][-1] == preset.source and "https://" in fields[name][-1]


def test_links_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["links", "--json"]) == EXIT_OK
    data = json.loads(capsys.readouterr().out)
    assert list(data) == list(link_presets())
    assert data["3g"]["rate_kbit"] == {"up": 768.0, "down": 1600.0} and data["3g"]["delay_ms"] == 150.0
    assert "rate_kbit" not in data["satellite"]  # unlimited
    assert all(preset["source"] and preset["description"] for preset in data.values())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--link", "5g"], '--link: unknown link preset (got "5g"); presets: lan, wifi'),
        (
            ["--link", '{"delay_ms": 20, "rate_kbit": 0}'],
            "--link.rate_kbit: must be > 0 kbit/s (omit it for an unlimited rate) (got 0)",
        ),
        (
            ["--link", '{"delay_ms": 20, "loss_percent": 1}'],
            # The loss came from --link, not from the file: the option is named.
            "cryptobench: error: --link.loss_percent: 1 % loss asked for: packet loss needs the packet path",
        ),
    ],
)
def test_run_link_refusals_exit_2_in_one_line_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    profile = tmp_path / "p.json"
    job = {"scheme": "x25519", "mode": "loopback", "link_emulation": "stream-relay"}  # runs anywhere
    profile.write_text(json.dumps({"name": "t", "jobs": [job]}))
    assert main(["run", str(profile), "--no-store", *args]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_run_link_needs_a_loopback_job(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    profile = tmp_path / "p.json"
    profile.write_text(json.dumps({"name": "t", "jobs": [{"scheme": "sha256"}]}))
    assert main(["run", str(profile), "--no-store", "--link", "lte"]) == EXIT_USAGE
    assert "--link: the profile has no loopback job to run over a link" in capsys.readouterr().err


def test_presets_counts_a_sweep_as_one_job_per_link(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["presets"]) == EXIT_OK
    line = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("pq-over-links "))
    assert "70 measured jobs (from 10 profile jobs × their links and message sizes)" in line


def test_run_link_emulation_sets_every_linked_job_and_is_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "p.json"
    profile.write_text(json.dumps({"name": "t", "jobs": [{"scheme": "x25519", "mode": "loopback"}]}))
    lossy = ["--link", '{"delay_ms": 20, "loss_percent": 1}']
    assert main(["run", str(profile), "--no-store", *lossy, "--link-emulation", "stream-relay"]) == EXIT_USAGE
    # Both the loss and the relay came from options: the options are named, not the file.
    assert (
        "error: --link.loss_percent: 1 % loss asked for: packet loss needs the packet path" in capsys.readouterr().err
    )
    assert main(["run", str(profile), "--no-store", "--link-emulation", "auto"]) == EXIT_USAGE
    assert "--link-emulation: the profile has no job with a link to emulate" in capsys.readouterr().err


def test_run_tcp_connection_sets_every_linked_job_and_is_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    profile = tmp_path / "p.json"
    profile.write_text(json.dumps({"name": "t", "jobs": [{"scheme": "x25519", "mode": "loopback"}]}))
    relay = ["--link", "lte", "--link-emulation", "stream-relay"]
    assert main(["run", str(profile), "--no-store", *relay, "--tcp-connection", "fresh"]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "error: --tcp-connection: sets the kernel's TCP on the packet path" in err and err.count("\n") == 1
    assert err.rstrip().endswith('(set --link-emulation "packet")')
    assert main(["run", str(profile), "--no-store", "--tcp-connection", "fresh"]) == EXIT_USAGE
    assert "--tcp-connection: the profile has no job with a link to send over" in capsys.readouterr().err


def test_run_tcp_congestion_control_sets_every_linked_job_and_is_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.core.profile import edits, resolve

    profile = tmp_path / "p.json"
    profile.write_text(json.dumps({"name": "t", "jobs": [{"scheme": "x25519", "mode": "loopback", "link": "lte"}]}))
    relay = ["--link-emulation", "stream-relay", "--tcp-congestion-control", "reno"]
    assert main(["run", str(profile), "--no-store", *relay]) == EXIT_USAGE
    assert "error: --tcp-congestion-control: sets the kernel's TCP on the packet path" in capsys.readouterr().err
    monkeypatch.setattr(resolve, "packet_path_refusal", lambda: None)
    offered = tmp_path / "available"
    offered.write_text("reno cubic\n")
    monkeypatch.setattr(resolve, "AVAILABLE_CONGESTION_CONTROL", offered)
    set_bbr = edits.with_congestion_control(load_profile(str(profile)), "bbr")
    with pytest.raises(ProfileError, match=r"bbr is not a congestion control this kernel offers"):
        resolve.resolve_jobs(set_bbr)
    with pytest.raises(ProfileError, match=r"not a congestion control \(got \"vegas\""):
        edits.with_congestion_control(load_profile(str(profile)), "vegas")

"""Typos get the closest known name: presets, schemes, backends, links, the window's tabs."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli.main import main
from app.core.suggest import closest, did_you_mean


@pytest.mark.parametrize(
    ("typed", "choices", "expected"),
    [
        ("quik", ["quick", "backends", "post-quantum"], "quick"),
        ("aes-gmc", ["aes-gcm", "chacha20-poly1305"], "aes-gcm"),
        ("chacha20poly1305", ["aes-gcm", "chacha20-poly1305"], "chacha20-poly1305"),
        ("mlkem", ["ml-kem", "ml-dsa", "x25519"], "ml-kem"),
        ("pycryptodom", ["cryptography", "pycryptodome", "tinyec"], "pycryptodome"),
        ("LTE", ["lan", "wifi", "lte"], "lte"),
        ("zzzz", ["quick", "backends"], None),
    ],
)
def test_the_closest_known_name(typed: str, choices: list[str], expected: str | None) -> None:
    assert closest(typed, choices) == expected
    assert did_you_mean(typed, choices) == (f'; did you mean "{expected}"?' if expected else "")


def _error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(args) == 2
    return capsys.readouterr().err


def test_the_command_line_suggests_for_each_kind_of_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert 'did you mean "quick"?' in _error(["run", "quik", "--no-store"], capsys)
    assert 'did you mean "lte"?' in _error(["run", "quick", "--link", "LTE", "--no-store"], capsys)
    profile = tmp_path / "p.json"
    profile.write_text('{"name": "t", "jobs": [{"scheme": "aes-gmc"}]}')
    assert '(got "aes-gmc"; did you mean "aes-gcm"?)' in _error(["run", str(profile), "--no-store"], capsys)
    profile.write_text('{"name": "t", "jobs": [{"scheme": "x25519", "backend": "pycryptodom"}]}')
    err = _error(["run", str(profile), "--no-store"], capsys)
    assert 'unknown backend (got "pycryptodom"; did you mean "pycryptodome"?)' in err  # not "x25519 is not available"


def test_the_window_s_names_are_taken_for_its_tabs_and_themes() -> None:
    from app.cli.main import build_parser

    args = build_parser().parse_args(["gui", "--tab", "Samples", "--theme", "Dark"])
    assert (args.tab, args.theme) == ("samples", "dark")

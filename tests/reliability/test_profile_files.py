"""Bad profile files (broken bytes, encodings, sizes), round trips and the command line:
every bad file is refused with one line naming the file, field and value.

The generated field-by-field cases are in test_profile_input.py; shared helpers in
profile_cases.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import psutil
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.cli.main import main
from app.core.profile.files import load_profile, parse_profile, preset_dir, save_profile
from app.core.profile.resolve import resolve_jobs
from app.core.schemes import registry
from app.core.settings.profile import FORMAT_VERSION, MAX_PROFILE_BYTES, MAX_SAMPLES, MEMORY_COPIES, ProfileError
from tests.helpers.profile_cases import (
    FEW,
    MANY,
    PLENTY,
    VALID_JOB,
    _jobs,
    _profile,
    _refusal,
    _refused_at,
    _shown,
    _write,
    valid_jobs,
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("profiles")


# --- broken files -----------------------------------------------------------------------


def _valid_bytes() -> bytes:
    """A valid profile with non-ASCII text, so cuts can split a UTF-8 sequence."""
    data = _profile(*_jobs(2), description="Débit — chiffrement ✓")
    return json.dumps(data, ensure_ascii=False, indent=2).encode()


def test_every_prefix_of_a_profile_is_refused(folder: Path) -> None:
    """A file cut short anywhere (a full disk, an interrupted copy) is refused, never
    half-loaded: invalid JSON or, inside a multi-byte character, invalid UTF-8."""
    raw = _valid_bytes()
    assert resolve_jobs(load_profile(_write(folder, raw)), available_memory=PLENTY)
    for cut in range(len(raw)):
        path = _write(folder, raw[:cut])
        message = str(_refusal(path))
        assert message.startswith((f"{path}: not valid JSON: ", f"{path}: not UTF-8 text")), message


@FEW
@given(data=st.data())
def test_prefixes_of_every_preset_are_refused(folder: Path, data: st.DataObject) -> None:
    preset = data.draw(st.sampled_from(sorted(preset_dir().glob("*.json"))), label="preset")
    raw = preset.read_bytes().rstrip()
    cut = data.draw(st.integers(0, len(raw) - 1), label="cut")
    message = str(_refusal(_write(folder, raw[:cut])))
    assert "not valid JSON" in message


@FEW
@given(data=st.data(), bad=st.sampled_from([b"\xff", b"\xfe", b"\x80", b"\xc0\xaf", b"\xed\xa0\x80"]))
def test_non_utf8_bytes_are_refused_with_offset(folder: Path, data: st.DataObject, bad: bytes) -> None:
    raw = json.dumps(_profile()).encode()  # ASCII: the bad byte's offset is the insertion point
    at = data.draw(st.integers(0, len(raw)), label="at")
    message = str(_refusal(_write(folder, raw[:at] + bad + raw[at:])))
    assert f"not UTF-8 text (bad byte at offset {at})" in message


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b"", "not valid JSON: Expecting value at line 1 column 1"),
        (b" \n\t", "not valid JSON: Expecting value"),
        (b"[]", "a profile must be a JSON object (got an array)"),
        (b"42", "a profile must be a JSON object (got a number)"),
        (b"1.5", "a profile must be a JSON object (got a number)"),
        (b'"profile"', "a profile must be a JSON object (got a string)"),
        (b"null", "a profile must be a JSON object (got null)"),
        (b"true", "a profile must be a JSON object (got a boolean)"),
        (b"{}", "name: required field is missing"),
        (b'{"name": "x", "jobs": [{"scheme": "sha256"}]} trailing', "not valid JSON: Extra data"),
        (b"\xef\xbb\xbf{}", "not valid JSON: Unexpected UTF-8 BOM"),
        (b"[" * 100_000 + b"]" * 100_000, "not valid JSON: nested too deeply"),
        (
            b'{"name": "x", "jobs": [{"scheme": "sha256", "samples": 1' + b"0" * 5000 + b"}]}",
            "not valid JSON: a number has too many digits",
        ),
    ],
)
def test_files_that_are_not_a_profile(folder: Path, content: bytes, fragment: str) -> None:
    """Deep nesting (RecursionError) and 5000-digit numbers (ValueError) used to escape as
    tracebacks: Python's json raises neither as JSONDecodeError."""
    message = str(_refusal(_write(folder, content)))
    assert fragment in message, message


@FEW
@given(
    depth=st.integers(1, 3000),
    where=st.sampled_from(["name", "params", "extra"]),
    bracket=st.sampled_from(["[]", "{}"]),
)
def test_deep_nesting_anywhere_is_refused(folder: Path, depth: int, where: str, bracket: str) -> None:
    """Nesting near Python's recursion limit, in any field: a ProfileError either way."""
    opening, closing = bracket[0], bracket[1]
    inner = (opening if opening == "[" else '{"a":') * depth + ("" if opening == "[" else "1") + closing * depth
    texts = {
        "name": '{"name": %s, "jobs": [{"scheme": "sha256"}]}',
        "params": '{"name": "x", "jobs": [{"scheme": "sha256", "params": {"k": %s}}]}',
        "extra": '{"name": "x", "jobs": [{"scheme": "sha256"}], "x": %s}',
    }
    message = str(_refusal(_write(folder, texts[where] % inner)))
    assert any(part in message for part in ("nested too deeply", "name:", "params.k", "x: unknown field"))


def test_duplicate_keys_are_refused_with_both_values(folder: Path) -> None:
    """json.loads keeps the last of two equal keys: "samples": 3 silently became 100."""
    text = '{"name": "x", "jobs": [{"scheme": "sha256", "samples": 3, "samples": 100}]}'
    message = _refused_at(folder, text, "jobs[0].samples")
    assert "appears twice in one object (got 3, then 100)" in message


@FEW
@given(job_count=st.integers(1, 3), data=st.data())
def test_duplicate_key_anywhere_is_named(folder: Path, job_count: int, data: st.DataObject) -> None:
    index = data.draw(st.integers(0, job_count - 1), label="index")
    jobs = _jobs(job_count)
    key = data.draw(st.sampled_from(sorted(jobs[index])), label="key")
    parts = [f"{json.dumps(k)}: {json.dumps(v)}" for k, v in jobs[index].items()]
    parts.append(f"{json.dumps(key)}: {json.dumps(jobs[index][key])}")  # the same value twice still counts
    texts = [json.dumps(job) for job in jobs]
    texts[index] = "{" + ", ".join(parts) + "}"
    text = '{"name": "t", "jobs": [' + ", ".join(texts) + "]}"
    message = _refused_at(folder, text, f"jobs[{index}].{key}")
    assert f"(got {_shown(jobs[index][key])}" in message


def test_directory_missing_file_and_unknown_preset(tmp_path: Path) -> None:
    directory = tmp_path / "profiles.json"
    directory.mkdir()
    assert str(_refusal(directory)) == f"{directory}: not a regular file (a folder), so not a profile"
    for missing in (tmp_path / "nope.json", tmp_path / "sub" / "nope"):
        assert str(_refusal(missing)) == f"{missing}: file not found"
    with pytest.raises(ProfileError, match=r"^no-such-preset: no such profile file or preset \(presets: .*quick"):
        load_profile("no-such-preset")


@pytest.mark.skipif(os.name != "posix" or not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_endless_or_huge_file_is_refused_without_reading_it_all(folder: Path) -> None:
    """`run /dev/zero` used to read until memory ran out; now reading stops at the cap."""
    assert str(_refusal("/dev/zero")) == "/dev/zero: not a regular file (a character device), so not a profile"
    path = _write(folder, json.dumps(_profile()).encode() + b" " * MAX_PROFILE_BYTES)
    assert "not a profile" in str(_refusal(path))


@FEW
@given(version=st.integers(FORMAT_VERSION + 1, 10**6))
def test_newer_format_says_newer_cryptobench(folder: Path, version: int) -> None:
    """Refused before any other check (the newer format may have fields we do not know)."""
    data = _profile({"scheme": "from-the-future", "hologram": True}, format_version=version)
    message = _refused_at(folder, data, "format_version")
    assert f"written by a newer CryptoBench (format {version}; this version reads up to {FORMAT_VERSION})" in message


@FEW
@given(version=st.integers(max_value=0) | st.sampled_from([True, 1.0, "1", None]))
def test_format_version_not_a_positive_integer(folder: Path, version: Any) -> None:
    message = _refused_at(folder, _profile(format_version=version), "format_version")
    assert f"must be a positive integer (got {json.dumps(version)})" in message


# --- round trip -------------------------------------------------------------------------


def _job_key(job: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two jobs the same measurement (sizes aside), as resolve_jobs sees it."""
    spec = registry.get_spec(job["scheme"])
    backend = job.get("backend") or spec.backends[0]
    params = spec.resolve_params(backend, job.get("params") or {})
    if "curve" in params:  # secp256r1 is P-256
        params["curve"] = {"secp256r1": "P-256", "secp384r1": "P-384"}.get(str(params["curve"]), params["curve"])
    return (job["scheme"], backend, json.dumps(params, sort_keys=True), job["mode"], job.get("tcp_nodelay", True))


@st.composite
def valid_profiles(draw: st.DrawFn) -> dict[str, Any]:
    jobs = draw(st.lists(valid_jobs(), min_size=1, max_size=4, unique_by=_job_key))
    data: dict[str, Any] = {"name": draw(st.text(min_size=1, max_size=200)), "jobs": jobs}
    if draw(st.booleans()):
        data["description"] = draw(st.text(max_size=60))
    if draw(st.booleans()):
        data["experiment"] = draw(st.from_regex(r"E[0-9]{1,3}", fullmatch=True))
    if draw(st.booleans()):
        data["format_version"] = FORMAT_VERSION
    return data


ROUND_TRIP_SPECS = [registry.get_spec(s) for s in ("aes-gcm", "chacha20-poly1305", "ecdh", "hkdf", "sha256")]


@MANY
@given(data=valid_profiles())
def test_valid_profile_saves_and_loads_back_equal(folder: Path, data: dict[str, Any]) -> None:
    """Anything the checks accept survives save + load unchanged, and saving is stable."""
    profile = parse_profile(data)
    resolved = resolve_jobs(profile, available_memory=PLENTY, has_remote=True)
    assert len(resolved) == len(data["jobs"])
    path = folder / "round-trip.json"
    save_profile(profile, path)
    loaded = load_profile(path)
    assert loaded == profile
    assert resolve_jobs(loaded, str(path), available_memory=PLENTY, has_remote=True) == resolved
    first = path.read_bytes()
    save_profile(loaded, path)
    assert path.read_bytes() == first


@FEW
@given(jobs=st.lists(valid_jobs(ROUND_TRIP_SPECS), min_size=1, max_size=3, unique_by=lambda j: j["scheme"]))
def test_catalog_subset_round_trips(folder: Path, jobs: list[dict[str, Any]]) -> None:
    """The same, denser over a few schemes and all their backends and parameters."""
    profile = parse_profile(_profile(*jobs))
    path = folder / "subset.json"
    save_profile(profile, path)
    assert load_profile(path) == profile


# --- through the command line ----------------------------------------------------------


def _no_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    """A refused profile must stop before anything runs."""
    import app.core.run.runner as runner_mod

    class Refuse:
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            raise AssertionError("the runner started for a refused profile")

    monkeypatch.setattr(runner_mod, "Runner", Refuse)


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (_profile({**VALID_JOB, "samples": "30"}), 'jobs[0].samples: Input should be a valid integer (got "30")'),
        (_profile({**VALID_JOB, "samples": True}), "jobs[0].samples: Input should be a valid integer (got true)"),
        (_profile({**VALID_JOB, "mode": "loopback", "tcp_nodelay": "no"}), "jobs[0].tcp_nodelay: Input should be"),
        (_profile({**VALID_JOB, "samples": 10**12}), "jobs[0].samples: Input should be less than or equal to 1000000"),
        (_profile({"scheme": "rot13"}), 'jobs[0].scheme: unknown scheme (got "rot13")'),
        (_profile({**VALID_JOB, "params": {"key_bits": "256"}}), "jobs[0].params: parameter 'key_bits' of aes-gcm"),
        (_profile(VALID_JOB, {**VALID_JOB, "label": "again"}), "jobs[1]: repeats jobs[0]"),
        (_profile(format_version=FORMAT_VERSION + 1), "format_version: written by a newer CryptoBench"),
        (json.dumps(_profile())[:-7], "not valid JSON"),
        (b"\xff" + json.dumps(_profile()).encode(), "not UTF-8 text (bad byte at offset 0)"),
        (b"[" * 100_000, "not valid JSON: nested too deeply"),
        ('{"name": "x", "name": "y", "jobs": [{"scheme": "sha256"}]}', "name: appears twice in one object"),
        (b"", "not valid JSON"),
        (b"[1]", "a profile must be a JSON object (got an array)"),
    ],
)
def test_cli_refuses_bad_profiles_in_one_line(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, content: Any, fragment: str
) -> None:
    _no_runner(monkeypatch)
    path = _write(folder, content, "cli.json")
    assert main(["run", str(path), "--no-store", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith(f"cryptobench: error: {path}: ")
    assert fragment in err
    assert "Traceback" not in err


def test_cli_refuses_directory_missing_file_and_huge_samples(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _no_runner(monkeypatch)
    cases = [
        (["run", str(tmp_path)], f"cryptobench: error: {tmp_path}: not a regular file (a folder), so not a profile"),
        (["run", str(tmp_path / "gone.json")], f"cryptobench: error: {tmp_path / 'gone.json'}: file not found"),
        (
            ["run", str(_write(folder, _profile(), "ok.json")), "--samples", str(10**12)],
            f"cryptobench: error: --samples: must be 1..{MAX_SAMPLES} (got {10**12})",
        ),
    ]
    for argv, expected in cases:
        assert main([*argv, "--no-store", "--quiet"]) == 2
        err = capsys.readouterr().err
        assert err == expected + "\n"


def test_cli_refuses_a_size_beyond_memory_with_the_estimate(
    folder: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check uses this machine's available memory (psutil), before the runner starts."""
    _no_runner(monkeypatch)
    monkeypatch.setattr(psutil, "virtual_memory", lambda: SimpleNamespace(available=64 << 20))
    path = _write(folder, _profile({"scheme": "sha256", "message_sizes": [1024, 16 << 20]}), "big.json")
    assert main(["run", str(path), "--no-store", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"cryptobench: error: {path}: jobs[0].message_sizes[1]: a 16.0 MiB message needs about "
        f"96.0 MiB of memory ({MEMORY_COPIES} copies); this machine has 64.0 MiB available\n"
    )

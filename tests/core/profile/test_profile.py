"""Profiles: structure and meaning checks, with messages naming file, field and value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.profile import files as profile_files
from app.core.profile.edits import with_mode, with_samples
from app.core.profile.files import load_profile, parse_profile, preset_names, read_profile_file, save_profile
from app.core.profile.resolve import resolve_jobs
from app.core.settings.profile import FORMAT_VERSION, MAX_SAMPLES, JobSpec, ProfileError, field_limits


def _profile(**job: Any) -> dict[str, Any]:
    base = {"scheme": "aes-gcm", "backend": "cryptography", "message_sizes": [18]}
    base.update(job)
    return {"format_version": 1, "name": "t", "jobs": [base]}


def _error(data: Any, source: str = "p.json", memory: int | None = None) -> ProfileError:
    with pytest.raises(ProfileError) as info:
        resolve_jobs(parse_profile(data, source), source, available_memory=memory)
    return info.value


def test_valid_profile_resolves_defaults() -> None:
    jobs = resolve_jobs(parse_profile({"name": "x", "jobs": [{"scheme": "aes-gcm"}]}))
    assert len(jobs) == 1
    job = jobs[0]
    assert job.backend == "cryptography"
    assert job.params == {"key_bits": 256}
    assert job.message_sizes == [1024]
    assert job.samples == 30 and job.warmup == 5
    assert "AES-256-GCM" in job.label


@pytest.mark.parametrize(
    ("job", "field", "fragment"),
    [
        ({"samples": 0}, "jobs[0].samples", "greater than or equal to 1"),
        ({"samples": "many"}, "jobs[0].samples", "integer"),
        ({"samples": 10**9}, "jobs[0].samples", "less than or equal"),
        ({"warmup": -1}, "jobs[0].warmup", "greater than or equal to 0"),
        ({"pause_ms": -5}, "jobs[0].pause_ms", "greater than or equal to 0"),
        ({"message_sizes": [-1]}, "jobs[0].message_sizes", "must not be negative, got -1"),
        ({"message_sizes": []}, "jobs[0].message_sizes", "at least 1"),
        ({"message_sizes": [2**31]}, "jobs[0].message_sizes", "1 GiB"),
        ({"mode": "carrier-pigeon"}, "jobs[0].mode", "carrier-pigeon"),
        ({"colour": "red"}, "jobs[0].colour", "unknown field"),
        ({"params": {"key_bits": [1]}}, "jobs[0].params.key_bits", "valid"),
    ],
)
def test_structure_errors_name_field_and_value(job: dict[str, Any], field: str, fragment: str) -> None:
    error = _error(_profile(**job))
    assert error.field == field
    assert fragment in str(error)
    assert str(error).startswith("p.json: " + field)


@pytest.mark.parametrize(
    ("job", "field", "fragment"),
    [
        ({"scheme": "rot13"}, "jobs[0].scheme", '"rot13"'),
        ({"backend": "openssl-1.0"}, "jobs[0].backend", '"openssl-1.0"'),
        ({"params": {"key_bits": 100}}, "jobs[0].params", "100"),
        ({"params": {"rounds": 3}}, "jobs[0].params", "'rounds'"),
        ({"mode": "remote"}, "jobs[0].mode", "--remote HOST:PORT"),
        (
            {"mode": "loopback", "message_sizes": [128 * 2**20 + 1]},
            "jobs[0].message_sizes[0]",
            "a session message is at most 128.0 MiB",
        ),
        (
            {
                "scheme": "rsa-oaep",
                "params": {"bits": 1024, "chunked": True},
                "mode": "loopback",
                "message_sizes": [100 * 2**20],
            },
            "jobs[0].message_sizes[0]",
            "frame cap",
        ),
        (
            {"scheme": "ecdh", "backend": "pycryptodome", "params": {"curve": "brainpoolP256r1"}},
            "jobs[0].params",
            "brainpoolP256r1",
        ),
        (
            {"scheme": "rsa-oaep", "params": {"bits": 2048}, "message_sizes": [191]},
            "jobs[0].message_sizes[0]",
            "191-byte message does not fit one RSA-OAEP-2048 block (at most 190 bytes)",
        ),
        (
            {"scheme": "elgamal", "backend": "python", "params": {"bits": 128}, "message_sizes": [18]},
            "jobs[0].message_sizes[0]",
            "at most 15 bytes",
        ),
        ({"scheme": "hkdf", "message_sizes": [32]}, "jobs[0].message_sizes", "secret_size"),
        ({"message_sizes": [18, 18]}, "jobs[0].message_sizes", "twice"),
    ],
)
def test_meaning_errors_name_field_and_value(job: dict[str, Any], field: str, fragment: str) -> None:
    error = _error(_profile(**job))
    assert error.field == field
    assert fragment in str(error)


def test_session_modes_resolve() -> None:
    loopback = resolve_jobs(parse_profile(_profile(mode="loopback", message_sizes=[128 * 2**20])))
    assert loopback[0].mode == "loopback"
    remote = resolve_jobs(parse_profile(_profile(mode="remote")), has_remote=True)
    assert remote[0].mode == "remote"


def test_with_mode_sets_every_job() -> None:
    profile = parse_profile({"name": "t", "jobs": [{"scheme": "aes-gcm"}, {"scheme": "sha256", "mode": "loopback"}]})
    assert [job.mode for job in with_mode(profile, "remote").jobs] == ["remote", "remote"]
    with pytest.raises(ProfileError, match="unknown mode"):
        with_mode(profile, "pigeon")


def test_chunked_mode_allows_long_messages() -> None:
    jobs = resolve_jobs(
        parse_profile(_profile(scheme="rsa-oaep", params={"bits": 2048, "chunked": True}, message_sizes=[10240]))
    )
    assert jobs[0].params["chunked"] is True
    assert "(chunked)" in jobs[0].label


def test_duplicate_jobs_are_refused() -> None:
    data = _profile()
    data["jobs"].append(dict(data["jobs"][0]))
    error = _error(data)
    assert error.field == "jobs[1]"
    assert "repeats jobs[0]" in str(error)


def test_same_scheme_with_other_sizes_is_not_a_duplicate() -> None:
    data = _profile()
    data["jobs"].append({**data["jobs"][0], "message_sizes": [1024]})
    assert len(resolve_jobs(parse_profile(data))) == 2


def test_size_beyond_memory_is_refused_with_estimate() -> None:
    error = _error(_profile(message_sizes=[512 * 1024 * 1024]), memory=1024**3)
    assert error.field == "jobs[0].message_sizes[0]"
    assert "512.0 MiB message needs about 3.0 GiB" in str(error)
    assert "1.0 GiB available" in str(error)


def test_newer_format_is_refused() -> None:
    with pytest.raises(ProfileError, match="newer CryptoBench") as info:
        parse_profile({"format_version": FORMAT_VERSION + 1, "name": "x", "jobs": []}, "new.json")
    assert info.value.field == "format_version"


def test_migrations_run_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    # Simulate a format 2 whose only change renamed "title" to "name".
    monkeypatch.setattr(profile_files, "FORMAT_VERSION", 2)
    monkeypatch.setitem(
        profile_files.MIGRATIONS, 1, lambda d: {**{k: v for k, v in d.items() if k != "title"}, "name": d["title"]}
    )
    migrated = profile_files.migrate({"format_version": 1, "title": "old", "jobs": []})
    assert migrated == {"format_version": 2, "name": "old", "jobs": []}


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        (b'{"name": "x", "jobs": [', "not valid JSON"),
        (b"\xff\xfe{}", "not UTF-8"),
        (b"[1, 2]", "must be a JSON object"),
        (b'{"jobs": [{"scheme": "aes-gcm"}]}', "name: required field is missing"),
        (b'{"name": "x", "jobs": []}', "jobs: List should have at least 1 item"),
    ],
)
def test_bad_files(tmp_path: Path, content: bytes, fragment: str) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    with pytest.raises(ProfileError) as info:
        read_profile_file(path)
    assert str(info.value).startswith(str(path))
    assert fragment in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="file not found"):
        load_profile(tmp_path / "nope.json")


def test_unknown_preset_lists_presets() -> None:
    with pytest.raises(ProfileError, match=r"presets: .*quick"):
        load_profile("no-such-preset")


def test_save_and_reload_round_trip(tmp_path: Path) -> None:
    original = parse_profile(_profile(samples=7, params={"key_bits": 128}))
    path = tmp_path / "saved.json"
    save_profile(original, path)
    assert read_profile_file(path) == original
    assert json.loads(path.read_text())["format_version"] == FORMAT_VERSION


def test_save_failure_leaves_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Disk full at the last step: the old file stays whole and no temp file is left."""
    import errno
    import os

    path = tmp_path / "keep.json"
    path.write_text("previous")

    def disk_full(src: str, dst: str) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", disk_full)
    with pytest.raises(OSError, match=r"keep\.json: cannot write: No space left on device"):
        save_profile(parse_profile(_profile()), path)
    assert path.read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.json"]


def test_save_into_missing_folder_names_it(tmp_path: Path) -> None:
    with pytest.raises(OSError, match="cannot write in"):
        save_profile(parse_profile(_profile()), tmp_path / "missing" / "p.json")


def test_with_samples_overrides_every_job() -> None:
    data = _profile()
    data["jobs"].append({"scheme": "sha256", "message_sizes": [64]})
    changed = with_samples(parse_profile(data), 3)
    assert [job.samples for job in changed.jobs] == [3, 3]
    with pytest.raises(ProfileError, match="--samples"):
        with_samples(parse_profile(data), 0)


def test_every_command_line_override_is_recorded_and_named_once() -> None:
    """Before, `--samples 3` on a preset was stored simply as that preset."""
    from app.core.profile.edits import reduced, with_link, with_placement

    quick = load_profile("quick")
    changed = with_link(with_samples(quick, 3), "lte")
    assert (
        changed.overrides == {"--samples": "3", "--link": "lte"} and changed.name == "quick (--samples 3; --link lte)"
    )
    assert changed.to_dict()["overrides"] == {"--samples": "3", "--link": "lte"}
    both = with_placement(with_samples(reduced(quick), 2), "split")
    assert both.reduced and both.name == "quick (reduced; --samples 2; --placement split)"
    # A profile as written records neither: its file round-trips unchanged.
    assert "overrides" not in quick.to_dict() and "reduced" not in quick.to_dict()
    # A long --link JSON is cut in the name, kept whole in overrides, and the name stays within its bound.
    custom = '{"delay_ms": 20, "jitter_ms": 1, "rate_kbit": 8000, "queue_packets": 100}'
    linked = with_link(quick.model_copy(update={"name": "x" * 200}), custom)
    assert linked.overrides == {"--link": custom} and len(linked.name) == 200 and linked.name.endswith("…)")


@pytest.mark.parametrize("name", preset_names())
def test_every_preset_validates(name: str) -> None:
    jobs = resolve_jobs(load_profile(name), name)
    assert jobs


def test_quick_preset_touches_every_family() -> None:
    from app.core.vocab import Family

    families = {job.family for job in resolve_jobs(load_profile("quick"))}
    assert families == set(Family)


@settings(max_examples=150, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
        max_leaves=12,
    )
)
def test_arbitrary_json_never_crashes(data: Any) -> None:
    """Any JSON value either parses or raises ProfileError — never another exception."""
    try:
        resolve_jobs(parse_profile(data, "fuzz.json"), "fuzz.json")
    except ProfileError as exc:
        assert str(exc).startswith("fuzz.json")


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "scheme",
                "backend",
                "params",
                "mode",
                "message_sizes",
                "samples",
                "warmup",
                "keygen_samples",
                "pause_ms",
                "tamper",
                "label",
            ]
        ),
        st.none()
        | st.booleans()
        | st.integers(-5, 2**40)
        | st.text(max_size=10)
        | st.lists(st.integers(-5, 5000), max_size=3),
        max_size=6,
    )
)
def test_arbitrary_job_fields_never_crash(job: dict[str, Any]) -> None:
    try:
        resolve_jobs(parse_profile({"name": "f", "jobs": [job]}, "f.json"), "f.json")
    except ProfileError as exc:
        assert exc.field is None or exc.field.startswith("jobs")


def test_field_limits_are_the_models_own() -> None:
    limits = field_limits(JobSpec, "samples")
    assert (limits.default, limits.minimum, limits.maximum) == (30, 1, MAX_SAMPLES)
    with pytest.raises(TypeError, match=r"JobSpec\.scheme"):
        field_limits(JobSpec, "scheme")
    # A required number has bounds but no default (a custom link's one-way delay).
    from app.core.settings.links import MAX_DELAY_MS, LinkSpec

    delay = field_limits(LinkSpec, "delay_ms")
    assert (delay.default, delay.minimum, delay.maximum) == (None, 0, MAX_DELAY_MS)

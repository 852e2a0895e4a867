"""A job's exchange pattern in a profile: its default, its label, where it is refused, and
how a format-1 profile, written before jobs named it, keeps measuring what it did."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.profile.files import load_profile, parse_profile, save_profile
from app.core.profile.resolve import resolve_jobs
from app.core.settings.profile import FORMAT_VERSION, ProfileError
from app.core.vocab import KEY_ESTABLISHING, Exchange
from tests.helpers.paths import GOLDEN


def _profile(*jobs: dict[str, Any], version: int = FORMAT_VERSION) -> dict[str, Any]:
    return {"format_version": version, "name": "exchange", "jobs": list(jobs)}


def _resolved(*jobs: dict[str, Any], version: int = FORMAT_VERSION) -> list[Any]:
    return resolve_jobs(parse_profile(_profile(*jobs, version=version)), available_memory=1 << 34)


@pytest.mark.parametrize(
    ("scheme", "params", "name"),
    [
        ("x25519", {}, "X25519 + HKDF-SHA256 + AES-256-GCM [cryptography]"),
        ("ecdh", {"curve": "P-256"}, "ECDH P-256 + HKDF-SHA256 + AES-256-GCM [cryptography]"),
        ("ml-kem", {"level": 768}, "ML-KEM-768 + AES-256-GCM [cryptography]"),
        ("rsa-kem", {"bits": 2048}, "RSA-KEM-2048 (OAEP) + AES-256-GCM [cryptography]"),
    ],
)
def test_a_key_establishing_job_is_session_by_default_and_its_label_says_so(
    scheme: str, params: dict[str, Any], name: str
) -> None:
    for mode in ("operations", "loopback", "load"):
        [job] = _resolved({"scheme": scheme, "params": params, "mode": mode})
        assert job.exchange is Exchange.SESSION, mode
        assert job.label == f"{name} (session)"
    [job] = _resolved({"scheme": scheme, "params": params, "exchange": "per-message"})
    assert job.exchange is Exchange.PER_MESSAGE and job.label == f"{name} (per-message)"


def test_a_label_the_profile_gives_says_the_pattern_too_once() -> None:
    [mine, said, nagle] = _resolved(
        {"scheme": "ml-kem", "label": "Kyber"},
        {"scheme": "ml-kem", "label": "Kyber (per-message)", "exchange": "per-message"},
        {"scheme": "x25519", "mode": "loopback", "tcp_nodelay": False},
    )
    assert mine.label == "Kyber (session)"
    assert said.label == "Kyber (per-message)"  # not "(per-message) (per-message)"
    assert nagle.label == "X25519 + HKDF-SHA256 + AES-256-GCM [cryptography] (session) (Nagle on)"


@pytest.mark.parametrize(
    ("scheme", "family"),
    [
        ("aes-gcm", "Authenticated encryption (AEAD)"),
        ("rsa-oaep", "Public-key encryption"),
        ("ed25519", "Signatures"),
        ("sha256", "Hashes"),
        ("hkdf", "Key derivation"),
    ],
)
@pytest.mark.parametrize("exchange", ["session", "per-message"])
def test_exchange_is_refused_where_no_key_is_established(scheme: str, family: str, exchange: str) -> None:
    with pytest.raises(ProfileError) as caught:
        _resolved({"scheme": "aes-gcm"}, {"scheme": scheme, "exchange": exchange, "message_sizes": [32]})
    assert caught.value.field == "jobs[1].exchange"
    assert str(caught.value) == (
        f"jobs[1].exchange: applies to key agreement and hybrid (KEM) jobs only: {scheme} ({family}) "
        "establishes no key to exchange; remove exchange"
    )


def test_without_exchange_those_jobs_have_none() -> None:
    jobs = _resolved({"scheme": "aes-gcm"}, {"scheme": "ed25519"}, {"scheme": "sha256"})
    assert [job.exchange for job in jobs] == [None, None, None]
    assert all("(session)" not in job.label for job in jobs)


def test_an_unknown_pattern_is_refused_naming_the_field() -> None:
    with pytest.raises(ProfileError) as caught:
        parse_profile(_profile({"scheme": "x25519", "exchange": "per-session"}))
    assert caught.value.field == "jobs[0].exchange"
    assert "'session' or 'per-message'" in str(caught.value) and '"per-session"' in str(caught.value)


def test_the_two_patterns_are_two_jobs_and_one_pattern_twice_a_repeat() -> None:
    jobs = _resolved({"scheme": "x25519"}, {"scheme": "x25519", "exchange": "per-message"})
    assert [job.exchange for job in jobs] == [Exchange.SESSION, Exchange.PER_MESSAGE]
    with pytest.raises(ProfileError, match=r"repeats jobs\[0\]: same scheme, backend, parameters, mode, exchange"):
        _resolved({"scheme": "x25519"}, {"scheme": "x25519", "exchange": "session"})


# --- format 1: jobs measured what they did then ---------------------------------------------------

#: What each key-establishing scheme's format-1 job measured (docs/results-format.md's history).
FORMAT_1 = {
    "ecdh": Exchange.SESSION,
    "x25519": Exchange.SESSION,
    "x448": Exchange.SESSION,
    "rsa-kem": Exchange.PER_MESSAGE,
    "ecies": Exchange.PER_MESSAGE,
    "ml-kem": Exchange.PER_MESSAGE,
    "x25519-ml-kem-768": Exchange.PER_MESSAGE,
}


@pytest.mark.parametrize("mode", ["operations", "loopback", "load"])
@pytest.mark.parametrize(("scheme", "exchange"), FORMAT_1.items())
def test_a_format_1_job_keeps_the_pattern_it_measured(scheme: str, exchange: Exchange, mode: str) -> None:
    params = {"bits": 2048} if scheme == "rsa-kem" else {}
    [job] = _resolved({"scheme": scheme, "params": params, "mode": mode}, version=1)
    assert job.exchange is exchange


def test_every_key_establishing_scheme_of_format_1_is_migrated() -> None:
    from app.core.schemes import registry

    ids = {spec.scheme_id for spec in registry.all_specs() if spec.family in KEY_ESTABLISHING}
    assert set(FORMAT_1) <= ids  # a scheme added since never had a format-1 job


def test_a_format_1_profile_is_upgraded_once_and_saves_as_the_current_format(tmp_path: Path) -> None:
    old = _profile(
        {"scheme": "ml-kem", "mode": "loopback"},
        {"scheme": "ml-kem", "mode": "loopback", "exchange": "session", "message_sizes": [64]},
        {"scheme": "aes-gcm"},
        version=1,
    )
    profile = parse_profile(old)
    assert profile.format_version == FORMAT_VERSION
    assert [job.exchange for job in profile.jobs] == [Exchange.PER_MESSAGE, Exchange.SESSION, None]
    save_profile(profile, tmp_path / "upgraded.json")
    saved = json.loads((tmp_path / "upgraded.json").read_text())
    assert saved["format_version"] == FORMAT_VERSION
    assert [job.get("exchange") for job in saved["jobs"]] == ["per-message", "session", None]
    assert load_profile(tmp_path / "upgraded.json") == profile


def test_the_golden_format_1_profile_still_reads_as_it_ran() -> None:
    profile = load_profile(GOLDEN / "profile.json")
    assert [job.exchange for job in profile.jobs] == [None, Exchange.SESSION, None]


def test_every_preset_is_current_and_the_per_message_experiments_say_so() -> None:
    from app.core.profile.files import preset_names

    for name in preset_names():
        profile = load_profile(name)
        assert profile.format_version == FORMAT_VERSION, name
        keyed = [job for job in profile.jobs if job.scheme in FORMAT_1]
        if profile.experiment in ("E2", "E3", "E4"):  # per-message experiments: set, never the default
            assert all(job.exchange is Exchange.PER_MESSAGE for job in keyed), name
        if profile.experiment == "E1":  # key set up once, then messages: a session, said
            assert keyed and all(job.exchange is Exchange.SESSION for job in keyed)

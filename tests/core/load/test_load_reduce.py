"""A load job's reduced form (app/core/load/reduce.py through profile.reduced) and the
handshakes-under-load preset."""

from __future__ import annotations

from typing import Any

from app.core.load.reduce import REDUCED_CLIENTS, REDUCED_DURATION_S, REDUCED_RATES, REDUCED_WARMUP_S
from app.core.profile.edits import reduced
from app.core.profile.files import load_profile, parse_profile
from app.core.profile.resolve import resolve_jobs
from app.core.vocab import Mode


def _reduced_load(**fields: object) -> Any:
    profile = parse_profile({"name": "p", "jobs": [{"scheme": "x25519", "mode": "load", **fields}]})
    return resolve_jobs(reduced(profile), "p")[0].load


def test_a_reduced_sweep_offers_two_fixed_low_rates_in_short_steps() -> None:
    load = _reduced_load(clients=8, rate_per_s="sweep", duration_s=2, warmup_s=0.5)
    assert load.rates == REDUCED_RATES and not load.sweep
    assert (load.clients, load.duration_s, load.warmup_s) == (REDUCED_CLIENTS, REDUCED_DURATION_S, REDUCED_WARMUP_S)
    assert _reduced_load().rates == REDUCED_RATES  # no rate given: the default sweep


def test_explicit_rates_keep_their_first_and_last_and_smaller_settings_stay() -> None:
    load = _reduced_load(rates=[100, 200, 400, 800], clients=1, duration_s=0.1, warmup_s=0)
    assert load.rates == (100.0, 800.0)
    assert (load.clients, load.duration_s, load.warmup_s) == (1, 0.1, 0.0)
    assert _reduced_load(rate_per_s=300).rates == (300.0,)
    assert _reduced_load(server_workers=8).server_workers == REDUCED_CLIENTS


def test_jobs_in_other_modes_get_no_load_field() -> None:
    profile = parse_profile({"name": "p", "jobs": [{"scheme": "x25519", "mode": "loopback"}]})
    job = reduced(profile).jobs[0]
    assert job.clients is None and job.rates is None and job.duration_s is None
    assert resolve_jobs(reduced(profile), "p")[0].load is None


def test_the_preset_sweeps_the_issues_schemes_and_its_reduced_form_is_short() -> None:
    jobs = resolve_jobs(load_profile("handshakes-under-load"), "handshakes-under-load")
    named = [(job.scheme, job.params.get("curve") or job.params.get("bits") or job.params.get("level")) for job in jobs]
    assert named == [
        ("x25519", None),
        ("ecdh", "P-256"),
        ("rsa-kem", 3072),
        ("ml-kem", 768),
        ("x25519-ml-kem-768", None),
        ("ed25519", None),
        ("ecdsa", "P-256"),
        ("rsa-pss", 3072),
        ("ml-dsa", 65),
    ]
    assert all(
        job.mode == Mode.LOAD and job.load is not None and job.load.sweep and job.load.clients == 8 for job in jobs
    )
    small = resolve_jobs(reduced(load_profile("handshakes-under-load")), "handshakes-under-load")
    # Two steps of warm-up + duration each: the whole reduced preset spends under 5 s offering load.
    offered = sum(len(job.load.rates) * (job.load.duration_s + job.load.warmup_s) for job in small if job.load)
    assert offered < 5

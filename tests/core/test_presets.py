"""The built-in presets: each reproduces what its issue and ../shared/EXPERIMENTS.md say,
its reduced form stays small, and the published figures match EXPERIMENTS.md."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from app.core.profile import (
    REDUCED_MAX_SIZE,
    load_profile,
    preset_names,
    reduced,
    resolve_jobs,
)
from app.report.published import UNIT_SECONDS, experiment_ids, load_experiment

EXPERIMENTS_MD = Path(__file__).resolve().parents[3] / "shared" / "EXPERIMENTS.md"
EXPERIMENT_PRESETS = {"ecdh-vs-elgamal": "E1", "cnsa-suite": "E2", "cnsa-suite-stable": "E2",
                      "rsa-vs-elgamal": "E3", "rsa-kem-vs-ecies": "E4"}
KIB, MIB = 1024, 1024 * 1024


def _jobs(name: str) -> list:
    return resolve_jobs(load_profile(name), name)


def test_every_preset_the_issue_names_exists() -> None:
    assert set(EXPERIMENT_PRESETS) | {"post-quantum", "aead-shootout", "backends", "quick"} <= set(preset_names())


@pytest.mark.parametrize(("name", "experiment"), sorted(EXPERIMENT_PRESETS.items()))
def test_experiment_presets_name_their_experiment(name: str, experiment: str) -> None:
    assert load_profile(name).experiment == experiment
    assert experiment in experiment_ids()


def test_presets_beyond_the_published_work_name_no_experiment() -> None:
    for name in ("post-quantum", "aead-shootout", "backends", "quick"):
        assert load_profile(name).experiment is None


@pytest.mark.parametrize("name", preset_names())
def test_reduced_preset_is_small_and_still_valid(name: str) -> None:
    full, small = load_profile(name), reduced(load_profile(name))
    assert small.name == f"{full.name} (reduced)" and small.experiment == full.experiment
    jobs = resolve_jobs(small, name)
    assert len(jobs) == len(full.jobs)
    for job in jobs:
        assert job.samples <= 3 and job.warmup <= 1 and job.keygen_samples <= 2 and job.pause_ms == 0
        assert len(job.message_sizes) <= 3
        assert max(job.message_sizes) <= REDUCED_MAX_SIZE or len(job.message_sizes) == 1


def test_reduced_keeps_the_smallest_size_when_all_are_large() -> None:
    from app.core.profile import parse_profile

    big = parse_profile({"name": "big", "jobs": [{"scheme": "sha256", "message_sizes": [4 * MIB, MIB, 2 * MIB]}]})
    assert reduced(big).jobs[0].message_sizes == [MIB]
    e4 = reduced(load_profile("rsa-kem-vs-ecies"))
    assert all(max(job.message_sizes or [0]) <= REDUCED_MAX_SIZE for job in e4.jobs)
    assert all(140 in (job.message_sizes or []) for job in e4.jobs if job.scheme != "aes-gcm")  # the SMS stays


# --- each experiment preset is the published setup -------------------------------------------


def test_e1_preset() -> None:
    jobs = _jobs("ecdh-vs-elgamal")
    assert all(j.mode == "loopback" and j.message_sizes == [18] and j.samples == 100 for j in jobs)
    schemes = {(j.scheme, j.backend, j.params.get("curve") or j.params.get("bits"), j.tcp_nodelay) for j in jobs}
    assert ("ecdh", "tinyec", "brainpoolP256r1", True) in schemes
    assert ("ecdh", "tinyec", "brainpoolP256r1", False) in schemes  # Nagle on: the explanation's measurement
    assert ("elgamal", "python", 128, True) in schemes and ("elgamal", "python", 2048, True) in schemes
    assert next(j for j in jobs if j.backend == "tinyec").params["kdf"] == "sha256"


def test_e2_preset_as_published_and_stable_variant() -> None:
    published, stable = _jobs("cnsa-suite"), _jobs("cnsa-suite-stable")
    assert all(j.samples == 10 and j.pause_ms == 50 for j in published)
    assert all(j.samples >= 100 and j.warmup > 0 for j in stable)
    assert [(j.scheme, j.params, j.message_sizes) for j in published] == \
        [(j.scheme, j.params, j.message_sizes) for j in stable]
    by_scheme = {j.scheme: j for j in published}
    assert by_scheme["aes-gcm"].message_sizes == [KIB, MIB, 10 * MIB]
    assert by_scheme["sha384"].message_sizes == [KIB, MIB, 10 * MIB]
    assert by_scheme["rsa-oaep"].params == {"bits": 3072, "chunked": True}
    assert by_scheme["rsa-oaep"].message_sizes == [128, KIB, 10 * KIB]
    assert by_scheme["ecdh"].params["curve"] == "P-384" and by_scheme["ecdh"].params["kdf"] == "hkdf-sha384"
    hkdf = {(j.params["secret_size"], j.params["output_length"]) for j in published if j.scheme == "hkdf"}
    assert hkdf == {(32, 32), (32, 64), (48, 32), (48, 64)}


def test_e3_preset_sizes_are_the_published_message_lengths() -> None:
    jobs = _jobs("rsa-vs-elgamal")
    bits = load_experiment("E3").message_bits
    assert bits == [96, 238, 627, 780, 863, 1022]
    expected = [math.ceil(b / 8) for b in bits]
    assert all(j.message_sizes == expected for j in jobs)
    for key in (512, 1024, 2048, 3072):
        present = {(j.scheme, j.params.get("crt")) for j in jobs if j.params["bits"] == key}
        assert {("rsa-textbook", False), ("rsa-textbook", True), ("elgamal", None)} <= present


def test_e4_preset_ranges() -> None:
    jobs = _jobs("rsa-kem-vs-ecies")
    aes = [j for j in jobs if j.scheme == "aes-gcm"]
    assert sorted(j.params["key_bits"] for j in aes) == [128, 192, 256]
    assert aes[0].message_sizes == [KIB] + list(range(16 * KIB, 1024 * KIB + 1, 16 * KIB))
    assert all(j.samples == 30 for j in aes)
    hybrid = [j for j in jobs if j.scheme in ("rsa-kem", "ecies") and len(j.message_sizes) > 1]
    assert {(j.scheme, j.params.get("bits"), j.params.get("curve")) for j in hybrid} == \
        {("rsa-kem", 2048, None), ("rsa-kem", 3072, None), ("ecies", None, "secp256k1")}
    for job in hybrid:
        sizes = job.message_sizes
        assert 140 in sizes and KIB in sizes and 128 * KIB in sizes and MIB in sizes and 128 * MIB in sizes
        assert [s for s in sizes if 8 * KIB <= s <= 128 * KIB] == list(range(8 * KIB, 128 * KIB + 1, 8 * KIB))
        assert [s for s in sizes if s > MIB] == [m * MIB for m in range(16, 129, 16)]
        assert job.samples == 10 and job.keygen_samples == 10 and job.tamper > 0


# --- the published figures are the ones EXPERIMENTS.md prints --------------------------------


def _experiments_text() -> str:
    if not EXPERIMENTS_MD.exists():
        pytest.skip(f"{EXPERIMENTS_MD} is not beside the repository")
    return EXPERIMENTS_MD.read_text(encoding="utf-8")


def _section(text: str, experiment: str) -> str:
    match = re.search(rf"^## {experiment} .*?(?=^## |\Z)", text, re.DOTALL | re.MULTILINE)
    assert match, f"no section {experiment} in EXPERIMENTS.md"
    return match.group(0)


@pytest.mark.parametrize("experiment", ["E1", "E2", "E3", "E4"])
def test_published_figures_appear_in_experiments_md(experiment: str) -> None:
    section = _section(_experiments_text(), experiment)
    numbers = set(re.findall(r"\d+\.\d+|\d+", section))
    for figure in load_experiment(experiment).figures:
        for value in (figure.value, figure.value_high):
            if value is not None:
                assert f"{value:g}" in numbers or f"{value}" in numbers, (figure.case, value)
        assert figure.unit in UNIT_SECONDS


def test_e3_table_matches_experiments_md_cell_by_cell() -> None:
    section = _section(_experiments_text(), "E3")
    rows = re.findall(r"^\| (512|1024|2048) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|", section, re.MULTILINE)
    assert len(rows) == 3
    figures = {(f.match.scheme, f.match.params["bits"], f.metrics[0]): f.value
               for f in load_experiment("E3").figures}
    for key, rsa_enc, rsa_dec, elg_enc, elg_dec in rows:
        bits = int(key)
        assert figures[("rsa-textbook", bits, "encrypt")] == float(rsa_enc)
        assert figures[("rsa-textbook", bits, "decrypt")] == float(rsa_dec)
        assert figures[("elgamal", bits, "encrypt")] == float(elg_enc)
        assert figures[("elgamal", bits, "decrypt")] == float(elg_dec)
    assert len(figures) == 12


def test_e2_table_times_match_experiments_md() -> None:
    section = _section(_experiments_text(), "E2")
    published = {float(v) for v in re.findall(r"0\.\d{6}", section)}
    ours = set()
    for figure in load_experiment("E2").figures:
        ours.add(figure.value)
        if figure.value_high is not None:
            ours.add(figure.value_high)
    assert ours == published


def test_e1_and_e4_headline_figures() -> None:
    text = _experiments_text()
    e1 = {tuple(f.metrics): f.value for f in load_experiment("E1").figures}
    assert e1 == {("compute",): 0.0171, ("rtt",): 0.7513}
    assert "0.0171 ms" in _section(text, "E1") and "0.7513 ms" in _section(text, "E1")
    e4 = load_experiment("E4")
    assert sorted(f.value for f in e4.figures) == [0.001024, 1.848]
    assert e4.published_factor == 1800 and "~1800" in _section(text, "E4")

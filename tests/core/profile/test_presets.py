"""The built-in presets: each reproduces what docs/reference-experiments.md (the published
experiments) says, its reduced form stays small, and the published figures in
resources/experiments/ match that page cell by cell."""

from __future__ import annotations

import math
import re

import pytest

from app.core.profile.edits import REDUCED_LINKS, REDUCED_MAX_SIZE, reduced
from app.core.profile.files import load_profile, preset_names
from app.core.profile.resolve import resolve_jobs
from app.report.experiments.published import UNIT_SECONDS, Figure, experiment_ids, load_experiment
from tests.helpers.paths import ROOT

EXPERIMENTS_MD = ROOT / "docs" / "reference-experiments.md"
EXPERIMENT_PRESETS = {
    "ecdh-vs-elgamal": "E1",
    "cnsa-suite": "E2",
    "cnsa-suite-stable": "E2",
    "rsa-vs-elgamal": "E3",
    "rsa-kem-vs-ecies": "E4",
    "pq-tls-under-loss": "E5",
}
KIB, MIB = 1024, 1024 * 1024


def _jobs(name: str) -> list:
    return resolve_jobs(load_profile(name), name)


def test_every_documented_preset_exists() -> None:
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
    # One measured job per profile job, and per link of a sweep (at most REDUCED_LINKS of them).
    assert len(jobs) == sum(len(job.links or [None]) for job in small.jobs)
    assert all(len(job.links or []) <= REDUCED_LINKS for job in small.jobs)
    for job in jobs:
        if job.load is not None:  # no sample rounds: short steps instead (tests/core/load/test_load_reduce.py)
            assert job.load.duration_s <= 0.2 and len(job.load.rates) <= 2
        else:
            assert job.samples <= 3 and job.warmup <= 1 and job.keygen_samples <= 2 and job.pause_ms == 0
        assert job.link is None or job.samples <= 2
        assert len(job.message_sizes) <= 3
        assert max(job.message_sizes) <= REDUCED_MAX_SIZE or len(job.message_sizes) == 1


def test_reduced_keeps_the_smallest_size_when_all_are_large() -> None:
    from app.core.profile.files import parse_profile

    big = parse_profile({"name": "big", "jobs": [{"scheme": "sha256", "message_sizes": [4 * MIB, MIB, 2 * MIB]}]})
    assert reduced(big).jobs[0].message_sizes == [MIB]
    e4 = reduced(load_profile("rsa-kem-vs-ecies"))
    assert all(max(job.message_sizes or [0]) <= REDUCED_MAX_SIZE for job in e4.jobs)
    sms = [job for job in e4.jobs if job.samples == 3 and job.message_sizes and len(job.message_sizes) == 2]
    assert sms and all(job.message_sizes == [140, 15820] for job in sms)  # both "SMS" sizes stay


def test_reduced_keeps_sizes_spread_from_the_smallest_to_the_largest() -> None:
    from app.core.profile.files import parse_profile

    six = parse_profile({"name": "six", "jobs": [{"scheme": "sha256", "message_sizes": [60, 50, 40, 30, 20, 10]}]})
    assert reduced(six).jobs[0].message_sizes == [10, 40, 60]  # the middle: the upper of two
    assert reduced(six, size_count=2).jobs[0].message_sizes == [10, 60]
    assert reduced(six, size_count=1).jobs[0].message_sizes == [10]
    assert reduced(six, size_count=4).jobs[0].message_sizes == [10, 30, 50, 60]
    assert reduced(six, size_count=6).jobs[0].message_sizes == [10, 20, 30, 40, 50, 60]


def test_reduced_takes_fewer_rounds_when_asked_and_never_more_than_the_job() -> None:
    from app.core.profile.files import parse_profile

    job = {"scheme": "sha256", "message_sizes": [64], "samples": 30, "warmup": 3}
    profile = parse_profile({"name": "rounds", "jobs": [job, {**job, "samples": 1, "warmup": 0}]})
    assert [(j.samples, j.warmup) for j in reduced(profile).jobs] == [(3, 1), (1, 0)]
    assert [(j.samples, j.warmup) for j in reduced(profile, samples=2, warmup=0).jobs] == [(2, 0), (1, 0)]
    assert [(j.samples, j.warmup) for j in reduced(profile, samples=50, warmup=5).jobs] == [(30, 3), (1, 0)]


# --- each experiment preset is the published setup -------------------------------------------


def test_e1_preset() -> None:
    jobs = _jobs("ecdh-vs-elgamal")
    assert all(j.mode == "loopback" and j.message_sizes == [18] and j.samples == 100 for j in jobs)
    schemes = {(j.scheme, j.backend, j.params.get("curve") or j.params.get("bits"), j.tcp_nodelay) for j in jobs}
    assert ("ecdh", "tinyec", "brainpoolP256r1", True) in schemes
    assert ("ecdh", "tinyec", "brainpoolP256r1", False) in schemes  # Nagle on: the explanation's measurement
    assert ("elgamal", "python", 128, True) in schemes and ("elgamal", "python", 2048, True) in schemes
    assert next(j for j in jobs if j.backend == "tinyec").params["kdf"] == "sha256"
    as_published = next(j for j in jobs if j.backend == "tinyec" and j.tcp_nodelay is False)
    assert as_published.warmup == 0  # the original has no warm-up: its first sample is the session's first message


def test_e2_preset_as_published_and_stable_variant() -> None:
    published, stable = _jobs("cnsa-suite"), _jobs("cnsa-suite-stable")
    assert all(j.samples == 10 and j.pause_ms == 50 for j in published)
    assert all(j.samples >= 100 and j.warmup > 0 for j in stable)
    assert [(j.scheme, j.params, j.message_sizes) for j in published] == [
        (j.scheme, j.params, j.message_sizes) for j in stable
    ]
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


def test_e4_preset_loops_as_written() -> None:
    """docs/reference-experiments.md: AES-GCM at np.arange(1, 1025, 16) KB with 30 repetitions; RSA-KEM and ECIES at
    1, 9, ..., 121 KB and 1, 17, ..., 113 MB, one timed call per size; 10 runs of the "140-byte"
    message, built as 113 * 140 bytes, which is the size of the published figures."""
    jobs = _jobs("rsa-kem-vs-ecies")
    aes = [j for j in jobs if j.scheme == "aes-gcm"]
    assert sorted(j.params["key_bits"] for j in aes) == [128, 192, 256]
    assert all(j.message_sizes == [k * KIB for k in range(1, 1025, 16)] and j.samples == 30 for j in aes)
    loops = [j for j in jobs if j.scheme in ("rsa-kem", "ecies") and len(j.message_sizes) > 2]
    assert {(j.scheme, j.params.get("bits"), j.params.get("curve")) for j in loops} == {
        ("rsa-kem", 2048, None),
        ("rsa-kem", 3072, None),
        ("ecies", None, "secp256k1"),
    }
    for job in loops:
        assert job.message_sizes == [k * KIB for k in range(1, 129, 8)] + [m * MIB for m in range(1, 129, 16)]
        assert job.samples == 1 and job.warmup == 0 and job.tamper > 0
    sms = [j for j in jobs if j.scheme in ("rsa-kem", "ecies") and j not in loops]
    assert {(j.scheme, j.backend, j.params.get("bits")) for j in sms} == {
        ("rsa-kem", "pycryptodome", 3072),
        ("ecies", "cryptography", None),
        ("rsa-kem", "cryptography", 3072),
    }
    assert all(j.message_sizes == [140, 113 * 140] and j.samples == 10 and j.keygen_samples == 10 for j in sms)
    for figure in load_experiment("E4").figures:  # every published figure has its job
        assert any(figure.match.message_size in j.message_sizes for j in sms if j.scheme == figure.match.scheme)


def test_e5_preset_times_their_span_at_their_round_trips_and_losses() -> None:
    """docs/reference-experiments.md: handshakes on new connections over the packet path at
    round trips of 5.6 and 78.7 ms with loss each way from 0 to 20 %, at losses they measured;
    every published curve has its group and certificate, every figure its job."""
    jobs = _jobs("pq-tls-under-loss")
    experiment = load_experiment("E5")
    published = {(c.delay_ms, p.loss_percent) for c in experiment.curves for p in c.points}
    assert all(j.scheme == "tls13" and j.mode == "loopback" and j.samples >= 50 for j in jobs)
    assert all(j.link is not None and j.link.emulation == "packet" for j in jobs)
    assert {(j.link.delay_ms, j.link.loss_percent) for j in jobs if j.link} <= published
    assert {j.link.delay_ms for j in jobs if j.link} == {2.8, 39.35}  # 5.6 and 78.7 ms round trips
    assert {j.link.loss_percent for j in jobs if j.link} >= {0.0, 20.0}
    pairs = {(j.params["group"], j.params["certificate"]) for j in jobs}
    assert {(c.ours["group"], c.ours["certificate"]) for c in experiment.curves} <= pairs
    assert {"secp256r1", "SecP256r1MLKEM768", "MLKEM768"} <= {group for group, _ in pairs}  # ECDHE, hybrid, pure
    for figure in experiment.figures:
        assert figure.metrics == ["connect_handshake"] and figure.statistic == "median"
        match = figure.match
        assert any(
            j.params.items() >= match.params.items()
            and j.link is not None
            and (j.link.delay_ms, j.link.loss_percent) == (match.link_delay_ms, match.loss_percent)
            for j in jobs
        ), figure.case


# --- the published figures are the ones docs/reference-experiments.md prints ----------------


def _experiments_text() -> str:
    return EXPERIMENTS_MD.read_text(encoding="utf-8")


def _section(text: str, experiment: str) -> str:
    match = re.search(rf"^## {experiment} .*?(?=^## |\Z)", text, re.DOTALL | re.MULTILINE)
    assert match, f"no section {experiment} in {EXPERIMENTS_MD.name}"
    return match.group(0)


def _numbers(text: str) -> set[float]:
    """Every number printed in `text`, as a float ("15,820" is one number, 15820)."""
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)
    return {float(n) for n in re.findall(r"\d+(?:\.\d+)?", text)}


def _printed(figure: Figure) -> list[float]:
    """Every number a figure says the source printed."""
    values = [figure.value, figure.p50, figure.p95, figure.std, figure.mbps, figure.cpu_percent, figure.peak_kb]
    if figure.second_run is not None:
        run = figure.second_run
        values += [run.value, run.p50, run.p95, run.mbps]
    return [v for v in values if v is not None]


@pytest.mark.parametrize("experiment", ["E1", "E2", "E3", "E4", "E5"])
def test_published_figures_appear_in_experiments_md(experiment: str) -> None:
    numbers = _numbers(_section(_experiments_text(), experiment))
    data = load_experiment(experiment)
    for figure in data.figures:
        for value in _printed(figure):
            assert value in numbers, (figure.case, value)
        assert figure.unit in UNIT_SECONDS
    for stated in data.stated:
        assert stated.value in numbers, stated.case
    for row in data.table.rows if data.table else []:
        assert all(cell in numbers for cell in row), row


def test_e3_table_matches_experiments_md_cell_by_cell() -> None:
    section = _section(_experiments_text(), "E3")
    printed = re.findall(r"^\| (512|1024|2048) \| (\d+)((?: \| [\d.]+){6}) \|", section, re.MULTILINE)
    rows = [[float(key), float(bits)] + [float(c) for c in cells.split(" | ")[1:]] for key, bits, cells in printed]
    assert len(rows) == 18
    table = load_experiment("E3").table
    assert table is not None and table.unit == "ms"
    assert table.rows == rows
    cells = {(int(r["key_bits"]), int(r["message_bits"])): r for r in table.records()}
    columns = {
        ("rsa-textbook", "encrypt"): "rsa_enc",
        ("rsa-textbook", "decrypt"): "rsa_dec",
        ("elgamal", "encrypt"): "elgamal_enc",
        ("elgamal", "decrypt"): "elgamal_dec",
    }
    figures = load_experiment("E3").figures
    for figure in figures:  # the comparison table's figures are cells of the published table
        bits = {math.ceil(b / 8): b for b in load_experiment("E3").message_bits or []}[figure.match.message_size]
        row = cells[(int(figure.match.params["bits"]), bits)]
        assert figure.value == row[columns[(figure.match.scheme, figure.metrics[0])]]
        assert "crt" not in figure.match.params  # the source does not say whether RSA used the CRT
    assert len(figures) == 12


def _without_table_c1(section: str) -> str:
    """Table C1 is a spread across the three sizes of table 10 (its mean is theirs), not a case."""
    return re.sub(r"^- Table C1.*?(?=^- |^\S|\Z)", "", section, flags=re.DOTALL | re.MULTILINE)


def test_e2_table_times_match_experiments_md() -> None:
    """Every time in tables 10-14 and the second run is in E2.json, and nothing else is."""
    section = _without_table_c1(_section(_experiments_text(), "E2"))
    published = {float(v) for v in re.findall(r"\b0\.\d{5,6}\b", section)}
    ours: set[float] = set()
    for figure in load_experiment("E2").figures:
        ours.update(
            [figure.value, figure.p50, figure.p95, figure.std]
            + ([figure.second_run.value, figure.second_run.p50, figure.second_run.p95] if figure.second_run else [])
        )
    ours.discard(None)  # type: ignore[arg-type]
    assert ours == published


def test_e2_single_trials_are_labelled() -> None:
    """AES (rows "Trial 1") and ECC print one time per case; SHA-384, HKDF and RSA-3072 print means."""
    figures = load_experiment("E2").figures
    single = {f.match.scheme for f in figures if f.statistic == "single"}
    assert single == {"aes-gcm", "ecdh", "ecdsa"}
    assert all(f.statistic == "mean" for f in figures if f.match.scheme not in single)
    by_case = {f.match.scheme: f for f in figures}
    assert by_case["rsa-pss"].metrics == ["sign", "verify"]  # "RSA-3072-Signing-Verification"
    assert by_case["rsa-oaep"].metrics == ["encrypt", "decrypt"]  # "RSA-3072-Encryption-Decryption"
    assert by_case["ecdh"].metrics == ["exchange", "exchange"]  # both sides, "shared secret match"
    assert "Trial 1" in _section(_experiments_text(), "E2")


def test_e1_and_e4_headline_figures() -> None:
    text = _experiments_text()
    e1 = load_experiment("E1")
    averages = {tuple(f.metrics): f.value for f in e1.figures if f.statistic == "mean"}
    assert averages == {("compute",): 0.0171, ("rtt",): 0.7513}
    samples = {(f.sample, f.metrics[0]): f.value for f in e1.figures if f.statistic == "sample"}
    assert samples == {
        (1, "compute"): 0.0494,
        (1, "rtt"): 0.8879,
        (2, "compute"): 0.0163,
        (2, "rtt"): 0.6120,
        (100, "compute"): 0.0159,
        (100, "rtt"): 0.7251,
    }
    assert all(f.match.tcp_nodelay is False for f in e1.figures)  # the source's plain socket: Nagle on
    assert [s.value for s in e1.stated] == [44]
    section = _section(text, "E1")
    assert "0.0171 ms" in section and "0.7513 ms" in section and "44x" in section
    e4 = load_experiment("E4")
    assert sorted(f.value for f in e4.figures) == [0.00102388, 1.8484887]
    assert all(f.match.message_size == 113 * 140 for f in e4.figures)
    section = _section(text, "E4")
    assert "1.8484887 s" in section and "0.00102388 s" in section and "15,820 bytes" in section
    assert "derived" in section and not hasattr(e4, "published_factor")  # no factor is published


def test_e5_curves_match_experiments_md_cell_by_cell() -> None:
    """Each row of E5's tables: the loss, then median / p95 of their four curves at that
    round trip, in the order key exchange prime256v1, its Kyber hybrid, signature ECDSA,
    Dilithium2; the same numbers as E5.json, and every loss they measured."""
    section = _section(_experiments_text(), "E5")
    rows = re.findall(r"^\| ([\d.]+)((?: \| [\d.]+ / [\d.]+){4}) \|$", section, re.MULTILINE)
    assert len(rows) == 50
    experiment = load_experiment("E5")
    for delay, printed in ((2.8, rows[:25]), (39.35, rows[25:])):
        curves = sorted(
            (c for c in experiment.curves if c.delay_ms == delay),
            key=lambda c: (c.experiment != "key exchange", "kyber" in c.group, "dilithium" in c.certificate),
        )
        assert len(curves) == 4
        for loss, cells in printed:
            pairs = [cell.split(" / ") for cell in cells.split(" | ")[1:]]
            for curve, (median, p95) in zip(curves, pairs):
                point = curve.at(float(loss))
                assert point is not None and (point.median, point.p95) == (float(median), float(p95)), (curve, loss)
        assert [p.loss_percent for p in curves[0].points] == [float(loss) for loss, _ in printed]

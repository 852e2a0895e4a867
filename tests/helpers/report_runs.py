"""The hand-built run of the report tests: small, deterministic, and covering every section.

`build_run` has two AEAD schemes at two sizes each (so a scaling chart exists), three
hybrid schemes with key generation (RSA-KEM-2048, ECIES, post-quantum ML-KEM-768), one
loopback session, one failed job and one job with a stability warning. With `slower=0.5`
it is the baseline: the same jobs with AES-GCM at 1 KiB twice as fast (so the run is 2×
slower there) and everything else identical. tests/report/conftest.py serves both as the
fixtures `hand_run` and `hand_baseline`; `metric` is the report tests' way to build
their own jobs' metrics.
"""

from __future__ import annotations

from typing import Any

from app.core.records.job_records import CpuUsage, MemoryUsage, ProcessUsage, Security, Validation
from app.core.results.model import JobResult, MetricResult, RunResult
from app.core.statistics.stability_warnings import check_stability
from tests.helpers import records
from tests.helpers.records import spread_samples

RUN_ID = "20261121-100400-hand01"
BASELINE_ID = "20261120-090000-base01"
#: (label, size) of the job that is 2× slower in `hand_run` than in `hand_baseline`.
SLOWER_JOB = ("AES-256-GCM [cryptography]", 1024)
#: (label, size) of a job with identical samples in both runs.
IDENTICAL_JOB = ("ChaCha20-Poly1305 [cryptography]", 1024)
FAILED_ERROR = "RuntimeError: ML-DSA-65 is not available in this OpenSSL build"


def metric(samples: list[float], batch: int = 1, size: int | None = None) -> MetricResult:
    """A metric as a measurement records one: 2 KiB traced peak, and, given the message
    size, its throughput at the median."""
    result = records.metric(list(samples), batch=batch, traced_peak_bytes=2048)
    if size:
        result.throughput_bytes_per_s = size / result.stats.median
    return result


def _job(
    index: int,
    run_id: str,
    scheme: str,
    backend: str,
    params: dict[str, Any],
    label: str,
    family: str,
    size: int,
    metrics: dict[str, MetricResult],
    *,
    mode: str = "operations",
    status: str = "ok",
    error: str | None = None,
    bits: int = 128,
    pq: int = 0,
    tamper: int = 5,
) -> JobResult:
    session = mode != "operations"
    cpu_block = ProcessUsage(
        samples=3, mean_percent=99.5, max_percent=100.0, rss_peak_bytes=50_000_000, other_processes_mean_percent=1.0
    )
    return records.job(
        run_id,
        index,
        size,
        metrics,
        scheme=scheme,
        backend=backend,
        params=params,
        label=label,
        family=family,
        mode=mode,
        status=status,
        error=error,
        wire_bytes={"payload": size + 28, "overhead": 28} if status == "ok" else {},
        cpu=CpuUsage({"sender": cpu_block, "receiver": cpu_block} if session else {"worker": cpu_block}, 0.1),
        memory=MemoryUsage(rss_peak_bytes={"worker": 50_000_000}),
        validation=Validation(checked=100, tamper_tried=tamper, tamper_rejected=tamper)
        if status == "ok"
        else Validation(),
        security=Security(classical_bits=bits, pq_category=pq, insecure=False),
        notes=["a fresh AES-256 key per message"] if family == "hybrid" else [],
    )


def build_run(run_id: str, started: str, slower: float = 1.0) -> RunResult:
    """The hand run; `slower` scales the samples of SLOWER_JOB (the baseline uses 0.5)."""
    jobs: list[JobResult] = []

    def add(*args: Any, **kwargs: Any) -> None:
        jobs.append(_job(len(jobs), run_id, *args, **kwargs))

    for size, enc, dec in ((1024, 6e-7, 7.5e-7), (1_048_576, 8.2e-5, 8.3e-5)):
        factor = slower if ("AES-256-GCM [cryptography]", size) == SLOWER_JOB else 1.0
        add(
            "aes-gcm",
            "cryptography",
            {"key_bits": 256},
            "AES-256-GCM [cryptography]",
            "aead",
            size,
            {
                "keygen": metric(spread_samples(2.5e-6), batch=400),
                "encrypt": metric(spread_samples(enc * factor), batch=200, size=size),
                "decrypt": metric(spread_samples(dec), batch=200, size=size),
            },
            bits=256,
            pq=5,
        )
    for size, enc, dec in ((1024, 1.5e-6, 1.7e-6), (1_048_576, 4.0e-4, 4.1e-4)):
        add(
            "chacha20-poly1305",
            "cryptography",
            {},
            "ChaCha20-Poly1305 [cryptography]",
            "aead",
            size,
            {
                "keygen": metric(spread_samples(2.4e-6), batch=400),
                "encrypt": metric(spread_samples(enc), size=size),
                "decrypt": metric(spread_samples(dec), size=size),
            },
            bits=256,
            pq=5,
        )
    for scheme, params, label, keygen, enc, dec, bits, pq in (
        ("rsa-kem", {"bits": 2048}, "RSA-KEM-2048 (OAEP) + AES-256-GCM [cryptography]", 5e-2, 3e-5, 3e-4, 112, 0),
        (
            "ecies",
            {"curve": "secp256k1"},
            "ECIES secp256k1 (HKDF-SHA256) + AES-256-GCM [cryptography]",
            2.4e-4,
            5e-4,
            2.6e-4,
            128,
            0,
        ),
        ("ml-kem", {"level": 768}, "ML-KEM-768 + AES-256-GCM [cryptography]", 9e-5, 2e-5, 3e-5, 192, 3),
    ):
        add(
            scheme,
            "cryptography",
            params,
            label,
            "hybrid",
            1024,
            {
                "keygen": metric(spread_samples(keygen, n=10, spread=0.1)),
                "encrypt": metric(spread_samples(enc), size=1024),
                "decrypt": metric(spread_samples(dec), size=1024),
            },
            bits=bits,
            pq=pq,
        )
    add(
        "ecdh",
        "cryptography",
        {"curve": "brainpoolP256r1", "kdf": "sha256"},
        "ECDH brainpoolP256r1 + SHA-256 + AES-256-GCM [cryptography]",
        "key-agreement",
        18,
        {
            "keygen": metric(spread_samples(2.3e-4, n=10)),
            "handshake": metric(spread_samples(4.8e-4, n=10)),
            "floor_rtt": metric(spread_samples(9.7e-5, n=20)),
            "compute": metric(spread_samples(2.2e-6, n=20), size=18),
            "rtt": metric(spread_samples(1.0e-4, n=20)),
            "receiver": metric(spread_samples(2.2e-6, n=20), size=18),
            "network": metric(spread_samples(9.8e-5, n=20)),
        },
        mode="loopback",
    )
    add(
        "ml-dsa",
        "cryptography",
        {"level": 65},
        "ML-DSA-65 [cryptography]",
        "signature",
        1024,
        {},
        status="failed",
        error=FAILED_ERROR,
        bits=192,
        pq=3,
    )
    noisy = spread_samples(1.3e-6, spread=0.5)  # CV ≈ 15 %: a HIGH_CV warning
    hash_job = _job(
        len(jobs),
        run_id,
        "sha256",
        "cryptography",
        {},
        "SHA-256 [cryptography]",
        "hash",
        1024,
        {"hash": metric(noisy, batch=250, size=1024)},
        pq=2,
    )
    hash_job.warnings = check_stability("hash", hash_job.metrics["hash"].stats, noisy)
    jobs.append(hash_job)
    return records.run(
        run_id,
        jobs,
        started=started,
        finished=started.replace(":04:00", ":05:30"),
        environment=ENVIRONMENT,
        profile=PROFILE,
    )


ENVIRONMENT: dict[str, Any] = {
    "app_version": "0.1.0",
    "hostname": "bench-host",
    "cpu": {
        "model": "Test CPU 9000",
        "architecture": "x86_64",
        "physical_cores": 4,
        "logical_cores": 8,
        "flags": {"aes": True, "pclmulqdq": True, "sha_ni": False, "avx2": True, "vaes": False, "avx512f": False},
        "flags_note": None,
        "governors": ["performance"],
        "freq_current_mhz": 3000.0,
        "freq_max_mhz": 4200.0,
    },
    "memory_total_bytes": 16 * 1024**3,
    "os": {
        "platform": "Linux-6.1-x86_64-with-glibc2.36",
        "system": "Linux",
        "release": "6.1",
        "pretty_name": "Debian GNU/Linux 12 (bookworm)",
    },
    "python": {"version": "3.11.7", "implementation": "CPython", "executable": "/usr/bin/python3"},
    "libraries": {
        "cryptography": {"version": "50.0.2", "openssl": "OpenSSL 4.0.3 29 Sep 2026"},
        "pycryptodome": {
            "version": "4.4.0",
            "note": "own C implementation (does not use OpenSSL)",
            "integer_class": "IntegerGMP",
            "gmp": True,
        },
        "numpy": {"version": "2.4.6"},
    },
}
PROFILE: dict[str, Any] = {
    "format_version": 1,
    "name": "hand-built",
    "description": "A small run built by hand for the report tests.",
    "jobs": [
        {
            "scheme": "aes-gcm",
            "backend": "cryptography",
            "params": {"key_bits": 256},
            "mode": "operations",
            "message_sizes": [1024, 1048576],
            "samples": 30,
            "warmup": 3,
            "keygen_samples": 30,
        },
        {
            "scheme": "rsa-kem",
            "backend": "cryptography",
            "params": {"bits": 2048},
            "mode": "operations",
            "message_sizes": [1024],
            "samples": 30,
            "warmup": 3,
            "keygen_samples": 10,
        },
    ],
}


def find_job(run: RunResult, label: str, size: int) -> JobResult:
    return next(j for j in run.jobs if j.label == label and j.message_size == size)

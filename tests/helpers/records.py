"""Results records for tests, built in one place: samples, metrics, jobs and runs.

Tests of the store, the comparison, the reports and the GUI need MetricResult, JobResult
and RunResult records with known numbers. Building them here gives one set of defaults
(`job`: an AES-128-GCM operations job on cryptography that succeeded; `run`: a finished
run of profile "p" with an empty environment), one way from samples to statistics
(`metric`: `summarize`, as a measurement does) and deterministic samples
(`spread_samples`, `cycling_samples`). A test then states only what its scenario is
about, overriding any default by keyword, and a change to the records is made here once
instead of in every test file. Builders of one scenario (the report tests' hand run, the
comparison and trend histories) live beside this module in tests/helpers and build on it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from app.core.records.tls_record import ByteRange, Flight, TlsRecord
from app.core.results.model import JobResult, MetricResult, RunResult
from app.core.statistics.stats import summarize

#: When a run built here started unless told.
STARTED = "2026-01-01T00:00:00+00:00"


def spread_samples(center: float, n: int = 30, spread: float = 0.02) -> list[float]:
    """n evenly spread samples whose median is exactly `center` (±spread/2), in a shuffled order.

    (i * 7) % n visits every rank once for n not divisible by 7, so the order is not
    sorted (a sorted order would trip the slow-first-sample check) and the values are
    symmetric around the centre.
    """
    return [center * (1 + spread * (((i * 7) % n) / (n - 1) - 0.5)) for i in range(n)]


def cycling_samples(median: float, n: int = 20, *, period: int = 5, step: float = 0.01, below: int = 0) -> list[float]:
    """`n` samples cycling through `period` values `step` (a fraction of `median`) apart,
    the first `below` steps under `median`: below=0 starts at `median` and goes up,
    below=(period - 1) // 2 spreads them evenly around it."""
    return [median * (1 + step * ((i % period) - below)) for i in range(n)]


def metric(
    samples: Sequence[float],
    *,
    batch: int = 1,
    traced_peak_bytes: int | None = None,
    throughput: float | None = None,
) -> MetricResult:
    """A metric of these samples (kept as given, not copied) and their statistics."""
    return MetricResult(
        summarize(samples),
        samples,
        batch=batch,
        traced_peak_bytes=traced_peak_bytes,
        throughput_bytes_per_s=throughput,
    )


def metric_at(median: float, n: int = 20, *, below: int = 0, **fields: Any) -> MetricResult:
    """A metric of `cycling_samples(median, n, below=below)`; `fields` as for `metric`."""
    return metric(cycling_samples(median, n, below=below), **fields)


def job(
    run_id: str = "run",
    index: int = 0,
    message_size: int = 1024,
    metrics: Mapping[str, MetricResult | Sequence[float]] | None = None,
    **fields: Any,
) -> JobResult:
    """Job `index` of run `run_id` (id "run_id/index"): an AES-128-GCM operations job that
    succeeded, unless `fields` (any JobResult field, `id` too) say otherwise.

    `metrics` maps each metric's name to a MetricResult or to its samples (made a metric
    with `metric`).
    """
    record: dict[str, Any] = {
        "id": f"{run_id}/{index}",
        "scheme": "aes-gcm",
        "backend": "cryptography",
        "params": {"key_bits": 128},
        "label": "AES-128-GCM",
        "family": "aead",
        "mode": "operations",
        "status": "ok",
    }
    record.update(fields)
    built = {
        name: value if isinstance(value, MetricResult) else metric(value) for name, value in (metrics or {}).items()
    }
    return JobResult(index=index, message_size=message_size, metrics=built, **record)


def run(
    run_id: str = "run",
    jobs: list[JobResult] | None = None,
    *,
    started: str = STARTED,
    finished: str | None = None,
    status: str = "finished",
    environment: dict[str, Any] | None = None,
    profile: dict[str, Any] | None = None,
    name: str | None = None,
) -> RunResult:
    """Run `run_id` holding `jobs` (the list itself, not a copy), finished unless told.

    Its profile is `profile` as given or, without one, {"name": name, "jobs": []} (name "p"
    unless told).
    """
    if profile is not None and name is not None:
        raise TypeError("give the run a profile or a profile name, not both")
    return RunResult(
        id=run_id,
        started=started,
        finished=finished,
        status=status,
        environment={} if environment is None else environment,
        profile={"name": "p" if name is None else name, "jobs": []} if profile is None else profile,
        jobs=[] if jobs is None else jobs,
    )


def tls_record(**fields: Any) -> TlsRecord:
    """A tls13 job's record as its producers write it: X25519MLKEM768 with an ML-DSA-65
    chain of 2 over 12 handshakes (the figures measured here), `fields` changed."""
    record = TlsRecord(
        version="TLSv1.3",
        group="X25519MLKEM768",
        cipher="TLS_AES_128_GCM_SHA256",
        signature="mldsa65",
        client_signature=None,
        resumed=False,
        retries=0,
        handshakes=12,
        client_bytes=ByteRange(1447, 1447),
        server_bytes=ByteRange(10333, 10333),
        flights=(
            Flight("client", 1383, ("ClientHello",)),
            Flight(
                "server", 10333, ("ServerHello", "EncryptedExtensions", "Certificate", "CertificateVerify", "Finished")
            ),
            Flight("client", 64, ("Finished",)),
        ),
        round_trips=1,
        chain_bytes=(5652,),
        chain_signatures=("ML-DSA-65",),
        ticket_bytes=510,
        library="OpenSSL 4.0.3 29 Sep 2026",
    )
    return replace(record, **fields)

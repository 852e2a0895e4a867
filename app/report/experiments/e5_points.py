"""E5's measured points: this run's tls13 jobs over links by group, certificate, one-way
delay and loss, and the names both E5 modules use for ours and theirs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.core.results.model import JobResult, RunResult
from app.core.schemes.tls13 import CERTIFICATES
from app.core.statistics.stats import MetricStats
from app.core.vocab import JobStatus, Mode
from app.report.experiments.published import UNIT_SECONDS, Curve

#: What their s_timer timed: connect's start to the client's handshake done.
METRIC = "connect_handshake"


@dataclass(frozen=True)
class Ours:
    """This run's tls13 jobs over links, by group, certificate, one-way delay and loss."""

    jobs: Mapping[tuple[str, str, float, float], JobResult]

    def at(self, params: Mapping[str, str], delay_ms: float, loss: float) -> JobResult | None:
        key = (params.get("group", ""), params.get("certificate", ""), _rounded(delay_ms), _rounded(loss))
        return self.jobs.get(key)

    def delays(self) -> list[float]:
        return sorted({key[2] for key in self.jobs})

    def losses(self, delay_ms: float) -> list[float]:
        return sorted({key[3] for key in self.jobs if key[2] == _rounded(delay_ms)})

    def pairs(self, delay_ms: float) -> list[tuple[str, str]]:
        """Group and certificate of every job at `delay_ms`, in the run's order."""
        seen: dict[tuple[str, str], None] = {}
        for key in self.jobs:
            if key[2] == _rounded(delay_ms):
                seen.setdefault((key[0], key[1]), None)
        return list(seen)


def _rounded(value: float) -> float:
    return round(float(value), 6)


def ours(run: RunResult) -> Ours:
    """The run's finished tls13 loopback jobs over a link that timed `METRIC`."""
    jobs: dict[tuple[str, str, float, float], JobResult] = {}
    for job in run.jobs:
        if job.status != JobStatus.OK or job.scheme != "tls13" or job.mode != Mode.LOOPBACK:
            continue
        if job.link is None or METRIC not in job.metrics:
            continue
        group, certificate = job.params.get("group"), job.params.get("certificate")
        if isinstance(group, str) and isinstance(certificate, str):
            key = (group, certificate, _rounded(job.link.delay_ms), _rounded(job.link.loss_percent))
            jobs.setdefault(key, job)
    return Ours(jobs)


def stats(job: JobResult | None, metric: str = METRIC) -> MetricStats | None:
    found = None if job is None else job.metrics.get(metric)
    return None if found is None else found.stats


def pair_name(group: str, certificate: str) -> str:
    """ "SecP256r1MLKEM768 + ML-DSA-44"."""
    known = CERTIFICATES.get(certificate)
    return f"{group} + {known.label if known else certificate}"


def their_name(curve: Curve) -> str:
    """ "p256_kyber512_90s + dilithium2 (signature runs)", as their files name them: both
    experiments timed p256_kyber512_90s + ecdsap256, in runs of their own."""
    return f"{curve.group} + {curve.certificate} ({curve.experiment} runs)"


def round_trip_text(delay_ms: float) -> str:
    return f"{2 * delay_ms:g} ms round trip"


def loss_text(loss: float) -> str:
    return f"{loss:g} %"


def published_seconds(curve: Curve, value: float) -> float:
    return value * UNIT_SECONDS[curve.unit]

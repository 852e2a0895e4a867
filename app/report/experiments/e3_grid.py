"""E3's measured grid: the run's jobs by kind, key size and message length, the published
cells beside them, and the small helpers the tables, charts and explanations share."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from app.core.analysis.evidence import Estimate
from app.core.results.model import JobResult, RunResult
from app.core.vocab import JobStatus
from app.report.experiments.common import mean
from app.report.experiments.published import UNIT_SECONDS, Experiment
from app.report.units import MISSING

#: The published table is for the shortest message: 96 bits, held in 12 bytes.
SHORT_MESSAGE = 12


#: Job kinds, the columns of E3: textbook RSA without and with CRT, ElGamal, RSA-OAEP (OpenSSL).
RSA, RSA_CRT, ELGAMAL, OAEP = "rsa", "rsa-crt", "elgamal", "oaep"


KIND_NAMES = {
    RSA: "textbook RSA without CRT",
    RSA_CRT: "textbook RSA with CRT",
    ELGAMAL: "ElGamal",
    OAEP: "RSA-OAEP (OpenSSL)",
}


#: What "-" means in every table here.
MISSING_NOTE = f"{MISSING}: not measured in this run (job missing or failed)."


def _kind(job: JobResult) -> str | None:
    if job.scheme == "rsa-textbook":
        # The scheme's default is CRT on, so a job without the parameter decrypts with CRT.
        return RSA_CRT if job.params.get("crt", True) else RSA
    if job.scheme == "elgamal":
        short = job.params.get("exponent_bits", 0)
        return f"{ELGAMAL}-x{short}" if isinstance(short, int) and short > 0 else ELGAMAL
    if job.scheme == "rsa-oaep" and job.backend == "cryptography":
        return OAEP
    return None


def _bits(job: JobResult) -> int | None:
    bits = job.params.get("bits")
    return bits if isinstance(bits, int) and not isinstance(bits, bool) else None


@dataclass
class Grid:
    """E3's jobs by (kind, key bits, message bytes).

    `done` holds finished jobs only (the numbers); `planned` and `sizes` also count
    failed ones, so a table keeps its rows and columns and shows "-" where a job failed.
    """

    done: dict[tuple[str, int, int], JobResult] = field(default_factory=dict)
    planned: set[tuple[str, int]] = field(default_factory=set)
    sizes: dict[int, set[int]] = field(default_factory=dict)

    @classmethod
    def of(cls, run: RunResult) -> Grid:
        grid = cls()
        for job in run.jobs:
            kind, bits = _kind(job), _bits(job)
            if kind is None or bits is None:
                continue
            grid.planned.add((kind, bits))
            grid.sizes.setdefault(bits, set()).add(job.message_size)
            if job.status == JobStatus.OK:
                grid.done.setdefault((kind, bits, job.message_size), job)
        return grid

    @property
    def key_sizes(self) -> list[int]:
        return sorted(self.sizes)

    def mean(self, kind: str, bits: int, size: int, *metrics: str) -> float | None:
        return mean(self.done.get((kind, bits, size)), *metrics)

    def rsa_encrypt(self, bits: int, size: int) -> float | None:
        """RSA encryption is the same with and without CRT (CRT only changes decryption):
        taken from the no-CRT job, else from the CRT job."""
        value = self.mean(RSA, bits, size, "encrypt")
        return value if value is not None else self.mean(RSA_CRT, bits, size, "encrypt")

    def rsa_total(self, bits: int, size: int, crt: bool) -> float | None:
        """The shared encryption plus one decryption, so a table row adds up as shown."""
        return _add(self.rsa_encrypt(bits, size), self.mean(RSA_CRT if crt else RSA, bits, size, "decrypt"))

    def total(self, kind: str, bits: int, size: int) -> float | None:
        if kind in (RSA, RSA_CRT):
            return self.rsa_total(bits, size, kind == RSA_CRT)
        return self.mean(kind, bits, size, "encrypt", "decrypt")

    def estimate(self, kind: str, bits: int, size: int, *metrics: str) -> Estimate | None:
        """The metrics' medians added, with their intervals and samples (what a verdict on
        the job's figure needs: app.core.analysis.evidence); None where any is missing."""
        job = self.done.get((kind, bits, size))
        if job is None or not metrics or any(m not in job.metrics for m in metrics):
            return None
        parts = [Estimate.of(job.metrics[m].stats) for m in metrics]
        total = parts[0]
        for part in parts[1:]:
            total = total.plus(part)
        return total

    def total_estimate(self, kind: str, bits: int, size: int) -> Estimate | None:
        """`total`'s figure as an estimate: the same parts, medians and intervals added."""
        if kind in (RSA, RSA_CRT):
            encrypt = self.estimate(RSA, bits, size, "encrypt") or self.estimate(RSA_CRT, bits, size, "encrypt")
            decrypt = self.estimate(RSA_CRT if kind == RSA_CRT else RSA, bits, size, "decrypt")
            return encrypt.plus(decrypt) if encrypt is not None and decrypt is not None else None
        return self.estimate(kind, bits, size, "encrypt", "decrypt")

    def short_size(self) -> int | None:
        """The published table's message (12 bytes) when measured, else the shortest one."""
        every = {size for sizes in self.sizes.values() for size in sizes}
        if not every:
            return None
        return SHORT_MESSAGE if SHORT_MESSAGE in every else min(every)


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def ms_text(value: float | None) -> str:
    """Milliseconds without the unit, as the published tables print them (3 significant digits)."""
    if value is None:
        return MISSING
    ms = value * 1e3
    return f"{ms:,.0f}" if ms >= 1000 else f"{ms:.3g}"


def message_bits_of(experiment: Experiment) -> dict[int, int]:
    """Bytes -> published bit length: our sizes are the whole bytes that hold each length."""
    return {math.ceil(bits / 8): bits for bits in experiment.message_bits or []}


def length_text(size: int, bits_of: dict[int, int]) -> str:
    return f"{bits_of[size]} bits ({size} B)" if size in bits_of else f"{size} B"


def message_words(size: int, bits_of: dict[int, int]) -> str:
    """ "the 96-bit (12-byte) message", for a sentence."""
    if size in bits_of:
        return f"the {bits_of[size]}-bit ({size}-byte) message"
    return f"the {size}-byte message"


def length_bits(size: int, bits_of: dict[int, int]) -> float:
    return float(bits_of.get(size, size * 8))


def listed(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def short_kinds(grid: Grid, bits: int | None = None) -> list[tuple[str, int]]:
    """ElGamal with short exponents in the run: (kind, exponent bits), shortest first."""
    kinds = {kind for kind, b in grid.planned if kind.startswith(f"{ELGAMAL}-x") and (bits is None or b == bits)}
    return sorted(((kind, int(kind.rsplit("x", 1)[1])) for kind in kinds), key=lambda k: k[1])


def rsa_blocks(grid: Grid, bits: int, size: int) -> int | None:
    """Ciphertext blocks of a textbook RSA message (payload / modulus bytes), when the run says."""
    job = grid.done.get((RSA, bits, size)) or grid.done.get((RSA_CRT, bits, size))
    payload, block = (job.wire_bytes.get("payload") if job else None), bits // 8
    if not payload or not block or payload % block:
        return None
    return payload // block


#: The published table's columns: (column, title).
PUBLISHED_COLUMNS = [
    ("rsa_enc", "RSA enc"),
    ("rsa_dec", "RSA dec"),
    ("rsa_total", "RSA total"),
    ("elgamal_enc", "ElGamal enc"),
    ("elgamal_dec", "ElGamal dec"),
    ("elgamal_total", "ElGamal total"),
]


def published_rows(experiment: Experiment, bits: int) -> list[dict[str, float]]:
    """The source's cells (ms) for one key size, by message length."""
    if experiment.table is None:
        return []
    rows = [r for r in experiment.table.records() if int(r.get("key_bits", 0)) == bits]
    return sorted(rows, key=lambda r: r.get("message_bits", 0))


def published_seconds(row: dict[str, float], column: str, experiment: Experiment) -> float | None:
    unit = experiment.table.unit if experiment.table else "ms"
    value = row.get(column)
    return None if value is None else value * UNIT_SECONDS[unit]

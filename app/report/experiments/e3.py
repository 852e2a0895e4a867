"""E3: RSA against ElGamal across key sizes and message lengths.

The original (C++ with NTL) printed, per key size, a table of encryption, decryption
and total time for six message lengths, one plot per key size and one across key
sizes. We set its cells beside ours (textbook RSA decrypting with and without the CRT,
ElGamal with full-length and with short exponents, OpenSSL's RSA-OAEP), draw its series
on our charts, and test the two hypotheses that could explain its conclusion (ElGamal's
total lower than RSA's at every key size): RSA decrypting without the CRT, and ElGamal
with short exponents. The source says neither, so the report says which one the
numbers fit, never what the original did.

Every sentence that compares numbers is built from this run's means and only written
when the run has both sides; a missing or failed job leaves a "-" in its cell.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from app.core.results.model import JobResult, RunResult
from app.core.vocab import JobStatus
from app.report.experiments.common import mean
from app.report.experiments.published import UNIT_SECONDS, Experiment, printed
from app.report.job_figures import ratio_text, relation
from app.report.model import (
    Block,
    Bullets,
    Chart,
    LineChart,
    Paragraph,
    Section,
    Series,
    Table,
)
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
class _Grid:
    """E3's jobs by (kind, key bits, message bytes).

    `done` holds finished jobs only (the numbers); `planned` and `sizes` also count
    failed ones, so a table keeps its rows and columns and shows "-" where a job failed.
    """

    done: dict[tuple[str, int, int], JobResult] = field(default_factory=dict)
    planned: set[tuple[str, int]] = field(default_factory=set)
    sizes: dict[int, set[int]] = field(default_factory=dict)

    @classmethod
    def of(cls, run: RunResult) -> _Grid:
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

    def short_size(self) -> int | None:
        """The published table's message (12 bytes) when measured, else the shortest one."""
        every = {size for sizes in self.sizes.values() for size in sizes}
        if not every:
            return None
        return SHORT_MESSAGE if SHORT_MESSAGE in every else min(every)


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def _ms(value: float | None) -> str:
    """Milliseconds without the unit, as the published tables print them (3 significant digits)."""
    if value is None:
        return MISSING
    ms = value * 1e3
    return f"{ms:,.0f}" if ms >= 1000 else f"{ms:.3g}"


def _message_bits(experiment: Experiment) -> dict[int, int]:
    """Bytes -> published bit length: our sizes are the whole bytes that hold each length."""
    return {math.ceil(bits / 8): bits for bits in experiment.message_bits or []}


def _length_text(size: int, bits_of: dict[int, int]) -> str:
    return f"{bits_of[size]} bits ({size} B)" if size in bits_of else f"{size} B"


def _message_words(size: int, bits_of: dict[int, int]) -> str:
    """ "the 96-bit (12-byte) message", for a sentence."""
    if size in bits_of:
        return f"the {bits_of[size]}-bit ({size}-byte) message"
    return f"the {size}-byte message"


def _length_bits(size: int, bits_of: dict[int, int]) -> float:
    return float(bits_of.get(size, size * 8))


def _list(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


# --- the per-key-size tables and charts ---------------------------------------------------

#: Table columns: title, the kind that must be in the run for the column to appear, the value.
_Column = tuple[str, str, Callable[[_Grid, int, int], float | None]]
COLUMNS: list[_Column] = [
    ("RSA enc", RSA, lambda g, b, s: g.rsa_encrypt(b, s)),
    ("RSA dec (no CRT)", RSA, lambda g, b, s: g.mean(RSA, b, s, "decrypt")),
    ("RSA total (no CRT)", RSA, lambda g, b, s: g.rsa_total(b, s, crt=False)),
    ("RSA dec (CRT)", RSA_CRT, lambda g, b, s: g.mean(RSA_CRT, b, s, "decrypt")),
    ("RSA total (CRT)", RSA_CRT, lambda g, b, s: g.rsa_total(b, s, crt=True)),
    ("ElGamal enc", ELGAMAL, lambda g, b, s: g.mean(ELGAMAL, b, s, "encrypt")),
    ("ElGamal dec", ELGAMAL, lambda g, b, s: g.mean(ELGAMAL, b, s, "decrypt")),
    ("ElGamal total", ELGAMAL, lambda g, b, s: g.total(ELGAMAL, b, s)),
    ("RSA-OAEP total (OpenSSL)", OAEP, lambda g, b, s: g.total(OAEP, b, s)),
]


def _total_of(kind: str, grid: _Grid, bits: int, size: int) -> float | None:
    """A short-exponent ElGamal column's cell (partial over `kind`)."""
    return grid.total(kind, bits, size)


def _short_kinds(grid: _Grid, bits: int | None = None) -> list[tuple[str, int]]:
    """ElGamal with short exponents in the run: (kind, exponent bits), shortest first."""
    kinds = {kind for kind, b in grid.planned if kind.startswith(f"{ELGAMAL}-x") and (bits is None or b == bits)}
    return sorted(((kind, int(kind.rsplit("x", 1)[1])) for kind in kinds), key=lambda k: k[1])


def _short_name(exponent: int) -> str:
    return f"ElGamal, {exponent}-bit x and k"


def _columns_for(grid: _Grid, bits: int) -> list[_Column]:
    # "RSA enc" is shown whenever either RSA job was planned: it is their shared operation.
    def planned(kind: str, title: str) -> bool:
        if title == "RSA enc":
            return (RSA, bits) in grid.planned or (RSA_CRT, bits) in grid.planned
        return (kind, bits) in grid.planned

    columns = [column for column in COLUMNS if planned(column[1], column[0])]
    short: list[_Column] = [
        (f"ElGamal total ({n}-bit x, k)", kind, functools.partial(_total_of, kind))
        for kind, n in _short_kinds(grid, bits)
    ]
    return columns[:-1] + short + columns[-1:] if columns and columns[-1][1] == OAEP else columns + short


def _rsa_blocks(grid: _Grid, bits: int, size: int) -> int | None:
    """Ciphertext blocks of a textbook RSA message (payload / modulus bytes), when the run says."""
    job = grid.done.get((RSA, bits, size)) or grid.done.get((RSA_CRT, bits, size))
    payload, block = (job.wire_bytes.get("payload") if job else None), bits // 8
    if not payload or not block or payload % block:
        return None
    return payload // block


def _key_table(grid: _Grid, bits: int, bits_of: dict[int, int]) -> Table:
    columns = _columns_for(grid, bits)
    sizes = sorted(grid.sizes[bits])
    rows = [[_length_text(size, bits_of)] + [_ms(value(grid, bits, size)) for _, _, value in columns] for size in sizes]
    caption = (
        "Means in ms per message. RSA enc is one operation for both RSA decryptions (timed in the no-CRT "
        "job), so each RSA total is RSA enc plus that decryption."
    )
    absent = [KIND_NAMES[kind] for kind in (RSA, RSA_CRT, ELGAMAL, OAEP) if (kind, bits) not in grid.planned]
    if absent:
        caption += f" Not in this run at {bits} bits: {_list(absent)}."
    if any(cell == MISSING for row in rows for cell in row):
        caption += " " + MISSING_NOTE
    blocks = {size: _rsa_blocks(grid, bits, size) for size in sizes}
    split = [f"{size} B in {n}" for size, n in blocks.items() if n and n > 1]
    if split:
        caption += (
            f" Messages longer than one RSA block are encrypted block by block (RSA blocks: "
            f"{', '.join(split)}), so the time steps up with the block count."
        )
    return Table(
        ["Message length"] + [title for title, _, _ in columns],
        rows,
        caption=caption,
        widths=[1.6] + [1.0] * len(columns),
    )


# --- the published cells -------------------------------------------------------------------

#: The published table's columns: (column, title).
PUBLISHED_COLUMNS = [
    ("rsa_enc", "RSA enc"),
    ("rsa_dec", "RSA dec"),
    ("rsa_total", "RSA total"),
    ("elgamal_enc", "ElGamal enc"),
    ("elgamal_dec", "ElGamal dec"),
    ("elgamal_total", "ElGamal total"),
]


def _published_rows(experiment: Experiment, bits: int) -> list[dict[str, float]]:
    """The source's cells (ms) for one key size, by message length."""
    if experiment.table is None:
        return []
    rows = [r for r in experiment.table.records() if int(r.get("key_bits", 0)) == bits]
    return sorted(rows, key=lambda r: r.get("message_bits", 0))


def _published_seconds(row: dict[str, float], column: str, experiment: Experiment) -> float | None:
    unit = experiment.table.unit if experiment.table else "ms"
    value = row.get(column)
    return None if value is None else value * UNIT_SECONDS[unit]


def _published_table(experiment: Experiment, bits: int) -> Table | None:
    rows = _published_rows(experiment, bits)
    if not rows:
        return None
    # The source prints every cell with the same decimals (0.3200): the most any cell of its table has.
    decimals = max(
        len(printed(v).partition(".")[2]) for r in rows for column, _ in PUBLISHED_COLUMNS for v in [r[column]]
    )
    body = [
        [f"{int(r['message_bits'])} bits"] + [f"{r[column]:.{decimals}f}" for column, _ in PUBLISHED_COLUMNS]
        for r in rows
    ]
    return Table(
        ["Message length"] + [title for _, title in PUBLISHED_COLUMNS],
        body,
        caption=f"The source's table for {bits}-bit keys, every cell as printed (ms). It gives no repetition "
        "count, padding, exponent size or CRT use.",
        widths=[1.6] + [1.0] * len(PUBLISHED_COLUMNS),
    )


def _published_series(experiment: Experiment, bits: int, columns: list[tuple[str, str]]) -> list[Series]:
    rows = _published_rows(experiment, bits)
    out = []
    for column, name in columns:
        points = [(r["message_bits"], _published_seconds(r, column, experiment)) for r in rows]
        if (series := _series(f"published: {name}", [(float(x), y) for x, y in points])) is not None:
            out.append(series)
    return out


#: Per-key-size chart series: name and value, as in the original's plots.
_SERIES: list[tuple[str, Callable[[_Grid, int, int], float | None]]] = [
    ("RSA encryption", lambda g, b, s: g.rsa_encrypt(b, s)),
    ("RSA decryption without CRT", lambda g, b, s: g.mean(RSA, b, s, "decrypt")),
    ("RSA decryption with CRT", lambda g, b, s: g.mean(RSA_CRT, b, s, "decrypt")),
    ("ElGamal encryption", lambda g, b, s: g.mean(ELGAMAL, b, s, "encrypt")),
    ("ElGamal decryption", lambda g, b, s: g.mean(ELGAMAL, b, s, "decrypt")),
]


def _series(name: str, points: list[tuple[float, float | None]]) -> Series | None:
    """A series of the measured points; None with fewer than two (no line to draw)."""
    found = [(x, y) for x, y in points if y is not None]
    if len(found) < 2:
        return None
    return Series(name, [x for x, _ in found], [y for _, y in found])


def _key_chart(grid: _Grid, bits: int, bits_of: dict[int, int], experiment: Experiment) -> Chart | None:
    sizes = sorted(grid.sizes[bits])
    series = [
        s
        for name, value in _SERIES
        if (s := _series(name, [(_length_bits(size, bits_of), value(grid, bits, size)) for size in sizes]))
    ]
    if not series:
        return None
    series += _published_series(
        experiment,
        bits,
        [
            ("rsa_enc", "RSA encryption"),
            ("rsa_dec", "RSA decryption"),
            ("elgamal_enc", "ElGamal encryption"),
            ("elgamal_dec", "ElGamal decryption"),
        ],
    )
    chart = LineChart(
        f"RSA-{bits} and ElGamal-{bits}: message length against time",
        "message length",
        "bits",
        "mean time",
        "s",
        series,
        log_y=True,
    )
    return Chart(
        chart,
        caption="Mean time per message at each published message length (log scale in time); RSA "
        'encryption is the same with and without CRT. Series named "published" are the '
        "source's cells.",
    )


def _total_chart(grid: _Grid, bits: int, bits_of: dict[int, int], experiment: Experiment) -> Chart | None:
    """The total-time panel of one key size: ours under each hypothesis, and the source's totals."""
    sizes = sorted(grid.sizes[bits])
    kinds = [(RSA, "RSA total without CRT"), (RSA_CRT, "RSA total with CRT"), (ELGAMAL, "ElGamal total")]
    kinds += [(kind, f"{_short_name(n)}: total") for kind, n in _short_kinds(grid, bits)]
    series = [
        s
        for kind, name in kinds
        if (s := _series(name, [(_length_bits(size, bits_of), grid.total(kind, bits, size)) for size in sizes]))
    ]
    if not series:
        return None
    series += _published_series(experiment, bits, [("rsa_total", "RSA total"), ("elgamal_total", "ElGamal total")])
    chart = LineChart(
        f"RSA-{bits} and ElGamal-{bits}: total time (encryption + decryption)",
        "message length",
        "bits",
        "mean total time",
        "s",
        series,
        log_y=True,
    )
    return Chart(
        chart,
        caption="Mean encryption + mean decryption per message (log scale in time), ours under each "
        "hypothesis and the source's printed totals.",
    )


def _across_chart(grid: _Grid, size: int, bits_of: dict[int, int], experiment: Experiment) -> Chart | None:
    keys = grid.key_sizes
    kinds = [(RSA, "RSA without CRT"), (RSA_CRT, "RSA with CRT"), (ELGAMAL, "ElGamal")]
    kinds += [(kind, _short_name(n)) for kind, n in _short_kinds(grid)] + [(OAEP, "RSA-OAEP (OpenSSL)")]
    series = [
        s
        for kind, name in kinds
        if (s := _series(name, [(float(bits), grid.total(kind, bits, size)) for bits in keys]))
    ]
    if not series:
        return None
    length = bits_of.get(size)
    for column, name in (("rsa_total", "published: RSA"), ("elgamal_total", "published: ElGamal")):
        points = [
            (float(bits), _published_seconds(row, column, experiment))
            for bits in keys
            for row in _published_rows(experiment, bits)
            if row.get("message_bits") == length
        ]
        if (published := _series(name, points)) is not None:
            series.append(published)
    chart = LineChart(
        f"Total time (encryption + decryption) against key size, {_length_text(size, bits_of)} message",
        "key size",
        "bits",
        "mean total time",
        "s",
        series,
        log_y=True,
    )
    return Chart(
        chart,
        caption='Mean encryption + mean decryption per message (log scale in time); "published": the '
        "source's totals for the same message length.",
    )


# --- why the published trend differs ------------------------------------------------------


def _crt_paragraph(grid: _Grid, size: int, bits_of: dict[int, int]) -> Paragraph:
    speedups = []
    for bits in grid.key_sizes:
        plain, crt = grid.mean(RSA, bits, size, "decrypt"), grid.mean(RSA_CRT, bits, size, "decrypt")
        if plain is not None and crt is not None and crt > 0:
            speedups.append(f"{ratio_text(plain / crt)} at {bits} bits ({_ms(plain)} ms against {_ms(crt)} ms)")
    if not speedups:
        return Paragraph(
            "This run has no key size with textbook RSA decrypting both with and without CRT, so the "
            "CRT speed-up was not measured.",
            "note",
        )
    return Paragraph(
        f"**The CRT speed-up.** The source does not say whether its RSA decryption used the Chinese remainder "
        f"theorem. Here decrypting with it was faster than m = c^d mod n by {_list(speedups)} ({_message_words(size, bits_of)}; mean decryption "
        "without CRT over mean decryption with CRT). With CRT, decryption computes c^dp mod p and "
        "c^dq mod q and recombines them: two exponentiations with half-size moduli and half-size exponents "
        "instead of one full-size one. With schoolbook multiplication each half-size exponentiation has half the "
        "multiplications, each costing about a quarter, so about 1/8 of the full one, and the two together about "
        "1/4: about 4× less work in theory (about 3× with Karatsuba multiplication, whose cost grows more slowly "
        "with the operand size)."
    )


def _published(experiment: Experiment, scheme: str, bits: int, size: int) -> dict[str, float]:
    """Published single-operation means (seconds) by metric, for one scheme, key size and message."""
    parts: dict[str, float] = {}
    for figure in experiment.figures:
        match = figure.match
        if (
            match.scheme == scheme
            and match.params.get("bits") == bits
            and match.message_size == size
            and len(figure.metrics) == 1
        ):
            parts.setdefault(figure.metrics[0], figure.seconds)
    return parts


def _published_total(experiment: Experiment, scheme: str, bits: int, size: int) -> float | None:
    """Published encryption + decryption (seconds), when both were published."""
    parts = _published(experiment, scheme, bits, size)
    if "encrypt" not in parts or "decrypt" not in parts:
        return None
    return parts["encrypt"] + parts["decrypt"]


def _lower(a_name: str, a: float, b_name: str, b: float) -> str:
    """Which total is lower, in words with the factor ("ElGamal's is 1.8× lower")."""
    if a <= 0 or b <= 0 or abs(a / b - 1) < 0.005:
        return "the two are equal"
    low, high, name = (a, b, a_name) if a < b else (b, a, b_name)
    return f"{name}'s is {ratio_text(high / low)} lower"


@dataclass(frozen=True)
class _Totals:
    """One key size at the published message: our three totals and the published ones."""

    bits: int
    rsa: float | None
    rsa_crt: float | None
    elgamal: float
    published_rsa: float | None
    published_elgamal: float | None


def _totals(grid: _Grid, experiment: Experiment, size: int) -> list[_Totals]:
    out = []
    for bits in grid.key_sizes:
        elgamal = grid.total(ELGAMAL, bits, size)
        if elgamal is None:
            continue
        out.append(
            _Totals(
                bits,
                grid.total(RSA, bits, size),
                grid.total(RSA_CRT, bits, size),
                elgamal,
                _published_total(experiment, "rsa-textbook", bits, size),
                _published_total(experiment, "elgamal", bits, size),
            )
        )
    return [t for t in out if t.rsa is not None or t.rsa_crt is not None]


def _totals_sentence(t: _Totals) -> str:
    words = [f"At {t.bits} bits"]
    if t.published_rsa is not None and t.published_elgamal is not None:
        words.append(f" (published: RSA {_ms(t.published_rsa)} ms, ElGamal {_ms(t.published_elgamal)} ms)")
    clauses = []
    if t.rsa is not None:
        clause = (
            f"without CRT, RSA totals {_ms(t.rsa)} ms against ElGamal's {_ms(t.elgamal)} ms: "
            f"{_lower('ElGamal', t.elgamal, 'RSA', t.rsa)}"
        )
        if t.published_rsa is not None and t.published_elgamal is not None and t.rsa != t.elgamal:
            same = (t.elgamal < t.rsa) == (t.published_elgamal < t.published_rsa)
            clause += ", as published" if same else ", unlike the published ranking"
        clauses.append(clause)
    if t.rsa_crt is not None:
        clauses.append(f"with CRT, RSA totals {_ms(t.rsa_crt)} ms: {_lower('ElGamal', t.elgamal, 'RSA', t.rsa_crt)}")
    return "".join(words) + ", " + "; ".join(clauses) + "."


def _published_lower(experiment: Experiment) -> tuple[list[int], list[int]]:
    """Key sizes where the source's ElGamal total is lower than its RSA total in every row, and the others."""
    keys = sorted({int(r["key_bits"]) for r in experiment.table.records()}) if experiment.table else []
    every = [k for k in keys if all(r["elgamal_total"] < r["rsa_total"] for r in _published_rows(experiment, k))]
    return every, [k for k in keys if k not in every]


def _conclusion_blocks(
    totals: list[_Totals], size: int, bits_of: dict[int, int], experiment: Experiment
) -> list[Block]:
    every, others = _published_lower(experiment)
    if every:
        claim = (
            f"The source's tables have ElGamal's total (encryption + decryption) lower than RSA's at "
            f"{_list([str(k) for k in every])} bits, in every row"
        )
        claim += f" (not at {_list([str(k) for k in others])} bits)." if others else "."
    else:
        claim = "The source's tables do not have ElGamal's total lower than RSA's in every row of any key size."
    opening = Paragraph(
        f"**The published conclusion.** {claim} Our totals (means) for {_message_words(size, bits_of)}:"
    )
    holds = [f"{t.bits}" for t in totals if t.rsa is not None and t.elgamal < t.rsa]
    fails = [f"{t.bits}" for t in totals if t.rsa is not None and t.elgamal >= t.rsa]
    sentences = []
    if holds:
        sentences.append(
            f"Without CRT and with full-length ElGamal exponents, ElGamal is lower at {_list(holds)} bits."
        )
    if fails:
        sentences.append(
            f"Without CRT and with full-length ElGamal exponents, ElGamal is not lower at {_list(fails)} bits."
        )
    flipped = [
        f"{t.bits}"
        for t in totals
        if t.rsa is not None and t.rsa_crt is not None and t.elgamal < t.rsa and t.rsa_crt < t.elgamal
    ]
    if flipped:
        sentences.append(
            f"With CRT the ranking flips at {_list(flipped)} bits: there the published ranking holds only "
            "if RSA decrypted without CRT."
        )
    blocks: list[Block] = [opening, Bullets([_totals_sentence(t) for t in totals])]
    if sentences:
        blocks.append(Paragraph(" ".join(sentences)))
    return blocks


#: The hypotheses: (name, RSA kind, ElGamal kind), ElGamal kinds of this run added per exponent.
def _hypotheses(grid: _Grid) -> list[tuple[str, str, str]]:
    out = [
        ("RSA with CRT, full-length ElGamal exponents", RSA_CRT, ELGAMAL),
        ("RSA without CRT, full-length ElGamal exponents", RSA, ELGAMAL),
    ]
    for kind, n in _short_kinds(grid):
        out += [
            (f"RSA with CRT, {n}-bit ElGamal x and k", RSA_CRT, kind),
            (f"RSA without CRT, {n}-bit ElGamal x and k", RSA, kind),
        ]
    return out


def _hypothesis_blocks(grid: _Grid, experiment: Experiment, size: int, bits_of: dict[int, int]) -> list[Block]:
    """ElGamal total over RSA total, published and under each hypothesis, and which fits best."""
    length = bits_of.get(size)
    keys = [
        bits
        for bits in grid.key_sizes
        if any(r.get("message_bits") == length for r in _published_rows(experiment, bits))
    ]
    hypotheses = [
        h
        for h in _hypotheses(grid)
        if any(grid.total(h[1], bits, size) and grid.total(h[2], bits, size) for bits in keys)
    ]
    if not keys or not hypotheses:
        return []
    rows, best = [], []
    sides: list[tuple[str, str]] = []
    never_lower: list[int] = []
    for bits in keys:
        row = next(r for r in _published_rows(experiment, bits) if r.get("message_bits") == length)
        published = row["elgamal_total"] / row["rsa_total"]
        cells, fits = [f"{bits}", f"{published:.2f}"], []
        for name, rsa_kind, elgamal_kind in hypotheses:
            rsa, elgamal = grid.total(rsa_kind, bits, size), grid.total(elgamal_kind, bits, size)
            if rsa and elgamal:
                ours = elgamal / rsa
                cells.append(f"{ours:.2f}")
                fits.append((abs(math.log(ours / published)), name, ours))
            else:
                cells.append(MISSING)
        rows.append(cells)
        if fits:
            _distance, name, ours = min(fits)
            best.append((bits, name, ours, published))
            sides.append(next((r, e) for n, r, e in hypotheses if n == name))
        full = [(r, e) for n, r, e in hypotheses if e == ELGAMAL]
        if all(
            grid.total(e, bits, size)
            and grid.total(r, bits, size)
            and grid.total(e, bits, size) >= grid.total(r, bits, size)  # type: ignore[operator]
            for r, e in full
        ):
            never_lower.append(bits)
    table = Table(
        ["Key bits", "Published"] + [name for name, _, _ in hypotheses],
        rows,
        caption=f"ElGamal total over RSA total for {_message_words(size, bits_of)} (one block at every key "
        "size): the source's cells, and ours under each hypothesis. Below 1: ElGamal is faster. "
        "Short exponents cap ElGamal's security at half their length (Pollard's lambda): 80 bits "
        "for 160-bit, 128 bits for 256-bit exponents.",
        widths=[0.8, 0.9] + [1.2] * len(hypotheses),
    )
    opening = Paragraph(
        "**Which hypothesis fits.** The source says neither whether its RSA decrypted with the CRT "
        "nor how long its ElGamal exponents were; both change the ranking. Each column below is one "
        "combination measured here."
    )
    verdict = "; ".join(
        f"at {bits} bits, {name} ({ours:.2f} against {published:.2f} published)" for bits, name, ours, published in best
    )
    names = {name for _, name, _, _ in best}
    words = [f"Closest to the source's ratio: {verdict}."]
    if len(names) == 1:
        words.append(
            "One combination fits best at every key size, which is consistent with it, not proof of it: the "
            "source's code is not available."
        )
    else:
        common = []
        if len({r for r, _ in sides}) == 1:
            common.append("RSA " + ("with" if sides[0][0] == RSA_CRT else "without") + " CRT")
        if sides and all(e != ELGAMAL for _, e in sides):
            common.append("short ElGamal exponents")
        words.append(
            "No single combination fits best at every key size"
            + (f", but every closest one has {' and '.join(common)}" if common else "")
            + "; the source's code is not available to settle it."
        )
    if never_lower and len(never_lower) == len(keys):
        words.append(
            "With full-length ElGamal exponents, ElGamal's total is not below RSA's at any of these key "
            "sizes, with or without CRT: RSA decrypting without CRT does not by itself explain the published ranking here."
        )
    return [opening, table, Paragraph(" ".join(words))]


def _departures(grid: _Grid, experiment: Experiment, bits_of: dict[int, int]) -> Paragraph | None:
    """Where this preset's setup differs from the source, and what that does to the trend (block counts)."""
    sentences = []
    for bits in grid.key_sizes:
        rows = _published_rows(experiment, bits)
        decs = [r["rsa_dec"] for r in rows]
        sizes = sorted(grid.sizes[bits])
        ours = [(size, grid.mean(RSA, bits, size, "decrypt"), _rsa_blocks(grid, bits, size)) for size in sizes]
        measured = [(size, value, blocks) for size, value, blocks in ours if value is not None]
        if len(decs) < 2 or len(measured) < 2 or not any(blocks and blocks > 1 for _, _, blocks in measured):
            continue
        flat = max(decs) / min(decs) <= FLAT
        low, high = measured[0], measured[-1]
        if not flat or high[1] <= low[1] * FLAT:
            continue
        sentences.append(
            f"at {bits} bits the source's RSA decryption is flat from {int(rows[0]['message_bits'])} to "
            f"{int(rows[-1]['message_bits'])} bits ({printed(min(decs))} to {printed(max(decs))} ms), while ours "
            f"without CRT steps from {_ms(low[1])} ms ({_length_text(low[0], bits_of)}, {low[2] or 1} block) to "
            f"{_ms(high[1])} ms ({_length_text(high[0], bits_of)}, {high[2]} blocks)"
        )
    if not sentences:
        return None
    return Paragraph(
        "**Where this preset departs from the source.** Messages longer than one RSA block are chunked here and "
        "encrypted block by block; the source's flat times show it did not process them that way (how it fitted a "
        "message longer than the modulus, it does not say). So " + "; ".join(sentences) + ". Compare the trends "
        "at the 96-bit message, one block at every key size. The source also gives no repetition count, padding or "
        "exponent size; ours are means of the preset's samples after warm-up, in CPython integers rather than "
        "NTL/GMP."
    )


#: A series whose largest value is within this factor of its smallest is flat.
FLAT = 1.25


#: A published ratio this many times below ours is "much cheaper", not noise between machines.
MUCH_CHEAPER = 2.0


def _exponent_paragraph(grid: _Grid, experiment: Experiment, size: int) -> Paragraph | None:
    """Where our ranking differs even without CRT: ElGamal against RSA decryption, here and published.

    Both decryptions are one exponentiation with an exponent as long as the modulus when
    ElGamal uses full-length exponents, so they should cost about the same; a published
    ElGamal decryption far cheaper than the published RSA one points to shorter exponents.
    """
    pairs = []
    for bits in grid.key_sizes:
        ours_elgamal, ours_rsa = grid.mean(ELGAMAL, bits, size, "decrypt"), grid.mean(RSA, bits, size, "decrypt")
        published_elgamal = _published(experiment, "elgamal", bits, size).get("decrypt")
        published_rsa = _published(experiment, "rsa-textbook", bits, size).get("decrypt")
        if ours_elgamal and ours_rsa and published_elgamal and published_rsa:
            pairs.append((bits, ours_elgamal / ours_rsa, published_elgamal / published_rsa))
    if not pairs:
        return None
    compared = "; ".join(
        f"{ours:.2f}× here against {published:.2f}× published at {bits} bits" for bits, ours, published in pairs
    )
    counting = (
        "**Counting exponentiations.** RSA encryption with e = 65537 is 17 modular multiplications, so it "
        "costs little; RSA decryption without CRT is one exponentiation with an exponent as long as the "
        "modulus. ElGamal encryption is two exponentiations (g^k and h^k) and decryption one."
    )
    sentences = [counting, f"ElGamal decryption over RSA decryption without CRT: {compared}."]
    if all(published * MUCH_CHEAPER < ours for _, ours, published in pairs):
        same = all(1 / MUCH_CHEAPER <= ours <= MUCH_CHEAPER for _, ours, _ in pairs)
        sentences.append(
            "The original's ElGamal was much cheaper relative to its RSA decryption than ours"
            + (
                " (here the two decryptions cost about the same, as two exponentiations of the same size should)"
                if same
                else ""
            )
            + ": that points to shorter ElGamal exponents, or another speed-up, in the original, whose description "
            "does not give them. With three such exponentiations against RSA's one, ElGamal's total is not "
            "expected to be the lower one when both use full-length exponents."
        )
    return Paragraph(" ".join(sentences))


def _padding_paragraph(grid: _Grid, size: int) -> Paragraph:
    opening = (
        "**A fair comparison.** Textbook RSA has no padding: it is deterministic and malleable, so it is "
        "insecure at every key size and is measured here only to reproduce E3. Textbook RSA and ElGamal "
        "both run on CPython integers, so their ratio compares the algorithms on the same arithmetic."
    )
    sentences = [opening]
    oaep = []
    for bits in grid.key_sizes:
        total, crt = grid.total(OAEP, bits, size), grid.total(RSA_CRT, bits, size)
        if total is None:
            continue
        versus = f", {relation(total, crt, 'textbook RSA with CRT')}" if crt is not None else ""
        oaep.append(f"{_ms(total)} ms at {bits} bits{versus}")
    if oaep:
        sentences.append(
            f"What a real deployment pays is RSA-OAEP through OpenSSL (padding, CRT, constant-time C "
            f"code): it totals {'; '.join(oaep)}. Against ElGamal in CPython its advantage mixes the "
            "algorithm with a faster implementation, so read it as the cost of the practical choice, "
            "not of the algorithm alone."
        )
    return Paragraph(" ".join(sentences))


# --- the sections -------------------------------------------------------------------------


def sections(run: RunResult, experiment: Experiment) -> list[Section]:
    grid = _Grid.of(run)
    bits_of = _message_bits(experiment)
    size = grid.short_size()
    if size is None:
        return [
            Section(
                "RSA and ElGamal: time per message",
                [
                    Paragraph(
                        "This run has no textbook RSA, ElGamal or RSA-OAEP (OpenSSL) job, so none of E3's tables "
                        "could be rebuilt.",
                        "note",
                    )
                ],
                level=2,
            )
        ]
    out = []
    for bits in grid.key_sizes:
        blocks: list[Block] = []
        published = _published_table(experiment, bits)
        if published is not None:
            blocks.append(published)
        blocks.append(_key_table(grid, bits, bits_of))
        for chart in (_key_chart(grid, bits, bits_of, experiment), _total_chart(grid, bits, bits_of, experiment)):
            if chart is not None:
                blocks.append(chart)
        out.append(Section(f"RSA-{bits} and ElGamal-{bits}: time per message (ms)", blocks, level=2))
    across = _across_chart(grid, size, bits_of, experiment)
    if across is not None:
        out.append(Section("Across key sizes", [across], level=2))
    why: list[Block] = []
    departures = _departures(grid, experiment, bits_of)
    if departures is not None:
        why.append(departures)
    why.append(_crt_paragraph(grid, size, bits_of))
    totals = _totals(grid, experiment, size)
    if totals:
        why += _conclusion_blocks(totals, size, bits_of, experiment)
    why += _hypothesis_blocks(grid, experiment, size, bits_of)
    exponents = _exponent_paragraph(grid, experiment, size)
    if exponents is not None:
        why.append(exponents)
    why.append(_padding_paragraph(grid, size))
    out.append(Section("Why the published trend differs", why, level=2))
    return out

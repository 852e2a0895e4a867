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
from collections.abc import Callable

from app.core.results.model import RunResult
from app.report.experiments.e3_grid import (
    ELGAMAL,
    KIND_NAMES,
    MISSING_NOTE,
    OAEP,
    PUBLISHED_COLUMNS,
    RSA,
    RSA_CRT,
    Grid,
    length_bits,
    length_text,
    listed,
    message_bits_of,
    ms_text,
    published_rows,
    published_seconds,
    rsa_blocks,
    short_kinds,
)
from app.report.experiments.e3_why import (
    conclusion_blocks,
    crt_paragraph,
    departures_paragraph,
    exponent_paragraph,
    hypothesis_blocks,
    key_size_totals,
    padding_paragraph,
)
from app.report.experiments.published import Experiment, printed
from app.report.model import (
    Block,
    Chart,
    LineChart,
    Paragraph,
    Section,
    Series,
    Table,
)
from app.report.units import MISSING

# --- the per-key-size tables and charts ---------------------------------------------------

#: Table columns: title, the kind that must be in the run for the column to appear, the value.
_Column = tuple[str, str, Callable[[Grid, int, int], float | None]]
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


def total_of(kind: str, grid: Grid, bits: int, size: int) -> float | None:
    """A short-exponent ElGamal column's cell (partial over `kind`)."""
    return grid.total(kind, bits, size)


def short_name(exponent: int) -> str:
    return f"ElGamal, {exponent}-bit x and k"


def _columns_for(grid: Grid, bits: int) -> list[_Column]:
    # "RSA enc" is shown whenever either RSA job was planned: it is their shared operation.
    def planned(kind: str, title: str) -> bool:
        if title == "RSA enc":
            return (RSA, bits) in grid.planned or (RSA_CRT, bits) in grid.planned
        return (kind, bits) in grid.planned

    columns = [column for column in COLUMNS if planned(column[1], column[0])]
    short: list[_Column] = [
        (f"ElGamal total ({n}-bit x, k)", kind, functools.partial(total_of, kind))
        for kind, n in short_kinds(grid, bits)
    ]
    return columns[:-1] + short + columns[-1:] if columns and columns[-1][1] == OAEP else columns + short


def _key_table(grid: Grid, bits: int, bits_of: dict[int, int]) -> Table:
    columns = _columns_for(grid, bits)
    sizes = sorted(grid.sizes[bits])
    rows = [
        [length_text(size, bits_of)] + [ms_text(value(grid, bits, size)) for _, _, value in columns] for size in sizes
    ]
    caption = (
        "Means in ms per message. RSA enc is one operation for both RSA decryptions (timed in the no-CRT "
        "job), so each RSA total is RSA enc plus that decryption."
    )
    absent = [KIND_NAMES[kind] for kind in (RSA, RSA_CRT, ELGAMAL, OAEP) if (kind, bits) not in grid.planned]
    if absent:
        caption += f" Not in this run at {bits} bits: {listed(absent)}."
    if any(cell == MISSING for row in rows for cell in row):
        caption += " " + MISSING_NOTE
    blocks = {size: rsa_blocks(grid, bits, size) for size in sizes}
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


def _published_table(experiment: Experiment, bits: int) -> Table | None:
    rows = published_rows(experiment, bits)
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
    rows = published_rows(experiment, bits)
    out = []
    for column, name in columns:
        points = [(r["message_bits"], published_seconds(r, column, experiment)) for r in rows]
        if (series := _series(f"published: {name}", [(float(x), y) for x, y in points])) is not None:
            out.append(series)
    return out


#: Per-key-size chart series: name and value, as in the original's plots.
_SERIES: list[tuple[str, Callable[[Grid, int, int], float | None]]] = [
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


def _key_chart(grid: Grid, bits: int, bits_of: dict[int, int], experiment: Experiment) -> Chart | None:
    sizes = sorted(grid.sizes[bits])
    series = [
        s
        for name, value in _SERIES
        if (s := _series(name, [(length_bits(size, bits_of), value(grid, bits, size)) for size in sizes]))
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


def _total_chart(grid: Grid, bits: int, bits_of: dict[int, int], experiment: Experiment) -> Chart | None:
    """The total-time panel of one key size: ours under each hypothesis, and the source's totals."""
    sizes = sorted(grid.sizes[bits])
    kinds = [(RSA, "RSA total without CRT"), (RSA_CRT, "RSA total with CRT"), (ELGAMAL, "ElGamal total")]
    kinds += [(kind, f"{short_name(n)}: total") for kind, n in short_kinds(grid, bits)]
    series = [
        s
        for kind, name in kinds
        if (s := _series(name, [(length_bits(size, bits_of), grid.total(kind, bits, size)) for size in sizes]))
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


def _across_chart(grid: Grid, size: int, bits_of: dict[int, int], experiment: Experiment) -> Chart | None:
    keys = grid.key_sizes
    kinds = [(RSA, "RSA without CRT"), (RSA_CRT, "RSA with CRT"), (ELGAMAL, "ElGamal")]
    kinds += [(kind, short_name(n)) for kind, n in short_kinds(grid)] + [(OAEP, "RSA-OAEP (OpenSSL)")]
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
            (float(bits), published_seconds(row, column, experiment))
            for bits in keys
            for row in published_rows(experiment, bits)
            if row.get("message_bits") == length
        ]
        if (published := _series(name, points)) is not None:
            series.append(published)
    chart = LineChart(
        f"Total time (encryption + decryption) against key size, {length_text(size, bits_of)} message",
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


# --- the sections -------------------------------------------------------------------------


def sections(run: RunResult, experiment: Experiment) -> list[Section]:
    grid = Grid.of(run)
    bits_of = message_bits_of(experiment)
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
    departures = departures_paragraph(grid, experiment, bits_of)
    if departures is not None:
        why.append(departures)
    why.append(crt_paragraph(grid, size, bits_of))
    totals = key_size_totals(grid, experiment, size)
    if totals:
        why += conclusion_blocks(totals, size, bits_of, experiment)
    why += hypothesis_blocks(grid, experiment, size, bits_of)
    exponents = exponent_paragraph(grid, experiment, size)
    if exponents is not None:
        why.append(exponents)
    why.append(padding_paragraph(grid, size))
    out.append(Section("Why the published trend differs", why, level=2))
    return out

"""E3: why the published trend differs, in sentences built from this run's numbers: the CRT,
short ElGamal exponents, padding, and which hypothesis the totals fit."""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.core.analysis.evidence import evidence_text, rank
from app.report.experiments.e3_grid import (
    ELGAMAL,
    OAEP,
    RSA,
    RSA_CRT,
    Grid,
    length_text,
    listed,
    message_words,
    ms_text,
    published_rows,
    rsa_blocks,
    short_kinds,
)
from app.report.experiments.published import Experiment, printed
from app.report.job_figures import ratio_text, relation
from app.report.model import (
    Block,
    Bullets,
    Paragraph,
    Table,
)
from app.report.units import MISSING, span_text


def crt_paragraph(grid: Grid, size: int, bits_of: dict[int, int]) -> Paragraph:
    speedups, unranked = [], []
    for bits in grid.key_sizes:
        plain, crt = grid.mean(RSA, bits, size, "decrypt"), grid.mean(RSA_CRT, bits, size, "decrypt")
        plain_e, crt_e = grid.estimate(RSA, bits, size, "decrypt"), grid.estimate(RSA_CRT, bits, size, "decrypt")
        if plain is None or crt is None or crt <= 0 or plain_e is None or crt_e is None:
            continue
        ranking = rank(plain_e, crt_e)  # "faster" only with the evidence for it
        figures = f"{ratio_text(plain / crt)} at {bits} bits ({ms_text(plain)} ms against {ms_text(crt)} ms"
        if ranking.ordered and plain_e.median > crt_e.median:
            speedups.append(f"{figures}; {evidence_text(ranking)})")
        else:
            unranked.append(f"{figures}; {ranking.no_verdict() or 'the medians in the other order'})")
    if not speedups and not unranked:
        return Paragraph(
            "This run has no key size with textbook RSA decrypting both with and without CRT, so the "
            "CRT speed-up was not measured.",
            "note",
        )
    found = f"Here decrypting with it was faster than m = c^d mod n by {listed(speedups)}" if speedups else ""
    if unranked:
        found += ("; and " if speedups else "Here decrypting without it took ") + (
            f"{listed(unranked)} the time of decrypting with it, without a verdict on their order"
        )
    return Paragraph(
        f"**The CRT speed-up.** The source does not say whether its RSA decryption used the Chinese remainder "
        f"theorem. {found} ({message_words(size, bits_of)}; mean decryption "
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


def key_size_totals(grid: Grid, experiment: Experiment, size: int) -> list[_Totals]:
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
        words.append(f" (published: RSA {ms_text(t.published_rsa)} ms, ElGamal {ms_text(t.published_elgamal)} ms)")
    clauses = []
    if t.rsa is not None:
        clause = (
            f"without CRT, RSA totals {ms_text(t.rsa)} ms against ElGamal's {ms_text(t.elgamal)} ms: "
            f"{_lower('ElGamal', t.elgamal, 'RSA', t.rsa)}"
        )
        if t.published_rsa is not None and t.published_elgamal is not None and t.rsa != t.elgamal:
            same = (t.elgamal < t.rsa) == (t.published_elgamal < t.published_rsa)
            clause += ", as published" if same else ", unlike the published ranking"
        clauses.append(clause)
    if t.rsa_crt is not None:
        clauses.append(
            f"with CRT, RSA totals {ms_text(t.rsa_crt)} ms: {_lower('ElGamal', t.elgamal, 'RSA', t.rsa_crt)}"
        )
    return "".join(words) + ", " + "; ".join(clauses) + "."


def _published_lower(experiment: Experiment) -> tuple[list[int], list[int]]:
    """Key sizes where the source's ElGamal total is lower than its RSA total in every row, and the others."""
    keys = sorted({int(r["key_bits"]) for r in experiment.table.records()}) if experiment.table else []
    every = [k for k in keys if all(r["elgamal_total"] < r["rsa_total"] for r in published_rows(experiment, k))]
    return every, [k for k in keys if k not in every]


def conclusion_blocks(totals: list[_Totals], size: int, bits_of: dict[int, int], experiment: Experiment) -> list[Block]:
    every, others = _published_lower(experiment)
    if every:
        claim = (
            f"The source's tables have ElGamal's total (encryption + decryption) lower than RSA's at "
            f"{listed([str(k) for k in every])} bits, in every row"
        )
        claim += f" (not at {listed([str(k) for k in others])} bits)." if others else "."
    else:
        claim = "The source's tables do not have ElGamal's total lower than RSA's in every row of any key size."
    opening = Paragraph(f"**The published conclusion.** {claim} Our totals (means) for {message_words(size, bits_of)}:")
    holds = [f"{t.bits}" for t in totals if t.rsa is not None and t.elgamal < t.rsa]
    fails = [f"{t.bits}" for t in totals if t.rsa is not None and t.elgamal >= t.rsa]
    sentences = []
    if holds:
        sentences.append(
            f"Without CRT and with full-length ElGamal exponents, ElGamal is lower at {listed(holds)} bits."
        )
    if fails:
        sentences.append(
            f"Without CRT and with full-length ElGamal exponents, ElGamal is not lower at {listed(fails)} bits."
        )
    flipped = [
        f"{t.bits}"
        for t in totals
        if t.rsa is not None and t.rsa_crt is not None and t.elgamal < t.rsa and t.rsa_crt < t.elgamal
    ]
    if flipped:
        sentences.append(
            f"With CRT the ranking flips at {listed(flipped)} bits: there the published ranking holds only "
            "if RSA decrypted without CRT."
        )
    blocks: list[Block] = [opening, Bullets([_totals_sentence(t) for t in totals])]
    if sentences:
        blocks.append(Paragraph(" ".join(sentences)))
    return blocks


#: The hypotheses: (name, RSA kind, ElGamal kind), ElGamal kinds of this run added per exponent.
def _hypotheses(grid: Grid) -> list[tuple[str, str, str]]:
    out = [
        ("RSA with CRT, full-length ElGamal exponents", RSA_CRT, ELGAMAL),
        ("RSA without CRT, full-length ElGamal exponents", RSA, ELGAMAL),
    ]
    for kind, n in short_kinds(grid):
        out += [
            (f"RSA with CRT, {n}-bit ElGamal x and k", RSA_CRT, kind),
            (f"RSA without CRT, {n}-bit ElGamal x and k", RSA, kind),
        ]
    return out


def hypothesis_blocks(grid: Grid, experiment: Experiment, size: int, bits_of: dict[int, int]) -> list[Block]:
    """ElGamal total over RSA total, published and under each hypothesis, and which fits best."""
    length = bits_of.get(size)
    keys = [
        bits
        for bits in grid.key_sizes
        if any(r.get("message_bits") == length for r in published_rows(experiment, bits))
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
        row = next(r for r in published_rows(experiment, bits) if r.get("message_bits") == length)
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
        caption=f"ElGamal total over RSA total for {message_words(size, bits_of)} (one block at every key "
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
    words = _fit_words(best, sides, all_keys_never_lower=bool(never_lower) and len(never_lower) == len(keys))
    return [opening, table, Paragraph(" ".join(words))]


def _fit_words(
    best: list[tuple[int, str, float, float]], sides: list[tuple[str, str]], *, all_keys_never_lower: bool
) -> list[str]:
    """Which hypothesis comes closest to the published ratio at each key size (`best`: key
    bits, hypothesis, our ratio, the published one; `sides`: each one's RSA and ElGamal
    kinds), what the closest ones share, and whether full-length exponents could explain
    the published ranking at all (not when ElGamal is never below RSA with them)."""
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
    if all_keys_never_lower:
        words.append(
            "With full-length ElGamal exponents, ElGamal's total is not below RSA's at any of these key "
            "sizes, with or without CRT: RSA decrypting without CRT does not by itself explain the published ranking here."
        )
    return words


def departures_paragraph(grid: Grid, experiment: Experiment, bits_of: dict[int, int]) -> Paragraph | None:
    """Where this preset's setup differs from the source, and what that does to the trend (block counts)."""
    sentences = []
    for bits in grid.key_sizes:
        rows = published_rows(experiment, bits)
        decs = [r["rsa_dec"] for r in rows]
        sizes = sorted(grid.sizes[bits])
        ours = [(size, grid.mean(RSA, bits, size, "decrypt"), rsa_blocks(grid, bits, size)) for size in sizes]
        measured = [(size, value, blocks) for size, value, blocks in ours if value is not None]
        if len(decs) < 2 or len(measured) < 2 or not any(blocks and blocks > 1 for _, _, blocks in measured):
            continue
        flat = max(decs) / min(decs) <= FLAT
        low, high = measured[0], measured[-1]
        if not flat or high[1] <= low[1] * FLAT:
            continue
        sentences.append(
            f"at {bits} bits the source's RSA decryption is flat from {int(rows[0]['message_bits'])} to "
            f"{int(rows[-1]['message_bits'])} bits ({span_text(min(decs), max(decs), printed)} ms), while ours "
            f"without CRT steps from {ms_text(low[1])} ms ({length_text(low[0], bits_of)}, {low[2] or 1} block) to "
            f"{ms_text(high[1])} ms ({length_text(high[0], bits_of)}, {high[2]} blocks)"
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


def exponent_paragraph(grid: Grid, experiment: Experiment, size: int) -> Paragraph | None:
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


def padding_paragraph(grid: Grid, size: int) -> Paragraph:
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
        total_e, crt_e = grid.total_estimate(OAEP, bits, size), grid.total_estimate(RSA_CRT, bits, size)
        versus = (
            f", which {relation(total_e, crt_e, 'textbook RSA with CRT', (total, crt))}"
            if crt is not None and total_e is not None and crt_e is not None
            else ""
        )
        oaep.append(f"{ms_text(total)} ms at {bits} bits{versus}")
    if oaep:
        sentences.append(
            f"What a real deployment pays is RSA-OAEP through OpenSSL (padding, CRT, constant-time C "
            f"code): it totals {'; '.join(oaep)}. Against ElGamal in CPython its advantage mixes the "
            "algorithm with a faster implementation, so read it as the cost of the practical choice, "
            "not of the algorithm alone."
        )
    return Paragraph(" ".join(sentences))

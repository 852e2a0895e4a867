"""E4: hybrid encryption, RSA-KEM + AES-256-GCM against ECIES (secp256k1), and AES-GCM alone.

The notebook timed AES-GCM encrypt + decrypt against the message size per key size,
then RSA-KEM against ECIES with key generation and encryption timed together, one call
per size from 1 KB to 113 MB, and 10 runs of a message meant as 140 bytes but built as
15,820 (its published means). It prints no factor: the one its two means give is
shown as derived. We rebuild the charts, both "SMS" sizes and the factors (with
OpenSSL's RSA key generation beside pycryptodome's), the tamper test and the
ciphertext overhead, naming which implementation each ECIES figure comes from.

Every sentence that compares numbers is built from this run's means and only written
when the run has both sides; a missing or failed job leaves a "-" in its cell.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from app.core.analysis.evidence import rank
from app.core.results.model import JobResult, RunResult
from app.core.vocab import JobStatus
from app.report.experiments.common import find_jobs, first, mean, ratio, seconds
from app.report.experiments.published import Experiment, Figure, metric_sum
from app.report.job_figures import estimate, percent, ratio_text, relation
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
from app.report.units import MISSING, format_bytes, span_text

KIB, MIB = 1024, 1024**2
#: The SMS-sized message the notebook meant, and the one it built: b'A' * messageSize * 140
#: with messageSize left at 113 by the loop before (the size of the published figures).
SMS, AS_BUILT = 140, 113 * 140
SMS_SIZES = (SMS, AS_BUILT)
HYBRID_SCHEMES = ("rsa-kem", "ecies")
#: AES-GCM's nonce and tag around every hybrid ciphertext (app.core.schemes.symmetric);
#: only used to explain an overhead that the run shows, never to make one up.
GCM_NONCE, GCM_TAG = 12, 16
#: eciespy's ciphertext: 65-byte uncompressed ephemeral key || 16-byte nonce || 16-byte tag || body.
ECIES_POINT, ECIESPY_OVERHEAD = 65, 65 + 16 + 16
#: What "-" means in every table here.
MISSING_NOTE = f"{MISSING}: not measured in this run (job missing or failed)."
#: Sizes shown in the overhead table, when measured (the rest only enter the "constant" check).
OVERHEAD_SIZES = (SMS, KIB, 128 * KIB, MIB)


def _groups(jobs: Iterable[JobResult]) -> dict[str, list[JobResult]]:
    """Jobs by label (one label = one scheme, parameters and backend), each sorted by size."""
    out: dict[str, list[JobResult]] = {}
    for job in jobs:
        out.setdefault(job.label, []).append(job)
    return {label: sorted(group, key=lambda j: j.message_size) for label, group in out.items()}


def _short_name(job: JobResult) -> str:
    """A legend-sized name: the label without the "+ AES-256-GCM" every hybrid shares (the caption says it)."""
    bits, curve = job.params.get("bits"), job.params.get("curve")
    if job.scheme == "rsa-kem" and bits:
        return f"RSA-KEM-{bits} [{job.backend}]"
    if job.scheme == "ecies" and curve:
        return f"ECIES {curve} [{job.backend}]"
    return job.label


def _series(name: str, jobs: list[JobResult], y: Callable[[JobResult], float | None]) -> Series | None:
    """The measured points of one job label; None with fewer than two (no line to draw)."""
    points = [(float(job.message_size), value) for job in jobs if (value := y(job)) is not None]
    if len(points) < 2:
        return None
    return Series(name, [x for x, _ in points], [v for _, v in points])


def _range_text(series: list[Series]) -> str:
    xs = [x for s in series for x in s.xs]
    return span_text(min(xs), max(xs), format_bytes)


def _share(fraction: float) -> str:
    """A share in percent that never rounds a sliver away: "over 99.9 %", not "100.0 %"."""
    if fraction > 0.999:
        return "over 99.9 %"
    if 0 < fraction < 0.001:
        return "under 0.1 %"
    return percent(100 * fraction)


def _missing_note(rows: list[list[str]]) -> str:
    return " " + MISSING_NOTE if any(cell == MISSING for row in rows for cell in row) else ""


# --- AES-GCM alone ------------------------------------------------------------------------


def _aes_total(job: JobResult) -> float | None:
    return mean(job, "encrypt", "decrypt")


def _key_bits(job: JobResult) -> int:
    bits = job.params.get("key_bits")
    return bits if isinstance(bits, int) else 0  # an edited results file must not crash the report


def _aes_groups(run: RunResult) -> dict[str, list[JobResult]]:
    jobs = sorted(
        (j for j in run.jobs if j.status == JobStatus.OK and j.scheme == "aes-gcm"),
        key=lambda j: (j.backend, _key_bits(j)),
    )
    return _groups(jobs)


def _aes_chart(groups: dict[str, list[JobResult]]) -> Chart | None:
    series = [s for label, jobs in groups.items() if (s := _series(label, jobs, _aes_total))]
    if not series:
        return None
    chart = LineChart(
        "AES-GCM encrypt + decrypt time against message size",
        "message size",
        "B",
        "mean encrypt + decrypt time",
        "s",
        series,
    )
    counts = {j.metrics["encrypt"].stats.n for jobs in groups.values() for j in jobs if "encrypt" in j.metrics}
    samples = (
        f" ({counts.pop()} samples of each per point; the original made 30 repetitions)" if len(counts) == 1 else ""
    )
    return Chart(chart, caption=f"Mean encryption + mean decryption of one message, per key size{samples}.")


def _per_mib(job: JobResult) -> float | None:
    total = _aes_total(job)
    return None if total is None or job.message_size <= 0 else total * MIB / job.message_size


def _aes_key_ratio(groups: dict[str, list[JobResult]]) -> str | None:
    """AES-256 over AES-128 of one backend at the largest size both measured."""
    by_key: dict[tuple[str, int], dict[int, JobResult]] = {}
    for jobs in groups.values():
        for job in jobs:
            by_key.setdefault((job.backend, _key_bits(job)), {})[job.message_size] = job
    for (backend, bits), small in sorted(by_key.items()):
        large = by_key.get((backend, 256))
        if bits != 128 or large is None or not set(small) & set(large):
            continue
        size = max(set(small) & set(large))
        low, high = _aes_total(small[size]), _aes_total(large[size])
        if low and high:
            return (
                f"At {format_bytes(size)}, AES-256-GCM [{backend}] takes {high / low:.2f}× the time of "
                f"AES-128-GCM: AES-256 has 14 rounds against AES-128's 10, so at most 1.4× if the block "
                "cipher were the whole cost, and GCM's authentication (GHASH) costs the same at every key size."
            )
    return None


def _aes_finding(groups: dict[str, list[JobResult]]) -> Paragraph | None:
    parts = []
    for label, jobs in groups.items():
        largest = jobs[-1]
        per_mib = _per_mib(largest)
        if per_mib is not None:
            parts.append(f"{label} {seconds(per_mib)} per MiB (at {format_bytes(largest.message_size)})")
    if not parts:
        return None
    text = f"Encryption + decryption at the largest size measured: {'; '.join(parts)}."
    key_ratio = _aes_key_ratio(groups)
    return Paragraph(text + (f" {key_ratio}" if key_ratio else ""), "finding")


def _aes_section(run: RunResult) -> Section:
    groups = _aes_groups(run)
    blocks: list[Block] = []
    chart = _aes_chart(groups)
    if chart is not None:
        blocks.append(chart)
    finding = _aes_finding(groups)
    if finding is not None:
        blocks.append(finding)
    if not blocks:
        blocks.append(Paragraph("AES-GCM was not measured in this run.", "note"))
    return Section("AES-GCM: time against message size", blocks, level=2)


# --- RSA-KEM against ECIES across message sizes -------------------------------------------


def _keygen_total(job: JobResult | None) -> float | None:
    """One receiver key pair plus one encryption: what the original timed together."""
    return mean(job, "keygen", "encrypt")


def _encrypt(job: JobResult) -> float | None:
    return mean(job, "encrypt")


def _hybrid_groups(run: RunResult) -> dict[str, list[JobResult]]:
    """The size loops: the "140-byte" messages are runs of their own (10 each), not points of a loop."""
    return _groups(
        j
        for j in run.jobs
        if j.status == JobStatus.OK and j.scheme in HYBRID_SCHEMES and j.message_size not in SMS_SIZES
    )


def _range_chart(groups: dict[str, list[JobResult]], keep: Callable[[int], bool], *, log_y: bool) -> Chart | None:
    series = [
        s
        for jobs in groups.values()
        if (s := _series(_short_name(jobs[0]), [j for j in jobs if keep(j.message_size)], _keygen_total))
    ]
    if not series:
        return None
    chart = LineChart(
        f"RSA-KEM and ECIES: key generation + encryption, {_range_text(series)}",
        "message size",
        "B",
        "mean key generation + encryption",
        "s",
        series,
        log_y=log_y,
    )
    counts = {j.metrics["encrypt"].stats.n for jobs in groups.values() for j in jobs if "encrypt" in j.metrics}
    timed = (
        "one timed encryption per size, as the notebook's loops time one call per size"
        if counts == {1}
        else "the mean encryption time at each size"
    )
    return Chart(
        chart,
        caption="Each scheme encrypts the message with AES-256-GCM. Key generation is the job's mean "
        "keygen time (one receiver key pair, the same for every size), added to "
        f"{timed}; the notebook timed key generation and encryption together. Our RSA-KEM "
        "wraps the key with OAEP over SHA-256, the notebook's with pycryptodome's default "
        "SHA-1." + (" Log scale in time." if log_y else ""),
    )


def _encrypt_chart(groups: dict[str, list[JobResult]]) -> Chart | None:
    series = [s for jobs in groups.values() if (s := _series(_short_name(jobs[0]), jobs, _encrypt))]
    if not series:
        return None
    chart = LineChart(
        "RSA-KEM and ECIES: encryption alone against message size",
        "message size",
        "B",
        "mean encryption time",
        "s",
        series,
        log_x=True,
        log_y=True,
    )
    return Chart(
        chart,
        caption="Encryption without key generation (log-log: a slope of 1 means time proportional "
        "to size). ECIES encryption includes an ephemeral key pair and ECDH, RSA-KEM's one "
        "RSA-OAEP public-key operation wrapping a fresh AES-256 key; both then encrypt the "
        "message with AES-256-GCM.",
    )


def _rsa3072(run: RunResult, backend: str, size: int | None = None) -> list[JobResult]:
    return find_jobs(run, "rsa-kem", backend=backend, params={"bits": 3072}, message_size=size)


def _ecies(run: RunResult, size: int | None = None) -> list[JobResult]:
    return find_jobs(run, "ecies", params={"curve": "secp256k1"}, message_size=size)


def _factor_trend(run: RunResult) -> Paragraph | None:
    """The factor at the smallest and largest size both measured, and what dominates at the largest."""
    rsa = {j.message_size: j for j in _rsa3072(run, "pycryptodome") if j.message_size not in SMS_SIZES}
    ecies = {j.message_size: j for j in _ecies(run) if j.message_size not in SMS_SIZES}
    factors = {}
    for size in sorted(set(rsa) & set(ecies)):
        top, bottom = _keygen_total(rsa[size]), _keygen_total(ecies[size])
        if top is not None and bottom:
            factors[size] = top / bottom
    if len(factors) < 2:
        return None
    small, large = min(factors), max(factors)
    text = (
        f"RSA-KEM-3072 [pycryptodome] over ECIES, key generation included: {ratio_text(factors[small])} at "
        f"{format_bytes(small)}, {ratio_text(factors[large])} at {format_bytes(large)}."
    )
    encrypt, total = _encrypt(rsa[large]), _keygen_total(rsa[large])
    if encrypt is not None and total:
        share = encrypt / total
        text += f" At {format_bytes(large)}, encryption is {_share(share)} of RSA-KEM-3072's total: " + (
            "the message, not key generation, dominates there." if share >= 0.5 else "key generation still dominates."
        )
    return Paragraph(text, "finding")


def _hybrid_section(run: RunResult) -> Section:
    groups = _hybrid_groups(run)
    blocks: list[Block] = []
    small = _range_chart(groups, lambda size: size <= 128 * KIB, log_y=True)
    large = _range_chart(groups, lambda size: size >= MIB, log_y=True)
    if small is not None and large is not None:  # the first chart's caption explains both
        large.caption = "The same sums as the chart above, at the sizes from 1 MiB (log scale in time)."
    for chart in (small, large, _encrypt_chart(groups)):
        if chart is not None:
            blocks.append(chart)
    trend = _factor_trend(run)
    if trend is not None:
        blocks.append(trend)
    if not blocks:
        blocks.append(
            Paragraph("RSA-KEM and ECIES were not measured at two or more message sizes in this run.", "note")
        )
    return Section("RSA-KEM against ECIES: key generation + encryption against message size", blocks, level=2)


# --- the "140-byte" message and the factor -------------------------------------------------


def _figure_for(job: JobResult, experiment: Experiment) -> Figure | None:
    return next((f for f in experiment.figures if f.match.accepts(job)), None)


def _figure_of(experiment: Experiment, scheme: str) -> Figure | None:
    return next((f for f in experiment.figures if f.match.scheme == scheme), None)


def _size_words(size: int) -> str:
    """ "15,820 B (as built)" / "140 B (as intended)": which of the notebook's two sizes."""
    if size == AS_BUILT:
        return f"{size:,} B (as built)"
    if size == SMS:
        return f"{size} B (as intended)"
    return f"{size:,} B"


def _sms_jobs(run: RunResult) -> list[JobResult]:
    jobs = [j for j in run.jobs if j.scheme in HYBRID_SCHEMES and j.message_size in SMS_SIZES]
    return sorted(jobs, key=lambda j: (-j.message_size, j.index))


def _sms_row(job: JobResult, experiment: Experiment) -> list[str]:
    figure = _figure_for(job, experiment) if job.status == JobStatus.OK else None
    measured = metric_sum(job, figure.metrics) if figure is not None else None
    return [
        job.label,
        _size_words(job.message_size),
        seconds(mean(job, "keygen")),
        seconds(mean(job, "encrypt")),
        seconds(_keygen_total(job)),
        figure.published_text() if figure is not None else MISSING,
        ratio(measured, figure.seconds) if figure is not None else MISSING,
    ]


def _sms_table(jobs: list[JobResult], experiment: Experiment) -> Table:
    rows = [_sms_row(job, experiment) for job in jobs]
    return Table(
        ["Scheme", "Message", "Key generation", "Encryption", "Total", "Published total", "Measured / published"],
        rows,
        caption="Means. Total: key generation (one receiver key pair) + encryption of the message, as "
        "the notebook timed them together. The notebook meant a 140-byte message (an SMS) but "
        "built it as b'A' * messageSize * 140 with messageSize left at 113 by the loop before, "
        f"so its published means are for {AS_BUILT:,} bytes; we run both sizes. Published "
        f"total: the notebook's mean where it printed one for this case ({MISSING}: none)."
        + _missing_note([row[2:5] for row in rows]),
        widths=[3.0, 1.3, 1.1, 1.1, 1.1, 1.1, 1.1],
    )


def _factor_row(name: str, top: float | None, bottom: float | None) -> list[str]:
    factor = ratio_text(top / bottom) if top is not None and bottom else MISSING
    return [name, seconds(top), seconds(bottom), factor]


def _published_factor_rows(experiment: Experiment) -> list[list[str]]:
    """The factor the source's two figures give: derived, as the source prints no factor."""
    rsa, ecies = _figure_of(experiment, "rsa-kem"), _figure_of(experiment, "ecies")
    if rsa is None or ecies is None:
        return []
    return [
        [
            f"Derived from the published means at {AS_BUILT:,} B (the notebook prints no factor)",
            rsa.published_text(),
            ecies.published_text(),
            ratio_text(rsa.seconds / ecies.seconds) + " (derived)",
        ]
    ]


def _factor_table(run: RunResult, experiment: Experiment) -> Table:
    rows: list[list[str]] = []
    for size in SMS_SIZES[::-1]:
        ecies = first(_ecies(run, size))
        py, ossl = first(_rsa3072(run, "pycryptodome", size)), first(_rsa3072(run, "cryptography", size))
        if ecies is None and py is None and ossl is None:
            continue
        rows.append(
            _factor_row(
                f"Measured at {_size_words(size)}: RSA in pycryptodome, as the notebook",
                _keygen_total(py),
                _keygen_total(ecies),
            )
        )
        if ossl is not None:
            rows.append(
                _factor_row(
                    f"Measured at {_size_words(size)}: RSA key generation and encryption in OpenSSL",
                    _keygen_total(ossl),
                    _keygen_total(ecies),
                )
            )
        rows.append(
            _factor_row(
                f"Measured at {_size_words(size)}: encryption alone (pycryptodome RSA)",
                mean(py, "encrypt"),
                mean(ecies, "encrypt"),
            )
        )
    return Table(
        ["RSA-KEM-3072 over ECIES", "RSA-KEM-3072", "ECIES secp256k1", "RSA-KEM / ECIES"],
        _published_factor_rows(experiment) + rows,
        caption="Key generation + encryption, means; the factor is RSA-KEM-3072's total over ECIES's. "
        'Every factor here is computed: the notebook prints a "Performance factor" line whose '
        "value is not shown. Our ECIES is OpenSSL's secp256k1, the notebook's eciespy runs on "
        "libsecp256k1." + _missing_note(rows),
        widths=[3.6, 1.3, 1.3, 1.3],
        align=["left", "right", "right", "right"],
    )


def _keygen_paragraph(run: RunResult) -> Paragraph | None:
    """Does RSA key generation dominate the factor? Only what the run shows, at the published size if measured."""
    size = next((s for s in SMS_SIZES[::-1] if first(_rsa3072(run, "pycryptodome", s))), None)
    py = first(_rsa3072(run, "pycryptodome", size)) if size is not None else None
    keygen, total = mean(py, "keygen"), _keygen_total(py)
    if py is None or size is None or keygen is None or not total:
        return None
    share = keygen / total
    words = [
        f"Key generation is {_share(share)} of RSA-KEM-3072's total at {_size_words(size)} ({seconds(keygen)} "
        f"of {seconds(total)}), so "
        + (
            "RSA key generation dominates the factor."
            if share >= 0.5
            else "key generation does not dominate the factor here."
        )
    ]
    stats = py.metrics["keygen"].stats
    if stats.n > 1 and stats.max > stats.min:
        words.append(
            f"RSA key generation searches for random primes, so its time varies: {seconds(stats.min)} to "
            f"{seconds(stats.max)} over {stats.n} key pairs here; a mean of few samples is uncertain."
        )
    ecies_job = first(_ecies(run, size))
    alone, ecies = mean(py, "encrypt"), mean(ecies_job, "encrypt")
    if alone is not None and ecies and ecies_job is not None:
        ranking = rank(estimate(py, "encrypt"), estimate(ecies_job, "encrypt"))  # an order needs its evidence
        versus = relation(estimate(py, "encrypt"), estimate(ecies_job, "encrypt"), "ECIES", (alone, ecies))
        words.append(
            f"Encryption alone, RSA-KEM-3072 takes {seconds(alone)} against ECIES's {seconds(ecies)} (means): it "
            f"{versus}"
            + (
                ": without key generation the order reverses for this run's ECIES, OpenSSL's generic "
                "secp256k1 code, which generates an ephemeral key pair and computes an ECDH for every "
                "message while RSA-KEM does one RSA public-key operation, cheap with e = 65537. The "
                "notebook's eciespy uses libsecp256k1, which this run does not measure, so whether the "
                "order reverses there too is not shown here."
                if alone < ecies and ranking.ordered
                else "."
            )
        )
    ossl_job = first(_rsa3072(run, "cryptography", size))
    ossl = mean(ossl_job, "keygen")
    if ossl is not None and ossl_job is not None:
        versus = relation(estimate(ossl_job, "keygen"), estimate(py, "keygen"), "pycryptodome", (ossl, keygen))
        words.append(f"OpenSSL generated RSA-3072 key pairs in {seconds(ossl)} on average: it {versus}.")
    return Paragraph(" ".join(words))


def _sms_section(run: RunResult, experiment: Experiment) -> Section:
    jobs = _sms_jobs(run)
    counts = {j.metrics["encrypt"].stats.n for j in jobs if j.status == JobStatus.OK and "encrypt" in j.metrics}
    title = 'The "140-byte" message (an SMS)' + (f": {counts.pop()} runs" if len(counts) == 1 else "")
    if not jobs:
        return Section(
            title,
            [
                Paragraph(
                    "No RSA-KEM or ECIES job encrypted the 140-byte or the 15,820-byte message "
                    "in this run, so the factor was not measured.",
                    "note",
                )
            ],
            level=2,
        )
    blocks: list[Block] = [_sms_table(jobs, experiment), _factor_table(run, experiment)]
    keygen = _keygen_paragraph(run)
    if keygen is not None:
        blocks.append(keygen)
    return Section(title, blocks, level=2)


# --- tamper test and ciphertext overhead ----------------------------------------------------


def _tamper_row(label: str, jobs: list[JobResult]) -> tuple[list[str], bool]:
    """One row per job label, summed over its sizes; True when a tampered ciphertext got through."""
    tried = sum(j.validation.tamper_tried for j in jobs)
    rejected = sum(j.validation.tamper_rejected for j in jobs)
    sizes = sum(1 for j in jobs if j.validation.tamper_tried)
    accepted = tried - rejected
    verdict = "not tried" if not tried else f"{accepted} ACCEPTED" if accepted else "all rejected"
    return [label, f"{sizes} of {len(jobs)}", f"{tried:,}", f"{rejected:,}", verdict], accepted > 0


def _tamper_section(run: RunResult) -> Section:
    groups = _groups(j for j in run.jobs if j.status == JobStatus.OK and j.scheme in ("aes-gcm", *HYBRID_SCHEMES))
    if not groups:
        return Section(
            "Tamper test", [Paragraph("No AES-GCM, RSA-KEM or ECIES job finished in this run.", "note")], level=2
        )
    rows: list[list[str]] = []
    flagged: set[int] = set()
    for label, jobs in groups.items():
        row, accepted = _tamper_row(label, jobs)
        if accepted:
            flagged.add(len(rows))
        rows.append(row)
    table = Table(
        ["Scheme", "Sizes tried", "Tampered ciphertexts", "Rejected", "Result"],
        rows,
        caption="Per job, summed over its message sizes: ciphertexts with a flipped bit (in the "
        "encapsulated key, nonce, ciphertext or tag) handed to decryption, and how many it refused.",
        widths=[3.4, 1.0, 1.3, 1.0, 1.3],
        emphasis=flagged,
    )
    tried = sum(j.validation.tamper_tried for jobs in groups.values() for j in jobs)
    rejected = sum(j.validation.tamper_rejected for jobs in groups.values() for j in jobs)
    if flagged:
        names = [rows[i][0] for i in sorted(flagged)]
        text = (
            f"**Tamper test failed**: {tried - rejected:,} of {tried:,} tampered ciphertexts were accepted "
            f"({', '.join(names)}); the published test requires every one to fail authentication."
        )
    elif tried:
        text = (
            f"All {tried:,} tampered ciphertexts were rejected, as the published test requires (there: "
            '"MAC check failed").'
        )
    else:
        text = "No tamper check was made in this run (tamper checks switched off)."
    return Section("Tamper test", [table, Paragraph(text, "finding")], level=2)


def _overhead(job: JobResult) -> int | None:
    payload = job.wire_bytes.get("payload")
    return None if payload is None else payload - job.message_size


def _overhead_parts(job: JobResult, overhead: int) -> str | None:
    """The overhead's parts, only when the bytes add up to what the construction predicts."""
    key = overhead - GCM_NONCE - GCM_TAG
    if job.scheme == "ecies" and key in (33, 65):
        what = f"the ephemeral public key ({'compressed' if key == 33 else 'uncompressed'} point)"
    elif job.scheme == "rsa-kem" and isinstance(job.params.get("bits"), int) and key == job.params["bits"] // 8:
        what = "the RSA-OAEP-wrapped AES key (one modulus length)"
    else:
        return None
    return f"{key} B for {what}, {GCM_NONCE} B of GCM nonce and {GCM_TAG} B of tag"


def _overhead_sentence(label: str, jobs: list[JobResult]) -> str | None:
    values = {o for j in jobs if (o := _overhead(j)) is not None}
    if not values:
        return None
    if len(values) > 1:
        return f"{label}: the overhead varies from {min(values):,} B to {max(values):,} B across its sizes."
    overhead = values.pop()
    parts = _overhead_parts(jobs[0], overhead)
    count = sum(1 for j in jobs if _overhead(j) is not None)
    where = (
        f"a constant {overhead:,} B at all {count} sizes measured"
        if count > 1
        else f"{overhead:,} B at its one size measured"
    )
    return f"{label}: {where}" + (f": {parts}." if parts else ".")


def _overhead_section(run: RunResult) -> Section | None:
    groups = _groups(j for j in run.jobs if j.status == JobStatus.OK and j.scheme in HYBRID_SCHEMES and j.wire_bytes)
    rows = []
    for label, jobs in groups.items():
        shown = [j for j in jobs if j.message_size in OVERHEAD_SIZES] or jobs[:1]
        if not any(j is jobs[-1] for j in shown):
            shown.append(jobs[-1])  # the largest size: the overhead stays put while the message grows
        for job in shown:
            overhead = _overhead(job)
            rows.append(
                [
                    label,
                    format_bytes(job.message_size),
                    f"{job.wire_bytes.get('payload', 0):,} B",
                    f"{overhead:,} B" if overhead is not None else MISSING,
                ]
            )
    if not rows:
        return None
    sentences = [s for label, jobs in groups.items() if (s := _overhead_sentence(label, jobs))]
    blocks: list[Block] = [
        Table(
            ["Scheme", "Message", "Ciphertext", "Overhead"],
            rows,
            caption="Ciphertext bytes sent for one message; overhead = ciphertext - message.",
            widths=[3.4, 1.1, 1.4, 1.1],
        )
    ]
    ecies = next((jobs for jobs in groups.values() if jobs[0].scheme == "ecies"), None)
    values = {o for j in ecies or [] if (o := _overhead(j)) is not None}
    if values == {ECIES_POINT + GCM_NONCE + GCM_TAG}:
        sentences.append(
            f"The notebook's eciespy sends {ECIESPY_OVERHEAD} B of overhead ({ECIES_POINT} B ephemeral key, "
            f"a 16-byte nonce, {GCM_TAG} B tag): this tool's ECIES, OpenSSL's secp256k1 with a "
            f"{GCM_NONCE}-byte GCM nonce, sends {ECIESPY_OVERHEAD - min(values)} B less per message. The "
            "two are not wire-compatible."
        )
    if sentences:
        blocks.append(Bullets(sentences))
    return Section("Ciphertext overhead", blocks, level=2)


# --- the sections -------------------------------------------------------------------------


def sections(run: RunResult, experiment: Experiment) -> list[Section]:
    out = [_aes_section(run), _hybrid_section(run), _sms_section(run, experiment), _tamper_section(run)]
    overhead = _overhead_section(run)
    if overhead is not None:
        out.append(overhead)
    return out

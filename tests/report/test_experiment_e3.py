"""E3's sections (RSA against ElGamal) from hand-made runs: tables, charts and the
explanations that must follow the numbers, not a script."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.results.model import JobResult, RunResult
from app.report.experiments.e3 import sections
from app.report.experiments.published import Experiment, load_experiment
from app.report.job_figures import ratio_text
from app.report.markdown import render_markdown
from app.report.model import (
    Bullets,
    Chart,
    LineChart,
    Paragraph,
    Report,
    Section,
    Table,
)
from tests.helpers import records
from tests.helpers.records import spread_samples
from tests.helpers.report_runs import metric

#: (enc, dec) in seconds per kind and key size; the 30-byte message costs 10 % more.
#: Shaped like the published trend: without CRT RSA is slower than ElGamal, with CRT faster.
TIMES: dict[tuple[str, int], tuple[float, float]] = {
    ("rsa", 1024): (4e-5, 2.2e-3),
    ("rsa-crt", 1024): (4.1e-5, 6e-4),
    ("elgamal", 1024): (5.5e-4, 6.6e-4),
    ("oaep", 1024): (3e-5, 1e-4),
    ("rsa", 2048): (7e-5, 1.5e-2),
    ("rsa-crt", 2048): (7.2e-5, 4e-3),
    ("elgamal", 2048): (4.2e-3, 2.2e-3),
    ("oaep", 2048): (5e-5, 5e-4),
}
SIZES = (12, 30)


@pytest.fixture
def experiment() -> Experiment:
    return load_experiment("E3")


def _job(index: int, kind: str, bits: int, size: int, enc: float, dec: float, status: str = "ok") -> JobResult:
    scheme, backend, params, label = {
        "rsa": ("rsa-textbook", "python", {"bits": bits, "crt": False}, f"RSA-{bits} textbook (no CRT) [python]"),
        "rsa-crt": ("rsa-textbook", "python", {"bits": bits, "crt": True}, f"RSA-{bits} textbook [python]"),
        "elgamal": ("elgamal", "python", {"bits": bits}, f"ElGamal-{bits} [python]"),
        "oaep": ("rsa-oaep", "cryptography", {"bits": bits}, f"RSA-OAEP-{bits} [cryptography]"),
    }[kind]
    metrics = (
        {
            "keygen": metric(spread_samples(1e-2, n=5)),
            "encrypt": metric(spread_samples(enc)),
            "decrypt": metric(spread_samples(dec)),
        }
        if status == "ok"
        else {}
    )
    return records.job(
        "e3",
        index,
        size,
        metrics,
        scheme=scheme,
        backend=backend,
        params=params,
        label=label,
        family="public-key-encryption",
        status=status,
        error=None if status == "ok" else "RuntimeError: boom",
        wire_bytes={"payload": bits // 8, "overhead": bits // 8 - size} if status == "ok" else {},
    )


def _run(
    times: dict[tuple[str, int], tuple[float, float]] = TIMES,
    sizes: tuple[int, ...] = SIZES,
    failed: set[tuple[str, int, int]] | None = None,
) -> RunResult:
    jobs: list[JobResult] = []
    for (kind, bits), (enc, dec) in times.items():
        for size in sizes:
            grow = 1.0 if size == sizes[0] else 1.1
            status = "failed" if failed and (kind, bits, size) in failed else "ok"
            jobs.append(_job(len(jobs), kind, bits, size, enc * grow, dec * grow, status))
    return _make_run(jobs)


def _make_run(jobs: list[JobResult]) -> RunResult:
    profile: dict[str, Any] = {"name": "rsa-vs-elgamal", "experiment": "E3"}
    return records.run("e3-run", jobs, started="2026-11-21T10:00:00+00:00", profile=profile)


def _find(run: RunResult, kind: str, bits: int, size: int) -> JobResult:
    crt = {"rsa": False, "rsa-crt": True}.get(kind)
    scheme = {"rsa": "rsa-textbook", "rsa-crt": "rsa-textbook", "elgamal": "elgamal", "oaep": "rsa-oaep"}[kind]
    return next(
        j
        for j in run.jobs
        if j.scheme == scheme and j.params["bits"] == bits and j.message_size == size and j.params.get("crt") == crt
    )


def _mean(job: JobResult, name: str) -> float:
    return job.metrics[name].stats.mean


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3g}"


def _section(found: list[Section], title: str) -> Section:
    return next(s for s in found if s.title == title)


def _blocks(section: Section, kind: type) -> list[Any]:
    return [b for b in section.blocks if isinstance(b, kind)]


def _text(section: Section) -> str:
    """Every sentence of a section: paragraphs and bullet items."""
    parts = [
        b.text if isinstance(b, Paragraph) else " ".join(b.items)
        for b in section.blocks
        if isinstance(b, (Paragraph, Bullets))
    ]
    return " ".join(parts)


def _ours(section: Section) -> Table:
    """Our table of a key-size section (the source's own table, when published, comes first)."""
    return next(t for t in _blocks(section, Table) if not (t.caption or "").startswith("The source's table"))


def _cell(table: Table, row: str, column: str) -> str:
    index = table.columns.index(column)
    return next(r[index] for r in table.rows if r[0] == row)


def test_section_titles(experiment: Experiment) -> None:
    found = sections(_run(), experiment)
    assert [s.title for s in found] == [
        "RSA-1024 and ElGamal-1024: time per message (ms)",
        "RSA-2048 and ElGamal-2048: time per message (ms)",
        "Across key sizes",
        "Why the published trend differs",
    ]
    assert all(s.level == 2 for s in found)


def test_key_table_values_are_sums_of_means(experiment: Experiment) -> None:
    run = _run()
    found = _section(sections(run, experiment), "RSA-2048 and ElGamal-2048: time per message (ms)")
    table = _ours(found)
    published = _blocks(found, Table)[0]  # the source's cells, every one as printed, beside ours
    assert published.rows[0] == ["96 bits", "0.0661", "15.2067", "15.2727", "4.2314", "2.1511", "6.3825"]
    assert len(published.rows) == 6
    assert table.columns == [
        "Message length",
        "RSA enc",
        "RSA dec (no CRT)",
        "RSA total (no CRT)",
        "RSA dec (CRT)",
        "RSA total (CRT)",
        "ElGamal enc",
        "ElGamal dec",
        "ElGamal total",
        "RSA-OAEP total (OpenSSL)",
    ]
    assert [r[0] for r in table.rows] == ["96 bits (12 B)", "238 bits (30 B)"]
    plain, crt = _find(run, "rsa", 2048, 30), _find(run, "rsa-crt", 2048, 30)
    elgamal, oaep = _find(run, "elgamal", 2048, 30), _find(run, "oaep", 2048, 30)
    row = "238 bits (30 B)"
    # RSA enc comes from the no-CRT job, and both RSA totals add the shown encryption.
    assert _cell(table, row, "RSA enc") == _ms(_mean(plain, "encrypt"))
    assert _cell(table, row, "RSA total (no CRT)") == _ms(_mean(plain, "encrypt") + _mean(plain, "decrypt"))
    assert _cell(table, row, "RSA dec (CRT)") == _ms(_mean(crt, "decrypt"))
    assert _cell(table, row, "RSA total (CRT)") == _ms(_mean(plain, "encrypt") + _mean(crt, "decrypt"))
    assert _cell(table, row, "ElGamal total") == _ms(_mean(elgamal, "encrypt") + _mean(elgamal, "decrypt"))
    assert _cell(table, row, "RSA-OAEP total (OpenSSL)") == _ms(_mean(oaep, "encrypt") + _mean(oaep, "decrypt"))
    assert "not measured in this run" not in (table.caption or "")


def test_missing_cells_and_absent_columns_are_named(experiment: Experiment) -> None:
    times = {k: v for k, v in TIMES.items() if k != ("oaep", 1024)}
    run = _run(times, failed={("elgamal", 1024, 30)})
    table = _ours(_section(sections(run, experiment), "RSA-1024 and ElGamal-1024: time per message (ms)"))
    assert "RSA-OAEP total (OpenSSL)" not in table.columns
    assert "Not in this run at 1024 bits: RSA-OAEP (OpenSSL)." in (table.caption or "")
    assert _cell(table, "238 bits (30 B)", "ElGamal total") == "-"
    assert _cell(table, "96 bits (12 B)", "ElGamal total") != "-"
    assert "not measured in this run" in (table.caption or "")


def test_rsa_encryption_falls_back_to_the_crt_job(experiment: Experiment) -> None:
    times = {k: v for k, v in TIMES.items() if k[1] == 2048 and k[0] != "rsa"}
    run = _run(times)
    table = _ours(sections(run, experiment)[0])
    crt = _find(run, "rsa-crt", 2048, 12)
    assert "RSA dec (no CRT)" not in table.columns
    assert _cell(table, "96 bits (12 B)", "RSA enc") == _ms(_mean(crt, "encrypt"))
    assert _cell(table, "96 bits (12 B)", "RSA total (CRT)") == _ms(_mean(crt, "encrypt") + _mean(crt, "decrypt"))


def test_block_count_in_caption(experiment: Experiment) -> None:
    run = _run()
    _find(run, "rsa", 1024, 30).wire_bytes["payload"] = 2 * 128
    table = _ours(sections(run, experiment)[0])
    assert "RSA blocks: 30 B in 2" in (table.caption or "")


def test_key_chart_series_and_points(experiment: Experiment) -> None:
    run = _run()
    chart = _blocks(_section(sections(run, experiment), "RSA-1024 and ElGamal-1024: time per message (ms)"), Chart)[
        0
    ].chart
    assert isinstance(chart, LineChart)
    assert chart.x_unit == "bits" and not chart.log_x and chart.log_y
    assert [s.name for s in chart.series] == [
        "RSA encryption",
        "RSA decryption without CRT",
        "RSA decryption with CRT",
        "ElGamal encryption",
        "ElGamal decryption",
        "published: RSA encryption",
        "published: RSA decryption",
        "published: ElGamal encryption",
        "published: ElGamal decryption",
    ]
    published = chart.series[6]
    assert published.xs == [96.0, 238.0, 627.0, 780.0, 863.0, 1022.0]  # the source's six cells, in seconds
    assert published.ys[0] == pytest.approx(2.1896e-3) and published.ys[-1] == pytest.approx(2.2131e-3)
    decrypt = chart.series[1]
    assert decrypt.xs == [96.0, 238.0]
    assert decrypt.ys == [_mean(_find(run, "rsa", 1024, size), "decrypt") for size in SIZES]


def test_across_key_sizes_chart(experiment: Experiment) -> None:
    run = _run()
    chart = _blocks(_section(sections(run, experiment), "Across key sizes"), Chart)[0].chart
    assert isinstance(chart, LineChart) and chart.log_y
    assert "96 bits (12 B)" in chart.title
    assert [s.name for s in chart.series] == [
        "RSA without CRT",
        "RSA with CRT",
        "ElGamal",
        "RSA-OAEP (OpenSSL)",
        "published: RSA",
        "published: ElGamal",
    ]
    assert chart.series[4].ys == pytest.approx([2.2329e-3, 15.2727e-3])  # the 96-bit totals at 1024 and 2048
    elgamal = chart.series[2]
    assert elgamal.xs == [1024.0, 2048.0]
    job = _find(run, "elgamal", 2048, 12)
    assert elgamal.ys[1] == pytest.approx(_mean(job, "encrypt") + _mean(job, "decrypt"))


def test_single_point_series_are_left_out(experiment: Experiment) -> None:
    found = sections(_run(sizes=(12,)), experiment)
    key_section = _section(found, "RSA-1024 and ElGamal-1024: time per message (ms)")
    assert not _blocks(key_section, Chart)  # one message length: no line to draw
    assert _blocks(key_section, Table)
    assert _section(found, "Across key sizes")  # two key sizes still make a line


def test_crt_ratio_sentence(experiment: Experiment) -> None:
    run = _run()
    text = _text(_section(sections(run, experiment), "Why the published trend differs"))
    plain, crt = _find(run, "rsa", 2048, 12), _find(run, "rsa-crt", 2048, 12)
    expected = ratio_text(_mean(plain, "decrypt") / _mean(crt, "decrypt"))
    assert f"{expected} at 2048 bits" in text
    assert "half-size moduli and half-size exponents" in text


def test_crt_sentence_needs_both_decryptions(experiment: Experiment) -> None:
    times = {k: v for k, v in TIMES.items() if k[0] != "rsa-crt"}
    text = _text(_section(sections(_run(times), experiment), "Why the published trend differs"))
    assert "the CRT speed-up was not measured" in text
    assert "half-size moduli" not in text
    assert "with CRT, RSA totals" not in text


def test_published_conclusion_follows_the_numbers(experiment: Experiment) -> None:
    run = _run()
    text = _text(_section(sections(run, experiment), "Why the published trend differs"))
    plain, elgamal = _find(run, "rsa", 2048, 12), _find(run, "elgamal", 2048, 12)
    rsa_total = _mean(plain, "encrypt") + _mean(plain, "decrypt")
    elgamal_total = _mean(elgamal, "encrypt") + _mean(elgamal, "decrypt")
    assert f"without CRT, RSA totals {_ms(rsa_total)} ms against ElGamal's {_ms(elgamal_total)} ms" in text
    assert f"ElGamal's is {ratio_text(rsa_total / elgamal_total)} lower, as published" in text
    assert "Without CRT and with full-length ElGamal exponents, ElGamal is lower at 1024 and 2048 bits." in text
    # the source's tables: ElGamal lower in every row at 512 bits too
    assert "lower than RSA's at 512, 1024 and 2048 bits, in every row." in text
    assert "original decrypted" not in text and "c^d mod n, without" not in text
    assert "With CRT the ranking flips at 1024 and 2048 bits" in text
    assert "unlike the published ranking" not in text


def test_published_conclusion_flips_when_the_numbers_do(experiment: Experiment) -> None:
    # ElGamal 100× slower: now RSA wins even without CRT, and the text must say so.
    times = {k: (v[0] * 100, v[1] * 100) if k[0] == "elgamal" else v for k, v in TIMES.items()}
    text = _text(_section(sections(_run(times), experiment), "Why the published trend differs"))
    assert "unlike the published ranking" in text
    assert "as published" not in text
    assert "Without CRT and with full-length ElGamal exponents, ElGamal is not lower at 1024 and 2048 bits." in text
    assert "ranking flips" not in text


def test_exponent_paragraph_compares_with_the_published_ratio(experiment: Experiment) -> None:
    run = _run()
    text = _text(_section(sections(run, experiment), "Why the published trend differs"))
    ours = _mean(_find(run, "elgamal", 2048, 12), "decrypt") / _mean(_find(run, "rsa", 2048, 12), "decrypt")
    published = 2.1511 / 15.2067
    assert f"{ours:.2f}× here against {published:.2f}× published at 2048 bits" in text
    # Our hand numbers keep the published proportions: no "much cheaper" claim.
    assert "much cheaper" not in text


def test_exponent_paragraph_when_elgamal_costs_like_rsa(experiment: Experiment) -> None:
    # ElGamal decryption as costly as RSA's without CRT (full-length exponents): the published one was not.
    times = {k: (v[0], TIMES[("rsa", k[1])][1]) if k[0] == "elgamal" else v for k, v in TIMES.items()}
    text = _text(_section(sections(_run(times), experiment), "Why the published trend differs"))
    assert "1.00× here against" in text
    assert "much cheaper relative to its RSA decryption than ours (here the two decryptions cost about the same" in text
    assert "shorter ElGamal exponents" in text


def test_oaep_sentence(experiment: Experiment) -> None:
    text = _text(_section(sections(_run(), experiment), "Why the published trend differs"))
    assert "Textbook RSA has no padding" in text
    assert "RSA-OAEP through OpenSSL" in text and "at 2048 bits" in text
    no_oaep = {k: v for k, v in TIMES.items() if k[0] != "oaep"}
    text = _text(_section(sections(_run(no_oaep), experiment), "Why the published trend differs"))
    assert "Textbook RSA has no padding" in text
    assert "RSA-OAEP through OpenSSL" not in text


@pytest.mark.parametrize(
    "jobs",
    [
        [],
        [_job(0, "elgamal", 1024, 12, 1e-3, 1e-3)],
        [_job(0, "rsa", 512, 12, 1e-5, 1e-4)],
        [_job(0, "oaep", 2048, 12, 1e-5, 1e-4)],
        [_job(0, "rsa", 1024, 12, 1e-5, 1e-4, status="failed"), _job(1, "elgamal", 1024, 12, 0, 0, status="failed")],
        [_job(0, "rsa", 1024, 999, 1e-5, 1e-4), _job(1, "rsa-crt", 1024, 999, 1e-5, 3e-5)],
    ],
    ids=["empty", "elgamal-only", "rsa-only", "oaep-only", "all-failed", "odd-size"],
)
def test_reduced_runs_do_not_raise(experiment: Experiment, jobs: list[JobResult]) -> None:
    found = sections(_make_run(jobs), experiment)
    assert found and all(isinstance(s, Section) for s in found)
    render_markdown(Report("E3", "", [], found))


def test_odd_message_size_is_labelled_in_bytes(experiment: Experiment) -> None:
    run = _make_run([_job(0, "rsa", 1024, 999, 1e-5, 1e-4), _job(1, "rsa-crt", 1024, 999, 1e-5, 3e-5)])
    table = _ours(sections(run, experiment)[0])
    assert [r[0] for r in table.rows] == ["999 B"]
    assert "ElGamal" in (table.caption or "")  # named as not in this run


def test_through_experiment_sections() -> None:
    from app.report.experiments import experiment_sections

    found = experiment_sections(_run())
    titles = [s.title for s in found]
    assert titles[0].startswith("Experiment E3")
    assert "Published and measured" in titles
    assert "Why the published trend differs" in titles


def test_markdown_rendering(experiment: Experiment) -> None:
    text = render_markdown(Report("E3", "", [], sections(_run(), experiment)))
    assert "### RSA-2048 and ElGamal-2048: time per message (ms)" in text
    assert "| Message length | RSA enc |" in text
    assert "**Chart: Total time (encryption + decryption) against key size" in text


def _short(index: int, bits: int, size: int, enc: float, dec: float) -> JobResult:
    job = _job(index, "elgamal", bits, size, enc, dec)
    job.params = {"bits": bits, "exponent_bits": 160}
    job.label = f"ElGamal-{bits} (x, k: 160 bits) [python]"
    return job


def _with_short(full: float, short: float) -> RunResult:
    """TIMES with full-length ElGamal scaled by `full`, plus ElGamal with 160-bit exponents at `short` × TIMES."""
    times = {k: (v[0] * full, v[1] * full) if k[0] == "elgamal" else v for k, v in TIMES.items()}
    run = _run(times)
    extra = [
        _short(100 + i, bits, size, TIMES[("elgamal", bits)][0] * short, TIMES[("elgamal", bits)][1] * short)
        for i, (bits, size) in enumerate((b, s) for b in (1024, 2048) for s in SIZES)
    ]
    return _make_run(run.jobs + extra)


def _hypotheses(run: RunResult, experiment: Experiment) -> tuple[Table, str]:
    found = _section(sections(run, experiment), "Why the published trend differs")
    table = next(t for t in _blocks(found, Table) if t.columns[:2] == ["Key bits", "Published"])
    return table, _text(found)


def test_hypothesis_table_sets_each_combination_beside_the_published_ratio(experiment: Experiment) -> None:
    run = _with_short(5.0, 1.0)  # full-length ElGamal 5x the published shape, short exponents at it
    table, text = _hypotheses(run, experiment)
    assert table.columns[2:] == [
        "RSA with CRT, full-length ElGamal exponents",
        "RSA without CRT, full-length ElGamal exponents",
        "RSA with CRT, 160-bit ElGamal x and k",
        "RSA without CRT, 160-bit ElGamal x and k",
    ]
    row = table.rows[1]
    assert row[:2] == ["2048", f"{6.3825 / 15.2727:.2f}"]  # the source's 96-bit totals
    rsa = _mean(_find(run, "rsa", 2048, 12), "encrypt") + _mean(_find(run, "rsa", 2048, 12), "decrypt")
    elgamal = TIMES[("elgamal", 2048)][0] + TIMES[("elgamal", 2048)][1]
    assert row[5] == f"{elgamal / rsa:.2f}"
    assert "Closest to the source's ratio: at 1024 bits, RSA without CRT, 160-bit ElGamal x and k" in text
    assert "consistent with it, not proof of it" in text
    assert "RSA decrypting without CRT does not by itself explain the published ranking" in text


def test_hypothesis_verdict_follows_the_numbers(experiment: Experiment) -> None:
    # Full-length ElGamal shaped like the published ratio, short exponents far cheaper: full-length fits.
    _, text = _hypotheses(_with_short(1.0, 0.05), experiment)
    verdict = text.split("Closest to the source's ratio")[1].split(".")[0]
    assert "full-length ElGamal exponents" in verdict and "160-bit" not in verdict
    assert "does not by itself explain" not in text  # without CRT, full-length ElGamal is lower here


def test_departure_paragraph_names_the_flat_published_trend(experiment: Experiment) -> None:
    # 512-bit keys: one block at 12 B, four at 128 B; the source is flat there, ours steps.
    jobs = [_job(0, "rsa", 512, 12, 1e-5, 7e-4), _job(1, "rsa", 512, 128, 4e-5, 2.2e-3)]
    jobs[1].wire_bytes = {"payload": 4 * 64, "overhead": 4 * 64 - 128}
    text = _text(_section(sections(_make_run(jobs), experiment), "Why the published trend differs"))
    assert "Where this preset departs from the source" in text
    assert "at 512 bits the source's RSA decryption is flat from 96 to 1022 bits (0.303 to 0.3575 ms)" in text
    assert "steps from 0.7 ms (96 bits (12 B), 1 block) to 2.2 ms (1022 bits (128 B), 4 blocks)" in text
    flat = [_job(0, "rsa", 512, 12, 1e-5, 7e-4), _job(1, "rsa", 512, 128, 4e-5, 7.1e-4)]
    flat[1].wire_bytes = {"payload": 4 * 64, "overhead": 4 * 64 - 128}
    text = _text(_section(sections(_make_run(flat), experiment), "Why the published trend differs"))
    assert "departs from the source" not in text  # our trend is flat too: nothing to explain

"""E5: post-quantum TLS 1.3 handshakes under packet loss, beside Paquin, Stebila and
Tamvada's published curves (PQCrypto 2020; resources/experiments/E5.json).

Their s_timer timed each handshake from before connect() to SSL_connect's return, so TCP's
handshake is in their figure (about two round trips); ours is `connect_handshake`, timed
over the same span. Their key-exchange curves (ECDHE P-256 and its hybrid with round-2
Kyber512-90s, ECDSA P-256 certificates) are answered by today's secp256r1 and
SecP256r1MLKEM768; their signature curves (ECDSA P-256 and round-2 Dilithium2 with the
P-256 + Kyber512-90s group) by ECDSA P-256 and ML-DSA-44 with SecP256r1MLKEM768. The
section sets median and p95 beside each other per loss rate and round trip, draws
handshake time against loss per group and certificate with their curves, and says why
the figures differ (app/report/experiments/e5_why.py) from this run's own numbers.

A published median is said to lie above or below ours only when it falls outside our
median's 95 % interval and our side has the samples a verdict needs
(app.core.analysis.evidence); their side's interval is not published (the key-exchange
script made 5,000 handshakes per point).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from app.core.analysis.evidence import MIN_SAMPLES
from app.core.results.model import RunResult
from app.core.statistics.stats import MetricStats
from app.report.experiments import e5_why
from app.report.experiments.common import ratio
from app.report.experiments.e5_points import (
    METRIC,
    Ours,
    loss_text,
    ours,
    pair_name,
    published_seconds,
    round_trip_text,
    stats,
    their_name,
)
from app.report.experiments.published import Curve, Experiment
from app.report.model import Block, Chart, LineChart, Paragraph, Section, Series, Table
from app.report.units import MISSING, format_seconds

#: Spread of the plotted medians beyond which a chart's time axis is logarithmic.
LOG_SPREAD = 10.0


def reading(ours_stats: MetricStats | None, published_s: float) -> str:
    """Where the published median lies against our median's 95 % interval, in words; a
    verdict only with the samples one needs (their interval is not published)."""
    if ours_stats is None:
        return MISSING
    if ours_stats.n < MIN_SAMPLES or ours_stats.ci95 is None:
        return f"no verdict: {ours_stats.n} samples (a verdict needs {MIN_SAMPLES})"
    low, high = ours_stats.ci95
    if published_s < low:
        return "theirs below our interval"
    if published_s > high:
        return "theirs above our interval"
    return "theirs within our interval"


def _interval(s: MetricStats) -> str:
    if s.ci95 is None:
        return format_seconds(s.median)
    return f"{format_seconds(s.median)} [{format_seconds(s.ci95[0])}, {format_seconds(s.ci95[1])}]"


# --- the tables -----------------------------------------------------------------------------


def _rows(curves: Iterable[Curve], found: Ours, delay_ms: float) -> list[list[str]]:
    rows = []
    for curve in curves:
        for loss in found.losses(delay_ms):
            point = curve.at(loss)
            job = found.at(curve.ours, delay_ms, loss)
            if point is None or job is None:
                continue
            s = stats(job)
            median_s = published_seconds(curve, point.median)
            rows.append(
                [
                    loss_text(loss),
                    their_name(curve),
                    pair_name(curve.ours["group"], curve.ours["certificate"]),
                    format_seconds(median_s),
                    format_seconds(published_seconds(curve, point.p95)),
                    MISSING if s is None else _interval(s),
                    MISSING if s is None else format_seconds(s.p95),
                    MISSING if s is None else str(s.n),
                    ratio(None if s is None else s.median, median_s),
                    reading(s, median_s),
                ]
            )
    return rows


def comparison_table(experiment: Experiment, found: Ours, delay_ms: float) -> Table | None:
    """Their median and p95 beside ours per curve and loss rate, at one round trip."""
    curves = [c for c in experiment.curves if math.isclose(c.delay_ms, delay_ms, abs_tol=1e-9)]
    rows = _rows(curves, found, delay_ms)
    if not rows:
        return None
    trips = sorted({f"{c.rtt_ms:g}" for c in curves})
    return Table(
        [
            "Loss",
            "Theirs",
            "Ours",
            "Published median",
            "Published p95",
            "Our median [95 % CI]",
            "Our p95",
            "n",
            "Ours / theirs",
            "Reading",
        ],
        rows,
        caption=f"Handshake time, TCP's handshake included, at the {round_trip_text(delay_ms)} (theirs measured "
        f"{' and '.join(trips)} ms by ping). Published: the percentiles in their data files; ours: "
        f"{METRIC}. Reading: where their median lies against our median's 95 % interval.",
        widths=[0.7, 2.2, 2.2, 1.1, 1.1, 2.2, 1.0, 0.6, 1.0, 1.9],
        align=["right", "left", "left", "right", "right", "right", "right", "right", "right", "left"],
    )


# --- the charts -----------------------------------------------------------------------------


def _our_series(found: Ours, delay_ms: float, pairs: list[tuple[str, str]]) -> list[Series]:
    out = []
    for group, certificate in pairs:
        points = [
            (loss, s.median)
            for loss in found.losses(delay_ms)
            if (s := stats(found.at({"group": group, "certificate": certificate}, delay_ms, loss))) is not None
        ]
        if points:
            out.append(Series(f"ours: {pair_name(group, certificate)}", [x for x, _ in points], [y for _, y in points]))
    return out


def _their_series(curves: Iterable[Curve]) -> list[Series]:
    return [
        Series(
            f"theirs: {their_name(c)}",
            [p.loss_percent for p in c.points],
            [published_seconds(c, p.median) for p in c.points],
            hollow=[True] * len(c.points),
        )
        for c in curves
    ]


def loss_chart(experiment: Experiment, found: Ours, delay_ms: float, kind: str) -> Chart | None:
    """Median handshake time against loss at one round trip: our groups (`kind` "key
    exchange", each with ECDSA P-256) or certificates ("signature", with the P-256 hybrid),
    and their curves of that experiment, open markers."""
    curves = [c for c in experiment.curves if c.experiment == kind and math.isclose(c.delay_ms, delay_ms, abs_tol=1e-9)]
    if kind == "key exchange":
        pairs = [p for p in found.pairs(delay_ms) if p[1] == "ecdsa-p256"]
    else:
        hybrid = curves[0].ours["group"] if curves else "SecP256r1MLKEM768"
        pairs = [p for p in found.pairs(delay_ms) if p[0] == hybrid]
    series = _our_series(found, delay_ms, pairs)
    if not series:
        return None
    series += _their_series(curves)
    ys = [y for s in series for y in s.ys if y > 0]
    what = "groups, each with ECDSA P-256" if kind == "key exchange" else "certificates, with the P-256 hybrid group"
    chart = LineChart(
        f"{kind.capitalize()} at the {round_trip_text(delay_ms)}: median handshake against loss",
        "packet loss each way",
        "%",
        "median handshake, TCP's included",
        "s",
        series,
        log_y=bool(ys) and max(ys) / min(ys) > LOG_SPREAD,
        hollow_label="published (Paquin et al.)",
    )
    counts = sorted({s.n for job in found.jobs.values() if (s := stats(job)) is not None})
    samples = f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}-{counts[-1]}" if counts else MISSING
    return Chart(
        chart,
        caption=f"Our {what} ({samples} handshakes a point, filled) beside their curves (open markers: "
        "their medians at every loss rate they measured).",
        aspect=0.55,
    )


# --- the section ----------------------------------------------------------------------------


def _method(found: Ours) -> Paragraph:
    counts = sorted({s.n for job in found.jobs.values() if (s := stats(job)) is not None})
    samples = (
        f"{counts[0]} handshakes per point" if len(counts) == 1 else f"{counts[0]}-{counts[-1]} handshakes per point"
    )
    return Paragraph(
        "Their s_timer started its clock before connect() and stopped it when SSL_connect returned, so their "
        "figure holds TCP's handshake and TLS's: two round trips and both ends' work. Ours times the same "
        f"span as {METRIC}: connect's start to the client's handshake done (its Finished made), each "
        f"handshake on a new connection over the packet path ({samples} in this run). Their key-exchange "
        "curves are answered by secp256r1 (their prime256v1) and SecP256r1MLKEM768 (their P-256 hybrid with "
        "round-2 Kyber512-90s), each with ECDSA P-256 certificates; their signature curves by ECDSA P-256 and "
        "ML-DSA-44 (their round-2 Dilithium2) with SecP256r1MLKEM768. X25519MLKEM768 (the hybrid browsers "
        "deploy) and ML-KEM-768 alone have no curve of theirs: ours alone, drawn beside them."
    )


def sections(run: RunResult, experiment: Experiment) -> list[Section]:
    found = ours(run)
    if not found.jobs:
        note = f"No tls13 job over a link timed {METRIC} in this run: nothing to set beside the curves."
        return [Section("Handshakes against packet loss", [Paragraph(note, "note")], level=2)]
    out = [Section("What they timed and what we time", [_method(found)], level=2)]
    for delay in found.delays():
        blocks: list[Block] = []
        for kind in ("key exchange", "signature"):
            chart = loss_chart(experiment, found, delay, kind)
            if chart is not None:
                blocks.append(chart)
        table = comparison_table(experiment, found, delay)
        if table is not None:
            blocks.append(table)
        else:
            blocks.append(Paragraph("No published curve was measured at this round trip in this run.", "note"))
        out.append(Section(f"Handshakes against packet loss, {round_trip_text(delay)}", blocks, level=2))
    why = e5_why.paragraphs(run, experiment, found)
    if why:
        out.append(Section("Why our figures differ from theirs", why, level=2))
    return out

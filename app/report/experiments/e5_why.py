"""Why E5's figures differ from Paquin, Stebila and Tamvada's, each reason written from this
run's numbers (and said only when the run has them): the round trip our links gave, what
a handshake cost beyond two round trips and what our two ends' CPU was of it, the bytes
today's ML-KEM and ML-DSA put on the wire against their round-2 candidates, how loss shows
in both p95s, how the medians rose with loss, and the stacks and machines that ran them.

The sizes of the round-2 candidates and of ML-KEM and ML-DSA are the specifications'
(cited where they are used); every other number is measured here or published in the data.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from app.core.analysis.evidence import MIN_SAMPLES
from app.core.results.model import JobResult, RunResult
from app.core.schemes.tls13 import CERTIFICATES
from app.core.statistics.stats import MetricStats
from app.report.experiments.e5_points import (
    METRIC,
    Ours,
    loss_text,
    pair_name,
    published_seconds,
    round_trip_text,
    stats,
    their_name,
)
from app.report.experiments.published import Curve, Experiment
from app.report.job_figures import ratio_text
from app.report.model import Block, Bullets
from app.report.units import format_seconds

#: TCP's initial congestion window on Linux: 10 segments of 1,448 bytes (RFC 6928).
INITIAL_WINDOW_BYTES = 14_480
#: Their round-2 candidates and today's standards, in bytes: public key and ciphertext (KEM),
#: public key and signature (signatures). Kyber512 round 2 (2019); Dilithium2 round 2 (the
#: liboqs of their experiment); FIPS 203 (ML-KEM-768) and FIPS 204 (ML-DSA-44, ML-DSA-65).
KYBER512_R2 = (800, 736)
MLKEM768 = (1184, 1088)
DILITHIUM2_R2 = (1184, 2044)
MLDSA = {"ml-dsa-44": (1312, 2420), "ml-dsa-65": (1952, 3309)}
#: How far above its median a p95 must be to show a retransmission timer: Linux's minimum
#: retransmission timeout (200 ms) and its first SYN timeout (1 s).
RTO_MIN_S, SYN_RTO_S = 0.2, 1.0


def _b(count: int) -> str:
    return f"{count:,} B"


def _median(values: Iterable[float]) -> float | None:
    ordered = sorted(values)
    if not ordered:
        return None
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _curves_at(experiment: Experiment, delay_ms: float) -> list[Curve]:
    return [c for c in experiment.curves if math.isclose(c.delay_ms, delay_ms, abs_tol=1e-9)]


def _connect(found: Ours, delay_ms: float) -> float | None:
    """The median of the lossless jobs' `connect` medians at `delay_ms`: one round trip as
    TCP's handshake took it."""
    jobs = [job for (_, _, delay, loss), job in found.jobs.items() if delay == round(delay_ms, 6) and loss == 0]
    return _median(s.median for job in jobs if (s := stats(job, "connect")) is not None)


def round_trip(experiment: Experiment, found: Ours) -> str | None:
    parts, extra = [], []
    for delay in found.delays():
        connect = _connect(found, delay)
        theirs = sorted({c.rtt_ms for c in _curves_at(experiment, delay)})
        if connect is None or not theirs:
            continue
        pings = " and ".join(f"{t:g}" for t in theirs)
        parts.append(
            f"{format_seconds(connect)} over the link that models a {round_trip_text(delay)} (their ping: {pings} ms)"
        )
        extra.append(connect - 2 * delay / 1e3)
    if not parts:
        return None
    why = (
        f" Ours passed the model by {format_seconds(min(extra))} or more: every packet crosses the link process "
        "in user space and a TUN device each way, where theirs crossed netem in the kernel, and a handshake "
        "pays it twice."
        if min(extra) > 0
        else ""
    )
    return (
        "**The round trip.** TCP's handshake (connect, the median over the lossless jobs) took "
        + "; ".join(parts)
        + "."
        + why
    )


def _cpu(job: JobResult) -> float | None:
    client, server = stats(job, "handshake_cpu_client"), stats(job, "handshake_cpu_server")
    return None if client is None or server is None else client.median + server.median


def beyond_two_round_trips(experiment: Experiment, found: Ours) -> str | None:
    """Per matched curve at the shortest round trip and no loss: what each side's median
    took beyond two of its own round trips, and our two ends' CPU of it."""
    delays = found.delays()
    if not delays:
        return None
    delay, connect = delays[0], _connect(found, delays[0])
    parts = []
    for curve in _curves_at(experiment, delay):
        point, job = curve.at(0.0), found.at(curve.ours, delay, 0.0)
        ours, cpu = stats(job), None if job is None else _cpu(job)
        if point is None or ours is None or connect is None or cpu is None:
            continue
        theirs = published_seconds(curve, point.median)
        parts.append(
            f"{their_name(curve)} {format_seconds(theirs)}, {format_seconds(theirs - 2 * curve.rtt_ms / 1e3)} "
            f"beyond two of their round trips, against {pair_name(curve.ours['group'], curve.ours['certificate'])} "
            f"{format_seconds(ours.median)}, {format_seconds(ours.median - 2 * connect)} beyond two of ours, "
            f"{format_seconds(cpu)} of it our two ends' CPU in the handshake"
        )
    if not parts:
        return None
    return (
        f"**Beyond two round trips** (the {round_trip_text(delay)}, no loss): "
        + "; ".join(parts)
        + ". Their client was C and their server nginx, on OpenSSL in one call each; ours are Python processes "
        "driving OpenSSL through pyOpenSSL, memory BIOs and a socket, and what is not CPU is waiting for it "
        "(the other ends' turns, the scheduler)."
    )


def _flight(job: JobResult | None, sender: str) -> int | None:
    """The bytes of the first flight `sender` sent in the job's handshake."""
    record = None if job is None else job.tls
    if record is None:
        return None
    return next((flight.bytes for flight in record.flights if flight.sender == sender), None)


def _apart(a: MetricStats | None, b: MetricStats | None) -> float | None:
    """a's median less b's when both have the samples a verdict needs and their 95 %
    intervals do not overlap; None otherwise."""
    if a is None or b is None or min(a.n, b.n) < MIN_SAMPLES or a.ci95 is None or b.ci95 is None:
        return None
    if a.ci95[0] > b.ci95[1] or b.ci95[0] > a.ci95[1]:
        return a.median - b.median
    return None


def _difference_words(a: MetricStats | None, b: MetricStats | None) -> str:
    gap = _apart(a, b)
    if gap is None:
        return "our intervals cannot tell the two apart"
    return f"ours {format_seconds(abs(gap))} {'more' if gap > 0 else 'less'}, intervals apart"


def _window_words(flights: Iterable[int]) -> str:
    sizes = list(flights)
    if sizes and max(sizes) <= INITIAL_WINDOW_BYTES:
        return (
            f"every flight fits TCP's initial window ({_b(INITIAL_WINDOW_BYTES)}), so none waits a round trip "
            "for an acknowledgement"
        )
    return f"a flight passes TCP's initial window ({_b(INITIAL_WINDOW_BYTES)}) and waits a round trip more"


def _key_exchange_curves(experiment: Experiment, delay_ms: float) -> tuple[Curve, Curve] | None:
    """Their ECDHE P-256 and P-256 hybrid curves at `delay_ms`."""
    curves = [c for c in _curves_at(experiment, delay_ms) if c.experiment == "key exchange"]
    hybrid = next((c for c in curves if "kyber" in c.group), None)
    classical = next((c for c in curves if "kyber" not in c.group), None)
    return None if hybrid is None or classical is None else (classical, hybrid)


def key_exchange(experiment: Experiment, found: Ours) -> str | None:
    delays = found.delays()
    pair = _key_exchange_curves(experiment, delays[0]) if delays else None
    if pair is None:
        return None
    delay, (classical, hybrid) = delays[0], pair
    ours_classical, ours_hybrid = found.at(classical.ours, delay, 0.0), found.at(hybrid.ours, delay, 0.0)
    sizes = [_flight(job, sender) for job in (ours_classical, ours_hybrid) for sender in ("client", "server")]
    c_hello, c_server, h_hello, h_server = sizes
    if c_hello is None or c_server is None or h_hello is None or h_server is None:
        return None
    theirs = ""
    start, hybrid_start = classical.at(0.0), hybrid.at(0.0)
    if start is not None and hybrid_start is not None:
        gap = published_seconds(hybrid, hybrid_start.median - start.median)
        theirs = f"; their hybrid's median {format_seconds(abs(gap))} {'above' if gap >= 0 else 'below'} P-256's"
    return (
        f"**Round-2 Kyber against ML-KEM.** Their hybrid paired P-256 with round-2 Kyber512-90s (category 1: "
        f"an {_b(KYBER512_R2[0])} public key in the ClientHello, a {_b(KYBER512_R2[1])} ciphertext back); "
        f"{hybrid.ours['group']} carries ML-KEM-768 (FIPS 203, category 3: {_b(MLKEM768[0])} and "
        f"{_b(MLKEM768[1])}). Our ClientHello was {_b(h_hello)} with it against {_b(c_hello)} with "
        f"{classical.ours['group']} alone, and the server's flight {_b(h_server)} against {_b(c_server)}; "
        f"{_window_words([h_hello, h_server])}. At the {round_trip_text(delay)} without loss: "
        f"{_difference_words(stats(ours_hybrid), stats(ours_classical))}{theirs}."
    )


def signatures(experiment: Experiment, found: Ours) -> str | None:
    delays = found.delays()
    curves = [c for c in experiment.curves if c.experiment == "signature"]
    if not delays or not curves:
        return None
    delay, hybrid = delays[0], curves[0].ours["group"]
    flights = {
        certificate: size
        for certificate in ("ecdsa-p256", *MLDSA)
        if (size := _flight(found.at({"group": hybrid, "certificate": certificate}, delay, 0.0), "server"))
    }
    if "ecdsa-p256" not in flights or len(flights) < 2:
        return None
    sizes = ", ".join(f"{CERTIFICATES[certificate].label} {_b(size)}" for certificate, size in flights.items())
    standards = "; ".join(
        f"{name.upper()} {_b(pk)} and {_b(sig)}" for name, (pk, sig) in MLDSA.items() if name in flights
    )
    return (
        f"**Round-2 Dilithium against ML-DSA.** Their Dilithium2 was round 2's ({_b(DILITHIUM2_R2[0])} public "
        f"key, {_b(DILITHIUM2_R2[1])} signature); FIPS 204 gives {standards}, and the certificate carries one of "
        f"each. Our server's flight with {hybrid}: {sizes}; {_window_words(flights.values())}."
    )


def _first_jump(points: Iterable[tuple[float, float, float]], above: float) -> float | None:
    """The first loss at which a p95 passed its median by `above` seconds."""
    return next((loss for loss, median, p95 in points if p95 - median >= above), None)


def _jump_words(loss: float | None, measured: bool) -> str:
    if loss is not None:
        return f"at {loss_text(loss)}"
    return "at no loss measured" if measured else "never"


def loss_shows(experiment: Experiment, found: Ours) -> str | None:
    """Where the p95 first shows a retransmission timer, theirs and ours, per matched curve."""
    parts = []
    for curve in experiment.curves:
        ours = [
            (loss, s.median, s.p95)
            for loss in found.losses(curve.delay_ms)
            if (s := stats(found.at(curve.ours, curve.delay_ms, loss))) is not None
        ]
        if len(ours) < 2:
            continue
        theirs = [
            (p.loss_percent, published_seconds(curve, p.median), published_seconds(curve, p.p95)) for p in curve.points
        ]
        words = [
            f"{_jump_words(_first_jump(theirs, step), True)} for theirs, "
            f"{_jump_words(_first_jump(ours, step), False)} for ours"
            for step in (RTO_MIN_S, SYN_RTO_S)
        ]
        parts.append(
            f"{their_name(curve)} at the {round_trip_text(curve.delay_ms)}: 200 ms up {words[0]}; 1 s up {words[1]}"
        )
    if not parts:
        return None
    return (
        "**Loss and TCP's timers.** Both links lose packets independently each way (theirs netem on each end, "
        "ours the link process per direction; our achieved loss is in each job's path counters). A lost data "
        "segment waits at least 200 ms to be sent again, a lost SYN or SYN-ACK 1 s, so the p95 jumps by that "
        "much once such a loss strikes more than one handshake in twenty. Where the p95 first passed its median "
        "by 200 ms and by 1 s: " + "; ".join(parts) + " (ours only at the loss rates this run measured)."
    )


def trend(experiment: Experiment, found: Ours) -> str | None:
    """How each median rose from no loss to the highest loss measured, theirs and ours."""
    parts = []
    for curve in experiment.curves:
        losses = found.losses(curve.delay_ms)
        if len(losses) < 2 or losses[0] != 0:
            continue
        top = losses[-1]
        low, high = stats(found.at(curve.ours, curve.delay_ms, 0.0)), stats(found.at(curve.ours, curve.delay_ms, top))
        start, end = curve.at(0.0), curve.at(top)
        if low is None or high is None or start is None or end is None or low.median <= 0:
            continue
        parts.append(
            f"{their_name(curve)} at the {round_trip_text(curve.delay_ms)} to {loss_text(top)}: theirs "
            f"{ratio_text(end.median / start.median)}, ours {ratio_text(high.median / low.median)}"
        )
    if not parts:
        return None
    return (
        "**The trend.** How much each median rose from no loss: "
        + "; ".join(parts)
        + ". A median moves only once more than half the handshakes meet a loss that costs a timer."
    )


def machines(run: RunResult, found: Ours) -> str | None:
    library = next((job.tls.library for job in found.jobs.values() if job.tls is not None and job.tls.library), None)
    env = run.environment_view
    if library is None:
        return None
    pyopenssl = env.libraries.get("pyOpenSSL")
    binding = f"pyOpenSSL {pyopenssl.version}" if pyopenssl is not None and pyopenssl.version else "pyOpenSSL"
    python = f"Python {env.python_version}" if env.python_version else "Python"
    cpus = f" on {env.logical_cores} CPUs" if env.logical_cores else ""
    machine = f" ({env.cpu_model})" if env.cpu_model else ""
    return (
        "**Stacks and machines.** Theirs: the Open Quantum Safe fork of OpenSSL 1.1.1 with liboqs, a C client and "
        f"nginx 1.17.5, 40 timers at once against 21 nginx workers. Ours: {library} through {binding} on {python}, "
        f"one handshake at a time, client, server and link process sharing this machine{cpus}{machine}. Their "
        f"handshake counts are their scripts' (5,000 a point for the key exchange); ours {METRIC}'s n."
    )


def paragraphs(run: RunResult, experiment: Experiment, found: Ours) -> list[Block]:
    items = [
        text
        for text in (
            round_trip(experiment, found),
            beyond_two_round_trips(experiment, found),
            key_exchange(experiment, found),
            signatures(experiment, found),
            loss_shows(experiment, found),
            trend(experiment, found),
            machines(run, found),
        )
        if text
    ]
    return [Bullets(items)] if items else []

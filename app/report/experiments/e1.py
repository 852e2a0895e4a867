"""E1: ECDH + AES-GCM against ElGamal over a loopback client/server.

The original printed, per sample, the client's computation delay (encryption) and
communication delay (send to the server's confirmation), then their averages. We
rebuild both as per-sample charts and an averages table, set the source's printed
sample lines and its stated 44× ratio beside the job that reproduces its setup (Nagle
on, no warm-up), and explain the communication delay with what this run measured: the
transport floor on the same connection and the same client with TCP_NODELAY set.
"""

from __future__ import annotations

from app.core.analysis.evidence import evidence_text, rank
from app.core.results.model import JobResult, RunResult
from app.core.session.protocol import ACK
from app.core.settings.links import LinkPresetError, link_presets, link_title, resolve_link, round_trip_ms
from app.core.transport.wire import HEADER_SIZE
from app.core.vocab import SESSION_MODES, JobStatus
from app.report.experiments.common import find_jobs, first, mean, ratio, seconds
from app.report.experiments.published import Experiment, Figure
from app.report.job_figures import estimate, ratio_text
from app.report.model import Block, Chart, LineChart, Paragraph, Section, Series, Table

#: Nagle on and off within this fraction of each other: "no measurable difference".
SAME_WITHIN = 0.2


def _session_jobs(run: RunResult) -> list[JobResult]:
    return [
        job for job in run.jobs if job.status == JobStatus.OK and job.mode in SESSION_MODES and "compute" in job.metrics
    ]


def _short(job: JobResult) -> str:
    """A legend-sized name: the KDF and AEAD are the same in every E1 ECDH job."""
    return job.label.replace(" + SHA-256 + AES-256-GCM", " + AES-GCM").replace("brainpoolP256r1", "brainpool")


def _per_sample_chart(jobs: list[JobResult], metric: str, title: str, y_label: str) -> Chart | None:
    series = []
    for job in jobs:
        samples = list(job.metrics[metric].samples) if metric in job.metrics else []
        if len(samples) >= 2:
            series.append(Series(_short(job), [float(i + 1) for i in range(len(samples))], samples))
    if not series:
        return None
    spread = max(max(s.ys) for s in series) / max(min(min(s.ys) for s in series), 1e-12)
    chart = LineChart(title, "sample", "", y_label, "s", series, log_y=spread > 100)
    return Chart(
        chart,
        caption="One point per message, in the order sent (the original printed these as "
        '"Sample i/N | Comp Delay | Comm Delay").',
        aspect=0.55,
    )


def _published(
    experiment: Experiment, metric: str, statistic: str = "mean", sample: int | None = None
) -> Figure | None:
    return next(
        (f for f in experiment.figures if f.metrics == [metric] and f.statistic == statistic and f.sample == sample),
        None,
    )


def _averages(jobs: list[JobResult], experiment: Experiment) -> Table:
    rows = []
    for job in jobs:
        rows.append(
            [
                job.label,
                seconds(mean(job, "compute")),
                seconds(mean(job, "rtt")),
                seconds(mean(job, "receiver")),
                seconds(mean(job, "floor_rtt")),
                seconds(mean(job, "handshake")),
            ]
        )
    comp, comm = _published(experiment, "compute"), _published(experiment, "rtt")
    rows.append(
        [
            "Published (ECDH + AES-256-GCM, tinyec)",
            comp.published_text() if comp else "-",
            comm.published_text() if comm else "-",
            "-",
            "-",
            "-",
        ]
    )
    return Table(
        ["Job", "Computation delay", "Communication delay", "Server decrypts", "Network floor", "Key setup (client)"],
        rows,
        caption="Means over the samples. Communication delay: message sent to confirmation received, "
        "at the client; it includes the server's decryption. Network floor: a ping-pong of frames "
        "of the same size on the same connection. Key setup happens once per session. The published "
        "averages include the source's cold first sample; so does the mean of our job set up as "
        "the source's script (Nagle on, no warm-up), while the other jobs start timing after "
        "warm-up messages.",
        widths=[3.2, 1.3, 1.4, 1.2, 1.2, 1.3],
        emphasis={len(rows) - 1},
    )


def _lines_table(job: JobResult | None, experiment: Experiment) -> Table | None:
    """The source's printed sample lines and its stated ratio, beside the same of our as-published job."""
    numbers = sorted({f.sample for f in experiment.figures if f.statistic == "sample" and f.sample})
    if job is None or not numbers:
        return None
    rows = []
    for number in numbers:
        comp, comm = (
            _published(experiment, "compute", "sample", number),
            _published(experiment, "rtt", "sample", number),
        )
        ours = [_sample(job, "compute", number), _sample(job, "rtt", number)]
        rows.append(
            [
                f"Sample {number}",
                comp.published_text() if comp else "-",
                comm.published_text() if comm else "-",
                seconds(ours[0]),
                seconds(ours[1]),
            ]
        )
    stated = next((s for s in experiment.stated if "communication" in s.case), None)
    compute, rtt = mean(job, "compute"), mean(job, "rtt")
    if stated is not None:
        rows.append(
            [
                "Communication / computation (means)",
                f"{stated.value:g}× (as the source states)",
                "",
                ratio_text(rtt / compute) if compute and rtt else "-",
                "",
            ]
        )
    return Table(
        ["Line", "Published computation", "Published communication", "Our computation", "Our communication"],
        rows,
        caption=f'The source\'s printed lines "Sample i/N | Comp Delay | Comm Delay" beside the same '
        f"samples of our {job.label} job, the one set up as the source's script (TCP_NODELAY off, "
        "no warm-up: our sample 1 is the session's first message).",
        widths=[2.4, 1.5, 1.6, 1.4, 1.5],
        align=["left", "right", "right", "right", "right"],
    )


def _sample(job: JobResult, metric: str, number: int) -> float | None:
    samples = job.metrics[metric].samples if metric in job.metrics else []
    return float(samples[number - 1]) if len(samples) >= number else None


def _median(job: JobResult | None, metric: str) -> float | None:
    if job is None or metric not in job.metrics or job.metrics[metric].stats.median is None:
        return None
    return float(job.metrics[metric].stats.median)


def _slow_count(job: JobResult, metric: str, threshold: float) -> tuple[int, int]:
    samples = list(job.metrics[metric].samples) if metric in job.metrics else []
    return sum(1 for v in samples if v > threshold), len(samples)


#: A sample this many times the TCP_NODELAY job's median network share is "slow".
SLOW_FACTOR = 10


def _nagle_sentences(published: JobResult | None, nodelay: JobResult | None) -> list[str]:
    """Nagle on against TCP_NODELAY set, by the median network share (the jobs differ in warm-up too,
    and a median is not moved by a few cold or slow samples), then the slow samples counted."""
    if published is None or nodelay is None:
        return [
            "This run has no pair of clients with TCP_NODELAY off and on, so the effect of Nagle's algorithm "
            "was not measured."
        ]
    on, off = _median(published, "network"), _median(nodelay, "network")
    if on is None or off is None or off <= 0:
        return []
    head = (
        f"With TCP_NODELAY off (Nagle's algorithm on, a plain socket's default) the median network share of a "
        f"round trip (round trip minus the server's decryption) was {seconds(on)}, against {seconds(off)} with "
        "it set"
    )
    change = on / off - 1
    ranking = rank(estimate(published, "network"), estimate(nodelay, "network"))  # the evidence rule
    if abs(change) <= SAME_WITHIN:
        apart = (
            f"{ratio_text(max(on, off) / min(on, off))} apart ({evidence_text(ranking)})"
            if ranking.ordered
            else ranking.no_verdict().replace("no verdict:", "no verdict on their order:", 1)
        )
        words = [
            f"{head}: the same within {SAME_WITHIN:.0%}, {apart}. For a typical message Nagle's algorithm "
            "changes nothing here, as expected: each message leaves in one write and the client then waits for "
            "the reply, so no small write is ever held back behind an unacknowledged one."
        ]
    elif ranking.ordered and change > 0:
        words = [
            f"{head}: {ratio_text(on / off)} slower ({evidence_text(ranking)}), {seconds(on - off)} more per "
            "message. A script that never sets TCP_NODELAY measures its socket options as well as its cipher."
        ]
    elif ranking.ordered:
        words = [
            f"{head}: lower with Nagle on ({evidence_text(ranking)}). This is one run of each, without repeats, "
            "so it does not show whether the difference would recur."
        ]
    else:
        words = [f"{head}: {ratio_text(on / off)} the time, {ranking.no_verdict()}."]
    threshold = SLOW_FACTOR * off
    slow_on, n_on = _slow_count(published, "network", threshold)
    slow_off, n_off = _slow_count(nodelay, "network", threshold)
    if slow_on or slow_off:
        words.append(
            f"Samples over {seconds(threshold)} ({SLOW_FACTOR}× the TCP_NODELAY median): {slow_on} of {n_on} with "
            f"Nagle on, {slow_off} of {n_off} with TCP_NODELAY set; one run of each cannot tell whether "
            "they come from the socket option, the missing warm-up or other load on the machine."
        )
    return words


def _explanations(run: RunResult, experiment: Experiment) -> list[Paragraph]:
    """Why our figures differ from the published ones, a paragraph per delay where the run
    has the jobs to say it: computation, communication, and the fair security level."""
    nodelay = first(find_jobs(run, "ecdh", backend="tinyec", tcp_nodelay=True))
    as_published = first(find_jobs(run, "ecdh", backend="tinyec", tcp_nodelay=False))
    ecdh = as_published or nodelay  # the job the published figures are set beside
    compute = mean(ecdh, "compute")
    paragraphs = [
        _computation_paragraph(run, ecdh, compute, _published(experiment, "compute")),
        _communication_paragraph(experiment, ecdh, as_published, nodelay),
        _security_level_paragraph(run, compute, ecdh),
    ]
    return [paragraph for paragraph in paragraphs if paragraph is not None]


def _computation_paragraph(
    run: RunResult, ecdh: JobResult | None, compute: float | None, comp_figure: Figure | None
) -> Paragraph | None:
    """One message's encryption against the published figure, through OpenSSL too, and the
    key agreement it follows."""
    if compute is None or comp_figure is None or ecdh is None:
        return None
    words = [
        (
            f"**Computation delay.** Per message, ECDH + AES-GCM costs one AES-256-GCM encryption of 18 "
            f"bytes: {seconds(compute)} here ({ecdh.label}) against the published "
            f"{comp_figure.published_text()} ({ratio(compute, comp_figure.seconds)})."
        )
    ]
    openssl_job = first(find_jobs(run, "ecdh", backend="cryptography", tcp_nodelay=True))
    openssl = mean(openssl_job, "compute")
    if openssl is not None:
        words.append(
            f"tinyec does only the curve arithmetic; the AES-GCM around it is pycryptodome's, which "
            f"builds a cipher object per message. Through OpenSSL (the cryptography job) the same "
            f"encryption took {seconds(openssl)}: pycryptodome's per-message cost is "
            f"{_relation(compute, openssl, _ordered(ecdh, openssl_job, 'compute'))} OpenSSL's."
        )
    handshake = mean(ecdh, "handshake")
    if handshake:
        words.append(
            f"The key agreement itself happens once per session: tinyec's pure-Python ECDH took "
            f"{seconds(handshake)} at the client, {ratio_text(handshake / compute)} one message's "
            "encryption."
        )
    return Paragraph(" ".join(words))


def _communication_paragraph(
    experiment: Experiment, ecdh: JobResult | None, as_published: JobResult | None, nodelay: JobResult | None
) -> Paragraph | None:
    """Our round trip against the published one: what it is made of, the slow first
    message, Nagle's algorithm, and the link the published figure would equal."""
    rtt = mean(ecdh, "rtt")
    comm_figure = _published(experiment, "rtt")
    if rtt is None or comm_figure is None or ecdh is None:
        return None
    floor, receiver = mean(ecdh, "floor_rtt"), mean(ecdh, "receiver")
    parts = [
        (
            f"**Communication delay.** Our mean round trip is {seconds(rtt)} ({ecdh.label}) against the "
            f"published {comm_figure.published_text()} ({ratio(rtt, comm_figure.seconds)})."
        )
    ]
    if floor is not None and receiver is not None:
        parts.append(
            f"Of it, the server's decryption takes {seconds(receiver)} on average and the bare loopback "
            f"round trip of same-size frames {seconds(floor)}; what remains is each side's Python code "
            "between the socket calls."
        )
    if as_published is not None:
        parts += _first_message_sentence(experiment, ecdh)
    parts += _nagle_sentences(as_published, nodelay)
    on_a_link = _link_equivalent(comm_figure.seconds, ecdh)
    if on_a_link:
        parts.append(on_a_link)
    return Paragraph(" ".join(parts))


def _first_message_sentence(experiment: Experiment, ecdh: JobResult) -> list[str]:
    """The first message slowest in both runs, when it is: the one-time costs no warm-up
    keeps out of the mean."""
    first_rtt, second_rtt = _sample(ecdh, "rtt", 1), _sample(ecdh, "rtt", 2)
    first_pub, second_pub = _published(experiment, "rtt", "sample", 1), _published(experiment, "rtt", "sample", 2)
    if not (first_rtt and second_rtt and first_pub and second_pub):
        return []
    if not (first_rtt > second_rtt and first_pub.value > second_pub.value):
        return []
    opened = _sample(ecdh, "receiver", 1)
    return [
        f"The first message took the longest in both: the source printed {first_pub.published_text()} "
        f"for sample 1 against {second_pub.published_text()} for sample 2; ours took "
        f"{seconds(first_rtt)} against {seconds(second_rtt)}"
        + (f", {seconds(opened)} of it the server's first decryption" if opened else "")
        + ". A first call pays one-time costs (first use of the cipher and of its code paths), and "
        "with no warm-up that cost is in the mean."
    ]


def _security_level_paragraph(run: RunResult, compute: float | None, ecdh: JobResult | None) -> Paragraph | None:
    """ElGamal at the published 128-bit key and at 2048 bits against ECDH + AES-GCM: the
    published comparison is at a demonstration size."""
    weak = first(find_jobs(run, "elgamal", params={"bits": 128}))
    fair = first(find_jobs(run, "elgamal", params={"bits": 2048}))
    if compute is None or not (weak or fair):
        return None
    words = [
        (
            "**A fair security level.** ElGamal with a 128-bit key is a demonstration size "
            f"({(weak.security.classical_bits or '?') if weak else 'about 24'}-bit classical strength, "
            "broken in seconds), while ECDH on brainpoolP256r1 offers 128 bits."
        )
    ]
    weak_compute, fair_compute = mean(weak, "compute"), mean(fair, "compute")
    if weak_compute is not None:
        words.append(
            f"ElGamal-128 encrypts in {seconds(weak_compute)} per message, "
            f"{_relation(weak_compute, compute, _ordered(weak, ecdh, 'compute'))} ECDH + AES-GCM."
        )
    if fair_compute is not None:
        words.append(
            f"At ElGamal-2048 (112 bits, still below ECDH's 128) it takes {seconds(fair_compute)}, "
            f"{_relation(fair_compute, compute, _ordered(fair, ecdh, 'compute'))} ECDH + AES-GCM: the published comparison at 128 "
            "bits understates ElGamal's cost at any size worth deploying."
        )
    return Paragraph(" ".join(words))


def _link_equivalent(published_s: float, job: JobResult) -> str | None:
    """Which emulated link's round trip the published loopback communication delay equals:
    the named link presets (app/core/settings/links.py) ranked by what one exchange of
    this job's frame and acknowledgement costs on them, in the link model."""
    try:
        presets = [resolve_link(name) for name in link_presets()]
    except LinkPresetError:
        return None
    up = job.wire_bytes.get("frame", job.wire_bytes.get("payload", job.message_size))
    costs = sorted(((round_trip_ms(link, up, _ACK_BYTES) / 1000, link) for link in presets), key=lambda c: c[0])
    below = [c for c in costs if c[0] <= published_s]
    above = [c for c in costs if c[0] > published_s]
    if not costs:
        return None
    text = (
        f"**On a network.** The published {seconds(published_s)} is a loopback figure: one machine, no wire. "
        f"In the link model (one-way delay each way, plus the {up}-byte frame and its acknowledgement at the "
        f"link's rate, in the IP packets that carry them) it equals a link with {seconds(published_s / 2)} of "
        "one-way delay"
    )
    if below and above:
        low, high = below[-1], above[0]
        text += (
            f": more than our {link_title(low[1])} preset adds ({seconds(low[0])} a round trip) and "
            f"{ratio_text(high[0] / published_s)} less than {link_title(high[1])} adds ({seconds(high[0])})."
        )
    elif above:
        text += (
            f", less than any of our link presets (the cheapest, {link_title(above[0][1])}, adds "
            f"{seconds(above[0][0])})."
        )
    else:
        text += (
            f", more than every link preset (the costliest, {link_title(below[-1][1])}, adds {seconds(below[-1][0])})."
        )
    return text + (
        ' A loopback job with a "link" (or the pq-over-links preset) measures the same exchange over those links.'
    )


#: A session acknowledgement's frame: header, the receiver's open time and its verdict.
_ACK_BYTES = HEADER_SIZE + ACK.size


def _relation(a: float, b: float, ordered: bool) -> str:
    """A ratio of two means in words; "less than" (an order) only where the evidence rule
    orders the two jobs' medians (`ordered`), else the plain ratio."""
    if a >= b or not ordered:
        return f"{ratio_text(a / b)} the time of"
    return f"{ratio_text(b / a)} less than"


def _ordered(a: JobResult | None, b: JobResult | None, metric: str) -> bool:
    """Whether the evidence rule orders two jobs' medians of `metric`."""
    if a is None or b is None or metric not in a.metrics or metric not in b.metrics:
        return False
    return rank(estimate(a, metric), estimate(b, metric)).ordered


def sections(run: RunResult, experiment: Experiment) -> list[Section]:
    jobs = _session_jobs(run)
    if not jobs:
        return [
            Section(
                "Per-sample delays",
                [
                    Paragraph(
                        "This run has no finished loopback job, so E1's per-sample delays were not measured.", "note"
                    )
                ],
                level=2,
            )
        ]
    blocks: list[Block] = []
    originals = [
        j
        for j in jobs
        if j.scheme in ("ecdh", "elgamal") and j.backend in ("tinyec", "python") and j.params.get("bits", 128) == 128
    ]
    for metric, title, label in (
        ("compute", "Computation delay per sample", "computation delay"),
        ("rtt", "Communication delay per sample", "communication delay"),
    ):
        chart = _per_sample_chart(originals or jobs, metric, title, label)
        if chart is not None:
            if blocks:  # the first chart's caption says what a point is, for both
                chart.caption = None
            blocks.append(chart)
    lines = _lines_table(first(find_jobs(run, "ecdh", backend="tinyec", tcp_nodelay=False)), experiment)
    tables: list[Block] = [_averages(jobs, experiment)]
    if lines:
        tables.append(lines)
    averages = Section("Averages", tables, level=2)
    why = _explanations(run, experiment)
    result = [Section("Per-sample delays", blocks, level=2), averages]
    if why:
        result.append(Section("Why the figures differ", list(why), level=2))
    return result

"""E1: ECDH + AES-GCM against ElGamal over a loopback client/server.

The original printed, per sample, the client's computation delay (encryption) and
communication delay (send to the server's confirmation), then their averages. We
rebuild both as per-sample charts and an averages table, and explain the
communication delay with what this run measured: the transport floor on the same
connection and the same client with Nagle's algorithm left on.
"""

from __future__ import annotations

from app.core.results import JobResult, RunResult
from app.report.experiments.common import find_jobs, first, mean, ratio, seconds
from app.report.findings import ratio_text
from app.report.model import Block, Chart, LineChart, Paragraph, Section, Series, Table
from app.report.published import Experiment

#: Nagle on and off within this fraction of each other: "no measurable difference".
SAME_WITHIN = 0.2


def _session_jobs(run: RunResult) -> list[JobResult]:
    return [job for job in run.jobs if job.status == "ok" and job.mode in ("loopback", "remote")
            and "compute" in job.metrics]


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
    return Chart(chart, caption="One point per message, in the order sent (the original printed these as "
                                "\"Sample i/N | Comp Delay | Comm Delay\").", aspect=0.55)


def _averages(jobs: list[JobResult], experiment: Experiment) -> Table:
    rows = []
    for job in jobs:
        rows.append([job.label, seconds(mean(job, "compute")), seconds(mean(job, "rtt")),
                     seconds(mean(job, "receiver")), seconds(mean(job, "floor_rtt")),
                     seconds(mean(job, "handshake"))])
    published = {tuple(f.metrics): f for f in experiment.figures if f.statistic == "mean"}
    comp, comm = published.get(("compute",)), published.get(("rtt",))
    rows.append(["Published (ECDH + AES-256-GCM, tinyec)", comp.published_text() if comp else "-",
                 comm.published_text() if comm else "-", "-", "-", "-"])
    return Table(["Job", "Computation delay", "Communication delay", "Server decrypts", "Network floor",
                  "Key setup (client)"], rows,
                 caption="Means over the samples. Communication delay: message sent to confirmation received, "
                         "at the client; it includes the server's decryption. Network floor: a ping-pong of frames "
                         "of the same size on the same connection. Key setup happens once per session.",
                 widths=[3.2, 1.3, 1.4, 1.2, 1.2, 1.3], emphasis={len(rows) - 1})


def _explanations(run: RunResult, experiment: Experiment) -> list[Paragraph]:
    paragraphs: list[Paragraph] = []
    ecdh = first(find_jobs(run, "ecdh", backend="tinyec", tcp_nodelay=True))
    nagle = first(find_jobs(run, "ecdh", backend="tinyec", tcp_nodelay=False))
    comp_figure = next((f for f in experiment.figures if f.metrics == ["compute"] and f.statistic == "mean"), None)
    comm_figure = next((f for f in experiment.figures if f.metrics == ["rtt"] and f.statistic == "mean"), None)

    compute = mean(ecdh, "compute")
    if compute is not None and comp_figure is not None:
        words = [(f"**Computation delay.** Per message, ECDH + AES-GCM costs one AES-256-GCM encryption of 18 "
                  f"bytes: {seconds(compute)} here against the published {comp_figure.published_text()} "
                  f"({ratio(compute, comp_figure.seconds)}).")]
        openssl = mean(first(find_jobs(run, "ecdh", backend="cryptography", tcp_nodelay=True)), "compute")
        if openssl is not None:
            words.append(f"tinyec does only the curve arithmetic; the AES-GCM around it is pycryptodome's, which "
                         f"builds a cipher object per message. Through OpenSSL (the cryptography job) the same "
                         f"encryption took {seconds(openssl)}: pycryptodome's per-message cost is "
                         f"{_relation(compute, openssl)} OpenSSL's.")
        handshake = mean(ecdh, "handshake")
        if handshake:
            words.append(f"The key agreement itself happens once per session: tinyec's pure-Python ECDH took "
                         f"{seconds(handshake)} at the client, {ratio_text(handshake / compute)} one message's "
                         "encryption.")
        paragraphs.append(Paragraph(" ".join(words)))

    rtt = mean(ecdh, "rtt")
    if rtt is not None and comm_figure is not None:
        floor, receiver = mean(ecdh, "floor_rtt"), mean(ecdh, "receiver")
        parts = [(f"**Communication delay.** Our mean round trip is {seconds(rtt)} against the published "
                  f"{comm_figure.published_text()} ({ratio(rtt, comm_figure.seconds)}).")]
        if floor is not None and receiver is not None:
            parts.append(f"Of it, the server's decryption takes {seconds(receiver)} and the bare loopback round "
                         f"trip of same-size frames {seconds(floor)}; what remains is each side's Python code "
                         "between the socket calls.")
        network, nagle_network = mean(ecdh, "network"), mean(nagle, "network")
        if network is not None and nagle_network is not None:
            nagle_rtt = mean(nagle, "rtt")
            change = nagle_network / network - 1
            head = (f"With TCP_NODELAY off at both ends (Nagle's algorithm on, a plain socket's default) the mean "
                    f"round trip was {seconds(nagle_rtt)} and its network share (round trip minus the server's "
                    f"decryption) {seconds(nagle_network)}, against {seconds(network)} with it set:")
            if abs(change) <= SAME_WITHIN:
                parts.append(f"{head} no measurable difference, so Nagle's algorithm does not explain the "
                             "published delay.")
            elif change > 0:
                parts.append(f"{head} {ratio_text(nagle_network / network)} slower, "
                             f"{seconds(nagle_network - network)} more per message. A script that never sets "
                             "TCP_NODELAY measures its socket options as well as its cipher.")
            else:
                parts.append(f"{head} faster, within this machine's run-to-run noise for a loopback round trip.")
        else:
            parts.append("This run has no client with TCP_NODELAY off, so the effect of Nagle's algorithm "
                         "was not measured.")
        paragraphs.append(Paragraph(" ".join(parts)))

    weak = first(find_jobs(run, "elgamal", params={"bits": 128}))
    fair = first(find_jobs(run, "elgamal", params={"bits": 2048}))
    if compute is not None and (weak or fair):
        words = [("**A fair security level.** ElGamal with a 128-bit key is a demonstration size "
                  f"({weak.security.get('classical_bits', '?') if weak else 'about 24'}-bit classical strength, "
                  "broken in seconds), while ECDH on brainpoolP256r1 offers 128 bits.")]
        weak_compute, fair_compute = mean(weak, "compute"), mean(fair, "compute")
        if weak_compute is not None:
            words.append(f"ElGamal-128 encrypts in {seconds(weak_compute)} per message, "
                         f"{_relation(weak_compute, compute)} ECDH + AES-GCM.")
        if fair_compute is not None:
            words.append(f"At ElGamal-2048 (112 bits, still below ECDH's 128) it takes {seconds(fair_compute)}, "
                         f"{_relation(fair_compute, compute)} ECDH + AES-GCM: the published comparison at 128 "
                         "bits understates ElGamal's cost at any size worth deploying.")
        paragraphs.append(Paragraph(" ".join(words)))
    return paragraphs


def _relation(a: float, b: float) -> str:
    if a >= b:
        return f"{ratio_text(a / b)} the time of"
    return f"{ratio_text(b / a)} less than"


def sections(run: RunResult, experiment: Experiment) -> list[Section]:
    jobs = _session_jobs(run)
    if not jobs:
        return [Section("Per-sample delays", [Paragraph(
            "This run has no finished loopback job, so E1's per-sample delays were not measured.", "note")],
            level=2)]
    blocks: list[Block] = []
    originals = [j for j in jobs if j.scheme in ("ecdh", "elgamal") and j.backend in ("tinyec", "python")
                 and j.tcp_nodelay is not False and j.params.get("bits", 128) == 128]
    for metric, title, label in (("compute", "Computation delay per sample", "computation delay"),
                                 ("rtt", "Communication delay per sample", "communication delay")):
        chart = _per_sample_chart(originals or jobs, metric, title, label)
        if chart is not None:
            blocks.append(chart)
    averages = Section("Averages", [_averages(jobs, experiment)], level=2)
    why = _explanations(run, experiment)
    result = [Section("Per-sample delays", blocks, level=2), averages]
    if why:
        result.append(Section("Why the figures differ", list(why), level=2))
    return result

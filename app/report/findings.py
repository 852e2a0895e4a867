"""What the numbers say: the "Summary of findings" sentences.

The summary is what most readers read, so every sentence carries its numbers and
compares like with like: jobs are grouped by family, metric and message size before a
ratio is quoted, and the size is always named. A sentence that mixes metrics (key
generation plus encryption) says what was added. The figures come from
`app.report.job_figures` and the baseline pairs from `app.report.baseline`, which the
tables and charts use too, so a number in a sentence is the number in the table.

No Qt here: this module is imported by the Markdown exporter in a Qt-free process.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from app.core.analysis.evidence import (
    MIN_SAMPLES,
    Estimate,
    Ranking,
    Standing,
    evidence_text,
    rank,
    ratio_evidence_text,
)
from app.core.results.model import JobResult, RunResult
from app.core.settings.links import over_link
from app.core.vocab import SESSION_MODES, Exchange, JobStatus, Mode, Verdict
from app.report.baseline import BaselineMatch, JobComparison
from app.report.job_figures import (
    KEYGEN_TOTAL_FAMILIES,
    PUBLIC_KEY_FAMILIES,
    LikeKey,
    estimate,
    exchange_sides,
    exchange_words,
    family_order,
    family_title,
    is_post_quantum,
    like_groups,
    median,
    ok_jobs,
    percent,
    primary_metric,
    ratio_text,
    relation,
    size_text,
    value,
    whole_exchange,
)
from app.report.load import load_findings
from app.report.network_links import link_findings, link_groups
from app.report.units import format_bytes, format_seconds


def _mode_words(metric: str) -> str:
    return f"{metric} over a session" if metric == "compute" else metric


# --- the findings ---------------------------------------------------------------------


def failure_findings(jobs: Iterable[JobResult]) -> list[str]:
    """Failed and cancelled jobs, with their error: a missing number must be explained."""
    out = []
    for job in jobs:
        if job.status == JobStatus.OK:
            continue
        why = job.error or (
            "cancelled before it finished" if job.status == JobStatus.CANCELLED else "no error recorded"
        )
        out.append(
            f"**{job.status.capitalize()}**: {job.label} at {size_text(job)} ({job.mode}) produced no results: {why}."
        )
    return out


def validation_findings(jobs: Iterable[JobResult]) -> list[str]:
    """Validation and tamper-check failures first; otherwise one sentence that all passed."""
    done = [j for j in jobs if j.status == JobStatus.OK]
    out = []
    for job in done:
        v = job.validation
        if v.failed:
            out.append(
                f"**Validation failed**: {job.label} at {size_text(job)}: {v.failed:,} of "
                f"{v.checked:,} opened messages did not match their plaintext."
            )
        tried, rejected = v.tamper_tried, v.tamper_rejected
        if tried and rejected < tried:
            out.append(
                f"**Tamper check failed**: {job.label} at {size_text(job)} accepted {tried - rejected} "
                f"of {tried} deliberately corrupted payloads."
            )
    if done and not out:
        checked = sum(j.validation.checked for j in done)
        tampered = sum(j.validation.tamper_tried for j in done)
        sentence = (
            f"Validation: all {checked:,} opened messages of the {len(done)} completed jobs matched "
            f"their plaintext, and all {tampered:,} tampered payloads were rejected."
        )
        untried = sorted({j.label for j in done if not j.validation.tamper_tried})
        if untried:
            sentence += (
                f" No tamper check was made for {', '.join(untried)} (no integrity protection, or "
                "tamper checks switched off)."
            )
        out.append(sentence)
    return out


def insecure_findings(jobs: Iterable[JobResult]) -> list[str]:
    """Parameter sets flagged insecure (demo sizes): their speed must not read as a recommendation.
    One finding for all of them, so a run of many toy sizes (E3) does not repeat the warning."""
    jobs = list(jobs)
    named = []
    for label in dict.fromkeys(j.label for j in jobs if j.security.insecure):
        bits = next(j for j in jobs if j.label == label).security.classical_bits
        named.append(label + (f" ({bits}-bit classical security)" if bits else ""))
    if not named:
        return []
    if len(named) == 1:
        return [
            f"**Insecure parameters**: {named[0]} is a demonstration size that offers no real protection; its "
            "timings show the cost of the algorithm, not of a usable configuration."
        ]
    return [
        f"**Insecure parameters**: {', '.join(named[:-1])} and {named[-1]} offer no real protection "
        "(demonstration sizes, or no padding); their timings show the cost of the algorithm, not of a "
        "usable configuration."
    ]


def fastest_slowest_findings(jobs: list[JobResult]) -> list[str]:
    """Per family, metric and message size: the fastest and slowest median, and their ratio."""
    out = []

    def exchange_metric(job: JobResult) -> str | None:
        return "exchange" if job.exchange_used is not None and "exchange" in job.metrics else None

    groups = _edge_sizes(list(like_groups(jobs).items()) + list(like_groups(jobs, exchange_metric).items()))
    order = {f: i for i, f in enumerate(family_order(k[0] for k, _ in groups))}
    for (family, metric, size, exchange), group in sorted(groups, key=lambda kv: (order[kv[0][0]], kv[0][2])):
        if len(group) < 2:
            continue
        ranked = sorted(group, key=lambda j: value(j, metric))
        fast, slow = ranked[0], ranked[-1]
        m_fast, m_slow = value(fast, metric), value(slow, metric)
        pattern = f", {exchange_words(exchange)}" if exchange is not None else ""
        head = (
            f"**{family_title(family)}**, {format_bytes(size)} messages ({_mode_words(metric)}{pattern}, median of "
            f"{len(group)} schemes): "
        )
        ranking = rank(estimate(fast, metric), estimate(slow, metric))
        if not ranking.ordered:  # never rank noise: the evidence rule every face asks
            out.append(f"{head}{_unranked(fast, slow, m_fast, m_slow, ranking)}.")
            continue
        out.append(
            f"{head}fastest {fast.label} at {format_seconds(m_fast)}, slowest {slow.label} "
            f"at {format_seconds(m_slow)}, {ratio_text(m_slow / m_fast)} slower than the fastest "
            f"({evidence_text(ranking)})."
        )
    return out


def _unranked(fast: JobResult, slow: JobResult, m_fast: float, m_slow: float, ranking: Ranking) -> str:
    """Two figures the evidence rule does not order, and why: "A at x and B at y cannot be
    told apart (...)" or "A at x and B at y, no verdict: too few samples (...)"."""
    pair = f"{fast.label} at {format_seconds(m_fast)} and {slow.label} at {format_seconds(m_slow)}"
    words = ranking.no_verdict()
    return f"{pair} {words}" if ranking.standing == Standing.OVERLAP else f"{pair}, {words}"


def cross_family_findings(jobs: list[JobResult]) -> list[str]:
    """At each message size with several families measured, how far per-message costs spread."""
    by_size: dict[tuple[bool, int, str], list[JobResult]] = defaultdict(list)
    for job in jobs:  # sessions and operations are timed differently, and so are the two exchange patterns
        by_size[(job.mode in SESSION_MODES, job.message_size, str(job.exchange_used or ""))].append(job)
    out = []
    for (session, size, exchange), group in sorted(by_size.items()):
        if len({j.family for j in group}) < 2:
            continue
        ranked = sorted(group, key=lambda j: value(j, primary_metric(j)))
        fast, slow = ranked[0], ranked[-1]
        m_fast, m_slow = value(fast, primary_metric(fast)), value(slow, primary_metric(slow))
        if not m_fast or m_slow / m_fast < 10:
            continue
        pattern = f" with exchange {exchange}" if exchange else ""
        out.append(
            f"Across families at {format_bytes(size)}{' in sessions' if session else ''}{pattern}, per-message medians "
            f"span {ratio_text(m_slow / m_fast)}: "
            f"from {fast.label} ({primary_metric(fast)}, {format_seconds(m_fast)}, "
            f"{family_title(fast.family)}) to {slow.label} ({primary_metric(slow)}, "
            f"{format_seconds(m_slow)}, {family_title(slow.family)})."
        )
    return out


def keygen_total_findings(jobs: list[JobResult]) -> list[str]:
    """With one fresh key pair per message, key generation joins the per-message cost.

    The total is keygen median + per-message median (medians do not add exactly; the
    sentence says so by naming both parts). Only operations jobs, grouped by family and
    size: the slowest total against every other scheme in the group.
    """
    out = []
    for (family, metric, size, exchange), group in _edge_sizes(
        list(like_groups(j for j in jobs if j.mode not in SESSION_MODES).items())
    ):
        with_keygen = [j for j in group if "keygen" in j.metrics]
        # A session's key pair serves a whole session: per message, only a per-message exchange renews keys.
        if family not in KEYGEN_TOTAL_FAMILIES or exchange is Exchange.SESSION or len(with_keygen) < 2:
            continue
        total = {j.id: value(j, "keygen") + value(j, metric) for j in with_keygen}
        summed = {j.id: estimate(j, "keygen").plus(estimate(j, metric)) for j in with_keygen}
        ranked = sorted(with_keygen, key=lambda j: total[j.id])
        slow, others = ranked[-1], ranked[:-1]
        if len(others) > MAX_NAMED:  # name the extremes; the tables have the rest
            others = [others[0]]
        versus = [
            f"it {relation(summed[slow.id], summed[o.id], f'{o.label} (total {format_seconds(total[o.id])})')}"
            for o in others
        ]
        alone = [f"it {relation(estimate(slow, metric), estimate(o, metric), o.label)}" for o in others]
        out.append(
            f"**{family_title(family)}**, {format_bytes(size)} messages, counting key generation (keygen median "
            f"+ {metric} median, i.e. a fresh key pair for every message; their intervals' ends added too): "
            f"{slow.label} takes {format_seconds(total[slow.id])} (keygen {format_seconds(value(slow, 'keygen'))} "
            f"+ {metric} {format_seconds(value(slow, metric))}); {'; '.join(versus)}. Without key generation "
            f"({metric} alone): {'; '.join(alone)}."
        )
    return out


#: Past this many schemes in a group, a sentence names only the extremes.
MAX_NAMED = 3
#: Past this many message sizes of one family and metric, the summary quotes the
#: smallest and the largest (E3 and E4 measure dozens; the tables have them all).
MAX_SIZES = 3


GroupItem = tuple[LikeKey, list[JobResult]]


def _edge_sizes(groups: list[GroupItem]) -> list[GroupItem]:
    sizes: dict[tuple[str, str, Exchange | None], list[int]] = defaultdict(list)
    for (family, metric, size, exchange), _ in groups:
        sizes[(family, metric, exchange)].append(size)
    keep = {key: {min(v), max(v)} if len(set(v)) > MAX_SIZES else set(v) for key, v in sizes.items()}
    return [item for item in groups if item[0][2] in keep[(item[0][0], item[0][1], item[0][3])]]


#: The post-quantum summary's one group of both key-establishing families.
KEY_ESTABLISHMENT = "key establishment"
KEY_ESTABLISHMENT_TITLE = "Key establishment: key agreement and KEM hybrids"


def post_quantum_findings(jobs: list[JobResult]) -> list[str]:
    """Each post-quantum scheme against the classical one whose whole exchange costs least,
    at both ends: of its family, mode, exchange pattern and size.

    The whole exchange is `exchange_sides`: one key establishment at each end for a session
    exchange, one message at each end otherwise (signing and verifying, encrypting and
    decrypting). A sender's figure alone hides what the receiver pays (RSA-KEM encapsulates
    as fast as ML-KEM and decapsulates ten times slower), so each side is given, with the
    side that dominates."""
    groups: dict[tuple[str, bool, Exchange | None, int], list[JobResult]] = defaultdict(list)
    for job in jobs:
        if job.family in PUBLIC_KEY_FAMILIES and whole_exchange(job) is not None:
            # A key agreement and a KEM hybrid of one exchange pattern do the same work: ML-KEM
            # is measured against X25519 and ECDH as much as against RSA-KEM.
            kind = KEY_ESTABLISHMENT if job.exchange_used is not None else job.family
            groups[(kind, job.mode in SESSION_MODES, job.exchange_used, job.message_size)].append(job)
    out = []
    order = {f: i for i, f in enumerate(family_order(k[0] for k in groups))}
    for (family, session, exchange, size), group in sorted(
        groups.items(), key=lambda kv: (order[kv[0][0]], kv[0][1], str(kv[0][2] or ""), kv[0][3])
    ):
        pq = [j for j in group if is_post_quantum(j)]
        classical = [j for j in group if not is_post_quantum(j)]
        if not pq or not classical:
            continue
        best = min(classical, key=lambda j: whole_exchange(j) or 0.0)
        step = _step_words(best)
        # One sentence per group: its classical yardstick said once, then each post-quantum
        # scheme against it, side by side (a sentence each repeated the same lead).
        each = [f"{job.label} ({_level(job)}): {_sides_against(job, best)}" for job in pq]
        pattern = f", {exchange_words(exchange)}" if exchange is not None else ""
        title = KEY_ESTABLISHMENT_TITLE if family == KEY_ESTABLISHMENT else family_title(family)
        out.append(
            f"**Post-quantum vs classical** ({title}{', in sessions' if session else ''}{pattern}, "
            f"{format_bytes(size)}; {step}), against the classical scheme whose whole exchange costs least, "
            f"{best.label} ({_level(best)}; {_sides_text(best)}): " + "; ".join(each) + "."
        )
    return out


def _step_words(job: JobResult) -> str:
    """What `exchange_sides` adds up for `job`, in words (one group shares it)."""
    sender, receiver = exchange_sides(job) or ("", "")
    if job.exchange_used is Exchange.SESSION:
        return f"whole exchange = one key establishment, {sender} at the sender + {receiver} at the receiver"
    return f"whole exchange = one message, {sender} at the sender + {receiver} at the receiver"


def _sides_text(job: JobResult) -> str:
    """ "sender 61 µs, receiver 644 µs, 705 µs in all: the receiver's side dominates"."""
    sender, receiver = exchange_sides(job) or ("", "")
    s, r = value(job, sender), value(job, receiver)
    dominant = "the sender's side dominates" if s > r else "the receiver's side dominates" if r > s else "even"
    return f"sender {format_seconds(s)}, receiver {format_seconds(r)}, {format_seconds(s + r)} in all: {dominant}"


def _whole(job: JobResult) -> Estimate:
    """`job`'s whole exchange (`exchange_sides`) with what a verdict on it needs: both sides'
    medians and intervals added (Estimate.plus)."""
    sender, receiver = exchange_sides(job) or ("", "")
    return estimate(job, sender).plus(estimate(job, receiver))


def _sides_against(job: JobResult, best: JobResult) -> str:
    """A post-quantum job's sides and whole exchange, then the whole against the yardstick's,
    only as far as the evidence rule allows (`relation`), and each side's ratio: "sender 40
    µs, receiver 30 µs, 70 µs in all: the sender's side dominates; in all it is 1.6× faster
    than the classical scheme (n = 20 and 20, 95 % intervals ...) (sender 0.83× its time,
    receiver 0.50×)". A side's ratio is a figure, not a verdict: faster and slower are said
    once, of the whole, with their evidence."""
    sender, receiver = exchange_sides(job) or ("", "")
    b_sender, b_receiver = exchange_sides(best) or ("", "")
    return (
        f"{_sides_text(job)}; in all it {relation(_whole(job), _whole(best), 'the classical scheme')} (sender "
        f"{_side_ratio(value(job, sender), value(best, b_sender))} its time, receiver "
        f"{_side_ratio(value(job, receiver), value(best, b_receiver))})"
    )


def _side_ratio(a: float, b: float) -> str:
    """ "1.2×", "0.09×": `a`'s median over `b`'s, or "no ratio" where either is not positive."""
    return ratio_text(a / b) if a > 0 and b > 0 else "no ratio"


def _level(job: JobResult) -> str:
    bits = job.security.classical_bits
    cat = job.security.pq_category or 0
    text = f"{bits}-bit classical" if bits else "security level unknown"
    return f"{text}, NIST PQ category {cat}" if is_post_quantum(job) else text


def network_findings(jobs: list[JobResult]) -> list[str]:
    """For session jobs: does communication or computation dominate the round trip?"""
    out = []
    for job in jobs:
        rtt, network = median(job, "rtt"), median(job, "network")
        if job.mode not in SESSION_MODES or not rtt or network is None:
            continue
        share = 100 * network / rtt
        if job.link is not None:
            name = over_link(job.label, job.link)  # the link said once, as the label says it
        else:
            name = f"{job.label} " + ("over loopback" if job.mode == Mode.LOOPBACK else "to a remote receiver")
        verdict = "communication dominates" if share >= 50 else "computation dominates"
        parts = [
            f"sender compute {format_seconds(median(job, 'compute'))}",
            f"receiver open {format_seconds(median(job, 'receiver'))}",
        ]
        floor = median(job, "floor_rtt")
        if floor is not None:
            parts.append(f"raw connection floor {format_seconds(floor)}")
        out.append(
            f"{name}, {size_text(job)}: {verdict}: the network is {percent(share)} of the round "
            f"trip (median network {format_seconds(network)} of median rtt {format_seconds(rtt)}; "
            f"{', '.join(parts)})."
        )
    return out


def baseline_findings(match: BaselineMatch, baseline: RunResult) -> list[str]:
    """One sentence: how many matched jobs got slower, faster, stayed within noise or got no
    verdict (the evidence rule's, as `cryptobench compare` says it), each verdict with its
    evidence."""
    if not match.pairs:
        return [f"No job of this run matches a job of baseline run {baseline.id}."]
    counts: dict[Verdict, list[JobComparison]] = defaultdict(list)
    for pair in match.pairs:
        counts[pair.verdict].append(pair)

    def listed(pairs: list[JobComparison]) -> str:
        shown = "; ".join(
            f"{p.job.label} at {size_text(p.job)} {p.comparison.ratio:.2f}× "
            f"({ratio_evidence_text(p.comparison, p.measured.base_n, p.measured.new_n)})"
            for p in pairs[:5]
            if p.comparison is not None and p.measured is not None
        )
        return shown + (f"; and {len(pairs) - 5} more" if len(pairs) > 5 else "")

    def counted(verdict: Verdict) -> str:
        pairs = counts[verdict]
        return f"{len(pairs)} {verdict}" + (f" ({listed(pairs)})" if pairs and verdict != Verdict.WITHIN_NOISE else "")

    text = f"Against baseline run {baseline.id}, of {len(match.pairs)} matched jobs "
    bits = [counted(Verdict.SLOWER), counted(Verdict.FASTER), counted(Verdict.WITHIN_NOISE)]
    unjudged = counts[Verdict.NO_VERDICT]
    withheld = sum(1 for p in unjudged if p.withheld)
    if withheld:  # a reduced run on a side (app.core.analysis.evidence)
        bits.append(f"{withheld} without a verdict (a reduced run is not for comparison)")
    thin = sum(1 for p in unjudged if p.too_few is not None)
    if thin:
        bits.append(f"{thin} without a verdict (fewer than {MIN_SAMPLES} samples a side)")
    one_run = sum(1 for p in unjudged if p.one_run)
    if one_run:
        bits.append(f"{one_run} without a verdict (one run a side, and too few stored runs to measure how runs move)")
    if counts[Verdict.NOT_COMPARABLE]:
        bits.append(f"{len(counts[Verdict.NOT_COMPARABLE])} {Verdict.NOT_COMPARABLE}")
    return [text + ", ".join(bits) + " (ratio of medians, this run / baseline)."]


def summary_findings(
    run: RunResult, match: BaselineMatch | None = None, baseline: RunResult | None = None
) -> list[str]:
    """All finding sentences, most urgent first: failures, broken validation, then speed."""
    measured = ok_jobs(run.jobs)
    sentences = failure_findings(run.jobs)
    sentences += validation_findings(run.jobs)
    sentences += insecure_findings(run.jobs)
    sentences += fastest_slowest_findings(measured)
    sentences += cross_family_findings(measured)
    sentences += keygen_total_findings(measured)
    sentences += post_quantum_findings(measured)
    # A scheme swept over links gets one sentence for the sweep (where communication
    # takes over), not one per link.
    swept = {id(job) for group in link_groups(measured) for job in group}
    sentences += link_findings(measured)
    sentences += network_findings([job for job in measured if id(job) not in swept])
    sentences += load_findings(run.jobs)
    if match is not None and baseline is not None:
        sentences += baseline_findings(match, baseline)
    if not run.jobs:
        sentences.append("The run has no jobs, so there is nothing to report.")
    return sentences

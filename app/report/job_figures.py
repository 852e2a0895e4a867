"""A job's figures as every part of the report reads them: its primary metric, medians,
sizes and ratios in words, and the groups of jobs that may fairly be compared.

A leaf: the findings, the sections and the terminal all build on these, so a number in a
sentence is the number in the table. No Qt here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

from app.core.analysis.evidence import Estimate, Standing, evidence_text, rank
from app.core.results.model import JobResult
from app.core.schemes.base import OPEN_METRIC, SEAL_METRIC
from app.core.vocab import SESSION_MODES, Exchange, Family, JobStatus, Mode
from app.report.units import format_bytes, format_seconds

#: Families with a key pair; only these can be "post-quantum" in the report's sense
#: (AES and SHA-2/3 also have a pq_category, but nobody replaces them for it).
PUBLIC_KEY_FAMILIES = frozenset({Family.KEY_AGREEMENT, Family.HYBRID, Family.SIGNATURE, Family.PUBLIC_KEY_ENCRYPTION})
#: Families where "one fresh key pair per message" is a real use, so key generation
#: plus the per-message operation is a fair total to compare.
KEYGEN_TOTAL_FAMILIES = frozenset({Family.HYBRID, Family.PUBLIC_KEY_ENCRYPTION, Family.SIGNATURE})


def primary_metric(job: JobResult) -> str | None:
    """The per-message metric of a job: "compute" for sessions, the seal metric otherwise.

    The one rule, shared with the GUI's results table; named even when the job has no
    metrics, so a table can say what is missing.
    """
    if job.family == Family.TLS:  # a tls13 job's own metrics: its handshake, timed as the mode allows
        return "handshake_client" if job.mode == Mode.OPERATIONS else "handshake"
    if job.mode in SESSION_MODES:
        return "compute"
    try:
        return SEAL_METRIC[Family(job.family)]
    except (ValueError, KeyError):
        return next(iter(job.metrics), None)


def family_title(family: str) -> str:
    """A job's family as a section title (a results file may name a family this version lacks)."""
    try:
        return Family(family).label
    except ValueError:
        return family or "Other"


def family_order(families: Iterable[str]) -> list[str]:
    """Known families in report order (Family's), then unknown ones alphabetically."""
    present = set(families)
    known: list[str] = [f for f in Family if f in present]
    return known + sorted(present - set(Family))


def is_post_quantum(job: JobResult) -> bool:
    return job.family in PUBLIC_KEY_FAMILIES and (job.security.pq_category or 0) > 0


def median(job: JobResult, metric: str | None) -> float | None:
    """Median of one metric, or None when the job did not produce it."""
    if metric is None or metric not in job.metrics:
        return None
    return job.metrics[metric].stats.median


def value(job: JobResult, metric: str | None) -> float:
    """Median of a metric the caller knows is there (KeyError otherwise, never a silent 0)."""
    return job.metrics[metric or ""].stats.median


def size_text(job: JobResult) -> str:
    return format_bytes(job.message_size)


def percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} %"


def ratio_text(ratio: float) -> str:
    """1.04×, 2.5×, 34.6×, 1,234× — two decimals below 1.1 (never "1.0× faster"), one while
    a decimal still means something."""
    if ratio < 1.095:
        return f"{ratio:.2f}×"
    return f"{ratio:.1f}×" if ratio < 100 else f"{ratio:,.0f}×"


def estimate(job: JobResult, metric: str) -> Estimate:
    """A metric's median with its interval and samples: what a verdict on it needs."""
    return Estimate.of(job.metrics[metric].stats)


def relation(
    a: Estimate,
    b: Estimate,
    name_b: str,
    values: tuple[float, float] | None = None,
    fmt: Callable[[float], str] = format_seconds,
) -> str:
    """How `a` relates to `b`, as a predicate to follow a's name, only as far as the evidence
    rule allows (app.core.analysis.evidence.rank) and with its evidence: "is 3.2× slower than
    B (n = 20 and 20, 95 % intervals ...)"; "cannot be told apart from B (their 95 %
    intervals overlap: ...)"; or the plain ratio with why there is no order: "takes 3.2× the
    time of B, no verdict on their order: too few samples (...)". `values`: the figures the
    ratio is of, where they are not the medians (an experiment's means); the order still
    rests on the medians."""
    ranking = rank(a, b)
    x, y = values if values is not None else (a.median, b.median)
    if x <= 0 or y <= 0:
        return f"not comparable with {name_b}"
    if ranking.ordered:
        words = f"{ratio_text(x / y)} slower than" if a.median > b.median else f"{ratio_text(y / x)} faster than"
        return f"is {words} {name_b} ({evidence_text(ranking, fmt)})"
    why = ranking.no_verdict(fmt)
    if ranking.standing == Standing.OVERLAP:
        return f"cannot be told apart from {name_b} ({why.removeprefix('cannot be told apart (')}"
    return (
        f"takes {ratio_text(x / y)} the time of {name_b}, {why.replace('no verdict:', 'no verdict on their order:', 1)}"
    )


def ok_jobs(jobs: Iterable[JobResult]) -> list[JobResult]:
    """Jobs that finished and have their primary metric (the only ones with numbers)."""
    return [j for j in jobs if j.status == JobStatus.OK and median(j, primary_metric(j)) is not None]


#: Jobs that may fairly be compared: family, metric, message size and exchange pattern.
LikeKey = tuple[str, str, int, Exchange | None]


def like_groups(
    jobs: Iterable[JobResult],
    metric_of: Callable[[JobResult], str | None] = primary_metric,
) -> dict[LikeKey, list[JobResult]]:
    """Jobs grouped by (family, metric, message size, exchange pattern): the only fair
    comparisons. A session job's "encrypt" or "compute" is AEAD alone, a per-message job's
    holds a key establishment: never one group."""
    groups: dict[LikeKey, list[JobResult]] = defaultdict(list)
    for job in jobs:
        metric = metric_of(job)
        if metric is not None and median(job, metric) is not None:
            groups[(job.family, metric, job.message_size, job.exchange_used)].append(job)
    order = {f: i for i, f in enumerate(family_order(k[0] for k in groups))}
    return dict(sorted(groups.items(), key=lambda kv: (order[kv[0][0]], kv[0][1], kv[0][2], str(kv[0][3] or ""))))


def exchange_words(exchange: Exchange | None) -> str:
    """A group's exchange pattern in a sentence's parenthesis: "exchange session", or ""."""
    return "" if exchange is None else f"exchange {exchange}"


def exchange_sides(job: JobResult) -> tuple[str, str] | None:
    """The metrics of "the whole exchange" at each end, (sender, receiver): what the summary
    and the cost-against-security chart weigh, the same step for every job.

    A key-establishing job in the session pattern: one key establishment ("exchange",
    "exchange_receiver"; a session's "handshake", "handshake_receiver"), as its messages are
    AEAD alone. Any other public-key job: one message, which then holds the key
    establishment or the public-key operation (operations: its seal and open metric; a
    session: "compute" and "receiver"). None where the job lacks either metric."""
    session = job.mode in SESSION_MODES
    if job.exchange_used is Exchange.SESSION:
        sides = ("handshake", "handshake_receiver") if session else ("exchange", "exchange_receiver")
    elif session:
        sides = ("compute", "receiver")
    else:
        try:
            opened = OPEN_METRIC[Family(job.family)]
        except (ValueError, KeyError):
            return None
        if opened is None:
            return None
        sides = (SEAL_METRIC[Family(job.family)], opened)
    return sides if all(median(job, m) is not None for m in sides) else None


def whole_exchange(job: JobResult) -> float | None:
    """The sender's and the receiver's medians of `exchange_sides` added (medians do not add
    exactly; sentences that use it name both parts), or None."""
    sides = exchange_sides(job)
    return None if sides is None else value(job, sides[0]) + value(job, sides[1])

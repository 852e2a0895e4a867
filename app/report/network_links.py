"""Computation against communication over emulated links: the report's chart and findings.

A job run over an emulated link (results `link`, docs/ARCHITECTURE.md "Links, placement
and load") measures the same per-message parts as plain loopback: the sender's compute,
the receiver's open and the network time (rtt − receiver), which now includes the
link's delay and serialization. Jobs that differ only by their link are one scheme
seen over several networks; this module puts them side by side and says from which
link on the network is the larger part of a message's time (the crossover).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from app.core.analysis.compare import MatchKey, match_key
from app.core.records.job_conditions import Link
from app.core.results.model import JobResult
from app.core.settings.links import link_title, names_link
from app.core.vocab import JobStatus
from app.report.job_figures import median, size_text
from app.report.model import Block, Chart, Paragraph, Section, StackedBars, Table
from app.report.units import format_seconds

SECTION_TITLE = "Computation against communication per link"
#: The parts of a message's time, in stacking order: the two computations, then the wire.
PARTS = ("compute", "receiver", "network")
#: The message size links are ordered by: one typical small message, so every scheme
#: sees the links in the same order (a link's cost depends on the size, its rank
#: hardly ever does).
_ORDER_SIZE = 1024


def link_text(link: Link) -> str:
    """A link in a few words, as the job labels name it: the preset's title ("LTE"), or its numbers."""
    return link_title(link)


def model_network_s(link: Link, up_bytes: int, down_bytes: int) -> float:
    """What the link alone adds to a round trip: one-way delay each way, plus putting
    `up_bytes` on the wire at the up rate and `down_bytes` at the down rate."""
    seconds = 2 * link.delay_ms / 1000
    if link.rate_kbit_up:
        seconds += 8 * up_bytes / (link.rate_kbit_up * 1000)
    if link.rate_kbit_down:
        seconds += 8 * down_bytes / (link.rate_kbit_down * 1000)
    return seconds


def _rank(link: Link) -> float:
    return model_network_s(link, _ORDER_SIZE, 64)


def link_groups(jobs: Iterable[JobResult]) -> list[list[JobResult]]:
    """Finished jobs over links, grouped by everything but the link (scheme, backend,
    parameters, mode, size); a group with two links or more, its jobs in link order."""
    groups: dict[MatchKey, list[JobResult]] = defaultdict(list)
    for job in jobs:
        if job.link is not None and job.status == JobStatus.OK and set(PARTS) <= set(job.metrics):
            groups[match_key(job, link=False)].append(job)
    return [
        sorted(group, key=lambda j: _rank(j.link) if j.link else 0.0)
        for group in groups.values()
        if len({j.link for j in group}) >= 2
    ]


def network_share(job: JobResult) -> float | None:
    """The network's share of the stacked medians (compute + receiver + network), 0-1."""
    values = [median(job, part) for part in PARTS]
    if any(v is None for v in values):
        return None
    total = sum(v for v in values if v is not None)
    network = values[-1]
    return network / total if total > 0 and network is not None else None


def crossover(group: Sequence[JobResult]) -> JobResult | None:
    """The first job (in link order) from which on the network is at least half of a
    message's time on every slower link too; None if it never is."""
    shares = [network_share(job) for job in group]
    for k in range(len(group)):
        if all(s is not None and s >= 0.5 for s in shares[k:]):
            return group[k]
    return None


def link_findings(jobs: Iterable[JobResult]) -> list[str]:
    """One sentence per scheme and size swept over links: where communication takes over."""
    out = []
    for group in link_groups(jobs):
        first = group[0]
        name = f"{_scheme_name(first)}, {size_text(first)}"
        compute = (median(first, "compute") or 0.0) + (median(first, "receiver") or 0.0)
        turn = crossover(group)
        links = ", ".join(link_text(j.link) for j in group if j.link)
        fastest = link_text(first.link) if first.link else "the fastest link"
        if turn is None:
            out.append(
                f"**{name}**: computation ({format_seconds(compute)} per message on {fastest}) "
                f"outweighs the network on every link measured ({links})."
            )
        elif turn is first:
            out.append(
                f"**{name}**: communication dominates on every link measured, from {fastest} "
                f"on (computation {format_seconds(compute)} per message)."
            )
        else:
            net = median(turn, "network") or 0.0
            where = link_text(turn.link) if turn.link else "?"
            out.append(
                f"**{name}**: communication dominates from {where} on (network "
                f"{format_seconds(net)} against computation {format_seconds(compute)} per message)."
            )
    return out


def _scheme_name(job: JobResult) -> str:
    """The job's label without the link it names (the sweep adds " over LINK")."""
    label = job.label
    if job.link is not None and names_link(label, job.link):
        return label[: -len(f" over {link_title(job.link)}")]
    return label


def _cooled(groups: list[list[JobResult]]) -> list[str]:
    """Schemes whose sender computation over a slower link took at least twice that over the
    fastest one (the same code, so the difference is the machine between messages)."""
    out = []
    for group in groups:
        fastest = median(group[0], "compute")
        slowest = max(group[1:], key=lambda j: median(j, "compute") or 0.0)
        slow = median(slowest, "compute")
        if fastest and slow and slow >= 2 * fastest and slowest.link is not None and group[0].link is not None:
            out.append(
                f"{_scheme_name(group[0])} sealed in {format_seconds(fastest)} over "
                f"{link_text(group[0].link)} and {format_seconds(slow)} over {link_text(slowest.link)}"
            )
    return out


def _total(job: JobResult) -> float:
    return sum(median(job, part) or 0.0 for part in PARTS)


def link_sections(jobs: Sequence[JobResult]) -> list[Section]:
    """The section: per scheme and size, the stacked medians for each link, and a table."""
    groups = link_groups(jobs)
    if not groups:
        return []
    blocks: list[Block] = [
        Paragraph(
            "The same schemes over emulated links. Each bar is one link, split into the sender's computation "
            "(compute), the receiver's open (receiver) and the network time (rtt − receiver), which includes the "
            "link's one-way delay each way and the time to put the message and its acknowledgement on the wire at "
            "the link's rate. Bars show shares: on one time axis a satellite hop flattens a LAN to nothing; the "
            "times are in the table below. Links are ordered from the fastest to the slowest for a 1 KiB message."
        )
    ]
    for group in groups:
        first = group[0]
        labels = [f"{link_text(j.link)} ({format_seconds(_total(j))})" for j in group if j.link]
        totals = [_total(j) for j in group]
        parts = {
            part: [100 * (median(j, part) or 0.0) / t if t > 0 else 0.0 for j, t in zip(group, totals)]
            for part in PARTS
        }
        blocks.append(
            Chart(
                StackedBars(
                    f"{_scheme_name(first)}, {size_text(first)}: share of each part per message",
                    labels,
                    parts,
                    unit="%",
                ),
                aspect=min(1.0, 0.2 + 0.07 * len(group)),
            )
        )
    cooled = _cooled(groups)
    if cooled:
        blocks.append(
            Paragraph(
                "Computation is not the same on every link: " + "; ".join(cooled) + ". Between two messages the "
                "processes wait out the link's delay, and a process that has slept finds its caches and the CPU's "
                "clock cooled down; each bar shows what a message cost on that link, waits included.",
                "note",
            )
        )
    rows = []
    for group in groups:
        turn = crossover(group)
        for job in group:
            share = network_share(job)
            rows.append(
                [
                    _scheme_name(job),
                    size_text(job),
                    link_text(job.link) if job.link else "-",
                    format_seconds(median(job, "compute")),
                    format_seconds(median(job, "receiver")),
                    format_seconds(median(job, "network")),
                    "-" if share is None else f"{100 * share:.0f} %",
                    "from here" if job is turn else "",
                ]
            )
    blocks.append(
        Table(
            ["Scheme", "Size", "Link", "Compute", "Receiver", "Network", "Network share", "Crossover"],
            rows,
            caption="Medians per message; network share = network / (compute + receiver + "
            "network); crossover: the first link from which on the network is at least "
            "half of the time on every slower link.",
            widths=[2.2, 0.7, 1.4, 1.0, 1.0, 1.0, 1.1, 1.0],
        )
    )
    return [Section(SECTION_TITLE, blocks)]

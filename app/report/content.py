"""Turn a run (and an optional baseline) into the report model: the words, tables and chart data.

Everything a reader needs to trust a number is built here once, so the PDF and the
Markdown say the same thing: what was measured and on what (environment, method),
the numbers by family with their spread and validation, where the time goes in a
session, cost against security level, every warning with its fix, the comparison with a
baseline, and the full statistics. Failed jobs appear with their error, never with an
invented number. Charts carry raw seconds and bytes; renderers choose the units. The
Environment and Warnings sections are built in app/report/conditions.py.

Qt-free on purpose: the Markdown exporter and the CLI run without a display.
"""

from __future__ import annotations

from collections import defaultdict

from app.core.analysis.evidence import MovementSource
from app.core.results.model import JobResult, RunResult
from app.core.vocab import SESSION_MODES, Family, JobStatus
from app.report.appendix import appendix_section
from app.report.baseline import BaselineMatch, match_baseline
from app.report.caveats import apply_caveat, is_reduced, missing_notice, sample_caveat
from app.report.comparison import comparison_section
from app.report.conditions import environment_section, warnings_section
from app.report.content_common import (
    MISSING,
    duration_text,
    status_text,
    utc,
)
from app.report.experiments import experiment_sections
from app.report.families import family_sections
from app.report.findings import summary_findings
from app.report.job_figures import (
    PUBLIC_KEY_FAMILIES,
    family_order,
    family_title,
    is_post_quantum,
    median,
    percent,
    size_text,
    value,
    whole_exchange,
)
from app.report.labels import Labels
from app.report.load import load_sections
from app.report.method import method_section
from app.report.model import (
    Block,
    Chart,
    LineChart,
    Paragraph,
    Report,
    Section,
    Series,
    StackedBars,
    Table,
)
from app.report.network_links import link_sections
from app.report.tcp_info import KERNEL_TITLE, kernel_blocks
from app.report.tidy import tidy_sections
from app.report.tls import tls_sections
from app.report.units import format_seconds, span_text

__all__ = ["SECTION_TITLES", "build_report"]


#: Level-1 section titles in report order (optional ones are left out when empty). A
#: run of an experiment preset gets "Experiment E<n>: <title>" after the summary.
SECTION_TITLES = (
    "Summary of findings",
    "Environment",
    "Method",
    "Results by family",
    "Loopback breakdown",
    "Cost against security level",
    "Warnings",
    "Comparison with baseline",
    "Appendix: full statistics",
)


def build_report(
    run: RunResult,
    baseline: RunResult | None = None,
    *,
    appendix: bool = True,
    movement: MovementSource | None = None,
) -> Report:
    """The whole report for `run`; with `baseline`, a comparison section follows the
    summary (the reason to export with one), its verdicts the evidence rule's, judged with
    one run a side against `movement` (the store's runs: app/core/analysis/spread.py);
    `appendix=False` leaves out the full statistics."""
    match = match_baseline(run, baseline, movement) if baseline is not None else None
    labels = Labels(run.jobs + (baseline.jobs if baseline is not None else []))
    sections = [_summary(run, match, baseline, labels)]
    if baseline is not None and match is not None:
        sections.append(comparison_section(run, match, baseline, labels))
    sections += experiment_sections(run)
    sections += [environment_section(run), method_section(run)]
    sections += family_sections(run, labels)
    sections += _loopback(run, labels)
    sections += link_sections(run.jobs)
    sections += tls_sections(run.jobs, labels)
    sections += load_sections(run, labels)
    sections += _cost_vs_security(run, labels)
    sections.append(warnings_section(run, labels))
    if appendix:
        sections.append(appendix_section(run, labels))
    apply_caveat(run, sections)
    tidy_sections(sections)
    version = run.environment_view.app_version or "unknown version"
    notice = " ".join(t for t in (sample_caveat(run), missing_notice(run)) if t) or None
    return Report(
        title=f"CryptoBench report: {run.profile_view.marked_name}",
        subtitle=f"Run {run.id} · {len(run.jobs)} measured job{'s' if len(run.jobs) != 1 else ''} · {run.status}",
        facts=_facts(run),
        sections=sections,
        footer=f"CryptoBench {version} · run {run.id}",
        notice=notice,
    )


# --- title, summary, environment, method ------------------------------------------------


def _facts(run: RunResult) -> list[tuple[str, str]]:
    env = run.environment_view
    machine = [env.cpu_model or "unknown CPU"]
    if env.physical_cores or env.logical_cores:
        machine.append(f"{env.physical_cores or '?'} cores ({env.logical_cores or '?'} logical)")
    machine.append(env.os_name or "unknown OS")
    counts: dict[str, int] = defaultdict(int)
    for job in run.jobs:
        counts[job.status] += 1
    status = run.status + (f" ({', '.join(f'{n} {s}' for s, n in counts.items())})" if counts else "")
    facts = [
        ("Date", utc(run.started)),
        ("Machine", ", ".join(machine)),
        ("App version", env.app_version or "unknown"),
        ("Run id", run.id),
        ("Profile", run.profile_view.marked_name),
        ("Status", status),
    ]
    duration = duration_text(run)
    if duration:
        facts.append(("Duration", duration))
    return facts


def _summary(run: RunResult, match: BaselineMatch | None, baseline: RunResult | None, labels: Labels) -> Section:
    blocks: list[Block] = []
    description = run.profile_view.description
    intro = f"Profile **{run.name or 'unnamed'}**" + (f": {description}" if description else ".")
    if description and is_reduced(run):  # the description counts the full preset's samples and sizes
        intro += " (That describes the full preset, not this reduced run.)"  # whose samples the caveat gives
    elif description and run.profile_view.overrides:  # the description is the profile's as written
        shown = ", ".join(f"{option} {value}" for option, value in run.profile_view.overrides)
        intro += f" (That describes the profile as written; this run overrode {shown} from the command line.)"
    blocks.append(
        Paragraph(
            intro + " Times are medians per operation unless said otherwise; ratios are only "
            "quoted between jobs of the same family at the same message size, or say so."
        )
    )
    blocks += [Paragraph(labels.in_text(s), style="finding") for s in summary_findings(run, match, baseline)]
    key = labels.key_table()
    if key is not None:  # its caption says what it is for, once
        blocks.append(key)
    return Section("Summary of findings", blocks)


# --- results by family --------------------------------------------------------------------


# --- loopback, cost vs security, warnings, comparison, appendix ----------------------------


def _loopback(run: RunResult, names: Labels) -> list[Section]:
    # A tls13 job's sessions have no compute or receiver part: its handshakes are in its own section.
    sessions = [j for j in run.jobs if j.mode in SESSION_MODES and j.family != Family.TLS]
    if not sessions:
        return []
    measured = [
        j for j in sessions if j.status == JobStatus.OK and {"compute", "receiver", "network"} <= set(j.metrics)
    ]
    blocks: list[Block] = [
        Paragraph(
            "Where a session's time goes, per message: the sender's computation (compute), the receiver's open "
            "(receiver) and the transport (network = rtt − receiver). Medians are stacked; they do not add up to the "
            "median round trip exactly, because the median of a sum is not the sum of medians."
        )
    ]
    if measured:
        blocks += _loopback_charts(measured, names)
    blocks.append(_loopback_table(sessions))
    kernel = kernel_blocks(sessions)
    return [Section("Loopback breakdown", blocks)] + ([Section(KERNEL_TITLE, kernel, level=2)] if kernel else [])


def _loopback_charts(measured: list[JobResult], names: Labels) -> list[Block]:
    """Each measured session's median time per message split into its parts, stacked: in
    time, one chart per order of magnitude, then every job in shares of its time."""
    blocks: list[Block] = []
    parts = {p: [value(j, p) for j in measured] for p in ("compute", "receiver", "network")}
    labels = [names.row(j) for j in measured]
    aspect = min(1.2, 0.2 + 0.08 * len(measured))
    # On one linear axis a 40 ms job flattens a 40 µs one to nothing; a log axis cannot
    # stack. So one chart per order of magnitude: within a chart no total is more than
    # 10× another, and every bar is readable.
    groups = _magnitude_groups([sum(parts[p][k] for p in parts) for k in range(len(measured))])
    for number, group in enumerate(groups):
        title = "Median time per message, split into its parts"
        if len(groups) > 1:
            totals = [sum(parts[p][k] for p in parts) for k in group]
            title += f" (jobs of {span_text(min(totals), max(totals), format_seconds)})"
        blocks.append(
            Chart(
                StackedBars(title, [labels[k] for k in group], {p: [parts[p][k] for k in group] for p in parts}),
                # Said once, under the first of them.
                caption="One chart per order of magnitude, so that no bar is too short to read."
                if len(groups) > 1 and number == 0
                else None,
                aspect=min(1.2, 0.2 + 0.08 * len(group)),
            )
        )
    # In time, one slow job flattens the others to slivers; in shares every job's
    # split is readable, which is what this section is about.
    totals = [sum(parts[p][k] for p in parts) for k in range(len(measured))]
    shares = {p: [100 * v / t if t > 0 else 0.0 for v, t in zip(values, totals)] for p, values in parts.items()}
    blocks.append(
        Chart(
            StackedBars("Share of each part in the time per message", labels, shares, unit="%"),
            caption="Each bar is 100 % of that job's compute + receiver + network medians.",
            aspect=aspect,
        )
    )
    return blocks


def _loopback_table(sessions: list[JobResult]) -> Table:
    """Every session job's means per message as experiment E1 gives them, with its loopback
    floor and the network's share; a job that did not finish, its status."""
    rows = []
    for job in sessions:
        if job.status != JobStatus.OK:
            rows.append([job.label, size_text(job), status_text(job)] + [MISSING] * 6)
            continue

        rtt, network = median(job, "rtt"), median(job, "network")
        share = percent(100 * network / rtt) if rtt and network is not None else MISSING
        n = job.metrics["compute"].stats.n if "compute" in job.metrics else None
        rows.append(
            [
                job.label,
                size_text(job),
                str(n) if n is not None else MISSING,
                _mean(job, "compute"),
                _mean(job, "receiver"),
                _mean(job, "network"),
                _mean(job, "rtt"),
                format_seconds(median(job, "floor_rtt")),
                share,
            ]
        )
    return Table(
        [
            "Job",
            "Size",
            "Samples",
            "Computation delay",
            "Receiver open",
            "Communication delay",
            "Round trip",
            "Loopback floor",
            "Network share",
        ],
        rows,
        caption="Means per message as in experiment E1: computation delay = compute, communication "
        "delay = network (rtt − receiver); loopback floor = median floor_rtt; network share "
        "= median network / median rtt.",
        widths=[3.0, 0.8, 0.8, 1.1, 1.1, 1.2, 1.0, 1.0, 1.0],
    )


def _magnitude_groups(totals: list[float]) -> list[list[int]]:
    """Indexes grouped so that within a group the largest total is at most 10× the
    smallest; groups in ascending order of time, each in the original order."""
    order = sorted(range(len(totals)), key=lambda k: totals[k])
    groups: list[list[int]] = []
    for k in order:
        if groups and totals[k] <= 10 * max(totals[groups[-1][0]], 1e-30):
            groups[-1].append(k)
        else:
            groups.append([k])
    return [sorted(group) for group in groups]


def _mean(job: JobResult, metric: str) -> str:
    return format_seconds(job.metrics[metric].stats.mean) if metric in job.metrics else MISSING


def _cost_vs_security(run: RunResult, labels: Labels) -> list[Section]:
    """Each public-key job's whole exchange (`exchange_sides`: the same step for every point,
    both ends) against its classical security level; one point per name."""
    points: dict[str, list[JobResult]] = defaultdict(list)
    left_out = 0
    for job in _one_per_job(run.jobs):
        if job.family not in PUBLIC_KEY_FAMILIES or job.status != JobStatus.OK or not job.security.classical_bits:
            continue
        if not whole_exchange(job):
            left_out += 1
            continue
        points["Post-quantum" if is_post_quantum(job) else family_title(job.family)].append(job)
    if sum(len(v) for v in points.values()) < 2:
        return []
    names = [family_title(f) for f in family_order(j.family for v in points.values() for j in v)]
    point_names = _point_names([job for group in points.values() for job in group], labels)
    series = [
        Series(
            name,
            [float(j.security.classical_bits or 0) for j in points[name]],
            [whole_exchange(j) or 0.0 for j in points[name]],
            point_labels=[point_names[j.id] for j in points[name]],
            marked=name == "Post-quantum",
        )
        for name in names + ["Post-quantum"]
        if points.get(name)
    ]
    chart = LineChart(
        "Median whole exchange (sender + receiver) against classical security level",
        "classical security",
        "bits",
        "sender + receiver median",
        "s",
        series,
        log_y=True,
        lines=False,
    )
    text = (
        "Each point is one public-key job: its classical security level in bits (NIST SP 800-57 comparable "
        "strength) against its whole exchange, the same step for every point, at both ends: the sender's median "
        "plus the receiver's. For a key establishment once per session (exchange session) that is one key "
        "establishment (exchange + exchange_receiver; in a session, handshake + handshake_receiver), since its "
        "messages are then AEAD alone; for every other job one message (exchange per-message: encapsulation, or "
        "an ephemeral key, and AEAD in each; signatures: sign + verify; public-key encryption: encrypt + decrypt; "
        "in a session, compute + receiver). A job measured at several sizes is drawn at its smallest. "
        "Post-quantum schemes (NIST category > 0) are marked; a classical scheme at the same bit level falls to a "
        "quantum computer, a post-quantum one is not known to."
    )
    if left_out:
        text += (
            f" {left_out} job{'s' if left_out != 1 else ''} without both ends' figures of that step (results "
            "recorded before it was timed at the receiver) "
            + ("is" if left_out == 1 else "are")
            + " left out rather than drawn at another step."
        )
    return [
        Section(
            "Cost against security level",
            [
                Paragraph(text),
                Chart(chart, caption="Log scale in time; the step is said above: compare points within a family."),
            ],
        )
    ]


def _one_per_job(jobs: list[JobResult]) -> list[JobResult]:
    """A job measured at several sizes once, at its smallest: a chart of one point per job."""
    smallest: dict[tuple[str, str], JobResult] = {}
    for job in jobs:
        key = (job.label, job.mode)
        if key not in smallest or job.message_size < smallest[key].message_size:
            smallest[key] = job
    return [job for job in jobs if smallest.get((job.label, job.mode)) is job]


def _point_names(jobs: list[JobResult], labels: Labels) -> dict[str, str]:
    """Each point's name, never two alike: the short name, then its mode, then its size where
    those still read the same (then its job id)."""

    def widened(job: JobResult, stage: int) -> str:
        if stage == 0:
            return labels.row(job, size=False)
        return labels.row(job) if stage == 1 else f"{labels.row(job)} ({job.id})"

    names = {job.id: labels.name(job) for job in jobs}
    for stage in range(3):
        counts: dict[str, int] = defaultdict(int)
        for name in names.values():
            counts[name] += 1
        names = {job.id: widened(job, stage) if counts[names[job.id]] > 1 else names[job.id] for job in jobs}
    return names

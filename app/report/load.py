"""Load jobs in the report: the knee per scheme, latency against achieved rate, the steps.

A load job (results `load`, docs/ARCHITECTURE.md "Links, placement and load") offers a
server requests at one rate per step, open loop, and records per step what was achieved
and the latency clients saw, measured from each request's intended start. This module
writes the "Load" section: one finding per scheme (the core's verdict: the server
overloaded at its knee, at least a rate, or limited by the generator), two charts (p50
and p99 latency against achieved rate, one curve per scheme, log time axis, steps the
generator limited drawn open), and one table of steps per scheme with what limited each
step and the conditions behind it (where a scheme's generators ran on Dask workers, a
table of each generator's own figures per step under it); and the Method section's paragraph on how load is
measured and how each step is called. Steps the load generator limited measured the
generator, not the server: they are drawn and listed, marked, and left out of the knee.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from app.core.load.sweep import BACKLOG_MAX, KEPT_UP, MAX_SEND_LAG_S, MIN_SENT_SHARE
from app.core.load.verdict import GROWTH_FACTOR, QUEUE_FACTOR, QUEUE_FLOOR_S, load_verdict
from app.core.records.job_conditions import StepLimit
from app.core.results.model import JobResult, RunResult
from app.core.vocab import JobStatus, Mode
from app.report.labels import Labels
from app.report.load_generator_words import (
    generator_cells,
    generator_latency_unit,
    generator_mark,
    generator_rows,
    has_generators,
    places_text,
)
from app.report.load_words import (
    CLIENT_CRYPTO,
    LATENCY_COLUMNS,
    SERVER_CRYPTO,
    STEP_HEAD,
    condition_parts,
    cpu_text,
    join_conditions,
    latency_cells,
    latency_unit,
    rate_text,
    requests_word,
    step_calls,
    step_cells,
    step_marks,
    verdict,
)
from app.report.model import Align, Block, Bullets, Chart, LineChart, Paragraph, Section, Series, Table
from app.report.units import format_seconds, span_text

SECTION_TITLE = "Load: requests per second and latency"
STEPS_TITLE = "Load steps per scheme"
#: The percentiles drawn against achieved rate: the typical request and the tail.
CHART_PERCENTILES = ("p50", "p99")
HOLLOW_LABEL = "generator limited (not the server's figure)"
#: Achieved rates spanning more than this factor get a log rate axis (a 150/s RSA server
#: beside a 30,000/s X25519 one would otherwise sit on the axis).
LOG_RATE_SPREAD = 20.0


#: The Method's words on load from several machines (said only where a job's generators ran on Dask workers).
CLUSTER_METHOD = (
    " Where a job's generators ran on Dask workers (load from several machines), each worker ran the same "
    "generator as a subprocess on its share of each step's rate and clients, from a start agreed a moment ahead "
    "and corrected by its clock offset to this machine (measured from the exchange with the least round trip); "
    "latency is timed on each generator's own clock, so offsets matter only for when steps start. The step's "
    "figures are the generators' merged: their HdrHistograms added (no loss), counts and rates summed, the worst "
    "send lag, and the step generator-limited when any one generator was late or short. A step a generator did not "
    "return is incomplete and never counts as the server's; each generator's own figures are tabled under its "
    "job's steps."
)


def load_jobs(run: RunResult) -> list[JobResult]:
    return [job for job in run.jobs if job.mode == Mode.LOAD]


def _measured(jobs: Sequence[JobResult]) -> list[JobResult]:
    return [job for job in jobs if job.status == JobStatus.OK and job.load is not None and job.load.steps]


def load_findings(jobs: Sequence[JobResult], labels: Labels | None = None) -> list[str]:
    """One sentence per measured load job: "**ML-KEM-768**: server overloaded at N
    handshakes/s on one core (CPU 1), the knee: ..." (the core's verdict); jobs the
    generator limited at every step share one. Without `labels`, jobs go by their full
    labels (`Labels.in_text` shortens them)."""

    def name(job: JobResult) -> str:
        return labels.name(job) if labels is not None else job.label

    measured = [job for job in _measured(jobs) if job.load is not None and job.mode == Mode.LOAD]
    unmeasured = [job for job in measured if job.load is not None and load_verdict(job.load).knee_per_s is None]
    out = [
        f"**{name(job)}**: {verdict(job, job.load)}."
        for job in measured
        if job.load is not None and (len(unmeasured) < 2 or job not in unmeasured)
    ]
    if len(unmeasured) >= 2:  # one sentence, not the same one per scheme
        names = ", ".join(f"**{name(job)}**" for job in unmeasured)
        out.append(
            f"No knee was measured for {names}: the load generator, not the server, was the limit at every "
            "step of each, so no rate of theirs here is the server's; a quieter machine, or lower rates, "
            "would let the generator keep its schedule."
        )
    return out


def latency_chart(jobs: Sequence[JobResult], labels: Labels, percentile: str) -> Chart | None:
    """`percentile` latency against achieved rate, one curve per job, steps in offered order."""
    series = []
    for job in _measured(jobs):
        load = job.load
        if load is None:
            continue
        pairs = [(s, call) for s, call in zip(load.steps, step_calls(load), strict=True) if s.latency_s.get(percentile)]
        if pairs:
            series.append(
                Series(
                    labels.name(job),
                    [s.achieved_per_s for s, _ in pairs],
                    [s.latency_s[percentile] for s, _ in pairs],
                    hollow=[call.limit == StepLimit.GENERATOR for _, call in pairs],
                )
            )
    if not series:
        return None
    rates = [x for s in series for x in s.xs if x > 0]
    log_x = bool(rates) and max(rates) / min(rates) > LOG_RATE_SPREAD
    chart = LineChart(
        f"{percentile} latency against achieved rate",
        "achieved rate (requests/s)",
        "",
        f"{percentile} latency",
        "s",
        series,
        log_x=log_x,
        log_y=True,
        hollow_label=HOLLOW_LABEL,
    )
    hollow = any(any(s.hollow or ()) for s in series)
    return Chart(
        chart,
        caption=f"One curve per scheme, one point per step (offered rate), latency from each "
        f"request's intended start (log scale{', rates too' if log_x else ''})."
        + (
            " Open markers: steps the load generator limited; they measure the generator and are left out of the knee."
            if hollow
            else ""
        ),
        aspect=0.55,
    )


#: Numbers right, the note left.
_NUMBER: Align = "right"
_STEP_ALIGN: list[Align] = [_NUMBER] * 11 + ["left"]


#: What a steps table's columns mean: said once above the tables (or in a lone table's caption).
STEPS_KEY = (
    "per second offered and achieved, latency from each request's intended start, CPU in % of one core "
    "(Gen.: the load generator)"
)


def steps_table(
    job: JobResult, labels: Labels, *, key_said: bool = False, shared: Mapping[str, str] | None = None
) -> Table | None:
    """`key_said`, `shared`: the subsection's introduction gave the columns' key, and the
    condition clauses every job shares; the caption then says only what is this job's own
    (the same words are never repeated table after table)."""
    load = job.load
    if load is None or not load.steps:
        return None
    unit, _ = latency_unit(load.steps)
    rows = []
    notes = []
    for step, mark in zip(load.steps, step_marks(load), strict=True):
        cells = step_cells(step)
        short = mark.split(" (")[0] if mark else ""
        rows.append(cells[:STEP_HEAD] + latency_cells(step, unit) + cells[STEP_HEAD + len(LATENCY_COLUMNS) :] + [short])
        if mark:
            notes.append(f"at {rate_text(step.offered_per_s)}/s, {mark}")
    caption = f"{labels.name(job)}" + ("." if key_said else f": {requests_word(load)} {STEPS_KEY}.")
    parts = condition_parts(job, load)
    own = {key: part for key, part in parts.items() if key not in (shared or {})}
    if key_said and set(own) <= {CLIENT_CRYPTO, SERVER_CRYPTO}:
        # The introduction says what the two costs are; the caption gives this job's figures.
        costs = [
            f"{name} {format_seconds(value)}"
            for key, name, value in (
                (CLIENT_CRYPTO, "client crypto", load.client_prepare_s),
                (SERVER_CRYPTO, "server crypto", load.server_request_s),
            )
            if key in own and value is not None
        ]
        text = ", ".join(costs)
        caption += f" {text[:1].upper()}{text[1:]} a request." if costs else ""
    elif own:
        caption += f" {'Its own conditions' if shared else 'Conditions'}: {join_conditions(own)}."
    if notes:  # named: two schemes' tables may well have the same note (50/s, the same lag)
        caption += f" Steps of {labels.name(job)} not kept up with: " + "; ".join(notes) + "."
    return Table(
        [
            "Offered/s",
            "Achieved/s",
            "Errors",
            "Missed",
            *(f"{name} ({unit})" for name in LATENCY_COLUMNS),
            "Gen. CPU",
            "Server CPU",
            "Note",
        ],
        rows,
        caption=caption,
        align=_STEP_ALIGN,
    )


#: A generators table: the step and the generator left, numbers right, the note left.
_GENERATOR_ALIGN: list[Align] = [_NUMBER, "left"] + [_NUMBER] * 8 + ["left"]


#: What a generators table's columns hold: said under the first such table of the section only.
GENERATOR_COLUMNS = (
    "Each generator's share of each step, its own latency from each request's intended start, how late it "
    "sent (p99), when it began its share against the agreed start (+ after it, - before it) and its CPU in % "
    "of one core."
)


def generators_table(job: JobResult, labels: Labels, *, columns_said: bool = False) -> Table | None:
    """A cluster job's generators, a row per generator and step (its own share, latency,
    send lag, start, CPU), under the job's steps table; its caption says where each generator
    ran and the whole of each mark the Note column shortens (and what the columns hold, unless
    an earlier table said it). None for one generator."""
    load = job.load
    if load is None or not has_generators(load):
        return None
    rows = generator_rows(load)
    unit = generator_latency_unit(rows)
    cells = []
    marks = []
    for row in rows:
        mark = generator_mark(row)
        note = "missing" if row.record is None else "generator limited" if mark else ""
        cells.append(generator_cells(row, unit) + [note])
        if row.record is not None and mark:  # a missing one: the steps table's caption says why
            marks.append(f"at {rate_text(row.step.offered_per_s)}/s, generator #{row.number}: {mark}")
    caption = f"{labels.name(job)}, per generator: {places_text(load)}."
    caption += " Columns as in the first generators table." if columns_said else f" {GENERATOR_COLUMNS}"
    if any(row.record is None for row in rows):
        caption += " A generator marked missing did not return that step: the step is incomplete."
    if marks:
        caption += " Generators' own marks: " + "; ".join(marks) + "."
    return Table(
        [
            "Step/s",
            "Gen.",
            "Offered/s",
            "Achieved/s",
            "Completed",
            f"p50 ({unit})",
            f"p99 ({unit})",
            "Send lag",
            "Start",
            "Gen. CPU",
            "Note",
        ],
        cells,
        caption=caption,
        align=_GENERATOR_ALIGN,
    )


def load_sections(run: RunResult, labels: Labels) -> list[Section]:
    """The Load section and its steps subsection; none when the run has no load job."""
    jobs = load_jobs(run)
    if not jobs:
        return []
    blocks: list[Block] = [
        Paragraph(
            "Many client connections offer a server requests at a fixed rate per step, open loop: each request has "
            "its start time from the schedule, and its latency runs from that time to its acknowledgement, so a "
            "server that falls behind shows as latency instead of slowing the clients down. A request is a "
            "handshake (the client's key establishment, one sealed message and its acknowledgement) or a signed "
            "message, per the scheme. **Sustained** is the highest rate the server kept up with (achieved at least "
            f"{KEPT_UP * 100:.0f} % of offered, no errors, latency bounded); the **knee** the most it achieved. "
            "A knee is called the server's limit only where some step showed the server overloaded; otherwise it "
            'is "at least". Steps where the load generator, not the server, was the limit are marked and never count.'
        )
    ]
    blocks += [Paragraph(labels.in_text(text), style="finding") for text in load_findings(jobs, labels)]
    for percentile in CHART_PERCENTILES:
        chart = latency_chart(jobs, labels, percentile)
        if chart is not None:
            if any(isinstance(b, Chart) for b in blocks):  # the first chart's caption explains both
                chart.caption = f"The same steps and markers as the chart above, at {percentile}."
            blocks.append(chart)
    failed = [job for job in jobs if job.status != JobStatus.OK]
    if failed:
        blocks.append(Bullets([f"{job.label}: {job.status}: {job.error or 'no error recorded'}" for job in failed]))
    measured = [job for job in _measured(jobs) if job.load is not None]
    parts = [condition_parts(job, job.load) for job in measured if job.load is not None]
    several = len(measured) > 1  # the key, and the clauses all share, said once above the tables
    shared = (
        {k: v for k, v in parts[0].items() if all(other.get(k) == v for other in parts[1:])}
        if several and parts
        else {}
    )
    tables: list[Block] = []
    columns_said = False
    for job in measured:
        table = steps_table(job, labels, key_said=several, shared=shared)
        if table is not None:
            tables.append(table)
            generators = generators_table(job, labels, columns_said=columns_said)
            if generators is not None:
                tables.append(generators)
                columns_said = True
    if several and tables:
        intro = f"One table per scheme: requests {STEPS_KEY}."
        if shared:
            intro += f" Conditions of every scheme: {join_conditions(shared)}."
        if any(CLIENT_CRYPTO in p and CLIENT_CRYPTO not in shared for p in parts):
            intro += (
                " Under each table, its client crypto (timed when the requests are prepared, outside the latency) "
                "and its server's crypto (median), per request."
            )
        tables.insert(0, Paragraph(intro))
    sections = [Section(SECTION_TITLE, blocks)]
    if tables:
        sections.append(Section(STEPS_TITLE, tables, level=2))
    return sections


def load_method(run: RunResult) -> list[Block]:
    """The Method section's paragraph on load jobs (none without them)."""
    jobs = [job for job in load_jobs(run) if job.load is not None]
    if not load_jobs(run):
        return []
    pools = sorted({job.load.pool for job in jobs if job.load is not None and job.load.pool})
    pool = "" if not pools else f" ({span_text(pools[0], pools[-1], str)} per client here)"
    cpus = [
        s.generator_cpu_percent
        for job in jobs
        if job.load is not None
        for s in job.load.steps
        if s.generator_cpu_percent is not None
    ]
    return [
        Paragraph(
            "Load jobs run one server (N processes sharing the port with SO_REUSEPORT where server_workers > 1) and "
            "one load-generator process that drives every client connection on a schedule: requests at the offered "
            "rate, spread over the clients, each with an intended start time. Latency is measured from that intended "
            "start to the acknowledgement and recorded in an HdrHistogram per step (merged over clients; "
            "p50/p90/p99/p99.9 and the maximum are read from it), after a warm-up at the same rate that is not "
            "recorded. So that the generator only sends and times, each client prepares its requests ahead, a pool "
            f"of distinct requests it cycles through{pool}; the client's crypto is timed then, outside the latency. "
            "A sweep first times requests one at a time to estimate the server's capacity, then offers fractions of "
            "it up to past it, stopping after two steps in a row the server did not keep up with. Each step is "
            "called from what explains it. The server fell behind when requests queued beyond what the generator's "
            f"own lateness explains: the p50, less the generator's send lag, at least {QUEUE_FACTOR:g}× the low-load "
            f"p99 (and {format_seconds(QUEUE_FLOOR_S)}); or the p50 of the step's last quarter at least "
            f"{GROWTH_FACTOR:g}× its first quarter's while the server was busy; or less achieved than the generator "
            "sent, beyond what its lag could shift out of the window; or requests refused or unanswered. That "
            "evidence wins over the generator's marks, since a server that falls behind delays the generator's "
            "sends by TCP back-pressure too. Otherwise a step is limited by the generator, marked and left out of "
            f"the knee, when it handed requests to the kernel more than {MAX_SEND_LAG_S * 1e3:g} ms late (p99), sent "
            f"less than {MIN_SENT_SHARE * 100:.0f} % of its schedule, or missed a request (never sent it: the "
            "requests it owed, due but not yet handed to "
            f"the kernel, were at their cap of {BACKLOG_MAX:,}); the generator's own CPU is recorded per step"
            + (f" ({span_text(min(cpus), max(cpus), cpu_text)} of one core in this run)" if cpus else "")
            + ". By default the server and the generator are pinned to different CPUs (placement split), so the "
            "clients' work is not counted against the server's capacity."
            + (CLUSTER_METHOD if any(job.load is not None and has_generators(job.load) for job in jobs) else "")
        )
    ]

"""What the command line prints about runs: summaries, the summary table, history.

Two layouts for one content. A terminal gets rich tables sized to its width. Anything
else (a pipe, a file, a CI log) gets one line per record that is never wrapped, so no
word is ever split across lines and `grep`/`cut` see whole names and whole run ids.
"""

from __future__ import annotations

from typing import Any

from app.cli.terminal.console import escape
from app.cli.terminal.load_printing import print_load, print_load_table
from app.core.analysis.run_wide import run_wide
from app.core.analysis.warning_groups import group_warnings
from app.core.results.model import RunResult
from app.core.vocab import SESSION_MODES, JobStatus, Mode
from app.report.tcp_info import kernel_lines
from app.report.tls import tls_lines
from app.report.units import format_rate, format_seconds, humanize_seconds


def count_phrase(measured: int, profile_jobs: int | None, ok: int | None = None, *, links: bool = False) -> str:
    """ "22 measured jobs (from 19 profile jobs × their message sizes)", or with `ok`
    "20/22 measured jobs ok (...)": the one unit `presets` and `run` both say, so their
    numbers can be compared. `links`: some job sweeps over links ("× their links and
    message sizes")."""
    text = f"{measured} measured job{'s' if measured != 1 else ''}"
    if ok is not None:
        text = f"{ok}/{measured} measured jobs ok"
    if profile_jobs is not None and profile_jobs != measured:
        text += (
            f" (from {profile_jobs} profile job{'s' if profile_jobs != 1 else ''} × their "
            f"{'links and ' if links else ''}message sizes)"
        )
    return text


def profile_job_count(run: RunResult) -> int | None:
    jobs = run.profile_view.jobs
    return None if jobs is None else len(jobs)


def print_summary(console: Any, run: Any) -> None:
    """The run, each job with its metrics, the warnings by kind, then the one-glance summary.

    On a terminal: a block per job (a header line, one line per metric), which reads in 80
    columns. Elsewhere (a pipe, a file, a CI log): one line per job and one per metric, each
    whole, fields split by " | " and led by what the line is (`run`, `job`, `metric`,
    `warning`), so `grep '^metric | ' | cut -d'|' -f6` reads every median. Warnings are
    listed once per kind, not once per metric (app/core/analysis/warning_groups.py).
    """
    terminal = console.is_terminal
    if terminal:
        console.print(
            f"[bold]{escape(run.name)}[/] — run {run.id} — {run.status}"
            "   (per metric: median [95 % CI of the median], CV, samples×batch, throughput)"
        )
    else:
        console.print(f"run | {run.id} | {escape(run.name)} | {run.status}")
        console.print(f"lines: job | {' | '.join(JOB_FIELDS)}")
        console.print(f"lines: metric | {' | '.join(METRIC_FIELDS)}")
    for number, job in zip(job_numbers(run), run.jobs):
        _print_job(console, number, job)
    _print_warnings(console, run)
    print_table(console, run)


def job_numbers(run: Any) -> list[int]:
    """Each job's number as `run` printed it live ("#3": its place in the profile's order,
    from 1); their places in the list when a file's indices are not distinct."""
    numbers = [job.index + 1 for job in run.jobs]
    return numbers if len(set(numbers)) == len(numbers) else list(range(1, len(run.jobs) + 1))


#: The fields of a piped `job` line and of a piped `metric` line, after the line's kind.
JOB_FIELDS = ("#", "label", "size", "status", "details")
METRIC_FIELDS = ("#", "label", "size", "metric", "median", "95 % CI", "CV", "samples×batch", "throughput")


def _job_details(job: Any) -> list[str]:
    """What a job's header says beside its size and status: mode, wire size, validation."""
    v = job.validation
    parts = []
    if job.mode != Mode.OPERATIONS:
        parts.append(str(job.mode))
    if job.exchange_used is not None:  # how a key-establishing job established its keys
        parts.append(f"exchange {job.exchange_used}")
    if job.wire_bytes and ("frame" in job.wire_bytes or "payload" in job.wire_bytes):
        wire = job.wire_bytes
        text = f"wire {wire.get('frame', wire.get('payload'))} B"
        if job.message_size and "frame" in wire:
            text += f" (×{wire['frame'] / job.message_size:.2f} of the plaintext)"
        parts.append(text)
    if v.checked:
        parts.append(f"validated {v.checked - v.failed}/{v.checked}")
    if v.tamper_tried:
        parts.append(f"tamper rejected {v.tamper_rejected}/{v.tamper_tried}")
    if job.security.insecure:
        parts.append("[red]insecure size[/]")
    return parts


def _metric_cells(name: str, metric: Any) -> tuple[str, str, str, str, str, str]:
    """name, median, 95 % CI, CV, samples×batch, throughput."""
    s = metric.stats
    ci = f"[{format_seconds(s.ci95[0])}, {format_seconds(s.ci95[1])}]" if s.ci95 else "[n < 6]"
    cv = f"{100 * s.cv:.1f}%" if s.cv is not None else "-"
    n = f"{s.n}" + (f"×{metric.batch}" if metric.batch > 1 else "")
    rate = format_rate(metric.throughput_bytes_per_s) if metric.throughput_bytes_per_s else "-"
    return name, format_seconds(s.median), ci, cv, n, rate


def _print_job(console: Any, number: int, job: Any) -> None:
    status = "[green]ok[/]" if job.status == JobStatus.OK else f"[red]{job.status}[/]"
    details = _job_details(job)
    if job.error:
        details.append(f"[red]{escape(job.error)}[/]")
    if console.is_terminal:
        console.print(
            f"\n[bold]#{number} {escape(job.label)}[/] · " + " · ".join([f"{job.message_size} B", status, *details])
        )
        cells = [_metric_cells(name, metric) for name, metric in job.metrics.items()]
        # Columns as wide as this job's widest: a line fits 80 columns, so no median or rate
        # is cut from its unit by the wrap.
        name_width = max((len(c[0]) for c in cells), default=0)
        ci_width = max((len(c[2]) for c in cells), default=0)
        for name, median, ci, cv, n, rate in cells:
            line = f"    {name:<{name_width}} {median:>9} {ci:<{ci_width}} CV {cv:>6}  n={n}"
            console.print(escape(line) + (f"  {rate}" if rate != "-" else ""))
    else:
        head = f"#{number} | {escape(job.label)} | {job.message_size} B"
        console.print(f"job | {head} | {status} | " + ("; ".join(details) or "-"))
        for name, metric in job.metrics.items():
            console.print("metric | " + head + " | " + " | ".join(escape(cell) for cell in _metric_cells(name, metric)))
    for line in kernel_lines(job):  # sessions: what each end's kernel saw (TCP_INFO)
        console.print(f"    {escape(line)}")
    for line in tls_lines(job):  # tls13 jobs: what the handshakes negotiated and sent
        console.print(f"    {escape(line)}")
    if job.load is not None:  # load jobs: their steps, knee and conditions
        print_load(console, job)


def _print_warnings(console: Any, run: Any) -> None:
    """The run-wide warnings once each, then the jobs' warnings one line per kind."""
    terminal = console.is_terminal
    measured = sum(1 for job in run.jobs if job.status == JobStatus.OK)
    lines: list[tuple[str, str, str]] = []  # what, where, fix
    for said in run_wide(job.warnings for job in run.jobs):
        lines.append((said.warning.message, f"run, on {said.on(measured, len(run.jobs))}", said.warning.fix))
    for group in group_warnings(list(zip(job_numbers(run), (job.warnings for job in run.jobs)))):
        # The core writes seconds ("1.859e-05 s"); people read "18.6 µs".
        lines.append((humanize_seconds(group.headline()), group.where(), group.fix))
    if not lines:
        return
    if not terminal:
        for what, where, fix in lines:
            console.print(f"warning | {escape(what)} | {escape(where)} | {escape(fix)}")
        return
    console.print(f"\n[bold]Warnings[/] ({len(lines)} kind{'s' if len(lines) != 1 else ''}; #N is the job above)")
    for what, where, fix in lines:
        console.print(f"  [yellow]warning[/] {escape(what)}: {escape(where)} — {escape(fix)}")


def _table_rows(run: Any) -> list[tuple[str, str, str, str, str, str, str, str]]:
    """Per job: its number, label, size, operation pair, forward median, reverse median, rtt, status."""
    from app.core.schemes.base import OPEN_METRIC, SEAL_METRIC
    from app.core.vocab import Family

    rows = []
    for number, job in zip(job_numbers(run), run.jobs):
        if job.mode == Mode.LOAD:  # no per-operation median: app/cli/terminal/load_printing.py's table has them
            continue
        family = Family(job.family) if job.family else None
        seal: str | None
        reverse: str | None
        if family is Family.TLS:  # a tls13 job: its handshake's two figures
            seal, reverse = (
                ("handshake", "first_byte") if job.mode in SESSION_MODES else ("handshake_client", "handshake_server")
            )
        elif job.mode in SESSION_MODES:
            seal, reverse = "compute", "receiver"
        else:
            seal = SEAL_METRIC.get(family) if family else None
            reverse = OPEN_METRIC.get(family) if family else None
        forward = job.metrics.get(seal) if seal else None
        back = job.metrics.get(reverse) if reverse else None
        rtt = job.metrics.get("rtt")
        rows.append(
            (
                f"#{number}",
                job.named,
                str(job.message_size),
                f"{seal}/{reverse}" if reverse else (seal or "-"),
                format_seconds(forward.stats.median) if forward else "-",
                format_seconds(back.stats.median) if back else "-",
                format_seconds(rtt.stats.median) if rtt else "-",
                job.status,
            )
        )
    return rows


def print_table(console: Any, run: Any) -> None:
    """The one-glance summary: a row per job with its main operation's median; load jobs
    in a table of their own (requests per second)."""
    rows = _table_rows(run)
    load_jobs = [job for job in run.jobs if job.mode == Mode.LOAD]
    if rows or not load_jobs:
        _print_operation_table(console, rows)
    print_load_table(console, load_jobs)


def _print_operation_table(console: Any, rows: list[tuple[str, str, str, str, str, str, str, str]]) -> None:
    console.print()
    if not console.is_terminal:
        # One unwrapped line per job; fields separated by " | " so a script can split them.
        console.print("Summary (median per operation): job | size | operation | median | reverse | rtt | status")
        for _, label, size, operation, forward, back, rtt, status in rows:
            console.print(
                f"{escape(label)} | {size} B | {operation} | {forward} | {back} | {rtt} | "
                + (status if status == JobStatus.OK else f"[red]{status}[/]")
            )
        return
    from app.cli.terminal.tables import Column, print_fitted_table

    # Each figure is said with what it measures ("encrypt 610 ns"), so a column left out to
    # fit (the reverse operation first, then the round trip) never leaves a figure under a
    # heading that names another one; the job, its size, its main median and status stay.
    columns = (
        Column("#", "right", whole=True, key=True),
        Column("job", key=True),
        Column("size", "right", whole=True, key=True),
        Column("median", "right", whole=True),
        Column("reverse", "right", drop=1, whole=True),
        Column("rtt", "right", drop=2, whole=True),
        Column("status"),
    )
    cells = [
        (
            number,
            escape(label),
            f"{size} B",
            _named(operation, 0, forward),
            _named(operation, 1, back),
            rtt,
            status if status == JobStatus.OK else f"[red]{status}[/]",
        )
        for number, label, size, operation, forward, back, rtt, status in rows
    ]
    print_fitted_table(console, columns, cells, title="Summary (median per operation)")


def _named(operation: str, side: int, figure: str) -> str:
    """A median with the operation it times: "encrypt 610 ns" (side 0 of "encrypt/decrypt"),
    or the bare figure where there is none ("-")."""
    names = operation.split("/")
    if figure == "-" or side >= len(names) or names[side] in ("", "-"):
        return figure
    return f"{names[side]} {figure}"


def print_per_sample(console: Any, run: Any) -> None:
    """E1's per-sample lines: computation delay (seal) and communication delay (round
    trip), with the receiver's open time and their averages."""
    for job in run.jobs:
        if not {"compute", "rtt", "receiver"} <= set(job.metrics):
            continue
        compute, rtt, receiver = (job.metrics[name].samples for name in ("compute", "rtt", "receiver"))
        n = len(compute)
        console.print(f"\n[bold]{escape(job.label)}[/] · {job.message_size} B · per sample")
        for i, (c, r, o) in enumerate(zip(compute, rtt, receiver), 1):
            console.print(
                f"Sample {i}/{n} | Comp Delay {c * 1e3:.4f} ms | Comm Delay {r * 1e3:.4f} ms "
                f"| Receiver {o * 1e3:.4f} ms"
            )
        console.print(
            f"Average: Comp Delay {sum(compute) / n * 1e3:.4f} ms | Comm Delay {sum(rtt) / n * 1e3:.4f} ms "
            f"| Receiver {sum(receiver) / n * 1e3:.4f} ms"
        )

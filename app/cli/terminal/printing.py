"""What the command line prints about runs: summaries, the summary table, history.

Two layouts for one content. A terminal gets rich tables sized to its width. Anything
else (a pipe, a file, a CI log) gets one line per record that is never wrapped, so no
word is ever split across lines and `grep`/`cut` see whole names and whole run ids.
"""

from __future__ import annotations

from typing import Any

from app.cli.terminal.console import escape
from app.cli.terminal.load_printing import print_load, print_load_table
from app.core.analysis.run_wide import job_only, run_wide
from app.core.results.model import RunResult
from app.core.vocab import SESSION_MODES, JobStatus, Mode
from app.report.tcp_info import kernel_lines
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
    """One block per job: a header line, one line per metric, then its warnings; then the
    one-glance summary (a table on a terminal, one line per job elsewhere).

    A block layout rather than a wide table, so it reads in an 80-column terminal
    and in a CI log alike.
    """
    console.print(
        f"[bold]{escape(run.name)}[/] — run {run.id} — {run.status}"
        "   (per metric: median [95 % CI of the median], CV, samples×batch, throughput)"
    )
    for job in run.jobs:
        v = job.validation
        status = "[green]ok[/]" if job.status == JobStatus.OK else f"[red]{job.status}[/]"
        parts = [f"{job.message_size} B", status]
        if job.mode != Mode.OPERATIONS:
            parts.append(job.mode)
        if job.wire_bytes:
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
        console.print(f"\n[bold]{escape(job.label)}[/] · " + " · ".join(parts))
        if job.error:
            console.print(f"    [red]{escape(job.error)}[/]")
        for name, metric in job.metrics.items():
            s = metric.stats
            ci = f"[{format_seconds(s.ci95[0])}, {format_seconds(s.ci95[1])}]" if s.ci95 else "[n < 6]"
            cv = f"{100 * s.cv:.1f}%" if s.cv is not None else "-"
            line = f"    {name:<18} {format_seconds(s.median):>9} {escape(ci):<21} CV {cv:>6}  n={s.n}" + (
                f"×{metric.batch}" if metric.batch > 1 else ""
            )
            if metric.throughput_bytes_per_s:
                line += f"  {format_rate(metric.throughput_bytes_per_s)}"
            console.print(line)
        for line in kernel_lines(job):  # sessions: what each end's kernel saw (TCP_INFO)
            console.print(f"    {escape(line)}")
        if job.load is not None:  # load jobs: their steps, knee and conditions
            print_load(console, job)
        for warning in job_only(job.warnings):  # the run-wide ones once, below
            message = humanize_seconds(warning.message)  # the core writes seconds: "1.859e-05 s"
            console.print(
                f"    [yellow]warning[/] {warning.metric or 'job'}: {escape(message)} — {escape(warning.fix)}"
            )
    measured = sum(1 for job in run.jobs if job.status == JobStatus.OK)
    for said in run_wide(job.warnings for job in run.jobs):
        console.print(
            f"\n[yellow]warning[/] run, on {said.on(measured, len(run.jobs))}: "
            f"{escape(said.warning.message)} — {escape(said.warning.fix)}"
        )
    print_table(console, run)


def _table_rows(run: Any) -> list[tuple[str, str, str, str, str, str, str]]:
    """Per job: label, size, operation pair, forward median, reverse median, rtt, status."""
    from app.core.schemes.base import OPEN_METRIC, SEAL_METRIC, Family

    rows = []
    for job in run.jobs:
        if job.mode == Mode.LOAD:  # no per-operation median: app/cli/terminal/load_printing.py's table has them
            continue
        family = Family(job.family) if job.family else None
        seal: str | None
        reverse: str | None
        if job.mode in SESSION_MODES:
            seal, reverse = "compute", "receiver"
        else:
            seal = SEAL_METRIC.get(family) if family else None
            reverse = OPEN_METRIC.get(family) if family else None
        forward = job.metrics.get(seal) if seal else None
        back = job.metrics.get(reverse) if reverse else None
        rtt = job.metrics.get("rtt")
        rows.append(
            (
                job.label,
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


def _print_operation_table(console: Any, rows: list[tuple[str, str, str, str, str, str, str]]) -> None:
    console.print()
    if not console.is_terminal:
        # One unwrapped line per job; fields separated by " | " so a script can split them.
        console.print("Summary (median per operation): job | size | operation | median | reverse | rtt | status")
        for label, size, operation, forward, back, rtt, status in rows:
            console.print(
                f"{escape(label)} | {size} B | {operation} | {forward} | {back} | {rtt} | "
                + (status if status == JobStatus.OK else f"[red]{status}[/]")
            )
        return
    from rich.table import Table

    table = Table(title="Summary (median per operation)", title_justify="left")
    for column, justify in (
        ("job", "left"),
        ("size", "right"),
        ("operation", "left"),
        ("median", "right"),
        ("reverse", "right"),
        ("rtt", "right"),
        ("status", "left"),
    ):
        table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for label, size, operation, forward, back, rtt, status in rows:
        table.add_row(
            escape(label),
            size,
            operation,
            forward,
            back,
            rtt,
            status if status == JobStatus.OK else f"[red]{status}[/]",
        )
    console.print(table)


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


def print_history(console: Any, runs: list[Any], store_path: Any) -> None:
    """Stored runs, newest first, each id whole: it is what `show` and `report` take."""
    if not console.is_terminal:
        console.print(f"Runs in {escape(str(store_path))}: id | profile | started | status | jobs ok | machine")
        for r in runs:
            console.print(
                f"{r.id} | {escape(r.name)} | {r.started} | {r.status} | {r.ok_jobs}/{r.jobs} | {escape(r.host or '')}"
            )
        return
    from rich.table import Table

    table = Table(title=f"Runs in {escape(str(store_path))}")
    widest = max((len(r.id) for r in runs), default=2)
    # The id never shrinks, wraps or takes an ellipsis: the other columns fold instead.
    table.add_column("id", no_wrap=True, min_width=widest, overflow="ignore")
    for column in ("profile", "started", "status", "jobs ok", "machine"):
        table.add_column(column, overflow="fold")
    for r in runs:
        table.add_row(r.id, escape(r.name), r.started, r.status, f"{r.ok_jobs}/{r.jobs}", escape(r.host or ""))
    console.print(table)


def _range(param: dict[str, Any]) -> str:
    if isinstance(param["default"], bool):
        return "true/false"
    return f"{param['minimum']}..{param['maximum']}"


def print_scheme_list(console: Any, described: list[dict[str, Any]]) -> None:
    """`cryptobench list`: a table per family on a terminal, one line per variant elsewhere."""
    for family in dict.fromkeys(item["family"] for item in described):
        rows = []
        for item in (i for i in described if i["family"] == family):
            params = (
                "; ".join(
                    f"{p['name']}={'|'.join(map(str, p['choices'])) if p['choices'] else _range(p)}"
                    for p in item["params"]
                )
                or "-"
            )
            for k, v in enumerate(item["variants"]):
                rows.append(
                    (
                        item["id"],
                        escape(v["label"]) + (" [red](insecure)[/]" if v["insecure"] else ""),
                        ", ".join(item["backends"]),
                        str(v["classical_bits"]),
                        str(v["pq_category"]) if v["pq_category"] else "broken",
                        params,
                        k == 0,
                    )
                )
        if not console.is_terminal:
            for scheme, variant, backends, bits, pq, params, _ in rows:
                console.print(
                    f"{escape(family)} | {scheme} | {variant} | {backends} | {bits} bits | PQ {pq} | {escape(params)}"
                )
            continue
        from rich.table import Table

        table = Table(title=family, title_justify="left", expand=False)
        for column in ("id", "variant", "backends", "classical bits", "PQ cat.", "parameters"):
            table.add_column(column, overflow="fold")
        for scheme, variant, backends, bits, pq, params, first in rows:
            table.add_row(
                scheme if first else "", variant, backends if first else "", bits, pq, escape(params) if first else ""
            )
        console.print(table)


def print_link_list(console: Any, presets: Any) -> None:
    """`cryptobench links`: the named links with their figures and sources; a table on a
    terminal, one line per preset elsewhere (name | title | delay | up | down | description
    | source)."""
    from app.core.link.presets import number_text, rates

    def rate(value: float | None) -> str:
        return "unlimited" if value is None else f"{number_text(value)} kbit/s"

    rows = []
    for name, preset in presets.items():
        up, down = rates(preset)
        delay = f"{number_text(preset.delay_ms)} ms" + (
            f" ± {number_text(preset.jitter_ms)} ms" if preset.jitter_ms else ""
        )
        rows.append(
            (
                escape(name),
                escape(preset.title),
                delay,
                rate(up),
                rate(down),
                escape(preset.description),
                escape(preset.source),
            )
        )
    if not console.is_terminal:
        console.print(
            "Link presets (delay one way, each direction; up = sender -> receiver): "
            "name | title | delay | up | down | description | source"
        )
        for row in rows:
            console.print(" | ".join(row))
        return
    from rich.table import Table

    table = Table(
        title="Link presets (delay one way, each direction; up = sender -> receiver)",
        title_justify="left",
        show_lines=True,
    )
    for column, justify in (
        ("name", "left"),
        ("delay", "right"),
        ("up", "right"),
        ("down", "right"),
        ("what it stands for", "left"),
        ("source", "left"),
    ):
        table.add_column(column, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for name, title, delay, up_text, down_text, description, source in rows:
        table.add_row(f"{name}\n[dim]{title}[/]", delay, up_text, down_text, description, source)
    console.print(table)


def print_stability_facts(console: Any, facts: list[dict[str, Any]]) -> None:
    """`cryptobench system`: every pre-flight fact with OK, unknown or its finding and fix; a
    table on a terminal, one line per fact elsewhere (code | status | found [| why | fix])."""
    from app.core.machine.preflight import LABELS
    from app.core.vocab import StabilityCode, StabilityStatus

    def label(code: str) -> str:
        return LABELS.get(StabilityCode(code), code) if code in set(StabilityCode) else code

    findings = sum(1 for fact in facts if fact["status"] == StabilityStatus.FINDING)
    summary = f"{findings} finding{'s' if findings != 1 else ''}" if findings else "no problem found"
    if not console.is_terminal:
        for fact in facts:
            line = f"{fact['code']} | {fact['status']} | {fact['found']}"
            if fact["status"] == StabilityStatus.FINDING:
                line += f" | why: {fact['why']} | fix: {fact['fix']}"
            console.print(escape(line), soft_wrap=True, highlight=False)
        console.print(summary, highlight=False)
        return
    from rich.table import Table

    marks = {
        StabilityStatus.OK: "[green]OK[/]",
        StabilityStatus.FINDING: "[red]finding[/]",
        StabilityStatus.UNKNOWN: "[yellow]unknown[/]",
    }
    table = Table(title="Stability of timings on this machine", title_justify="left", expand=False)
    for column in ("fact", "status", "found", "fix"):
        table.add_column(column, overflow="fold")
    for fact in facts:
        found = escape(fact["found"]) + (f"\n[dim]{escape(fact['why'])}[/]" if fact.get("why") else "")
        table.add_row(
            label(fact["code"]), marks.get(fact["status"], escape(fact["status"])), found, escape(fact.get("fix") or "")
        )
    console.print(table)
    console.print(summary, highlight=False)

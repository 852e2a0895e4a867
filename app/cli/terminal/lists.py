"""What the command line prints as lists: stored runs, schemes, link presets, presets and
the machine's stability facts. A table on a terminal that never splits a word
(app/cli/terminal/tables.py); elsewhere one unwrapped line per record, fields split by " | "."""

from __future__ import annotations

from typing import Any

from app.cli.terminal.console import escape
from app.cli.terminal.tables import Column, print_fitted_table
from app.core.escaping import escape_control


def print_history(console: Any, runs: list[Any], store_path: Any) -> None:
    """Stored runs, newest first, each id whole: it is what `show` and `report` take."""
    if not console.is_terminal:
        # One write of plain text (control characters escaped) past rich, which has nothing to
        # do off a terminal: a rich print per line took 0.2 ms, two seconds for a shared store
        # of 10,000 runs, and one rich print of it all still 0.1 s (benchmarks/bench_store_scale.py).
        lines = [f"Runs in {escape_control(str(store_path))}: id | profile | started | status | jobs ok | machine"]
        lines += [
            f"{escape_control(r.id)} | {escape_control(r.name)} | {r.started} | {escape_control(r.status)} | "
            f"{r.ok_jobs}/{r.jobs} | {escape_control(r.host or '')}"
            for r in runs
        ]
        console.file.write("\n".join(lines) + "\n")
        return
    # The id never wraps: it is what `show` and `report` take; the machine goes first.
    columns = (
        Column("id", whole=True, key=True),
        Column("profile"),
        Column("started", whole=True, drop=2),
        Column("status"),
        Column("jobs ok", "right", whole=True),
        Column("machine", drop=1),
    )
    rows = [(r.id, escape(r.name), r.started, r.status, f"{r.ok_jobs}/{r.jobs}", escape(r.host or "")) for r in runs]
    print_fitted_table(console, columns, rows, title=f"Runs in {escape(str(store_path))}")


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
        columns = (
            Column("id", key=True),
            Column("variant", key=True),
            Column("backends", drop=2),
            Column("classical bits", "right", whole=True),
            Column("PQ cat.", "right"),
            Column("parameters", drop=1),
        )
        cells = [
            (scheme if first else "", variant, backends if first else "", bits, pq, escape(params) if first else "")
            for scheme, variant, backends, bits, pq, params, first in rows
        ]
        print_fitted_table(console, columns, cells, title=family)


def print_link_list(console: Any, presets: Any) -> None:
    """`cryptobench links`: the named links with their figures and sources; a table on a
    terminal, one line per preset elsewhere (name | title | delay | up | down | description
    | source)."""
    from app.core.settings.links import number_text, rates

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
    # A rate may wrap between its number and its unit, so that what the link stands for
    # fits beside it at 80 columns; the sources (long addresses) go first.
    columns = (
        Column("name", key=True),
        Column("delay", "right"),
        Column("up", "right"),
        Column("down", "right"),
        Column("what it stands for", drop=2),
        Column("source", drop=1),
    )
    cells = [
        (f"{name}\n[dim]{title}[/]", delay, up_text, down_text, description, source)
        for name, title, delay, up_text, down_text, description, source in rows
    ]
    print_fitted_table(
        console,
        columns,
        cells,
        title="Link presets (delay one way, each direction; up = sender -> receiver)",
        show_lines=True,
    )


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
    marks = {
        StabilityStatus.OK: "[green]OK[/]",
        StabilityStatus.FINDING: "[red]finding[/]",
        StabilityStatus.UNKNOWN: "[yellow]unknown[/]",
    }
    columns = (Column("fact", key=True), Column("status"), Column("found"), Column("fix", drop=1))
    rows = [
        (
            label(fact["code"]),
            marks.get(fact["status"], escape(fact["status"])),
            escape(fact["found"]) + (f"\n[dim]{escape(fact['why'])}[/]" if fact.get("why") else ""),
            escape(fact.get("fix") or ""),
        )
        for fact in facts
    ]
    print_fitted_table(console, columns, rows, title="Stability of timings on this machine")
    console.print(summary, highlight=False)


def print_preset_list(console: Any, presets: list[tuple[str, str, str]]) -> None:
    """`cryptobench presets`: name, what `run` will count (measured jobs), description; a
    table on a terminal, one line per preset elsewhere (name | jobs | description)."""
    if not console.is_terminal:
        for name, jobs, description in presets:
            console.print(escape(f"{name} | {jobs} | {description}"))
        return
    columns = (Column("preset", key=True), Column("measured jobs"), Column("what it measures"))
    rows = [(escape(name), escape(jobs), escape(description)) for name, jobs, description in presets]
    print_fitted_table(console, columns, rows, title="Presets (cryptobench run NAME)")

"""The conditions a run's figures were measured under, and what may make them imprecise:
the report's Environment section (machine, OS, libraries, the stability pre-flight) and its
Warnings section (each kind of stability warning once with its fix, the jobs it hit; a
run-wide one, such as a CPU governor other than performance, once for the run).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from app.core.analysis.run_wide import RunWide, job_only, run_wide, stated_before_the_run
from app.core.load.verdict import shown_notes
from app.core.machine.preflight import LABELS
from app.core.results.model import RunResult
from app.core.statistics.stability_warnings import TITLES, StabilityWarning, WarningCode
from app.core.vocab import JobStatus, StabilityCode, StabilityStatus
from app.report.content_common import aligns
from app.report.labels import Labels
from app.report.model import Block, Bullets, Paragraph, Section, Table
from app.report.units import format_bytes

__all__ = ["environment_section", "warnings_section"]


def environment_section(run: RunResult) -> Section:
    """The machine, OS, libraries and the stability pre-flight the run's figures came from."""
    env = run.environment
    rows = _cpu_rows(env.get("cpu") or {})
    rows.append(["Memory", format_bytes(env["memory_total_bytes"]) if env.get("memory_total_bytes") else "unknown"])
    os_info = env.get("os") or {}
    rows.append(
        ["OS", " · ".join(str(v) for v in (os_info.get("pretty_name"), os_info.get("platform")) if v) or "unknown"]
    )
    py = env.get("python") or {}
    rows.append(["Python", " ".join(str(v) for v in (py.get("implementation"), py.get("version")) if v) or "unknown"])
    rows += _library_rows(env.get("libraries") or {})
    emulation = env.get("link_emulation")
    if isinstance(emulation, dict):
        rows.append(["Link emulation", _link_emulation_text(emulation)])
    workers = _parallel_workers(run)
    if workers is not None:
        rows.append(["Parallel workers", str(workers)])
    stability = _stability(env)
    if stability is not None:
        rows.append(["Stability", stability[0]])
    blocks: list[Block] = [Table(["Item", "Value"], rows, widths=[1.0, 3.0], align=aligns("ll"))]
    if workers is not None and workers > 1:
        blocks.append(
            Paragraph(
                f"{workers} jobs ran in parallel: they compete for cores, caches and memory "
                "bandwidth, so timings are perturbed and slower than on an idle machine.",
                style="note",
            )
        )
    if stability is not None and stability[1]:
        blocks.append(Paragraph(stability[1], style="note"))
    return Section("Environment", blocks)


#: The CPU flags that speed up the schemes measured, by their name in the recorded environment.
_CRYPTO_FLAGS = {
    "aes": "AES-NI",
    "pclmulqdq": "PCLMULQDQ",
    "sha_ni": "SHA-NI",
    "avx2": "AVX2",
    "vaes": "VAES",
    "avx512f": "AVX-512",
}


def _cpu_rows(cpu: dict[str, Any]) -> list[list[str]]:
    """The CPU's rows: model, architecture, cores, crypto flags, governors and frequency."""
    rows = [
        ["CPU model", cpu.get("model") or "unknown"],
        ["Architecture", cpu.get("architecture") or "unknown"],
        ["Cores", f"{cpu.get('physical_cores') or '?'} physical, {cpu.get('logical_cores') or '?'} logical"],
    ]
    flags = cpu.get("flags") or {}
    shown = [
        f"{label} {'yes' if flags.get(name) else 'no' if flags.get(name) is False else 'unknown'}"
        for name, label in _CRYPTO_FLAGS.items()
    ]
    rows.append(["Crypto CPU flags", ", ".join(shown) + (f" ({cpu['flags_note']})" if cpu.get("flags_note") else "")])
    governors = cpu.get("governors") or []
    rows.append(
        [
            "Frequency governors",
            ", ".join(governors) if governors else "not exposed (typical of VMs, containers, macOS and Windows)",
        ]
    )
    freqs = [
        f"{cpu[k]:.0f} MHz {what}"
        for k, what in (("freq_current_mhz", "current"), ("freq_max_mhz", "max"))
        if isinstance(cpu.get(k), (int, float))
    ]
    if freqs:
        rows.append(["Frequency", ", ".join(freqs)])
    return rows


def _library_rows(libraries: dict[str, Any]) -> list[list[str]]:
    """One row per library: its version (or "not installed"), OpenSSL, a note, its integers."""
    rows = []
    for name, lib in libraries.items():
        lib = lib or {}
        extra = [str(lib[k]) for k in ("openssl", "note") if lib.get(k)]
        if lib.get("integer_class"):
            extra.append(f"integers: {lib['integer_class']}" + (", with GMP" if lib.get("gmp") else ", without GMP"))
        rows.append([name, (lib.get("version") or "not installed") + (f" · {'; '.join(extra)}" if extra else "")])
    return rows


def _link_emulation_text(emulation: dict[str, Any]) -> str:
    """The link emulations this machine offered, and why not the others."""
    offered = ["packet path (the kernel's TCP over emulated IP packets)"] if emulation.get("packet") else []
    if emulation.get("delay_line"):
        offered.append("stream relay")
    if emulation.get("netem"):
        offered.append("kernel netem")
    text = ", ".join(offered) or "none"
    if not emulation.get("packet") and emulation.get("packet_reason"):
        text += f"; no packet path: {emulation['packet_reason']}"
    if not emulation.get("netem") and emulation.get("netem_reason"):
        text += f"; no netem: {emulation['netem_reason']}"
    return text


def _stability(env: dict[str, Any]) -> tuple[str, str] | None:
    """The pre-flight's "Stability" row and its note (the findings with their fixes, "" when
    none); None for a run recorded before the pre-flight existed."""
    facts = (env.get("stability") or {}).get("facts")
    if not isinstance(facts, list):
        return None
    facts = [f for f in facts if isinstance(f, dict)]

    def label(code: Any) -> str:
        return LABELS[StabilityCode(code)] if code in set(StabilityCode) else str(code)

    findings = [f for f in facts if f.get("status") == StabilityStatus.FINDING]
    unknown = [label(f.get("code")) for f in facts if f.get("status") == StabilityStatus.UNKNOWN]
    row = (
        (
            f"{len(findings)} finding{'s' if len(findings) != 1 else ''}: "
            + ", ".join(label(f.get("code")) for f in findings)
        )
        if findings
        else "no problem found"
    )
    if unknown:
        row += f" (not readable here: {', '.join(unknown)})"
    # Each fix said once: a virtual machine and its steal time share one ("ask the host for
    # dedicated vCPUs"), said twice in one paragraph before.
    fixes: list[object] = []
    parts = []
    for f in findings:
        fix = f.get("fix")
        said = f"Fix: {fix}." if fix not in fixes else "The same fix."
        fixes.append(fix)
        parts.append(f"{label(f.get('code'))}: {f.get('found')}; {f.get('why')}. {said}")
    note = " ".join(parts)
    return row, ("Before the run, the stability pre-flight found: " + note) if note else ""


def _parallel_workers(run: RunResult) -> int | None:
    for source in (run.profile, run.environment):
        value = source.get("parallel_workers")
        if isinstance(value, int):
            return value
    value = getattr(run, "parallel_workers", None)
    return value if isinstance(value, int) else None


#: One title per kind, shared with the command line's grouped warnings.
_WARNING_TITLES = TITLES


def warnings_section(run: RunResult, labels: Labels) -> Section:
    """Grouped by kind: what it means and its fix once, then which job and metrics it hit
    (one bullet per warning made a long run's section pages of the same fix). A run-wide
    warning (app/core/analysis/run_wide.py: CPU frequency scaling, parallel jobs) is one sentence for
    the run, and only a pointer when the Environment section already states it."""
    by_code: dict[WarningCode, dict[str, list[StabilityWarning]]] = defaultdict(lambda: defaultdict(list))
    for job in run.jobs:
        for w in job_only(job.warnings):
            by_code[w.code][labels.row(job)].append(w)
    total = sum(len(ws) for jobs in by_code.values() for ws in jobs.values())
    blocks: list[Block] = [_run_wide(said, run) for said in run_wide(job.warnings for job in run.jobs)]
    if total:
        blocks.append(
            Paragraph(
                f"{total} {'other ' if blocks else ''}stability warning{'s' if total != 1 else ''} "
                f"of {len(by_code)} kind{'s' if len(by_code) != 1 else ''}: each says why a number "
                "may be imprecise and how to measure it better."
            )
        )
        listed: dict[tuple[str, ...], str] = {}  # a list of jobs said once, then pointed to
        for code in WarningCode:
            jobs = by_code.get(code)
            if not jobs:
                continue
            example = next(iter(jobs.values()))[0]
            blocks.append(
                Paragraph(
                    f"**{_WARNING_TITLES.get(code, code.value)}**: {example.fix.rstrip('.')}. "
                    f"For example: {example.message.rstrip('.')}."
                )
            )
            # Jobs hit on the same metrics share one bullet: a reduced run's "too few
            # samples" on every metric of every job reads as one line, not pages.
            by_metrics: dict[str, list[str]] = defaultdict(list)
            for name, ws in jobs.items():
                by_metrics[", ".join(w.metric or "whole job" for w in ws)].append(name)
            title = _WARNING_TITLES.get(code, code.value)
            items = []
            for metrics, names in by_metrics.items():
                key = tuple(names)
                if len(names) > 2 and key in listed:  # the same long list again: point to it
                    # Naming this kind keeps two such pointers (two later kinds, one list) apart.
                    own = title[:1].lower() + title[1:]
                    items.append(f"**{metrics}**: {own} in the same {len(names)} jobs as under {listed[key]}")
                else:
                    items.append(f"**{metrics}**: " + "; ".join(names))
                    listed.setdefault(key, title)
            blocks.append(Bullets(items))
    else:
        blocks.append(
            Paragraph(
                f"No {'other ' if blocks else ''}stability warnings were raised: no metric had a "
                "high CV, too few samples, slow first samples or many outliers, and no job saw a "
                "busy machine."
            )
        )
    # Each note once, with every job it is about: a scheme swept over seven links carried
    # the same note seven times.
    notes: dict[str, list[str]] = {}
    for job in run.jobs:
        for note in shown_notes(job):  # never a note the load verdict contradicts
            if job.label not in notes.setdefault(note, []):
                notes[note].append(job.label)
    if notes:
        blocks += [
            Paragraph("Notes on the schemes:"),
            Bullets([f"**{'; '.join(labels)}**: {note}" for note, labels in notes.items()]),
        ]
    return Section("Warnings", blocks)


def _run_wide(said: RunWide, run: RunResult) -> Paragraph:
    """One sentence for a condition of the whole run, which every measured job's result
    carries (so a job read on its own still says it) but the report says once."""
    code, warning = said.warning.code, said.warning
    measured = sum(1 for job in run.jobs if job.status == JobStatus.OK)
    head = (
        f"**{_WARNING_TITLES.get(code, code.value)}**, a condition of the whole run (its warning is on "
        f"{said.on(measured, len(run.jobs))})"
    )
    if code in stated_before_the_run(run.environment):
        return Paragraph(f"{head}: stated once, with its fix, under Environment.")
    return Paragraph(f"{head}: {warning.message.rstrip('.')}. {warning.fix.rstrip('.')}.")

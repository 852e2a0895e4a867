"""A load job's row in the results table, and its steps in words.

A load job (`"mode": "load"`) measures requests per second and the latency clients see
under load (`JobResult.load`), not one message's time: its headline row says so. The
Metric column names the request ("handshakes/s"); Median holds the knee (the highest rate
achieved where the generator was not the limit; "≥" when no step showed the server
overloaded, so the knee lies higher) or, at one fixed rate, the rate achieved; the p95 column holds
the p99 latency at the highest rate the server kept up with, labelled "p99"; the
Median's tooltip leads with the job's verdict (app.core.load.verdict, the sentence every
face says) and lists every step with what limited it. Its metrics ("latency", "server") are rows of their
own under "Every metric". Qt-free, like `app.gui.results.cells`.
"""

from __future__ import annotations

from app.core.load.verdict import StepCall, VerdictKind, generators_text, load_verdict, step_calls, verdict_text
from app.core.records.job_conditions import Load, LoadStep, StepLimit
from app.core.results.model import JobResult
from app.core.vocab import Mode
from app.gui.results.cells import Cell, Column, build_row
from app.gui.vocab import Tone
from app.gui.words import plural
from app.report.load_generator_words import generator_where, signed_seconds
from app.report.units import format_seconds

#: The metric name of a load job's headline row: not a metric of the job (no metric name
#: has a "/"), so a metric picked by name never lands on it.
LOAD_ROW = "requests/s"
_MISSING = "-"


def is_load(job: JobResult) -> bool:
    """A job of mode load, whether or not it got as far as a step."""
    return job.mode == Mode.LOAD or job.load is not None


def format_rate_per_s(rate: float) -> str:
    """A request rate as people read it: "1,250/s", "0.5/s"."""
    return f"{rate:,.0f}/s" if rate >= 10 else f"{rate:.3g}/s"


def step_line(step: LoadStep, call: StepCall | None = None, cpu: bool = False) -> str:
    """One step in words: offered, achieved, errors, missed requests, p50/p99/max, (the
    generator's and the server's CPU) and, when the server fell behind or the generator
    was the limit, what that call rests on (`call`: app.core.load.verdict's)."""
    parts = [f"offered {format_rate_per_s(step.offered_per_s)} → achieved {format_rate_per_s(step.achieved_per_s)}"]
    if step.errors:
        parts.append(plural(step.errors, "error"))
    if step.missed:
        parts.append(f"{step.missed:,} missed (never sent: the generator's backlog was full)")
    latency = [
        f"{name} {format_seconds(step.latency_s[name])}" for name in ("p50", "p99", "max") if name in step.latency_s
    ]
    parts.append(", ".join(latency) if latency else "no request completed")
    if cpu:
        used = [
            f"{who} CPU {value:.0f} %"
            for who, value in (("generator", step.generator_cpu_percent), ("server", step.server_cpu_percent))
            if value is not None
        ]
        if used:
            parts.append(", ".join(used))
    text = " · ".join(parts)
    if call is not None and call.limit == StepLimit.GENERATOR:
        text += " · generator-limited" + (f": {call.reason}" if call.reason else "")
    elif call is not None and call.limit == StepLimit.SERVER:
        text += " · server overloaded" + (f": {call.reason}" if call.reason else "")
    return text


def generator_lines(load: Load, step: LoadStep) -> list[str]:
    """Each generator's own record of `step`, a line each, for a job whose generators ran on
    Dask workers (none otherwise): "#1 (loadgen-a, worker tcp://10.0.0.11:40001): offered 400/s → achieved 400/s · p50
    241 µs, p99 1.38 ms · send lag 200 µs · start -250 ms · CPU 27 %" (start: when it began
    against the agreed start), "· generator-limited" where it marked itself late or short, or
    that it is missing."""
    by_number = {part.generator: part for part in step.generators}
    lines = []
    for number, place in enumerate(load.generators, start=1):
        part = by_number.get(number)
        who = f"#{number} ({generator_where(place)})"
        if part is None:
            lines.append(f"{who}: missing: it did not return this step (the step is incomplete)")
            continue
        text = f"{who}: {step_line(part)}"
        figures = [f"send lag {format_seconds(part.send_lag_p99_s)}"] if part.send_lag_p99_s is not None else []
        if part.started_late_s is not None:
            figures.append(f"start {signed_seconds(part.started_late_s)}")
        if part.generator_cpu_percent is not None:
            figures.append(f"CPU {part.generator_cpu_percent:.0f} %")
        text += "".join(f" · {figure}" for figure in figures)
        if part.generator_saturated or part.saturation_reason:
            # Its reason in full is in the step's own mark, which names each generator's.
            text += " · generator-limited"
        lines.append(text)
    return lines


def _generators_about(load: Load) -> str:
    """ "one generator process", or where a cluster job's generators ran."""
    where = generators_text(load)
    return "one generator process" if where is None else f"{where}, through {load.cluster or 'a Dask scheduler'}"


def _about(load: Load) -> list[str]:
    """What the job ran: clients, workers, durations, the crypto a request costs."""
    lines = [
        f"{plural(load.clients, 'client connection')} ({_generators_about(load)}), "
        f"{plural(load.server_workers, 'server worker')}; each offered rate {load.duration_s:g} s after "
        f"{load.warmup_s:g} s of warm-up; one request = one {load.request}"
    ]
    costs = []
    if load.server_request_s is not None:
        costs.append(f"the server's crypto {format_seconds(load.server_request_s)}")
    if load.client_prepare_s is not None:
        costs.append(f"the client's {format_seconds(load.client_prepare_s)} (prepared ahead, outside latency)")
    if costs:
        lines.append("Per request (median): " + ", ".join(costs))
    return lines


def _steps_tip(load: Load) -> list[str]:
    return [
        "Steps, in the order offered (latency from each request's intended start):",
        *(f"• {step_line(step, call, cpu=True)}" for step, call in zip(load.steps, step_calls(load), strict=True)),
    ]


def _rate_cell(job: JobResult, load: Load | None) -> Cell:
    """The Median column: the knee ("≥" where no step showed the server overloaded), or at
    one fixed rate the rate achieved; its tooltip leads with the job's verdict, the same
    sentence the report and the terminal say."""
    if load is None or not load.steps:
        return Cell(_MISSING, None, "No load step was measured")
    judged = load_verdict(load)
    tip = "\n".join([f"Verdict: {verdict_text(job, load, judged)}", *_about(load), *_steps_tip(load)])
    warn = Tone.WARN if judged.kind == VerdictKind.GENERATOR else None
    if len(load.steps) == 1:
        step = load.steps[0]
        tone = Tone.WARN if judged.kind == VerdictKind.GENERATOR or step.errors else None
        return Cell(format_rate_per_s(step.achieved_per_s), step.achieved_per_s, tip, tone)
    if judged.knee_per_s is None:
        return Cell("generator-bound", None, tip, Tone.WARN)
    if judged.kind == VerdictKind.SERVER:
        return Cell(f"knee {format_rate_per_s(judged.knee_per_s)}", judged.knee_per_s, tip)
    return Cell(f"≥ {format_rate_per_s(judged.knee_per_s)}", judged.knee_per_s, tip, warn)


def _p99_cell(load: Load | None) -> Cell:
    """The p95 column: the p99 latency where the server kept up, labelled as p99."""
    if load is None or not load.steps:
        return Cell(_MISSING)
    judged = load_verdict(load)
    if judged.sustained_p99_s is not None and judged.sustained_per_s is not None:
        return Cell(
            f"p99 {format_seconds(judged.sustained_p99_s)}",
            judged.sustained_p99_s,
            f"p99 latency at {format_rate_per_s(judged.sustained_per_s)}, the highest rate the server "
            "kept up with (achieved ≥ 95 % of offered, no errors, latency bounded, the generator on time)",
        )
    if len(load.steps) == 1 and "p99" in load.steps[0].latency_s:
        step = load.steps[0]
        (call,) = judged.calls
        tip = f"p99 latency at {format_rate_per_s(step.offered_per_s)} offered"
        if call.limit == StepLimit.GENERATOR:
            tip += "; the generator was the limit, so this latency includes its own delay"
        elif call.limit == StepLimit.SERVER:
            tip += "; the server did not keep up at this rate, so requests queued"
        return Cell(
            f"p99 {format_seconds(step.latency_s['p99'])}",
            step.latency_s["p99"],
            tip,
            Tone.WARN if call.limit == StepLimit.GENERATOR else None,
        )
    return Cell(_MISSING, None, "No step was kept up with while the generator was on time: no p99 to quote")


def load_row(job: JobResult) -> list[Cell]:
    """A load job's headline row: the common cells of `build_row`, and its own figures
    where a session's would be."""
    cells = build_row(job, None)
    load = job.load
    request = f"{load.request}s/s" if load is not None else LOAD_ROW
    cells[Column.METRIC] = Cell(
        request,
        request,
        "Requests the server completed per second under load, and the "
        "latency clients saw (from each request's intended start)",
    )
    cells[Column.MEDIAN] = _rate_cell(job, load)
    cells[Column.P95] = _p99_cell(load)
    cells[Column.CI95] = Cell(
        _MISSING, None, "One measured window per offered rate: no interval; the steps are in the Median's tooltip"
    )
    cpu = cells[Column.CPU]
    if cpu.tip:
        sender = (
            "sender = the load generator (every client connection)"
            if load is None or generators_text(load) is None
            else "sender = this machine's process that coordinated the generators on Dask workers (each "
            "generator's own CPU is in its steps)"
        )
        cpu_tip = f"{sender}, receiver = the server\n" + cpu.tip
        cells[Column.CPU] = Cell(cpu.text, cpu.key, cpu_tip, cpu.foreground)
    return cells

"""What an exported plot says about itself: its title (what it shows, the metric and its
unit), the run, the machine, and the jobs it left out with the reason for each.

A figure handed on loses the window around it: the tab's name, the metric picker, the
run in the status bar. Its caption says them instead, in the PNG, the SVG and the CSV of
the plot alike (app.gui.plots.export draws and writes it). Qt-free: plain words from the
results, so the rules can be read and tested on their own.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.core.results.model import JobResult, RunResult
from app.core.vocab import JobStatus, RunStatus
from app.report.caveats import is_reduced
from app.report.content_common import utc
from app.report.units import format_bytes

#: Jobs named one by one in the left-out note; past this, "and N more" (a note longer
#: than the plot would bury it).
NAMED_LEFT_OUT = 6


@dataclass(frozen=True)
class PlotCaption:
    """The caption's facts, each one line (the renderer wraps them to the plot's width)."""

    title: str  #: what the plot shows, with the metric and its unit
    details: tuple[str, ...] = ()  #: how to read it (whiskers, hollow points, a log axis)
    run: str = ""
    machine: str = ""
    left_out: tuple[str, ...] = ()  #: "#5 RSA-4096-OAEP · 64 B: failed", one per job left out

    def with_context(self, run: RunResult | None) -> PlotCaption:
        """The same caption with the run's and its machine's lines."""
        return PlotCaption(self.title, self.details, run_line(run), machine_line(run), self.left_out)

    def left_out_note(self) -> str | None:
        """The jobs left out, named with their reason, or None when none was."""
        if not self.left_out:
            return None
        named = "; ".join(self.left_out[:NAMED_LEFT_OUT])
        more = len(self.left_out) - NAMED_LEFT_OUT
        if more > 0:
            named += f"; and {more} more"
        count = len(self.left_out)
        return f"Left out ({count} job{'s' if count != 1 else ''}): {named}"

    def lines(self) -> list[str]:
        """Every line under the title, in the order drawn."""
        note = self.left_out_note()
        return [line for line in (*self.details, self.run, self.machine, note) if line]


def job_name(job: JobResult) -> str:
    """A job as the plots name it: "#3 AES-128-GCM [cryptography] · 1 KiB"."""
    return f"#{job.index + 1} {job.named} · {format_bytes(job.message_size)}"


def run_line(run: RunResult | None) -> str:
    """ "Run 20261126-031200-ab12 of profile quick (reduced run), started 2026-11-26 03:12 UTC"."""
    if run is None:
        return "Run: none recorded (results not from a stored run)"
    # The name with the run's marks (command-line overrides: "quick (--samples 3)").
    name = run.profile_view.marked_name if run.name else "an unnamed profile"
    reduced = ""
    if is_reduced(run):  # a reduced run's profile is named "quick (reduced)": said once, with what it means
        name = name.replace(" (reduced)", "", 1).replace("(reduced; ", "(", 1)
        reduced = " (reduced run: fewer samples than the full profile)"
    status = "" if run.status == RunStatus.FINISHED else f", {run.status}"
    started = utc(run.started, seconds=False, unknown="at an unknown time")
    return f"Run {run.id} of profile {name}{reduced}, started {started}{status}"


def machine_line(run: RunResult | None) -> str:
    """The machine the run measured on: host, CPU, cores, OS, as recorded."""
    if run is None:
        return ""
    env = run.environment_view
    parts = [env.hostname or "unnamed host", env.cpu_model or "unknown CPU"]
    if env.physical_cores or env.logical_cores:
        parts.append(f"{env.physical_cores or '?'} cores ({env.logical_cores or '?'} logical)")
    if env.os_name:
        parts.append(env.os_name)
    return "Machine: " + ", ".join(parts)


def why_left_out(job: JobResult, metric: str, *, log_values: bool = False, log_sizes: bool = False) -> str | None:
    """Why a plot of `metric`'s median per job has no place for this job (None: it has one)."""
    if job.status != JobStatus.OK:
        return str(job.status)
    if not metric or not job.metrics:
        return "no metrics"
    found = job.metrics.get(metric)
    if found is None:
        return f"no {metric} metric"
    if found.stats.n == 0:
        return f"no {metric} samples"
    if log_values and found.stats.median <= 0:
        return "a median of 0, which a log axis cannot place"
    if log_sizes and job.message_size <= 0:
        return "message size 0, which a log axis cannot place"
    return None


def left_out(jobs: Iterable[JobResult], metric: str, *, log_values: bool = False, log_sizes: bool = False) -> list[str]:
    """Each job a per-job plot of `metric` leaves out, named with its reason."""
    out = []
    for job in jobs:
        reason = why_left_out(job, metric, log_values=log_values, log_sizes=log_sizes)
        if reason is not None:
            out.append(f"{job_name(job)}: {reason}")
    return out


def metric_list(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "no metric"

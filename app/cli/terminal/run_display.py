"""What `cryptobench run` prints while a run goes and once it is over.

While it runs: a progress bar (unless --quiet) with the jobs done and the time left, one
line per finished job (on a terminal `ok #3 label · 64 B`, in a pipe `ok | #3 | label |
64 B`, so a script can split it) and the run's own warnings on standard error. Once it is
over: the count of jobs and where they are kept, then what went wrong around the run (a
line that could not be shown, an internal error, a stop signal). Every line is display
only: one that cannot be drawn never stops the measurement.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from rich.cells import cell_len
from rich.console import Console
from rich.progress import BarColumn, TextColumn, TimeElapsedColumn
from rich.progress import Progress as Bar

from app.cli.terminal.console import escape
from app.cli.terminal.lines import say
from app.cli.terminal.printing import count_phrase, profile_job_count
from app.cli.terminal.signals import describe
from app.cli.terminal.time_left import TimeLeft
from app.core.contracts.events import JobFinished, LogMessage, Progress, RunEvent, RunStarted
from app.core.escaping import escape_control
from app.core.results.model import JobResult, RunResult
from app.core.run.estimate import RunEstimate
from app.core.vocab import JobStatus, LogLevel


@dataclass(frozen=True)
class RunEnd:
    """How a run ended: what its last lines say and its exit code is read from."""

    run: RunResult
    #: The jobs the profile asked for (`Runner.total_jobs`), finished or not.
    total_jobs: int
    #: Whether the run was recorded in a store (None of --no-store, or of a store that
    #: could not be reached) and whether that store was asked for but unreachable.
    stored: bool
    store_unreachable: bool
    #: Why not every job is in the store, and the file they were kept in instead.
    store_error: str | None
    kept_file: Path | None
    #: The command that stores the kept file once the store is back (`import_command`).
    import_command: str | None
    #: A defect the run stopped on (type and message), the finished jobs kept.
    internal_error: str | None
    #: The stop signal that ended the run (None: it ran to its end).
    stop_signum: int | None
    #: The exports written, and those that could not be.
    written: list[Path]
    unwritten: list[Path]

    @property
    def failed(self) -> list[JobResult]:
        return [job for job in self.run.jobs if job.status != JobStatus.OK]


class RunDisplay:
    """The progress bar and the lines of one run; `on_event` is the runner's `on_event`."""

    def __init__(self, console: Console, guess: RunEstimate | None, *, quiet: bool) -> None:
        self.console = console
        self.time_left = TimeLeft(guess)
        self.bar = Bar(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed:.0f}/{task.total:.0f} jobs"),
            TimeElapsedColumn(),
            TextColumn("{task.fields[left]}"),
            console=console,
            disable=quiet,
            transient=True,
        )
        self.task = self.bar.add_task("starting", total=1, left="")
        #: Each job's progress so far: (done, total) by its result index.
        self.progress: dict[int, tuple[int, int]] = {}
        #: Why lines could not be shown (the first is said at the end).
        self.errors: list[str] = []
        cell_len("—≥")  # loads rich's character-width tables now, not when files may have run out

    def __enter__(self) -> RunDisplay:
        self.bar.__enter__()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.bar.__exit__(kind, exc, traceback)

    def on_event(self, event: RunEvent) -> None:
        """Show a run event. Display only: a line that cannot be drawn (a lazy import of
        rich's tables when no file descriptor is left) must never stop the measurement."""
        try:
            self._show(event)
        except Exception as exc:  # noqa: BLE001
            if not self.errors:
                self.errors.append(f"{type(exc).__name__}: {exc}")

    def _show(self, event: RunEvent) -> None:
        bar, task = self.bar, self.task
        if isinstance(event, RunStarted):
            bar.update(task, total=event.total_jobs, description=f"run {event.run_id}")
        elif isinstance(event, Progress):
            self.progress[event.job_index] = (event.done, event.total)
            done, total = event.done, max(1, event.total)
            finished = sum(1 for i in self.progress if i < event.job_index)
            bar.update(task, completed=min(finished + done / total, bar.tasks[0].total or 1))
            bar.update(task, left=self.time_left.text(event.job_index, done / total))
        elif isinstance(event, JobFinished):
            result = event.result
            bar.console.print(self.job_line(result))
            self.time_left.finished(result.index + 1)
            bar.update(task, completed=result.index + 1, left=self.time_left.text(result.index + 1, 0.0))
        elif isinstance(event, LogMessage) and event.level == LogLevel.WARNING and event.job_index is None:
            # The run's own warnings (stability pre-flight, parallel jobs): one line each on stderr.
            say(f"cryptobench: warning: {escape_control(event.text)}", err=True)

    def job_line(self, result: JobResult) -> str:
        """A finished job in one line, led by its status: spaced out on a terminal, split
        by bars in a pipe ("ok | #3 | ...")."""
        mark = "[green]ok[/]" if result.status == JobStatus.OK else f"[red]{result.status}[/]"
        error = escape(result.error) if result.error else ""
        if self.console.is_terminal:
            return f"{mark} #{result.index + 1} {escape(result.label)} · {result.message_size} B" + (
                f" — {error}" if error else ""
            )
        return f"{mark} | #{result.index + 1} | {escape(result.label)} | {result.message_size} B" + (
            f" | {error}" if error else ""
        )

    def print_end(self, end: RunEnd, *, sweeps: bool) -> None:
        """The run's last lines: how many jobs, where they are kept, and what went wrong
        around the run (`sweeps`: the profile has a job swept over several links)."""
        run = end.run
        ok = len(run.jobs) - len(end.failed)
        phrase = count_phrase(len(run.jobs), profile_job_count(run), ok, links=sweeps)
        self.console.print(f"{phrase}{_where_kept(end)}")
        kept = ("" if not end.stored or end.store_error else " in the store") + (
            " and the exports" if end.written else ""
        )
        if self.errors:
            say(
                f"cryptobench: warning: some progress lines could not be shown ({self.errors[0]}); the run "
                "was not affected",
                err=True,
            )
        if end.internal_error is not None:
            say(
                f"cryptobench: error: the run stopped on an internal error ({end.internal_error}); the "
                f"{len(run.jobs)} jobs recorded are kept{kept}",
                err=True,
            )
        if end.stop_signum is not None:
            done = sum(1 for job in run.jobs if job.status != JobStatus.CANCELLED)
            say(
                f"cryptobench: stopped by {describe(end.stop_signum)} after {done} of {end.total_jobs} jobs; "
                f"their results are kept{kept}",
                err=True,
            )


def _where_kept(end: RunEnd) -> str:
    """Where the run's jobs are: not stored, not all stored (and the file they wait in),
    or stored under the run's id."""
    if not end.stored and not end.store_unreachable:
        return " (not stored)"
    if end.store_error:
        kept_file = f"; kept in {end.kept_file}: `{end.import_command}`" if end.kept_file else ""
        return f" (NOT all stored: {escape(end.store_error)}{escape(kept_file)})"
    return f" (stored as {end.run.id})"

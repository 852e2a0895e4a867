"""What the window's log says when a job result arrives: its status, its own warnings, and
each run-wide warning (CPU frequency scaling, parallel jobs) once per run rather than once
per job (app/core/analysis/run_wide.py). Qt-free: lines of (level, text) for `MainWindow.append_log`.

A job's own warnings are logged whole the first time their kind appears in the run; later
ones of that kind are counted, and when the run ends one line per kind says how many
metrics or jobs it hit and which (app/core/analysis/warning_groups.py): a reduced run's
hundred "Only 3 samples" lines buried the busy machine that mattered.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from app.core.analysis.run_wide import job_only, run_wide
from app.core.analysis.warning_groups import group_warnings
from app.core.results.model import JobResult
from app.core.run.runner import NOT_STARTED
from app.core.statistics.stability_warnings import WarningCode
from app.core.vocab import JobStatus, LogLevel
from app.gui.words import plural


class ResultLog:
    """The log lines of one run's results.

    Args:
        stated: run-wide warnings the run's start already logged (`stated_before_the_run`):
            the pre-flight's governor finding, the parallel-workers warning; never repeated.
    """

    def __init__(self, stated: Iterable[WarningCode] = ()) -> None:
        self._said: set[WarningCode] = set(stated)
        #: Jobs a stop reached before they started (numbered from 1): said in one line at the end.
        self._not_started: list[int] = []
        #: The kinds of job warning logged whole so far in this run.
        self._kinds: set[WarningCode] = set()

    def lines(self, result: JobResult) -> list[tuple[LogLevel, str]]:
        if result.status == JobStatus.CANCELLED and result.error == NOT_STARTED:
            # One line per job would bury the run's real errors under 65 identical ones.
            self._not_started.append(result.index + 1)
            return []
        # A job the user stopped while it ran is no error of the job's.
        level = (
            LogLevel.INFO
            if result.status == JobStatus.OK
            else LogLevel.WARNING
            if result.status == JobStatus.CANCELLED
            else LogLevel.ERROR
        )
        text = f"#{result.index + 1} {result.label} · {result.message_size} B: {result.status}"
        if result.error:
            text += f" — {result.error}"
        lines = [(level, text)]
        for warning in job_only(result.warnings):
            if warning.code in self._kinds:
                continue  # counted in the run's last lines (`kinds`)
            self._kinds.add(warning.code)
            lines.append(
                (
                    LogLevel.WARNING,
                    f"#{result.index + 1} {result.label} · {warning.metric or 'job'}: {warning.message} — "
                    f"{warning.fix} (the first of its kind in this run; the rest are counted at its end)",
                )
            )
        for said in run_wide([result.warnings]):
            if said.warning.code not in self._said:
                self._said.add(said.warning.code)
                lines.append(
                    (
                        LogLevel.WARNING,
                        f"Every measured job of this run: {said.warning.message} — "
                        f"{said.warning.fix} (said once, not per job)",
                    )
                )
        return lines

    def finish(self) -> list[tuple[LogLevel, str]]:
        """The run's closing lines: what a stop cancelled before it started, in one line."""
        if not self._not_started:
            return []
        numbers = sorted(self._not_started)
        self._not_started = []
        text = f"Stopped: {plural(len(numbers), 'job')} not started ({job_ranges(numbers)})"
        return [(LogLevel.WARNING, text)]

    @staticmethod
    def kinds(results: Sequence[JobResult]) -> list[tuple[LogLevel, str]]:
        """At the run's end: each kind of job warning met more than once, one line with its
        count and jobs ("Only 3 samples (< 10) ...: 71 metrics in jobs #1-#20")."""
        groups = group_warnings([(job.index + 1, job.warnings) for job in results])
        return [
            (LogLevel.WARNING, f"This run, by kind: {group.headline()}: {group.where()} — {group.fix}")
            for group in groups
            if len(group.places) > 1
        ]


def job_ranges(numbers: list[int]) -> str:
    """Job numbers as runs: [6, 7, 8, 10] -> "#6–#8, #10"."""
    spans: list[tuple[int, int]] = []
    for number in numbers:
        if spans and number == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], number)
        else:
            spans.append((number, number))
    return ", ".join(f"#{a}" if a == b else f"#{a}–#{b}" for a, b in spans)

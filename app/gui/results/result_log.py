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
from app.core.analysis.stability_warnings import WarningCode
from app.core.analysis.warning_groups import group_warnings
from app.core.results.model import JobResult
from app.core.vocab import JobStatus, LogLevel


class ResultLog:
    """The log lines of one run's results.

    Args:
        stated: run-wide warnings the run's start already logged (`stated_before_the_run`):
            the pre-flight's governor finding, the parallel-workers warning; never repeated.
    """

    def __init__(self, stated: Iterable[WarningCode] = ()) -> None:
        self._said: set[WarningCode] = set(stated)
        #: The kinds of job warning logged whole so far in this run.
        self._kinds: set[WarningCode] = set()

    def lines(self, result: JobResult) -> list[tuple[LogLevel, str]]:
        level = LogLevel.INFO if result.status == JobStatus.OK else LogLevel.ERROR
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

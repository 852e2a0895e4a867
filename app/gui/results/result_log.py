"""What the window's log says when a job result arrives: its status, its own warnings, and
each run-wide warning (CPU frequency scaling, parallel jobs) once per run rather than once
per job (app/core/analysis/run_wide.py). Qt-free: lines of (level, text) for `MainWindow.append_log`.
"""

from __future__ import annotations

from collections.abc import Iterable

from app.core.analysis.run_wide import job_only, run_wide
from app.core.analysis.stability_warnings import WarningCode
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

    def lines(self, result: JobResult) -> list[tuple[LogLevel, str]]:
        level = LogLevel.INFO if result.status == JobStatus.OK else LogLevel.ERROR
        text = f"{result.label} · {result.message_size} B: {result.status}"
        if result.error:
            text += f" — {result.error}"
        lines = [(level, text)]
        lines += [
            (LogLevel.WARNING, f"{result.label} · {warning.metric or 'job'}: {warning.message} — {warning.fix}")
            for warning in job_only(result.warnings)
        ]
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

"""A run's stability warnings grouped by kind: one line per kind, with its count and jobs.

A reduced run gives nearly every metric "Only 3 samples (< 10)": listed one per metric,
about a hundred such lines buried the two warnings that mattered (a busy machine, a slow
first sample). What shows a whole run (the command line's `run` and `show`) lists each
kind once instead: what it is, how many metrics or jobs it hit and which, and its fix.
A kind met once keeps its whole message, numbers and all.

Run-wide warnings (app/core/analysis/run_wide.py) are not grouped here: they are said once
for the run already.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.core.analysis.run_wide import job_only
from app.core.statistics.stability_warnings import KINDS, TITLES, StabilityWarning, WarningCode

__all__ = ["WarningGroup", "group_warnings", "number_ranges"]

#: A group that hit at most this many places names each (job and metric); more, the jobs.
_PLACES_NAMED = 4
_FIRST_NUMBER = re.compile(r"\d+(?:\.\d+)?")


@dataclass(frozen=True, slots=True)
class WarningGroup:
    """Every warning of one kind in a run, with where each was raised."""

    code: WarningCode
    #: (job number counted from 1 in the run's order, metric or None for the whole job)
    places: tuple[tuple[int, str | None], ...]
    messages: tuple[str, ...]
    fix: str

    @property
    def title(self) -> str:
        return TITLES.get(self.code, self.code.value)

    def headline(self) -> str:
        """The message itself when every place said the same (or there is one place); else
        the kind's words with the range of its number ("Only 1–3 samples (< 10) ...")."""
        if len(set(self.messages)) == 1:
            return self.messages[0]
        numbers = [float(m.group()) for m in map(_FIRST_NUMBER.search, self.messages) if m]
        low, high = min(numbers, default=0.0), max(numbers, default=0.0)
        shown = f"{low:g}" if low == high else f"{low:g}–{high:g}"
        # Messages that differ only in their first number: the first with the range in it.
        if len(numbers) == len(self.messages) and len({_FIRST_NUMBER.sub("#", m, 1) for m in self.messages}) == 1:
            return _FIRST_NUMBER.sub(shown, self.messages[0], 1)
        template = KINDS.get(self.code)
        return self.title if template is None else template.format(range=shown)

    def where(self) -> str:
        """ "#3 decrypt", "#1 encrypt, #4 job", or for many "98 metrics in jobs #1-#22"."""
        if len(self.places) <= _PLACES_NAMED:
            return ", ".join(f"#{job} {metric or 'job'}" for job, metric in self.places)
        jobs = number_ranges(sorted({job for job, _ in self.places}))
        metrics = sum(1 for _, metric in self.places if metric is not None)
        if metrics == len(self.places):
            return f"{metrics} metrics in job{'s' if ',' in jobs or '-' in jobs else ''} {jobs}"
        if metrics == 0:
            return f"{len(self.places)} jobs ({jobs})"
        return f"{len(self.places)} metrics and jobs in jobs {jobs}"


def number_ranges(numbers: Sequence[int]) -> str:
    """ "#1-#5, #7, #9-#10" of sorted job numbers."""
    spans: list[list[int]] = []
    for n in numbers:
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(f"#{a}" if a == b else f"#{a}-#{b}" for a, b in spans)


def group_warnings(warnings_by_job: Sequence[tuple[int, Sequence[StabilityWarning]]]) -> list[WarningGroup]:
    """Each kind of a run's job warnings once (run-wide ones left out), the rarest first:
    a kind on every metric is usually the consequence of a setting (a reduced run's sample
    count); one on a single job is news, and must not sit below a hundred lines.
    `warnings_by_job`: (the job's number as printed, its warnings) per job."""
    found: dict[WarningCode, list[tuple[int, StabilityWarning]]] = {}
    for number, warnings in warnings_by_job:
        for warning in job_only(warnings):
            found.setdefault(warning.code, []).append((number, warning))
    groups = [
        WarningGroup(
            code=code,
            places=tuple((number, w.metric) for number, w in hits),
            messages=tuple(w.message for _, w in hits),
            fix=hits[0][1].fix,
        )
        for code, hits in found.items()
    ]
    order = list(WarningCode)
    return sorted(groups, key=lambda g: (len(g.places), order.index(g.code)))

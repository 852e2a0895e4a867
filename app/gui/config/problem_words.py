"""Why the panel's profile cannot run, in the panel's words, and where to say it.

The core names a problem by the profile's field ("jobs[2].message_sizes[0]",
"jobs[1].link.jitter_ms") and may name another job ("repeats jobs[0]"). The panel
names jobs by their rows ("AES-GCM 256", "AES-GCM 256 (job 2)" when two rows read the
same), and shows the reason twice: whole, above the scheme tree, and next to the field at
fault (`note`: a key of `JobSettingsEditor.notes`). Qt-free: plain text in, text out.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["PanelProblem", "describe_problem", "row_names"]

_JOB_REF = re.compile(r"jobs\[(\d+)\]")
#: A load job's fields of load from several machines: shown by the Dask scheduler's field.
CLUSTER_FIELDS = ("cluster", "generators", "cluster_plain_tcp")
#: What the user can change so that a row stops repeating another.
REPEAT_FIX = "change one's backend, a parameter, its mode, exchange, link or message sizes"


@dataclass(frozen=True)
class PanelProblem:
    text: str  #: the whole reason
    note: str | None = None  #: the field note that shows it, if a field is at fault
    row: int | None = None  #: the checked row at fault (its position among the checked rows)


def row_names(texts: Sequence[str]) -> list[str]:
    """The checked rows' names; rows that read the same get their job number."""
    return [f"{text} (job {k + 1})" if texts.count(text) > 1 else text for k, text in enumerate(texts)]


def _note_of(field: str) -> str | None:
    if field == "message sizes" or "message_sizes" in field:
        return "sizes"
    if field == "offered rates" or ".rates" in field or ".rate_per_s" in field or field.startswith(("rates", "rate_")):
        return "rates"
    if field in ("Dask scheduler", *CLUSTER_FIELDS) or any(f".{name}" in field for name in CLUSTER_FIELDS):
        return "cluster"
    if field.startswith(("link", "links")) or ".link" in field:
        return "link"
    if field in ("server", "token"):
        return "remote"
    return None


def describe_problem(field: str | None, detail: str, names: Sequence[str]) -> PanelProblem:
    """The reason of a ProfileError (`field`, `detail`) with jobs named by `names`."""
    where = field or ""

    def named(match: re.Match[str]) -> str:
        index = int(match.group(1))
        return names[index] if index < len(names) else match.group(0)

    detail = _JOB_REF.sub(named, detail)
    if detail.startswith("repeats ") and ": " in detail:
        # What to do before what is the same: a cut message keeps the part to act on.
        other, same = detail.split(": ", 1)
        detail = f"{other}: {REPEAT_FIX}. Same {same.removeprefix('same ')}"
    if where == "schemes":
        return PanelProblem("Select at least one scheme to run.")
    match = _JOB_REF.match(where)
    if match is not None and int(match.group(1)) < len(names):
        index = int(match.group(1))
        inner = where[match.end() + 1 :]  # "link.jitter_ms", "message_sizes[0]", ""
        if inner.startswith("link"):  # link.jitter_ms: the field, as the profile's error names it
            return PanelProblem(f"{names[index]}: {inner}: {detail}", "link", index)
        return PanelProblem(f"{names[index]}: {detail}", _note_of(inner), index)
    return PanelProblem(f"{where}: {detail}" if where else detail, _note_of(where))

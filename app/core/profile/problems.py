"""Every problem of a profile file that cannot be run, not only the first.

The core's readers stop at the first error (`read_profile_file`, `resolve_jobs`): that is
what a program needs. A person fixing a file by hand wants all of them at once, so the
window's Open and the command line's `run` check the file again here, the profile's own
fields once and then one job at a time, and name every field that is wrong (all the
structure errors of a job, then its first meaning error: a job whose scheme is unknown
cannot be checked further).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from app.core.fileio import FileReadError, read_limited
from app.core.profile.files import profile_structure_problem, validation_problems
from app.core.profile.model import MAX_PROFILE_BYTES, ProfileError

__all__ = ["MAX_LISTED", "all_problems", "profile_problems"]

#: More than this is listed as "and N more".
MAX_LISTED = 12
_STANDIN_JOB = {"scheme": "sha256"}


def _line(exc: ProfileError) -> str:
    return f"{exc.field}: {exc.detail}" if exc.field else exc.detail


def _job_problems(index: int, job: Any) -> list[str]:
    from app.core.profile.files import parse_profile
    from app.core.profile.resolve import resolve_jobs  # loads the scheme registry

    def renamed(exc: ProfileError) -> str:
        field = re.sub(r"^jobs\[0\]", f"jobs[{index}]", exc.field or f"jobs[{index}]")
        return f"{field}: {exc.detail}"

    structure = validation_problems({"name": "check", "jobs": [job]})
    if structure:
        return [renamed(exc) for exc in structure]
    try:
        # has_remote: a remote job is checked as if its receiver were given; whether one
        # was is the command's business (its own error says it, first).
        resolve_jobs(parse_profile({"name": "check", "jobs": [job]}), has_remote=True)
    except ProfileError as exc:
        return [renamed(exc)]
    return []


def profile_problems(path: Path) -> list[str]:
    """One line per problem (field: what is wrong); [] when the file is not JSON at all
    (its syntax error, from the core, is then the only thing to say)."""
    try:
        text = read_limited(path, MAX_PROFILE_BYTES, "a profile").decode("utf-8")
        if profile_structure_problem(text) is not None:
            return []  # the core's refusal says it; parsing would cost what the bound prevents
        data = json.loads(text)
    except (FileReadError, OSError, UnicodeDecodeError, ValueError, RecursionError):
        return []
    if not isinstance(data, dict):
        return []
    problems = [_line(exc) for exc in validation_problems({**data, "jobs": [_STANDIN_JOB]})]
    jobs = data.get("jobs")
    if isinstance(jobs, list):
        for index, job in enumerate(jobs):
            problems += _job_problems(index, job)
    if len(problems) > MAX_LISTED:
        problems = problems[:MAX_LISTED] + [f"and {len(problems) - MAX_LISTED} more"]
    return problems


def all_problems(exc: ProfileError, path: Path | None) -> list[str]:
    """What to say about a profile the core refused with `exc`: every problem the file has,
    in the file's order, each once. The core's error is always among them: when the file's
    check did not find it (it came from the command's overrides, or a receiver was not
    given), it comes first. Without a file (a preset, a name that is none), the error alone."""
    first = _line(exc)
    found = profile_problems(path) if path is not None else []
    return found if first in found else [first, *found]

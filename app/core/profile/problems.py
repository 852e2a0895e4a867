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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from app.core.fileio import FileReadError, read_limited
from app.core.profile.files import profile_structure_problem, validation_problems
from app.core.settings.profile import MAX_PROFILE_BYTES, Profile, ProfileError

__all__ = ["MAX_LISTED", "all_problems", "profile_problems"]

#: More than this is listed as "and N more".
MAX_LISTED = 12
_STANDIN_JOB = {"scheme": "sha256"}


def _line(exc: ProfileError) -> str:
    return f"{exc.field}: {exc.detail}" if exc.field else exc.detail


#: How a command changes a profile before running it (`run --reduced --link lte`).
Edit = Callable[[Profile], Profile]


def _job_problems(index: int, job: Any, edit: Edit | None, has_remote: bool) -> list[str]:
    from app.core.profile.edits import blame_options
    from app.core.profile.files import parse_profile
    from app.core.profile.resolve import resolve_jobs  # loads the scheme registry

    def renamed(exc: ProfileError) -> str:
        field = re.sub(r"^jobs\[0\]", f"jobs[{index}]", exc.field or f"jobs[{index}]")
        return f"{field}: {exc.detail}"

    structure = validation_problems({"name": "check", "jobs": [job]})
    if structure:
        return [renamed(exc) for exc in structure]
    try:
        written = edited = parse_profile({"name": "check", "jobs": [job]})
        if edit is not None:
            try:
                edited = edit(written)
            except ProfileError:
                pass  # the option itself is wrong (the command's own error says it): the job as written
        resolve_jobs(edited, has_remote=has_remote)
    except ProfileError as exc:  # a value an option set names the option ("--link.loss_percent")
        return [renamed(blame_options(exc, written, edited))]
    return []


def profile_problems(path: Path, edit: Edit | None = None, has_remote: bool = True) -> list[str]:
    """One line per problem (field: what is wrong); [] when the file is not JSON at all
    (its syntax error, from the core, is then the only thing to say). Each job is checked
    as `edit` changes it (a command's options), with or without a receiver for remote jobs
    (the window: as if one were given, since it asks for one when a run starts)."""
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
            problems += _job_problems(index, job, edit, has_remote)
    problems = list(dict.fromkeys(problems))  # an option's error is every job's: once
    if len(problems) > MAX_LISTED:
        problems = problems[:MAX_LISTED] + [f"and {len(problems) - MAX_LISTED} more"]
    return problems


def all_problems(exc: ProfileError, path: Path | None, edit: Edit | None = None, has_remote: bool = True) -> list[str]:
    """What to say about a profile the core refused with `exc`: every problem the file has,
    in the file's order, each once. The core's error is always among them: when the file's
    check did not find it (it came from the command's overrides, or a receiver was not
    given), it comes first. Without a file (a preset, a name that is none), the error alone."""
    first = _line(exc)
    found = profile_problems(path, edit, has_remote) if path is not None else []
    return found if first in found else [first, *found]

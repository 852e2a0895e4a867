"""Every problem of a profile file that cannot be opened, not only the first.

The core stops at the first error (`read_profile_file`); for the window's dialog the
file is checked again one job at a time, so a profile with three bad jobs names all
three. The core's own error (with the file's field names) stays the first line.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from app.core.fileio import FileReadError, read_limited
from app.core.profile.files import parse_profile, profile_structure_problem
from app.core.profile.model import MAX_PROFILE_BYTES, ProfileError
from app.core.profile.resolve import resolve_jobs

#: More than this is listed as "and N more".
MAX_LISTED = 12
_STANDIN_JOB = {"scheme": "sha256"}


def _job_problem(index: int, job: Any) -> str | None:
    try:
        resolve_jobs(parse_profile({"name": "check", "jobs": [job]}), has_remote=True)
    except ProfileError as exc:
        field = re.sub(r"^jobs\[0\]", f"jobs[{index}]", exc.field or f"jobs[{index}]")
        return f"{field}: {exc.detail}"
    return None


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
    problems = []
    try:
        parse_profile({**data, "jobs": [_STANDIN_JOB]})
    except ProfileError as exc:
        problems.append(f"{exc.field}: {exc.detail}" if exc.field else exc.detail)
    jobs = data.get("jobs")
    if isinstance(jobs, list):
        problems += [p for p in (_job_problem(i, job) for i, job in enumerate(jobs)) if p]
    if len(problems) > MAX_LISTED:
        problems = problems[:MAX_LISTED] + [f"and {len(problems) - MAX_LISTED} more"]
    return problems


def open_advice(exc: ProfileError) -> str:
    """What to do about a profile that cannot be opened, in words that fit the error."""
    if exc.field:
        return "Fix the fields named above in the file, or open another file."
    if "JSON" in exc.detail or "UTF-8" in exc.detail:
        return (
            "The file is not a readable profile: fix it in a text editor at the place named above, "
            "or open another file."
        )
    return "Choose another file."

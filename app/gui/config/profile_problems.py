"""What the window says about a profile file that cannot be opened: every problem of it
(`app.core.profile.problems`, shared with the command line's `run`) and what to do."""

from __future__ import annotations

from app.core.profile.problems import all_problems, profile_problems
from app.core.settings.profile import ProfileError

__all__ = ["all_problems", "open_advice", "profile_problems"]


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

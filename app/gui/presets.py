"""The Presets menu: each preset with what it measures and how long it took here.

The duration is the last finished run of that profile in the results store (this
machine's own figure); a preset never run here says how many jobs and samples it has
instead of guessing. `LONG_RUN_S` is where the window asks before starting a run.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from app.core.profile import Profile, ProfileError, load_profile, preset_names
from app.core.store import Store, StoreError
from app.gui.words import duration, plural

#: A run expected to take longer than this asks first.
LONG_RUN_S = 5 * 60
#: Characters of a description shown in the menu (the tooltip has all of it).
MENU_CHARS = 70


@dataclass(frozen=True)
class PresetEntry:
    name: str
    description: str
    measured_jobs: int  # one per job and message size
    samples: int
    last_seconds: float | None  # the last finished run here, if any

    def expected(self) -> str:
        if self.last_seconds is not None:
            return f"took {duration(self.last_seconds)} here last time"
        return f"{plural(self.measured_jobs, 'job')}, not run here yet"

    def menu_text(self) -> str:
        first = self.description.split(": ")[0].split(". ")[0]
        if len(first) > MENU_CHARS:
            first = first[: MENU_CHARS - 1].rstrip() + "…"
        return f"{self.name} — {first}\t{self.expected()}"


def measured(profile: Profile) -> tuple[int, int]:
    """(jobs, samples) as the runner counts them: one job per message size."""
    jobs = samples = 0
    for job in profile.jobs:
        sizes = len(job.message_sizes or [1])
        jobs += sizes
        samples += sizes * job.samples
    return jobs, samples


def last_durations(store_path: Path) -> dict[str, float]:
    """Seconds of the most recent finished run of each profile name in the store."""
    out: dict[str, float] = {}
    try:
        with Store(store_path) as store:
            runs = store.list_runs()
    except (StoreError, OSError):
        return out
    for run in runs:  # newest first
        if run.status != "finished" or not run.finished or run.name in out:
            continue
        try:
            seconds = (datetime.fromisoformat(run.finished) - datetime.fromisoformat(run.started)).total_seconds()
        except ValueError:
            continue
        if seconds >= 0:
            out[run.name] = seconds
    return out


def preset_entries(store_path: Path) -> list[PresetEntry]:
    durations = last_durations(store_path) if store_path.exists() else {}
    entries = []
    for name in preset_names():
        try:
            profile = load_profile(name)
        except ProfileError:
            continue
        jobs, samples = measured(profile)
        entries.append(PresetEntry(name, profile.description, jobs, samples, durations.get(profile.name)))
    return entries


def long_run_warning(profile_name: str, store_path: Path) -> str | None:
    """The question to ask before a run that took more than LONG_RUN_S here, else None."""
    seconds = last_durations(store_path).get(profile_name) if store_path.exists() else None
    if seconds is None or seconds < LONG_RUN_S:
        return None
    return (f"The last run of {profile_name} on this machine took {duration(seconds)}. "
            "The window stays usable meanwhile, and Stop ends it. Start it now?")

"""The Presets menu: each preset with what it measures and how long it will take here.

The time is the run estimate (app.core.run.estimate): each job priced from what it will
do (samples, batches, the cost of one operation here, key generations, round trips over
its link, load steps), as a range ("12–15 min", "about 9 s"). The last finished run of
the preset on this machine, when there is one, is said beside it in the tooltip.
`long_run_warning` is the question asked before a run whose estimate's upper end passes
five minutes (app.core.run.estimate.LONG_RUN_S).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from app.core.profile.files import load_profile, preset_names
from app.core.profile.resolve import resolve_jobs
from app.core.run.estimate import LONG_RUN_S, RunEstimate, estimate_run
from app.core.settings.profile import Profile, ProfileError
from app.core.store.store import Store, StoreError
from app.core.store.target import StoreLike, store_target
from app.core.vocab import RunStatus
from app.gui.words import duration, plural

__all__ = ["LONG_RUN_S", "PresetEntry", "long_run_warning", "preset_entries", "run_estimate"]

#: Characters of a description shown in the menu (the tooltip has all of it).
MENU_CHARS = 48


@dataclass(frozen=True)
class PresetEntry:
    name: str
    description: str
    measured_jobs: int  # one per job and message size
    samples: int
    last_seconds: float | None  # the last finished run here, if any
    estimate: RunEstimate | None = None  # None: the preset cannot be resolved here

    def expected(self) -> str:
        """The menu's time: the estimate's range, never a bare "over"."""
        if self.estimate is None:
            return f"{plural(self.measured_jobs, 'job')}, no estimate here"
        return f"{self.estimate.text()} here (estimated)"

    def tooltip_time(self) -> str:
        said = self.expected()
        if self.last_seconds is not None:
            said += f"; took {duration(self.last_seconds)} here last time"
        return said

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


def last_durations(store_path: StoreLike) -> dict[str, float]:
    """Seconds of the most recent finished run of each profile name in the store."""
    out: dict[str, float] = {}
    try:
        with Store(store_path) as store:
            runs = store.list_runs()
    except StoreError:
        return out
    for run in runs:  # newest first
        if run.status != RunStatus.FINISHED or not run.finished or run.name in out:
            continue
        try:
            seconds = (datetime.fromisoformat(run.finished) - datetime.fromisoformat(run.started)).total_seconds()
        except ValueError:
            continue
        if seconds >= 0:
            out[run.name] = seconds
    return out


def run_estimate(profile: Profile, *, probe: bool = True) -> RunEstimate | None:
    """The profile's run estimate, None when its jobs cannot be resolved here."""
    try:
        return estimate_run(resolve_jobs(profile, has_remote=True), probe=probe)
    except ProfileError:
        return None


def preset_entries(store_path: StoreLike) -> list[PresetEntry]:
    target = store_target(store_path)
    # A shared store's runs come from other machines, whose durations say nothing of this
    # one's; and the menu must not wait on a server. Only a local file is read.
    local = target.path is not None and target.path.exists()
    durations = last_durations(target) if local else {}
    entries = []
    for name in preset_names():
        try:
            profile = load_profile(name)
        except ProfileError:
            continue
        jobs, samples = measured(profile)
        # probe=False: every preset's schemes are in the catalogue; the menu never waits.
        guess = run_estimate(profile, probe=False)
        # The runner's count: one per job, message size and link (a sweep over 7 links is 7).
        jobs = len(guess.jobs) if guess is not None else jobs
        entries.append(PresetEntry(name, profile.description, jobs, samples, durations.get(profile.name), guess))
    return entries


def long_run_warning(profile: Profile, guess: RunEstimate | None = None) -> str | None:
    """The question to ask before a run whose estimate's upper end passes LONG_RUN_S, else
    None. `guess`: the estimate already made for it."""
    guess = guess if guess is not None else run_estimate(profile)
    if guess is None or not guess.long:
        return None
    busy = f" ({guess.busy_note()})" if guess.busy_note() else ""
    return (
        f"{profile.name}, {plural(len(guess.jobs), 'job')}, is estimated to take {guess.text()} on this "
        f"machine{busy}. The window stays usable meanwhile, and Stop ends it. Start it now?"
    )

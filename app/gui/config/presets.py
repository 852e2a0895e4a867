"""The Presets menu: each preset with what it measures and how long it took here.

The duration is the last finished run of that profile in the results store (this
machine's own figure); for a profile never run here, an estimate from the same jobs
(scheme, backend, parameters, mode, size) in recent runs, scaled by sample counts,
says how many of its jobs it rests on. With nothing to go on it says how many jobs
and samples the profile has instead of guessing. `LONG_RUN_S` is where the window asks
before starting a run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from app.core.profile.files import load_profile, preset_names
from app.core.profile.model import Profile, ProfileError
from app.core.profile.resolve import resolve_jobs
from app.core.results.model import RunResult
from app.core.results.store import Store, StoreError
from app.core.vocab import JobStatus, RunStatus
from app.gui.words import duration, plural

#: Recent finished runs whose jobs feed the estimates.
ESTIMATE_RUNS = 8
_JobKey = tuple[str, str, str, str, int]
#: Per stored run (immutable once finished): job key -> (seconds, samples).
_run_jobs_cache: dict[str, dict[_JobKey, tuple[float, int]]] = {}

#: A run expected to take longer than this asks first.
LONG_RUN_S = 5 * 60
#: Characters of a description shown in the menu (the tooltip has all of it).
MENU_CHARS = 48


@dataclass(frozen=True)
class PresetEntry:
    name: str
    description: str
    measured_jobs: int  # one per job and message size
    samples: int
    last_seconds: float | None  # the last finished run here, if any
    estimate: tuple[float, int] | None = None  # (seconds, jobs it rests on) from earlier runs

    def expected(self) -> str:
        if self.last_seconds is not None:
            return f"took {duration(self.last_seconds)} here last time"
        if self.estimate is not None:
            seconds, known = self.estimate
            if known == self.measured_jobs:
                return f"about {duration(seconds)} here (estimated)"
            return f"over {duration(seconds)} here ({known} of {plural(self.measured_jobs, 'job')} measured before)"
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


def _iso_seconds(text: str | None) -> float | None:
    try:
        return datetime.fromisoformat(text).timestamp() if text else None
    except ValueError:
        return None


def _run_jobs(run: RunResult) -> dict[_JobKey, tuple[float, int]]:
    """Each ok job's time: from the previous job's end (or the run's start) to its own
    end, jobs running one after the other; and its sample count."""
    out: dict[_JobKey, tuple[float, int]] = {}
    previous = _iso_seconds(run.started)
    for job in sorted(run.jobs, key=lambda j: j.finished or ""):
        end = _iso_seconds(job.finished)
        if end is None or previous is None:
            continue
        seconds, previous = end - previous, end
        samples = max((m.stats.n for m in job.metrics.values()), default=0)
        if job.status == JobStatus.OK and seconds >= 0 and samples:
            out[_key(job.scheme, job.backend, job.params, job.mode, job.message_size)] = (seconds, samples)
    return out


def _key(scheme: str, backend: str, params: object, mode: str, size: int) -> _JobKey:
    return scheme, backend, json.dumps(params, sort_keys=True, default=str), mode, size


def measured_jobs(store_path: Path) -> dict[_JobKey, tuple[float, int]]:
    """Job times of the most recent finished runs (the newest wins)."""
    out: dict[_JobKey, tuple[float, int]] = {}
    if not store_path.exists():
        return out
    try:
        with Store(store_path) as store:
            runs = [r for r in store.list_runs() if r.status == RunStatus.FINISHED][:ESTIMATE_RUNS]
            for summary in reversed(runs):
                jobs = _run_jobs_cache.get(summary.id)
                if jobs is None:
                    jobs = _run_jobs_cache[summary.id] = _run_jobs(store.load_run(summary.id))
                out.update(jobs)
    except StoreError:  # RunNotFound too: a run deleted meanwhile
        return out
    return out


def estimate(profile: Profile, known: dict[_JobKey, tuple[float, int]]) -> tuple[float, int] | None:
    """(seconds, jobs it rests on) for the profile's jobs measured before, scaled by
    their sample counts; None when none was."""
    try:
        jobs = resolve_jobs(profile, has_remote=True)
    except ProfileError:
        return None
    seconds, found = 0.0, 0
    for job in jobs:
        for size in job.message_sizes:
            hit = known.get(_key(job.scheme, job.backend, job.params, job.mode, size))
            if hit is not None:
                seconds += hit[0] * max(job.samples + job.warmup, 1) / max(hit[1], 1)
                found += 1
    return (seconds, found) if found else None


def preset_entries(store_path: Path) -> list[PresetEntry]:
    durations = last_durations(store_path) if store_path.exists() else {}
    known = measured_jobs(store_path)
    entries = []
    for name in preset_names():
        try:
            profile = load_profile(name)
        except ProfileError:
            continue
        jobs, samples = measured(profile)
        last = durations.get(profile.name)
        entries.append(
            PresetEntry(
                name, profile.description, jobs, samples, last, None if last is not None else estimate(profile, known)
            )
        )
    return entries


def long_run_warning(profile: Profile, store_path: Path) -> str | None:
    """The question to ask before a run expected to take more than LONG_RUN_S here (its
    last run, else the estimate from the same jobs in earlier runs), else None."""
    seconds = last_durations(store_path).get(profile.name) if store_path.exists() else None
    if seconds is not None:
        if seconds < LONG_RUN_S:
            return None
        said = f"The last run of {profile.name} on this machine took {duration(seconds)}."
    else:
        guess = estimate(profile, measured_jobs(store_path))
        if guess is None or guess[0] < LONG_RUN_S:
            return None
        said = (
            f"Estimated from earlier runs of the same jobs, {profile.name} takes over "
            f"{duration(guess[0])} on this machine."
        )
    return f"{said} The window stays usable meanwhile, and Stop ends it. Start it now?"

"""`cryptobench store copy --to URL`: every run of one store into another (a local history
into a shared PostgreSQL store, or back).

Idempotent as `import` is (`importing.look_up`): a run already in the target, by id
with the same content or by content under another id, is found and skipped, so a copy
stopped halfway is finished by running it again; a run the target holds only in part (its
writer lost the store mid-run) is completed. Each run goes in its own transaction
(`Store.add_run`): all of it or none. What is copied is the run as the store reads it
back, so its results JSON is byte-identical in both stores. Two kinds of run stay
behind, named: one still being written (its process holds the run's lock), and one with
damaged rows, whose placeholders must not be stored as if they were results.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from app.core.store.importing import Duplicate, look_up
from app.core.store.store import RunNotFound, Store
from app.core.vocab import RunStatus


@dataclass
class CopyOutcome:
    copied: list[str] = field(default_factory=list)
    #: (run id, how it was found in the target, the target's id for it)
    present: list[tuple[str, Duplicate, str]] = field(default_factory=list)
    #: (run id, why it was left behind)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def copy_runs(source: Store, target: Store, on_run: Callable[[str, str], None] | None = None) -> CopyOutcome:
    """Copy every run of `source` into `target`, oldest first; `on_run(run_id, what)` hears each.
    StoreError (RunIdTaken for an id stored there with other content) stops the copy: the runs
    copied so far stay, and running it again skips them."""
    outcome = CopyOutcome()
    for summary in reversed(source.list_runs()):
        try:
            run = source.load_run(summary.id)
        except RunNotFound:  # deleted meanwhile
            continue
        if run.status == RunStatus.RUNNING:
            reason = "still being written (copy it once it finishes)"
            outcome.skipped.append((run.id, reason))
        elif run.damaged:
            reason = f"{len(run.damaged)} damaged row(s) ({run.damaged[0]}); `cryptobench store` names them"
            outcome.skipped.append((run.id, reason))
        elif (found := look_up(target, run)) is not None and found.partial is not None:
            target.add_run(run, replacing=True)
            outcome.copied.append(run.id)
            reason = f"completed (the target held {len(found.partial.jobs)} of its {len(run.jobs)} jobs)"
        elif found is not None and found.duplicate is not None and found.existing_id is not None:
            outcome.present.append((run.id, found.duplicate, found.existing_id))
            shown = "" if found.existing_id == run.id else " as " + found.existing_id
            reason = f"already there ({found.duplicate}{shown})"
        else:
            target.add_run(run)
            outcome.copied.append(run.id)
            reason = "copied"
        if on_run is not None:
            on_run(run.id, reason)
    return outcome

"""One job's history: its median, with the 95 % interval, in every stored run that has it.

A job of one run is "the same" as a job of another when `compare.match_key` says so
(scheme, backend, parameters, mode, message size, link, placement). Each point carries
where it ran (the machine) and the versions of the libraries that did the job's work
(`relevant_versions`: a cryptography job is its cryptography release and the OpenSSL it
uses; a pure-Python one the interpreter), and what changed since the previous point, so
a step in the trend can be read beside its likely cause. Qt-free: the window's trend view
(app/gui/history/trend_view.py) draws it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.core.analysis.compare import MatchKey
from app.core.records.recorded import RecordedEnvironment, RecordedLibrary
from app.core.store.columns import identity_text
from app.core.store.store import Store, StoredJob
from app.core.vocab import JobStatus

__all__ = [
    "TrendPoint",
    "job_history",
    "job_trend",
    "machine_label",
    "relevant_versions",
    "trend_metrics",
    "trend_points",
]

#: Libraries whose version (and, for cryptography, OpenSSL) decides a backend's speed.
#: tinyec and "python" compute in pure Python, so the interpreter's version counts;
#: tinyec's messages are sealed with pycryptodome's AES-GCM (schemes/key_agreement.py).
_BACKEND_LIBRARIES: dict[str, tuple[str, ...]] = {
    "cryptography": ("cryptography",),
    "pycryptodome": ("pycryptodome",),
    "tinyec": ("tinyec", "pycryptodome", "Python"),
    "python": ("Python",),
}


@dataclass(frozen=True)
class TrendPoint:
    """One run's figure for the job: `median` and its 95 % interval (None below 6 samples)
    in `unit`, with the conditions it was measured under."""

    run_id: str
    job_id: str
    started: str
    machine: str
    versions: str
    metric: str
    median: float
    ci95_low: float | None
    ci95_high: float | None
    unit: str
    n: int
    #: What differs from the previous point ("cryptography 41.0.7 → 42.0.1", "machine: a → b");
    #: empty for the first point and for an unchanged one.
    changed_from_previous: tuple[str, ...] = ()
    #: What sets the point's run apart from a full run of its profile ("reduced",
    #: "--samples 3"): marked wherever the trend is shown, never mixed in silently.
    marks: tuple[str, ...] = ()


def relevant_versions(environment: dict[str, Any], backend: str) -> list[tuple[str, str]]:
    """(name, version) of what does a `backend` job's work, as the run's environment
    recorded it ("unknown" where it did not). An unknown backend is its own library's
    version when the environment lists one."""
    names = _BACKEND_LIBRARIES.get(backend, (backend,))
    recorded = RecordedEnvironment.from_dict(environment)
    found: list[tuple[str, str]] = []
    for name in names:
        if name == "Python":
            found.append(("Python", recorded.python_version or "unknown"))
            continue
        library = recorded.libraries.get(name, RecordedLibrary(None))
        found.append((name, library.version or "unknown"))
        if name == "cryptography":
            # e.g. "OpenSSL 3.0.13 30 Jan 2024": the first two words name it.
            openssl = library.openssl
            found.append(
                ("OpenSSL", " ".join(openssl.split()[1:2]) if openssl and " " in openssl else openssl or "unknown")
            )
    return found


def _versions_text(versions: list[tuple[str, str]]) -> str:
    return ", ".join(f"{name} {version}" for name, version in versions)


def machine_label(environment: dict[str, Any]) -> str:
    """The machine a run ran on, as its environment names it: the host name, else the
    CPU model and OS."""
    return RecordedEnvironment.from_dict(environment).machine_label


def _machine_identity(environment: dict[str, Any]) -> tuple[str, str | None]:
    # Two machines may share a host name ("raspberrypi", "localhost"): the CPU tells them apart.
    recorded = RecordedEnvironment.from_dict(environment)
    return recorded.machine_label, recorded.cpu_model


class _Environments:
    """What a trend reads of each environment (its machine; the versions of each backend's
    libraries, as pairs and as text), worked out once per environment: the rows of runs on
    one machine with one set of libraries share one dict (`Store.jobs_matching`), and a trend
    over 10,000 runs must not parse it 10,000 times."""

    def __init__(self) -> None:
        # id(environment) -> (the dict itself, kept so that its id stays its own; the machine;
        # backend -> (versions, their text)).
        self._seen: dict[int, tuple[dict[str, Any], tuple[str, str | None], dict[str, Any]]] = {}
        #: (id before, id after, backend) -> what changed between two environments seen here.
        self.changes: dict[tuple[int, int, str], tuple[str, ...]] = {}
        self._shown: dict[tuple[int, str], tuple[str, str]] = {}

    def _of(self, environment: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, str | None], dict[str, Any]]:
        found = self._seen.get(id(environment))
        if found is None:
            found = self._seen[id(environment)] = (environment, _machine_identity(environment), {})
        return found

    def machine(self, environment: dict[str, Any]) -> tuple[str, str | None]:
        return self._of(environment)[1]

    def shown(self, environment: dict[str, Any], backend: str) -> tuple[str, str]:
        """(machine label, the backend's versions as text): what a point shows, in one lookup."""
        key = (id(environment), backend)
        found = self._shown.get(key)
        if found is None:
            found = self._shown[key] = (self.machine(environment)[0], self.versions(environment, backend)[1])
        return found

    def versions(self, environment: dict[str, Any], backend: str) -> tuple[list[tuple[str, str]], str]:
        by_backend = self._of(environment)[2]
        found = by_backend.get(backend)
        if found is None:
            versions = relevant_versions(environment, backend)
            found = by_backend[backend] = (versions, _versions_text(versions))
        return found


def _changes(before: StoredJob, after: StoredJob, backend: str, seen: _Environments | None = None) -> tuple[str, ...]:
    if before.environment is after.environment:  # one machine, the same libraries: nothing changed
        return ()
    if seen is None:
        return _changes_between(before.environment, after.environment, backend, _Environments())
    key = (id(before.environment), id(after.environment), backend)  # both kept alive by `seen`
    found = seen.changes.get(key)
    if found is None:
        found = seen.changes[key] = _changes_between(before.environment, after.environment, backend, seen)
    return found


def _changes_between(
    before: dict[str, Any], after: dict[str, Any], backend: str, seen: _Environments
) -> tuple[str, ...]:
    changes: list[str] = []
    old_machine, new_machine = seen.machine(before), seen.machine(after)
    if old_machine != new_machine:
        if old_machine[0] != new_machine[0]:
            changes.append(f"machine: {old_machine[0]} → {new_machine[0]}")
        else:
            changes.append(
                f"machine: {old_machine[0]} with CPU {old_machine[1] or 'unknown'} → {new_machine[1] or 'unknown'}"
            )
    old_versions = dict(seen.versions(before, backend)[0])
    for name, version in seen.versions(after, backend)[0]:
        if old_versions.get(name) != version:
            changes.append(f"{name} {old_versions.get(name, 'unknown')} → {version}")
    return tuple(changes)


def job_history(store: Store, key: MatchKey) -> list[StoredJob]:
    """Every stored job whose `match_key` is `key`, in the order the runs started (a run
    with the job twice gives both, in job order). The store picks them by the key itself,
    kept and indexed beside each job row (`Store.jobs_matching`), and hands over each
    job's figures without reading its JSON."""
    return store.jobs_matching(identity_text(key))


def _usable(row: StoredJob, metric: str) -> bool:
    figure = row.metrics.get(metric)
    return row.status == JobStatus.OK and figure is not None and figure.n > 0


def trend_metrics(history: Sequence[StoredJob]) -> list[str]:
    """Metric names measured in at least one finished job of `history`, most common first
    (first seen first among equals)."""
    counts: dict[str, int] = {}
    for row in history:
        for name in row.metrics:
            if _usable(row, name):
                counts[name] = counts.get(name, 0) + 1
    return sorted(counts, key=lambda name: -counts[name])


def trend_points(history: Sequence[StoredJob], metric: str) -> list[TrendPoint]:
    """The points of `metric` over `history` (see `job_history`). A job that failed or lacks
    the metric gives no point; changes are stated against the previous point drawn."""
    points: list[TrendPoint] = []
    previous: StoredJob | None = None
    seen = _Environments()
    ok = JobStatus.OK
    for row in history:
        figure = row.metrics.get(metric)
        if figure is None or figure.n <= 0 or row.status != ok:  # `_usable`, inlined: one per stored run
            continue
        machine, versions = seen.shown(row.environment, row.backend)
        points.append(
            TrendPoint(
                row.run_id,
                row.job_id,
                row.run_started,
                machine,
                versions,
                metric,
                figure.median,
                figure.ci95_low,
                figure.ci95_high,
                figure.unit,
                figure.n,
                _changes(previous, row, row.backend, seen) if previous is not None else (),
                row.run_marks,
            )
        )
        previous = row
    return points


def job_trend(store: Store, key: MatchKey, metric: str) -> list[TrendPoint]:
    """`metric`'s median with its interval across every stored run that has the job `key`."""
    return trend_points(job_history(store, key), metric)

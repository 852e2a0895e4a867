"""A run's recorded environment and profile, read as typed views.

`RunResult.environment` and `RunResult.profile` hold the JSON they were recorded as, on
this machine or another, by this version or an older one (an imported file, a store
row): any fact may be missing, or of another type than this version writes. The faces
read them through these views, so each fact is read one way everywhere (a string, a
number or None, never a KeyError, never a dict where text was expected) and the
layers above the core see names, not `.get("hostname")` chains.

The dicts stay the results contract (docs/ARCHITECTURE.md, "Results format"): the views
are built from them on demand and never written back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


def text_of(value: Any) -> str | None:
    """A recorded fact as text: a string or a number as written, None for anything else
    (missing, empty, a boolean, an object where text was expected)."""
    if isinstance(value, bool) or value == "":
        return None
    return str(value) if isinstance(value, str | int | float) else None


def count_of(value: Any) -> int | None:
    """A recorded whole number (cores, bytes, workers), None when it is not one."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _object(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True)
class RecordedLibrary:
    """One library's entry: its version and, for `cryptography`, the OpenSSL it uses."""

    version: str | None
    openssl: str | None = None


@dataclass(frozen=True)
class RecordedEnvironment:
    """The facts of a run's environment that the faces show, each None when not recorded."""

    hostname: str | None = None
    app_version: str | None = None
    cpu_model: str | None = None
    logical_cores: int | None = None
    physical_cores: int | None = None
    governors: tuple[str, ...] = ()
    os_pretty_name: str | None = None
    os_platform: str | None = None
    python_version: str | None = None
    python_implementation: str | None = None
    libraries: Mapping[str, RecordedLibrary] = field(default_factory=dict)
    #: Whether the machine offered netem (None: not recorded), and why not.
    netem: bool | None = None
    netem_reason: str | None = None
    #: The pre-flight's facts as recorded (`machine.preflight.facts_to_dict`), each an object.
    stability_facts: tuple[Mapping[str, Any], ...] = ()
    parallel_workers: int | None = None

    @classmethod
    def from_dict(cls, environment: Any) -> RecordedEnvironment:
        env = _object(environment)
        cpu, os_info, python = _object(env.get("cpu")), _object(env.get("os")), _object(env.get("python"))
        emulation = env.get("link_emulation")
        governors = cpu.get("governors")
        facts = _object(env.get("stability")).get("facts")
        return cls(
            hostname=text_of(env.get("hostname")),
            app_version=text_of(env.get("app_version")),
            cpu_model=text_of(cpu.get("model")),
            logical_cores=count_of(cpu.get("logical_cores")),
            physical_cores=count_of(cpu.get("physical_cores")),
            governors=tuple(g for g in governors if isinstance(g, str)) if isinstance(governors, list) else (),
            os_pretty_name=text_of(os_info.get("pretty_name")),
            os_platform=text_of(os_info.get("platform")),
            python_version=text_of(python.get("version")),
            python_implementation=text_of(python.get("implementation")),
            libraries={
                str(name): RecordedLibrary(
                    text_of(_object(entry).get("version")), text_of(_object(entry).get("openssl"))
                )
                for name, entry in _object(env.get("libraries")).items()
            },
            netem=emulation.get("netem")
            if isinstance(emulation, Mapping) and isinstance(emulation.get("netem"), bool)
            else None,
            netem_reason=text_of(emulation.get("netem_reason")) if isinstance(emulation, Mapping) else None,
            stability_facts=tuple(f for f in facts if isinstance(f, Mapping)) if isinstance(facts, list) else (),
            parallel_workers=count_of(env.get("parallel_workers")),
        )

    @property
    def os_name(self) -> str | None:
        """The OS as a person names it ("Debian GNU/Linux 12"), else the platform string."""
        return self.os_pretty_name or self.os_platform

    @property
    def machine_label(self) -> str:
        """The machine a run ran on: the host name, else the CPU model and the OS."""
        if self.hostname:
            return self.hostname
        parts = [part for part in (self.cpu_model, self.os_pretty_name or self.os_platform) if part]
        return " · ".join(parts) if parts else "unknown machine"


@dataclass(frozen=True)
class RecordedProfile:
    """The facts of a run's profile (as run) that the faces read."""

    name: str = ""
    description: str = ""
    experiment: str | None = None
    #: The run was reduced (`--reduced`, the window's Quick check): its numbers are not for
    #: comparison. Runs from before the flag was recorded say so in their name only.
    reduced: bool = False
    #: Settings the command line changed on every job, in the order given
    #: ((`--samples`, `3`), ...): the run is not the profile it names.
    overrides: tuple[tuple[str, str], ...] = ()
    #: The profile's jobs as recorded, each an object (anything else left out); None when
    #: the profile recorded no list of jobs.
    jobs: tuple[Mapping[str, Any], ...] | None = None

    @classmethod
    def from_dict(cls, profile: Any) -> RecordedProfile:
        data = _object(profile)
        jobs = data.get("jobs")
        name = text_of(data.get("name")) or ""
        overrides = data.get("overrides")
        return cls(
            name=name,
            description=(text_of(data.get("description")) or "").strip(),
            experiment=text_of(data.get("experiment")),
            reduced=data.get("reduced") is True or name.endswith("(reduced)"),
            overrides=tuple((str(option), str(value)) for option, value in overrides.items())
            if isinstance(overrides, Mapping)
            else (),
            jobs=tuple(job for job in jobs if isinstance(job, Mapping)) if isinstance(jobs, list) else None,
        )

    @property
    def marks(self) -> tuple[str, ...]:
        """What sets the run apart from a full run of its profile, for every list and title
        that names it: "reduced", "--samples 3" (`app.core.analysis.evidence` reads them)."""
        return (("reduced",) if self.reduced else ()) + tuple(f"{option} {value}" for option, value in self.overrides)

    @property
    def marked_name(self) -> str:
        """The name with what sets the run apart from a full run of its profile, once: a
        name that carries a mark already (the CLI writes "quick (reduced) (--samples 3)")
        keeps it, one that lacks it (a file from elsewhere) gets it."""
        name = self.name or "unnamed"
        missing = [mark for mark in self.marks if f"({mark}" not in name and f"; {mark}" not in name]
        return f"{name} ({'; '.join(missing)})" if missing else name

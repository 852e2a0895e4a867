"""One recorded run of the whole self-test, shared by the tests of app.core.selftest.

`record_run` runs every check once and notes which vectors each asked for, which vector
files were read and which schemes each check created through the registry;
tests/core/selftest/conftest.py serves it as the session-scoped fixture `run` (one run per worker).
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import pytest

from app.core import selftest
from app.core.schemes import registry
from app.core.selftest import vectors
from app.core.selftest.framework import SelftestCheck, SelftestResult


@dataclasses.dataclass(frozen=True)
class SelftestRun:
    """What one run of the whole self-test returned and touched."""

    results: list[SelftestResult]
    seconds: float
    vectors_used: frozenset[tuple[str, str, str]]  # (file, section, vector)
    files_read: tuple[str, ...]
    created: dict[str, frozenset[tuple[str, str]]]  # check name -> (scheme id, backend) it created
    readers: dict[str, frozenset[str]]  # vector file -> the checks that asked for one of its vectors


def record_run() -> SelftestRun:
    """One run of the whole self-test, noting which vectors it asked for, which files it read
    and which schemes each check created through the registry."""
    used: set[tuple[str, str, str]] = set()
    readers: dict[str, set[str]] = {}
    files_read: list[str] = []
    created: dict[str, set[tuple[str, str]]] = {}
    running = [""]
    get_vector, file_path = vectors.Section.__getitem__, vectors.file_path
    run_one, create = selftest.run_one, registry.create

    def recording_get(section: vectors.Section[Any], key: str) -> Any:
        used.add((section.file, section.name, key))
        readers.setdefault(section.file, set()).add(running[0])
        return get_vector(section, key)

    def recording_path(file: str) -> Path:
        files_read.append(file)
        return file_path(file)

    def recording_run_one(check: SelftestCheck) -> SelftestResult:
        running[0] = check.name
        return run_one(check)

    def recording_create(scheme_id: str, backend: str, params: Any = None) -> Any:
        created.setdefault(running[0], set()).add((scheme_id, backend))
        return create(scheme_id, backend, params)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(vectors.Section, "__getitem__", recording_get)
        patch.setattr(vectors, "file_path", recording_path)
        patch.setattr(selftest, "run_one", recording_run_one)
        patch.setattr(registry, "create", recording_create)
        vectors.clear_cache()
        start = time.perf_counter()
        results = selftest.run_selftests()
        seconds = time.perf_counter() - start
    return SelftestRun(
        results,
        seconds,
        frozenset(used),
        tuple(sorted(files_read)),
        {name: frozenset(pairs) for name, pairs in created.items()},
        {file: frozenset(names) for file, names in readers.items()},
    )


def failures_of(results: list[SelftestResult]) -> dict[str, str]:
    """The failed checks: name -> detail."""
    return {r.name: r.detail for r in results if not r.passed}

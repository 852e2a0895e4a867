"""The self-test tests' shared run of every check (tests/helpers/selftest_runs.py)."""

from __future__ import annotations

import pytest

from tests.helpers.selftest_runs import SelftestRun, record_run


@pytest.fixture(scope="session")
def run() -> SelftestRun:
    """One run of the whole self-test, noting which vectors it asked for, which files it read
    and which schemes each check created through the registry."""
    return record_run()

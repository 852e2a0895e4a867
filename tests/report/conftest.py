"""Fixtures of the report tests: the hand-built run and its baseline (tests/helpers/report_runs.py).

The PDF tests reuse both fixtures: keep their names.
"""

from __future__ import annotations

import pytest

from app.core.results.model import RunResult
from tests.helpers.report_runs import BASELINE_ID, RUN_ID, build_run


@pytest.fixture
def hand_run() -> RunResult:
    return build_run(RUN_ID, "2026-11-21T10:04:00+00:00")


@pytest.fixture
def hand_baseline() -> RunResult:
    return build_run(BASELINE_ID, "2026-11-20T09:04:00+00:00", slower=0.5)

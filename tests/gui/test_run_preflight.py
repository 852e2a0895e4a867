"""The window's run measures the pre-flight's other load by the command line's rule: over at
least the interval (app/core/machine/preflight.py), from a reading the idle window took
earlier, never over the few milliseconds of its start-up work (which read "168 %")."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.machine import preflight
from app.core.machine.preflight import CpuTimes
from app.core.profile.files import parse_profile
from app.gui import run_controller
from app.gui.run_controller import RunController


class _Stop(Exception):
    """Raised by the fake runner: the test needs only what the controller handed it."""


def test_the_window_hands_its_run_a_reading_at_least_the_interval_old(
    qapp: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(preflight.SWITCH_VARIABLE)
    controller = RunController(store_factory=lambda: None)
    try:
        assert controller.reading_timer.isActive() and len(controller.readings.readings) == 1
        now = preflight.time.monotonic()
        old, fresh = CpuTimes(now - 0.9, 0.0, 0.0, 0.0, 0.0), CpuTimes(now - 0.01, 0.0, 0.0, 0.0, 0.0)
        controller.readings.readings = [old, fresh]
        handed: dict[str, Any] = {}

        def fake_runner(*args: Any, **kwargs: Any) -> None:
            handed.update(kwargs)
            raise _Stop

        monkeypatch.setattr(run_controller, "Runner", fake_runner)
        profile = parse_profile({"name": "p", "jobs": [{"scheme": "sha256", "message_sizes": [8], "samples": 2}]})
        with pytest.raises(_Stop):
            controller.start(profile)
        assert handed["preflight_wait"] is False  # the event loop never sleeps
        assert handed["preflight_start"] is old  # the fresh one is only 0.01 s old
    finally:
        controller.reading_timer.stop()


def test_with_the_pre_flight_off_the_window_reads_nothing(qapp: object) -> None:
    controller = RunController(store_factory=lambda: None)  # tests/conftest.py turns it off
    assert not controller.reading_timer.isActive() and controller.readings.readings == []

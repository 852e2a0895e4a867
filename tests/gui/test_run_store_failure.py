"""The window's runs when the store fails mid-run (a shared server gone): the run goes on,
the log says so, and the whole run is kept in a results file to import later, as on the
command line (app/core/store/unstored.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from app.core.contracts.events import LogMessage
from app.core.profile.files import parse_profile
from app.core.results.model import load_results_file
from app.core.store.store import Store, StoreError
from app.gui.run_controller import RunController


def test_a_store_failing_mid_run_keeps_the_run_in_a_file(qtbot: Any, tmp_path: Path, isolated_home: Path) -> None:
    opened: list[Store] = []

    def store_factory() -> Store:
        if opened:  # the run began; every job's store is now out of reach
            raise StoreError("postgresql://bench@db/cb: cannot reach the PostgreSQL server (Connection refused)")
        opened.append(Store(tmp_path / "r.sqlite3"))
        return opened[0]

    controller = RunController(store_factory=store_factory)
    logs: list[str] = []
    controller.events.connect(lambda batch: logs.extend(e.text for e in batch if isinstance(e, LogMessage)))
    profile = parse_profile({"name": "p", "jobs": [{"scheme": "sha256", "message_sizes": [64, 128], "samples": 20}]})
    with qtbot.waitSignal(controller.run_finished, timeout=120_000) as finished:
        controller.start(profile)
    run = finished.args[0]
    controller.drain()
    (kept,) = (isolated_home / "unstored").iterdir()
    assert kept.name == f"{run.id}.json"
    assert [job.status for job in load_results_file(kept).jobs] == ["ok", "ok"]
    assert any("cannot reach the PostgreSQL server" in line for line in logs)
    assert any(f"kept in {kept}; `cryptobench import" in line for line in logs)
    controller.shutdown()


def test_a_job_finished_while_the_shared_server_restarts_waits_for_it(monkeypatch: Any) -> None:
    """A job's worker opens the store for its results: a server away for a moment (a routine
    restart) is waited for, up to the store's RECONNECT_SECONDS, not taken for a failed store."""
    from app.core.store import store as store_module
    from app.core.store.store import StoreUnreachable
    from app.gui import run_controller

    monkeypatch.setattr(run_controller.time, "sleep", lambda seconds: None)
    answers: list[Any] = [StoreUnreachable("db: cannot reach the PostgreSQL server")] * 2 + ["the store"]

    def factory() -> Any:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert run_controller._open_waiting(factory) == "the store" and answers == []
    monkeypatch.setattr(store_module, "RECONNECT_SECONDS", 0.0)  # gone for longer than that: said
    answers[:] = [StoreUnreachable("db: cannot reach the PostgreSQL server")]
    with pytest.raises(StoreUnreachable):
        run_controller._open_waiting(factory)

"""The window's runs when the store fails mid-run (a shared server gone): the run goes on,
the log says so, and the whole run is kept in a results file to import later, as on the
command line (app/core/store/unstored.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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

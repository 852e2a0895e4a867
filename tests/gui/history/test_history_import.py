"""History's "Import results…": a run measured on another machine joins the list, a bad
file is refused with the file and field named and adds nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.results.model import RunResult, to_json
from app.core.store.store import Store
from app.gui.history.panel import HistoryPanel
from tests.helpers import records
from tests.helpers import trend_cases as cases

PI_RUN = "20260110-100000-ababab"


def _pi_run() -> RunResult:
    return records.run(
        PI_RUN,
        [cases.job(PI_RUN, 0, 90e-6)],
        started="2026-01-10T10:00:00+00:00",
        finished="2026-01-10T10:05:00+00:00",
        environment=cases.environment("raspberrypi", "42.0.1", "OpenSSL 3.2.1"),
        name="on the pi",
    )


@pytest.fixture
def panel(qtbot: Any, tmp_path: Path) -> HistoryPanel:
    store = tmp_path / "results.sqlite3"
    cases.build(store)
    widget = HistoryPanel(store)
    qtbot.addWidget(widget)
    return widget


def _machine(panel: HistoryPanel, run_id: str) -> str:
    item = panel.tree.topLevelItem(panel.run_ids().index(run_id))
    return item.text(4)


def test_import_adds_the_run_and_shows_its_machine(panel: HistoryPanel, tmp_path: Path) -> None:
    path = tmp_path / "pi.json"
    path.write_text(to_json(_pi_run()), encoding="utf-8")
    panel.choose_import_file = lambda: path
    panel.import_action.trigger()
    assert PI_RUN in panel.run_ids() and len(panel.run_ids()) == len(cases.RUNS) + 1
    assert _machine(panel, PI_RUN) == "raspberrypi" and _machine(panel, cases.RUNS[0][0]) == "alpha"
    assert panel.selected_run_ids() == [PI_RUN]
    assert not panel.message_label.isHidden()
    assert panel.message_label.text().startswith("Imported pi.json: “on the pi” of 2026-01-")
    assert "measured on raspberrypi" in panel.message_label.text()
    run = panel.load_run(PI_RUN)
    assert run is not None and run.jobs[0].to_dict() == _pi_run().jobs[0].to_dict()
    # the same file again: found, nothing added
    outcome = panel.import_results_file(path)
    assert outcome is not None and not outcome.added
    assert len(panel.run_ids()) == len(cases.RUNS) + 1 and panel.selected_run_ids() == [PI_RUN]
    assert "already in the history" in panel.message_label.text()


def test_a_bad_file_names_the_file_and_field_and_adds_nothing(panel: HistoryPanel, tmp_path: Path) -> None:
    data = json.loads(to_json(_pi_run()))
    data["jobs"][0]["metrics"]["encrypt"]["n"] = "many"
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    before = panel.run_ids()
    assert panel.import_results_file(path) is None
    assert panel.run_ids() == before
    text = panel.message_label.text()
    assert text.startswith("Not imported, nothing was added: ") and str(path) in text
    assert "jobs[0].metrics.encrypt.n" in text
    assert "color" in panel.message_label.styleSheet()  # shown as an error


def test_a_missing_file_and_a_cancelled_dialog(panel: HistoryPanel, tmp_path: Path) -> None:
    before = panel.run_ids()
    assert panel.import_results_file(tmp_path / "nowhere.json") is None
    assert "nowhere.json: file not found" in panel.message_label.text()
    panel.choose_import_file = lambda: None
    panel.import_action.trigger()
    assert panel.run_ids() == before


def test_a_read_only_store_offers_no_delete_and_no_import(
    qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file this user cannot write (simulated: root may write anything)."""
    from app.core.store import store as store_module

    path = tmp_path / "results.sqlite3"
    with Store(path) as store:
        store.add_run(_pi_run())
    monkeypatch.setattr(store_module, "writable", lambda _path: False)
    panel = HistoryPanel(path)
    qtbot.addWidget(panel)
    panel.select_runs(panel.run_ids())
    assert panel.read_only and panel.selected_run_ids()
    assert not panel.delete_action.isEnabled() and not panel.import_action.isEnabled()
    assert panel.open_action.isEnabled()


def test_runs_kept_when_their_store_failed_are_offered_and_stored_in_one_click(
    panel: HistoryPanel, isolated_home: Path
) -> None:
    """`unstored/` in the data folder holds runs whose store failed mid-run; one holds only its
    first job in the store. The panel says so, and one click stores both and empties the folder."""
    from app.core.store.unstored import keep_unstored, waiting

    whole = records.run(
        "20260201-000000-dddddd",
        [records.job("20260201-000000-dddddd", i, 64) for i in range(3)],
        environment={"hostname": "pi"},
    )
    with Store(panel.path()) as store:  # the part stored before the store failed
        part = records.run(whole.id, [whole.jobs[0]], status="interrupted", environment={"hostname": "pi"})
        part.finished = None
        store.add_run(part)
    kept = [keep_unstored(whole), keep_unstored(_pi_run())]
    assert waiting() == sorted(kept)
    panel.refresh()
    assert panel.unstored_label.isVisibleTo(panel) and panel.store_unstored_button.isVisibleTo(panel)
    assert "2 runs could not be stored" in panel.unstored_label.text()
    assert str(isolated_home / "unstored") in panel.unstored_label.text()
    stored, problems = panel.store_unstored()
    assert (stored, problems) == (2, []) and waiting() == []
    assert not panel.unstored_label.isVisibleTo(panel) and not panel.store_unstored_button.isVisibleTo(panel)
    with Store(panel.path()) as store:
        assert to_json(store.load_run(whole.id)) == to_json(whole)
    assert set(panel.run_ids()) >= {whole.id, _pi_run().id}


def test_runs_sort_by_the_instant_they_started_whatever_the_offset(qtbot: Any, tmp_path: Path) -> None:
    path = tmp_path / "results.sqlite3"
    with Store(path) as store:
        store.add_run(records.run("20250101-083000-aaaaaa", started="2025-01-01T10:30:00+02:00"))  # 08:30 UTC
        store.add_run(records.run("20250101-090000-bbbbbb", started="2025-01-01T09:00:00+00:00"))
    panel = HistoryPanel(path)
    qtbot.addWidget(panel)
    assert panel.run_ids() == ["20250101-090000-bbbbbb", "20250101-083000-aaaaaa"]  # the latest first
    panel.select_runs(panel.run_ids())
    dialog = panel.compare_selected()
    assert dialog is not None and dialog.baseline.id == "20250101-083000-aaaaaa"  # the older one

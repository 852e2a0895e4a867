"""The window's load settings for load from several machines (app/gui/config/load_editor.py):
the Dask scheduler's address, checked as the core checks it, how many generators, and leave
to send the server's token over plain TCP, saved into the profile's `cluster`,
`generators` and `cluster_plain_tcp`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.profile.files import read_profile_file
from app.core.settings.load import MAX_GENERATORS
from app.core.vocab import Mode
from app.gui.config.load_editor import EVERY_WORKER, LoadEditor
from app.gui.config.panel import ConfigPanel
from app.gui.config.problem_words import describe_problem


def _load(panel: ConfigPanel) -> LoadEditor:
    return panel.settings_editor.load


def _jobs(panel: ConfigPanel) -> list[dict[str, Any]]:
    jobs: list[dict[str, Any]] = panel.profile("p").to_dict()["jobs"]
    return jobs


def _load_job(panel: ConfigPanel) -> LoadEditor:
    panel.set_checked("x25519")
    panel.mode.setCurrentIndex(panel.mode.findData(Mode.LOAD))
    return _load(panel)


def test_the_cluster_fields_show_for_load_jobs_and_default_to_this_machine(panel: ConfigPanel) -> None:
    editor = _load(panel)
    panel.set_checked("x25519")
    assert not editor.cluster.isVisibleTo(panel) and not editor.generators.isVisibleTo(panel)
    _load_job(panel)
    assert editor.cluster.isVisibleTo(panel) and editor.generators.isVisibleTo(panel)
    assert editor.plain_tcp.isVisibleTo(panel)
    assert editor.cluster.text() == "" and editor.generators.text() == EVERY_WORKER
    assert not editor.generators.isEnabled() and not editor.plain_tcp.isEnabled()  # no scheduler: nothing to count
    assert (editor.generators.minimum(), editor.generators.maximum()) == (0, MAX_GENERATORS)
    (job,) = _jobs(panel)
    assert not {"cluster", "generators", "cluster_plain_tcp"} & set(job)


def test_a_scheduler_and_a_count_are_saved_into_the_profile(panel: ConfigPanel) -> None:
    editor = _load_job(panel)
    editor.cluster.setText("tcp://10.0.0.5:8786")
    assert editor.generators.isEnabled() and editor.plain_tcp.isEnabled()
    (job,) = _jobs(panel)
    assert job["cluster"] == "tcp://10.0.0.5:8786" and "generators" not in job  # every worker
    editor.generators.setValue(3)
    editor.plain_tcp.setChecked(True)
    (job,) = _jobs(panel)
    assert (job["generators"], job["cluster_plain_tcp"]) == (3, True) and panel.is_valid
    editor.generators.setValue(0)  # back to every worker: left out
    (job,) = _jobs(panel)
    assert "generators" not in job
    # tls:// needs no leave for plain TCP.
    editor.cluster.setText("tls://sched.lab:8786")
    assert not editor.plain_tcp.isEnabled() and editor.generators.isEnabled()
    # Cleared: this machine's generator again, and the cluster's own fields go with it.
    editor.generators.setValue(2)
    editor.cluster.setText("")
    (job,) = _jobs(panel)
    assert not {"cluster", "generators", "cluster_plain_tcp"} & set(job) and panel.is_valid


@pytest.mark.parametrize(
    ("typed", "said"),
    [("10.0.0.5:8786", "tcp://HOST:PORT"), ("tcp://10.0.0.5", "a port of 1 to 65535"), ("tcp://u:p@h:1", "HOST:PORT")],
)
def test_an_address_that_is_not_one_is_refused_beside_the_field(panel: ConfigPanel, typed: str, said: str) -> None:
    editor = _load_job(panel)
    editor.cluster.setText("tcp://10.0.0.5:8786")
    editor.cluster.setText(typed)
    assert not panel.is_valid and said in panel.reason and panel.reason.startswith("Dask scheduler: ")
    assert said in editor.cluster_note.full_text()  # next to the field
    assert "d32f2f" in editor.cluster.styleSheet()
    assert not editor.generators.isEnabled()
    editor.cluster.setText("tcp://10.0.0.5:8787")
    assert panel.is_valid and editor.cluster_note.error == "" and editor.cluster.styleSheet() == ""
    (job,) = _jobs(panel)
    assert job["cluster"] == "tcp://10.0.0.5:8787"


def test_a_cluster_profile_opens_with_its_fields_shown_and_saves_back_unchanged(
    panel: ConfigPanel, tmp_path: Path
) -> None:
    jobs = [
        {"scheme": "x25519", "mode": "load", "rates": [400, 800], "cluster": "tcp://10.0.0.5:8786", "generators": 2},
        {"scheme": "ed25519", "mode": "load", "cluster": "tcp://10.0.0.5:8786", "cluster_plain_tcp": True},
    ]
    path = tmp_path / "cluster.json"
    path.write_text(json.dumps({"format_version": 1, "name": "cluster", "jobs": jobs}), encoding="utf-8")
    panel.set_profile(read_profile_file(path))
    editor = _load(panel)
    assert editor.cluster.text() == "tcp://10.0.0.5:8786"
    assert editor.generators.text() == "mixed"  # 2 and every worker
    saved = _jobs(panel)
    assert [(job.get("cluster"), job.get("generators"), job.get("cluster_plain_tcp")) for job in saved] == [
        ("tcp://10.0.0.5:8786", 2, None),
        ("tcp://10.0.0.5:8786", None, True),
    ]
    editor.generators.setValue(4)  # chosen: written to both, "mixed" no longer offered
    assert [job["generators"] for job in _jobs(panel)] == [4, 4] and editor.generators.minimum() == 0


def test_the_cores_refusal_of_a_cluster_field_is_shown_by_the_scheduler_field() -> None:
    assert describe_problem("jobs[0].generators", "must be 1..64", ["X25519"]).note == "cluster"
    assert describe_problem("jobs[1].cluster", "an emulated link runs here only", ["a", "b"]).note == "cluster"
    assert describe_problem("--cluster", "bad", []).note is None  # the CLI's own option

"""The configuration panel shows each job as it is and edits only the jobs picked
(pytest-qt, offscreen, no run)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from app.core.profile.files import load_profile, preset_names, read_profile_file, save_profile
from app.core.profile.resolve import resolve_jobs
from app.core.vocab import Mode
from app.gui.config.job_settings import MIXED
from app.gui.config.panel import COL_MODE, COL_SAMPLES, COL_SIZES, ConfigPanel


@pytest.fixture
def panel(qtbot: Any) -> ConfigPanel:
    widget = ConfigPanel()
    qtbot.addWidget(widget)
    return widget


def _jobs(profile: Any) -> Counter[str]:
    """The resolved jobs as a multiset (order and index aside: the tree groups by family)."""
    return Counter(repr(sorted((vars(job) | {"index": 0}).items())) for job in resolve_jobs(profile, has_remote=True))


def _row_of(panel: ConfigPanel, scheme: str, **settings: Any) -> Any:
    return next(
        item
        for item in panel.checked_rows()
        if panel.entry(item).scheme == scheme and all(panel.entry(item).settings[k] == v for k, v in settings.items())
    )


@pytest.mark.parametrize("name", preset_names())
def test_editing_one_job_of_a_preset_changes_only_that_job_in_the_saved_file(
    panel: ConfigPanel, tmp_path: Path, name: str
) -> None:
    preset = load_profile(name)
    panel.set_profile(preset)
    rows = panel.checked_rows()
    assert len(rows) == len(preset.jobs)  # one row per job, none merged, none left over
    target = rows[len(rows) // 2]
    panel.tree.clearSelection()
    target.setSelected(True)
    # A load job has no samples (refused if set): its tampered requests are edited instead.
    field = "tamper" if panel.entry(target).settings["mode"] == Mode.LOAD else "samples"
    spin = panel.tamper if field == "tamper" else panel.samples
    before = panel.entry(target).settings[field]
    assert spin.value() == before and not spin.specialValueText()
    spin.setValue(before + 1)
    path = tmp_path / f"{name}.json"
    save_profile(panel.profile(preset.name), path)
    saved = read_profile_file(path)
    assert saved.experiment == preset.experiment
    added, removed = _jobs(saved) - _jobs(preset), _jobs(preset) - _jobs(saved)
    sweep = len(panel.entry(target).settings["links"] or [None])  # a job over several links is one job per link
    assert sum(added.values()) == sweep and sum(removed.values()) == sweep, (added, removed)
    assert f"('{field}', {before + 1})" in next(iter(added)) and f"('{field}', {before})" in next(iter(removed))


def test_the_editor_shows_the_selected_jobs_own_values(panel: ConfigPanel) -> None:
    panel.set_profile(load_profile("quick"))
    loopback = _row_of(panel, "x25519", mode="loopback")
    loopback.setSelected(True)
    assert panel.samples.value() == 50 and panel.warmup.value() == 5
    assert panel.mode.currentData() == "loopback"
    assert [size for size, box in panel.size_boxes.items() if box.isChecked()] == [1024]
    assert "Selected job" in panel.settings_editor.title()


def test_values_the_picked_jobs_do_not_share_read_mixed_and_are_left_alone(panel: ConfigPanel) -> None:
    panel.set_profile(load_profile("quick"))
    panel.tree.clearSelection()  # nothing selected: the group edits every checked job
    assert panel.samples.text() == MIXED and panel.warmup.text() == MIXED  # 10, 20, 50 samples
    assert panel.mode.currentText() == MIXED
    assert panel.size_boxes[1024].checkState() == Qt.CheckState.PartiallyChecked
    before = {id(item): dict(panel.entry(item).settings) for item in panel.checked_rows()}
    panel.pause.setValue(2.0)  # one field: only that field changes, in every job
    for item in panel.checked_rows():
        settings = panel.entry(item).settings
        assert settings == before[id(item)] | {"pause_ms": 2.0}
    assert panel.samples.text() == MIXED


def test_a_size_ticked_for_mixed_jobs_is_added_to_each_and_keeps_their_others(panel: ConfigPanel) -> None:
    panel.set_profile(load_profile("quick"))
    aes = [item for item in panel.checked_rows() if panel.entry(item).scheme == "aes-gcm"]
    for item in aes:
        item.setSelected(True)
    assert panel.size_boxes[18].checkState() == Qt.CheckState.PartiallyChecked
    panel.size_boxes[18].setChecked(True)
    assert [panel.entry(item).sizes() for item in aes] == [[18, 1024, 1 << 20], [18, 1024]]


def test_variants_are_distinct_rows_and_open_replaces_the_tree(panel: ConfigPanel) -> None:
    panel.set_profile(load_profile("quick"))
    x25519 = [item for item in panel.checked_rows() if panel.entry(item).scheme == "x25519"]
    shown = {tuple(item.text(c) for c in range(panel.tree.columnCount())) for item in x25519}
    assert len(shown) == 2  # the mode, sizes and samples columns tell them apart
    assert {item.text(COL_MODE) for item in x25519} == {"ops · session", "loopback · session"}
    assert {item.text(COL_SAMPLES) for item in x25519} == {"20", "50"}
    assert {item.text(COL_SIZES) for item in x25519} == {"18 B", "1 KiB"}

    panel.set_profile(load_profile("post-quantum"))
    post_quantum = load_profile("post-quantum")
    assert len(panel.checked_rows()) == len(post_quantum.jobs)
    for scheme in {job.scheme for job in load_profile("quick").jobs}:
        wanted = sum(job.scheme == scheme for job in post_quantum.jobs)
        assert sum(panel.entry(item).scheme == scheme for item in panel.rows()) == max(1, wanted), scheme


def test_first_launch_says_what_to_do(panel: ConfigPanel) -> None:
    assert panel.empty_state.isVisibleTo(panel) and "Presets" in panel.empty_state.text()
    assert not panel.problem.isVisibleTo(panel)  # no red error before anything is ticked
    assert not panel.is_valid
    panel.set_checked("sha256")
    assert not panel.empty_state.isVisibleTo(panel) and panel.is_valid


def test_the_columns_that_tell_jobs_apart_are_never_cut(panel: ConfigPanel) -> None:
    panel.set_profile(load_profile("quick"))
    metrics = panel.tree.fontMetrics()
    for column in (COL_MODE, COL_SIZES, COL_SAMPLES):
        widest = max(metrics.horizontalAdvance(item.text(column)) for item in panel.checked_rows())
        assert panel.tree.columnWidth(column) >= widest, column


def test_spin_boxes_offer_exactly_what_a_profile_accepts(panel: ConfigPanel) -> None:
    """Defaults and limits come from the profile model, not a copy in the panel."""
    from app.core.settings.profile import JobSpec, field_limits

    panel.set_checked("sha256")
    for name, spin in panel.settings_editor.numbers.items():
        limits = field_limits(JobSpec, name)
        assert (spin.value(), spin.minimum(), spin.maximum()) == (limits.default, limits.minimum, limits.maximum)


def test_the_scheme_tree_has_tls13_under_its_family_and_edits_its_parameters(panel: ConfigPanel, qtbot: Any) -> None:
    from PySide6.QtWidgets import QCheckBox, QComboBox

    tops = [panel.tree.topLevelItem(k).text(0) for k in range(panel.tree.topLevelItemCount())]
    assert tops[-1] == "TLS 1.3"
    item = panel.set_checked("tls13")
    panel.tree.clearSelection()
    item.setSelected(True)
    combos = {
        combo.itemText(0): combo
        for combo in panel.findChildren(QComboBox)
        if combo.isVisibleTo(panel) and combo.count()
    }
    group = combos["x25519"]
    assert [group.itemText(k) for k in range(group.count())][4] == "X25519MLKEM768"
    group.setCurrentText("MLKEM768")
    combos["rsa-2048"].setCurrentText("ml-dsa-87")
    assert any(box.isVisibleTo(panel) for box in panel.findChildren(QCheckBox))  # mutual
    (job,) = [job for job in panel.profile().jobs if job.scheme == "tls13"]
    assert (job.params["group"], job.params["certificate"]) == ("MLKEM768", "ml-dsa-87")

"""The job settings' "CPU placement" box: the model's default shown, a choice saved into the
profile, a profile's setting shown back, and "mixed" for jobs that differ (offscreen, no run)."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.profile.files import load_profile, parse_profile
from app.core.vocab import DEFAULT_PLACEMENT, PlacementPolicy
from app.gui.config.job_settings import MIXED
from app.gui.config.panel import ConfigPanel


@pytest.fixture
def panel(qtbot: Any) -> ConfigPanel:
    widget = ConfigPanel()
    qtbot.addWidget(widget)
    return widget


def test_the_placement_box_shows_saves_and_reads_back(panel: ConfigPanel) -> None:
    box = panel.settings_editor.placement
    panel.set_profile(load_profile("quick"))
    panel.tree.clearSelection()  # every checked job
    assert box.currentData() == DEFAULT_PLACEMENT and "(default)" in box.currentText()
    assert all("placement" not in job for job in panel.profile("p").to_dict()["jobs"])  # unset stays unset
    box.setCurrentIndex(box.findData(PlacementPolicy.SPLIT))
    assert {job.placement for job in panel.profile("p").jobs} == {PlacementPolicy.SPLIT}
    mixed = parse_profile(
        {"name": "m", "jobs": [{"scheme": "sha256", "placement": "free"}, {"scheme": "x25519", "mode": "loopback"}]}
    )
    panel.set_profile(mixed)
    panel.tree.clearSelection()
    assert box.currentText() == MIXED
    first = panel.checked_rows()[0]
    first.setSelected(True)
    assert box.currentData() == (panel.entry(first).settings["placement"] or DEFAULT_PLACEMENT)

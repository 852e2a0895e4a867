"""The job settings' "Key exchange" box: the default shown for key agreement and hybrid
jobs, a choice saved into the profile and shown in the tree, "mixed" for jobs that differ,
and greyed with its reason where no job shown establishes a key (offscreen, no run)."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.profile.files import parse_profile
from app.core.vocab import Exchange
from app.gui.config.job_settings import EXCHANGE_CHOICES, MIXED, NO_EXCHANGE
from app.gui.config.panel import COL_MODE, ConfigPanel


@pytest.fixture
def panel(qtbot: Any) -> ConfigPanel:
    widget = ConfigPanel()
    qtbot.addWidget(widget)
    return widget


def _jobs(panel: ConfigPanel) -> list[dict[str, Any]]:
    jobs: list[dict[str, Any]] = panel.profile("p").to_dict()["jobs"]
    return jobs


def _modes(panel: ConfigPanel) -> dict[str, str]:
    return {panel.entry(row).scheme: row.text(COL_MODE) for row in panel.checked_rows()}


def test_the_exchange_box_shows_saves_and_reads_back(panel: ConfigPanel) -> None:
    box = panel.settings_editor.exchange
    panel.set_profile(
        parse_profile(
            {
                "name": "e",
                "jobs": [{"scheme": "ml-kem"}, {"scheme": "x25519", "mode": "loopback"}, {"scheme": "aes-gcm"}],
            }
        )
    )
    panel.tree.clearSelection()  # every checked job: the two that establish a key set the box
    assert box.isEnabled() and box.currentData() == Exchange.SESSION
    assert box.currentText() == EXCHANGE_CHOICES[Exchange.SESSION] and "(default)" in box.currentText()
    assert all("exchange" not in job for job in _jobs(panel))  # unset stays unset
    assert _modes(panel) == {"ml-kem": "ops · session", "x25519": "loopback · session", "aes-gcm": "ops"}
    box.setCurrentIndex(box.findData(Exchange.PER_MESSAGE))
    # Set on the key-establishing jobs only: the AEAD job has no key to exchange.
    assert {job["scheme"]: job.get("exchange") for job in _jobs(panel)} == {
        "ml-kem": "per-message",
        "x25519": "per-message",
        "aes-gcm": None,
    }
    assert panel.is_valid, panel.reason
    assert _modes(panel) == {"ml-kem": "ops · per-message", "x25519": "loopback · per-message", "aes-gcm": "ops"}


def test_jobs_of_both_patterns_read_mixed_and_one_job_its_own(panel: ConfigPanel) -> None:
    box = panel.settings_editor.exchange
    panel.set_profile(
        parse_profile({"name": "m", "jobs": [{"scheme": "rsa-kem", "exchange": "per-message"}, {"scheme": "ecdh"}]})
    )
    panel.tree.clearSelection()
    assert box.currentText() == MIXED and box.isEnabled()
    row = panel.find_row("rsa-kem")
    assert row is not None
    row.setSelected(True)
    assert box.currentData() == Exchange.PER_MESSAGE and box.findData(None) < 0


def test_without_a_key_establishing_job_the_box_is_greyed_and_says_why(panel: ConfigPanel) -> None:
    box = panel.settings_editor.exchange
    panel.set_profile(parse_profile({"name": "n", "jobs": [{"scheme": "ed25519"}, {"scheme": "sha256"}]}))
    panel.tree.clearSelection()
    assert not box.isEnabled() and box.currentText() == NO_EXCHANGE
    assert all("exchange" not in job for job in _jobs(panel))
    panel.set_profile(parse_profile({"name": "k", "jobs": [{"scheme": "x448"}]}))
    panel.tree.clearSelection()
    assert box.isEnabled() and box.currentText() == EXCHANGE_CHOICES[Exchange.SESSION]  # its words are back

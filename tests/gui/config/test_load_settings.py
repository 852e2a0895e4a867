"""The job settings of load jobs: their fields shown for mode load only, with the model's
limits, edits written into the profile, a load profile shown and saved back unchanged, and
the rows a load job does not use hidden (offscreen, no run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.core.profile.files import read_profile_file, save_profile
from app.core.settings.load import MAX_CLIENTS, MAX_DURATION_S, MAX_SERVER_WORKERS, MAX_WARMUP_S, LoadSettings
from app.core.vocab import Mode, PlacementPolicy
from app.gui.config.job_settings import MIXED
from app.gui.config.load_editor import LoadEditor, RateForm, parse_rates
from app.gui.config.panel import COL_MODE, COL_SAMPLES, ConfigPanel
from app.gui.config.profile_jobs import job_dict


def _load(panel: ConfigPanel) -> LoadEditor:
    return panel.settings_editor.load


def _set_mode(panel: ConfigPanel, mode: Mode) -> None:
    panel.mode.setCurrentIndex(panel.mode.findData(mode))


def _form(editor: LoadEditor, form: RateForm) -> None:
    editor.rate_form.setCurrentIndex(editor.rate_form.findData(form))


def _jobs(panel: ConfigPanel) -> list[dict[str, Any]]:
    jobs: list[dict[str, Any]] = panel.profile("p").to_dict()["jobs"]
    return jobs


def _visible(panel: ConfigPanel, widget: Any) -> bool:
    return widget.isVisibleTo(panel)


def test_load_fields_appear_for_mode_load_only_and_hide_the_sample_rounds(panel: ConfigPanel) -> None:
    editor, settings = _load(panel), panel.settings_editor
    panel.set_checked("x25519")
    assert not _visible(panel, editor.numbers["clients"]) and _visible(panel, panel.samples)
    _set_mode(panel, Mode.LOAD)
    assert all(_visible(panel, spin) for spin in editor.numbers.values())
    assert _visible(panel, editor.rate_form) and not _visible(panel, editor.rate)  # sweep: no rate to type
    for spin in (panel.samples, panel.warmup, panel.keygen_samples, panel.pause):
        assert not _visible(panel, spin)
    assert _visible(panel, panel.tamper) and settings.link.isEnabled()  # tampering and links apply to load
    # Unset fields show what the core resolves them to; the placement a load job gets is split.
    defaults = LoadSettings()
    assert (
        editor.numbers["clients"].value(),
        editor.numbers["server_workers"].value(),
        editor.numbers["duration_s"].value(),
        editor.numbers["warmup_s"].value(),
    ) == (defaults.clients, defaults.server_workers, defaults.duration_s, defaults.warmup_s)
    assert settings.placement.currentData() == PlacementPolicy.SPLIT and "(default)" in settings.placement.currentText()
    assert panel.is_valid, panel.reason
    (job,) = _jobs(panel)
    assert job["mode"] == "load" and not {"clients", "rates", "rate_per_s", "placement"} & set(job)
    row = panel.checked_rows()[0]
    assert (row.text(COL_MODE), row.text(COL_SAMPLES)) == ("load · 4 clients · sweep · session", "-")
    _set_mode(panel, Mode.LOOPBACK)
    assert not _visible(panel, editor.numbers["clients"]) and _visible(panel, panel.samples)


def test_the_boxes_take_the_models_limits() -> None:
    from PySide6.QtWidgets import QFormLayout, QWidget

    holder = QWidget()
    editor = LoadEditor(QFormLayout(holder))
    bounds = {name: (spin.minimum(), spin.maximum()) for name, spin in editor.numbers.items()}
    assert bounds == {
        "clients": (1, MAX_CLIENTS),
        "server_workers": (1, MAX_SERVER_WORKERS),
        "duration_s": (0.01, MAX_DURATION_S),
        "warmup_s": (0.0, MAX_WARMUP_S),
    }
    assert parse_rates("200, 1000 5e3") == [200.0, 1000.0, 5000.0]
    for bad, said in (
        ("", "type the offered rates"),
        ("200, fast", "'fast' is not a number"),
        ("0", "more than 0"),
        (", ".join(["5"] * 33), "at most 32 steps"),
    ):
        with pytest.raises(ValueError, match=said):
            parse_rates(bad)


def test_edits_write_the_load_fields_into_the_profile(panel: ConfigPanel) -> None:
    editor = _load(panel)
    panel.set_checked("x25519")
    _set_mode(panel, Mode.LOAD)
    editor.numbers["clients"].setValue(16)
    editor.numbers["server_workers"].setValue(2)
    editor.numbers["duration_s"].setValue(1.5)
    editor.numbers["warmup_s"].setValue(0.0)
    _form(editor, RateForm.ONE)
    editor.rate.setValue(250.0)
    (job,) = _jobs(panel)
    assert {key: job[key] for key in ("clients", "server_workers", "duration_s", "warmup_s", "rate_per_s")} == {
        "clients": 16,
        "server_workers": 2,
        "duration_s": 1.5,
        "warmup_s": 0.0,
        "rate_per_s": 250.0,
    }
    assert "rates" not in job and panel.is_valid
    _form(editor, RateForm.SEVERAL)
    editor.rates.setText("200, 1000, x")
    assert not panel.is_valid and "'x' is not a number" in panel.reason
    assert "d32f2f" in editor.rates.styleSheet()
    assert "'x' is not a number" in editor.rates_note.full_text()  # next to the field, not below the fold
    editor.rates.setText("200, 1000")
    assert editor.rates_note.error == ""
    (job,) = _jobs(panel)
    assert job["rates"] == [200.0, 1000.0] and "rate_per_s" not in job and panel.is_valid
    assert panel.checked_rows()[0].text(COL_MODE) == "load · 16 clients · 2 rates · session"
    _form(editor, RateForm.SWEEP)
    (job,) = _jobs(panel)
    assert job["rate_per_s"] == "sweep" and "rates" not in job
    # Leaving mode load leaves the load fields behind (every other mode refuses them).
    _set_mode(panel, Mode.OPERATIONS)
    (job,) = _jobs(panel)
    assert not {"clients", "server_workers", "duration_s", "warmup_s", "rate_per_s", "rates"} & set(job)
    assert panel.is_valid


def test_an_edit_changes_that_field_of_the_load_jobs_only(panel: ConfigPanel) -> None:
    editor = _load(panel)
    panel.set_profile(
        _profile(
            [
                {"scheme": "x25519", "mode": "load", "clients": 2},
                {"scheme": "ed25519", "mode": "load", "clients": 8, "rates": [100, 200]},
                {"scheme": "sha256"},
            ]
        )
    )
    assert editor.numbers["clients"].specialValueText() == MIXED and editor.rate_form.currentText() == MIXED
    assert _visible(panel, panel.samples)  # an operations job is checked too
    editor.numbers["server_workers"].setValue(3)
    jobs = _jobs(panel)
    assert [job.get("server_workers") for job in jobs] == [3, 3, None]
    assert [job.get("clients") for job in jobs] == [2, 8, None]  # the mixed field untouched
    assert jobs[1]["rates"] == [100.0, 200.0] and panel.is_valid


def _profile(jobs: list[dict[str, Any]]) -> Any:
    from app.core.profile.files import parse_profile

    return parse_profile({"name": "load", "jobs": jobs})


def _write(path: Path, jobs: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"format_version": 1, "name": "load", "jobs": jobs}), encoding="utf-8")
    return path


def test_a_load_profile_opens_with_its_fields_shown_and_saves_back_unchanged(
    panel: ConfigPanel, tmp_path: Path
) -> None:
    jobs = [
        {
            "scheme": "x25519",
            "mode": "load",
            "clients": 4,
            "rates": [200, 1000],
            "duration_s": 1,
            "warmup_s": 0.2,
            "tamper": 3,
        },
        {
            "scheme": "ed25519",
            "mode": "load",
            "rate_per_s": 500,
            "server_workers": 2,
            "link": "lan",
            "placement": "same",
        },
        {"scheme": "ml-kem", "mode": "load", "rate_per_s": "sweep", "message_sizes": [64]},
        {"scheme": "aes-gcm", "mode": "load", "tamper": 2},
    ]
    opened = read_profile_file(_write(tmp_path / "load.json", jobs))
    panel.set_profile(opened)
    keys = (
        "mode",
        "clients",
        "server_workers",
        "rate_per_s",
        "rates",
        "duration_s",
        "warmup_s",
        "tamper",
        "samples",
        "link",
        "placement",
        "message_sizes",
    )

    def fields(profile: Any) -> dict[str, dict[str, Any]]:
        return {job["scheme"]: {key: job.get(key) for key in keys} for job in profile.to_dict()["jobs"]}

    assert fields(panel.profile("load")) == fields(opened)  # nothing changed by showing it
    save_profile(panel.profile("load"), tmp_path / "saved.json")
    assert fields(read_profile_file(tmp_path / "saved.json")) == fields(opened)
    assert panel.is_valid
    editor = _load(panel)
    rows = {panel.entry(row).scheme: row for row in panel.checked_rows()}
    written = job_dict(panel.entry(rows["x25519"]))
    assert "samples" not in written and written["tamper"] == 3  # a default a load job does not use is not written
    rows["x25519"].setSelected(True)
    assert editor.rate_form.currentData() is RateForm.SEVERAL and editor.rates.text() == "200, 1000"
    assert (editor.numbers["duration_s"].value(), editor.numbers["warmup_s"].value()) == (1.0, 0.2)
    panel.tree.clearSelection()
    rows["ed25519"].setSelected(True)
    assert editor.rate_form.currentData() is RateForm.ONE and editor.rate.value() == 500.0
    assert editor.numbers["server_workers"].value() == 2
    assert panel.settings_editor.placement.currentData() == PlacementPolicy.SAME
    assert rows["ed25519"].text(COL_MODE).startswith("load · 4 clients · 500/s · ")

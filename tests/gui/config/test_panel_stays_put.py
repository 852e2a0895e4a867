"""The configuration panel does not move under the user's hand: messages keep their space,
why Run is off is said where it is seen (with units), the reason for a refused value sits
next to its field, Add variant adds a job Run can take, and headers follow edits
(app/gui/messages.py, app/gui/config/panel_checks.py, problem_words.py, variants.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication, QWidget

from app.core.schemes import registry
from app.gui.config.job_settings import JobEntry
from app.gui.config.panel import ConfigPanel
from app.gui.config.problem_words import REPEAT_FIX, describe_problem, row_names
from app.gui.config.variants import distinct_variant
from app.gui.main_window import MainWindow
from tests.helpers.windows import opened_window


@pytest.fixture
def window(qtbot: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[MainWindow]:
    with opened_window(qtbot, tmp_path, monkeypatch=monkeypatch, size=(1024, 700)) as win:
        yield win


def _y(widget: QWidget, panel: ConfigPanel) -> int:
    """The widget's top in the panel, after every pending layout change is applied."""
    QApplication.processEvents()
    return widget.mapTo(panel, QPoint(0, 0)).y()


def _row_rects(panel: ConfigPanel) -> list[tuple[int, int]]:
    """Where each scheme row is, in the panel: what the next click lands on."""
    return [
        (panel.tree.visualItemRect(item).top() + _y(panel.tree.viewport(), panel), id(item)) for item in panel.rows()
    ]


def test_ticking_the_first_scheme_moves_no_row(window: MainWindow) -> None:
    window.new_profile()
    panel = window.panel
    assert panel.empty_state.isVisibleTo(panel)
    tree_y, rows, samples_y = _y(panel.tree, panel), _row_rects(panel), _y(panel.samples, panel)
    first = panel.rows()[0]
    first.setCheckState(0, Qt.CheckState.Checked)  # as a click on its box does
    assert not panel.empty_state.isVisibleTo(panel) and panel.message.ready.isVisibleTo(panel)
    assert _y(panel.tree, panel) == tree_y and _row_rects(panel) == rows
    assert _y(panel.samples, panel) == samples_y
    # An error appearing and going away moves nothing either.
    panel.custom_sizes.setText("lots")
    assert panel.problem.isVisibleTo(panel) and "Cannot run" in panel.problem.full_text()
    assert (_y(panel.tree, panel), _y(panel.samples, panel)) == (tree_y, samples_y)
    panel.custom_sizes.setText("")
    assert panel.is_valid and (_y(panel.tree, panel), _y(panel.samples, panel)) == (tree_y, samples_y)
    # "Edit every checked job" keeps its place whether a row is selected or not.
    assert panel.edit_all.isVisibleTo(panel) and not panel.edit_all.isEnabled()
    panel.tree.setCurrentItem(first)
    assert panel.edit_all.isVisibleTo(panel) and panel.edit_all.isEnabled()


def test_a_refused_value_is_explained_next_to_its_field(window: MainWindow) -> None:
    panel = window.panel
    panel.set_checked("sha256")
    note = panel.settings_editor.sizes_note
    panel.custom_sizes.setText("64, lots")
    assert "'lots' is not a size" in note.full_text()
    gap = _y(note, panel) - (_y(panel.custom_sizes, panel) + panel.custom_sizes.height())
    assert 0 <= gap < 12, "the reason sits right under the field"
    assert note.isVisibleTo(panel) and note.height() >= 2 * note.fontMetrics().lineSpacing()
    panel.custom_sizes.setText("64")
    assert note.error == "" and "In bytes" in note.full_text()


def test_why_run_is_off_is_visible_and_has_units(window: MainWindow) -> None:
    panel = window.panel
    # One backend, no parameter: its other exchange pattern, then nothing left to vary.
    row = panel.set_checked("x25519-ml-kem-768")
    panel.size_boxes[18].setChecked(True)
    panel.tree.setCurrentItem(row)
    panel.add_variant.click()
    assert window.run_action.isEnabled(), panel.reason  # the per-message variant is another job
    panel.tree.setCurrentItem(row)
    panel.add_variant.click()
    assert len([r for r in panel.checked_rows() if panel.entry(r).scheme == "x25519-ml-kem-768"]) == 3
    assert not window.run_action.isEnabled()
    shown = panel.problem.full_text()
    assert panel.problem.isVisibleTo(panel) and "repeats" in shown and REPEAT_FIX in shown
    assert "message size 18 B" in panel.reason and "repeats X25519 + ML-KEM-768 (job " in panel.reason
    assert REPEAT_FIX in panel.problem.text(), "what to do is never cut off"
    assert window.status_job.text().startswith("Cannot run:") and "repeats" in window.status_job.text()


def test_add_variant_adds_a_job_run_can_take_and_the_headers_follow_edits(window: MainWindow) -> None:
    panel = window.panel
    row = panel.set_checked("aes-gcm")
    panel.tree.setCurrentItem(row)
    panel.add_variant.click()
    assert window.run_action.isEnabled(), panel.reason
    rows = [panel.entry(r) for r in panel.checked_rows()]
    assert sorted(entry.params["key_bits"] for entry in rows) == [128, 256]
    new = panel.tree.currentItem()
    assert "128" in new.text(0) and "128" in panel.scheme_box.title() and "128" in panel.settings_editor.title()
    panel._editors["key_bits"].setCurrentIndex(panel._editors["key_bits"].findData(192))
    assert "192" in new.text(0) and "192" in panel.scheme_box.title() and "192" in panel.settings_editor.title()
    assert "128" not in panel.settings_editor.title()


def test_distinct_variant_tries_parameters_then_backends() -> None:
    spec = registry.get_spec("chacha20-poly1305")
    entry = JobEntry("chacha20-poly1305", "cryptography", {})
    other = distinct_variant(spec, entry, [entry])
    assert other is not None and other.backend == "pycryptodome"
    assert distinct_variant(spec, entry, [entry, other]) is None
    ecdh = registry.get_spec("ecdh")
    rows = [JobEntry("ecdh", "cryptography", ecdh.resolve_params("cryptography", {"curve": c})) for c in ("P-256",)]
    variant = distinct_variant(ecdh, rows[0], rows)
    # A key agreement's first variant is its other exchange pattern, then the next curve.
    assert variant is not None and variant.params == rows[0].params and variant.settings["label"] is None
    assert variant.exchange() == "per-message" and rows[0].exchange() == "session"
    curve = distinct_variant(ecdh, rows[0], [*rows, variant])
    assert curve is not None and curve.params["curve"] == "P-384" and curve.exchange() == "session"


def test_problems_name_rows_and_fields() -> None:
    names = row_names(["AES-GCM 256", "SHA-256", "AES-GCM 256"])
    assert names == ["AES-GCM 256 (job 1)", "SHA-256", "AES-GCM 256 (job 3)"]
    problem = describe_problem("jobs[2]", "repeats jobs[0]: same scheme and message size 18 B", names)
    assert (
        problem.text
        == f"AES-GCM 256 (job 3): repeats AES-GCM 256 (job 1): {REPEAT_FIX}. Same scheme and message size 18 B"
    )
    assert problem.row == 2
    sizes = describe_problem("jobs[1].message_sizes[0]", "a 18-byte message does not fit", names)
    assert sizes.note == "sizes" and sizes.text == "SHA-256: a 18-byte message does not fit"
    assert describe_problem("jobs[0].link.jitter_ms", "too much", names).note == "link"
    assert describe_problem("offered rates", "'x' is not a number", names).note == "rates"
    assert describe_problem("server", "enter the host", names).note == "remote"

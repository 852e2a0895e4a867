"""Links in the window: the job settings' chooser, the profile it writes, the table's Link
column and the plots' labels (pytest-qt, offscreen, no run)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt

from app.core.link import probe as probe_mod
from app.core.link.probe import loss_refusal
from app.core.profile import resolve as resolve_mod
from app.core.profile.files import parse_profile, read_profile_file, save_profile
from app.core.profile.resolve import resolve_jobs
from app.core.records.job_conditions import Link
from app.core.results.model import JobResult
from app.core.settings.links import LinkSpec, link_presets, numbers_text, resolve_link
from app.core.settings.profile import ProfileError, field_limits
from app.core.vocab import LinkEmulation, Mode
from app.gui.config import link_editor as link_editor_mod
from app.gui.config.link_editor import (
    CUSTOM_TEXT,
    LINK_SETTINGS,
    MIXED_TEXT,
    NONE_TEXT,
    NOT_LOOPBACK,
    SWEEP_TEXT,
    LinkEditor,
)
from app.gui.config.panel import COL_MODE, ConfigPanel, profile_json
from app.gui.results.cells import Column
from app.gui.results.table import SORT_ROLE, ResultsTable
from tests.helpers import records


@pytest.fixture(autouse=True)
def packet_path_offered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The packet path is available, whoever runs the tests: what a panel's profile resolves
    to must not depend on the machine's user (a test that needs the relay asks for it)."""
    monkeypatch.setattr(resolve_mod, "packet_path_refusal", lambda: None)
    monkeypatch.setattr(probe_mod, "packet_path_refusal", lambda: None)


@pytest.fixture
def panel(qtbot: Any) -> ConfigPanel:
    widget = ConfigPanel()
    qtbot.addWidget(widget)
    return widget


def _editor(panel: ConfigPanel) -> LinkEditor:
    return panel.settings_editor.link


def _set_mode(panel: ConfigPanel, mode: Mode) -> None:
    panel.mode.setCurrentIndex(panel.mode.findData(mode))


def _choose(editor: LinkEditor, text: str) -> None:
    """Pick the chooser's line that starts with `text`, as a user would."""
    index = next(k for k in range(editor.choice.count()) if editor.choice.itemText(k).startswith(text))
    editor.choice.setCurrentIndex(index)


def _job_json(panel: ConfigPanel, index: int = 0) -> dict[str, Any]:
    job: dict[str, Any] = json.loads(profile_json(panel.profile()))["jobs"][index]
    return job


def _loopback(panel: ConfigPanel, scheme: str = "x25519") -> Any:
    row = panel.set_checked(scheme)
    _set_mode(panel, Mode.LOOPBACK)
    return row


def test_the_chooser_is_enabled_only_for_loopback_jobs(panel: ConfigPanel) -> None:
    panel.set_checked("x25519")
    editor = _editor(panel)
    assert panel.mode.currentData() == Mode.OPERATIONS
    assert not editor.isEnabled() and editor.choice.toolTip() == NOT_LOOPBACK
    _set_mode(panel, Mode.LOOPBACK)
    assert editor.isEnabled() and editor.choice.toolTip() != NOT_LOOPBACK
    assert editor.choice.currentText() == NONE_TEXT
    _set_mode(panel, Mode.REMOTE)
    assert not editor.isEnabled() and editor.toolTip() == NOT_LOOPBACK


def test_the_chooser_offers_each_preset_with_its_numbers_and_source(panel: ConfigPanel) -> None:
    _loopback(panel)
    editor = _editor(panel)
    lines = [editor.choice.itemText(k) for k in range(editor.choice.count())]
    assert lines[0] == NONE_TEXT and lines[-2:] == [CUSTOM_TEXT, SWEEP_TEXT]
    assert lines[1:-2] == [
        f"{preset.title} · {numbers_text(resolve_link(name))}" for name, preset in link_presets().items()
    ]
    lte = lines.index("LTE · 35 ms, 12000 kbit/s")
    tip = editor.choice.itemData(lte, Qt.ItemDataRole.ToolTipRole)
    assert link_presets()["lte"].description in tip and link_presets()["lte"].source in tip


def test_a_preset_writes_its_name_into_the_profile(panel: ConfigPanel) -> None:
    row = _loopback(panel)
    _choose(_editor(panel), "LTE")
    assert _job_json(panel)["link"] == "lte" and "links" not in _job_json(panel)
    assert row.text(COL_MODE) == "loopback · session · LTE" and "35 ms" in row.toolTip(COL_MODE)
    assert panel.is_valid
    _choose(_editor(panel), NONE_TEXT)
    assert "link" not in _job_json(panel) and row.text(COL_MODE) == "loopback · session"


def test_custom_values_write_the_object(panel: ConfigPanel) -> None:
    row = _loopback(panel)
    editor = _editor(panel)
    _choose(editor, "LTE")
    _choose(editor, CUSTOM_TEXT)  # starts from the preset shown before
    assert editor.custom.isVisibleTo(editor) and editor.delay.value() == 35
    editor.delay.setValue(20)
    editor.rate_up.setValue(8000)
    editor.rate_down.setValue(8000)
    assert _job_json(panel)["link"] == {"delay_ms": 20, "jitter_ms": 0, "rate_kbit": 8000, "loss_percent": 0}
    assert row.text(COL_MODE) == "loopback · session · 20 ms, 8000 kbit/s"
    editor.rate_down.setValue(16000)
    editor.jitter.setValue(2.5)
    assert _job_json(panel)["link"] == {
        "delay_ms": 20,
        "jitter_ms": 2.5,
        "rate_kbit": {"up": 8000, "down": 16000},
        "loss_percent": 0,
    }
    editor.rate_up.setValue(0)  # the bottom of the range is "unlimited": that direction has no rate
    assert editor.rate_up.text() == "unlimited"
    assert _job_json(panel)["link"]["rate_kbit"] == {"down": 16000}
    editor.rate_down.setValue(0)
    assert "rate_kbit" not in _job_json(panel)["link"] and panel.is_valid
    # What a run of that profile gets: the numbers typed.
    assert resolve_jobs(panel.profile())[0].link == Link(None, 20.0, 2.5, None, None, 0.0, LinkEmulation.PACKET)


def test_the_custom_fields_take_the_models_limits_and_loss_says_why_not(
    panel: ConfigPanel, qtbot: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _loopback(panel)
    editor = _editor(panel)
    for name, box in (("delay_ms", editor.delay), ("jitter_ms", editor.jitter), ("loss_percent", editor.loss)):
        limits = field_limits(LinkSpec, name)
        assert (box.minimum(), box.maximum()) == (limits.minimum, limits.maximum), name
    assert editor.loss.isEnabled() and "the kernel's TCP retransmits them" in editor.loss.toolTip()
    # Where the packet path cannot be made, loss is greyed out and says why.
    monkeypatch.setattr(link_editor_mod, "packet_path_refusal", lambda: "needs CAP_NET_ADMIN (run as root)")
    monkeypatch.setattr(probe_mod, "packet_path_refusal", lambda: "needs CAP_NET_ADMIN (run as root)")
    refused = LinkEditor()
    qtbot.addWidget(refused)
    assert not refused.loss.isEnabled() and refused.loss.toolTip() == loss_refusal()
    assert "packet loss needs the packet path, which is not available here" in refused.loss.toolTip()


def test_a_link_chosen_in_the_window_allows_the_stream_relay(panel: ConfigPanel) -> None:
    """A link picked in the window runs wherever the window runs (the packet path where
    allowed, else the relay, labelled), and leaving it takes its settings along."""
    _loopback(panel)
    editor = _editor(panel)
    assert not editor.path.isVisibleTo(editor)  # no link, nothing to emulate
    _choose(editor, "LTE")
    assert _job_json(panel)["link_emulation"] == "auto"
    assert editor.path.isVisibleTo(editor)
    _set_mode(panel, Mode.OPERATIONS)
    assert "link_emulation" not in _job_json(panel)


def _pick(box: Any, text: str) -> None:
    box.setCurrentIndex(box.findText(text))
    assert box.currentText() == text


def test_the_path_settings_choose_emulation_congestion_control_and_fresh_connections(panel: ConfigPanel) -> None:
    row = _loopback(panel)
    editor = _editor(panel)
    _choose(editor, "LTE")
    path = editor.path
    assert path.emulation.currentText() == "packet path, else stream relay"  # what choosing a link set
    _pick(path.emulation, "packet path")
    _pick(path.congestion, "reno")
    _pick(path.connection, "fresh per message")
    job = _job_json(panel)
    assert (job["link_emulation"], job["tcp_congestion_control"], job["tcp_connection"]) == ("packet", "reno", "fresh")
    assert panel.is_valid
    assert resolve_jobs(panel.profile())[0].label.endswith("over LTE (TCP reno, fresh connections)")
    # The stream relay has no TCP on the path: its settings go back to the defaults, greyed out.
    _pick(path.emulation, "stream relay")
    job = _job_json(panel)
    assert job["link_emulation"] == "stream-relay"
    assert "tcp_congestion_control" not in job and "tcp_connection" not in job
    assert not path.congestion.isEnabled() and "choose the packet path" in path.connection.toolTip()
    assert panel.is_valid and "(stream relay)" in row.toolTip(COL_MODE) + resolve_jobs(panel.profile())[0].label


def test_the_path_settings_show_what_the_jobs_share_or_mixed(panel: ConfigPanel) -> None:
    opened = parse_profile(
        {
            "name": "two",
            "jobs": [
                {"scheme": "x25519", "mode": "loopback", "link": "lte", "tcp_connection": "fresh"},
                {"scheme": "ml-kem", "mode": "loopback", "link": "lte", "tcp_congestion_control": "cubic"},
            ],
        }
    )
    panel.set_profile(opened)
    path = _editor(panel).path
    assert path.emulation.currentText() == "packet path"  # neither names one: the default
    assert path.connection.currentText() == path.congestion.currentText() == "mixed"
    _pick(path.connection, "warm")  # one choice for both jobs
    assert path.connection.findText("mixed") < 0
    assert [job.get("tcp_connection") for job in json.loads(profile_json(panel.profile()))["jobs"]] == [None] * 2


def test_a_custom_link_keeps_its_bursty_loss_and_queue_through_an_edit(panel: ConfigPanel) -> None:
    bursty = {"delay_ms": 20, "burst_loss": {"p_percent": 1, "r_percent": 25}, "queue_packets": 64}
    panel.set_profile(parse_profile({"name": "b", "jobs": [{"scheme": "x25519", "mode": "loopback", "link": bursty}]}))
    editor = _editor(panel)
    assert editor.choice.currentText() == CUSTOM_TEXT
    assert not editor.loss.isEnabled() and "3.85 % bursty loss" in editor.loss.toolTip()
    editor.delay.setValue(30)
    link = _job_json(panel)["link"]
    assert link["delay_ms"] == 30 and link["queue_packets"] == 64 and link.get("loss_percent", 0) == 0
    assert link["burst_loss"] == {"p_percent": 1, "r_percent": 25, "bad_loss_percent": 100, "good_loss_percent": 0}
    assert panel.is_valid


def test_an_invalid_custom_value_shows_the_profiles_error(panel: ConfigPanel, qtbot: Any) -> None:
    _loopback(panel)
    editor = _editor(panel)
    _choose(editor, CUSTOM_TEXT)
    editor.delay.setValue(5)
    with qtbot.waitSignal(panel.valid_changed, check_params_cb=lambda valid, _reason: not valid):
        editor.jitter.setValue(8)  # more jitter than delay: would need negative delays
    with pytest.raises(ProfileError) as caught:
        resolve_jobs(panel.profile())
    assert caught.value.field == "jobs[0].link.jitter_ms"
    assert panel.reason.endswith(f"link.jitter_ms: {caught.value.detail}")  # the profile's words, one line
    assert "\n" not in panel.reason and panel.problem.isVisibleTo(panel)
    assert caught.value.detail in panel.settings_editor.link_note.full_text()  # said under the link too
    # The field at fault is marked.
    assert editor.jitter.lineEdit().styleSheet() and not editor.delay.lineEdit().styleSheet()
    editor.jitter.setValue(5)
    assert panel.is_valid and not editor.jitter.lineEdit().styleSheet()


def test_a_sweep_writes_links_in_the_presets_order(panel: ConfigPanel) -> None:
    row = _loopback(panel)
    editor = _editor(panel)
    _choose(editor, SWEEP_TEXT)
    assert editor.sweep.isVisibleTo(editor)
    assert _job_json(panel)["links"] == list(link_presets())  # every link, to start with
    for k in range(editor.sweep.count()):
        item = editor.sweep.item(k)
        keep = item.data(Qt.ItemDataRole.UserRole) in ("lan", "lte")
        item.setCheckState(Qt.CheckState.Checked if keep else Qt.CheckState.Unchecked)
    assert _job_json(panel)["links"] == ["lan", "lte"] and "link" not in _job_json(panel)
    assert row.text(COL_MODE) == "loopback · session · 2 links"
    assert [job.label for job in resolve_jobs(panel.profile())] == [
        f"X25519 + HKDF-SHA256 + AES-256-GCM [cryptography] (session) over {title}" for title in ("LAN", "LTE")
    ]


def test_leaving_loopback_leaves_the_link_behind(panel: ConfigPanel) -> None:
    row = _loopback(panel)
    _choose(_editor(panel), "LTE")
    _set_mode(panel, Mode.OPERATIONS)
    assert "link" not in _job_json(panel) and panel.is_valid
    assert _editor(panel).choice.currentText() == NONE_TEXT and row.text(COL_MODE) == "ops · session"


def test_a_profile_with_links_opens_with_them_shown_and_saves_them_unchanged(
    panel: ConfigPanel, tmp_path: Path
) -> None:
    path = tmp_path / "links.json"
    path.write_text(
        json.dumps(
            {
                "format_version": 1,
                "name": "links",
                "jobs": [
                    {"scheme": "x25519", "mode": "loopback", "link": "lte"},
                    {
                        "scheme": "ml-kem",
                        "mode": "loopback",
                        "link": {"delay_ms": 20, "jitter_ms": 1, "rate_kbit": 8000},
                    },
                    {"scheme": "aes-gcm", "mode": "loopback", "links": ["wifi", "3g", {"delay_ms": 7}]},
                    {
                        "scheme": "chacha20-poly1305",
                        "mode": "loopback",
                        "link": "wifi",
                        "link_emulation": "packet",
                        "tcp_congestion_control": "reno",
                        "tcp_slow_start_after_idle": False,
                        "tcp_connection": "fresh",
                    },
                    {"scheme": "sha256"},
                ],
            }
        ),
        encoding="utf-8",
    )
    opened = read_profile_file(path)
    panel.set_profile(opened)
    editor = _editor(panel)
    assert editor.choice.currentText() == MIXED_TEXT  # every checked job: their links differ
    by_scheme = {panel.entry(row).scheme: row for row in panel.checked_rows()}
    assert {scheme: row.text(COL_MODE) for scheme, row in by_scheme.items()} == {
        "x25519": "loopback · session · LTE",
        "ml-kem": "loopback · per-message · 20 ms ± 1 ms, 8000 kbit/s",  # a format-1 profile's hybrid
        "aes-gcm": "loopback · 3 links",
        "chacha20-poly1305": "loopback · Wi-Fi",
        "sha256": "ops",
    }

    by_scheme["x25519"].setSelected(True)
    assert editor.isEnabled() and editor.choice.currentText().startswith("LTE · ")
    panel.tree.clearSelection()
    by_scheme["ml-kem"].setSelected(True)
    assert editor.choice.currentText() == CUSTOM_TEXT and editor.custom.isVisibleTo(editor)
    assert (editor.delay.value(), editor.jitter.value(), editor.rate_up.value(), editor.rate_down.value()) == (
        20,
        1,
        8000,
        8000,
    )
    panel.tree.clearSelection()
    by_scheme["aes-gcm"].setSelected(True)
    assert editor.choice.currentText() == SWEEP_TEXT
    checked = [
        editor.sweep.item(k)
        for k in range(editor.sweep.count())
        if editor.sweep.item(k).checkState() == Qt.CheckState.Checked
    ]
    assert [item.data(Qt.ItemDataRole.UserRole) for item in checked] == ["wifi", "3g", LinkSpec(delay_ms=7)]
    assert checked[-1].text() == "custom · 7 ms, unlimited rate"
    panel.tree.clearSelection()
    by_scheme["sha256"].setSelected(True)
    assert not editor.isEnabled()

    def links(profile: Any) -> dict[str, Any]:
        names = ("link", "links", *LINK_SETTINGS)
        return {job["scheme"]: tuple(job.get(name) for name in names) for job in profile.to_dict()["jobs"]}

    assert links(panel.profile("links")) == links(opened)  # nothing changed by showing it
    saved = tmp_path / "saved.json"
    save_profile(panel.profile("links"), saved)
    assert links(read_profile_file(saved)) == links(opened)
    assert links(opened)["ml-kem"][:2] == ({"delay_ms": 20, "jitter_ms": 1, "rate_kbit": 8000, "loss_percent": 0}, None)
    assert links(opened)["chacha20-poly1305"][2:] == ("packet", "reno", False, "fresh")


def test_a_link_the_panel_cannot_run_is_shown_with_the_profiles_error(panel: ConfigPanel) -> None:
    profile = parse_profile(
        {
            "name": "bad",
            "jobs": [
                {
                    "scheme": "x25519",
                    "mode": "loopback",
                    "link": {"delay_ms": 20, "loss_percent": 1},
                    "link_emulation": "stream-relay",
                }
            ],
        }
    )
    panel.set_profile(profile)
    assert (
        not panel.is_valid
        and "link.loss_percent: 1 % loss asked for: packet loss needs the packet path" in panel.reason
    )
    panel.checked_rows()[0].setSelected(True)
    assert _editor(panel).loss.value() == 1  # shown as it is, never rounded away
    profile = parse_profile({"name": "bad", "jobs": [{"scheme": "x25519", "mode": "loopback", "link": "moon"}]})
    panel.set_profile(profile)
    assert "unknown link preset" in panel.reason
    panel.checked_rows()[0].setSelected(True)
    assert _editor(panel).choice.currentText() == "moon (not a link preset)"


# --- the results table --------------------------------------------------------------------


def _result(index: int, link: Link | None, mode: str = "loopback") -> JobResult:
    label = "X25519 + AES-GCM [cryptography]"
    if link is not None:
        from app.core.settings.links import link_title

        label += f" over {link_title(link)}"
    return records.job(
        "run",
        index,
        metrics={"compute": records.cycling_samples(1e-4, 8, period=3)},
        scheme="x25519",
        params={},
        label=label,
        family="key-agreement",
        mode=mode,
        link=link,
    )


def _custom(delay_ms: float, up: float | None, down: float | None) -> Link:
    return Link(None, delay_ms, 0.0, up, down, 0.0, LinkEmulation.PACKET)


def test_the_table_shows_each_results_link_and_sorts_by_its_cost(qtbot: Any) -> None:
    table = ResultsTable()
    qtbot.addWidget(table)
    results = [
        _result(0, resolve_link("satellite")),
        _result(1, None, mode="operations"),
        _result(2, resolve_link("lan")),
        _result(3, _custom(20, 8000, 16000)),
    ]
    table.set_results(results)

    def cells(role: int = Qt.ItemDataRole.DisplayRole) -> list[Any]:
        return [table.proxy.data(table.proxy.index(row, Column.LINK), role) for row in range(table.proxy.rowCount())]

    assert table.model.headerData(Column.LINK, Qt.Orientation.Horizontal) == "Link"
    assert Column.LINK == Column.MODE + 1
    assert cells() == ["satellite (GEO)", "-", "LAN", "20 ms, 8000 kbit/s up, 16000 kbit/s down"]
    tips = cells(Qt.ItemDataRole.ToolTipRole)
    assert "satellite: 300 ms, unlimited rate" in tips[0] and "emulated by packet: the packet path" in tips[0]
    assert "custom link: 20 ms" in tips[3]
    # The Scheme column leaves the backend and the link to their own columns.
    # A key agreement recorded before jobs named their exchange: session, said.
    assert table.proxy.data(table.proxy.index(0, Column.SCHEME)) == "X25519 + AES-GCM (session)"
    table.view.sortByColumn(Column.LINK, Qt.SortOrder.AscendingOrder)
    assert cells() == ["LAN", "20 ms, 8000 kbit/s up, 16000 kbit/s down", "satellite (GEO)", "-"]
    assert table.proxy.data(table.proxy.index(0, Column.LINK), SORT_ROLE) < table.proxy.data(
        table.proxy.index(1, Column.LINK), SORT_ROLE
    )
    assert "\tLink\t" in table.table_text(selected_only=False).splitlines()[0]


# --- the plots' labels ------------------------------------------------------------------


def test_shortened_labels_keep_the_link_and_tell_a_sweep_apart() -> None:
    from app.gui.plots.common import short_distinct

    names = [
        f"X25519+ML-KEM-768 [cryptography+liboqs] over {title}"
        for title in (preset.title for preset in link_presets().values())
    ]
    names.append("X25519+ML-KEM-768 [cryptography+liboqs] over 20 ms, 8000 kbit/s up, 16000 kbit/s down")
    shown = short_distinct(names, 26)
    assert len(set(shown)) == len(names)
    for full, short in zip(names[:-1], shown):
        assert short.endswith(full[full.index(" over ") :])  # a preset's title whole
        assert "[cryptography+liboqs]" not in short and len(short) <= 40  # no backend: none needed
    assert shown[-1].startswith("X25519+") and " over 20 ms" in shown[-1] and len(shown[-1]) <= 32
    # Two backends over one link: the backend comes back, for every label.
    both = short_distinct(
        ["X25519 [cryptography] over LTE", "X25519 [pycryptodome] over LTE", "Ed25519 [cryptography] over LTE"], 26
    )
    assert both == [
        "X25519 [cryptography] over LTE",
        "X25519 [pycryptodome] over LTE",
        "Ed25519 [cryptography] over LTE",
    ]


def test_bar_labels_keep_the_link_size_and_mode(qtbot: Any) -> None:
    from PySide6 import QtGui

    from app.gui.plots.comparison import bar_labels

    metrics = QtGui.QFontMetricsF(QtGui.QFont())
    texts = [
        f"#{k} X25519 + HKDF-SHA256 + AES-256-GCM [cryptography] over {title} · 1 KiB · loopback"
        for k, title in enumerate(("LAN", "Wi-Fi", "satellite (GEO)", "20 ms, 8000 kbit/s up, 16000 kbit/s"))
    ]
    budget = metrics.horizontalAdvance(texts[0]) * 0.6
    shown = bar_labels(texts, budget, metrics)
    assert len(set(shown)) == len(texts)
    for full, short in zip(texts[:3], shown):
        assert short.endswith(full[full.index(" over ") :]) and short.startswith(full[:4])
    assert " over 20 ms" in shown[3] and shown[3].endswith(" · 1 KiB · loopback")
    assert all(metrics.horizontalAdvance(short) <= budget + 1 for short in shown[:3])


def test_a_sweep_draws_one_scaling_curve_per_link(qtbot: Any) -> None:
    from app.gui.plots.panel import PlotsPanel

    panel = PlotsPanel()
    qtbot.addWidget(panel)
    results = [
        replace(_result(2 * k + j, resolve_link(name)), message_size=size)
        for k, name in enumerate(("lan", "lte"))
        for j, size in enumerate((64, 1024))
    ]
    panel.show_results(results)
    panel._scl_combo.setCurrentText("compute")
    names = [name for name, *_ in panel._scaling_groups]
    # A key agreement recorded before jobs named their exchange: session, said before the link.
    assert names == [
        "X25519 + AES-GCM [cryptography] (session) over LAN",
        "X25519 + AES-GCM [cryptography] (session) over LTE",
    ]

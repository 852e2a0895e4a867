"""The link chooser of the job settings: plain loopback, a named link, a custom one, or a sweep.

A loopback or load job may run over an emulated link (app.core.link): a preset's name ("lte"),
a custom object {delay_ms, jitter_ms, rate_kbit, loss_percent}, or a sweep over several
("links"); under it, how the link is emulated and the packet path's TCP
(app.gui.config.path_settings). A job's settings hold them as `JobSpec` does (a name or a `LinkSpec`; a list
for a sweep), and `link_fields` writes them back as a profile does. The spin boxes take
their limits from the model (`LinkSpec`'s fields); what needs more than one field or
this machine (jitter beyond the delay, loss without netem) is left to the core's check,
whose one-line error the panel shows and marks here (`mark_invalid`).

Like the rest of the settings group, the chooser shows the value the picked jobs share
("mixed" when they differ) and reports only an edit the user made.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError
from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QListWidget,
    QListWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.core.link.probe import loss_refusal
from app.core.settings.links import (
    MAX_RATE_KBIT,
    LinkPresetError,
    LinkSpec,
    link_presets,
    loss_text,
    numbers_text,
    resolve_link,
)
from app.core.settings.profile import field_limits
from app.core.transport.netns import packet_path_refusal
from app.core.vocab import LinkEmulationChoice, Mode
from app.gui.config.path_settings import PathSettings

#: A job's link as its settings hold it: a preset's name or a custom link (a dict only when
#: the spin boxes made something the model refused: the core's check then names it).
LinkSetting = str | LinkSpec | dict[str, Any]

MIXED_TEXT = "mixed"
NONE_TEXT = "none (plain loopback)"
CUSTOM_TEXT = "Custom…"
SWEEP_TEXT = "Sweep over several links…"
#: Why the chooser is greyed out for jobs that are neither loopback sessions nor load jobs.
NOT_LOOPBACK = (
    "Only a loopback or load job runs over an emulated link (between its sender and receiver, or "
    "its clients and server): set Mode to loopback or load. An operations job sends nothing over a "
    "network; a remote job runs over the real one."
)
#: A custom field the core refused: the red of the panel's invalid border, translucent
#: (reads on the light and the dark theme).
_INVALID_NUMBER = "background-color: rgba(211, 47, 47, 70);"
_SWEEP_TIP = "One job per ticked link, each labelled “over …” in the results"


#: A custom link's fields the window has no box for, kept as the profile had them.
_KEPT = ("burst_loss", "queue_packets", "queue_bytes")


class Choice(enum.Enum):
    """What the chooser shows besides a preset's name."""

    NONE = enum.auto()
    CUSTOM = enum.auto()
    SWEEP = enum.auto()
    MIXED = enum.auto()


# --- settings <-> profile ---------------------------------------------------------------


def _json(value: LinkSetting) -> Any:
    if isinstance(value, LinkSpec):
        return value.model_dump(mode="json", exclude_none=True)
    return value


#: A job's settings that only its link takes: how it is emulated, and the packet path's TCP.
LINK_SETTINGS = (
    "link_emulation",
    "tcp_congestion_control",
    "tcp_slow_start_after_idle",
    "tcp_connection",
)


def link_fields(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The job's "link" and "links" as a profile writes them (nothing for plain loopback).
    Both are written when both are set: the core's check then says which to drop."""
    fields: dict[str, Any] = {}
    if settings.get("link") is not None:
        fields["link"] = _json(settings["link"])
    if settings.get("links") is not None:
        fields["links"] = [_json(value) for value in settings["links"]]
    if fields:  # as the job has them: the boxes under the link (path_settings.py) or the profile
        for name in ("link_emulation", "tcp_congestion_control", "tcp_connection"):
            if settings.get(name) is not None:
                fields[name] = str(settings[name])
        if settings.get("tcp_slow_start_after_idle") is not None:
            fields["tcp_slow_start_after_idle"] = bool(settings["tcp_slow_start_after_idle"])
    return fields


def apply_link_edit(settings: dict[str, Any], name: str, value: Any) -> bool:
    """Apply an edit that concerns the link; False when `name` is not one. A job leaving
    loopback or load mode leaves its link behind (no other mode takes one)."""
    if name in ("link", "links"):
        if name == "link":
            settings["link"], settings["links"] = value, None
        else:
            settings["link"], settings["links"] = None, list(value)
        if settings["link"] is None and not settings["links"]:
            for setting in LINK_SETTINGS:  # no link, nothing to emulate it with
                settings[setting] = None
        elif settings.get("link_emulation") is None:
            # A link chosen in the window runs wherever the window runs: the packet path where
            # the machine allows it, else the stream relay, labelled so (until the Emulation box
            # under the link says otherwise; a profile's own choice is kept as opened).
            settings["link_emulation"] = LinkEmulationChoice.AUTO
    elif name == "mode" and value not in (Mode.LOOPBACK, Mode.LOAD):
        for name in ("link", "links", *LINK_SETTINGS):
            settings[name] = None
        return False  # the mode itself is the caller's
    else:
        return False
    return True


def setting_title(value: LinkSetting) -> str:
    """ "LTE" for a preset, "20 ms, 8000 kbit/s" for a custom link."""
    if isinstance(value, str):
        preset = link_presets().get(value)
        return preset.title if preset is not None else value
    try:
        spec = value if isinstance(value, LinkSpec) else LinkSpec.model_validate(value)
        return numbers_text(resolve_link(spec))
    except (ValidationError, LinkPresetError):
        return "custom"


def _setting_line(value: LinkSetting) -> str:
    """A preset's title with its numbers, or a custom link's numbers."""
    if isinstance(value, str):
        try:
            return f"{setting_title(value)} · {numbers_text(resolve_link(value))}"
        except LinkPresetError:
            return f"{value} (not a link preset)"
    return f"custom · {setting_title(value)}"


def mode_suffix(settings: Mapping[str, Any]) -> str:
    """What the tree's Mode column adds for a link: " · LTE", " · 7 links"."""
    if settings.get("links") is not None:
        count = len(settings["links"])
        return f" · {count} link{'' if count == 1 else 's'}"
    if settings.get("link") is not None:
        return f" · {setting_title(settings['link'])}"
    return ""


def mode_tip(settings: Mapping[str, Any]) -> str | None:
    """The Mode cell's tooltip: each link with its numbers (None without a link)."""
    if settings.get("links") is not None:
        return "Sweep, one job per link:\n" + "\n".join(_setting_line(value) for value in settings["links"])
    if settings.get("link") is not None:
        return f"Link: {_setting_line(settings['link'])}"
    return None


def _preset_tip(name: str) -> str:
    preset = link_presets()[name]
    return f"{preset.description}\nSource: {preset.source}"


# --- widgets ---------------------------------------------------------------------------


class _NumberBox(QDoubleSpinBox):
    """A spin box that writes 20 as "20" and 0.013 as "0.013" (not "20.000")."""

    def textFromValue(self, value: float) -> str:
        text = self.locale().toString(value, "f", self.decimals())
        point = self.locale().decimalPoint()
        return text.rstrip("0").rstrip(point) if point in text else text


def _number_box(minimum: float, maximum: float, suffix: str, decimals: int = 3) -> _NumberBox:
    box = _NumberBox()
    box.setDecimals(decimals)
    box.setRange(minimum, maximum)
    box.setSuffix(suffix)
    box.setKeyboardTracking(False)  # one edit per value typed, not one per digit
    return box


class LinkEditor(QWidget):
    """The link chooser with its custom fields and sweep list.

    Signals:
        edited(str, object): the user chose a link: ("link", name | LinkSpec | None)
            or ("links", [name | LinkSpec, ...]) for a sweep.
    """

    edited = Signal(str, object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._choices: list[str | Choice] = []
        self._shown: str | Choice = Choice.NONE
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.choice = QComboBox()
        # Preset lines are long ("satellite (GEO) · 300 ms, unlimited rate"): the box stays
        # narrow enough for the panel, its list shows them whole.
        self.choice.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.choice.setMinimumContentsLength(12)
        self.choice.currentIndexChanged.connect(self._on_choice_changed)
        layout.addWidget(self.choice)
        self.path = PathSettings()  # placed under the link's numbers, below
        self.path.edited.connect(self.edited)
        #: A custom link's settings the fields here do not show (bursty loss, the queue's
        #: bounds): kept through an edit of the numbers, as the profile had them.
        self._kept: dict[str, Any] = {}

        self.custom = QWidget()
        form = QFormLayout(self.custom)
        form.setContentsMargins(12, 0, 0, 0)
        delay, jitter, loss = (field_limits(LinkSpec, name) for name in ("delay_ms", "jitter_ms", "loss_percent"))
        self.delay = _number_box(delay.minimum, delay.maximum, " ms")
        self.delay.setToolTip("One-way delay, applied to each direction")
        self.jitter = _number_box(jitter.minimum, jitter.maximum, " ms")
        self.jitter.setToolTip(
            "Each segment's delay varies by up to this much (never reordering the stream); at most the delay"
        )
        # 0 is shown as "unlimited": a rate must be above 0, and an absent rate is unlimited.
        self.rate_up, self.rate_down = (_number_box(0, MAX_RATE_KBIT, " kbit/s") for _ in range(2))
        for box, direction in ((self.rate_up, "sender → receiver"), (self.rate_down, "receiver → sender")):
            box.setSpecialValueText("unlimited")
            box.setToolTip(f"Rate {direction}; at the bottom of the range: unlimited")
        self.loss = _number_box(loss.minimum, loss.maximum, " %")
        refusal = packet_path_refusal()
        self._loss_allowed = refusal is None
        self._loss_tip = (
            "Packets lost on the way, each direction (the packet path: the kernel's TCP retransmits them)"
            if refusal is None
            else loss_refusal()
        )
        self.loss.setEnabled(self._loss_allowed)
        self.loss.setToolTip(self._loss_tip)
        self.numbers = {
            "delay_ms": self.delay,
            "jitter_ms": self.jitter,
            "rate_up": self.rate_up,
            "rate_down": self.rate_down,
            "loss_percent": self.loss,
        }
        for label, box in (
            ("Delay", self.delay),
            ("Jitter", self.jitter),
            ("Rate up", self.rate_up),
            ("Rate down", self.rate_down),
            ("Loss", self.loss),
        ):
            box.valueChanged.connect(self._on_number_changed)
            form.addRow(label, box)
        layout.addWidget(self.custom)

        self.sweep = QListWidget()
        self.sweep.setToolTip(_SWEEP_TIP)
        self.sweep.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        # Every link in sight, their lines cut at the end (the tooltip has the whole).
        self.sweep.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.sweep.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.sweep.itemChanged.connect(self._on_sweep_changed)
        layout.addWidget(self.sweep)
        layout.addWidget(self.path)
        self.show_settings([])

    # --- showing ------------------------------------------------------------------------

    def show_settings(self, settings: Sequence[Mapping[str, Any]]) -> None:
        """Show the link the jobs share, or "mixed"; nothing is reported."""
        values = [(s.get("link"), s.get("links")) for s in settings] or [(None, None)]
        same = all(value == values[0] for value in values)
        link, links = values[0]
        shown: str | Choice
        if not same:
            shown = Choice.MIXED
        elif links is not None:
            shown = Choice.SWEEP
        elif link is None:
            shown = Choice.NONE
        elif isinstance(link, str):
            shown = link
        else:
            shown = Choice.CUSTOM
        with QSignalBlocker(self.choice), QSignalBlocker(self.sweep):
            self._fill(shown)
            if shown == Choice.CUSTOM:
                self._show_custom(link)
            self._fill_sweep(links if same and links is not None else [])
        self.path.show_settings(settings)
        self._shown = shown
        self._reveal()

    def set_allowed(self, allowed: bool) -> None:
        """Enabled for loopback and load jobs; otherwise greyed out, its tooltip saying why."""
        self.setEnabled(allowed)
        tip = "" if allowed else NOT_LOOPBACK
        self.setToolTip(tip)
        self.choice.setToolTip(
            tip
            or "The emulated network between sender and receiver "
            "(`cryptobench links` lists the presets with their sources)"
        )

    def show_none(self) -> None:
        """Plain loopback (a job that left loopback mode has no link)."""
        self.show_settings([])

    def _fill(self, shown: str | Choice) -> None:
        self.choice.clear()
        self._choices = []

        def add(text: str, data: str | Choice, tip: str | None = None) -> None:
            self.choice.addItem(text)
            if tip:
                self.choice.setItemData(self.choice.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)
            self._choices.append(data)

        if shown == Choice.MIXED:
            add(MIXED_TEXT, Choice.MIXED, "The jobs picked have different links: a choice here sets them all")
        add(NONE_TEXT, Choice.NONE, "No link: the sender and receiver talk over loopback directly")
        for name in link_presets():
            add(_setting_line(name), name, _preset_tip(name))
        if isinstance(shown, str) and shown not in link_presets():
            add(_setting_line(shown), shown, "Not a link preset: see `cryptobench links`")
        add(CUSTOM_TEXT, Choice.CUSTOM, "Your own delay, jitter and rate")
        add(SWEEP_TEXT, Choice.SWEEP, _SWEEP_TIP)
        self.choice.setCurrentIndex(self._choices.index(shown))
        view = self.choice.view()  # the open list may be wider than the box: lines whole
        view.setMinimumWidth(view.sizeHintForColumn(0) + 2 * view.frameWidth())

    def _show_custom(self, value: LinkSetting | None) -> None:
        """Put a link's numbers in the custom fields (a preset's, to start a custom link from)."""
        self._kept = {}
        if value is None:
            return
        try:
            spec = value if isinstance(value, str | LinkSpec) else LinkSpec.model_validate(value)
            link = resolve_link(spec)
        except (ValidationError, LinkPresetError):
            return  # the core's check names what is wrong with it
        if isinstance(spec, LinkSpec):
            self._kept = spec.model_dump(include=set(_KEPT), exclude_none=True)
        bursty = "burst_loss" in self._kept
        self.loss.setEnabled(self._loss_allowed and not bursty)
        self.loss.setToolTip(
            f"Bursty loss from the profile ({loss_text(link)}): edit it in the profile file"
            if bursty
            else self._loss_tip
        )
        for box, number in (
            (self.delay, link.delay_ms),
            (self.jitter, link.jitter_ms),
            (self.rate_up, link.rate_kbit_up or 0),
            (self.rate_down, link.rate_kbit_down or 0),
            (self.loss, 0.0 if bursty else link.loss_percent),
        ):
            with QSignalBlocker(box):
                box.setValue(number)

    def _fill_sweep(self, links: Sequence[LinkSetting]) -> None:
        self.sweep.clear()
        values: list[LinkSetting] = list(link_presets())
        values += [value for value in links if value not in values]  # custom links and unknown names
        for value in values:
            item = QListWidgetItem(_setting_line(value))
            item.setData(Qt.ItemDataRole.UserRole, value)
            item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if value in links else Qt.CheckState.Unchecked)
            tip = _setting_line(value)
            if isinstance(value, str) and value in link_presets():
                tip += "\n" + _preset_tip(value)
            item.setToolTip(tip)
            self.sweep.addItem(item)
        rows = max(self.sweep.count(), 1)
        self.sweep.setFixedHeight(rows * self.sweep.sizeHintForRow(0) + 2 * self.sweep.frameWidth() + 2)

    def _reveal(self) -> None:
        self.path.setVisible(self._shown != Choice.NONE)
        self.custom.setVisible(self._shown == Choice.CUSTOM)
        self.sweep.setVisible(self._shown == Choice.SWEEP)

    # --- user edits ---------------------------------------------------------------------

    def _on_choice_changed(self, index: int) -> None:
        if not 0 <= index < len(self._choices):
            return
        chosen, before = self._choices[index], self._shown
        if chosen == Choice.MIXED:
            return
        mixed = self._choices.index(Choice.MIXED) if Choice.MIXED in self._choices else -1
        if mixed >= 0:  # a choice was made: "mixed" is no longer offered
            with QSignalBlocker(self.choice):
                self.choice.removeItem(mixed)
            del self._choices[mixed]
        self._shown = chosen
        if before == Choice.NONE and chosen != Choice.NONE:
            self.path.show_link_chosen()
        if chosen == Choice.CUSTOM:
            if isinstance(before, str):  # start from the preset shown before
                self._show_custom(before)
            self._reveal()
            self.edited.emit("link", self._custom_setting())
        elif chosen == Choice.SWEEP:
            if not self._checked():  # start from every preset, the way the link presets are compared
                with QSignalBlocker(self.sweep):
                    self._fill_sweep(list(link_presets()))
            self._reveal()
            self.edited.emit("links", self._checked())
        else:
            self._reveal()
            self.edited.emit("link", None if chosen == Choice.NONE else chosen)

    def _custom_setting(self) -> LinkSetting:
        up, down = (box.value() or None for box in (self.rate_up, self.rate_down))
        data: dict[str, Any] = {
            "delay_ms": self.delay.value(),
            "jitter_ms": self.jitter.value(),
            **self._kept,
        }
        if "burst_loss" not in data:
            data["loss_percent"] = self.loss.value()
        if up is not None or down is not None:
            data["rate_kbit"] = up if up == down else {k: v for k, v in (("up", up), ("down", down)) if v}
        try:
            return LinkSpec.model_validate(data)
        except ValidationError:  # the profile's check says what, in the profile's words
            return data

    def _checked(self) -> list[LinkSetting]:
        return [
            item.data(Qt.ItemDataRole.UserRole)
            for item in (self.sweep.item(k) for k in range(self.sweep.count()))
            if item is not None and item.checkState() == Qt.CheckState.Checked
        ]

    def _on_number_changed(self, _value: float) -> None:
        if self._shown == Choice.CUSTOM:
            self.edited.emit("link", self._custom_setting())

    def _on_sweep_changed(self, _item: QListWidgetItem) -> None:
        if self._shown == Choice.SWEEP:
            self.edited.emit("links", self._checked())

    # --- problems -----------------------------------------------------------------------

    def _markable(self) -> list[QWidget]:
        # A spin box's text field, not the box: a style sheet on the box would draw its
        # arrows without the platform's style.
        return [self.choice, self.sweep, *(box.lineEdit() for box in self.numbers.values())]

    def clear_marks(self) -> None:
        for widget in self._markable():
            widget.setStyleSheet("")

    def mark_invalid(self, field: str, style: str) -> None:
        """Mark the widget of a link field the core refused ("link.jitter_ms", "links[2]")."""
        tail = field.split(".", 1)[1] if "." in field else ""
        if field.startswith("links"):
            marked: list[QWidget] = [self.sweep if self._shown == Choice.SWEEP else self.choice]
        elif tail.startswith("rate_kbit"):
            marked = [self.rate_up, self.rate_down]
        elif tail in self.numbers:
            marked = [self.numbers[tail]]
        else:
            marked = [self.choice]
        for widget in marked:
            if isinstance(widget, QDoubleSpinBox):  # its frameless text field shows a tint, not a border
                widget.lineEdit().setStyleSheet(_INVALID_NUMBER)
            else:
                widget.setStyleSheet(style)

"""The editor of the measurement settings of the jobs the user picked.

Each profile job has its own message sizes, samples, warm-up, pause, tamper count,
mode, in loopback and load mode a link (link_editor), and in load mode its clients,
server workers, offered rates and step durations (load_editor); the rows a mode does not
use are hidden (a load job runs no sample rounds). This group shows the values of the jobs it edits (the selected rows, or every
checked row when none is selected): a value the jobs share is shown as it is, a value
they do not share reads "mixed", and an edit reports only the field the user changed,
so the panel changes that field of those jobs and nothing else. It never shows one
job's values as another's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from app.core.errors import CryptoBenchError
from app.core.profile.sizes import human_size, parse_size_list
from app.core.schemes import registry
from app.core.serve import DEFAULT_PORT
from app.core.settings.load import DEFAULT_LOAD_MESSAGE_SIZE, IGNORED_BY_LOAD
from app.core.settings.profile import DEFAULT_MESSAGE_SIZES, FieldLimits, JobSpec, ProfileError, field_limits
from app.core.vocab import DEFAULT_EXCHANGE, KEY_ESTABLISHING, Exchange, Mode, PlacementPolicy, default_placement
from app.gui.config.link_editor import LinkEditor, apply_link_edit
from app.gui.config.load_editor import LOAD_KEYS, LoadEditor, apply_load_edit
from app.gui.messages import FieldNote

QUICK_SIZES = (18, 1024, 1 << 20, 10 << 20)
MIXED = "mixed"
#: The key exchange box's choices: the pattern's name first, the one every face uses.
EXCHANGE_CHOICES = {
    Exchange.SESSION: "session: one key per session, then AEAD (default)",
    Exchange.PER_MESSAGE: "per-message: a fresh key in every message",
}
#: What the box reads when no job shown establishes a key.
NO_EXCHANGE = "none: no key to establish"
#: The settings a job carries besides scheme, backend and parameters.
SETTING_KEYS = (
    "mode",
    "message_sizes",
    "samples",
    "warmup",
    "keygen_samples",
    "pause_ms",
    "tamper",
    "label",
    "tcp_nodelay",
    "link",
    "links",
    "link_emulation",
    "tcp_congestion_control",
    "tcp_slow_start_after_idle",
    "tcp_connection",
    "placement",
    "exchange",
    *LOAD_KEYS,
)
#: Spin-box fields: (name, label).
_NUMBERS = (
    ("samples", "Samples"),
    ("warmup", "Warm-up"),
    ("keygen_samples", "Key generations"),
    ("pause_ms", "Pause between samples"),
    ("tamper", "Tampered payloads"),
)
#: Their names, in the order a saved profile lists them.
NUMBER_KEYS = tuple(name for name, _ in _NUMBERS)
#: The spin boxes a load job does not use (tamper it does: tampered requests must be refused);
#: the core refuses a load job that sets one (`IGNORED_BY_LOAD`).
NOT_FOR_LOAD = tuple(IGNORED_BY_LOAD)
#: Their defaults and limits are the profile format's own, read from `JobSpec`.
_LIMITS: dict[str, FieldLimits] = {name: field_limits(JobSpec, name) for name, _ in _NUMBERS}


def _set_minimum(spin: QSpinBox | QDoubleSpinBox, minimum: float, value: float | None = None) -> None:
    """Set a spin box's minimum (and value). A QSpinBox holds a count: whole numbers only."""
    if isinstance(spin, QSpinBox):
        spin.setMinimum(int(minimum))
        if value is not None:
            spin.setValue(int(value))
    else:
        spin.setMinimum(minimum)
        if value is not None:
            spin.setValue(value)


def default_settings() -> dict[str, Any]:
    """A new job's settings: the profile format's own defaults."""
    return {key: JobSpec.model_fields[key].default for key in SETTING_KEYS}


@dataclass
class JobEntry:
    """One tree row: a scheme with its backend, parameters and its own settings."""

    scheme: str
    backend: str
    params: dict[str, Any]
    settings: dict[str, Any] = field(default_factory=default_settings)

    @property
    def establishes_a_key(self) -> bool:
        """Whether the job's scheme has an exchange pattern (key agreement, hybrid KEM)."""
        try:
            return registry.get_spec(self.scheme).family in KEY_ESTABLISHING
        except CryptoBenchError:  # an unknown scheme: the panel's check names it
            return False

    def exchange(self) -> Exchange | None:
        """The exchange pattern the job runs (its own, else the default), None where it has none."""
        if not self.establishes_a_key:
            return None
        return Exchange(self.settings.get("exchange") or DEFAULT_EXCHANGE)

    def sizes(self) -> list[int]:
        """The sizes the job measures (the format's default when the profile names none:
        for a load job one short message)."""
        if self.settings.get("message_sizes"):
            return list(self.settings["message_sizes"])
        return [DEFAULT_LOAD_MESSAGE_SIZE] if self.settings.get("mode") == Mode.LOAD else list(DEFAULT_MESSAGE_SIZES)


def shared(values: Sequence[Any]) -> tuple[bool, Any]:
    """(True, value) when every value is the same, (False, None) when they differ."""
    if values and all(value == values[0] for value in values):
        return True, values[0]
    return False, None


class JobSettingsEditor(QGroupBox):
    #: (field, value) the user changed. Fields: the spin boxes' names, "mode",
    #: "size" with (size, present), "custom_sizes" with the list typed, and "link" or
    #: "links" as `LinkEditor.edited` reports them, "placement" with a PlacementPolicy, and
    #: the load fields as `LoadEditor.edited` reports them.
    edited = Signal(str, object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__("Every checked job", parent)
        self._loading = False
        #: The custom-sizes text cannot be parsed: the message, for the panel's check.
        self.custom_error: str | None = None
        form = QFormLayout(self)
        sizes_row = QHBoxLayout()
        self.size_boxes: dict[int, QCheckBox] = {}
        for size in QUICK_SIZES:
            box = QCheckBox(human_size(size))
            box.checkStateChanged.connect(lambda state, s=size: self._size_changed(s, state))
            self.size_boxes[size] = box
            sizes_row.addWidget(box)
        form.addRow("Message sizes", sizes_row)
        self.custom_sizes = QLineEdit(placeholderText="more sizes, e.g. 64, 4K, 2M")
        self.custom_sizes.textChanged.connect(self._custom_changed)
        form.addRow("", self.custom_sizes)
        # Each field that can be refused has its note below it, its lines reserved: the
        # reason shows next to the field, and nothing below it moves (app/gui/messages.py).
        self.sizes_note = FieldNote("In bytes: 64, 4K (4 KiB), 2M (2 MiB)", lines=2)
        form.addRow("", self.sizes_note)
        self.numbers: dict[str, QSpinBox | QDoubleSpinBox] = {}
        for name, label in _NUMBERS:
            low, high = _LIMITS[name].minimum, _LIMITS[name].maximum
            spin: QSpinBox | QDoubleSpinBox
            if name == "pause_ms":
                spin = QDoubleSpinBox(minimum=low, maximum=high, decimals=1, suffix=" ms")
            else:
                spin = QSpinBox(minimum=int(low), maximum=int(high))
            # "mixed" is shown as the value one below the minimum, never a value a job can take.
            spin.setSpecialValueText("")
            spin.valueChanged.connect(lambda value, n=name: self._number_changed(n, value))
            self.numbers[name] = spin
            form.addRow(label, spin)
        self.samples, self.warmup = self.numbers["samples"], self.numbers["warmup"]
        self.keygen_samples, self.pause, self.tamper = (
            self.numbers["keygen_samples"],
            self.numbers["pause_ms"],
            self.numbers["tamper"],
        )
        self.mode = QComboBox()
        for mode in Mode:
            self.mode.addItem(mode.label, mode)  # Qt keeps the data as the plain string
        self.mode.currentIndexChanged.connect(self._mode_changed)
        form.addRow("Mode", self.mode)
        self.placement = QComboBox()
        for policy in PlacementPolicy:
            # A job without a setting runs with the default, shown as chosen (docs/placement.md).
            self.placement.addItem(policy.label, policy)
        self.placement.setToolTip(
            "Which CPUs each job's processes may run on: all on one CPU, sender and "
            "receiver on different CPUs, or wherever the scheduler puts them"
        )
        self.placement.currentIndexChanged.connect(self._placement_changed)
        form.addRow("CPU placement", self.placement)
        self.exchange = QComboBox()
        for pattern, words in EXCHANGE_CHOICES.items():
            self.exchange.addItem(words, pattern)
        self.exchange.setToolTip(
            "Key agreement and hybrid (KEM) jobs: establish one key per session, in the handshake, then AEAD per "
            "message (session, as TLS does), or a fresh key in every message (per-message, KEM-DEM / ECIES-style). "
            "Other families establish no key."
        )
        self.exchange.currentIndexChanged.connect(self._exchange_changed)
        form.addRow("Key exchange", self.exchange)
        self.link = LinkEditor()
        self.link.edited.connect(self._link_edited)
        form.addRow("Link", self.link)
        self.link_note = FieldNote()
        form.addRow("", self.link_note)
        self.load = LoadEditor(form, self)
        self.load.edited.connect(self._link_edited)  # relayed as they are, like the link's
        self._form = form
        #: The modes of the jobs shown: which rows apply.
        self._modes: set[str] = {Mode.OPERATIONS}
        self.remote_host = QLineEdit(placeholderText="host")
        self.remote_port = QSpinBox(minimum=1, maximum=65535, value=DEFAULT_PORT)
        self.token_file = QLineEdit(placeholderText="token file")
        browse = QPushButton("…")
        browse.setFixedWidth(28)
        browse.setToolTip("Choose the server's token file")
        browse.clicked.connect(self._browse_token)
        remote_row = QHBoxLayout()
        remote_row.addWidget(self.remote_host, 2)
        remote_row.addWidget(self.remote_port, 1)
        token_row = QHBoxLayout()
        token_row.addWidget(self.token_file)
        token_row.addWidget(browse)
        self.remote_widgets = (self.remote_host, self.remote_port, self.token_file, browse)
        form.addRow("Server", remote_row)
        form.addRow("Token", token_row)
        self.remote_note = FieldNote()
        form.addRow("", self.remote_note)
        #: The notes by the field the core's errors name (see ConfigPanel._describe).
        self.notes = {
            "sizes": self.sizes_note,
            "link": self.link_note,
            "rates": self.load.rates_note,
            "cluster": self.load.cluster_note,
            "remote": self.remote_note,
        }
        self.show_entries([], "Every checked job")

    # --- showing ------------------------------------------------------------------------

    def show_entries(self, entries: Sequence[JobEntry], title: str) -> None:
        """Show what `entries` hold: shared values as they are, the others as mixed."""
        self._loading = True
        try:
            self.setTitle(title)
            self.setEnabled(bool(entries))
            shown = list(entries) or [JobEntry("", "", {})]  # defaults, greyed, when nothing is picked
            for name, spin in self.numbers.items():
                same, value = shared([entry.settings[name] for entry in shown])
                low = _LIMITS[name].minimum
                spin.setSpecialValueText("" if same else MIXED)
                _set_minimum(spin, low if same else low - 1, value if same else low - 1)
            same, mode = shared([entry.settings["mode"] for entry in shown])
            mixed_index = self.mode.findData(None)
            if same and mixed_index >= 0:
                self.mode.removeItem(mixed_index)
            if not same and mixed_index < 0:
                self.mode.insertItem(0, MIXED, None)
            self.mode.setCurrentIndex(self.mode.findData(mode))
            same, policy = shared(
                [entry.settings.get("placement") or default_placement(entry.settings["mode"]) for entry in shown]
            )
            mixed_index = self.placement.findData(None)
            if same and mixed_index >= 0:
                self.placement.removeItem(mixed_index)
            if not same and mixed_index < 0:
                self.placement.insertItem(0, MIXED, None)
            self.placement.setCurrentIndex(self.placement.findData(policy))
            self._show_exchange(list(entries))
            size_sets = [set(entry.sizes()) for entry in shown]
            for size, box in self.size_boxes.items():
                having = sum(size in sizes for sizes in size_sets)
                box.setTristate(0 < having < len(size_sets))
                box.setCheckState(
                    Qt.CheckState.Checked
                    if having == len(size_sets)
                    else Qt.CheckState.Unchecked
                    if having == 0
                    else Qt.CheckState.PartiallyChecked
                )
            same, custom = shared([sorted(sizes - set(QUICK_SIZES)) for sizes in size_sets])
            self.custom_sizes.setText(", ".join(human_size(s).replace(" ", "") for s in custom) if same else "")
            self.custom_sizes.setPlaceholderText(
                "more sizes, e.g. 64, 4K, 2M" if same else "mixed: sizes typed here replace each job's other sizes"
            )
            self.custom_error = None
            self.link.show_settings([entry.settings for entry in entries])
            self.load.show_settings([entry.settings for entry in entries])
            self._modes = {entry.settings["mode"] for entry in shown}
            self.update_remote_enabled()
        finally:
            self._loading = False

    def _show_exchange(self, entries: list[JobEntry]) -> None:
        """The pattern of the shown key-establishing jobs (mixed where they differ); the row is
        greyed, saying why, when none of them establishes a key."""
        keyed = [entry for entry in entries if entry.establishes_a_key]
        self.exchange.setEnabled(bool(keyed))
        same, pattern = shared([entry.exchange() for entry in keyed])
        mixed_index = self.exchange.findData(None)
        if (same or not keyed) and mixed_index >= 0:
            self.exchange.removeItem(mixed_index)
        if keyed and not same and mixed_index < 0:
            self.exchange.insertItem(0, MIXED, None)
        self.exchange.setCurrentIndex(self.exchange.findData(pattern if keyed else DEFAULT_EXCHANGE))
        if not keyed:
            self.exchange.setItemText(self.exchange.currentIndex(), NO_EXCHANGE)
        else:
            for k in range(self.exchange.count()):
                data = self.exchange.itemData(k)
                if data is not None:
                    self.exchange.setItemText(k, EXCHANGE_CHOICES[Exchange(data)])

    def update_remote_enabled(self) -> None:
        """Enable the remote fields and the link for the modes that take them; show the
        load fields where a load job is shown and the sample rounds where another is."""
        remote = self.mode.currentData() == Mode.REMOTE
        for widget in self.remote_widgets:
            widget.setEnabled(remote)
        self.link.set_allowed(self.mode.currentData() in (Mode.LOOPBACK, Mode.LOAD))
        self.load.set_visible(Mode.LOAD in self._modes)
        same, default = shared([default_placement(mode) for mode in self._modes])
        for k in range(self.placement.count()):
            policy = self.placement.itemData(k)
            if policy is not None:
                self.placement.setItemText(
                    k, PlacementPolicy(policy).label + (" (default)" if same and policy == default else "")
                )
        for name in NOT_FOR_LOAD:
            self._form.setRowVisible(self.numbers[name], bool(self._modes - {Mode.LOAD}))

    # --- user edits ---------------------------------------------------------------------

    def _number_changed(self, name: str, value: float) -> None:
        spin = self.numbers[name]
        if self._loading or (spin.specialValueText() and value == spin.minimum()):
            return  # still "mixed": nothing chosen yet
        if spin.specialValueText():  # a value was chosen: "mixed" is no longer offered
            self._loading = True
            spin.setSpecialValueText("")
            _set_minimum(spin, spin.minimum() + 1)
            self._loading = False
        self.edited.emit(name, float(value) if name == "pause_ms" else int(value))

    def _mode_changed(self, _index: int) -> None:
        mode = self.mode.currentData()
        if self._loading or mode is None:
            return
        self._loading = True
        mixed_index = self.mode.findData(None)
        if mixed_index >= 0:
            self.mode.removeItem(mixed_index)
        self._loading = False
        if mode not in (Mode.LOOPBACK, Mode.LOAD):
            self.link.show_none()  # the jobs leave their link behind (apply_edit)
        self._modes = {mode}
        self.update_remote_enabled()
        self.edited.emit("mode", mode)

    def _placement_changed(self, _index: int) -> None:
        policy = self.placement.currentData()
        if self._loading or policy is None:
            return
        self._loading = True
        mixed_index = self.placement.findData(None)
        if mixed_index >= 0:
            self.placement.removeItem(mixed_index)
        self._loading = False
        self.edited.emit("placement", PlacementPolicy(policy))

    def _exchange_changed(self, _index: int) -> None:
        pattern = self.exchange.currentData()
        if self._loading or pattern is None:
            return
        self._loading = True
        mixed_index = self.exchange.findData(None)
        if mixed_index >= 0:
            self.exchange.removeItem(mixed_index)
        self._loading = False
        self.edited.emit("exchange", Exchange(pattern))

    def _size_changed(self, size: int, state: Qt.CheckState) -> None:
        if self._loading:
            return
        box = self.size_boxes[size]
        if state == Qt.CheckState.PartiallyChecked:  # a click never means "mixed": it means "all"
            box.setCheckState(Qt.CheckState.Checked)
            return
        self._loading = True
        box.setTristate(False)
        self._loading = False
        self.edited.emit("size", (size, state == Qt.CheckState.Checked))

    def _custom_changed(self, text: str) -> None:
        if self._loading:
            return
        try:
            sizes = parse_size_list(text)
        except ProfileError as exc:
            self.custom_error = str(exc)
            self.edited.emit("custom_sizes", None)  # revalidate: the error is shown, nothing changes
            return
        self.custom_error = None
        self.edited.emit("custom_sizes", sizes)

    def _link_edited(self, name: str, value: object) -> None:
        if not self._loading:
            self.edited.emit(name, value)

    def _browse_token(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Token file of the server")
        if path:
            self.token_file.setText(path)


def apply_edit(entry: JobEntry, name: str, value: Any) -> None:
    """Change one setting of one job, as `JobSettingsEditor.edited` reported it."""
    if apply_link_edit(entry.settings, name, value) or apply_load_edit(entry.settings, name, value):
        return
    if name == "size":
        size, present = value
        sizes = [s for s in entry.sizes() if s != size] + ([size] if present else [])
        entry.settings["message_sizes"] = sorted(sizes)
    elif name == "custom_sizes":
        if value is None:
            return
        kept = [s for s in entry.sizes() if s in QUICK_SIZES]
        entry.settings["message_sizes"] = sorted(set(kept) | set(value))
    elif name in NOT_FOR_LOAD and entry.settings.get("mode") == Mode.LOAD:
        return  # a load job has no such setting: the edit is for the other jobs of the selection
    elif name == "exchange" and not entry.establishes_a_key:
        return  # no key to establish: the edit is for the key agreement and hybrid jobs selected
    else:
        entry.settings[name] = value
        if name == "mode" and value == Mode.LOAD:
            # What a load job does not use goes back to its default (saved profiles omit it),
            # as a job leaving loopback leaves its link: kept, the core would refuse the job
            # for a field the window no longer shows.
            defaults = default_settings()
            for unused in NOT_FOR_LOAD:
                entry.settings[unused] = defaults[unused]

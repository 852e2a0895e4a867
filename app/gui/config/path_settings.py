"""How a job's link is emulated, and the packet path's TCP: three choices under the link.

`"link_emulation"` (packet path, stream relay, or the packet path where this machine
offers it), `"tcp_congestion_control"` (the kernel's default or one the kernel offers) and
`"tcp_connection"` (the session's warm connection or a fresh one per message) are job
settings, shown here for the jobs picked: the value they share, or "mixed". Choosing
one reports it as the job settings editor reports any edit; what the machine cannot do
is greyed out with the reason, and what the core still refuses (TCP settings over the
stream relay) is named by its one-line check, as for every other setting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import QSignalBlocker, Qt, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QComboBox, QFormLayout, QWidget

from app.core.profile.resolve import AVAILABLE_CONGESTION_CONTROL
from app.core.transport.netns import packet_path_refusal
from app.core.vocab import DEFAULT_LINK_EMULATION, CongestionControl, LinkEmulationChoice, TcpConnection

MIXED_TEXT = "mixed"
_MIXED = object()  # the "mixed" item's data: never a setting
_CONGESTION_TIP = "The packet path's TCP congestion control, at both ends"
_CONNECTION_TIP = "Which TCP connection the messages travel on (the packet path only)"
_RELAY_TIP = "Over the stream relay each end's TCP talks to the link process on loopback: choose the packet path"


def _kernel_default() -> str | None:
    """The congestion control a namespace starts with (the host's default), or None."""
    try:
        return (AVAILABLE_CONGESTION_CONTROL.parent / "tcp_congestion_control").read_text().strip() or None
    except OSError:
        return None


def _offered() -> set[str] | None:
    """The congestion controls this kernel offers (None: it does not say)."""
    try:
        return set(AVAILABLE_CONGESTION_CONTROL.read_text().split())
    except OSError:
        return None


class _Choice(QComboBox):
    """A combo box of (text, value) items that shows the jobs' shared value or "mixed"."""

    def __init__(self, items: Sequence[tuple[str, object, str]]) -> None:
        super().__init__()
        for text, value, tip in items:
            self.addItem(text, value)
            self.setItemData(self.count() - 1, tip, Qt.ItemDataRole.ToolTipRole)

    def show_values(self, values: Sequence[object]) -> None:
        with QSignalBlocker(self):
            mixed = self.findData(_MIXED)
            if mixed >= 0:
                self.removeItem(mixed)
            if values and any(value != values[0] for value in values):
                self.insertItem(0, MIXED_TEXT, _MIXED)
                self.setCurrentIndex(0)
                return
            index = self.findData(values[0] if values else None)
            self.setCurrentIndex(max(index, 0))

    def disable_item(self, value: object, tip: str) -> None:
        index = self.findData(value)
        model = self.model()
        if index >= 0 and isinstance(model, QStandardItemModel):
            item = model.item(index)
            if item is not None:
                item.setEnabled(False)
                item.setToolTip(tip)


class PathSettings(QWidget):
    """The emulation and the packet path's TCP for the jobs picked.

    Signals:
        edited(str, object): ("link_emulation" | "tcp_congestion_control" |
            "tcp_connection", the value; None: the default).
    """

    edited = Signal(str, object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        refusal = packet_path_refusal()
        form = QFormLayout(self)
        form.setContentsMargins(12, 0, 0, 0)
        self.emulation = _Choice(
            [
                (
                    "packet path, else stream relay",
                    LinkEmulationChoice.AUTO,
                    "The kernel's own TCP over emulated IP packets where this machine allows it"
                    + ("" if refusal is None else f" (here it does not: {refusal}; the stream relay runs instead)"),
                ),
                (
                    "packet path",
                    LinkEmulationChoice.PACKET,
                    "The kernel's own TCP over emulated IP packets: slow start, ACK clocking, loss and retransmission",
                ),
                (
                    "stream relay",
                    LinkEmulationChoice.STREAM_RELAY,
                    "Each direction's bytes through a delay line: runs anywhere, no TCP dynamics on the path, no loss",
                ),
            ]
        )
        # A job that names no emulation runs with the default; shown as that choice.
        self._default_emulation = LinkEmulationChoice(DEFAULT_LINK_EMULATION)
        if refusal is not None:
            self.emulation.disable_item(LinkEmulationChoice.PACKET, f"Not available here: {refusal}")
        self.emulation.setToolTip("How the link is emulated (docs/links.md)")
        default = _kernel_default()
        offered = _offered()
        self.congestion = _Choice(
            [(f"kernel default ({default})" if default else "kernel default", None, "The namespace's default")]
            + [(str(control), control, f"Both ends' sockets use {control}") for control in CongestionControl]
        )
        for control in CongestionControl:
            if offered is not None and str(control) not in offered:
                self.congestion.disable_item(control, f"This kernel does not offer {control}")
        self.congestion.setToolTip(_CONGESTION_TIP)
        self.connection = _Choice(
            [
                ("warm", None, "Every message on the session's one connection, whose window has grown"),
                (
                    "fresh per message",
                    TcpConnection.FRESH,
                    "Every message on a new connection: slow start from the initial window, what first contact pays",
                ),
            ]
        )
        self.connection.setToolTip(_CONNECTION_TIP)
        self._names = {
            "link_emulation": self.emulation,
            "tcp_congestion_control": self.congestion,
            "tcp_connection": self.connection,
        }
        for label, (name, box) in zip(("Emulation", "TCP", "Connection"), self._names.items(), strict=True):
            box.currentIndexChanged.connect(lambda _index, name=name, box=box: self._changed(name, box))
            form.addRow(label, box)

    def show_settings(self, settings: Sequence[Mapping[str, Any]]) -> None:
        """Show the values the jobs share (a job without one: the default), nothing reported."""
        for name, box in self._names.items():
            values = [entry.get(name) for entry in settings]
            if name == "link_emulation":
                values = [value or self._default_emulation for value in values]
            elif name == "tcp_connection":
                values = [None if value == TcpConnection.WARM else value for value in values]
            box.show_values(values)
        self._enable_tcp()

    def show_link_chosen(self) -> None:
        """Jobs that had no link got one: they run on the packet path where the machine offers
        it (app.gui.config.link_editor.apply_link_edit sets "auto"), the TCP at its defaults."""
        self.show_settings([{"link_emulation": LinkEmulationChoice.AUTO}])

    def _enable_tcp(self) -> None:
        """The TCP choices apply to the packet path only: greyed out over the stream relay."""
        relay = self.emulation.currentData() == LinkEmulationChoice.STREAM_RELAY
        for box, tip in ((self.congestion, _CONGESTION_TIP), (self.connection, _CONNECTION_TIP)):
            box.setEnabled(not relay)
            box.setToolTip(_RELAY_TIP if relay else tip)

    def _changed(self, name: str, box: _Choice) -> None:
        value = box.currentData()
        if value is _MIXED:
            return
        mixed = box.findData(_MIXED)
        if mixed >= 0:  # a choice was made for every job picked
            with QSignalBlocker(box):
                box.removeItem(mixed)
        self.edited.emit(name, value)
        if name == "link_emulation":
            if value == LinkEmulationChoice.STREAM_RELAY:  # its ends' TCP is not the path's: back to the defaults
                for other in ("tcp_congestion_control", "tcp_connection"):
                    other_box = self._names[other]
                    if other_box.currentData() is not None:
                        other_box.setCurrentIndex(other_box.findData(None))  # reported as an edit
            self._enable_tcp()

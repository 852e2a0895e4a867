"""The load fields of the job settings: clients, server workers, offered rate(s), duration
and warm-up of the jobs in mode load (`app.core.settings.load.LoadFields`), and where the
load comes from: this machine's one generator, or generators on a Dask cluster's workers
(the scheduler's address, how many generators, and the user's leave to send the server's
token over plain TCP).

A job's settings hold these as the profile writes them: None where the profile names
nothing (the core's default applies, `LoadSettings`), so a loaded profile saves back as
it was. The offered rate is one of three forms: sweep to the knee (`"rate_per_s":
"sweep"`, the default), one rate (`rate_per_s`), or several (`rates`). Limits come from the
model's `Field`s (`load_limits`); what needs more than one field is the core's check,
whose message the panel shows. Like the rest of the settings group, each box shows the
value the picked load jobs share ("mixed" when they differ) and reports only the edit the
user made.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import annotated_types
from PySide6.QtCore import QObject, QSignalBlocker, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLayout,
    QLineEdit,
    QSpinBox,
    QWidget,
)

from app.core.settings.load import (
    CLUSTER_SCHEMES,
    MAX_GENERATORS,
    MAX_RATE_PER_S,
    MAX_STEPS,
    SWEEP,
    LoadFields,
    LoadSettings,
    cluster_address,
)
from app.core.vocab import Mode
from app.gui.messages import FieldNote

#: The settings keys of a load job, in the order a saved profile lists them.
LOAD_KEYS: tuple[str, ...] = tuple(LoadFields.model_fields)
MIXED = "mixed"
#: Decimals of the seconds boxes: a bound "greater than 0" becomes 0.01 s.
_DECIMALS = 2


@dataclass(frozen=True)
class Bounds:
    """A load field's default (`LoadSettings`, what None resolves to) and inclusive bounds
    (`LoadFields`' `Field(ge/gt, le)`; gt as its next step at the box's decimals)."""

    default: float
    minimum: float
    maximum: float


def load_limits(name: str) -> Bounds:
    """The default and bounds of the numeric load field `name`, read from the models."""
    minimum = maximum = None
    for constraint in LoadFields.model_fields[name].metadata:
        if isinstance(constraint, annotated_types.Ge) and isinstance(constraint.ge, int | float):
            minimum = float(constraint.ge)
        elif isinstance(constraint, annotated_types.Gt) and isinstance(constraint.gt, int | float):
            minimum = float(constraint.gt) + 10.0**-_DECIMALS
        elif isinstance(constraint, annotated_types.Le) and isinstance(constraint.le, int | float):
            maximum = float(constraint.le)
    if minimum is None or maximum is None:
        raise TypeError(f"LoadFields.{name} is not a bounded number")
    return Bounds(float(getattr(LoadSettings(), name)), minimum, maximum)


class RateForm(enum.Enum):
    """How a load job's offered rate is given."""

    SWEEP = "Sweep to the knee"
    ONE = "One rate"
    SEVERAL = "Several rates"


def rate_form(settings: Mapping[str, Any]) -> RateForm:
    if settings.get("rates") is not None:
        return RateForm.SEVERAL
    if isinstance(settings.get("rate_per_s"), int | float):
        return RateForm.ONE
    return RateForm.SWEEP


def rates_text(rates: Sequence[float]) -> str:
    return ", ".join(f"{rate:g}" for rate in rates)


def parse_rates(text: str) -> list[float]:
    """ "200, 1000 5000" -> [200.0, 1000.0, 5000.0]; ValueError naming what is wrong."""
    words = [word for word in re.split(r"[\s,;]+", text.strip()) if word]
    if not words:
        raise ValueError("type the offered rates, e.g. 200, 1000, 5000")
    rates = []
    for word in words:
        try:
            rate = float(word.replace("_", ""))
        except ValueError:
            raise ValueError(f"offered rates: {word!r} is not a number of requests per second") from None
        if not 0 < rate <= MAX_RATE_PER_S:
            raise ValueError(f"offered rates: {word} is not more than 0 and at most {MAX_RATE_PER_S:,.0f} per second")
        rates.append(rate)
    if len(rates) > MAX_STEPS:
        raise ValueError(f"offered rates: at most {MAX_STEPS} steps (got {len(rates)})")
    return rates


def rate_summary(settings: Mapping[str, Any]) -> str:
    """The tree's short form: "sweep", "200/s", "3 rates"."""
    form = rate_form(settings)
    if form is RateForm.ONE:
        return f"{settings['rate_per_s']:g}/s"
    if form is RateForm.SEVERAL:
        count = len(settings["rates"])
        return f"{settings['rates'][0]:g}/s" if count == 1 else f"{count} rates"
    return "sweep"


#: The fields only a job on a Dask cluster takes: cleared with its scheduler's address.
CLUSTER_ONLY = ("generators", "cluster_plain_tcp")


def apply_load_edit(settings: dict[str, Any], name: str, value: Any) -> bool:
    """Apply an edit that concerns the load fields; False when `name` is not one. Only a
    load job takes them, and a job leaving mode load leaves them behind (every other
    mode refuses them); a job leaving its cluster leaves the cluster's fields behind."""
    if name == "mode":
        if value != Mode.LOAD:
            settings.update(dict.fromkeys(LOAD_KEYS))
        return False  # the mode itself is the caller's
    if name in ("rates_error", "cluster_error"):
        return True  # what was typed cannot be read: nothing changes (the panel shows why)
    if name == "cluster" and value is None and settings.get("mode") == Mode.LOAD:
        settings.update(dict.fromkeys(CLUSTER_ONLY))
    if name not in ("rate", *LOAD_KEYS):
        return False
    if settings.get("mode") != Mode.LOAD:
        return True  # picked beside load jobs: not for this one
    if name == "rate":
        settings["rate_per_s"], settings["rates"] = (None, list(value)) if isinstance(value, list) else (value, None)
    else:
        settings[name] = value
    return True


def _shared(values: Sequence[Any]) -> tuple[bool, Any]:
    if values and all(value == values[0] for value in values):
        return True, values[0]
    return False, None


#: The generators box at 0: the profile leaves `generators` out, and every worker runs one.
EVERY_WORKER = "every worker"


class LoadEditor(QObject):
    """The load fields of the picked load jobs, as rows of the settings group's form (one
    label column for all). `edited(name, value)`: "clients", "server_workers",
    "duration_s", "warmup_s" with a number, "rate" with SWEEP, a number or a list of
    numbers; "rates_error" (value None) when the typed rates cannot be read (`error` says
    why); "cluster" with a scheduler's address or None (this machine's generator),
    "cluster_error" (value None) when the typed address is not one (`cluster_error` says
    why), "generators" with a count or None (every worker), "cluster_plain_tcp" with True
    or None."""

    edited = Signal(str, object)

    def __init__(self, form: QFormLayout, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._loading = False
        self._form = form
        #: The rates typed cannot be read: the message, for the panel's check.
        self.error: str | None = None
        #: The scheduler's address typed is not one: the message, for the panel's check.
        self.cluster_error: str | None = None
        self._rows: list[QWidget | QLayout] = []
        self.numbers: dict[str, QSpinBox | QDoubleSpinBox] = {}
        for name, label, tip in (
            (
                "clients",
                "Clients",
                "Client connections, all driven by one load-generator process (on a Dask cluster, "
                "shared among its generators)",
            ),
            ("server_workers", "Server workers", "Server processes accepting on the same port (SO_REUSEPORT)"),
            ("duration_s", "Step duration", "Each offered rate's measured window"),
            ("warmup_s", "Step warm-up", "Before each window, at the same rate, not recorded"),
        ):
            bounds = load_limits(name)
            spin: QSpinBox | QDoubleSpinBox
            if name.endswith("_s"):
                spin = QDoubleSpinBox(
                    minimum=bounds.minimum, maximum=bounds.maximum, decimals=_DECIMALS, suffix=" s", singleStep=0.5
                )
            else:
                spin = QSpinBox(minimum=int(bounds.minimum), maximum=int(bounds.maximum))
            spin.setToolTip(tip)
            spin.valueChanged.connect(lambda value, n=name: self._number_changed(n, value))
            self.numbers[name] = spin
            if name == "duration_s":
                rate_row = self._rate_row()
                form.addRow("Offered rate", rate_row)
                self._rows.append(rate_row)
                # Why typed rates are refused, next to them, in space kept for it (app/gui/messages.py).
                self.rates_note = FieldNote()
                form.addRow("", self.rates_note)
                self._rows.append(self.rates_note)
            form.addRow(label, spin)
            self._rows.append(spin)
        self._add_cluster_rows(form)
        self.show_settings([])

    def _add_cluster_rows(self, form: QFormLayout) -> None:
        """Where the load comes from: a Dask scheduler's address (empty: this machine's one
        generator), how many of its workers run a generator, and leave to send the server's
        token over plain TCP (any tcp:// scheduler, the loopback's included)."""
        schemes = " or ".join(f"{scheme}://HOST:PORT" for scheme in CLUSTER_SCHEMES)
        self.cluster = QLineEdit(placeholderText="none: one generator on this machine")
        self.cluster.setToolTip(
            f"Load from several machines: the Dask scheduler ({schemes}) whose workers each run a "
            "generator on a share of every step's rate. Start it with `dask scheduler`, and a "
            "`dask worker ADDRESS` on each client machine; empty: this machine's one generator"
        )
        self.cluster.textChanged.connect(self._cluster_changed)
        form.addRow("Dask scheduler", self.cluster)
        self.cluster_note = FieldNote()
        form.addRow("", self.cluster_note)
        self.generators = QSpinBox(minimum=0, maximum=MAX_GENERATORS)
        self.generators.setSpecialValueText(EVERY_WORKER)
        self.generators.setToolTip(
            f"How many of the scheduler's workers run a generator (1-{MAX_GENERATORS}); every worker: all of them"
        )
        self.generators.valueChanged.connect(self._generators_changed)
        self.plain_tcp = QCheckBox("Send the server's token over plain TCP")
        self.plain_tcp.setToolTip(
            "A tcp:// scheduler carries the commands, and the load server's token, unencrypted: needed "
            "for any tcp:// scheduler, one on this machine's loopback too, since anyone who reaches it runs "
            "code on its workers (tls:// with Dask's TLS settings needs no leave)"
        )
        self.plain_tcp.toggled.connect(self._plain_tcp_changed)
        form.addRow("Generators", self.generators)
        form.addRow("", self.plain_tcp)  # a row of its own: beside the count, too wide for the dock
        self._rows += [self.cluster, self.cluster_note, self.generators, self.plain_tcp]

    def set_visible(self, visible: bool) -> None:
        """Show or hide the load rows (shown where a load job is picked)."""
        for row in self._rows:
            self._form.setRowVisible(row, visible)
        self._show_form()  # a row made visible shows every widget in it: the rate's form decides

    def is_visible(self) -> bool:
        return not self.numbers["clients"].isHidden()

    def _rate_row(self) -> QHBoxLayout:
        self.rate_form = QComboBox()
        for form in RateForm:
            self.rate_form.addItem(form.value, form)
        self.rate_form.setToolTip(
            "Requests per second offered over all clients, open loop: a sweep finds the "
            "server's knee by itself; one rate or several measure those"
        )
        self.rate_form.currentIndexChanged.connect(self._form_changed)
        self.rate = QDoubleSpinBox(minimum=1.0, maximum=MAX_RATE_PER_S, decimals=1, suffix=" /s", value=1000.0)
        self.rate.setToolTip("Requests per second offered over all clients")
        self.rate.valueChanged.connect(self._rate_changed)
        self.rates = QLineEdit(placeholderText="e.g. 200, 1000, 5000")
        self.rates.setToolTip(f"One step per rate, in this order (at most {MAX_STEPS})")
        self.rates.textChanged.connect(self._rates_changed)
        row = QHBoxLayout()
        row.addWidget(self.rate_form)
        row.addWidget(self.rate, 1)
        row.addWidget(self.rates, 1)
        return row

    # --- showing ------------------------------------------------------------------------

    def show_settings(self, entries: Sequence[Mapping[str, Any]]) -> None:
        """Show the load fields the load jobs among `entries` share (None: the default)."""
        self._loading = True
        try:
            shown = [entry for entry in entries if entry.get("mode") == Mode.LOAD] or [{}]
            for name, spin in self.numbers.items():
                bounds = load_limits(name)
                same, value = _shared(
                    [entry.get(name) if entry.get(name) is not None else bounds.default for entry in shown]
                )
                step = 1.0 if isinstance(spin, QSpinBox) else 10.0**-_DECIMALS
                low = bounds.minimum if same else bounds.minimum - step
                # "mixed" is shown as the value one step below the minimum, never a value a job can take.
                spin.setSpecialValueText("" if same else MIXED)
                if isinstance(spin, QSpinBox):
                    spin.setMinimum(int(low))
                    spin.setValue(int(value if same else low))
                else:
                    spin.setMinimum(low)
                    spin.setValue(float(value if same else low))
            same, form = _shared([rate_form(entry) for entry in shown])
            with QSignalBlocker(self.rate_form):
                mixed = self.rate_form.findData(None)
                if same and mixed >= 0:
                    self.rate_form.removeItem(mixed)
                if not same and mixed < 0:
                    self.rate_form.insertItem(0, MIXED, None)
                self.rate_form.setCurrentIndex(self.rate_form.findData(form))
            same_rate, rate = _shared([entry.get("rate_per_s") for entry in shown])
            if form is RateForm.ONE and same_rate:
                self.rate.setValue(float(rate))
            same_rates, rates = _shared([list(entry.get("rates") or []) for entry in shown])
            self.rates.setText(rates_text(rates) if form is RateForm.SEVERAL and same_rates else "")
            self.error = None
            self._show_cluster(shown)
            self._show_form()
        finally:
            self._loading = False

    def _show_cluster(self, shown: Sequence[Mapping[str, Any]]) -> None:
        same, address = _shared([entry.get("cluster") or "" for entry in shown])
        self.cluster.setText(address if same else "")
        self.cluster.setPlaceholderText(
            "none: one generator on this machine" if same else f"{MIXED}: type one address for all"
        )
        self.cluster_error = None
        same, count = _shared([entry.get("generators") or 0 for entry in shown])
        # "mixed" one below "every worker" (0), as the other boxes show it below their minimum.
        self.generators.setSpecialValueText(EVERY_WORKER if same else MIXED)
        self.generators.setMinimum(0 if same else -1)
        self.generators.setValue(int(count) if same else -1)
        self.plain_tcp.setChecked(all(entry.get("cluster_plain_tcp") for entry in shown))
        self._enable_cluster_fields()

    def _enable_cluster_fields(self) -> None:
        """The generators' count and the plain-TCP leave mean something only with a scheduler."""
        placed = bool(self.cluster.text().strip()) and self.cluster_error is None
        self.generators.setEnabled(placed)
        self.plain_tcp.setEnabled(placed and self.cluster.text().strip().startswith("tcp://"))

    def _show_form(self) -> None:
        form, shown = self.rate_form.currentData(), self.is_visible()
        self.rate.setVisible(shown and form is RateForm.ONE)
        self.rates.setVisible(shown and form is RateForm.SEVERAL)

    # --- user edits ---------------------------------------------------------------------

    def _number_changed(self, name: str, value: float) -> None:
        spin = self.numbers[name]
        if self._loading or (spin.specialValueText() and value == spin.minimum()):
            return  # still "mixed": nothing chosen yet
        if spin.specialValueText():  # a value was chosen: "mixed" is no longer offered
            self._loading = True
            spin.setSpecialValueText("")
            bounds = load_limits(name)
            if isinstance(spin, QSpinBox):
                spin.setMinimum(int(bounds.minimum))
            else:
                spin.setMinimum(bounds.minimum)
            self._loading = False
        self.edited.emit(name, int(value) if isinstance(spin, QSpinBox) else float(value))

    def _form_changed(self, _index: int) -> None:
        form = self.rate_form.currentData()
        if self._loading or form is None:
            return
        with QSignalBlocker(self.rate_form):
            mixed = self.rate_form.findData(None)
            if mixed >= 0:
                self.rate_form.removeItem(mixed)
        self._show_form()
        if form is RateForm.SWEEP:
            self.error = None
            self.edited.emit("rate", SWEEP)
        elif form is RateForm.ONE:
            self.error = None
            self.edited.emit("rate", float(self.rate.value()))
        else:
            self._rates_changed(self.rates.text())

    def _rate_changed(self, value: float) -> None:
        if not self._loading:
            self.edited.emit("rate", float(value))

    def _rates_changed(self, text: str) -> None:
        if self._loading:
            return
        try:
            rates = parse_rates(text)
        except ValueError as exc:
            self.error = str(exc)
            self.edited.emit("rates_error", None)  # revalidate: the error is shown, nothing changes
            return
        self.error = None
        self.edited.emit("rate", rates)

    def _cluster_changed(self, text: str) -> None:
        if self._loading:
            return
        if not text.strip():
            self.cluster_error = None
            self._enable_cluster_fields()
            self.edited.emit("cluster", None)
            return
        try:
            address = cluster_address(text)
        except ValueError as exc:
            self.cluster_error = str(exc)
            self._enable_cluster_fields()
            self.edited.emit("cluster_error", None)  # revalidate: the error is shown, nothing changes
            return
        self.cluster_error = None
        self._enable_cluster_fields()
        self.edited.emit("cluster", address)

    def _generators_changed(self, value: int) -> None:
        if self._loading or value < 0:
            return  # still "mixed": nothing chosen yet
        if self.generators.minimum() < 0:  # a value was chosen: "mixed" is no longer offered
            with QSignalBlocker(self.generators):
                self.generators.setMinimum(0)
                self.generators.setSpecialValueText(EVERY_WORKER)
        self.edited.emit("generators", value or None)

    def _plain_tcp_changed(self, checked: bool) -> None:
        if not self._loading:
            self.edited.emit("cluster_plain_tcp", True if checked else None)

"""The configuration panel: which schemes, with which parameters, measured how.

The panel is a view of a profile. Each checked scheme row is one profile job (its
backend and parameters live on the row; "Add variant" makes a second row for the
same scheme, e.g. AES-GCM 128 beside 256). The common fields below the tree —
message sizes, samples, warm-up, pause, mode — apply to every job. A profile whose
jobs disagree on those fields keeps each job's own values until the user edits a
common field, which then applies to all.

Every change is validated through the core (`resolve_jobs`), and the first problem
is shown under the panel and marked at its field; `valid_changed` tells the window
whether Run may be pressed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTreeWidget,
    QTreeWidgetItem,
    QTreeWidgetItemIterator,
    QVBoxLayout,
    QWidget,
)

from app.core.profile import (
    DEFAULT_MESSAGE_SIZES,
    SESSION_MODES,
    JobSpec,
    Profile,
    ProfileError,
    human_size,
    parse_profile,
    parse_size_list,
    resolve_jobs,
)
from app.core.schemes import registry
from app.core.schemes.base import Family, SchemeSpec

QUICK_SIZES = (18, 1024, 1 << 20, 10 << 20)
FAMILY_TITLES = {
    Family.AEAD: "Symmetric AEAD",
    Family.KEY_AGREEMENT: "Key agreement + AEAD",
    Family.PUBLIC_KEY_ENCRYPTION: "Public-key encryption",
    Family.HYBRID: "Hybrid / KEM + AEAD",
    Family.SIGNATURE: "Signatures",
    Family.HASH: "Hashes",
    Family.KDF: "Key derivation",
}
_JOB_ROLE = Qt.ItemDataRole.UserRole
_INVALID_STYLE = "border: 1px solid #d32f2f;"


@dataclass
class JobEntry:
    """One tree row: a scheme with its backend and parameters (and per-job overrides
    kept from an opened profile)."""

    scheme: str
    backend: str
    params: dict[str, Any]
    overrides: dict[str, Any] = field(default_factory=dict)


def security_badge(spec: SchemeSpec, backend: str, params: dict[str, Any]) -> tuple[str, str | None]:
    """Badge text and colour for a scheme row: PQ category, insecure size, or bits."""
    try:
        info = spec.create(backend, params).info
    except ValueError as exc:
        return "invalid", str(exc)
    if info.insecure:
        return f"insecure ({info.security.classical_bits}-bit)", "#d32f2f"
    if info.security.pq_category and spec.family not in (Family.AEAD, Family.HASH, Family.KDF):
        # Symmetric primitives keep a PQ category (Grover only halves them); the badge
        # marks the public-key schemes built to resist a quantum computer.
        return f"post-quantum cat. {info.security.pq_category}", "#2e7d32"
    return f"{info.security.classical_bits}-bit", None


class ConfigPanel(QWidget):
    changed = Signal()
    valid_changed = Signal(bool, str)  # valid?, reason when not

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._loading = False
        self._valid = False
        self._reason = ""
        self._common_touched: set[str] = set()
        #: Profile fields without a widget, kept from the profile last shown.
        self._description: str = ""
        self._experiment: str | None = None
        self._loading = True  # no validation while the widgets are being made
        self._build()
        self._loading = False
        self.revalidate()

    # --- construction -------------------------------------------------------------

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        self.search = QLineEdit(placeholderText="Search schemes (name, curve, family)…")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._filter)
        layout.addWidget(self.search)

        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Scheme", "Backend", "Security"])
        self.tree.setUniformRowHeights(True)
        self.tree.itemChanged.connect(self._item_changed)
        self.tree.currentItemChanged.connect(self._current_changed)
        self._families: dict[Family, QTreeWidgetItem] = {}
        bold = QFont()
        bold.setBold(True)
        for family, specs in registry.by_family().items():
            if not specs:
                continue
            top = QTreeWidgetItem([FAMILY_TITLES.get(family, family.value)])
            top.setFont(0, bold)
            top.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.tree.addTopLevelItem(top)
            self._families[family] = top
            for spec in specs:
                self._add_row(spec, JobEntry(spec.scheme_id, spec.backends[0],
                                             spec.resolve_params(spec.backends[0], {})), checked=False)
        self.tree.expandAll()
        self.tree.resizeColumnToContents(0)
        self.tree.resizeColumnToContents(1)
        self.tree.setMinimumHeight(280)
        layout.addWidget(self.tree, stretch=3)

        # Per-scheme editor: backend and parameters of the selected row.
        self.scheme_box = QGroupBox("Selected scheme")
        scheme_layout = QVBoxLayout(self.scheme_box)
        self.scheme_form = QFormLayout()
        scheme_layout.addLayout(self.scheme_form)
        buttons = QHBoxLayout()
        self.add_variant = QPushButton("Add variant")
        self.add_variant.setToolTip("Another job of the same scheme with different parameters")
        self.add_variant.clicked.connect(self._add_variant)
        self.remove_variant = QPushButton("Remove variant")
        self.remove_variant.clicked.connect(self._remove_variant)
        buttons.addWidget(self.add_variant)
        buttons.addWidget(self.remove_variant)
        scheme_layout.addLayout(buttons)
        layout.addWidget(self.scheme_box)
        self._editors: dict[str, QWidget] = {}

        # Common settings.
        common = QGroupBox("Every selected job")
        form = QFormLayout(common)
        sizes_row = QHBoxLayout()
        self.size_boxes: dict[int, QCheckBox] = {}
        for size in QUICK_SIZES:
            box = QCheckBox(human_size(size))
            box.toggled.connect(lambda _=False: self._common_changed("message_sizes"))
            self.size_boxes[size] = box
            sizes_row.addWidget(box)
        self.size_boxes[1024].setChecked(True)
        form.addRow("Message sizes", sizes_row)
        self.custom_sizes = QLineEdit(placeholderText="more sizes, e.g. 64, 4K, 2M")
        self.custom_sizes.textChanged.connect(lambda _: self._common_changed("message_sizes"))
        form.addRow("", self.custom_sizes)
        self.samples = QSpinBox(minimum=1, maximum=1_000_000, value=30)
        self.warmup = QSpinBox(minimum=0, maximum=100_000, value=5)
        self.keygen_samples = QSpinBox(minimum=1, maximum=10_000, value=10)
        self.pause = QDoubleSpinBox(minimum=0, maximum=60_000, decimals=1, suffix=" ms")
        self.tamper = QSpinBox(minimum=0, maximum=10_000, value=5)
        for name, widget, label in (("samples", self.samples, "Samples"), ("warmup", self.warmup, "Warm-up"),
                                    ("keygen_samples", self.keygen_samples, "Key generations"),
                                    ("pause_ms", self.pause, "Pause between samples"),
                                    ("tamper", self.tamper, "Tampered payloads")):
            widget.valueChanged.connect(lambda _=0, n=name: self._common_changed(n))
            form.addRow(label, widget)
        self.mode = QComboBox()
        self.mode.addItem("Operations (no network)", "operations")
        self.mode.addItem("Loopback client/server", "loopback")
        self.mode.addItem("Remote server", "remote")
        self.mode.currentIndexChanged.connect(lambda _: self._common_changed("mode"))
        form.addRow("Mode", self.mode)
        self.remote_host = QLineEdit(placeholderText="host")
        self.remote_port = QSpinBox(minimum=1, maximum=65535, value=7979)
        self.token_file = QLineEdit(placeholderText="token file")
        browse = QPushButton("…")
        browse.setFixedWidth(28)
        browse.clicked.connect(self._browse_token)
        remote_row = QHBoxLayout()
        remote_row.addWidget(self.remote_host, 2)
        remote_row.addWidget(self.remote_port, 1)
        token_row = QHBoxLayout()
        token_row.addWidget(self.token_file)
        token_row.addWidget(browse)
        self.remote_widgets = (self.remote_host, self.remote_port, self.token_file, browse)
        for widget in (self.remote_host, self.token_file):
            widget.textChanged.connect(lambda _: self.revalidate())
        self.remote_port.valueChanged.connect(lambda _: self.revalidate())
        form.addRow("Server", remote_row)
        form.addRow("Token", token_row)
        layout.addWidget(common)

        self.problem = QLabel()
        self.problem.setWordWrap(True)
        self.problem.setStyleSheet("color: #d32f2f;")
        self.problem.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.problem)
        self._update_remote_enabled()
        self._show_editor(None)

    def _add_row(self, spec: SchemeSpec, entry: JobEntry, checked: bool, after: QTreeWidgetItem | None = None,
                 ) -> QTreeWidgetItem:
        parent = self._families[spec.family]
        item = QTreeWidgetItem()
        item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsUserCheckable)
        item.setData(0, _JOB_ROLE, entry)
        self._loading_guard(lambda: item.setCheckState(0, Qt.CheckState.Checked if checked else
                                                      Qt.CheckState.Unchecked))
        if after is not None:
            parent.insertChild(parent.indexOfChild(after) + 1, item)
        else:
            parent.addChild(item)
        self._refresh_row(item)
        return item

    def _loading_guard(self, action: Any) -> None:
        was, self._loading = self._loading, True
        try:
            action()
        finally:
            self._loading = was

    def _refresh_row(self, item: QTreeWidgetItem) -> None:
        entry: JobEntry = item.data(0, _JOB_ROLE)
        spec = registry.get_spec(entry.scheme)
        # Short: values only ("ECDH P-256 · hkdf-sha256"); booleans by name when on.
        values = [k if v is True else str(v) for k, v in entry.params.items() if v is not False]
        text = " ".join([spec.name, " · ".join(values)]).strip()
        tooltip = (spec.description or spec.name) + "".join(f"\n{k} = {v}" for k, v in entry.params.items())

        def apply() -> None:
            item.setText(0, text)
            item.setToolTip(0, tooltip)
            item.setText(1, entry.backend)
            badge, colour = security_badge(spec, entry.backend, entry.params)
            item.setText(2, badge)
            item.setForeground(2, QBrush(QColor(colour)) if colour else QBrush())
        self._loading_guard(apply)

    # --- rows ------------------------------------------------------------------------

    def rows(self) -> list[QTreeWidgetItem]:
        items = []
        iterator = QTreeWidgetItemIterator(self.tree)
        while iterator.value():
            item = iterator.value()
            if item.data(0, _JOB_ROLE) is not None:
                items.append(item)
            iterator += 1
        return items

    def checked_rows(self) -> list[QTreeWidgetItem]:
        return [item for item in self.rows() if item.checkState(0) == Qt.CheckState.Checked]

    def find_row(self, scheme: str) -> QTreeWidgetItem | None:
        return next((item for item in self.rows() if item.data(0, _JOB_ROLE).scheme == scheme), None)

    def set_checked(self, scheme: str, checked: bool = True) -> QTreeWidgetItem:
        item = self.find_row(scheme)
        if item is None:
            raise KeyError(scheme)
        item.setCheckState(0, Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        return item

    def _item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if not self._loading and column == 0:
            self._emit_changed()

    def _current_changed(self, current: QTreeWidgetItem | None, _previous: Any) -> None:
        self._show_editor(current if current is not None and current.data(0, _JOB_ROLE) is not None else None)

    def _filter(self, text: str) -> None:
        needle = text.strip().lower()
        for top_index in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(top_index)
            visible_children = 0
            for k in range(top.childCount()):
                child = top.child(k)
                entry: JobEntry = child.data(0, _JOB_ROLE)
                haystack = " ".join([child.text(0), entry.scheme, top.text(0), child.text(2)]).lower()
                hidden = bool(needle) and needle not in haystack
                child.setHidden(hidden)
                visible_children += not hidden
            top.setHidden(visible_children == 0)

    # --- per-scheme editor -------------------------------------------------------------

    def _show_editor(self, item: QTreeWidgetItem | None) -> None:
        while self.scheme_form.rowCount():
            self.scheme_form.removeRow(0)
        self._editors = {}
        self._editing = item
        self.scheme_box.setEnabled(item is not None)
        self.add_variant.setEnabled(item is not None)
        self.remove_variant.setEnabled(item is not None and self._variant_count(item) > 1)
        if item is None:
            self.scheme_box.setTitle("Selected scheme (select a row)")
            return
        entry: JobEntry = item.data(0, _JOB_ROLE)
        spec = registry.get_spec(entry.scheme)
        self.scheme_box.setTitle(f"Selected: {spec.name}")
        backend = QComboBox()
        backend.addItems(list(spec.backends))
        backend.setCurrentText(entry.backend)
        backend.currentTextChanged.connect(lambda text: self._edit(item, "backend", text))
        self.scheme_form.addRow("Backend", backend)
        self._editors["backend"] = backend
        for param in spec.params:
            value = entry.params.get(param.name, param.default)
            editor: QWidget
            if param.choices:
                combo = QComboBox()
                for choice in param.choices:
                    combo.addItem(str(choice), choice)
                combo.setCurrentIndex(max(0, combo.findData(value)))
                combo.currentIndexChanged.connect(
                    lambda _=0, c=combo, n=param.name: self._edit(item, n, c.currentData()))
                editor = combo
            elif isinstance(param.default, bool):
                box = QCheckBox()
                box.setChecked(bool(value))
                box.toggled.connect(lambda checked, n=param.name: self._edit(item, n, checked))
                editor = box
            else:
                spin = QSpinBox(minimum=param.minimum if param.minimum is not None else 0,
                                maximum=param.maximum if param.maximum is not None else 1 << 30)
                spin.setValue(int(value))
                spin.valueChanged.connect(lambda v, n=param.name: self._edit(item, n, v))
                editor = spin
            editor.setToolTip(param.help)
            self._editors[param.name] = editor
            self.scheme_form.addRow(param.name.replace("_", " ").capitalize(), editor)

    def _edit(self, item: QTreeWidgetItem, name: str, value: Any) -> None:
        entry: JobEntry = item.data(0, _JOB_ROLE)
        if name == "backend":
            entry.backend = value
        else:
            entry.params[name] = value
        item.setData(0, _JOB_ROLE, entry)
        self._refresh_row(item)
        if item.checkState(0) != Qt.CheckState.Checked:
            self._loading_guard(lambda: item.setCheckState(0, Qt.CheckState.Checked))
        self._emit_changed()

    def _variant_count(self, item: QTreeWidgetItem) -> int:
        scheme = item.data(0, _JOB_ROLE).scheme
        return sum(1 for row in self.rows() if row.data(0, _JOB_ROLE).scheme == scheme)

    def _add_variant(self) -> None:
        item = self.tree.currentItem()
        if item is None or item.data(0, _JOB_ROLE) is None:
            return
        entry: JobEntry = item.data(0, _JOB_ROLE)
        clone = JobEntry(entry.scheme, entry.backend, dict(entry.params), dict(entry.overrides))
        row = self._add_row(registry.get_spec(entry.scheme), clone, checked=True, after=item)
        self.tree.setCurrentItem(row)
        self._emit_changed()

    def _remove_variant(self) -> None:
        item = self.tree.currentItem()
        if item is None or item.data(0, _JOB_ROLE) is None or self._variant_count(item) < 2:
            return
        item.parent().removeChild(item)
        self._emit_changed()

    def _browse_token(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Token file of the server")
        if path:
            self.token_file.setText(path)

    # --- common fields --------------------------------------------------------------

    def _common_changed(self, name: str) -> None:
        if self._loading:
            return
        self._common_touched.add(name)
        if name == "mode":
            self._update_remote_enabled()
        self._emit_changed()

    def _update_remote_enabled(self) -> None:
        remote = self.mode.currentData() == "remote"
        for widget in self.remote_widgets:
            widget.setEnabled(remote)

    def message_sizes(self) -> list[int]:
        """Quick picks plus the custom list (ValueError naming a bad custom item)."""
        sizes = [size for size, box in self.size_boxes.items() if box.isChecked()]
        for size in parse_size_list(self.custom_sizes.text()):
            if size not in sizes:
                sizes.append(size)
        return sorted(sizes)

    # --- profile <-> panel ----------------------------------------------------------

    def profile(self, name: str = "untitled", description: str | None = None) -> Profile:
        """The profile the panel shows (ProfileError naming the field when it cannot be built).

        The description and the experiment a loaded preset reproduces have no widget;
        they are kept from `set_profile`, so running or saving E3 still reports as E3.
        """
        try:
            sizes = self.message_sizes()
        except ValueError as exc:
            raise ProfileError(str(exc), field="message sizes") from None
        common: dict[str, Any] = {
            "mode": self.mode.currentData(), "message_sizes": sizes, "samples": self.samples.value(),
            "warmup": self.warmup.value(), "keygen_samples": self.keygen_samples.value(),
            "pause_ms": self.pause.value(), "tamper": self.tamper.value(),
        }
        jobs = []
        for item in self.checked_rows():
            entry: JobEntry = item.data(0, _JOB_ROLE)
            spec = registry.get_spec(entry.scheme)
            job: dict[str, Any] = {"scheme": entry.scheme, "backend": entry.backend, "params": dict(entry.params)}
            for key, value in common.items():
                job[key] = entry.overrides[key] if key in entry.overrides and key not in self._common_touched \
                    else value
            if entry.overrides.get("label"):
                job["label"] = entry.overrides["label"]
            if entry.overrides.get("tcp_nodelay") is False and job["mode"] in SESSION_MODES:
                job["tcp_nodelay"] = False
            if spec.scheme_id and spec.create(entry.backend, entry.params).info.fixed_message_size is not None:
                job.pop("message_sizes")  # a KDF's input size is its secret_size parameter
            jobs.append(job)
        if not jobs:
            raise ProfileError("select at least one scheme", field="schemes")
        data: dict[str, Any] = {"name": name, "description": self._description if description is None
                                else description, "jobs": jobs}
        if self._experiment:
            data["experiment"] = self._experiment
        return parse_profile(data)

    def set_profile(self, profile: Profile) -> None:
        """Show a profile: one checked row per job (variants created as needed)."""
        self._loading = True
        self._description, self._experiment = profile.description, profile.experiment
        try:
            for item in self.rows():
                item.setCheckState(0, Qt.CheckState.Unchecked)
            used: set[int] = set()
            for job in profile.jobs:
                self._place_job(job, used)
            self._common_touched = set()
            first = profile.jobs[0]
            sizes = set(first.message_sizes or DEFAULT_MESSAGE_SIZES)
            for size, box in self.size_boxes.items():
                box.setChecked(size in sizes)
            self.custom_sizes.setText(", ".join(str(s) for s in sorted(sizes - set(QUICK_SIZES))))
            self.samples.setValue(first.samples)
            self.warmup.setValue(first.warmup)
            self.keygen_samples.setValue(first.keygen_samples)
            self.pause.setValue(first.pause_ms)
            self.tamper.setValue(first.tamper)
            self.mode.setCurrentIndex(max(0, self.mode.findData(first.mode)))
            self._update_remote_enabled()
        finally:
            self._loading = False
        self._show_editor(None)
        self.revalidate()

    def _place_job(self, job: JobSpec, used: set[int]) -> None:
        spec = registry.get_spec(job.scheme)  # the profile was resolved by the caller
        backend = job.backend or spec.backends[0]
        params = spec.resolve_params(backend, job.params)
        overrides = {key: getattr(job, key) for key in
                     ("mode", "message_sizes", "samples", "warmup", "keygen_samples", "pause_ms", "tamper", "label",
                      "tcp_nodelay")}
        entry = JobEntry(job.scheme, backend, params, overrides)
        rows = [item for item in self.rows() if item.data(0, _JOB_ROLE).scheme == job.scheme]
        free = next((item for item in rows if id(item) not in used), None)
        if free is None:
            free = self._add_row(spec, entry, checked=True, after=rows[-1])
        free.setData(0, _JOB_ROLE, entry)
        free.setCheckState(0, Qt.CheckState.Checked)
        used.add(id(free))
        self._refresh_row(free)

    def reset(self) -> None:
        """Nothing selected, default settings (File > New)."""
        self._loading = True
        self._description, self._experiment = "", None
        try:
            for item in self.rows():
                entry: JobEntry = item.data(0, _JOB_ROLE)
                if self._variant_count(item) > 1 and item is not self.find_row(entry.scheme):
                    item.parent().removeChild(item)
                    continue
                spec = registry.get_spec(entry.scheme)
                item.setData(0, _JOB_ROLE, JobEntry(spec.scheme_id, spec.backends[0],
                                                    spec.resolve_params(spec.backends[0], {})))
                item.setCheckState(0, Qt.CheckState.Unchecked)
                self._refresh_row(item)
            for size, box in self.size_boxes.items():
                box.setChecked(size == 1024)
            self.custom_sizes.clear()
            self.samples.setValue(30)
            self.warmup.setValue(5)
            self.keygen_samples.setValue(10)
            self.pause.setValue(0)
            self.tamper.setValue(5)
            self.mode.setCurrentIndex(0)
            self._common_touched = set()
        finally:
            self._loading = False
        self._update_remote_enabled()
        self.revalidate()

    # --- validation --------------------------------------------------------------------

    def _emit_changed(self) -> None:
        self.revalidate()
        self.changed.emit()

    def remote_settings(self) -> tuple[str, int, str]:
        return self.remote_host.text().strip(), self.remote_port.value(), self.token_file.text().strip()

    def revalidate(self) -> None:
        """Check the panel through the core; mark the field at fault; tell the window."""
        for widget in (self.custom_sizes, self.remote_host, self.token_file, self.tree):
            widget.setStyleSheet("")
        reason = ""
        try:
            profile = self.profile()
            mode_remote = any(job.mode == "remote" for job in profile.jobs)
            resolve_jobs(profile, has_remote=True)
            if mode_remote:
                host, _, token = self.remote_settings()
                if not host:
                    self.remote_host.setStyleSheet(_INVALID_STYLE)
                    raise ProfileError("enter the server's host name or address", field="server")
                if not token:
                    self.token_file.setStyleSheet(_INVALID_STYLE)
                    raise ProfileError("choose the server's token file", field="token")
        except ProfileError as exc:
            reason = self._describe(exc)
        self._valid = not reason
        self._reason = reason
        self.problem.setText(reason)
        self.problem.setVisible(bool(reason))
        self.valid_changed.emit(self._valid, reason)

    def _describe(self, exc: ProfileError) -> str:
        """The error in the panel's words, with the widget at fault marked."""
        where = exc.field or ""
        if where == "message sizes" or ".message_sizes" in where:
            self.custom_sizes.setStyleSheet(_INVALID_STYLE)
        if where == "schemes":
            self.tree.setStyleSheet("QTreeWidget { border: 1px solid #d32f2f; }")
            return "Select at least one scheme to run."
        if where.startswith("jobs["):
            index = int(where[5:where.index("]")])
            checked = self.checked_rows()
            if index < len(checked):
                return f"{checked[index].text(0)}: {exc.detail}"
        return f"{where}: {exc.detail}" if where else exc.detail

    @property
    def is_valid(self) -> bool:
        return self._valid

    @property
    def reason(self) -> str:
        return self._reason


def profile_json(profile: Profile) -> str:
    """Canonical text of a profile, to tell whether the panel differs from the saved file."""
    return json.dumps(profile.to_dict(), sort_keys=True)

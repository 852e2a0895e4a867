"""The configuration panel: which schemes, with which parameters, measured how.

The panel is a view of a profile. Each checked scheme row is one profile job: its
backend, parameters and settings (message sizes, samples, warm-up, pause, mode) live
on the row, and the tree shows what tells two jobs apart (mode and link, sizes, samples).
"Add variant" makes a second row for the same scheme, e.g. AES-GCM 128 beside 256.

The settings group below the tree edits the selected rows, or every checked row when
none is selected; it shows their real values, "mixed" where they differ, and an edit
changes that one field of those jobs only (see job_settings).

Every change is validated through the core (`resolve_jobs`); the first problem is shown
above the tree (in the space the first-launch hint and the "ready" line take, so the tree
never moves) and next to its field, which is marked; `valid_changed` tells the window
whether Run may be pressed, and why not.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QTreeWidgetItemIterator,
    QVBoxLayout,
    QWidget,
)

from app.core.profile.files import parse_profile
from app.core.schemes import registry
from app.core.schemes.base import SchemeSpec
from app.core.settings.profile import JobSpec, Profile, ProfileError
from app.core.vocab import Family, Mode
from app.gui.config.job_settings import (
    NUMBER_KEYS,
    SETTING_KEYS,
    JobEntry,
    JobSettingsEditor,
    apply_edit,
    default_settings,
    shared,
)
from app.gui.config.link_editor import mode_tip
from app.gui.config.panel_checks import PanelChecks
from app.gui.config.panel_scroll import fitted_title, settle_fields
from app.gui.config.param_editor import param_editor
from app.gui.config.profile_jobs import job_dict, mode_text, security_badge, sizes_text
from app.gui.config.variants import distinct_variant
from app.gui.messages import MessageSlot
from app.gui.theme import status_colour

__all__ = ["ConfigPanel", "profile_json"]

_JOB_ROLE = Qt.ItemDataRole.UserRole
#: Tree columns: what a job is, and what tells two jobs of one scheme apart.
COLUMNS = ("Scheme", "Backend", "Mode", "Sizes", "Samples", "Security")
COL_SCHEME, COL_BACKEND, COL_MODE, COL_SIZES, COL_SAMPLES, COL_SECURITY = range(len(COLUMNS))


class ConfigPanel(PanelChecks, QWidget):
    changed = Signal()
    valid_changed = Signal(bool, str)  # valid?, reason when not

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._loading = False
        self._valid = False
        self._reason = ""
        #: Profile fields without a widget, kept from the profile last shown.
        self._description: str = ""
        self._experiment: str | None = None
        self._loading = True  # no validation while the widgets are being made
        self._build()
        settle_fields(self)  # the wheel scrolls the panel; the panel fits its dock
        self._loading = False
        self.revalidate()

    # --- construction -------------------------------------------------------------

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        # Where the eye lands on first launch: what to do, not only what is wrong. The
        # slot keeps its height whatever it says, so ticking a scheme moves no row.
        self.message = MessageSlot(
            "<b>Start here:</b> pick a ready-made profile in <i>File › Presets</i>, "
            "or tick the schemes to measure below, then press <b>Run</b>."
        )
        self.empty_state, self.problem = self.message.hint, self.message.problem
        layout.addWidget(self.message)
        self.search = QLineEdit(placeholderText="Search schemes (name, curve, family)…")
        self.search.setClearButtonEnabled(True)
        self.search.textChanged.connect(self._filter)
        layout.addWidget(self.search)

        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setUniformRowHeights(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.tree.itemChanged.connect(self._item_changed)
        self.tree.itemSelectionChanged.connect(self._selection_changed)
        self._families: dict[Family, QTreeWidgetItem] = {}
        bold = QFont()
        bold.setBold(True)
        for family, specs in registry.by_family().items():
            if not specs:
                continue
            top = QTreeWidgetItem([family.long_label])
            top.setFont(0, bold)
            top.setFlags(Qt.ItemFlag.ItemIsEnabled)
            self.tree.addTopLevelItem(top)
            self._families[family] = top
            for spec in specs:
                self._add_row(spec, self._fresh_entry(spec), checked=False)
        self.tree.expandAll()
        for column in range(len(COLUMNS) - 1):
            self.tree.resizeColumnToContents(column)
        self.tree.setMinimumHeight(200)
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
        self._editing: QTreeWidgetItem | None = None

        self.settings_editor = JobSettingsEditor()
        self.settings_editor.edited.connect(self._settings_edited)
        for widget in (self.settings_editor.remote_host, self.settings_editor.token_file):
            widget.textChanged.connect(lambda _: self.revalidate())
        self.settings_editor.remote_port.valueChanged.connect(lambda _: self.revalidate())
        self.edit_all = QPushButton("Edit every checked job")
        self.edit_all.setToolTip("Clear the selection: the settings below then apply to every checked job")
        self.edit_all.clicked.connect(self.tree.clearSelection)
        self.edit_all.setEnabled(False)
        layout.addWidget(self.edit_all)
        layout.addWidget(self.settings_editor)
        # The editor's widgets, under the names the window and tests have used.
        editor = self.settings_editor
        self.size_boxes, self.custom_sizes, self.mode = editor.size_boxes, editor.custom_sizes, editor.mode
        self.samples, self.warmup, self.keygen_samples = editor.samples, editor.warmup, editor.keygen_samples
        self.pause, self.tamper = editor.pause, editor.tamper
        self.remote_host, self.remote_port, self.token_file = editor.remote_host, editor.remote_port, editor.token_file
        # A red border replaces the platform's frame, which is taller: a marked field
        # keeps its unmarked height, or everything below it would shift by a few pixels.
        for field in (self.custom_sizes, self.remote_host, self.token_file, editor.load.rates, editor.link.choice):
            field.setFixedHeight(field.sizeHint().height())
        self._show_editor(None)
        self._show_settings()

    @staticmethod
    def _fresh_entry(spec: SchemeSpec) -> JobEntry:
        return JobEntry(spec.scheme_id, spec.backends[0], spec.resolve_params(spec.backends[0], {}))

    def _add_row(
        self,
        spec: SchemeSpec,
        entry: JobEntry,
        checked: bool,
        after: QTreeWidgetItem | None = None,
    ) -> QTreeWidgetItem:
        parent = self._families[spec.family]
        item = QTreeWidgetItem()
        item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsUserCheckable)
        item.setData(0, _JOB_ROLE, entry)
        self._loading_guard(
            lambda: item.setCheckState(0, Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        )
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
        # Short: values only ("ECDH P-256 · hkdf-sha256"); booleans by name when on; a
        # parameter whose 0 means "off" (ElGamal's exponent_bits: full length) only when set.
        off_by_zero = {param.name for param in spec.params if param.default == 0 and param.default is not False}
        values = [
            k if v is True else f"{k} {v}" if k in off_by_zero else str(v)
            for k, v in entry.params.items()
            if v is not False and not (k in off_by_zero and v == 0)
        ]
        text = " ".join([spec.name, " · ".join(values)]).strip()
        if entry.settings.get("label"):
            text += f" “{entry.settings['label']}”"
        tooltip = (spec.description or spec.name) + "".join(f"\n{k} = {v}" for k, v in entry.params.items())
        checked = item.checkState(0) == Qt.CheckState.Checked

        def apply() -> None:
            item.setText(COL_SCHEME, text)
            item.setToolTip(COL_SCHEME, tooltip)
            item.setText(COL_BACKEND, entry.backend)
            # A job's settings are shown where it is a job: an unticked row runs nothing.
            item.setText(COL_MODE, mode_text(entry) if checked else "")
            item.setToolTip(COL_MODE, (mode_tip(entry.settings) or "") if checked else "")
            item.setText(COL_SIZES, sizes_text(entry) if checked else "")
            # A load job runs no sample rounds: its Mode cell says what it runs.
            load = entry.settings["mode"] == Mode.LOAD
            item.setText(COL_SAMPLES, ("-" if load else str(entry.settings["samples"])) if checked else "")
            badge, tone = security_badge(spec, entry.backend, entry.params)
            item.setText(COL_SECURITY, badge)
            colour = status_colour(tone, self.palette().color(QPalette.ColorRole.Base))
            item.setForeground(COL_SECURITY, QBrush(QColor(colour)) if colour else QBrush())

        self._loading_guard(apply)

    def refresh_colours(self) -> None:
        """Badges follow the theme (called when the palette changes)."""
        for item in self.rows():
            self._refresh_row(item)

    def changeEvent(self, event: Any) -> None:
        from PySide6.QtCore import QEvent

        if event.type() == QEvent.Type.PaletteChange and hasattr(self, "tree"):
            self.refresh_colours()
        super().changeEvent(event)

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

    def selected_rows(self) -> list[QTreeWidgetItem]:
        return [item for item in self.rows() if item.isSelected()]

    def target_rows(self) -> list[QTreeWidgetItem]:
        """The rows the settings group edits: the selected ones, else every checked one."""
        return self.selected_rows() or self.checked_rows()

    def entry(self, item: QTreeWidgetItem) -> JobEntry:
        entry = item.data(0, _JOB_ROLE)  # Qt hands the stored Python object back untyped
        assert isinstance(entry, JobEntry), f"a scheme row without its job: {entry!r}"
        return entry

    def find_row(self, scheme: str) -> QTreeWidgetItem | None:
        return next((item for item in self.rows() if item.data(0, _JOB_ROLE).scheme == scheme), None)

    def set_checked(self, scheme: str, checked: bool = True) -> QTreeWidgetItem:
        item = self.find_row(scheme)
        if item is None:
            raise KeyError(scheme)
        item.setCheckState(0, Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)
        return item

    def _item_changed(self, item: QTreeWidgetItem, column: int) -> None:
        if self._loading or column != 0:
            return
        if item.checkState(0) == Qt.CheckState.Checked:
            self._adopt_shared_settings(item)
        self._refresh_row(item)
        self._show_settings()
        self._fit_columns()
        self._emit_changed()

    def _adopt_shared_settings(self, item: QTreeWidgetItem) -> None:
        """A newly ticked row takes the settings every other checked job shares, so
        ticking a scheme after setting "Samples 100" for all gives it 100 too."""
        others = [self.entry(row) for row in self.checked_rows() if row is not item]
        if not others:
            return
        entry = self.entry(item)
        for key in ("message_sizes", *NUMBER_KEYS):
            same, value = shared([other.settings[key] for other in others])
            if same:
                entry.settings[key] = list(value) if isinstance(value, list) else value

    def _selection_changed(self) -> None:
        selected = self.selected_rows()
        self._show_editor(selected[0] if len(selected) == 1 else None, several=len(selected) > 1)
        self._show_settings()

    def _filter(self, text: str) -> None:
        needle = text.strip().lower()
        for top_index in range(self.tree.topLevelItemCount()):
            top = self.tree.topLevelItem(top_index)
            if top is None:
                continue
            visible_children = 0
            for k in range(top.childCount()):
                child = top.child(k)
                if child is None:
                    continue
                entry: JobEntry = child.data(0, _JOB_ROLE)
                haystack = " ".join([child.text(0), entry.scheme, top.text(0), child.text(COL_SECURITY)]).lower()
                hidden = bool(needle) and needle not in haystack
                child.setHidden(hidden)
                visible_children += not hidden
            top.setHidden(visible_children == 0)

    # --- settings of the selected (or every checked) job --------------------------------

    def _settings_title(self) -> str:
        """The settings group's title: which jobs it edits, by their rows' current names."""
        selected, checked = self.selected_rows(), self.checked_rows()
        if selected:
            if len(selected) == 1:
                return fitted_title(self, f"Selected job: {selected[0].text(0)}")
            return f"{len(selected)} selected jobs"
        if checked:
            return "The checked job" if len(checked) == 1 else f"Every checked job ({len(checked)})"
        return "Job settings (tick or select a scheme first)"

    def _show_settings(self) -> None:
        rows = self.target_rows()
        self.settings_editor.show_entries([self.entry(row) for row in rows], self._settings_title())
        # Shown or not, the button keeps its space: the settings below it never move.
        self.edit_all.setEnabled(bool(self.selected_rows()))

    def _settings_edited(self, name: str, value: Any) -> None:
        rows = self.target_rows()
        for item in rows:
            apply_edit(self.entry(item), name, value)
            if item.checkState(0) != Qt.CheckState.Checked:
                self._loading_guard(lambda i=item: i.setCheckState(0, Qt.CheckState.Checked))
            self._refresh_row(item)
        if name == "mode":
            self._show_settings()  # the rows, placement and load fields the new mode uses
        self._fit_columns()
        self._emit_changed()

    # --- per-scheme editor -------------------------------------------------------------

    def _show_editor(self, item: QTreeWidgetItem | None, several: bool = False) -> None:
        while self.scheme_form.rowCount():
            self.scheme_form.removeRow(0)
        self._editors = {}
        self._editing = item
        self.scheme_box.setEnabled(item is not None)
        self.add_variant.setEnabled(item is not None)
        self.remove_variant.setEnabled(item is not None and self._variant_count(item) > 1)
        if item is None:
            self.scheme_box.setToolTip("")
            self.scheme_box.setTitle(
                "Scheme: select one row to edit its backend and parameters" if several else "Scheme (select a row)"
            )
            return
        entry: JobEntry = item.data(0, _JOB_ROLE)
        spec = registry.get_spec(entry.scheme)
        self._title_selected(item)
        backend = QComboBox()
        backend.addItems(list(spec.backends))
        backend.setCurrentText(entry.backend)
        backend.currentTextChanged.connect(lambda text: self._edit(item, "backend", text))
        self.scheme_form.addRow("Backend", backend)
        self._editors["backend"] = backend
        for param in spec.params:
            editor = param_editor(
                param, entry.params.get(param.name, param.default), functools.partial(self._edit, item, param.name)
            )
            self._editors[param.name] = editor
            self.scheme_form.addRow(param.name.replace("_", " ").capitalize(), editor)
        settle_fields(self.scheme_box)

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
            self._refresh_row(item)
        # The headers name the job as it now is (key bits 128, not the 256 it was).
        self._title_selected(item)
        self.settings_editor.setTitle(self._settings_title())
        self._emit_changed()

    def _title_selected(self, item: QTreeWidgetItem) -> None:
        whole = f"Selected: {item.text(COL_SCHEME)}"
        self.scheme_box.setTitle(fitted_title(self.scheme_box, whole))
        self.scheme_box.setToolTip(whole)

    def _variant_count(self, item: QTreeWidgetItem) -> int:
        scheme = item.data(0, _JOB_ROLE).scheme
        return sum(1 for row in self.rows() if row.data(0, _JOB_ROLE).scheme == scheme)

    def _add_variant(self) -> None:
        item = self._editing
        if item is None:
            return
        entry: JobEntry = item.data(0, _JOB_ROLE)
        spec = registry.get_spec(entry.scheme)
        # Another backend or parameter when one is left; else a copy, and the message
        # above the tree says at once what must change (problem_words.REPEAT_FIX).
        clone = distinct_variant(spec, entry, [self.entry(row) for row in self.rows()]) or JobEntry(
            entry.scheme,
            entry.backend,
            dict(entry.params),
            {k: (list(v) if isinstance(v, list) else v) for k, v in entry.settings.items()},
        )
        row = self._add_row(spec, clone, checked=True, after=item)
        self.tree.setCurrentItem(row)  # selects only the new row: its settings are shown
        self._emit_changed()

    def _remove_variant(self) -> None:
        item = self._editing
        parent = item.parent() if item is not None else None
        if item is None or parent is None or self._variant_count(item) < 2:
            return
        parent.removeChild(item)
        self._selection_changed()
        self._emit_changed()

    # --- profile <-> panel ----------------------------------------------------------

    def message_sizes(self) -> list[int]:
        """The sizes of the jobs the settings group edits (all of them, sorted)."""
        return sorted({size for item in self.target_rows() for size in self.entry(item).sizes()})

    def profile(self, name: str = "untitled", description: str | None = None) -> Profile:
        """The profile the panel shows (ProfileError naming the field when it cannot be built).

        The description and the experiment a loaded preset reproduces have no widget;
        they are kept from `set_profile`, so running or saving E3 still reports as E3.
        """
        if self.settings_editor.custom_error:
            raise ProfileError(self.settings_editor.custom_error, field="message sizes")
        if self.settings_editor.load.error:
            raise ProfileError(self.settings_editor.load.error, field="offered rates")
        if self.settings_editor.load.cluster_error:
            raise ProfileError(self.settings_editor.load.cluster_error, field="Dask scheduler")
        jobs = [job_dict(self.entry(item)) for item in self.checked_rows()]
        if not jobs:
            raise ProfileError("select at least one scheme", field="schemes")
        data: dict[str, Any] = {
            "name": name,
            "description": self._description if description is None else description,
            "jobs": jobs,
        }
        if self._experiment:
            data["experiment"] = self._experiment
        return parse_profile(data)

    def set_profile(self, profile: Profile) -> None:
        """Show a profile: one checked row per job, and nothing of the profile shown before."""
        self._loading = True
        self._description, self._experiment = profile.description, profile.experiment
        try:
            self._clear_rows()
            used: set[int] = set()
            for job in profile.jobs:
                self._place_job(job, used)
        finally:
            self._loading = False
        self.tree.clearSelection()
        self._show_editor(None)
        self._show_settings()
        self._fit_columns()
        self.revalidate()

    def _fit_columns(self) -> None:
        """Mode, sizes and samples as wide as their text: what tells two jobs apart is never cut."""
        for column in (COL_MODE, COL_SIZES, COL_SAMPLES):
            self.tree.resizeColumnToContents(column)

    def _clear_rows(self) -> None:
        """One unticked row per scheme, with its defaults: every variant row goes."""
        self.tree.clearSelection()
        for item in self.rows():
            entry: JobEntry = item.data(0, _JOB_ROLE)
            parent = item.parent()
            if item is not self.find_row(entry.scheme) and parent is not None:
                parent.removeChild(item)
                continue
            item.setData(0, _JOB_ROLE, self._fresh_entry(registry.get_spec(entry.scheme)))
            item.setCheckState(0, Qt.CheckState.Unchecked)
            self._refresh_row(item)

    def _place_job(self, job: JobSpec, used: set[int]) -> None:
        spec = registry.get_spec(job.scheme)  # the profile was resolved by the caller
        backend = job.backend or spec.backends[0]
        params = spec.resolve_params(backend, job.params)
        settings = default_settings() | {key: getattr(job, key) for key in SETTING_KEYS}
        entry = JobEntry(job.scheme, backend, params, settings)
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
            self._clear_rows()
            self.settings_editor.custom_error = None
        finally:
            self._loading = False
        self._show_editor(None)
        self._show_settings()
        self.revalidate()

    # --- validation --------------------------------------------------------------------

    def _emit_changed(self) -> None:
        # The settings group is not redrawn here: after its own edit it already shows
        # the value, and redrawing would rewrite the text being typed.
        self.revalidate()
        self.changed.emit()


def profile_json(profile: Profile) -> str:
    """Canonical text of a profile, to tell whether the panel differs from the saved file."""
    return json.dumps(profile.to_dict(), sort_keys=True)

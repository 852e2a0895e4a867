"""About, Getting started and Preferences dialogs."""

from __future__ import annotations

import os
import sys

from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app import __version__
from app.core.resources import resource_path
from app.core.store.paths import default_store_path
from app.core.store.target import StoreTarget, password_problem
from app.gui.theme import status_colour
from app.gui.vocab import Theme, Tone


def about_text() -> str:
    """Versions a bug report needs: the app, Python, Qt, and every crypto library with
    the OpenSSL it uses (pycryptodome and tinyec do not use OpenSSL)."""
    from app.core.machine.environment import library_versions  # one source for versions, CLI and GUI

    libraries = library_versions()
    import PySide6
    from PySide6.QtCore import qVersion

    crypto = libraries["cryptography"]
    dome = libraries["pycryptodome"]
    rows = [
        ("CryptoBench", __version__),
        ("Python", sys.version.split()[0]),
        ("PySide6 / Qt", f"{PySide6.__version__} / {qVersion()}"),
        ("pyqtgraph", libraries["pyqtgraph"]["version"]),
        ("cryptography", f"{crypto['version']} ({crypto['openssl']})"),
        ("pycryptodome", f"{dome['version']} (own C code; big integers: {dome.get('integer_class')})"),
        ("tinyec", f"{libraries['tinyec']['version']} (pure Python)"),
        ("numpy", libraries["numpy"]["version"]),
    ]
    body = "".join(f"<tr><td><b>{name}</b></td><td>{value}</td></tr>" for name, value in rows)
    return (
        "<h3>CryptoBench</h3><p>What a cryptographic scheme costs, here, on a real connection.</p>"
        f"<table cellspacing='4'>{body}</table>"
    )


class AboutDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About CryptoBench")
        layout = QVBoxLayout(self)
        self.label = QLabel(about_text())
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.label)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)


#: The Getting started page: the README's five-minute tour, a bundled resource, so the
#: frozen app shows it too (packaging/cryptobench.spec bundles resources/).
GETTING_STARTED = ("help", "getting-started.md")


class GettingStartedDialog(QDialog):
    """Help > Getting started: the bundled tour, rendered from Markdown."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Getting started with CryptoBench")
        self.resize(720, 560)
        layout = QVBoxLayout(self)
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(True)
        path = resource_path(*GETTING_STARTED)
        try:
            self.browser.setMarkdown(path.read_text(encoding="utf-8"))
        except OSError as exc:  # a damaged install: say so, and where the tour is online
            self.browser.setPlainText(
                f"The Getting started page could not be read ({path}: {exc.strerror}). "
                "It is the README's 'A five-minute tour'."
            )
        layout.addWidget(self.browser)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)


class PreferencesDialog(QDialog):
    """Worker count (with the interference warning), theme, and the results store."""

    def __init__(self, workers: int, theme: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Preferences")
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self.workers = QSpinBox(minimum=1, maximum=max(1, os.cpu_count() or 1) * 2, value=workers)
        form.addRow("Parallel jobs", self.workers)
        self.warning = QLabel(
            "Jobs running in parallel compete for the CPU and perturb each other's timings. "
            "Keep 1 for figures you compare; use more only for load tests. "
            "Runs with more than one record it."
        )
        self.warning.setWordWrap(True)
        # Shown or not, it keeps its space (a stack of it and an empty page): changing the
        # count must not move Theme under the pointer.
        self._warning_slot = QStackedWidget()
        calm = QLabel("One job at a time: figures you can compare.")
        calm.setWordWrap(True)
        calm.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)
        calm.setStyleSheet(f"color: {status_colour(Tone.MUTED, self.palette().color(QPalette.ColorRole.Window))};")
        self._warning_slot.addWidget(calm)
        self._warning_slot.addWidget(self.warning)
        warn = status_colour(Tone.WARN, self.palette().color(QPalette.ColorRole.Window))
        self.warning.setStyleSheet(f"color: {warn};")
        form.addRow("", self._warning_slot)
        self.theme = QComboBox()
        for option in Theme:
            self.theme.addItem(option.label, option)
        self.theme.setCurrentIndex(max(0, self.theme.findData(theme)))
        form.addRow("Theme", self.theme)
        # The results store (app/gui/store_choice.py): a path, or a PostgreSQL URL whose
        # password comes from PGPASSWORD or ~/.pgpass, never from this field.
        self.store = QLineEdit()
        self.store.setClearButtonEnabled(True)
        self.store.setMinimumWidth(self.store.fontMetrics().averageCharWidth() * 48)  # a URL, readable
        form.addRow("Results store", self.store)
        self.store_note = QLabel()
        self.store_note.setWordWrap(True)
        self.store_note.setStyleSheet(
            f"color: {status_colour(Tone.MUTED, self.palette().color(QPalette.ColorRole.Window))};"
        )
        form.addRow("", self.store_note)
        layout.addLayout(form)
        self.workers.valueChanged.connect(self._update_warning)
        self._update_warning()
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.ok_button = buttons.button(QDialogButtonBox.StandardButton.Ok)
        self._store_hint = ""
        self.store.textChanged.connect(self._check_store)

    def show_store(self, saved: str, current: StoreTarget, fixed: str | None) -> None:
        """The saved store in the field; `fixed` (why it cannot change here) greys it out."""
        self.store.setText(saved)
        self.store.setPlaceholderText(f"default: {default_store_path()}")
        self._store_hint = (
            f"In use: {current.shown} ({fixed})."
            if fixed
            else "An SQLite file, or postgresql://USER@HOST/DATABASE for a shared store; its password "
            "comes from PGPASSWORD or ~/.pgpass, never from here. Empty: this machine's own file."
        )
        self.store.setEnabled(fixed is None)
        self._check_store()

    def store_text(self) -> str | None:
        """The store to use from now on ("" for the default); None when it cannot change here."""
        return self.store.text().strip() if self.store.isEnabled() else None

    def _check_store(self) -> None:
        problem = password_problem(self.store.text()) if self.store.isEnabled() else None
        self.store_note.setText(f"Not saved: {problem}." if problem else self._store_hint)
        tone = Tone.BAD if problem else Tone.MUTED
        self.store_note.setStyleSheet(f"color: {status_colour(tone, self.palette().color(QPalette.ColorRole.Window))};")
        self.ok_button.setEnabled(problem is None)

    def _update_warning(self) -> None:
        self._warning_slot.setCurrentIndex(1 if self.workers.value() > 1 else 0)

"""The window's profile files: New, Open, Open preset, Save, Save As, recent files and
a profile dropped on the window. A base of `MainWindow`, whose state it uses: what the
window provides is declared here, so the type checker holds it to that (it sees a
QMainWindow base; at run time the class is a plain mixin, see `_Window`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QSettings, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QFileDialog, QMainWindow, QMenu, QMessageBox

from app.core.fileio import FileWriteError
from app.core.profile.files import load_profile, read_profile_file, save_profile
from app.core.profile.resolve import resolve_jobs
from app.core.settings.profile import Profile, ProfileError
from app.gui.config.panel import ConfigPanel, profile_json
from app.gui.config.profile_problems import all_problems, open_advice
from app.gui.words import plural

#: How many recent profile files File > Open Recent keeps.
MAX_RECENT = 8


if TYPE_CHECKING:
    _Window = QMainWindow
else:
    # A plain mixin at run time: PySide registers the signals of one QObject base only,
    # so a second QObject-derived base of MainWindow (beside ExportActions, which has
    # signals) would cost them theirs.
    _Window = object


class ProfileFileActions(_Window):
    """File > New / Open / Save of `MainWindow`, and its recent files."""

    # Provided by MainWindow.
    settings: QSettings
    panel: ConfigPanel
    recent_menu: QMenu
    profile_path: Path | None
    profile_name: str
    _saved_text: str

    if TYPE_CHECKING:  # MainWindow's methods; declared only, so they never shadow the real ones

        def error(self, title: str, message: str, next_step: str) -> None: ...
        def _folder(self, kind: str) -> str: ...
        def _remember_folder(self, kind: str, path: Path) -> None: ...

    def _current_text(self) -> str:
        try:
            return profile_json(self.panel.profile(self.profile_name))
        except ProfileError as exc:
            return f"invalid: {exc}"

    def _mark_saved(self) -> None:
        self._saved_text = self._current_text()
        self._update_title()

    def is_modified(self) -> bool:
        return self._current_text() != self._saved_text

    def _update_title(self) -> None:
        name = self.profile_path.name if self.profile_path else self.profile_name
        self.setWindowTitle(f"{name}[*] — CryptoBench")
        self.setWindowModified(self.is_modified())

    def confirm_discard(self) -> bool:
        """Ask before losing unsaved changes; True when it is fine to go on."""
        if not self.is_modified():
            return True
        answer = QMessageBox.question(
            self,
            "Unsaved changes",
            "The profile has unsaved changes. Save them first?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel,
        )
        if answer == QMessageBox.StandardButton.Save:
            return self.save_profile()
        return answer == QMessageBox.StandardButton.Discard

    def new_profile(self) -> None:
        if not self.confirm_discard():
            return
        self.panel.reset()
        self.profile_path, self.profile_name = None, "untitled"
        self._mark_saved()

    def open_profile_dialog(self) -> None:
        if not self.confirm_discard():
            return
        path, _ = QFileDialog.getOpenFileName(
            self, "Open profile", self._folder("profiles"), "CryptoBench profiles (*.json);;All files (*)"
        )
        if path:
            self.open_profile(Path(path), ask=False)

    def open_profile(self, path: Path, ask: bool = True) -> bool:
        if ask and not self.confirm_discard():
            return False
        try:
            profile = read_profile_file(path)
            self._show_profile(profile)
        except ProfileError as exc:
            problems = all_problems(exc, path)
            message = (
                str(exc)
                if len(problems) < 2
                else f"{plural(len(problems), 'problem')}:\n" + "\n".join(f"• {p}" for p in problems)
            )
            self.error("Cannot open the profile", message, open_advice(exc))
            return False
        self.profile_path, self.profile_name = path, profile.name
        self._remember_folder("profiles", path)
        self._add_recent(path)
        self._mark_saved()
        self.statusBar().showMessage(f"Opened {path}", 5000)
        return True

    def open_preset(self, name: str) -> None:
        if not self.confirm_discard():
            return
        try:
            profile = load_profile(name)
            self._show_profile(profile)
        except ProfileError as exc:
            self.error("Cannot open the preset", str(exc), "Report this: presets ship with the app.")
            return
        self.profile_path, self.profile_name = None, profile.name
        self._mark_saved()

    def _show_profile(self, profile: Profile) -> None:
        resolve_jobs(profile, has_remote=True)  # meaning errors first, with the file's field names
        self.panel.set_profile(profile)

    def save_profile(self) -> bool:
        if self.profile_path is None:
            return self.save_profile_as()
        return self._write_profile(self.profile_path)

    def save_profile_as(self) -> bool:
        suggested = str(Path(self._folder("profiles")) / f"{self.profile_name}.json")
        path, _ = QFileDialog.getSaveFileName(self, "Save profile", suggested, "CryptoBench profiles (*.json)")
        if not path:
            return False
        target = Path(path) if path.endswith(".json") else Path(path + ".json")
        # The profile is named after its file: a copy saved as mine.json is "mine", not
        # the preset it came from (its experiment, if any, is kept).
        previous, self.profile_name = self.profile_name, target.stem
        if not self._write_profile(target):
            self.profile_name = previous
            return False
        return True

    def _write_profile(self, path: Path) -> bool:
        try:
            profile = self.panel.profile(self.profile_name)
        except ProfileError as exc:
            self.error("Cannot save the profile", str(exc), "Fix the marked field first.")
            return False
        try:
            save_profile(profile, path)
        except FileWriteError as exc:
            self.error(
                "Cannot save the profile",
                str(exc),
                "Choose another folder or free some space; the previous file is untouched.",
            )
            return False
        self.profile_path = path
        self._remember_folder("profiles", path)
        self._add_recent(path)
        self._mark_saved()
        self.statusBar().showMessage(f"Saved {path}", 5000)
        return True

    def _recent(self) -> list[str]:
        value = self.settings.value("recent", [])
        items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
        return [str(v) for v in items]

    def _add_recent(self, path: Path) -> None:
        recent = [str(path)] + [p for p in self._recent() if p != str(path)]
        self.settings.setValue("recent", recent[:MAX_RECENT])
        self._refresh_recent_menu()

    def _refresh_recent_menu(self) -> None:
        self.recent_menu.clear()
        recent = self._recent()
        for path in recent:
            # `checked` takes triggered's argument, so `file` keeps this entry's path.
            def open_it(checked: bool = False, file: str = path) -> None:
                self.open_profile(Path(file))

            self.recent_menu.addAction(path, open_it)
        self.recent_menu.setEnabled(bool(recent))

    # drag and drop a profile file onto the window
    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        urls = event.mimeData().urls()
        if urls and urls[0].isLocalFile() and urls[0].toLocalFile().endswith(".json"):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        url: QUrl = event.mimeData().urls()[0]
        self.open_profile(Path(url.toLocalFile()))

"""The configuration panel's check: is the profile it shows runnable, and if not, why,
said above the scheme tree and next to the field at fault (a mixin of `ConfigPanel`).

Every change is checked through the core (`resolve_jobs`), as the CLI checks a profile
file; the core's field names become the panel's words in problem_words.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from PySide6.QtWidgets import QLineEdit, QSpinBox, QTreeWidget, QTreeWidgetItem

from app.core.profile.resolve import resolve_jobs
from app.core.settings.profile import Profile, ProfileError
from app.core.vocab import Mode
from app.gui.config.job_settings import JobSettingsEditor
from app.gui.config.problem_words import PanelProblem, describe_problem, row_names
from app.gui.messages import MessageSlot
from app.gui.words import plural

#: The border of a field whose value is refused.
INVALID_STYLE = "border: 1px solid #d32f2f;"
#: The tree's first column: the row's name.
_COL_SCHEME = 0


class PanelChecks:
    """Declarations of what the check reads (set by `ConfigPanel`), and the check itself."""

    _loading: bool
    _valid: bool
    _reason: str
    message: MessageSlot
    settings_editor: JobSettingsEditor
    tree: QTreeWidget
    custom_sizes: QLineEdit
    remote_host: QLineEdit
    remote_port: QSpinBox
    token_file: QLineEdit
    valid_changed: Any  # a Signal(bool, str) of the panel

    if TYPE_CHECKING:  # defined by ConfigPanel

        def checked_rows(self) -> list[QTreeWidgetItem]: ...

        def profile(self, name: str = "untitled", description: str | None = None) -> Profile: ...

    def remote_settings(self) -> tuple[str, int, str]:
        return self.remote_host.text().strip(), self.remote_port.value(), self.token_file.text().strip()

    def revalidate(self) -> None:
        """Check the panel through the core; say why not above the tree and next to the
        field at fault, mark the field; tell the window."""
        if self._loading:
            return
        for widget in (
            self.custom_sizes,
            self.remote_host,
            self.token_file,
            self.tree,
            self.settings_editor.load.rates,
            self.settings_editor.load.cluster,
        ):
            widget.setStyleSheet("")
        self.settings_editor.link.clear_marks()
        for note in self.settings_editor.notes.values():
            note.clear_error()
        problem: PanelProblem | None = None
        try:
            profile = self.profile()
            mode_remote = any(job.mode == Mode.REMOTE for job in profile.jobs)
            resolve_jobs(profile, has_remote=True)
            if mode_remote:
                host, _, token = self.remote_settings()
                if not host:
                    raise ProfileError("enter the server's host name or address", field="server")
                if not token:
                    raise ProfileError("choose the server's token file", field="token")
        except ProfileError as exc:
            problem = self._describe(exc)
        reason = problem.text if problem else ""
        self._valid = not reason
        self._reason = reason
        checked = self.checked_rows()
        # No red message before anything is ticked: the hint says what to do.
        if not checked:
            self.message.show_hint()
        elif problem is not None:
            self.message.show_problem(f"Cannot run: {reason}")
        else:
            self.message.show_ready(f"{plural(len(checked), 'job')} ticked: press Run (Ctrl+R) to measure.")
        self.valid_changed.emit(self._valid, reason)

    def _describe(self, exc: ProfileError) -> PanelProblem:
        """The error in the panel's words; the widget at fault marked, its note saying why."""
        checked = self.checked_rows()
        problem = describe_problem(exc.field, exc.detail, row_names([row.text(_COL_SCHEME) for row in checked]))
        where = exc.field or ""
        if problem.note == "sizes":
            self.custom_sizes.setStyleSheet(INVALID_STYLE)
        elif problem.note == "rates":
            self.settings_editor.load.rates.setStyleSheet(INVALID_STYLE)
        elif problem.note == "cluster":
            self.settings_editor.load.cluster.setStyleSheet(INVALID_STYLE)
        elif problem.note == "link":
            self.settings_editor.link.mark_invalid(
                where[where.index("]") + 2 :] if "]" in where else where, INVALID_STYLE
            )
        elif problem.note == "remote":
            (self.remote_host if where == "server" else self.token_file).setStyleSheet(INVALID_STYLE)
        if problem.note is not None:
            self.settings_editor.notes[problem.note].show_error(exc.detail if problem.row is None else problem.text)
        if problem.row is not None and problem.row < len(checked):
            row = checked[problem.row]
            if self.tree.currentItem() is None or not row.isSelected():
                self.tree.scrollToItem(row)
        return problem

    @property
    def is_valid(self) -> bool:
        return self._valid

    @property
    def reason(self) -> str:
        return self._reason

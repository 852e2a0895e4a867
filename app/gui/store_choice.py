"""Which results store the window uses, and Edit > Preferences' field for it.

In order: the store the window was opened on (tests, `gui --isolated`), then
`CRYPTOBENCH_STORE`, then the Preferences' "Results store", then the local SQLite file,
as the command line does (docs/shared-store.md). A password never reaches the settings
file: the field refuses a URL that carries one (`target.password_problem`), and a
saved value with one (edited by hand) is ignored.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QSettings

from app.core.store.paths import default_store_path
from app.core.store.target import StoreLike, StoreTarget, password_problem, store_target

SETTING = "store"


def saved_store(settings: QSettings) -> str:
    """The Preferences' store as saved ("" for the default)."""
    text = str(settings.value(SETTING, "") or "").strip()
    return "" if password_problem(text) else text


def fixed_reason(given: StoreLike | None) -> str | None:
    """Why the Preferences cannot change the store, or None when they can."""
    if given is not None:
        return "this window was opened on a store of its own (--store)"
    if os.environ.get("CRYPTOBENCH_STORE", "").strip():
        return "set by CRYPTOBENCH_STORE in the environment"
    return None


def window_store(settings: QSettings, given: StoreLike | None) -> StoreTarget:
    if given is not None:
        return store_target(given)
    named = os.environ.get("CRYPTOBENCH_STORE", "").strip() or saved_store(settings)
    return store_target(named) if named else StoreTarget(path=default_store_path())


def save_store(settings: QSettings, text: str) -> StoreTarget:
    """Keep the store chosen in Preferences ("" for the default); the store it names."""
    text = text.strip()
    if password_problem(text):  # the dialog refuses it first; never written, whatever the caller
        raise ValueError(password_problem(text))
    settings.setValue(SETTING, text)
    return store_target(text) if text else StoreTarget(path=default_store_path())

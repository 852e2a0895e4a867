"""Start the desktop window (`python -m app` with no arguments, or `make run`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from app import __version__
    from app.gui.main_window import APPLICATION, ORGANIZATION, MainWindow
    from app.gui.theme import apply_theme

    app = QApplication.instance() or QApplication(list(argv if argv is not None else sys.argv))
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationVersion(__version__)
    settings = QSettings(ORGANIZATION, APPLICATION)
    apply_theme(app, str(settings.value("theme", "system")))
    window = MainWindow(settings)
    window.show()
    code = int(app.exec())
    # Destroy the window while the QApplication still exists: left to interpreter
    # shutdown, PySide 6.12 tears the wrappers down after the application and aborts
    # in the garbage collector ("bool_dealloc"), measured after any widget grab.
    import gc

    from PySide6.QtCore import QEvent

    window.deleteLater()
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    del window
    gc.collect()
    return code


if __name__ == "__main__":
    sys.exit(main())

"""The report as a PDF, painted with Qt alone (QPdfWriter + QPainter).

Text stays vector text with its fonts embedded (QPdfWriter embeds the glyphs used),
so the PDF is searchable and prints sharply. Layout lives in `pdf_layout`: it places
everything on pages first, so each footer can say "Page N of M"; this module paints
those pages and writes the file atomically (temporary file in the same folder, then a
rename), so a failed or cancelled export never leaves half a report over a good one.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QBuffer, QIODevice, QMarginsF, QRectF
from PySide6.QtGui import QGuiApplication, QPageLayout, QPageSize, QPainter, QPdfWriter

from app.core.fileio import FileWriteError, create_temp_beside, write_target
from app.core.vocab import PageSize
from app.report.model import Report
from app.report.pdf.layout import layout_report
from app.report.pdf.text import DPI

PAGE_SIZES: dict[str, QPageSize.PageSizeId] = {
    PageSize.A4: QPageSize.PageSizeId.A4,
    PageSize.LETTER: QPageSize.PageSizeId.Letter,
}

#: Keeps the application created by `ensure_gui_application` alive (Qt needs one object).
_MADE: list[QGuiApplication] = []


def ensure_gui_application() -> None:
    """Create a QGuiApplication if none exists (painting text needs one).

    A CLI export runs without a display: on Linux with neither DISPLAY nor
    WAYLAND_DISPLAY (and no explicit QT_QPA_PLATFORM), use the offscreen platform
    rather than let Qt abort for want of an X server.
    """
    instance = QGuiApplication.instance()
    if instance is not None:
        if not isinstance(instance, QGuiApplication):
            raise RuntimeError("a QCoreApplication exists; PDF reports need a QGuiApplication to paint text")
        return
    if (
        sys.platform.startswith("linux")
        and not os.environ.get("QT_QPA_PLATFORM")
        and not os.environ.get("DISPLAY")
        and not os.environ.get("WAYLAND_DISPLAY")
    ):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    _MADE.append(QGuiApplication(sys.argv[:1] or ["cryptobench"]))


def _creator() -> str:
    try:
        from app import __version__
    except ImportError:  # pragma: no cover - the package always has a version
        return "CryptoBench"
    return f"CryptoBench {__version__}"


def _render(
    report: Report, page_size: QPageSize.PageSizeId, on_section: Callable[[int], None] | None
) -> tuple[bytes, int]:
    """Lay out and paint the report into memory: (PDF bytes, page count)."""
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    writer = QPdfWriter(buffer)
    writer.setResolution(DPI)
    writer.setPageLayout(
        QPageLayout(
            QPageSize(page_size), QPageLayout.Orientation.Portrait, QMarginsF(0, 0, 0, 0), QPageLayout.Unit.Millimeter
        )
    )
    writer.setTitle(report.title)
    writer.setCreator(_creator())
    page_rect = QRectF(writer.pageLayout().fullRectPixels(DPI))
    laid_out = layout_report(report, writer, page_rect, on_section=on_section)
    painter = QPainter()
    if not painter.begin(writer):
        raise OSError("cannot start painting the PDF")
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        for number, ops in enumerate(laid_out.pages):
            if number and not writer.newPage():
                raise OSError("cannot start a new PDF page")
            for op in ops:
                painter.save()
                try:
                    op.paint(painter)
                finally:
                    painter.restore()
    finally:
        painter.end()
        buffer.close()
    return bytes(buffer.data().data()), len(laid_out.pages)


def write_pdf(
    report: Report, path: Path, page_size: str = PageSize.A4, *, progress: Callable[[int, int], None] | None = None
) -> int:
    """Write the report; return the number of pages.

    Writes to a temporary file in the same folder and renames it into place (atomic:
    a failure leaves any previous file untouched). `progress(done, total)` is called
    once per section laid out and a last time when the file is in place, with
    total = sections + 1, so `done == total` means finished. A callback that raises
    (a cancel button) stops the export and leaves the previous file as it was.

    Raises:
        ValueError: unknown page size (the message names it).
        OSError: the folder is not writable or the write failed (the message names the path).
    """
    if page_size not in PAGE_SIZES:
        raise ValueError(f"unknown page size {page_size!r}: choose one of {', '.join(PAGE_SIZES)}")
    path = Path(path)
    target = write_target(path)  # through a symlink: the link stays, its target is updated
    folder = target.parent if str(target.parent) else Path(".")
    total = len(report.sections) + 1
    # Claim the temporary file first: an unwritable folder fails before any work. Its
    # mode is the replaced file's, or the umask's for a new one (as for every export).
    try:
        fd, tmp_name = create_temp_beside(target)
    except OSError as exc:
        raise _write_error(exc, f"{path}: cannot write in {folder}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            ensure_gui_application()
            if progress:
                progress(0, total)
            data, pages = _render(
                report, PAGE_SIZES[page_size], (lambda done: progress(done, total)) if progress else None
            )
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, target)
    except OSError as exc:
        _remove(tmp_name)
        raise _write_error(exc, f"{path}: cannot write") from None
    except BaseException:
        _remove(tmp_name)
        raise
    if progress:
        progress(total, total)
    return pages


def _write_error(exc: OSError, context: str) -> FileWriteError:
    """An OSError that names the file (and keeps errno for callers that test it)."""
    message = f"{context}: {exc.strerror or exc}"
    return FileWriteError(exc.errno, message) if exc.errno is not None else FileWriteError(message)


def _remove(name: str) -> None:
    try:
        os.unlink(name)
    except OSError:
        pass

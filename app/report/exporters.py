"""One exporter interface for the GUI and the CLI: a name, a file suffix, a writer.

    export(ExportFormat.PDF, run, Path("r.pdf"), baseline=other, page_size=PageSize.LETTER)

JSON and CSV are the results contract (`app.core.results.model`); Markdown and PDF are
reports built from the same content model (`app.report.content`), so a finding in the
PDF is the same sentence in the Markdown. Every exporter writes atomically: a failure
leaves the previous file untouched. Only the PDF exporter touches Qt, and only when
used, so the text exporters work in a Qt-free process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.core.errors import CryptoBenchError
from app.core.fileio import atomic_write_text
from app.core.json_bounds import structure_problem
from app.core.results import model as results_io
from app.core.results.model import RunResult
from app.core.vocab import ExportFormat, PageSize

if TYPE_CHECKING:
    from app.core.analysis.evidence import MovementSource

#: Called with (done, total) while a long export (the PDF) is written.
ProgressCallback = Callable[[int, int], None]


class ExportError(CryptoBenchError):
    """An export asked for in a way no exporter serves (format, page size, baseline);
    the message names the value and the choices. A file that cannot be written is an
    OSError (app.core.fileio.FileWriteError) naming the file."""


class ExportTooLarge(ExportError):
    """A results JSON file was written, but is larger than this app reads back."""


@dataclass(frozen=True)
class ExportOptions:
    baseline: RunResult | None = None
    #: How much runs of the baseline's jobs move on its machine, from the store's runs
    #: (app/core/analysis/spread.py): what a comparison of one run a side is judged against.
    movement: MovementSource | None = None
    page_size: str = PageSize.A4
    progress: ProgressCallback | None = None
    #: The full-statistics appendix (reports only); on unless the user turns it off.
    appendix: bool = True


@dataclass(frozen=True)
class Exporter:
    name: ExportFormat
    title: str  # for file dialogs and help: "PDF report"
    suffix: str  # ".pdf"
    is_report: bool  # a report (takes a baseline) rather than raw results
    write: Callable[[RunResult, Path, ExportOptions], None]

    @property
    def file_filter(self) -> str:
        """A Qt file-dialog filter: "PDF report (*.pdf)"."""
        return f"{self.title} (*{self.suffix})"


def _write_json(run: RunResult, path: Path, options: ExportOptions) -> None:
    text = results_io.to_json(run)
    atomic_write_text(path, text)
    size = len(text.encode("utf-8"))
    if size > results_io.MAX_RESULTS_FILE_BYTES:
        # Written (the user may want it elsewhere), but this app would refuse to read it
        # back: said now, not when an import or a report fails on it later.
        raise ExportTooLarge(
            f"{path}: written ({size / 2**20:.0f} MiB), but over the "
            f"{results_io.MAX_RESULTS_FILE_BYTES / 2**20:.0f} MiB results file that import, report and "
            f"compare read back; report and compare this run from the store by its id ({run.id}), "
            "or split the profile into smaller runs"
        )
    # The structure caps are set above anything to_json writes within the byte bound, so
    # this is a guard for the day the format changes, not a case expected today.
    structure = structure_problem(
        text,
        max_containers=results_io.MAX_RESULTS_CONTAINERS,
        max_values=results_io.MAX_RESULTS_VALUES,
        holds="a results file of this app holds",
    )
    if structure is not None:
        raise ExportTooLarge(
            f"{path}: written, but it holds {structure}, so import, report and compare would refuse it; "
            f"report and compare this run from the store by its id ({run.id}), or split the profile into smaller runs"
        )


def _write_csv(run: RunResult, path: Path, options: ExportOptions) -> None:
    atomic_write_text(path, results_io.to_csv(run))


def _write_markdown(run: RunResult, path: Path, options: ExportOptions) -> None:
    from app.report.content import build_report
    from app.report.markdown import render_markdown

    atomic_write_text(
        path, render_markdown(build_report(run, options.baseline, appendix=options.appendix, movement=options.movement))
    )


def _write_pdf(run: RunResult, path: Path, options: ExportOptions) -> None:
    from app.report.content import build_report
    from app.report.pdf.writer import ensure_gui_application, write_pdf

    ensure_gui_application()
    write_pdf(
        build_report(run, options.baseline, appendix=options.appendix, movement=options.movement),
        path,
        options.page_size,
        progress=options.progress,
    )


EXPORTERS: dict[ExportFormat, Exporter] = {
    e.name: e
    for e in (
        Exporter(ExportFormat.JSON, "JSON results", ".json", False, _write_json),
        Exporter(ExportFormat.CSV, "CSV results", ".csv", False, _write_csv),
        Exporter(ExportFormat.MARKDOWN, "Markdown report", ".md", True, _write_markdown),
        Exporter(ExportFormat.PDF, "PDF report", ".pdf", True, _write_pdf),
    )
}


def exporter(name: str) -> Exporter:
    """The exporter called `name`; ExportError lists the valid names."""
    try:
        return EXPORTERS[ExportFormat(name.lower())]
    except ValueError:
        raise ExportError(f"unknown export format {name!r}: choose one of {', '.join(EXPORTERS)}") from None


def export(
    name: str,
    run: RunResult,
    path: Path,
    *,
    baseline: RunResult | None = None,
    movement: MovementSource | None = None,
    page_size: str = PageSize.A4,
    progress: ProgressCallback | None = None,
    appendix: bool = True,
) -> Path:
    """Write `run` as format `name` to `path` (atomically) and return the path.

    Raises:
        ExportError: unknown format or page size, or a baseline given to a results format.
        OSError: the file cannot be written (the message names it).
    """
    chosen = exporter(name)
    if page_size not in set(PageSize):
        raise ExportError(f"unknown page size {page_size!r}: choose {' or '.join(PageSize)}")
    if baseline is not None and not chosen.is_report:
        raise ExportError(f"a baseline run only applies to reports (Markdown, PDF), not {chosen.title}")
    options = ExportOptions(
        baseline=baseline, movement=movement, page_size=page_size, progress=progress, appendix=appendix
    )
    chosen.write(run, Path(path), options)
    return Path(path)

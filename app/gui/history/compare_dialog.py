"""Compare two stored runs: a baseline (a) against a candidate (b), metric by metric.

`CompareDialog` matches the jobs of a baseline run (a) and a candidate run (b) by
`compare.match_key` (scheme, backend, params, mode, message size, link, placement)
and, for each metric both have, reports the ratio of medians b / a with its 95 %
bootstrap interval (`median_ratio.compare`). The verdict is the evidence rule's
(`app.core.analysis.evidence.decide`, which `cryptobench compare` and the report ask too):
one run a side, so "faster" or "slower" only when the store's runs of the job measured how
much whole runs move on that machine and the interval clears it; "no verdict" without that,
with too few samples or a reduced run. The bootstraps run a few at a time on the event loop
so that a large run does not freeze the window; `rows()` finishes them at once.
"""

from __future__ import annotations

import enum
import html
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from time import perf_counter
from typing import Any

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QLabel, QPushButton, QVBoxLayout, QWidget

from app.core.analysis import median_ratio
from app.core.analysis.compare import EnvDifference, MatchKey, environment_differences, match_key, unmatched_reason
from app.core.analysis.evidence import MIN_MOVEMENT_RUNS, MovementSource, Sides, decide, reduced_sides, samples_first
from app.core.escaping import escape_control
from app.core.results.model import JobResult, RunResult
from app.core.vocab import JobStatus, Verdict
from app.gui.results.table import sortable_view
from app.gui.theme import status_qcolor
from app.gui.vocab import Tone
from app.gui.words import plural
from app.report.units import format_bytes, format_seconds

__all__ = [
    "FASTER",
    "NOT_COMPARABLE",
    "NO_VERDICT",
    "ONLY_IN_BASELINE",
    "ONLY_IN_CANDIDATE",
    "SLOWER",
    "WITHIN_NOISE",
    "CompareColumn",
    "CompareDialog",
    "CompareRow",
    "compare_runs",
    "environment_line",
    "job_key",
    "local_time",
]

FASTER = "faster"
SLOWER = "slower"
WITHIN_NOISE = "within noise"
ONLY_IN_BASELINE = "only in baseline"
ONLY_IN_CANDIDATE = "only in candidate"
NOT_COMPARABLE = "not comparable"
NO_VERDICT = str(Verdict.NO_VERDICT)
_PENDING = "…"

_SORT_ROLE = int(Qt.ItemDataRole.UserRole)


def local_time(iso: str | None) -> str:
    """An ISO timestamp as local "YYYY-MM-DD HH:MM:SS" (the text itself if it does not parse)."""
    if not iso:
        return "-"
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.strftime("%Y-%m-%d %H:%M:%S")


# --- comparison (plain data, no Qt) -------------------------------------------------------------


def job_key(job: JobResult) -> MatchKey:
    """What makes two jobs of different runs the same measurement: `compare.match_key`
    (scheme, backend, parameters, mode, size, link, placement), as the report and the
    `compare` command pair them."""
    return match_key(job)


@dataclass(frozen=True)
class CompareRow:
    """One metric of one matched job (or one unmatched job, with `metric` None).

    `ratio` = median_b / median_a with its 95 % bootstrap interval; None when not
    computed (unmatched, not comparable, or still pending in the dialog).
    """

    label: str
    scheme: str
    backend: str
    params: dict[str, Any]
    mode: str
    message_size: int
    metric: str | None
    median_a: float | None
    median_b: float | None
    ratio: float | None
    ci95_low: float | None
    ci95_high: float | None
    significant: bool | None
    verdict: str
    note: str = ""


def _row(job: JobResult, **fields: Any) -> CompareRow:
    """A row for `job` with nothing compared yet; `fields` override the defaults."""
    defaults: dict[str, Any] = {
        "metric": None,
        "median_a": None,
        "median_b": None,
        "ratio": None,
        "ci95_low": None,
        "ci95_high": None,
        "significant": None,
        "verdict": NOT_COMPARABLE,
        "note": "",
    }
    defaults.update(fields)
    return CompareRow(
        label=job.label,
        scheme=job.scheme,
        backend=job.backend,
        params=dict(job.params),
        mode=job.mode,
        message_size=job.message_size,
        **defaults,
    )


def _status_note(a: JobResult, b: JobResult) -> str:
    notes = []
    if a.status != JobStatus.OK:
        notes.append(f"baseline {a.status}" + (f": {escape_control(a.error)}" if a.error else ""))
    if b.status != JobStatus.OK:
        notes.append(f"candidate {b.status}" + (f": {escape_control(b.error)}" if b.error else ""))
    return "; ".join(notes)


_Task = tuple[JobResult, JobResult]


def _plan(a: RunResult, b: RunResult) -> list[tuple[CompareRow, _Task | None]]:
    """Rows in baseline job order, then jobs only in the candidate. A row paired with a
    task still needs its bootstrap (`_complete`); the others are final."""
    candidates: dict[MatchKey, list[JobResult]] = {}
    for job in b.jobs:
        candidates.setdefault(job_key(job), []).append(job)
    planned: list[tuple[CompareRow, _Task | None]] = []
    withheld = reduced_sides([a], [b])  # a reduced run on a side: no verdict at all (evidence)
    for ja in a.jobs:
        matches = candidates.get(job_key(ja))
        if not matches:
            planned.append((_row(ja, verdict=ONLY_IN_BASELINE, note=unmatched_reason(ja, b.jobs) or ""), None))
            continue
        jb = matches.pop(0)  # a job repeated in a profile pairs with its n-th repetition
        note = _status_note(ja, jb)
        common = [name for name in ja.metrics if name in jb.metrics]
        if not common:
            planned.append((_row(ja, note=note or "no metric measured in both runs"), None))
            continue
        for name in common:
            row = _row(
                ja,
                metric=name,
                median_a=ja.metrics[name].stats.median,
                median_b=jb.metrics[name].stats.median,
                verdict=_PENDING if withheld is None else NO_VERDICT,
                note=note if withheld is None else (f"{note}; {withheld}" if note else withheld),
            )
            planned.append((row, (ja, jb) if withheld is None else None))
    for matches in candidates.values():
        for jb in matches:
            planned.append((_row(jb, verdict=ONLY_IN_CANDIDATE, note=unmatched_reason(jb, a.jobs) or ""), None))
    return planned


def _noted(row: CompareRow, note: str | None) -> str:
    return "; ".join(part for part in (row.note, note) if part)


def _complete(row: CompareRow, task: _Task, movement: MovementSource | None = None) -> CompareRow:
    """The row's ratio and the evidence rule's verdict (`evidence.decide`, as `cryptobench
    compare` and the report decide it: a row and the report never disagree on two runs)."""
    ja, jb = task
    assert row.metric is not None
    ma, mb = ja.metrics[row.metric], jb.metrics[row.metric]
    if ma.stats.unit != mb.stats.unit:
        return replace(row, verdict=NOT_COMPARABLE, note=f"units differ ({ma.stats.unit} vs {mb.stats.unit})")
    sides = Sides(
        len(ma.samples), len(mb.samples), movement=movement.of(ja, row.metric) if movement is not None else None
    )
    early = samples_first(sides)
    if early is not None:
        return replace(row, verdict=NO_VERDICT, note=_noted(row, early.reason))
    try:
        result = median_ratio.compare(ma.samples, mb.samples)
    except ValueError as exc:
        return replace(row, verdict=NOT_COMPARABLE, note=_noted(row, str(exc)))
    decision = decide(result, sides)
    verdict: str = decision.verdict  # a Verdict for times; "higher" / "lower" for other units
    if ma.stats.unit != "s" and decision.verdict in (Verdict.FASTER, Verdict.SLOWER):
        verdict = "higher" if result.ratio > 1 else "lower"
    return replace(
        row,
        ratio=result.ratio,
        ci95_low=result.ci95_low,
        ci95_high=result.ci95_high,
        significant=decision.verdict in (Verdict.FASTER, Verdict.SLOWER),
        verdict=verdict,
        note=_noted(row, decision.reason),
    )


def compare_runs(a: RunResult, b: RunResult, movement: MovementSource | None = None) -> list[CompareRow]:
    """Every comparison row of baseline `a` and candidate `b` (see the module docstring);
    `movement`: how much runs of `a`'s jobs move on its machine (app/core/analysis/spread.py)."""
    return [_complete(row, task, movement) if task else row for row, task in _plan(a, b)]


# --- compare dialog ----------------------------------------------------------------------------


class CompareColumn(enum.IntEnum):
    JOB = 0
    SIZE = 1
    METRIC = 2
    VERDICT = 3
    RATIO = 4
    CI95 = 5
    MEDIAN_A = 6
    MEDIAN_B = 7
    MODE = 8
    NOTE = 9


_COMPARE_HEADERS = {
    CompareColumn.JOB: "Job",
    CompareColumn.SIZE: "Size",
    CompareColumn.METRIC: "Metric",
    CompareColumn.VERDICT: "Verdict",
    CompareColumn.RATIO: "Ratio b/a",
    CompareColumn.CI95: "95 % CI of ratio",
    CompareColumn.MEDIAN_A: "Baseline (a)",
    CompareColumn.MEDIAN_B: "Candidate (b)",
    CompareColumn.MODE: "Mode",
    CompareColumn.NOTE: "Note",
}
_NUMERIC_COMPARE_COLUMNS = frozenset(
    {CompareColumn.SIZE, CompareColumn.RATIO, CompareColumn.CI95, CompareColumn.MEDIAN_A, CompareColumn.MEDIAN_B}
)
_VERDICT_COLOURS = {
    FASTER: Tone.GOOD,
    SLOWER: Tone.BAD,
    WITHIN_NOISE: Tone.MUTED,
    NO_VERDICT: Tone.MUTED,
    ONLY_IN_BASELINE: Tone.MUTED,
    ONLY_IN_CANDIDATE: Tone.MUTED,
    NOT_COMPARABLE: Tone.WARN,
}


def _run_line(role: str, run: RunResult) -> str:
    host = _plain(run.environment_view.hostname or "unknown machine")
    return f"<b>{role}:</b> {_plain(run.profile_view.marked_name)} · {local_time(run.started)} · {host} · run {run.id}"


#: Environment differences named in the dialog's line; the rest are in its tooltip.
SHOWN_DIFFERENCES = 4


def _difference(difference: EnvDifference) -> str:
    """One difference; its values are stored text (a results file from anywhere), escaped."""
    return escape_control(
        f"{difference.what} ({difference.base or 'not recorded'} → {difference.new or 'not recorded'})"
    )


def environment_line(a: RunResult, b: RunResult) -> tuple[str, str]:
    """What differs between where `a` and `b` ran (`compare.environment_differences`), as
    one line naming the first few, and a tooltip naming all."""
    differences = environment_differences(a.environment, b.environment)
    if not differences:
        return "Same machine and libraries: the environments recorded do not differ.", ""
    named = ", ".join(_difference(d) for d in differences[:SHOWN_DIFFERENCES])
    more = len(differences) - SHOWN_DIFFERENCES
    text = f"Differs between the runs: {named}" + (f" and {more} more (hover to see them)." if more > 0 else ".")
    return text, "\n".join(_difference(d) for d in differences)


def _plain(text: str) -> str:
    """Stored text inside rich text: control characters shown as escapes, markup inert."""
    return html.escape(escape_control(text))


class CompareDialog(QDialog):
    """Baseline `a` against candidate `b`, metric by metric. Non-blocking: use show() or open()."""

    #: Time spent on bootstraps per event-loop turn while filling the table.
    TICK_BUDGET_S = 0.04

    def __init__(
        self,
        a: RunResult,
        b: RunResult,
        parent: QWidget | None = None,
        movement: Callable[[RunResult, RunResult], MovementSource | None] | None = None,
    ) -> None:
        """`movement(baseline, candidate)`: how much runs of the baseline's jobs move on its
        machine, from the store (app/core/analysis/spread.py); None: not measured."""
        super().__init__(parent)
        self.setWindowTitle("Compare runs")
        self.resize(1100, 500)
        self._a, self._b = a, b
        self._movement_of = movement
        self._movement: MovementSource | None = None
        self._rows: list[CompareRow] = []
        self._tasks: list[tuple[int, _Task]] = []
        self._items: list[list[QStandardItem]] = []

        self.runs_label = QLabel(self)
        self.runs_label.setTextFormat(Qt.TextFormat.RichText)
        self.runs_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        explanation = QLabel(
            "Ratio = candidate median / baseline median, with its 95 % bootstrap interval. One run a side: "
            "its interval covers the spread within each run, not how much a whole run moves, so "
            "“faster” or “slower” only where stored runs of the job on this machine measured that "
            "movement and the interval clears it; otherwise “within noise” or “no verdict”.",
            self,
        )
        explanation.setWordWrap(True)
        self.environment_label = QLabel(self)
        self.environment_label.setTextFormat(Qt.TextFormat.PlainText)  # stored text, never markup
        self.environment_label.setWordWrap(True)
        self.summary_label = QLabel(self)
        self.summary_label.setWordWrap(True)

        self.model = QStandardItemModel(0, len(_COMPARE_HEADERS), self)
        self.model.setHorizontalHeaderLabels([_COMPARE_HEADERS[c] for c in CompareColumn])
        self.proxy, self.view = sortable_view(self.model, _SORT_ROLE, self)

        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        self.swap_button = QPushButton("Swap baseline and candidate", self)
        buttons.addButton(self.swap_button, QDialogButtonBox.ButtonRole.ActionRole)
        buttons.rejected.connect(self.reject)
        self.swap_button.clicked.connect(self.swap)

        layout = self._layout = QVBoxLayout(self)  # kept: fit_width reads its margins
        layout.addWidget(self.runs_label)
        layout.addWidget(self.environment_label)
        layout.addWidget(explanation)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.summary_label)
        layout.addWidget(buttons)

        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._work)
        self._build()

    # --- API ---

    @property
    def baseline(self) -> RunResult:
        return self._a

    @property
    def candidate(self) -> RunResult:
        return self._b

    def rows(self) -> list[CompareRow]:
        """All comparison rows in job order (finishing any pending bootstraps first)."""
        self._run_tasks(budget=None)
        return list(self._rows)

    def is_complete(self) -> bool:
        return not self._tasks

    def swap(self) -> None:
        self._a, self._b = self._b, self._a
        self._build()

    # --- internals ---

    def _build(self) -> None:
        self._timer.stop()
        self.runs_label.setText(_run_line("Baseline (a)", self._a) + "<br>" + _run_line("Candidate (b)", self._b))
        text, tip = environment_line(self._a, self._b)
        self.environment_label.setText(text)
        self.environment_label.setToolTip(tip)
        self._movement = self._movement_of(self._a, self._b) if self._movement_of is not None else None
        planned = _plan(self._a, self._b)
        self._rows = [row for row, _ in planned]
        self._tasks = [(i, task) for i, (_, task) in enumerate(planned) if task is not None]
        self.model.removeRows(0, self.model.rowCount())
        self._items = []
        for row in self._rows:
            items = [QStandardItem() for _ in CompareColumn]
            self._fill(items, row)
            self.model.appendRow(items)
            self._items.append(items)
        self._update_summary()
        if self._tasks:
            self._timer.start()

    def _work(self) -> None:
        self._run_tasks(budget=self.TICK_BUDGET_S)

    def _run_tasks(self, budget: float | None) -> None:
        start = perf_counter()
        while self._tasks:
            position, task = self._tasks.pop(0)
            self._rows[position] = _complete(self._rows[position], task, self._movement)
            self._fill(self._items[position], self._rows[position])
            if budget is not None and perf_counter() - start > budget:
                break
        if not self._tasks:
            self._timer.stop()
        self._update_summary()

    def _fill(self, items: list[QStandardItem], row: CompareRow) -> None:
        ratio = row.ratio
        ci = (
            f"[{row.ci95_low:.3f}, {row.ci95_high:.3f}]"
            if row.ci95_low is not None and row.ci95_high is not None
            else ""
        )
        values: dict[CompareColumn, tuple[str, Any]] = {
            CompareColumn.JOB: (row.label, row.label),
            CompareColumn.SIZE: (format_bytes(row.message_size), float(row.message_size)),
            CompareColumn.METRIC: (row.metric or "", row.metric or ""),
            CompareColumn.VERDICT: (row.verdict, row.verdict),
            CompareColumn.RATIO: (f"{ratio:.3f}×" if ratio is not None else "", ratio),
            CompareColumn.CI95: (ci, row.ci95_low),
            CompareColumn.MEDIAN_A: (format_seconds(row.median_a) if row.median_a is not None else "", row.median_a),
            CompareColumn.MEDIAN_B: (format_seconds(row.median_b) if row.median_b is not None else "", row.median_b),
            CompareColumn.MODE: (row.mode, row.mode),
            CompareColumn.NOTE: (row.note, row.note),
        }
        for column, (text, key) in values.items():
            item = items[column]
            item.setText(text)
            item.setData(key, _SORT_ROLE)
            if column in _NUMERIC_COMPARE_COLUMNS:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if ratio is not None:
            change = (ratio - 1.0) * 100.0
            items[CompareColumn.RATIO].setToolTip(
                f"{change:+.1f} % ({'b takes longer' if change > 0 else 'b takes less time'})"
            )
        if row.note:
            items[CompareColumn.NOTE].setToolTip(row.note)
        colour = status_qcolor(_VERDICT_COLOURS.get(row.verdict))
        if colour is not None:
            items[CompareColumn.VERDICT].setForeground(colour)
        params = ", ".join(f"{k}={v}" for k, v in row.params.items())
        items[CompareColumn.JOB].setToolTip(f"{row.label}\n{params} · {row.backend}" if params else row.label)

    def table_width(self) -> int:
        """The width the table needs to show every column without scrolling."""
        header = self.view.horizontalHeader()
        return header.length() + 2 * self.view.frameWidth() + self.view.verticalScrollBar().sizeHint().width()

    def fit_width(self) -> None:
        """As wide as the table (every column visible), within the screen's width."""
        margins = self._layout.contentsMargins()
        wanted = self.table_width() + margins.left() + margins.right()
        screen = self.screen().availableGeometry() if self.screen() is not None else None
        limit = screen.width() - 40 if screen is not None else wanted
        if self.width() < min(wanted, limit):
            self.resize(min(wanted, limit), self.height())

    def _update_summary(self) -> None:
        self.fit_width()
        counts: dict[str, int] = {}
        for row in self._rows:
            counts[row.verdict] = counts.get(row.verdict, 0) + 1
        compared = sum(counts.get(v, 0) for v in (FASTER, SLOWER, WITHIN_NOISE, "higher", "lower", NO_VERDICT))
        parts = [
            (
                f"{plural(compared, 'metric')} compared: {counts.get(FASTER, 0)} faster, "
                f"{counts.get(SLOWER, 0)} slower, {counts.get(WITHIN_NOISE, 0)} within noise, "
                f"{counts.get(NO_VERDICT, 0)} no verdict"
            )
        ]
        for verdict in (ONLY_IN_BASELINE, ONLY_IN_CANDIDATE, NOT_COMPARABLE):
            if counts.get(verdict):
                parts.append(f"{counts[verdict]} {verdict}")
        if self._tasks:
            parts.append(f"computing {len(self._tasks)} more…")
        withheld = reduced_sides([self._a], [self._b])
        if withheld is not None:
            parts.append(f"no verdict for any metric: {withheld}")
        elif any(row.note.endswith("one run a side") for row in self._rows):
            parts.append(
                f"one run a side: no verdict where the store holds fewer than {MIN_MOVEMENT_RUNS} runs of the job on this machine "
                "with these versions to measure how much whole runs move"
            )
        for role, run in (("the baseline", self._a), ("the candidate", self._b)):
            overrides = run.profile_view.overrides
            if overrides:  # never a silent baseline
                shown = ", ".join(f"{option} {value}" for option, value in overrides)
                parts.append(f"{role} ran with settings overridden from the command line ({_plain(shown)})")
        host_a, host_b = self._a.environment_view.hostname, self._b.environment_view.hostname
        if host_a and host_b and host_a != host_b:
            parts.append(
                f"the runs come from different machines ({_plain(host_a)}, {_plain(host_b)}): differences include "
                "the hardware"
            )
        self.summary_label.setText("; ".join(parts) + ".")

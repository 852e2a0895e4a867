"""Checks of a report's verdicts against the evidence behind them, for every face.

The evidence rule (app/core/analysis/evidence.py) has every verdict a report writes in
words carry its evidence in fixed words, so the words can be held to the numbers without
knowing which code wrote them:

- two figures of one run: "... (n = 20 and 20, 95 % intervals 2.51 µs to 2.63 µs and 74 µs
  to 77.2 µs)": a verdict needs 10 samples a side and intervals that do not overlap;
- one figure in two runs: "... 1.30× (95 % interval 1.25× to 1.35×, n = 40 and 40)": a
  verdict needs 10 a side and an interval clear of 1 on its side ("slower": above).

What is checked, in prose (a Markdown section, a PDF page's text): every clause (a sentence,
cut at its top-level semicolons) that says faster, slower, fastest, slowest or regression
beside a measured figure carries evidence, and that evidence supports it; "cannot be told
apart" is never said of figures more than 3× apart (rounding allowed for), nor of figures
with too few samples (that is "no verdict"), nor of intervals that do not overlap. In the
report's model: a comparison table's "faster"/"slower" rows against their interval and
samples; a timing table's bold (fastest) row against the run's intervals; every chart's
labels (bars, series) unique; a bar inside its whiskers; and each point of a load chart
one step's achieved rate and that same step's latency. Each returns what it found, so a
failing test prints it; tests/report/test_report_verdicts.py shows each failing on a
hand-built report.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from app.core.results.model import RunResult
from app.report.model import BarChart, Chart, Histogram, LineChart, Report, StackedBars, Table

MIN_SAMPLES = 10
#: "Cannot be told apart" of figures at most this far apart; 1 % more for 3-digit rounding.
TOLD_APART_MAX = 3.0 * 1.01

_VERDICT = re.compile(r"\b(fastest|slowest|faster|slower|regressions?|regressed)\b", re.IGNORECASE)
_APART = re.compile(r"cannot be told apart", re.IGNORECASE)
_NUMBER = r"\d[\d,]*(?:\.\d+)?"
_TIME = re.compile(rf"(?<![\w.])({_NUMBER}) (ns|µs|ms|s)\b")
_RATIO = re.compile(rf"(?<![\w.])({_NUMBER})×")
_SCALE = {"ns": 1e-9, "µs": 1e-6, "ms": 1e-3, "s": 1.0}
_INTERVAL = rf"(?:none|{_NUMBER} (?:ns|µs|ms|s)(?: to {_NUMBER} (?:ns|µs|ms|s))?)"
#: Two figures of one run.
_PAIR_EVIDENCE = re.compile(rf"n = ({_NUMBER}) and ({_NUMBER}), 95 % intervals ({_INTERVAL}) and ({_INTERVAL})")
#: One figure in two runs.
_RATIO_EVIDENCE = re.compile(rf"95 % interval ({_NUMBER})×(?: to ({_NUMBER})×)?, n = ({_NUMBER}) and ({_NUMBER})")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z*(])")


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _seconds(text: str) -> float:
    value, unit = text.rsplit(" ", 1)
    return _number(value) * _SCALE[unit]


def _interval(text: str) -> tuple[float, float] | None:
    if text == "none":
        return None
    ends = text.split(" to ")
    return _seconds(ends[0]), _seconds(ends[-1])


def clauses(text: str) -> list[str]:
    """The prose of `text` cut into clauses: each line (a paragraph, a bullet, a PDF page's
    text) that is not a table row or a heading, cut at sentence ends and at semicolons
    outside parentheses (one claim each: "X is 2× slower than it (...); Y is ...")."""
    out = []
    for line in text.splitlines():
        if line.lstrip().startswith(("|", "#")):
            continue
        for sentence in _SENTENCE_END.split(line):
            depth, start = 0, 0
            for k, char in enumerate(sentence):
                depth += char == "("
                depth -= char == ")"
                if char == ";" and depth <= 0:
                    out.append(sentence[start:k])
                    start = k + 1
            out.append(sentence[start:])
    return [" ".join(c.split()) for c in out if c.strip()]


def _outside_parentheses(text: str) -> str:
    kept, depth = [], 0
    for char in text:
        depth += char == "("
        if depth <= 0:
            kept.append(char)
        depth -= char == ")"
        depth = max(depth, 0)
    return "".join(kept)


# Two intervals whose facing ends print alike ("50.1 µs to 52.4 µs and 52.4 µs to 66.7 µs")
# may be apart or overlap below the printed precision: neither a verdict nor "cannot be told
# apart" on them is refused (a full pq-over-links report ranked two such, 52.38 against 52.41).


def _pair_problem(word: str, match: re.Match[str]) -> str | None:
    n1, n2 = _number(match.group(1)), _number(match.group(2))
    if min(n1, n2) < MIN_SAMPLES:
        return f"a verdict on n = {n1:g} and {n2:g} (needs {MIN_SAMPLES} a side)"
    first, second = _interval(match.group(3)), _interval(match.group(4))
    if first is None or second is None:
        return "a verdict without an interval"
    if first[0] < second[1] and second[0] < first[1]:  # ends that print alike: see above
        return "a verdict on overlapping 95 % intervals"
    return None


def _ratio_problem(word: str, match: re.Match[str]) -> str | None:
    low = _number(match.group(1))
    high = _number(match.group(2)) if match.group(2) else low
    n1, n2 = _number(match.group(3)), _number(match.group(4))
    if min(n1, n2) < MIN_SAMPLES:
        return f"a verdict on n = {n1:g} and {n2:g} (needs {MIN_SAMPLES} a side)"
    said = word.lower()
    if low <= 1 <= high:
        return "a verdict on an interval that contains 1"
    if (
        said in ("slower", "regression", "regressions", "regressed")
        and not low > 1
        or said == "faster"
        and not high < 1
    ):
        return "a verdict on the wrong side of 1"
    return None


def _apart_problem(clause: str) -> str | None:
    """ "Cannot be told apart" held to the evidence after it (else the last before it)."""
    said = _APART.search(clause)
    start = said.start() if said is not None else 0
    pairs = list(_PAIR_EVIDENCE.finditer(clause))
    after = [m for m in pairs if m.start() > start]
    before = [m for m in pairs if m.start() <= start]
    pair = after[0] if after else before[-1] if before else None
    if pair is not None:
        n1, n2 = _number(pair.group(1)), _number(pair.group(2))
        if min(n1, n2) < MIN_SAMPLES:
            return f"'cannot be told apart' on n = {n1:g} and {n2:g}: too few samples is no verdict"
        first, second = _interval(pair.group(3)), _interval(pair.group(4))
        if first is not None and second is not None and (first[1] < second[0] or second[1] < first[0]):
            return "'cannot be told apart' of intervals that do not overlap"
    figures = [_seconds(f"{m.group(1)} {m.group(2)}") for m in _TIME.finditer(_outside_parentheses(clause[:start]))]
    figures = figures[-2:]  # the two figures said just before the words
    if len(figures) < 2 and pair is not None:
        ends = [_interval(pair.group(3)), _interval(pair.group(4))]
        figures = [math.sqrt(e[0] * e[1]) for e in ends if e is not None and e[0] > 0]
    figures = [f for f in figures if f > 0]
    if len(figures) >= 2 and max(figures) / min(figures) > TOLD_APART_MAX:
        return f"'cannot be told apart' of figures {max(figures) / min(figures):,.0f}× apart"
    if pair is None and re.search(r"\bn = (\d+) and (\d+)", clause):
        n1, n2 = (int(x) for x in re.search(r"\bn = (\d+) and (\d+)", clause).groups())  # type: ignore[union-attr]
        if min(n1, n2) < MIN_SAMPLES:
            return f"'cannot be told apart' on n = {n1} and {n2}: too few samples is no verdict"
    return None


#: A verdict word is a claim when a measured figure stands this near it (in words).
NEAR = 8


def _word_index(text: str, position: int) -> int:
    return len(text[:position].split())


def _claims(clause: str) -> list[re.Match[str]]:
    """The verdict words of a clause that make a claim: a measured figure (a time, a ratio)
    within NEAR words of it, outside the evidence itself; never a count of none ("0 faster")."""
    spans = [m.span() for m in (*_PAIR_EVIDENCE.finditer(clause), *_RATIO_EVIDENCE.finditer(clause))]
    figures = [
        _word_index(clause, m.start())
        for pattern in (_TIME, _RATIO)
        for m in pattern.finditer(clause)
        if not any(start <= m.start() < end for start, end in spans)
    ]
    claims = []
    for word in _VERDICT.finditer(clause):
        if re.search(r"(?<![\d.,])0 $", clause[: word.start()]):
            continue  # "0 faster": a count of none claims nothing
        at = _word_index(clause, word.start())
        if any(abs(at - figure) <= NEAR for figure in figures):
            claims.append(word)
    return claims


def verdict_problems(text: str) -> list[str]:
    """Every verdict in the prose of `text` its evidence does not support (see the module's
    docstring): each claiming word is held to the first evidence after it in its clause (or
    the last before it)."""
    found = []
    for clause in clauses(text):
        if _APART.search(clause):
            problem = _apart_problem(clause)
            if problem is not None:
                found.append(f"{problem}: {clause}")
        evidence = sorted(
            [(m.start(), _pair_problem, m) for m in _PAIR_EVIDENCE.finditer(clause)]
            + [(m.start(), _ratio_problem, m) for m in _RATIO_EVIDENCE.finditer(clause)],
            key=lambda item: item[0],
        )
        for word in _claims(clause):
            after = [item for item in evidence if item[0] > word.start()]
            before = [item for item in evidence if item[0] <= word.start()]
            chosen = after[0] if after else before[-1] if before else None
            if chosen is None:
                found.append(f"a verdict without its evidence: {clause}")
                continue
            _, check, match = chosen
            problem = check(word.group(0), match)
            if problem is not None:
                found.append(f"{problem}: {clause}")
    return list(dict.fromkeys(found))


def evidence_said(text: str) -> int:
    """How many verdicts `text` says with their evidence (two figures of a run, or one in two runs)."""
    return len(_PAIR_EVIDENCE.findall(text)) + len(_RATIO_EVIDENCE.findall(text))


#: A PDF page's foot ("CryptoBench 0.2.0 · run 20261128-… Page 2 of 24"), which pdftotext
#: sets in the middle of a sentence that runs on to the next page.
_PAGE_FOOT = re.compile(r"CryptoBench \S+ · run \S+ Page \d+ of \d+")


def pdf_verdict_problems(pages: Sequence[str]) -> list[str]:
    """`verdict_problems` over a PDF's pages (pdftotext's, one string each) read as one text,
    their feet taken out: a sentence and its evidence may lie on two pages."""
    return verdict_problems(" ".join(_PAGE_FOOT.sub(" ", " ".join(page.split())) for page in pages))


# --- the report's model --------------------------------------------------------------------------


def _charts(report: Report) -> Iterable[tuple[str, Chart]]:
    for section in report.sections:
        for block in section.blocks:
            if isinstance(block, Chart):
                yield section.title, block


def chart_problems(report: Report, run: RunResult | None = None) -> list[str]:
    """Labels unique per chart, a bar inside its whiskers, and (with the run) each point of a
    load chart one step's achieved rate and that step's latency."""
    found = []
    for title, block in _charts(report):
        chart = block.chart
        where = f"{title}: {getattr(chart, 'title', '')}"
        labels: Sequence[str] = ()
        if isinstance(chart, BarChart | StackedBars):
            labels = chart.labels
        elif isinstance(chart, LineChart):
            labels = [series.name for series in chart.series]
        elif isinstance(chart, Histogram):
            labels = ()
        doubled = sorted({label for label in labels if list(labels).count(label) > 1})
        if doubled:
            found.append(f"{where}: a label twice: {', '.join(doubled)}")
        if isinstance(chart, BarChart):
            for label, value, low, high in zip(chart.labels, chart.values, chart.low, chart.high, strict=False):
                if low is not None and high is not None and not low <= value <= high:
                    found.append(f"{where}: {label}'s bar {value:g} outside its whiskers {low:g}-{high:g}")
        if isinstance(chart, LineChart) and run is not None and "latency against achieved rate" in chart.title:
            found += _load_points(where, chart, run)
    return found


def _load_points(where: str, chart: LineChart, run: RunResult) -> list[str]:
    """Each point (achieved rate, latency) of a load chart is one step's pair, never one step's
    rate beside another's latency."""
    percentile = chart.title.split()[0]
    steps = [step for job in run.jobs if job.load is not None for step in job.load.steps]
    pairs = {(step.achieved_per_s, step.latency_s.get(percentile)) for step in steps}
    found = []
    for series in chart.series:
        for x, y in zip(series.xs, series.ys, strict=True):
            if (x, y) not in pairs:
                found.append(f"{where}: {series.name}'s point ({x:g}/s, {y:g} s) is no step's rate and latency")
    return found


def _column(table: Table, name: str) -> int | None:
    return next((k for k, column in enumerate(table.columns) if column.startswith(name)), None)


def table_problems(report: Report, run: RunResult | None = None) -> list[str]:
    """A comparison table's verdicts against their interval and samples; and (with the run) a
    timing table's bold row, "the fastest", against the intervals of its size and metric."""
    found = []
    for section in report.sections:
        for table in (b for b in section.blocks if isinstance(b, Table)):
            verdict, interval, counts = (
                _column(table, "Verdict"),
                _column(table, "95 % interval"),
                _column(table, "n ("),
            )
            if verdict is not None and interval is not None:
                found += _comparison_rows(section.title, table, verdict, interval, counts)
            if run is not None and table.emphasis and _column(table, "Median") is not None:
                found += _bold_rows(section.title, table, run)
    return found


def _comparison_rows(title: str, table: Table, verdict: int, interval: int, counts: int | None) -> list[str]:
    found = []
    for row in table.rows:
        said = row[verdict]
        if said not in ("faster", "slower"):
            continue
        ends = [_number(v) for v in re.findall(_NUMBER, row[interval])]
        if not ends:
            found.append(f"{title}: {row[0]} {said} without an interval")
            continue
        low, high = ends[0], ends[-1]
        if said == "slower" and not low > 1 or said == "faster" and not high < 1:
            found.append(f"{title}: {row[0]} {said} on the interval {row[interval]}")
        if counts is None:
            found.append(f"{title}: {row[0]} {said} without its samples a side")
        elif any(_number(n) < MIN_SAMPLES for n in re.findall(_NUMBER, row[counts])):
            found.append(f"{title}: {row[0]} {said} on n = {row[counts]}")
    return found


def _bold_rows(title: str, table: Table, run: RunResult) -> list[str]:
    """A bold row of a timing table is the fastest of its size and metric: its median's
    interval must lie below every other row's of the same size and metric, 10 samples each."""
    scheme, size, metric = _column(table, "Scheme"), _column(table, "Size"), _column(table, "Metric")
    if scheme is None or size is None or metric is None:
        return []
    jobs = {(job.label, job.message_size): job for job in run.jobs}

    def stats(row: Sequence[str]):  # type: ignore[no-untyped-def]
        name = row[metric].split(" (")[0]
        for (label, job_size), job in jobs.items():
            if label == row[scheme] and _size_text(job_size) == row[size] and name in job.metrics:
                return job.metrics[name].stats
        return None

    found = []
    for k in sorted(table.emphasis):
        best, key = table.rows[k], None
        key = (best[size], best[metric].split(" (")[0])
        rivals = [r for i, r in enumerate(table.rows) if i != k and (r[size], r[metric].split(" (")[0]) == key]
        mine = stats(best)
        for rival in rivals:
            theirs = stats(rival)
            if mine is None or theirs is None:
                continue
            if min(mine.n, theirs.n) < MIN_SAMPLES or mine.ci95 is None or theirs.ci95 is None:
                found.append(f"{title}: {best[0]} bold as the fastest on n = {mine.n} and {theirs.n}")
            elif mine.ci95[1] >= theirs.ci95[0]:
                found.append(f"{title}: {best[0]} bold as the fastest, its interval overlapping {rival[0]}'s")
    return found


def _size_text(size: int) -> str:
    from app.report.units import format_bytes

    return format_bytes(size)


def report_verdict_problems(report: Report, run: RunResult | None = None) -> list[str]:
    """The model's checks (tables and charts) of one report; the prose is checked per face."""
    return table_problems(report, run) + chart_problems(report, run)

"""E2: the "CNSA suite" evaluation at 1 KiB, 1 MiB and 10 MiB.

The original reported, per case, mean, P50, P95, standard deviation, CV %, throughput,
CPU %, current and peak memory and validation. We rebuild that table from our samples
(one row per timed metric, because a sum of two metrics has a mean but no P95), then
explain the two places where its trends cannot be taken at face value: the first-call
overhead in its 1 KB figures, and its composite "performance score".
"""

from __future__ import annotations

import statistics
from itertools import pairwise

from app.core.results import JobResult, RunResult
from app.core.schemes.signatures import LENGTH_PREFIX
from app.report.experiments.common import find_jobs, first, mean, seconds
from app.report.findings import ratio_text
from app.report.model import Paragraph, Section, Table
from app.report.published import Experiment, Figure, measure
from app.report.units import MISSING, format_bytes, format_rate

KIB, MIB = 1024, 1024 * 1024


def _cpu_percent(job: JobResult) -> str:
    block = job.cpu.get("worker") if isinstance(job.cpu.get("worker"), dict) else None
    value = block.get("mean_percent") if block else None
    return MISSING if value is None else f"{value:.0f} %"


def _peak_traced(job: JobResult, metrics: list[str]) -> str:
    peaks = [job.metrics[m].traced_peak_bytes for m in metrics if m in job.metrics]
    known = [p for p in peaks if p is not None]
    return format_bytes(max(known)) if known else MISSING


def _validation(job: JobResult) -> str:
    checked, failed = job.validation.get("checked", 0), job.validation.get("failed", 0)
    if not checked:
        return MISSING
    return f"pass ({checked:,})" if not failed else f"FAIL ({failed:,} of {checked:,})"


def _cases(run: RunResult, experiment: Experiment) -> list[tuple[Figure, JobResult]]:
    return [(figure, job) for figure in experiment.figures for job, _ in measure(figure, run.jobs).found]


def _statistics_table(cases: list[tuple[Figure, JobResult]]) -> Table:
    rows = []
    for figure, job in cases:
        for name in figure.metrics:
            s = job.metrics[name].stats
            rows.append([job.label if _ambiguous(cases, figure) else figure.case, name,
                         str(s.n), seconds(s.mean), seconds(s.median), seconds(s.p95), seconds(s.std),
                         MISSING if s.cv is None else f"{100 * s.cv:.1f} %"])
    return Table(["Case", "Metric", "n", "Mean", "P50", "P95", "Std. dev.", "CV"], rows,
                 caption="E2's statistics per timed operation (a case that timed two operations, such as "
                         "encrypt + decrypt, has one row for each).",
                 widths=[3.6, 1.0, 0.6, 1.0, 1.0, 1.0, 1.0, 0.8])


def _ambiguous(cases: list[tuple[Figure, JobResult]], figure: Figure) -> bool:
    return sum(1 for f, _ in cases if f is figure) > 1


def _resources_table(cases: list[tuple[Figure, JobResult]]) -> Table:
    rows = []
    for figure, job in cases:
        total = mean(job, *figure.metrics)
        rate = job.message_size / total if total and job.message_size else None
        rows.append([job.label if _ambiguous(cases, figure) else figure.case,
                     format_rate(rate) if rate else MISSING, _cpu_percent(job), _peak_traced(job, figure.metrics),
                     _validation(job)])
    return Table(["Case", "Throughput", "CPU (job)", "Peak traced memory", "Validation"], rows,
                 caption="Throughput: message bytes per second of the case's timed operations. CPU: the "
                         "measuring process over the whole job, sampled every 100 ms. Peak traced memory: "
                         "tracemalloc's peak during one operation, in a separate untimed pass.",
                 widths=[3.6, 1.2, 1.0, 1.4, 1.4])


def _first_call(run: RunResult, experiment: Experiment) -> Paragraph | None:
    small = first(find_jobs(run, "aes-gcm", params={"key_bits": 256}, message_size=KIB))
    large = first(find_jobs(run, "aes-gcm", params={"key_bits": 256}, message_size=MIB))
    published = {f.match.message_size: f for f in experiment.figures if f.match.scheme == "aes-gcm"}
    small_fig, large_fig = published.get(KIB), published.get(MIB)
    ours_small, ours_large = mean(small, "encrypt", "decrypt"), mean(large, "encrypt", "decrypt")
    if None in (ours_small, ours_large) or small_fig is None or large_fig is None:
        return None
    assert ours_small is not None and ours_large is not None
    if small_fig.seconds <= large_fig.seconds or ours_small >= ours_large:
        return None  # the trends agree: nothing to explain
    return Paragraph(
        f"**First-call overhead at 1 KB.** The published AES-256-GCM mean at 1 KB ({small_fig.published_text()}) "
        f"is {ratio_text(small_fig.seconds / large_fig.seconds)} its mean at 1 MB ({large_fig.published_text()}), "
        f"although a 1 KB message is a thousandth of the work. Ours is {seconds(ours_small)} at 1 KiB against "
        f"{seconds(ours_large)} at 1 MiB. The published figure is a mean of 10 trials that includes the very first "
        "call, which pays one-time costs (the cipher's first use, first touches of its memory, cold caches): "
        "one slow call in ten dominates the mean. Our harness makes untimed calls before any sample (batch "
        "calibration and one call before each timed batch), so no sample is a first call. The HKDF note "
        "\"first call slowest\" has the same cause.")


def _ratio_by_size(run: RunResult, experiment: Experiment) -> Paragraph | None:
    """Where measured/published rises with the input size, the published times carry a
    fixed per-trial cost; say so with the ratios (only when the run shows the rise)."""
    trends = []
    for scheme, name in (("aes-gcm", "AES-256-GCM"), ("sha384", "SHA-384")):
        points = []
        for figure in experiment.figures:
            if figure.match.scheme != scheme:
                continue
            r = measure(figure, run.jobs).ratio()
            if r is not None and figure.match.message_size is not None:
                points.append((figure.match.message_size, r))
        points.sort()
        if len(points) >= 2 and all(a[1] < b[1] for a, b in pairwise(points)):
            trends.append(f"{name} from {_ratio(points[0][1])} at {format_bytes(points[0][0])} to "
                          f"{_ratio(points[-1][1])} at {format_bytes(points[-1][0])}")
    if not trends:
        return None
    return Paragraph(
        "**Ratios grow with the input.** Measured / published rises with the message size for "
        + " and ".join(trends) + ". A machine that is simply faster would give one ratio at every size; a ratio "
        "that rises means the published times carry a cost per trial that does not grow with the input (the "
        "first call, the timing and validation around it), which dominates small inputs and fades at 10 MB.")


def _ratio(value: float) -> str:
    return ratio_text(value) if value >= 1 else f"{value:.2g}×"


def _sample_count(run: RunResult, cases: list[tuple[Figure, JobResult]]) -> Paragraph | None:
    widths = []
    counts = set()
    for figure, job in cases:
        for name in figure.metrics:
            s = job.metrics[name].stats
            counts.add(s.n)
            if s.ci95 and s.median > 0:
                widths.append((s.ci95[1] - s.ci95[0]) / s.median)
    if not counts:
        return None
    text = f"**Samples.** This run took {', '.join(str(n) for n in sorted(counts))} samples per operation"
    if widths:
        text += (f"; the 95 % confidence interval of the median spans {100 * statistics.median(widths):.1f} % of "
                 f"the median in the typical case (widest {100 * max(widths):.1f} %).")
    else:
        text += "; too few for a 95 % confidence interval of the median (at least 6 are needed)."
    if max(counts) <= 10:
        text += " Ten trials, as published, are enough for a mean but not for a stable P95: the cnsa-suite-stable " \
                "preset takes 200 samples after warm-up."
    return Paragraph(text)


def _signature_size(run: RunResult, experiment: Experiment) -> Paragraph | None:
    job = first(find_jobs(run, "ecdsa", params={"curve": "P-384"}))
    if job is None or "overhead" not in job.wire_bytes:
        return None
    note = next((f.note for f in experiment.figures if f.match.scheme == "ecdsa" and f.note), None)
    signature = job.wire_bytes["overhead"] - LENGTH_PREFIX
    return Paragraph(f"**Signature size.** Our ECDSA-P384 signature was {signature} bytes (DER; the payload adds a "
                     f"{LENGTH_PREFIX}-byte length before it), published: {note or 'not stated'}. A DER signature "
                     "varies by a few bytes with the leading zeros of r and s.")


def _score() -> Paragraph:
    return Paragraph(
        "**Why no \"performance score\".** The original also ranked cases by time × CPU % × (memory / 1024). "
        "We do not compute it. CPU % sampled every 100 ms reads 0 % for any operation shorter than the "
        "interval, which is nearly every case here, so the product is zero or noise; and the product of a time, "
        "a percentage and a memory size has no unit a reader can interpret. Time, CPU and memory are reported "
        "side by side instead, each with how it was measured.")


def sections(run: RunResult, experiment: Experiment) -> list[Section]:
    cases = _cases(run, experiment)
    if not cases:
        return [Section("The E2 table", [Paragraph("No job of this run measures an E2 case.", "note")], level=2)]
    table = Section("The E2 table at 1 KiB, 1 MiB and 10 MiB",
                    [_statistics_table(cases), _resources_table(cases)], level=2)
    why = [p for p in (_first_call(run, experiment), _ratio_by_size(run, experiment), _sample_count(run, cases), _signature_size(run, experiment))
           if p is not None]
    why.append(_score())
    return [table, Section("Why the figures differ", list(why), level=2)]


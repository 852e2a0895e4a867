"""Several load generators driving one server together (load from many machines): how far
each one's clock is from the coordinator's, and how their step records merge into the one
the verdict and every face read (how a step's rate is split among them is
`app.core.settings.load.split_rate`).

The placing of generators on other machines (Dask distributed) is not here: these are the
measuring parts it needs, kept in our own code and testable without a cluster.

Merging is lossless where it matters: HdrHistograms add bucket by bucket, so the merged
percentiles are those of every request any generator timed, not an average of theirs.
Counts add. A step is generator-saturated when **any** generator was (one late generator
bunches its share of the schedule), and the send lag is the worst generator's. A generator
that began its share later than the clocks' tolerance after the agreed moment
(`late_start_limit_s`) is marked too: the requests due meanwhile went out in a burst, and
its share no longer interleaved with the others'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from hdrh.histogram import HdrHistogram

from app.core.records.job_conditions import LOAD_PERCENTILES, LoadStep
from app.core.records.load_histogram import HISTOGRAM_RANGE
from app.core.records.tls_record import ByteRange, TlsRecord, TlsStep
from app.core.units import format_seconds

#: A run is refused when a generator's clock is known only this loosely, as a share of a
#: step: its share of the schedule could start that much early or late.
MAX_MISALIGNMENT_SHARE = 0.02


@dataclass(frozen=True)
class ClockOffset:
    """A worker's clock against the coordinator's: `offset_s` to add to a coordinator time to
    get the worker's, known to within `uncertainty_s` (half the exchange's round trip)."""

    offset_s: float
    round_trip_s: float

    @property
    def uncertainty_s(self) -> float:
        return self.round_trip_s / 2


def clock_offset(exchanges: Sequence[tuple[float, float, float]]) -> ClockOffset:
    """The offset from ping exchanges (coordinator sent at t0, worker read its clock at
    `remote`, coordinator received at t1), from the exchange with the least round trip: its
    reply waited least in queues, so the worker's reading lies nearest the midpoint."""
    if not exchanges:
        raise ValueError("no clock exchange to estimate an offset from")
    for t0, _, t1 in exchanges:
        if t1 < t0:
            raise ValueError(f"an exchange received before it was sent ({t0} > {t1})")
    t0, remote, t1 = min(exchanges, key=lambda e: e[2] - e[0])
    return ClockOffset(offset_s=remote - (t0 + t1) / 2, round_trip_s=t1 - t0)


def misalignment_problem(offsets: Sequence[ClockOffset], step_s: float) -> str | None:
    """Why steps started on these clocks could not be aligned well enough, or None: each
    worker starts its share at the agreed time corrected by its offset, so what is left is
    each offset's uncertainty, against MAX_MISALIGNMENT_SHARE of a step."""
    limit = MAX_MISALIGNMENT_SHARE * step_s
    loose = [k for k, offset in enumerate(offsets) if offset.uncertainty_s > limit]
    if not loose:
        return None
    worst = max(offsets[k].uncertainty_s for k in loose)
    return (
        f"the clocks of generator(s) {', '.join(f'#{k + 1}' for k in loose)} are known only to within "
        f"{worst * 1e3:.1f} ms, more than {MAX_MISALIGNMENT_SHARE:.0%} of a {step_s:g} s step "
        f"({limit * 1e3:.1f} ms): their shares could start that far apart"
    )


def late_start_limit_s(step_s: float) -> float:
    """How late after the agreed moment a generator may begin its share of a `step_s`
    step: MAX_MISALIGNMENT_SHARE of it, the tolerance its clock is held to (a start that
    late is as far out as a clock the run would have refused)."""
    return MAX_MISALIGNMENT_SHARE * step_s


def late_start_reason(started_late_s: float, step_s: float) -> str | None:
    """Why a generator's start of a step counts against it, or None when it began within
    `late_start_limit_s` of the agreed moment (or before it, as it should)."""
    limit = late_start_limit_s(step_s)
    if started_late_s <= limit:
        return None
    return (
        f"the generator began its share {format_seconds(started_late_s)} after the agreed start (limit "
        f"{format_seconds(limit)}, {MAX_MISALIGNMENT_SHARE:.0%} of the {step_s:g} s step): the requests due "
        "meanwhile went out late, in a burst"
    )


def with_start(part: LoadStep, started_late_s: float, step_s: float) -> LoadStep:
    """A generator's record of a step with how late it started kept, and marked against it
    (generator-saturated, the reason added to its own) when that passes the limit."""
    reason = late_start_reason(started_late_s, step_s)
    if reason is None:
        return replace(part, started_late_s=started_late_s)
    reasons = "; ".join(r for r in (part.saturation_reason, reason) if r)
    return replace(part, started_late_s=started_late_s, generator_saturated=True, saturation_reason=reasons)


def merge_steps(parts: Sequence[LoadStep]) -> LoadStep:
    """One step from every generator's record of it: histograms added, counts and rates
    summed, saturated when any generator was, the worst send lag. The server's CPU is the
    server's, the same for all: the first record that has it. The first and last quarter's
    p50 are the generator's whose p50 grew most (a queue at the shared server shows in every
    generator; the strongest sign is kept, never averaged away)."""
    if not parts:
        raise ValueError("no generator's step to merge")
    histogram = HdrHistogram(*HISTOGRAM_RANGE)
    for part in parts:
        if part.histogram is None:
            raise ValueError("a generator's step has no histogram to merge")
        histogram.add(HdrHistogram.decode(part.histogram))
    latency = {name: histogram.get_value_at_percentile(p) / 1e9 for name, p in LOAD_PERCENTILES}
    latency["max"] = histogram.get_max_value() / 1e9
    reasons = [
        f"generator #{p.generator or k + 1}: {p.saturation_reason}" for k, p in enumerate(parts) if p.saturation_reason
    ]
    lags = [p.send_lag_p99_s for p in parts if p.send_lag_p99_s is not None]
    cpus = [p.generator_cpu_percent for p in parts if p.generator_cpu_percent is not None]
    server = next((p.server_cpu_percent for p in parts if p.server_cpu_percent is not None), None)
    growth = [p for p in parts if p.latency_first_p50_s and p.latency_last_p50_s is not None]
    grew = max(growth, key=lambda p: (p.latency_last_p50_s or 0) / (p.latency_first_p50_s or 1), default=None)
    return LoadStep(
        offered_per_s=sum(p.offered_per_s for p in parts),
        achieved_per_s=sum(p.achieved_per_s for p in parts),
        errors=sum(p.errors for p in parts),
        latency_s=latency,
        generator_saturated=any(p.generator_saturated for p in parts),
        sent=sum(p.sent for p in parts),
        completed=sum(p.completed for p in parts),
        histogram=histogram.encode().decode("ascii"),
        # Percent of one CPU, summed: each generator's process on its own machine.
        generator_cpu_percent=sum(cpus) if cpus else None,
        send_lag_p99_s=max(lags) if lags else None,
        server_cpu_percent=server,
        saturation_reason="; ".join(reasons) if reasons else None,
        missed=sum(p.missed for p in parts),
        latency_first_p50_s=grew.latency_first_p50_s if grew else None,
        latency_last_p50_s=grew.latency_last_p50_s if grew else None,
    )


def sum_handshakes(parts: Sequence[TlsStep | None]) -> TlsStep | None:
    """A step's handshakes over the generators that returned it (None: not a tls13 job)."""
    counted = [part for part in parts if part is not None]
    if not counted:
        return None
    total = counted[0]
    for part in counted[1:]:
        total = total.plus(part)
    return total


def merge_tls(records: Sequence[TlsRecord]) -> TlsRecord | None:
    """A size's handshakes over every generator: what they negotiated (each generator
    checked its own against the job, so the first one's names are every one's), the counts
    added, the byte ranges over all of them; the flights the first generator's last."""
    if not records:
        return None
    first = records[0]
    return replace(
        first,
        retries=sum(r.retries for r in records),
        handshakes=sum(r.handshakes for r in records),
        client_bytes=ByteRange(min(r.client_bytes.low for r in records), max(r.client_bytes.high for r in records)),
        server_bytes=ByteRange(min(r.server_bytes.low for r in records), max(r.server_bytes.high for r in records)),
    )

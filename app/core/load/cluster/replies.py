"""What a worker answers the coordinator, checked where the coordinator uses it.

A worker is another machine, set up by someone else: its clock reading, its host name and
its generator's records are data, not facts. A NaN clock once passed every comparison
(`NaN > limit` is false) and crashed the JSON export; a 20,052-character host name was
written "ok" and read back as damaged. So every number here is checked finite and within
the bounds the results reader holds it to, every text is cut to the reader's bound where
it enters, and a generator's record of a step passes the reader's own check
(`results.check_job_parts.check_step`) before it is merged. A bad answer is a
`BadReply`, which names the value and what was expected; the coordinator names the
generator.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from app.core.load.cluster.errors import ClusterError
from app.core.load.cluster.pipe_frames import StepReport
from app.core.records.job_conditions import LoadStep
from app.core.records.tls_record import TlsRecord, TlsStep
from app.core.results.check_fields import MAX_TEXT_CHARS, clip_text, is_int, is_num
from app.core.results.check_job_parts import check_step
from app.core.results.check_tls import check_tls
from app.core.results.errors import ResultsDataError
from app.core.settings.load import MAX_CLOCK_OFFSET_S, MAX_HOST_CHARS

#: A worker's clock reading (seconds since the epoch) beyond this is no clock: the year 5138.
MAX_CLOCK_READING_S = 1e11
#: Setup answers in seconds (a request's crypto, one round trip) beyond this are not a
#: measurement of one request.
MAX_REQUEST_S = 3600.0
#: At most this many numbers in one list a worker sends back (a step's latency samples,
#: its client costs): far above what a generator keeps (app.core.load.generator).
MAX_VALUES = 10_000_000
#: Texts a worker sends that end up in messages (its version, its errors).
MAX_SHORT_TEXT = 300


class BadReply(ClusterError):
    """A worker answered with a value the coordinator cannot use (str: what, and what was
    expected)."""


def number(value: Any, what: str, *, low: float = -math.inf, high: float = math.inf) -> float:
    """A finite real in [low, high] (never a bool), or BadReply naming `what`."""
    if not is_num(value) or not low <= value <= high:
        bounds = f" from {low:g} to {high:g}" if math.isfinite(low) and math.isfinite(high) else ""
        raise BadReply(f"{what}: expected a finite number{bounds}, got {shown(value)}")
    return float(value)


def count(value: Any, what: str, *, low: int = 0) -> int:
    """An integer >= low (never a bool), or BadReply naming `what`."""
    if not is_int(value) or value < low or value > (1 << 63) - 1:
        raise BadReply(f"{what}: expected an integer of at least {low}, got {shown(value)}")
    return int(value)


def text(value: Any, what: str, limit: int = MAX_TEXT_CHARS) -> str:
    """Text as it can be written (a lone surrogate escaped) and cut to `limit` characters
    the way the results are cut (`clip_text`); BadReply when it is not text."""
    if not isinstance(value, str):
        raise BadReply(f"{what}: expected text, got {shown(value)}")
    return clip_text(value.encode("utf-8", "backslashreplace").decode("utf-8"), limit)


def shown(value: Any) -> str:
    """A value in a message: its repr, cut to 60 characters."""
    return clip_text(repr(value), 60) if not isinstance(value, (int, float)) else repr(value)


def numbers(values: Any, what: str, *, low: float = -math.inf, high: float = math.inf) -> list[float]:
    """A list of finite reals in [low, high], at most MAX_VALUES of them."""
    if not isinstance(values, list) or len(values) > MAX_VALUES:
        raise BadReply(f"{what}: expected a list of at most {MAX_VALUES:,} numbers, got {shown(values)}")
    return [number(v, f"{what}[{k}]", low=low, high=high) for k, v in enumerate(values)]


# --- each answer ---------------------------------------------------------------------------


def clock_reading(value: Any) -> float:
    """A worker's wall clock, read for an offset exchange."""
    return number(value, "its clock", low=0.0, high=MAX_CLOCK_READING_S)


def clock_offset(offset_s: float, uncertainty_s: float) -> None:
    """An offset measured from a worker's readings: within MAX_CLOCK_OFFSET_S of this
    machine's clock (what the results reader accepts). A worker further off is refused,
    not corrected: its time is not kept."""
    if not abs(offset_s) <= MAX_CLOCK_OFFSET_S or not 0 <= uncertainty_s <= MAX_CLOCK_OFFSET_S:
        raise BadReply(
            f"its clock is {offset_s:+.6g} s from this machine's (± {uncertainty_s:.3g} s), more than "
            f"{MAX_CLOCK_OFFSET_S:,.0f} s: set its clock"
        )


@dataclass(frozen=True)
class Identity:
    """What a worker says about itself, checked and cut."""

    host: str
    version: str


def identity(answer: Any) -> Identity:
    """The worker's host name (cut to MAX_HOST_CHARS, the reader's bound) and version."""
    if not isinstance(answer, dict):
        raise BadReply(f"its identity: expected an object, got {shown(answer)}")
    return Identity(
        host=text(answer.get("host", "?"), "its host name", MAX_HOST_CHARS) or "?",
        version=text(answer.get("version", "?"), "its version", MAX_SHORT_TEXT),
    )


def prepared(answer: Any) -> tuple[list[float], int]:
    """A prepare's answer: each request's client crypto (seconds) and the pool's size (0 for
    a tls13 job, whose every request's handshake is made when it is due)."""
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        raise BadReply(f"its prepare: expected (costs, pool), got {shown(answer)}")
    costs, pool = answer
    return numbers(costs, "its client costs", low=0.0, high=MAX_REQUEST_S), count(pool, "its pool size")


def calibration(answer: Any) -> tuple[float, float]:
    """A calibration's answer: the server's seconds a request and the round trip's."""
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        raise BadReply(f"its calibration: expected (server, round trip), got {shown(answer)}")
    server_s, round_trip_s = answer
    return (
        number(server_s, "its server time", low=0.0, high=MAX_REQUEST_S),
        number(round_trip_s, "its round trip", low=0.0, high=MAX_REQUEST_S),
    )


@dataclass(frozen=True)
class Tampering:
    """The tamper check's counts and words, as the first generator made them."""

    tried: int
    rejected: int
    failures: list[str]
    notes: list[str]


def tampering(answer: Any) -> Tampering:
    """The tamper check's answer: only the fields the check sets are taken, checked."""
    if not isinstance(answer, dict):
        raise BadReply(f"its tamper check: expected an object, got {shown(answer)}")
    tried = count(answer.get("tamper_tried", 0), "its tampered requests")
    rejected = count(answer.get("tamper_rejected", 0), "its tampered requests refused")
    if rejected > tried:
        raise BadReply(f"its tamper check: {rejected} refused of {tried} tried")
    return Tampering(
        tried,
        rejected,
        _texts(answer.get("tamper_failures"), "its tamper failures"),
        _texts(answer.get("notes"), "its notes"),
    )


def _texts(values: Any, what: str) -> list[str]:
    if values is None:
        return []
    if not isinstance(values, list) or len(values) > 1000:
        raise BadReply(f"{what}: expected a list of at most 1,000 texts, got {shown(values)}")
    return [text(v, what) for v in values]


def step_report(report: Any) -> StepReport:
    """A generator's report of a step: its record passes the results reader's check of a
    step, and every figure the merge and `measure_size` read is finite and in range."""
    if not isinstance(report, StepReport) or not isinstance(report.step, LoadStep):
        raise BadReply(f"its step: expected a step's report, got {shown(report)}")
    try:
        check_step(report.step.to_dict(), "its step")
    except (ResultsDataError, TypeError, AttributeError) as exc:
        raise BadReply(str(exc)) from None
    if report.step.histogram is None:
        raise BadReply("its step: no latency histogram to merge")
    started = number(report.started_late_s, "its start", low=-MAX_CLOCK_OFFSET_S, high=MAX_CLOCK_OFFSET_S)
    return StepReport(
        step=report.step,
        latencies=numbers(report.latencies, "its latencies", low=0.0, high=MAX_CLOCK_OFFSET_S),
        server_ns=[count(v, "its server time") for v in _listed(report.server_ns, "its server times")],
        refused={text(k, "a refusal", MAX_SHORT_TEXT): count(v, "its refusals") for k, v in _mapping(report.refused)},
        abandoned=count(report.abandoned, "its abandoned requests"),
        sample_every=count(report.sample_every, "its sampling", low=1),
        started_late_s=started,
        live=numbers(report.live, "its live latencies", low=0.0, high=MAX_CLOCK_OFFSET_S),
        handshakes=_tls_step(report.handshakes),
    )


def _tls_step(step: Any) -> TlsStep | None:
    """A tls13 job's handshakes of the step (None for any other job), its counts checked."""
    if step is None:
        return None
    if not isinstance(step, TlsStep):
        raise BadReply(f"its handshakes: expected a step's counts, got {shown(step)}")
    handshakes = count(step.handshakes, "its handshakes")
    resumed = count(step.resumed, "its resumed handshakes")
    if resumed > handshakes:
        raise BadReply(f"its handshakes: {resumed} resumed of {handshakes}")
    return TlsStep(handshakes, resumed, count(step.failed, "its failed requests"), count(step.retries, "its retries"))


def tls_record(answer: Any) -> TlsRecord | None:
    """A tls13 job's handshakes of a size (None: it made none), as the results reader
    checks a record."""
    if answer is None:
        return None
    if not isinstance(answer, TlsRecord):
        raise BadReply(f"its handshakes: expected a TLS record, got {shown(answer)}")
    try:
        check_tls(answer.to_dict(), "its TLS record")
    except (ResultsDataError, TypeError, AttributeError) as exc:
        raise BadReply(str(exc)) from None
    return answer


def _listed(values: Any, what: str) -> Sequence[Any]:
    if not isinstance(values, list) or len(values) > MAX_VALUES:
        raise BadReply(f"{what}: expected a list of at most {MAX_VALUES:,} values, got {shown(values)}")
    return values


def _mapping(values: Any) -> list[tuple[Any, Any]]:
    if not isinstance(values, dict) or len(values) > 1000:
        raise BadReply(f"its refusals: expected an object of counts, got {shown(values)}")
    return list(values.items())

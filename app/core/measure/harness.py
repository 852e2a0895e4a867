"""The measuring loop every child shares: rounds, progress, the tamper check, the memory pass, the entry point.

An operations worker (app.core.measure.ops) and a session sender (app.core.session.sender)
time different things, but the same way, so the rules live here once:

- The first `warmup` rounds of a metric are kept apart (reported as warm-up, never in
  the statistics); the samples after them go to the supervisor in batches, at most
  every FLUSH_INTERVAL, not one message per sample (`SampleRounds`).
- The tamper check flips one bit where the scheme says a change must be caught and
  counts the rejections (`check_tampering`); how a tampered payload reaches the
  receiver (a call, or a frame over the socket) is the caller's part.
- Peak traced memory is measured in a pass of its own, never while timing: tracemalloc
  slows every allocation down (`traced_peak`).
- A child's life is `child_entry`: allocator tuned, tied to its parent, every error
  reported as one `ChildFailed` line, the pipe closed.

The timing itself (clocks, batches, the collector off) is app.core.measure.timing's; nothing
here runs inside a timed region.
"""

from __future__ import annotations

import time
import traceback
import tracemalloc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from multiprocessing.connection import Connection
from typing import TypeVar

from app.core.contracts.events import (
    ChildFailed,
    ChildMessage,
    MeasuringMessage,
    Progress,
    RawMetric,
    SampleBatch,
    SizeMeasured,
    SizeStarted,
)
from app.core.processes.continued import continues
from app.core.processes.lifeline import exit_with_parent
from app.core.schemes.base import Scheme

#: How a measuring child sends a message to its supervisor.
Emit = Callable[[MeasuringMessage], None]
#: A payload as a scheme's `seal` returns it: parts whose concatenation is the payload.
Parts = Sequence[bytes | bytearray | memoryview]
T = TypeVar("T")

#: Send sample batches to the supervisor at most this often (seconds).
FLUSH_INTERVAL = 0.1


class ValidationFailed(Exception):
    """An operation produced a wrong result: the job fails, the number is not kept."""


class SampleRecorder:
    """Collects one metric's samples and forwards them in batches."""

    def __init__(self, emit: Emit, job_index: int, metric: str, raw: RawMetric) -> None:
        self._emit, self._job, self._metric, self.raw = emit, job_index, metric, raw
        self._pending: list[float] = []
        self._last = time.monotonic()

    def add(self, value: float) -> None:
        self.raw.samples.append(value)
        self._pending.append(value)
        if time.monotonic() - self._last >= FLUSH_INTERVAL:
            self.flush()

    def flush(self) -> None:
        if self._pending:
            self._emit(SampleBatch(self._job, self._metric, self._pending))
            self._pending = []
        self._last = time.monotonic()


class SampleRounds:
    """Metrics timed together, round after round: the warm-up/sample split.

    Each `record` is one round's values (seconds) for some or all of `names`. The first
    `warmup` rounds go to each metric's `warmup` list; later ones are samples, forwarded
    in batches, and call `on_sample` (progress). `flush` sends what is pending and
    returns the raw metrics, by name.
    """

    def __init__(
        self,
        emit: Emit,
        job_index: int,
        names: Sequence[str],
        warmup: int,
        *,
        batch: int = 1,
        on_sample: Callable[[], None] | None = None,
    ) -> None:
        self.raws = {name: RawMetric(batch=batch) for name in names}
        self._recorders = {name: SampleRecorder(emit, job_index, name, raw) for name, raw in self.raws.items()}
        self._warmup_left = warmup
        self._on_sample = on_sample

    def record(self, values: Mapping[str, float]) -> None:
        if self._warmup_left > 0:
            self._warmup_left -= 1
            for name, value in values.items():
                self.raws[name].warmup.append(value)
            return
        for name, value in values.items():
            self._recorders[name].add(value)
        if self._on_sample is not None:
            self._on_sample()

    def flush(self) -> dict[str, RawMetric]:
        for recorder in self._recorders.values():
            recorder.flush()
        return self.raws


class ProgressCounter:
    """Counts a job's steps and reports them as `Progress`, at most every `min_interval` seconds
    (and always the last step): each report costs a pickle and a pipe write."""

    def __init__(self, emit: Emit, job_index: int, total: int, min_interval: float = 0.0) -> None:
        self._emit, self._job, self.total, self._min_interval = emit, job_index, total, min_interval
        self.done = 0
        self._last = 0.0

    def advance(self, steps: int = 1) -> None:
        self.done += steps
        if self._min_interval > 0:
            now = time.monotonic()
            if now - self._last < self._min_interval and self.done < self.total:
                return
            self._last = now
        self._emit(Progress(self._job, min(self.done, self.total), self.total))


def check_tampering(
    scheme: Scheme,
    tries: int,
    plaintext_len: int,
    result: SizeMeasured,
    seal: Callable[[], Parts],
    deliver: Callable[[Parts, int], str | None],
    advance: Callable[[int], None],
) -> None:
    """Flip one bit where the scheme says a change must be caught, `tries` times; count rejections.

    `seal()` makes a fresh genuine payload; `deliver(parts, offset)` hands the receiver
    that payload with the bit at `offset` flipped and returns None if it was rejected
    with a typed error, else what went wrong (recorded under the spot's label).
    """
    if not scheme.info.authenticated:
        result.notes.append("tamper check not applicable: the scheme has no integrity protection")
        advance(tries)
        return
    for k in range(tries):
        parts = seal()
        spots = scheme.tamper_spots(sum(len(p) for p in parts), plaintext_len)
        spot = spots[k % len(spots)]
        result.tamper_tried += 1
        problem = deliver(parts, spot.offset)
        del parts  # a large payload must not live on while the next one is sealed
        if problem is None:
            result.tamper_rejected += 1
        else:
            result.tamper_failures.append(f"{spot.label}: {problem}")
        advance(1)


def traced_peak(operation: Callable[[], T]) -> tuple[int, T]:
    """Peak Python-heap bytes one call allocates, and what it returned, in a tracemalloc
    pass of its own (never a timed one: tracing slows every allocation down)."""
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        baseline = tracemalloc.get_traced_memory()[0]
        value = operation()
        peak = max(0, tracemalloc.get_traced_memory()[1] - baseline)
    finally:
        tracemalloc.stop()
    return peak, value


def steady_state_allocator() -> None:
    """Keep glibc from handing large freed buffers back to the OS between samples.

    By default glibc returns a freed multi-megabyte buffer to the kernel, so the next
    operation's output lands on fresh pages and pays a page fault per 4 KiB — a cost
    of this harness's validation step (it frees several such buffers per sample),
    not of the cipher: measured 2.7x on AES-GCM 1 MiB. Raising the trim and mmap
    thresholds gives the steady state a long-running sender reaches. No-op where
    glibc's mallopt is absent (macOS, Windows, musl).
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    m_trim_threshold, m_mmap_threshold = -1, -3
    mallopt(m_mmap_threshold, 32 * 1024 * 1024)  # glibc's maximum on 64-bit
    mallopt(m_trim_threshold, 1 << 30)


def describe_error(exc: BaseException) -> str:
    """An unexpected error as one line: its type and message, without the traceback."""
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()


def child_entry(
    conn: Connection,
    work: Callable[[Callable[[ChildMessage], None]], None],
    describe: Callable[[BaseException], str] = describe_error,
) -> None:
    """A job's child process from start to end (the body of every multiprocessing target).

    Tunes the allocator, ties the process to its parent, runs `work` with a function that
    sends a message to the supervisor, reports any error `work` raises as one
    `ChildFailed(describe(error))` (never dies silently), and closes the pipe: EOF on it
    tells the supervisor the child is done.
    """

    def emit(message: ChildMessage) -> None:
        if isinstance(message, SizeStarted):  # a stop's continue since is known by the count
            message = replace(message, continues=continues())
        elif isinstance(message, SizeMeasured):
            message.continues = continues()
        conn.send(message)

    steady_state_allocator()
    exit_with_parent()
    try:
        work(emit)
    except BaseException as exc:  # noqa: BLE001 - report every failure over the pipe, never die silently
        try:
            conn.send(ChildFailed(describe(exc)))
        except (OSError, ValueError):
            pass  # the supervisor is gone or stopped listening: nobody to tell
    finally:
        conn.close()

"""Operation micro-benchmarks: both ends of a scheme in one child process, no network.

`child_main` is the entry point of the child process the runner spawns for each
profile job; it never runs in the caller's process, so a GUI repaint or the
supervisor's sampler thread cannot steal time from what is timed. For each message
size it times the scheme's operations, validates every one of them outside the
timed region, tries tampered payloads, and measures peak traced memory in a
separate pass (tracemalloc slows code down, so it never shares a pass with timing).
"""

from __future__ import annotations

import os
import time
import traceback
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from app.core.events import (
    ChildFailed,
    Progress,
    RawMetric,
    SampleBatch,
    SizeMeasured,
    SizeStarted,
)
from app.core.lifeline import exit_with_parent
from app.core.measure import calibrate_batch, time_calls
from app.core.schemes import registry
from app.core.schemes.base import (
    KEYGEN_ON_SENDER,
    NO_KEYGEN,
    OPEN_METRIC,
    SEAL_METRIC,
    Family,
    Receiver,
    Scheme,
    SchemeError,
    Sender,
    flip_bit,
)

Emit = Callable[[Any], None]

#: Send sample batches to the supervisor at most this often (seconds).
FLUSH_INTERVAL = 0.1
#: A batch keeps every output alive until it is validated; past this many bytes the
#: outputs would land on freshly mapped pages and the timing would include page
#: faults that a real sender, which reuses its buffers, never pays (measured: 2.7x
#: on AES-GCM 1 MiB with 20 outputs alive). So large messages get smaller batches.
BATCH_BYTES = 256 * 1024


@dataclass(frozen=True)
class OpsPlan:
    """What the child measures: one profile job, already validated by the profile layer."""

    job_index: int
    scheme: str
    backend: str
    params: dict[str, Any]
    message_sizes: list[int]
    samples: int
    warmup: int
    keygen_samples: int
    pause_ms: float
    tamper: int


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


class OperationsBenchmark:
    """Measures one scheme across the plan's message sizes."""

    def __init__(self, plan: OpsPlan, emit: Emit) -> None:
        self.plan = plan
        self.emit = emit
        self.scheme: Scheme = registry.create(plan.scheme, plan.backend, plan.params)
        self.family = self.scheme.info.family
        self._done = 0
        self._total = self._count_total()

    # --- progress ---------------------------------------------------------------

    def _count_total(self) -> int:
        plan = self.plan
        per_size = plan.samples * 2 + plan.tamper
        shared = 0 if self.family in NO_KEYGEN else plan.keygen_samples
        if self.family is Family.KEY_AGREEMENT:
            shared += plan.samples
        return shared + per_size * len(plan.message_sizes)

    def _advance(self, steps: int = 1) -> None:
        self._done += steps
        self.emit(Progress(self.plan.job_index, min(self._done, self._total), self._total))

    def _pause(self) -> None:
        if self.plan.pause_ms > 0:
            time.sleep(self.plan.pause_ms / 1000)

    # --- generic timing loop ----------------------------------------------------

    def _measure(self, metric: str, samples: int, warmup: int, make_input: Callable[[], Any],
                 run: Callable[[Any], Any], check: Callable[[Any, Any], None],
                 output_bytes: int = 0) -> tuple[RawMetric, int]:
        """Time `run` in `samples` batches; validate every output with `check`.

        `output_bytes` is the size of one output, to keep a batch's live outputs
        under BATCH_BYTES.
        """
        count = calibrate_batch(run, make_input)
        if output_bytes:
            count = max(1, min(count, BATCH_BYTES // output_bytes))
        raw = RawMetric(batch=count)
        recorder = SampleRecorder(self.emit, self.plan.job_index, metric, raw)
        checked = 0
        for i in range(warmup + samples):
            inputs = [make_input() for _ in range(count)]
            # One untimed call first: validating the previous sample touched other
            # memory, and the timed calls should see the caches a steady stream of
            # messages sees, not the state the validation step left behind.
            run(inputs[0])
            elapsed, outputs = time_calls(run, inputs)
            for value, output in zip(inputs, outputs):
                check(value, output)
            checked += count
            per_op = elapsed / count / 1e9
            if i < warmup:
                raw.warmup.append(per_op)
            else:
                recorder.add(per_op)
                self._advance()
            self._pause()
        recorder.flush()
        return raw, checked

    # --- phases -----------------------------------------------------------------

    def measure_keygen(self) -> tuple[Receiver, bytes, RawMetric | None]:
        """Time key generation; return a receiver set up for the session."""
        scheme = self.scheme
        receiver = scheme.new_receiver()
        public = receiver.setup()
        if self.family in NO_KEYGEN:
            return receiver, public, None
        if self.family in KEYGEN_ON_SENDER:
            run: Callable[[Any], Any] = lambda _: scheme.new_sender().handshake(public)
        else:
            run = lambda _: scheme.new_receiver().setup()

        def check(_: Any, material: bytes) -> None:
            if not material:
                raise ValidationFailed("key generation published no key material")

        warmup = min(self.plan.warmup, 2)
        raw, _ = self._measure("keygen", self.plan.keygen_samples, warmup, lambda: None, run, check)
        return receiver, public, raw

    def measure_exchange(self, receiver: Receiver, public: bytes) -> tuple[RawMetric, int]:
        """Key agreement: time the sender's side (ephemeral key + DH + KDF) and check
        that each derived key matches the receiver's by a seal/open round trip."""
        scheme = self.scheme

        def run(_: Any) -> tuple[Sender, bytes]:
            sender = scheme.new_sender()
            return sender, sender.handshake(public)

        probe = os.urandom(16)

        def check(_: Any, result: tuple[Sender, bytes]) -> None:
            sender, message = result
            receiver.handshake(message)
            if bytes(receiver.open(b"".join(sender.seal(probe)))) != probe:
                raise ValidationFailed("sender and receiver derived different keys")

        return self._measure("exchange", self.plan.samples, self.plan.warmup, lambda: None, run, check)

    def measure_size(self, size_index: int, size: int, receiver: Receiver, public: bytes,
                     shared_metrics: dict[str, RawMetric]) -> SizeMeasured:
        scheme, plan = self.scheme, self.plan
        result = SizeMeasured(size_index, size, metrics=dict(shared_metrics))
        sender = scheme.new_sender()
        handshake = sender.handshake(public)
        receiver.handshake(handshake)
        plaintext = os.urandom(size)
        sample_payload = b"".join(sender.seal(plaintext))
        result.wire_bytes = {
            "payload": len(sample_payload),
            "overhead": len(sample_payload) - size,
            "public_material": len(public),
            "handshake": len(handshake),
        }
        payload_len = len(sample_payload)
        del sample_payload  # a 128 MiB job must not carry a spare copy through every phase

        def seal_check(_: Any, parts: tuple[bytes, ...]) -> None:
            if bytes(receiver.open(b"".join(parts))) != plaintext:
                raise ValidationFailed("opened plaintext differs from the original")

        seal_metric = SEAL_METRIC[self.family]
        raw, checked = self._measure(seal_metric, plan.samples, plan.warmup, lambda: plaintext, sender.seal,
                                     seal_check, output_bytes=payload_len)
        result.metrics[seal_metric] = raw
        result.checked += checked

        open_metric = OPEN_METRIC[self.family]
        if open_metric is not None:
            def make_payload() -> bytes:
                return b"".join(sender.seal(plaintext))

            def open_check(_: Any, opened: Any) -> None:
                if bytes(opened) != plaintext:
                    raise ValidationFailed("opened plaintext differs from the original")

            raw, checked = self._measure(open_metric, plan.samples, plan.warmup, make_payload, receiver.open,
                                         open_check, output_bytes=max(1, size))
            result.metrics[open_metric] = raw
            result.checked += checked
        else:
            self._advance(plan.samples)

        for extra in scheme.extra_operations(sender, receiver):
            def extra_check(value: Any, output: Any, extra: Any = extra) -> None:
                problem = extra.check(value, output)
                if problem:
                    raise ValidationFailed(f"{extra.metric}: {problem}")

            raw, checked = self._measure(extra.metric, plan.samples, plan.warmup, extra.make_input, extra.run,
                                         extra_check)
            result.metrics[extra.metric] = raw
            result.checked += checked

        self._tamper(result, sender, receiver, plaintext)
        self._trace_memory(result, sender, receiver, plaintext)
        return result

    def _tamper(self, result: SizeMeasured, sender: Sender, receiver: Receiver, plaintext: bytes) -> None:
        """Flip bits where the scheme says they must be caught; count rejections."""
        if not self.scheme.info.authenticated:
            result.notes.append("tamper check not applicable: the scheme has no integrity protection")
            self._advance(self.plan.tamper)
            return
        for k in range(self.plan.tamper):
            payload = b"".join(sender.seal(plaintext))
            spots = self.scheme.tamper_spots(len(payload), len(plaintext))
            spot = spots[k % len(spots)]
            tampered = flip_bit(payload, spot.offset)
            result.tamper_tried += 1
            try:
                receiver.open(tampered)
            except SchemeError:
                result.tamper_rejected += 1
            except Exception as exc:  # a library error the scheme failed to classify
                result.tamper_failures.append(f"{spot.label}: raised {type(exc).__name__} instead of a typed rejection")
            else:
                result.tamper_failures.append(f"{spot.label}: tampered payload was ACCEPTED")
            self._advance()

    def _trace_memory(self, result: SizeMeasured, sender: Sender, receiver: Receiver, plaintext: bytes) -> None:
        """Peak Python-heap allocation per operation, in its own untimed pass."""
        payload = b"".join(sender.seal(plaintext))
        operations: list[tuple[str, Callable[[], Any]]] = [(SEAL_METRIC[self.family], lambda: sender.seal(plaintext))]
        open_metric = OPEN_METRIC[self.family]
        if open_metric is not None:
            operations.append((open_metric, lambda: receiver.open(payload)))
        tracemalloc.start()
        try:
            for metric, operation in operations:
                payload = b"".join(sender.seal(plaintext))  # a fresh nonce for each open
                tracemalloc.reset_peak()
                baseline = tracemalloc.get_traced_memory()[0]
                operation()
                peak = tracemalloc.get_traced_memory()[1] - baseline
                if metric in result.metrics:
                    result.metrics[metric].traced_peak_bytes = max(0, peak)
        finally:
            tracemalloc.stop()

    def trace_keygen(self, raw: RawMetric) -> None:
        scheme = self.scheme
        receiver = scheme.new_receiver()
        public = receiver.setup()
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            baseline = tracemalloc.get_traced_memory()[0]
            if self.family in KEYGEN_ON_SENDER:
                scheme.new_sender().handshake(public)
            else:
                scheme.new_receiver().setup()
            raw.traced_peak_bytes = max(0, tracemalloc.get_traced_memory()[1] - baseline)
        finally:
            tracemalloc.stop()

    def run(self) -> None:
        receiver, public, keygen = self.measure_keygen()
        shared: dict[str, RawMetric] = {}
        if keygen is not None:
            self.trace_keygen(keygen)
            shared["keygen"] = keygen
        exchange_checked = 0
        if self.family is Family.KEY_AGREEMENT:
            shared["exchange"], exchange_checked = self.measure_exchange(receiver, public)
        for index, size in enumerate(self.plan.message_sizes):
            self.emit(SizeStarted(index, size))
            try:
                measured = self.measure_size(index, size, receiver, public, shared)
                measured.checked += exchange_checked if index == 0 else 0
            except (ValidationFailed, SchemeError) as exc:
                measured = SizeMeasured(index, size, metrics={}, failed=1,
                                        error=f"{type(exc).__name__}: {exc}")
            self.emit(measured.summarize())


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


def child_main(conn: Any, plan: OpsPlan) -> None:
    """Entry point of an operations child process (multiprocessing spawn target)."""
    def emit(event: Any) -> None:
        conn.send(event)

    steady_state_allocator()
    exit_with_parent()

    try:
        OperationsBenchmark(plan, emit).run()
    except BaseException as exc:  # report, never die silently
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        try:
            conn.send(ChildFailed(detail))
        except (OSError, ValueError):
            pass
    finally:
        conn.close()

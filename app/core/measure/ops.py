"""Operation micro-benchmarks: both ends of a scheme in one child process, no network.

`child_main` is the entry point of the child process the runner spawns for each
profile job; it never runs in the caller's process, so a GUI repaint or the
supervisor's sampler thread cannot steal time from what is timed. For each message
size it times the scheme's operations, validates every one of them outside the
timed region, tries tampered payloads, and measures peak traced memory in a
separate pass (tracemalloc slows code down, so it never shares a pass with timing).
The loop's rules (warm-up apart, samples in batches, the tamper check, the memory
pass, the entry point) are app.core.measure.harness's, shared with the session sender.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

from app.core.contracts.events import RawMetric, SizeMeasured, SizeStarted
from app.core.contracts.plan import JobPlan
from app.core.measure.harness import (
    Emit,
    Parts,
    ProgressCounter,
    SampleRounds,
    ValidationFailed,
    check_tampering,
    child_entry,
    traced_peak,
)
from app.core.measure.timing import Calibration, calibrate, known_slow, time_calls
from app.core.schemes import registry
from app.core.schemes.base import (
    KEYGEN_ON_SENDER,
    NO_KEYGEN,
    OPEN_METRIC,
    SEAL_METRIC,
    Receiver,
    Scheme,
    SchemeError,
    Sender,
    flip_bit,
)
from app.core.schemes.establishment import KeyEstablishingScheme

#: A batch keeps every output alive until it is validated; past this many bytes the
#: outputs would land on freshly mapped pages and the timing would include page
#: faults that a real sender, which reuses its buffers, never pays (measured: 2.7x
#: on AES-GCM 1 MiB with 20 outputs alive). So large messages get smaller batches.
BATCH_BYTES = 256 * 1024


class OperationsBenchmark:
    """Measures one scheme across the plan's message sizes."""

    def __init__(self, plan: JobPlan, emit: Emit) -> None:
        self.plan = plan
        self.job = job = plan.job
        self.emit = emit
        self.scheme: Scheme = registry.create(job.scheme, job.backend, job.params, job.exchange)
        self.family = self.scheme.info.family
        # Every sample is reported at once: the supervisor re-emits each as the job's progress.
        self.progress = ProgressCounter(emit, plan.first_index, self._count_total())
        self.exchange_checked = 0

    # --- progress ---------------------------------------------------------------

    def _count_total(self) -> int:
        job = self.job
        per_size = job.samples * 2 + job.tamper
        shared = 0 if self.family in NO_KEYGEN else job.keygen_samples
        if isinstance(self.scheme, KeyEstablishingScheme):
            shared += 2 * job.samples  # the exchange at each end
        return shared + per_size * len(job.message_sizes)

    def _pause(self) -> None:
        if self.job.pause_ms > 0:
            time.sleep(self.job.pause_ms / 1000)

    # --- generic timing loop ----------------------------------------------------

    def _measure(
        self,
        metric: str,
        samples: int,
        warmup: int,
        make_input: Callable[[], Any],
        run: Callable[[Any], Any],
        check: Callable[[Any, Any], None],
        output_bytes: int = 0,
        calibration: Calibration | None = None,
    ) -> tuple[RawMetric, int]:
        """Time `run` in `samples` batches; validate every output with `check`.

        `output_bytes` is the size of one output, to keep a batch's live outputs
        under BATCH_BYTES. `calibration`: one already known (else `calibrate` probes).
        """
        calibration = calibration or calibrate(run, make_input)
        count = calibration.count
        if output_bytes:
            count = max(1, min(count, BATCH_BYTES // output_bytes))
        rounds = SampleRounds(
            self.emit, self.plan.first_index, [metric], warmup, batch=count, on_sample=self.progress.advance
        )
        checked = 0
        for _ in range(warmup + samples):
            inputs = [make_input() for _ in range(count)]
            # One untimed call first: validating the previous sample touched other
            # memory, and the timed calls should see the caches a steady stream of
            # messages sees, not the state the validation step left behind. A slow call
            # refills them itself (and would double the cost of the job).
            if not calibration.slow:
                run(inputs[0])
            elapsed, outputs = time_calls(run, inputs)
            for value, output in zip(inputs, outputs):
                check(value, output)
            checked += count
            rounds.record({metric: elapsed / count / 1e9})
            self._pause()
        return rounds.flush()[metric], checked

    # --- phases -----------------------------------------------------------------

    def measure_keygen(self) -> tuple[Receiver, bytes, RawMetric | None]:
        """Time key generation; return a receiver set up for the session."""
        scheme = self.scheme
        receiver = scheme.new_receiver()
        setup_ns, (public,) = time_calls(lambda _: receiver.setup(), [None])
        if self.family in NO_KEYGEN:
            return receiver, public, None

        def run(_: Any) -> Any:
            if self.family in KEYGEN_ON_SENDER:
                return scheme.new_sender().handshake(public)
            return scheme.new_receiver().setup()

        def check(_: Any, material: bytes) -> None:
            if not material:
                raise ValidationFailed("key generation published no key material")

        # The working key pair above came from the very call timed below: it was the first
        # warm-up round, and a slow one is the calibration too (one pure-Python RSA-3072 key
        # pair fewer each: 0.2-3 s). A sender's handshake is another operation, probed apart.
        warmup, known = min(self.job.warmup, 2), None
        if self.family not in KEYGEN_ON_SENDER:
            warmup, known = max(0, warmup - 1), known_slow(setup_ns)
        raw, _ = self._measure("keygen", self.job.keygen_samples, warmup, lambda: None, run, check, calibration=known)
        return receiver, public, raw

    def measure_exchange(self, scheme: KeyEstablishingScheme, private: Any, public: bytes) -> dict[str, RawMetric]:
        """A key establishment as a session's handshake makes it, whatever the job's exchange
        pattern (a per-message job pays it in every message): "exchange" times the sender's
        side (an ephemeral key pair and the agreement, or the encapsulation; the KDF),
        "exchange_receiver" the receiver's (the agreement or decapsulation; the KDF). Each
        key is checked by a seal/open round trip between the two ends, outside the timing."""
        probe = os.urandom(16)

        def establish(_: Any) -> tuple[Sender, bytes]:
            sender = scheme.session_pair()[0]
            return sender, sender.handshake(public)

        receiver = scheme.session_pair()[1]
        receiver.private = private  # type: ignore[attr-defined]  # the job's key pair

        def agree(_: Any, result: tuple[Sender, bytes]) -> None:
            sender, message = result
            receiver.handshake(message)
            if bytes(receiver.open(b"".join(sender.seal(probe)))) != probe:
                raise ValidationFailed("sender and receiver derived different keys")

        def finish(made: tuple[Sender, bytes]) -> Any:
            receiver.handshake(made[1])
            return receiver.open  # this session's open: the check seals under the same key

        def finished(made: tuple[Sender, bytes], open_: Any) -> None:
            if bytes(open_(b"".join(made[0].seal(probe)))) != probe:
                raise ValidationFailed("the receiver derived another key than the sender")

        job = self.job
        sender_raw, sent = self._measure("exchange", job.samples, job.warmup, lambda: None, establish, agree)
        receiver_raw, finished_count = self._measure(
            "exchange_receiver", job.samples, job.warmup, lambda: establish(None), finish, finished
        )
        self.exchange_checked = sent + finished_count
        return {"exchange": sender_raw, "exchange_receiver": receiver_raw}

    def measure_size(
        self, size_index: int, size: int, receiver: Receiver, public: bytes, shared_metrics: dict[str, RawMetric]
    ) -> SizeMeasured:
        scheme, job = self.scheme, self.job
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
        raw, checked = self._measure(
            seal_metric, job.samples, job.warmup, lambda: plaintext, sender.seal, seal_check, output_bytes=payload_len
        )
        result.metrics[seal_metric] = raw
        result.checked += checked

        open_metric = OPEN_METRIC[self.family]
        if open_metric is not None:

            def make_payload() -> bytes:
                return b"".join(sender.seal(plaintext))

            def open_check(_: Any, opened: Any) -> None:
                if bytes(opened) != plaintext:
                    raise ValidationFailed("opened plaintext differs from the original")

            raw, checked = self._measure(
                open_metric, job.samples, job.warmup, make_payload, receiver.open, open_check, output_bytes=max(1, size)
            )
            result.metrics[open_metric] = raw
            result.checked += checked
        else:
            self.progress.advance(job.samples)

        for extra in scheme.extra_operations(sender, receiver):

            def extra_check(value: Any, output: Any, extra: Any = extra) -> None:
                problem = extra.check(value, output)
                if problem:
                    raise ValidationFailed(f"{extra.metric}: {problem}")

            raw, checked = self._measure(
                extra.metric, job.samples, job.warmup, extra.make_input, extra.run, extra_check
            )
            result.metrics[extra.metric] = raw
            result.checked += checked

        self._tamper(result, sender, receiver, plaintext)
        self._trace_memory(result, sender, receiver, plaintext)
        return result

    def _tamper(self, result: SizeMeasured, sender: Sender, receiver: Receiver, plaintext: bytes) -> None:
        """Flip bits where the scheme says they must be caught; count rejections."""

        def deliver(parts: Parts, offset: int) -> str | None:
            try:
                receiver.open(flip_bit(b"".join(parts), offset))
            except SchemeError:
                return None
            except Exception as exc:  # noqa: BLE001 - a library error the scheme failed to classify
                return f"raised {type(exc).__name__} instead of a typed rejection"
            return "tampered payload was ACCEPTED"

        check_tampering(
            self.scheme,
            self.job.tamper,
            len(plaintext),
            result,
            lambda: sender.seal(plaintext),
            deliver,
            self.progress.advance,
        )

    def _trace_memory(self, result: SizeMeasured, sender: Sender, receiver: Receiver, plaintext: bytes) -> None:
        """Peak Python-heap allocation per operation, in its own untimed pass."""
        seal_metric = SEAL_METRIC[self.family]
        peak, _ = traced_peak(lambda: sender.seal(plaintext))
        if seal_metric in result.metrics:
            result.metrics[seal_metric].traced_peak_bytes = peak
        open_metric = OPEN_METRIC[self.family]
        if open_metric is not None:
            payload = b"".join(sender.seal(plaintext))  # a fresh nonce for the open
            peak, _ = traced_peak(lambda: receiver.open(payload))
            if open_metric in result.metrics:
                result.metrics[open_metric].traced_peak_bytes = peak

    def trace_keygen(self, raw: RawMetric, public: bytes) -> None:
        """Peak allocation of one key generation, in its own untimed pass. `public` is the
        working receiver's: a sender-side key generation consumes it, as in the timed pass
        (a fresh receiver here cost one more key generation, seconds for pure-Python RSA)."""
        scheme = self.scheme
        if self.family in KEYGEN_ON_SENDER:
            raw.traced_peak_bytes, _ = traced_peak(lambda: scheme.new_sender().handshake(public))
        else:
            raw.traced_peak_bytes, _ = traced_peak(lambda: scheme.new_receiver().setup())

    def run(self) -> None:
        receiver, public, keygen = self.measure_keygen()
        shared: dict[str, RawMetric] = {}
        if keygen is not None:
            self.trace_keygen(keygen, public)
            shared["keygen"] = keygen
        exchange_checked = 0
        if isinstance(self.scheme, KeyEstablishingScheme):
            shared.update(self.measure_exchange(self.scheme, receiver.private, public))  # type: ignore[attr-defined]
            exchange_checked = self.exchange_checked
        for index, size in enumerate(self.job.message_sizes):
            self.emit(SizeStarted(index, size))
            try:
                measured = self.measure_size(index, size, receiver, public, shared)
                measured.checked += exchange_checked if index == 0 else 0
            except (ValidationFailed, SchemeError) as exc:
                measured = SizeMeasured.failure(index, size, exc)
            self.emit(measured.summarize())


def child_main(conn: Connection, plan: JobPlan) -> None:
    """Entry point of an operations child process (multiprocessing spawn target)."""
    child_entry(conn, lambda emit: OperationsBenchmark(plan, emit).run())

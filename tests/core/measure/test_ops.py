"""The operations benchmark, run in-process here (the runner tests cover the child)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from app.core.contracts.events import Progress, RawMetric, SampleBatch, SizeMeasured, SizeStarted
from app.core.contracts.plan import JobPlan
from app.core.measure.ops import OperationsBenchmark
from app.core.measure.timing import SLOW_CALL_NS, calibrate, time_calls
from app.core.schemes import symmetric
from app.core.schemes.base import AuthenticationError
from app.core.vocab import Exchange
from tests.helpers.plans import job_plan


def _plan(
    scheme: str, backend: str, params: dict[str, Any] | None = None, sizes: list[int] | None = None, **overrides: Any
) -> JobPlan:
    return job_plan(scheme, backend, params, sizes, **overrides)


def _run(plan: JobPlan) -> tuple[list[SizeMeasured], list[Any]]:
    events: list[Any] = []
    OperationsBenchmark(plan, events.append).run()
    return [e for e in events if isinstance(e, SizeMeasured)], events


#: A key-establishing job's key exchange at each end, and a hybrid's KEM alone.
EXCHANGE = ("exchange", "exchange_receiver")
KEM = ("encapsulate", "decapsulate")


@pytest.mark.parametrize(
    ("scheme", "backend", "params", "metrics"),
    [
        ("aes-gcm", "cryptography", {"key_bits": 128}, {"keygen", "encrypt", "decrypt"}),
        ("ecdh", "cryptography", {"curve": "P-256"}, {"keygen", *EXCHANGE, "encrypt", "decrypt"}),
        ("rsa-oaep", "cryptography", {"bits": 2048}, {"keygen", "encrypt", "decrypt"}),
        ("ml-kem", "cryptography", {"level": 768}, {"keygen", *EXCHANGE, "encrypt", "decrypt", *KEM}),
        ("ed25519", "cryptography", {}, {"keygen", "sign", "verify"}),
        ("sha256", "pycryptodome", {}, {"hash"}),
    ],
)
def test_each_family_measures_its_metrics(scheme: str, backend: str, params: dict[str, Any], metrics: set[str]) -> None:
    measured, events = _run(_plan(scheme, backend, params))
    assert len(measured) == 1
    result = measured[0]
    assert result.error is None
    assert set(result.metrics) == metrics
    for name, raw in result.metrics.items():
        expected = 2 if name == "keygen" else 4
        assert len(raw.samples) == expected, name
        assert all(v > 0 for v in raw.samples)
        assert raw.batch >= 1
    assert result.checked >= 8  # every seal and every open was validated
    assert result.tamper_tried == 3 and result.tamper_rejected == 3
    assert result.wire_bytes["payload"] - result.wire_bytes["overhead"] == 18
    assert any(isinstance(e, SampleBatch) for e in events)
    progress = [e for e in events if isinstance(e, Progress)]
    assert progress[-1].done == progress[-1].total


@pytest.mark.parametrize("exchange", Exchange)
@pytest.mark.parametrize(
    ("scheme", "params", "enc_len", "extra"),
    [("x25519", {}, 32, ()), ("ml-kem", {"level": 768}, 1088, KEM), ("rsa-kem", {"bits": 2048}, 256, KEM)],
)
def test_a_key_establishing_job_times_its_exchange_and_seals_in_its_pattern(
    scheme: str, params: dict[str, Any], enc_len: int, extra: tuple[str, ...], exchange: Exchange
) -> None:
    """Both patterns time one key establishment at each end ("exchange", "exchange_receiver");
    a session seals AEAD alone (its handshake carried the encapsulation), per-message seals
    the encapsulation into every payload."""
    [result], _ = _run(_plan(scheme, "cryptography", params, exchange=exchange))
    assert result.error is None
    assert set(result.metrics) == {"keygen", *EXCHANGE, "encrypt", "decrypt", *extra}
    session = exchange is Exchange.SESSION
    assert result.wire_bytes["handshake"] == (enc_len if session else 0)
    assert result.wire_bytes["overhead"] == 28 + (0 if session else enc_len)
    assert result.tamper_tried == result.tamper_rejected == 3
    assert result.checked >= 2 * 4 + 2 * 4  # every exchange and every seal and open, validated


def test_hkdf_uses_its_secret_size() -> None:
    measured, _ = _run(_plan("hkdf", "cryptography", {"secret_size": 48, "output_length": 64}, sizes=[48]))
    assert measured[0].error is None
    assert set(measured[0].metrics) == {"derive"}
    assert measured[0].wire_bytes["payload"] == 48 + 64


def test_several_sizes_share_keygen_but_not_messages() -> None:
    measured, events = _run(_plan("aes-gcm", "cryptography", {"key_bits": 256}, sizes=[16, 4096]))
    assert [m.message_size for m in measured] == [16, 4096]
    assert measured[0].metrics["keygen"] is measured[1].metrics["keygen"]
    assert measured[0].metrics["encrypt"] is not measured[1].metrics["encrypt"]
    assert [e.message_size for e in events if isinstance(e, SizeStarted)] == [16, 4096]


@pytest.mark.parametrize(("spin_s", "keygen_probed"), [(SLOW_CALL_NS / 1e9 * 1.5, False), (0.0, True)])
def test_a_slow_key_generation_is_its_own_probe(
    monkeypatch: pytest.MonkeyPatch, spin_s: float, keygen_probed: bool
) -> None:
    """The working key pair's generation, timed, calibrates a slow key generation: a job
    made one more (0.2-3 s at pure-Python RSA-3072) only to learn it takes one a sample.
    A fast one is still probed."""
    from app.core.measure import ops
    from app.core.schemes.pke import TextbookRsa

    generated, probed = [0], [0]
    pair, probe = TextbookRsa(512, crt=True).generate(), ops.calibrate

    def counted_generate(self: TextbookRsa) -> Any:
        generated[0] += 1
        _spin(spin_s)(None)
        return pair  # a real key pair, at once or after the spin

    def counted_probe(*args: Any) -> Any:
        probed[0] += 1
        return probe(*args)

    monkeypatch.setattr(TextbookRsa, "generate", counted_generate)
    monkeypatch.setattr(ops, "calibrate", counted_probe)
    plan = _plan("rsa-textbook", "python", {"bits": 512, "crt": True}, sizes=[16], warmup=1, keygen_samples=2)
    measured, _ = _run(plan)
    assert measured[0].error is None
    keygen = measured[0].metrics["keygen"]
    assert len(keygen.samples) == 2
    assert probed[0] == 2 + keygen_probed  # encrypt and decrypt are probed either way
    if not keygen_probed:
        # The working pair (warm-up round 1 too), the two timed, the traced pass: no probe.
        assert generated[0] == 4
        assert keygen.batch == 1 and min(keygen.samples) >= SLOW_CALL_NS / 1e9


def test_fast_operations_are_batched() -> None:
    measured, _ = _run(_plan("aes-gcm", "cryptography", {"key_bits": 128}, sizes=[16]))
    assert measured[0].metrics["encrypt"].batch > 10


def test_elgamal_tamper_is_not_applicable() -> None:
    measured, _ = _run(_plan("elgamal", "python", {"bits": 256}))
    assert measured[0].error is None
    assert measured[0].tamper_tried == 0
    assert any("not applicable" in note for note in measured[0].notes)


def test_traced_memory_comes_from_its_own_pass() -> None:
    measured, _ = _run(_plan("aes-gcm", "cryptography", {"key_bits": 256}, sizes=[65536]))
    metrics = measured[0].metrics
    # The sealed payload alone is a 64 KiB Python object: the traced peak must see it.
    assert metrics["encrypt"].traced_peak_bytes is not None
    assert metrics["encrypt"].traced_peak_bytes >= 65536
    assert metrics["keygen"].traced_peak_bytes is not None


def test_wrong_plaintext_fails_the_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """A scheme that returns the wrong plaintext must fail validation, not give a number."""
    original = symmetric.AeadKey._open_cryptography

    def corrupting_open(self: Any, payload: Any) -> bytes:
        return bytes(original(self, payload))[::-1] + b"!"

    monkeypatch.setattr(symmetric.AeadKey, "_open_cryptography", corrupting_open)
    measured, _ = _run(_plan("aes-gcm", "cryptography", {"key_bits": 128}))
    assert measured[0].error is not None
    assert "differs from the original" in measured[0].error
    assert measured[0].failed == 1
    assert measured[0].metrics == {}


def test_accepted_tamper_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """A receiver that accepts tampered payloads is caught by the tamper check."""
    original = symmetric.AeadKey._open_cryptography

    def lenient_open(self: Any, payload: Any) -> bytes:
        try:
            return original(self, payload)
        except AuthenticationError:
            return b"accepted"

    monkeypatch.setattr(symmetric.AeadKey, "_open_cryptography", lenient_open)
    measured, _ = _run(_plan("aes-gcm", "cryptography", {"key_bits": 128}))
    assert measured[0].tamper_tried == 3
    assert measured[0].tamper_rejected == 0
    assert all("ACCEPTED" in failure for failure in measured[0].tamper_failures)


def test_time_calls_keeps_every_output() -> None:
    elapsed, outputs = time_calls(lambda x: x * 2, [1, 2, 3])
    assert outputs == [2, 4, 6]
    assert elapsed > 0


def _spin(seconds: float) -> Callable[[Any], None]:
    """A call that works (never sleeps) for at least `seconds`."""

    def run(_: Any) -> None:
        import time

        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass

    return run


def test_calibration_batches_fast_and_not_slow_calls() -> None:
    fast = calibrate(lambda _: None, lambda: None)
    assert fast.count > 100 and not fast.slow
    one_ms = calibrate(_spin(0.001), lambda: None)
    assert one_ms.count == 1 and not one_ms.slow  # still gets the untimed call before each sample
    slow = calibrate(_spin(SLOW_CALL_NS / 1e9 * 1.2), lambda: None)
    assert slow.count == 1 and slow.slow and slow.single_ns >= SLOW_CALL_NS


def test_raw_metric_defaults() -> None:
    raw = RawMetric()
    assert raw.samples == [] and raw.batch == 1

"""AEAD schemes (AES-GCM, ChaCha20-Poly1305), AeadKey and NonceSequence."""

from __future__ import annotations

import itertools
import os
from functools import cache
from typing import Any

import pytest

from app.core.schemes import registry
from app.core.schemes.base import AuthenticationError, PayloadFormatError, Receiver, Scheme, Sender, flip_bit
from app.core.schemes.symmetric import (
    AEAD_OVERHEAD,
    NONCE_LEN,
    SPECS,
    TAG_LEN,
    AeadKey,
    NonceSequence,
    symmetric_security,
)
from app.core.vocab import Family
from tests.helpers.schemes import connect

REJECTED = (AuthenticationError, PayloadFormatError)
MESSAGE_SIZES = (0, 1, 18, 1000)
BACKENDS = ("cryptography", "pycryptodome")
ALGORITHMS = {"aes-gcm": (16, 24, 32), "chacha20-poly1305": (32,)}


def all_combos() -> list[tuple[str, str, dict[str, Any]]]:
    """Every (scheme id, backend, params) the specs of this module allow."""
    combos = []
    for spec in SPECS:
        axes = [[(p.name, c) for c in p.choices] for p in spec.params if p.choices]
        for backend in spec.backends:
            for values in itertools.product(*axes):
                combos.append((spec.scheme_id, backend, dict(values)))
    return combos


COMBOS = all_combos()
COMBO_IDS = [f"{sid}-{backend}-{'-'.join(str(v) for v in params.values())}" for sid, backend, params in COMBOS]


@cache
def session(scheme_id: str, backend: str, params_items: tuple[tuple[str, Any], ...]) -> tuple[Scheme, Sender, Receiver]:
    scheme = registry.create(scheme_id, backend, dict(params_items))
    sender, receiver, _ = connect(scheme)
    return scheme, sender, receiver


def combo_session(scheme_id: str, backend: str, params: dict[str, Any]) -> tuple[Scheme, Sender, Receiver]:
    return session(scheme_id, backend, tuple(sorted(params.items())))


# ----------------------------------------------------------------- coverage of the specs


def test_every_combination_is_available() -> None:
    # Both AEADs exist in both backends for every key size: nothing to skip.
    assert len(COMBOS) == 3 * 2 + 2
    for scheme_id, backend, params in COMBOS:
        assert registry.create(scheme_id, backend, params).info.backend == backend
    assert {spec.scheme_id for spec in SPECS} == set(ALGORITHMS)
    assert all(spec.backends == BACKENDS for spec in SPECS)


# ----------------------------------------------------------------- round trips


@pytest.mark.parametrize("size", MESSAGE_SIZES)
@pytest.mark.parametrize(("scheme_id", "backend", "params"), COMBOS, ids=COMBO_IDS)
def test_round_trip(scheme_id: str, backend: str, params: dict[str, Any], size: int) -> None:
    scheme, sender, receiver = combo_session(scheme_id, backend, params)
    message = os.urandom(size)
    parts = sender.seal(message)
    assert all(isinstance(part, bytes) for part in parts)
    payload = b"".join(parts)
    assert len(payload) == size + AEAD_OVERHEAD
    assert scheme.payload_overhead(size) >= len(payload) - size
    if size >= 18:  # a random 18-byte string appears in the payload only if not encrypted
        assert message not in payload
    assert bytes(receiver.open(payload)) == message
    # The receive path hands open() a memoryview or bytearray into its buffer.
    assert bytes(receiver.open(memoryview(bytearray(payload)))) == message
    assert bytes(receiver.open(bytearray(payload))) == message


@pytest.mark.parametrize(("scheme_id", "backend", "params"), COMBOS, ids=COMBO_IDS)
def test_setup_publishes_key_of_stated_size(scheme_id: str, backend: str, params: dict[str, Any]) -> None:
    scheme = registry.create(scheme_id, backend, params)
    receiver = scheme.new_receiver()
    key = receiver.setup()
    expected = params.get("key_bits", 256) // 8
    assert len(key) == expected
    sender = scheme.new_sender()
    assert sender.handshake(key) == b""
    receiver.handshake(b"")
    assert receiver.open(b"".join(sender.seal(b"abc"))) == b"abc"


def test_fresh_keys_per_receiver() -> None:
    scheme = registry.create("aes-gcm", "cryptography", {"key_bits": 128})
    keys = {scheme.new_receiver().setup() for _ in range(8)}
    assert len(keys) == 8


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_backends_interoperate(algorithm: str) -> None:
    for key_len in ALGORITHMS[algorithm]:
        key = os.urandom(key_len)
        for sealer, opener in itertools.permutations(BACKENDS):
            message = os.urandom(100)
            payload = b"".join(AeadKey(algorithm, sealer, key).seal(message))
            assert AeadKey(algorithm, opener, key).open(payload) == message


@pytest.mark.parametrize("backend", BACKENDS)
def test_wrong_key_is_rejected(backend: str) -> None:
    payload = b"".join(AeadKey("aes-gcm", backend, bytes(32)).seal(b"secret"))
    with pytest.raises(AuthenticationError):
        AeadKey("aes-gcm", backend, b"\x01" + bytes(31)).open(payload)


def test_ciphers_are_distinct() -> None:
    # The same key and the same nonce counter under AES-GCM and ChaCha20 must not
    # open each other's payloads (the algorithm choice is honoured).
    key = os.urandom(32)
    for backend in BACKENDS:
        payload = b"".join(AeadKey("aes-gcm", backend, key).seal(b"message"))
        with pytest.raises(AuthenticationError):
            AeadKey("chacha20-poly1305", backend, key).open(payload)


# ----------------------------------------------------------------- rejection


@pytest.mark.parametrize("size", (0, 1, 1000))
@pytest.mark.parametrize(("scheme_id", "backend", "params"), COMBOS, ids=COMBO_IDS)
def test_every_tamper_spot_is_rejected(scheme_id: str, backend: str, params: dict[str, Any], size: int) -> None:
    scheme, sender, receiver = combo_session(scheme_id, backend, params)
    assert scheme.info.authenticated is True
    message = os.urandom(size)
    payload = b"".join(sender.seal(message))
    spots = scheme.tamper_spots(len(payload), size)
    labels = [spot.label for spot in spots]
    assert "nonce" in labels and "tag" in labels
    assert ("ciphertext" in labels) == (size > 0)
    for spot in spots:
        tampered = flip_bit(payload, spot.offset)
        assert tampered != payload
        with pytest.raises(REJECTED):
            receiver.open(tampered)
    assert receiver.open(payload) == message  # the untampered payload still opens


@pytest.mark.parametrize(("scheme_id", "backend", "params"), COMBOS, ids=COMBO_IDS)
def test_short_and_empty_payloads_are_format_errors(scheme_id: str, backend: str, params: dict[str, Any]) -> None:
    _, sender, receiver = combo_session(scheme_id, backend, params)
    payload = b"".join(sender.seal(b""))
    for bad in (b"", payload[:NONCE_LEN], payload[:-1]):
        with pytest.raises(PayloadFormatError):
            receiver.open(bad)


@pytest.mark.parametrize(("scheme_id", "backend", "params"), COMBOS, ids=COMBO_IDS)
def test_truncated_or_extended_payload_is_rejected(scheme_id: str, backend: str, params: dict[str, Any]) -> None:
    _, sender, receiver = combo_session(scheme_id, backend, params)
    payload = b"".join(sender.seal(os.urandom(40)))
    for bad in (payload[:-1], payload + b"\x00", payload[:NONCE_LEN] + payload[NONCE_LEN + 1 :]):
        with pytest.raises(REJECTED):
            receiver.open(bad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_preshared_key_of_wrong_length_is_rejected(backend: str) -> None:
    scheme = registry.create("aes-gcm", backend, {"key_bits": 128})
    for bad in (b"", bytes(15), bytes(17), bytes(32)):
        with pytest.raises(PayloadFormatError):
            scheme.new_sender().handshake(bad)


@pytest.mark.parametrize("backend", BACKENDS)
def test_receiver_rejects_a_nonempty_handshake(backend: str) -> None:
    receiver = registry.create("chacha20-poly1305", backend).new_receiver()
    receiver.setup()
    with pytest.raises(PayloadFormatError):
        receiver.handshake(b"\x00")


def test_use_before_handshake_is_an_error() -> None:
    scheme = registry.create("aes-gcm", "cryptography")
    with pytest.raises(RuntimeError):
        scheme.new_sender().seal(b"x")
    with pytest.raises(RuntimeError):
        scheme.new_receiver().open(bytes(40))


def test_unknown_aead_backend() -> None:
    with pytest.raises(ValueError, match="tinyec"):
        AeadKey("aes-gcm", "tinyec", bytes(32))


# ----------------------------------------------------------------- nonces


@pytest.mark.parametrize(("scheme_id", "backend", "params"), COMBOS, ids=COMBO_IDS)
def test_thousand_seals_use_thousand_distinct_nonces(scheme_id: str, backend: str, params: dict[str, Any]) -> None:
    scheme = registry.create(scheme_id, backend, params)
    sender, _, _ = connect(scheme)
    nonces = [b"".join(sender.seal(b"same message"))[:NONCE_LEN] for _ in range(1000)]
    assert len(set(nonces)) == 1000
    # One key: one random prefix, a counter in the low 64 bits.
    assert len({nonce[:4] for nonce in nonces}) == 1
    assert [int.from_bytes(nonce[4:], "big") for nonce in nonces] == list(range(1000))


def test_same_message_twice_gives_different_payloads() -> None:
    sender, receiver, _ = connect(registry.create("aes-gcm", "pycryptodome"))
    first, second = (b"".join(sender.seal(b"repeat")) for _ in range(2))
    assert first != second
    assert first[NONCE_LEN:] != second[NONCE_LEN:]
    assert receiver.open(first) == receiver.open(second) == b"repeat"


def test_nonce_sequence_counts_up_under_a_fixed_prefix() -> None:
    sequence = NonceSequence()
    nonces = [sequence.next() for _ in range(5)]
    assert all(len(nonce) == NONCE_LEN for nonce in nonces)
    assert len({nonce[:4] for nonce in nonces}) == 1
    assert [int.from_bytes(nonce[4:], "big") for nonce in nonces] == [0, 1, 2, 3, 4]


def test_nonce_prefixes_are_random() -> None:
    # 32-bit random prefixes: 16 sequences collide with probability ~3e-8.
    prefixes = {NonceSequence().next()[:4] for _ in range(16)}
    assert len(prefixes) == 16


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_keys_have_different_nonce_prefixes(backend: str) -> None:
    key = os.urandom(32)
    prefixes = {AeadKey("aes-gcm", backend, key).seal(b"")[0][:4] for _ in range(8)}
    assert len(prefixes) == 8


# ----------------------------------------------------------------- metadata


@pytest.mark.parametrize(
    ("scheme_id", "params", "label", "bits", "category"),
    [
        ("aes-gcm", {"key_bits": 128}, "AES-128-GCM", 128, 1),
        ("aes-gcm", {"key_bits": 192}, "AES-192-GCM", 192, 3),
        ("aes-gcm", {"key_bits": 256}, "AES-256-GCM", 256, 5),
        ("chacha20-poly1305", {}, "ChaCha20-Poly1305", 256, 5),
    ],
)
@pytest.mark.parametrize("backend", BACKENDS)
def test_scheme_info(
    scheme_id: str, params: dict[str, Any], label: str, bits: int, category: int, backend: str
) -> None:
    info = registry.create(scheme_id, backend, params).info
    assert info.scheme_id == scheme_id
    assert info.family is Family.AEAD
    assert info.backend == backend
    assert dict(info.params) == params
    assert info.label == label
    assert (info.security.classical_bits, info.security.pq_category) == (bits, category)
    assert info.security.pq_category > 0
    assert info.insecure is False
    assert info.authenticated is True
    assert info.max_plaintext is None


def test_default_aes_key_size_is_256() -> None:
    assert registry.create("aes-gcm", "cryptography").info.params == {"key_bits": 256}


def test_symmetric_security_of_nonstandard_size() -> None:
    assert symmetric_security(64).pq_category == 0
    assert symmetric_security(64).classical_bits == 64


def test_overhead_constants() -> None:
    assert (NONCE_LEN, TAG_LEN, AEAD_OVERHEAD) == (12, 16, 28)

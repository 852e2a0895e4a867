"""Hybrid encryption: RSA-KEM, ECIES, ML-KEM and X25519 + ML-KEM-768, per message.

These tests hold the per-message pattern (a fresh encapsulation in every payload); the
session pattern, and what both patterns share across families, are tests/core/schemes/
test_exchange.py's."""

from __future__ import annotations

import itertools
import os
from functools import cache
from typing import Any

import pytest

from app.core.errors import BadParameter
from app.core.schemes import registry
from app.core.schemes.base import AuthenticationError, PayloadFormatError, Receiver, Scheme, Sender, flip_bit
from app.core.schemes.hybrid import SPECS, DhKem, MlKem, RsaKem, X25519MlKem768
from app.core.schemes.symmetric import AEAD_OVERHEAD, NONCE_LEN, TAG_LEN
from app.core.vocab import Exchange, Family

#: The key pairs and sessions below are made once per module (key generation is the slow
#: part); under `make test` the module's tests share one worker, or each worker made them.
pytestmark = pytest.mark.xdist_group("scheme-sessions-hybrid")

REJECTED = (AuthenticationError, PayloadFormatError)
MESSAGE_SIZES = (0, 1, 18, 1000)

#: (scheme id, params) -> encapsulation length on the wire.
ENC_LEN = {
    ("rsa-kem", (("bits", 2048),)): 256,
    ("rsa-kem", (("bits", 3072),)): 384,
    ("rsa-kem", (("bits", 4096),)): 512,
    ("ecies", (("curve", "secp256k1"),)): 65,
    ("ecies", (("curve", "P-256"),)): 65,
    ("ecies", (("curve", "X25519"),)): 32,
    ("ml-kem", (("level", 768),)): 1088,
    ("ml-kem", (("level", 1024),)): 1568,
    ("x25519-ml-kem-768", ()): 1120,
}
#: pycryptodome has no secp256k1: the one combination the specs refuse.
DOCUMENTED_UNAVAILABLE = {("ecies", "pycryptodome", (("curve", "secp256k1"),))}


def enumerate_combos() -> tuple[
    list[tuple[str, str, dict[str, Any]]], set[tuple[str, str, tuple]], list[tuple[str, str, dict[str, Any]]]
]:
    """(allowed combinations, refused set, the subset the session tests run: RSA at 2048)."""
    allowed, refused, tested = [], set(), []
    for spec in SPECS:
        axes = [[(p.name, c) for c in p.choices] for p in spec.params if p.choices]
        for backend in spec.backends:
            for values in itertools.product(*axes):
                params = dict(values)
                try:
                    spec.resolve_params(backend, params)
                except BadParameter:
                    refused.add((spec.scheme_id, backend, tuple(sorted(params.items()))))
                    continue
                allowed.append((spec.scheme_id, backend, params))
                if params.get("bits", 2048) == 2048:
                    tested.append((spec.scheme_id, backend, params))
    return allowed, refused, tested


ALLOWED, REFUSED, COMBOS = enumerate_combos()
COMBO_IDS = [f"{sid}-{backend}-{'-'.join(str(v) for v in params.values())}" for sid, backend, params in COMBOS]


def key_of(scheme_id: str, params: dict[str, Any]) -> tuple[str, tuple]:
    return scheme_id, tuple(sorted(params.items()))


def connect(scheme: Scheme, sender_scheme: Scheme | None = None) -> tuple[Sender, Receiver, bytes]:
    sender, receiver = (sender_scheme or scheme).new_sender(), scheme.new_receiver()
    public = receiver.setup()
    assert sender.handshake(public) == b""
    receiver.handshake(b"")
    return sender, receiver, public


@cache
def session(scheme_id: str, backend: str, params_items: tuple) -> tuple[Scheme, Sender, Receiver, bytes]:
    """One long-term key pair per combination for the whole module (RSA keygen is slow)."""
    scheme = registry.create(scheme_id, backend, dict(params_items), Exchange.PER_MESSAGE)
    return (scheme, *connect(scheme))


def combo_session(scheme_id: str, backend: str, params: dict[str, Any]) -> tuple[Scheme, Sender, Receiver, bytes]:
    return session(scheme_id, backend, tuple(sorted(params.items())))


# ----------------------------------------------------------------- coverage of the specs


def test_refused_combinations_are_exactly_the_documented_ones() -> None:
    assert REFUSED == DOCUMENTED_UNAVAILABLE
    assert len(ALLOWED) == 3 * 2 + (3 + 2) + 2 + 1
    assert {key_of(sid, params) for sid, _, params in ALLOWED} == set(ENC_LEN)
    with pytest.raises(BadParameter) as caught:
        registry.create("ecies", "pycryptodome", {"curve": "secp256k1"})
    assert "secp256k1" in str(caught.value) and "pycryptodome" in str(caught.value)


# ----------------------------------------------------------------- round trips and wire sizes


@pytest.mark.parametrize("size", MESSAGE_SIZES)
@pytest.mark.parametrize(("scheme_id", "backend", "params"), COMBOS, ids=COMBO_IDS)
def test_round_trip_and_wire_size(scheme_id: str, backend: str, params: dict[str, Any], size: int) -> None:
    scheme, sender, receiver, _ = combo_session(scheme_id, backend, params)
    enc_len = ENC_LEN[key_of(scheme_id, params)]
    assert scheme.kem.enc_len == enc_len
    message = os.urandom(size)
    parts = sender.seal(message)
    assert len(parts[0]) == enc_len  # the encapsulation is its own part
    payload = b"".join(parts)
    assert len(payload) == enc_len + NONCE_LEN + size + TAG_LEN
    assert scheme.payload_overhead(size) >= len(payload) - size
    assert scheme.payload_overhead(size) == enc_len + AEAD_OVERHEAD
    assert bytes(receiver.open(payload)) == message
    assert bytes(receiver.open(memoryview(bytearray(payload)))) == message


@pytest.mark.parametrize(("scheme_id", "backend", "params"), COMBOS, ids=COMBO_IDS)
def test_every_message_gets_a_fresh_key(scheme_id: str, backend: str, params: dict[str, Any]) -> None:
    scheme, sender, receiver, _ = combo_session(scheme_id, backend, params)
    enc_len = scheme.kem.enc_len
    first, second = (b"".join(sender.seal(b"same message")) for _ in range(2))
    assert first[:enc_len] != second[:enc_len]
    assert first[enc_len:] != second[enc_len:]
    assert receiver.open(first) == receiver.open(second) == b"same message"
    # Splicing one message's encapsulation onto the other's AEAD part fails: the
    # AEAD key really is the one encapsulated with that message.
    with pytest.raises(AuthenticationError):
        receiver.open(first[:enc_len] + second[enc_len:])


@pytest.mark.parametrize(
    ("receiver_backend", "sender_backend"), [("cryptography", "pycryptodome"), ("pycryptodome", "cryptography")]
)
@pytest.mark.parametrize(
    ("scheme_id", "params"),
    [("rsa-kem", {"bits": 2048}), ("ecies", {"curve": "P-256"}), ("ecies", {"curve": "X25519"})],
)
def test_backends_interoperate(
    scheme_id: str, params: dict[str, Any], receiver_backend: str, sender_backend: str
) -> None:
    _, _, receiver, public = combo_session(scheme_id, receiver_backend, params)
    sender = registry.create(scheme_id, sender_backend, params, Exchange.PER_MESSAGE).new_sender()
    sender.handshake(public)
    message = os.urandom(500)
    assert receiver.open(b"".join(sender.seal(message))) == message


# ----------------------------------------------------------------- rejection


@pytest.mark.parametrize("size", (0, 1000))
@pytest.mark.parametrize(("scheme_id", "backend", "params"), COMBOS, ids=COMBO_IDS)
def test_every_tamper_spot_is_rejected(scheme_id: str, backend: str, params: dict[str, Any], size: int) -> None:
    scheme, sender, receiver, _ = combo_session(scheme_id, backend, params)
    assert scheme.info.authenticated is True
    message = os.urandom(size)
    payload = b"".join(sender.seal(message))
    spots = scheme.tamper_spots(len(payload), size)
    labels = [spot.label for spot in spots]
    assert labels[0] == "encapsulated key"
    assert {"nonce", "tag"} <= set(labels)
    assert ("ciphertext" in labels) == (size > 0)
    enc_len = scheme.kem.enc_len
    for spot in spots:
        if spot.label == "encapsulated key":
            assert 0 <= spot.offset < enc_len
        elif spot.label == "nonce":
            assert spot.offset == enc_len
        with pytest.raises(REJECTED):
            receiver.open(flip_bit(payload, spot.offset))
    assert receiver.open(payload) == message


@pytest.mark.parametrize(("scheme_id", "backend", "params"), COMBOS, ids=COMBO_IDS)
def test_short_payloads_are_format_errors(scheme_id: str, backend: str, params: dict[str, Any]) -> None:
    scheme, sender, receiver, _ = combo_session(scheme_id, backend, params)
    payload = b"".join(sender.seal(b""))
    for bad in (b"", payload[: scheme.kem.enc_len], payload[:-1]):
        with pytest.raises(PayloadFormatError):
            receiver.open(bad)


@pytest.mark.parametrize(
    ("scheme_id", "params"), [("ml-kem", {"level": 768}), ("ml-kem", {"level": 1024}), ("x25519-ml-kem-768", {})]
)
def test_flipped_ml_kem_ciphertext_fails_at_the_tag(scheme_id: str, params: dict[str, Any]) -> None:
    # ML-KEM's implicit rejection returns a pseudorandom key rather than raising, so
    # every bit flip anywhere in its ciphertext surfaces as the AES-GCM tag failure.
    _scheme, sender, receiver, _ = combo_session(scheme_id, "cryptography", params)
    mlkem_len = 1568 if params.get("level") == 1024 else 1088
    payload = b"".join(sender.seal(b"post-quantum"))
    for offset in (0, 1, mlkem_len // 2, mlkem_len - 1):
        with pytest.raises(AuthenticationError):
            receiver.open(flip_bit(payload, offset))


def test_ml_kem_decapsulation_of_a_flipped_ciphertext_gives_another_key() -> None:
    kem = MlKem(768)
    private, public = kem.generate()
    key, enc = kem.encapsulate(kem.load_public(public))
    assert len(key) == 32 and len(enc) == 1088
    assert kem.decapsulate(private, enc) == key
    other = kem.decapsulate(private, flip_bit(enc, 10))  # implicit rejection: no exception
    assert len(other) == 32 and other != key
    with pytest.raises(PayloadFormatError):
        kem.decapsulate(private, enc[:-1])


@pytest.mark.parametrize(("scheme_id", "backend", "params"), COMBOS, ids=COMBO_IDS)
@pytest.mark.parametrize("exchange", Exchange)
def test_sender_rejects_a_malformed_public_key(
    scheme_id: str, backend: str, params: dict[str, Any], exchange: Exchange
) -> None:
    scheme = registry.create(scheme_id, backend, params, exchange)
    _, _, _, public = combo_session(scheme_id, backend, params)
    bad_keys = [b"", public[:-1], public + b"\x00"]
    if scheme_id == "ecies":
        # Low-order / off-curve / identity points, not only bad lengths.
        bad_keys += [bytes(len(public))]
        if params["curve"] == "X25519":
            bad_keys += [b"\x01" + bytes(31)]
        else:
            bad_keys += [b"\x04" + bytes(64), public[:-1] + bytes([public[-1] ^ 1])]
    elif scheme_id == "x25519-ml-kem-768":
        bad_keys += [public[:1184] + bytes(32), public[:1184] + b"\x01" + bytes(31)]
    for bad in bad_keys:
        with pytest.raises(PayloadFormatError):
            scheme.new_sender().handshake(bad)


def test_ml_kem_public_key_modulus_check() -> None:
    # FIPS 203 input check: coefficients encoded as 0xfff are not reduced mod q.
    for exchange in Exchange:
        scheme = registry.create("ml-kem", "cryptography", {"level": 768}, exchange)
        with pytest.raises(PayloadFormatError):
            scheme.new_sender().handshake(b"\xff" * 1184)


# ----------------------------------------------------------------- extra operations


@pytest.mark.parametrize(("scheme_id", "backend", "params"), COMBOS, ids=COMBO_IDS)
def test_extra_operations(scheme_id: str, backend: str, params: dict[str, Any]) -> None:
    scheme, sender, receiver, _ = combo_session(scheme_id, backend, params)
    operations = {op.metric: op for op in scheme.extra_operations(sender, receiver)}
    assert list(operations) == ["encapsulate", "decapsulate"]
    enc_len = scheme.kem.enc_len

    encapsulate = operations["encapsulate"]
    made = encapsulate.make_input()
    result = encapsulate.run(made)
    key, enc = result
    assert len(key) == 32 and len(enc) == enc_len
    assert encapsulate.check(made, result) is None
    wrong = bytes(b ^ 0xFF for b in key)
    problem = encapsulate.check(made, (wrong, enc))
    assert isinstance(problem, str) and problem

    decapsulate = operations["decapsulate"]
    made = decapsulate.make_input()
    output = decapsulate.run(made)
    assert output == made[0]
    assert decapsulate.check(made, output) is None
    problem = decapsulate.check(made, bytes(32))
    assert isinstance(problem, str) and problem
    # Two inputs are two fresh encapsulations.
    assert decapsulate.make_input()[1] != made[1]


# ----------------------------------------------------------------- KEM classes


def test_kem_classes_by_scheme() -> None:
    assert isinstance(combo_session("rsa-kem", "cryptography", {"bits": 2048})[0].kem, RsaKem)
    assert isinstance(combo_session("ecies", "cryptography", {"curve": "P-256"})[0].kem, DhKem)
    assert isinstance(combo_session("ml-kem", "cryptography", {"level": 1024})[0].kem, MlKem)
    assert isinstance(combo_session("x25519-ml-kem-768", "cryptography", {})[0].kem, X25519MlKem768)


def test_hybrid_kem_depends_on_both_secrets() -> None:
    kem = X25519MlKem768()
    private, public = kem.generate()
    loaded = kem.load_public(public)
    key, enc = kem.encapsulate(loaded)
    assert kem.decapsulate(private, enc) == key
    # Another X25519 ephemeral with the same ML-KEM ciphertext gives another key.
    from app.core.schemes.dh import dh_group

    _, other_ephemeral = dh_group("X25519", "cryptography").generate()
    assert kem.decapsulate(private, enc[:1088] + other_ephemeral) != key
    with pytest.raises(PayloadFormatError):
        kem.decapsulate(private, enc[:-1])


def test_rsa_kem_rejects_an_unwrapped_key_of_the_wrong_length() -> None:
    scheme, sender, receiver, _ = combo_session("rsa-kem", "cryptography", {"bits": 2048})
    kem = scheme.kem
    wrapped = kem.cipher.encrypt(sender.public, bytes(16))  # a 16-byte "key"
    with pytest.raises(PayloadFormatError):
        kem.decapsulate(receiver.private, wrapped)


# ----------------------------------------------------------------- metadata


@pytest.mark.parametrize(
    ("scheme_id", "params", "label", "bits", "category"),
    [
        ("rsa-kem", {"bits": 2048}, "RSA-KEM-2048 (OAEP) + AES-256-GCM", 112, 0),
        ("rsa-kem", {"bits": 3072}, "RSA-KEM-3072 (OAEP) + AES-256-GCM", 128, 0),
        ("rsa-kem", {"bits": 4096}, "RSA-KEM-4096 (OAEP) + AES-256-GCM", 152, 0),
        ("ecies", {"curve": "secp256k1"}, "ECIES secp256k1 (HKDF-SHA256) + AES-256-GCM", 128, 0),
        ("ecies", {"curve": "P-256"}, "ECIES P-256 (HKDF-SHA256) + AES-256-GCM", 128, 0),
        ("ecies", {"curve": "X25519"}, "ECIES X25519 (HKDF-SHA256) + AES-256-GCM", 128, 0),
        ("ml-kem", {"level": 768}, "ML-KEM-768 + AES-256-GCM", 192, 3),
        ("ml-kem", {"level": 1024}, "ML-KEM-1024 + AES-256-GCM", 256, 5),
        ("x25519-ml-kem-768", {}, "X25519 + ML-KEM-768 + AES-256-GCM", 192, 3),
    ],
)
def test_scheme_info(scheme_id: str, params: dict[str, Any], label: str, bits: int, category: int) -> None:
    info = registry.create(scheme_id, "cryptography", params, Exchange.PER_MESSAGE).info
    assert info.scheme_id == scheme_id
    assert info.family is Family.HYBRID
    assert info.label == label
    assert (info.security.classical_bits, info.security.pq_category) == (bits, category)
    assert info.insecure is False
    assert info.authenticated is True
    assert info.max_plaintext is None
    assert "a fresh AES-256 key per message" in info.notes
    assert info.exchange is Exchange.PER_MESSAGE


def test_defaults() -> None:
    assert registry.create("rsa-kem", "cryptography").info.params == {"bits": 3072}
    assert registry.create("ecies", "cryptography").info.params == {"curve": "secp256k1"}
    assert registry.create("ml-kem", "cryptography").info.params == {"level": 768}
    assert registry.get_spec("ml-kem").backends == ("cryptography",)

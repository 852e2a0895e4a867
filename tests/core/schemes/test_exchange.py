"""Key establishment, named: both exchange patterns in every key-establishing family.

"session" establishes one key in the handshake (its message is the encapsulation or the
ephemeral key) and seals nonce || ciphertext || tag; "per-message" establishes a fresh
key in every message, whose payload carries its encapsulation. The per-message details
of each KEM are tests/core/schemes/test_hybrid.py's, the key agreements' curves
tests/core/schemes/test_key_agreement.py's.
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any

import pytest

from app.core.errors import BadParameter
from app.core.schemes import registry
from app.core.schemes.base import AuthenticationError, PayloadFormatError, Receiver, Scheme, Sender, flip_bit
from app.core.schemes.establishment import KeyEstablishingScheme
from app.core.schemes.symmetric import AEAD_OVERHEAD
from app.core.vocab import DEFAULT_EXCHANGE, KEY_ESTABLISHING, Exchange, Family

pytestmark = pytest.mark.xdist_group("scheme-sessions-exchange")

#: One cheap parameter set of every key-establishing scheme, on its first backend.
CASES: list[tuple[str, dict[str, Any]]] = [
    ("ecdh", {"curve": "P-256"}),
    ("x25519", {}),
    ("x448", {"kdf": "sha256"}),
    ("rsa-kem", {"bits": 2048}),
    ("ecies", {"curve": "secp256k1"}),
    ("ml-kem", {"level": 768}),
    ("x25519-ml-kem-768", {}),
]
IDS = [scheme_id for scheme_id, _ in CASES]


@cache
def _keys(scheme_id: str) -> tuple[Any, bytes]:
    """One receiver key pair per scheme for the module (an RSA key pair is the slow part)."""
    params = dict(CASES)[scheme_id]
    receiver = registry.create(scheme_id, registry.get_spec(scheme_id).backends[0], params).new_receiver()
    public = receiver.setup()
    return receiver.private, public  # type: ignore[attr-defined]


def connected(scheme_id: str, exchange: Exchange) -> tuple[KeyEstablishingScheme, Sender, Receiver, bytes]:
    """A scheme in `exchange`'s pattern with a completed handshake: (scheme, sender, receiver, handshake)."""
    params = dict(CASES)[scheme_id]
    scheme = registry.create(scheme_id, registry.get_spec(scheme_id).backends[0], params, exchange)
    assert isinstance(scheme, KeyEstablishingScheme)
    private, public = _keys(scheme_id)
    receiver = scheme.new_receiver()
    receiver.private = private  # type: ignore[attr-defined]
    sender = scheme.new_sender()
    message = sender.handshake(public)
    receiver.handshake(message)
    return scheme, sender, receiver, message


def test_every_key_establishing_scheme_is_one_and_no_other() -> None:
    for spec in registry.all_specs():
        scheme = spec.create(spec.backends[0])
        assert isinstance(scheme, KeyEstablishingScheme) == (spec.family in KEY_ESTABLISHING), spec.scheme_id
    assert {scheme_id for scheme_id, _ in CASES} == {
        spec.scheme_id for spec in registry.all_specs() if spec.family in KEY_ESTABLISHING
    }


@pytest.mark.parametrize(("scheme_id", "params"), CASES, ids=IDS)
def test_the_default_is_session_and_the_info_says_the_pattern(scheme_id: str, params: dict[str, Any]) -> None:
    backend = registry.get_spec(scheme_id).backends[0]
    assert DEFAULT_EXCHANGE is Exchange.SESSION
    assert registry.create(scheme_id, backend, params).info.exchange is Exchange.SESSION
    for exchange in Exchange:
        info = registry.create(scheme_id, backend, params, exchange).info
        assert info.exchange is exchange
        said = info.notes[-1]  # the pattern's note comes last
        assert ("per session" in said) == (exchange is Exchange.SESSION), said
        # The label is the algorithm's: the job's label adds the pattern (profile.resolve).
        assert info.label == registry.create(scheme_id, backend, params).info.label


@pytest.mark.parametrize(
    "scheme_id", ["aes-gcm", "chacha20-poly1305", "rsa-oaep", "elgamal", "ed25519", "sha256", "hkdf"]
)
def test_a_scheme_without_key_establishment_refuses_an_exchange(scheme_id: str) -> None:
    spec = registry.get_spec(scheme_id)
    assert spec.family not in KEY_ESTABLISHING
    assert spec.create(spec.backends[0]).info.exchange is None
    for exchange in Exchange:
        with pytest.raises(BadParameter, match="exchange applies to key agreement and hybrid"):
            registry.create(scheme_id, spec.backends[0], None, exchange)


@pytest.mark.parametrize("size", (0, 1024))
@pytest.mark.parametrize(("scheme_id", "params"), CASES, ids=IDS)
def test_session_sends_the_encapsulation_once_then_aead_alone(
    scheme_id: str, params: dict[str, Any], size: int
) -> None:
    scheme, sender, receiver, handshake = connected(scheme_id, Exchange.SESSION)
    assert len(handshake) == scheme.kem.enc_len  # the key establishment travels in the handshake
    message = os.urandom(size)
    first, second = (b"".join(sender.seal(message)) for _ in range(2))
    assert len(first) == len(second) == size + AEAD_OVERHEAD == size + scheme.payload_overhead(size)
    assert bytes(receiver.open(first)) == bytes(receiver.open(second)) == message
    spots = scheme.tamper_spots(len(first), size)
    assert [spot.label for spot in spots] == (["nonce", "ciphertext", "tag"] if size else ["nonce", "tag"])
    for spot in spots:
        with pytest.raises((AuthenticationError, PayloadFormatError)):
            receiver.open(flip_bit(first, spot.offset))


@pytest.mark.parametrize(("scheme_id", "params"), CASES, ids=IDS)
def test_session_keys_differ_between_sessions_and_need_the_handshake(scheme_id: str, params: dict[str, Any]) -> None:
    scheme, sender, receiver, handshake = connected(scheme_id, Exchange.SESSION)
    _, other, _, other_handshake = connected(scheme_id, Exchange.SESSION)
    assert handshake != other_handshake
    with pytest.raises(AuthenticationError):
        receiver.open(b"".join(other.seal(b"another session's key")))
    with pytest.raises(RuntimeError):
        scheme.new_sender().seal(b"before the handshake")
    fresh = scheme.new_receiver()
    fresh.setup()
    with pytest.raises(RuntimeError):
        fresh.open(b"".join(sender.seal(b"before the handshake")))
    with pytest.raises((AuthenticationError, PayloadFormatError)):
        fresh.handshake(b"")  # a session's handshake carries its encapsulation
    with pytest.raises((AuthenticationError, PayloadFormatError)):
        fresh.handshake(handshake[:-1])


@pytest.mark.parametrize(("scheme_id", "params"), CASES, ids=IDS)
def test_per_message_carries_a_fresh_encapsulation_in_every_payload(scheme_id: str, params: dict[str, Any]) -> None:
    scheme, sender, receiver, handshake = connected(scheme_id, Exchange.PER_MESSAGE)
    assert handshake == b""
    enc = scheme.kem.enc_len
    first, second = (b"".join(sender.seal(b"same message")) for _ in range(2))
    assert len(first) == 12 + enc + AEAD_OVERHEAD == 12 + scheme.payload_overhead(12)
    assert first[:enc] != second[:enc]
    assert receiver.open(first) == receiver.open(second) == b"same message"
    with pytest.raises(AuthenticationError):  # another message's key does not open this one
        receiver.open(first[:enc] + second[enc:])
    spots = scheme.tamper_spots(len(first), 12)
    assert spots[0].label == scheme.enc_name and 0 <= spots[0].offset < enc
    with pytest.raises(PayloadFormatError):
        scheme.new_receiver().handshake(b"\x00")  # nothing to finish: the keys come with the messages


@pytest.mark.parametrize(("scheme_id", "params"), CASES, ids=IDS)
def test_the_two_patterns_do_not_open_each_other(scheme_id: str, params: dict[str, Any]) -> None:
    _, session_sender, session_receiver, _ = connected(scheme_id, Exchange.SESSION)
    _, per_message_sender, per_message_receiver, _ = connected(scheme_id, Exchange.PER_MESSAGE)
    with pytest.raises((AuthenticationError, PayloadFormatError)):
        session_receiver.open(b"".join(per_message_sender.seal(b"x" * 64)))
    with pytest.raises((AuthenticationError, PayloadFormatError)):
        per_message_receiver.open(b"".join(session_sender.seal(b"x" * 64)))


@pytest.mark.parametrize("exchange", Exchange)
@pytest.mark.parametrize(("scheme_id", "params"), CASES, ids=IDS)
def test_an_operations_job_times_one_session_establishment_in_either_pattern(
    scheme_id: str, params: dict[str, Any], exchange: Exchange
) -> None:
    scheme, sender, receiver, _ = connected(scheme_id, exchange)
    establisher, finisher = scheme.session_pair()
    finisher.private = receiver.private  # type: ignore[attr-defined]
    finisher.handshake(establisher.handshake(_keys(scheme_id)[1]))
    assert finisher.open(b"".join(establisher.seal(b"probe"))) == b"probe"
    extras = [op.metric for op in scheme.extra_operations(sender, receiver)]
    assert extras == (["encapsulate", "decapsulate"] if scheme.info.family is Family.HYBRID else [])


def test_with_exchange_leaves_the_original_alone() -> None:
    scheme: Scheme = registry.create("x25519", "cryptography")
    other = scheme.with_exchange(Exchange.PER_MESSAGE)
    assert scheme.info.exchange is Exchange.SESSION and other.info.exchange is Exchange.PER_MESSAGE
    assert other.with_exchange(Exchange.SESSION).info == scheme.info

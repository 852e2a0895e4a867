"""Hashes and HKDF: round trips against independent references, rejection, metadata."""

from __future__ import annotations

import hashlib
import hmac
import os

import pytest

from app.core.errors import BadParameter
from app.core.schemes.base import AuthenticationError, MessageTooLongError, PayloadFormatError, SchemeSpec, flip_bit
from app.core.schemes.digests import SPECS
from app.core.vocab import Family, ParamValue
from tests.helpers.schemes import connect

SPEC_BY_ID: dict[str, SchemeSpec] = {spec.scheme_id: spec for spec in SPECS}
BACKENDS = ("cryptography", "pycryptodome")
REJECTED = (AuthenticationError, PayloadFormatError)
MESSAGE_SIZES = (0, 1, 18, 1024)
HKDF_INFO = b"cryptobench hkdf"

HASHES: dict[str, tuple[str, int, int, int]] = {
    # scheme id: (label, digest bytes, classical bits, pq category)
    "sha256": ("SHA-256", 32, 128, 2),
    "sha384": ("SHA-384", 48, 192, 4),
    "sha512": ("SHA-512", 64, 256, 5),
    "sha3-256": ("SHA3-256", 32, 128, 2),
    "sha3-512": ("SHA3-512", 64, 256, 5),
    "blake2b": ("BLAKE2b-512", 64, 256, 5),
}


def reference_digest(hash_id: str, data: bytes) -> bytes:
    """hashlib, independent of both backends."""
    if hash_id == "blake2b":
        return hashlib.blake2b(data, digest_size=64).digest()
    return hashlib.new(hash_id.replace("-", "_"), data).digest()


def reference_hkdf(hash_name: str, ikm: bytes, salt: bytes, info: bytes, length: int) -> bytes:
    """RFC 5869 written out with the standard library's HMAC."""
    prk = hmac.new(salt, ikm, hash_name).digest()
    okm, block, counter = b"", b"", 1
    while len(okm) < length:
        block = hmac.new(prk, block + info + bytes([counter]), hash_name).digest()
        okm += block
        counter += 1
    return okm[:length]


# --------------------------------------------------------------------------- hashes


@pytest.mark.parametrize("size", MESSAGE_SIZES)
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("hash_id", HASHES)
def test_hash_round_trip(hash_id: str, backend: str, size: int) -> None:
    scheme = SPEC_BY_ID[hash_id].create(backend)
    sender, receiver, public = connect(scheme)
    assert public == b""
    message = os.urandom(size)
    parts = sender.seal(message)
    assert len(parts) == 2
    assert parts[0] is message  # not copied
    assert parts[1] == reference_digest(hash_id, message)
    payload = b"".join(parts)
    opened = receiver.open(payload)
    assert isinstance(opened, memoryview)
    assert bytes(opened) == message
    buffer = bytearray(b"\x00" * 3 + payload + b"\xff" * 3)
    assert bytes(receiver.open(memoryview(buffer)[3 : 3 + len(payload)])) == message
    assert len(payload) - size == scheme.payload_overhead(size) == HASHES[hash_id][1]


@pytest.mark.parametrize("hash_id", HASHES)
def test_hash_digests_equal_across_backends(hash_id: str) -> None:
    message = os.urandom(4099)
    digests = {b: SPEC_BY_ID[hash_id].create(b).new_sender().seal(message)[1] for b in BACKENDS}
    assert digests["cryptography"] == digests["pycryptodome"]
    # ...and a payload from one backend opens with the other's receiver.
    for sealer, opener in (BACKENDS, BACKENDS[::-1]):
        payload = b"".join(SPEC_BY_ID[hash_id].create(sealer).new_sender().seal(message))
        assert bytes(SPEC_BY_ID[hash_id].create(opener).new_receiver().open(payload)) == message


@pytest.mark.parametrize("size", (0, 18))
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("hash_id", HASHES)
def test_hash_tamper_spots_are_rejected(hash_id: str, backend: str, size: int) -> None:
    scheme = SPEC_BY_ID[hash_id].create(backend)
    sender, receiver, _ = connect(scheme)
    message = os.urandom(size)
    payload = b"".join(sender.seal(message))
    spots = scheme.tamper_spots(len(payload), size)
    labels = [spot.label for spot in spots]
    assert "digest" in labels and ("message" in labels) == (size > 0)
    for spot in spots:
        offset = spot.offset % len(payload)
        assert (offset < size) == (spot.label == "message"), spot
        with pytest.raises(AuthenticationError):
            receiver.open(flip_bit(payload, spot.offset))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("hash_id", HASHES)
def test_hash_truncation(hash_id: str, backend: str) -> None:
    scheme = SPEC_BY_ID[hash_id].create(backend)
    sender, receiver, _ = connect(scheme)
    digest_size = HASHES[hash_id][1]
    payload = b"".join(sender.seal(b"hello, world"))
    for cut in (0, 1, digest_size - 1):
        with pytest.raises(PayloadFormatError):
            receiver.open(payload[:cut])
    # Long enough to hold a digest, but the wrong one.
    with pytest.raises(AuthenticationError):
        receiver.open(payload[:-1])
    with pytest.raises(AuthenticationError):
        receiver.open(payload[1:])


@pytest.mark.parametrize("backend", BACKENDS)
def test_hash_handshake_messages_must_be_empty(backend: str) -> None:
    scheme = SPEC_BY_ID["sha256"].create(backend)
    with pytest.raises(PayloadFormatError):
        scheme.new_sender().handshake(b"\x00")
    receiver = scheme.new_receiver()
    receiver.setup()
    with pytest.raises(PayloadFormatError):
        receiver.handshake(os.urandom(16))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("hash_id", HASHES)
def test_hash_info(hash_id: str, backend: str) -> None:
    label, _, classical, category = HASHES[hash_id]
    info = SPEC_BY_ID[hash_id].create(backend).info
    assert info.scheme_id == hash_id
    assert info.family is Family.HASH
    assert info.backend == backend
    assert info.label == label
    assert (info.security.classical_bits, info.security.pq_category) == (classical, category)
    assert info.insecure is False
    assert info.authenticated is True
    assert info.fixed_message_size is None and info.max_plaintext is None
    assert any("not authentication" in note or "active attacker" in note for note in info.notes)


def test_hash_specs() -> None:
    hash_specs = [s for s in SPECS if s.family is Family.HASH]
    assert [s.scheme_id for s in hash_specs] == list(HASHES)
    for spec in hash_specs:
        assert spec.backends == BACKENDS
        assert spec.params == ()
        assert spec.resolve_params("pycryptodome", {}) == {}
        with pytest.raises(BadParameter, match="unknown parameter"):
            spec.create("cryptography", {"digest_bits": 256})


# --------------------------------------------------------------------------- HKDF

HKDF_CASES: list[dict[str, ParamValue]] = [
    {"digest": "sha256", "secret_size": 32, "output_length": 32},
    {"digest": "sha384", "secret_size": 48, "output_length": 64},
    {"digest": "sha256", "secret_size": 1, "output_length": 255 * 32},
    {"digest": "sha384", "secret_size": 1024, "output_length": 1},
]


def _hkdf_id(params: dict[str, ParamValue]) -> str:
    return f"{params['digest']}-{params['secret_size']}-{params['output_length']}"


def test_reference_hkdf_matches_rfc5869_case_1() -> None:
    """Check the test's own reference against RFC 5869 A.1 before trusting it."""
    okm = reference_hkdf("sha256", bytes([0x0B] * 22), bytes(range(0x0D)), bytes(range(0xF0, 0xFA)), 42)
    assert okm.hex() == ("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("params", HKDF_CASES, ids=_hkdf_id)
def test_hkdf_round_trip(backend: str, params: dict[str, ParamValue]) -> None:
    scheme = SPEC_BY_ID["hkdf"].create(backend, params)
    sender, receiver, salt = connect(scheme)
    assert len(salt) == 32
    ikm = os.urandom(int(params["secret_size"]))
    parts = sender.seal(ikm)
    assert len(parts) == 2
    assert parts[0] is ikm
    assert parts[1] == reference_hkdf(str(params["digest"]), ikm, salt, HKDF_INFO, int(params["output_length"]))
    payload = b"".join(parts)
    opened = receiver.open(payload)
    assert isinstance(opened, memoryview)
    assert bytes(opened) == ikm
    assert len(payload) - len(ikm) == scheme.payload_overhead(len(ikm)) == params["output_length"]


def test_hkdf_salt_is_fresh_per_receiver() -> None:
    scheme = SPEC_BY_ID["hkdf"].create("cryptography")
    assert scheme.new_receiver().setup() != scheme.new_receiver().setup()


@pytest.mark.parametrize("params", HKDF_CASES[:2], ids=_hkdf_id)
def test_hkdf_equal_across_backends(params: dict[str, ParamValue]) -> None:
    for salt_owner, other in (BACKENDS, BACKENDS[::-1]):
        receiver = SPEC_BY_ID["hkdf"].create(salt_owner, params).new_receiver()
        salt = receiver.setup()
        ikm = os.urandom(int(params["secret_size"]))
        outputs = {}
        for backend in BACKENDS:
            sender = SPEC_BY_ID["hkdf"].create(backend, params).new_sender()
            assert sender.handshake(salt) == b""
            parts = sender.seal(ikm)
            outputs[backend] = parts[1]
            assert bytes(receiver.open(b"".join(parts))) == ikm
        assert outputs[salt_owner] == outputs[other]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("params", HKDF_CASES[:2], ids=_hkdf_id)
def test_hkdf_rejects_tampering_and_bad_lengths(backend: str, params: dict[str, ParamValue]) -> None:
    scheme = SPEC_BY_ID["hkdf"].create(backend, params)
    sender, receiver, _ = connect(scheme)
    secret_size = int(params["secret_size"])
    ikm = os.urandom(secret_size)
    payload = b"".join(sender.seal(ikm))
    spots = scheme.tamper_spots(len(payload), secret_size)
    assert {"derived key", "input secret"} <= {spot.label for spot in spots}
    for spot in spots:
        with pytest.raises(AuthenticationError):
            receiver.open(flip_bit(payload, spot.offset))
    for bad in (b"", payload[:-1], payload[:secret_size], payload + b"\x00"):
        with pytest.raises(PayloadFormatError):
            receiver.open(bad)
    # Another receiver (another salt) must not accept this derivation.
    other = scheme.new_receiver()
    other.setup()
    with pytest.raises(AuthenticationError):
        other.open(payload)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hkdf_rejects_wrong_ikm_length(backend: str) -> None:
    sender, _, _ = connect(SPEC_BY_ID["hkdf"].create(backend, {"secret_size": 32}))
    for size in (0, 31, 33):
        with pytest.raises(MessageTooLongError, match=str(size)):
            sender.seal(bytes(size))


@pytest.mark.parametrize("backend", BACKENDS)
def test_hkdf_rejects_malformed_salt_and_handshake(backend: str) -> None:
    scheme = SPEC_BY_ID["hkdf"].create(backend)
    for salt in (b"", os.urandom(31), os.urandom(33)):
        with pytest.raises(PayloadFormatError):
            scheme.new_sender().handshake(salt)
    receiver = scheme.new_receiver()
    receiver.setup()
    with pytest.raises(PayloadFormatError):
        receiver.handshake(b"\x01")


@pytest.mark.parametrize(
    ("digest", "limit"),
    [("sha256", 255 * 32), ("sha384", 255 * 48)],
)
@pytest.mark.parametrize("backend", BACKENDS)
def test_hkdf_output_length_limit(backend: str, digest: str, limit: int) -> None:
    spec = SPEC_BY_ID["hkdf"]
    assert spec.resolve_params(backend, {"digest": digest, "output_length": limit})["output_length"] == limit
    with pytest.raises(BadParameter, match=str(limit + 1)):
        spec.create(backend, {"digest": digest, "output_length": limit + 1})
    with pytest.raises(BadParameter, match="output_length"):
        spec.create(backend, {"digest": digest, "output_length": 0})


def test_hkdf_params() -> None:
    spec = SPEC_BY_ID["hkdf"]
    assert spec.family is Family.KDF
    assert spec.backends == BACKENDS
    assert spec.resolve_params("cryptography", {}) == {"digest": "sha256", "secret_size": 32, "output_length": 32}
    for bad in ({"secret_size": 0}, {"secret_size": 1025}, {"digest": "sha512"}, {"secret_size": "32"}):
        with pytest.raises(BadParameter):
            spec.create("cryptography", bad)


@pytest.mark.parametrize(
    ("params", "label", "classical", "category", "insecure"),
    [
        ({}, "HKDF-SHA256 (secret 32 B -> 32 B)", 256, 5, False),
        (
            {"digest": "sha384", "secret_size": 48, "output_length": 64},
            "HKDF-SHA384 (secret 48 B -> 64 B)",
            384,
            5,
            False,
        ),
        ({"secret_size": 64, "output_length": 64}, "HKDF-SHA256 (secret 64 B -> 64 B)", 256, 5, False),
        ({"secret_size": 24}, "HKDF-SHA256 (secret 24 B -> 32 B)", 192, 3, False),
        ({"secret_size": 16}, "HKDF-SHA256 (secret 16 B -> 32 B)", 128, 1, False),
        ({"secret_size": 14}, "HKDF-SHA256 (secret 14 B -> 32 B)", 112, 0, False),
        ({"secret_size": 8}, "HKDF-SHA256 (secret 8 B -> 32 B)", 64, 0, True),
        # The derived key is no stronger than its length either.
        ({"output_length": 8}, "HKDF-SHA256 (secret 32 B -> 8 B)", 64, 0, True),
    ],
)
@pytest.mark.parametrize("backend", BACKENDS)
def test_hkdf_info(
    backend: str, params: dict[str, ParamValue], label: str, classical: int, category: int, insecure: bool
) -> None:
    info = SPEC_BY_ID["hkdf"].create(backend, params).info
    resolved = SPEC_BY_ID["hkdf"].resolve_params(backend, params)
    assert info.scheme_id == "hkdf"
    assert info.family is Family.KDF
    assert info.backend == backend
    assert dict(info.params) == resolved
    assert info.label == label
    assert (info.security.classical_bits, info.security.pq_category) == (classical, category)
    assert info.insecure is insecure
    assert info.fixed_message_size == resolved["secret_size"]

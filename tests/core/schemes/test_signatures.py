"""Signature schemes: round trips, rejection, handshake validation, interop, metadata."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, padding, rsa

from app.core.errors import BadParameter, UnknownBackend
from app.core.schemes.base import (
    AuthenticationError,
    PayloadFormatError,
    Receiver,
    Scheme,
    SchemeSpec,
    Sender,
    flip_bit,
)
from app.core.schemes.signatures import SPECS
from app.core.vocab import Family, ParamValue

#: The key pairs and sessions below are made once per module (key generation is the slow
#: part); under `make test` the module's tests share one worker, or each worker made them.
pytestmark = pytest.mark.xdist_group("scheme-sessions-signatures")

SPEC_BY_ID: dict[str, SchemeSpec] = {spec.scheme_id: spec for spec in SPECS}
REJECTED = (AuthenticationError, PayloadFormatError)
MESSAGE_SIZES = (0, 1, 18, 1024)

# The parameter sets under test; RSA stays at 2048 bits to keep key generation fast.
PARAM_SETS: dict[str, list[dict[str, ParamValue]]] = {
    "ecdsa": [{"curve": "P-256"}, {"curve": "P-384"}, {"curve": "P-521"}],
    "ed25519": [{}],
    "ed448": [{}],
    "rsa-pss": [{"bits": 2048}],
    "ml-dsa": [{"level": 44}, {"level": 65}, {"level": 87}],
}

Case = tuple[str, str, tuple[tuple[str, ParamValue], ...]]


def _case_id(case: Case) -> str:
    scheme_id, backend, params = case
    return "-".join([scheme_id, backend, *(str(v) for _, v in params)])


CASES: list[Case] = [
    (scheme_id, backend, tuple(sorted(params.items())))
    for scheme_id, param_sets in PARAM_SETS.items()
    for backend in SPEC_BY_ID[scheme_id].backends
    for params in param_sets
]
BOTH_BACKENDS: list[Case] = [case for case in CASES if case[1] == "cryptography" and case[0] != "ml-dsa"]


@dataclass
class Session:
    """A completed handshake: the signer's key exists and the verifier holds it."""

    scheme: Scheme
    sender: Sender
    receiver: Receiver
    public: bytes  # the handshake message (encoded verification key)


@pytest.fixture(scope="module")
def session_for() -> Callable[[Case], Session]:
    """Generate each key pair once per module: RSA key generation dominates otherwise."""
    cache: dict[Case, Session] = {}

    def get(case: Case) -> Session:
        if case not in cache:
            scheme_id, backend, params = case
            scheme = SPEC_BY_ID[scheme_id].create(backend, dict(params))
            sender, receiver = scheme.new_sender(), scheme.new_receiver()
            public = sender.handshake(receiver.setup())
            receiver.handshake(public)
            cache[case] = Session(scheme, sender, receiver, public)
        return cache[case]

    return get


def _fresh_receiver(case: Case) -> Receiver:
    scheme_id, backend, params = case
    receiver = SPEC_BY_ID[scheme_id].create(backend, dict(params)).new_receiver()
    assert receiver.setup() == b""
    return receiver


def _signature_len(payload: bytes) -> int:
    return int.from_bytes(payload[:2], "big")


# --------------------------------------------------------------------------- round trip


@pytest.mark.parametrize("size", MESSAGE_SIZES)
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_round_trip(session_for: Callable[[Case], Session], case: Case, size: int) -> None:
    session = session_for(case)
    message = os.urandom(size)
    parts = session.sender.seal(message)
    assert len(parts) == 3
    assert parts[2] is message  # the message part is not copied
    assert _signature_len(parts[0]) == len(parts[1])
    payload = b"".join(parts)
    opened = session.receiver.open(payload)
    assert isinstance(opened, memoryview)
    assert bytes(opened) == message
    # Also from a memoryview into a larger receive buffer, as the wire layer passes it.
    buffer = bytearray(b"\xaa" * 5 + payload + b"\xbb" * 7)
    assert bytes(session.receiver.open(memoryview(buffer)[5 : 5 + len(payload)])) == message
    assert len(payload) - size <= session.scheme.payload_overhead(size)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_signature_is_over_the_message(session_for: Callable[[Case], Session], case: Case) -> None:
    """A valid signature of one message must not verify another one."""
    session = session_for(case)
    first = b"".join(session.sender.seal(b"message one"))
    swapped = first[: len(first) - len(b"message one")] + b"message two"
    with pytest.raises(AuthenticationError):
        session.receiver.open(swapped)


# --------------------------------------------------------------------------- rejection


@pytest.mark.parametrize("size", (0, 18))
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_every_tamper_spot_is_rejected(session_for: Callable[[Case], Session], case: Case, size: int) -> None:
    session = session_for(case)
    message = os.urandom(size)
    payload = b"".join(session.sender.seal(message))
    assert bytes(session.receiver.open(payload)) == message
    signature_len = _signature_len(payload)
    spots = session.scheme.tamper_spots(len(payload), size)
    labels = {spot.label for spot in spots}
    assert {"signature", "signature end"} <= labels
    assert ("message" in labels) == (size > 0)
    for spot in spots:
        offset = spot.offset % len(payload)
        if spot.label.startswith("signature") and spot.label != "signature length":
            assert 2 <= offset < 2 + signature_len, spot
        if spot.label == "message":
            assert offset >= 2 + signature_len, spot
        with pytest.raises(REJECTED):
            session.receiver.open(flip_bit(payload, spot.offset))


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_truncated_payload_is_a_format_error(session_for: Callable[[Case], Session], case: Case) -> None:
    session = session_for(case)
    payload = b"".join(session.sender.seal(b"sixteen byte msg"))
    signature_len = _signature_len(payload)
    for cut in (0, 1, 2, 2 + signature_len // 2, 2 + signature_len - 1):
        with pytest.raises(PayloadFormatError):
            session.receiver.open(payload[:cut])
    # Cutting into the message keeps the framing intact: that is a forgery, not a format error.
    with pytest.raises(AuthenticationError):
        session.receiver.open(payload[:-1])


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_signature_length_above_maximum_is_a_format_error(session_for: Callable[[Case], Session], case: Case) -> None:
    session = session_for(case)
    too_long = session.scheme.payload_overhead(0) - 2 + 1
    payload = too_long.to_bytes(2, "big") + bytes(too_long + 10)
    with pytest.raises(PayloadFormatError):
        session.receiver.open(payload)


# --------------------------------------------------------------------------- handshake


def _off_curve_points(curve: ec.EllipticCurve, valid: bytes) -> list[bytes]:
    size = (len(valid) - 1) // 2
    x, y = valid[1 : 1 + size], int.from_bytes(valid[1 + size :], "big")
    return [
        # (1, 1) is on y^2 = x^3 - 3x + b only if b = 3, which no NIST curve has.
        b"\x04" + (1).to_bytes(size, "big") + (1).to_bytes(size, "big"),
        # (x, y + 1): on the curve only if 2y + 1 = 0 mod p.
        b"\x04" + x + (y + 1).to_bytes(size + 1, "big")[-size:],
        # Random coordinates: on the curve with probability ~2^-bits.
        b"\x04" + os.urandom(2 * size),
    ]


def _other_key_encodings(case: Case, public: bytes) -> list[bytes]:
    """Well-formed keys of the wrong kind or size, and invalid keys of the right size."""
    scheme_id, _, params = case
    if scheme_id == "ecdsa":
        curve = {"P-256": ec.SECP256R1(), "P-384": ec.SECP384R1(), "P-521": ec.SECP521R1()}[str(dict(params)["curve"])]
        compressed = ec.EllipticCurvePublicKey.from_encoded_point(curve, public).public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.CompressedPoint
        )
        # Hybrid form (0x06 / 0x07 prefix): right length, not the encoding the sender uses.
        hybrid = [bytes([prefix]) + public[1:] for prefix in (0x06, 0x07)]
        return [*_off_curve_points(curve, public), compressed, *hybrid, b"\x00"]
    if scheme_id == "rsa-pss":
        small = rsa.generate_private_key(public_exponent=65537, key_size=1024).public_key()
        ec_key = ec.generate_private_key(ec.SECP256R1()).public_key()
        spki = (serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        return [small.public_bytes(*spki), ec_key.public_bytes(*spki), os.urandom(len(public))]
    if scheme_id == "ed25519":
        return [ed448.Ed448PrivateKey.generate().public_key().public_bytes_raw()]
    if scheme_id == "ed448":
        return [ed25519.Ed25519PrivateKey.generate().public_key().public_bytes_raw()]
    if scheme_id == "ml-dsa":
        from cryptography.hazmat.primitives.asymmetric import mldsa

        other = 44 if dict(params)["level"] != 44 else 87
        return [getattr(mldsa, f"MLDSA{other}PrivateKey").generate().public_key().public_bytes_raw()]
    raise AssertionError(scheme_id)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_malformed_verification_key_is_rejected(session_for: Callable[[Case], Session], case: Case) -> None:
    public = session_for(case).public
    malformed = [b"", public[:-1], public + b"\x00", os.urandom(len(public) + 7), *_other_key_encodings(case, public)]
    for message in malformed:
        with pytest.raises(PayloadFormatError):
            _fresh_receiver(case).handshake(message)
    _fresh_receiver(case).handshake(public)  # the genuine key still imports


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_sender_rejects_published_material(case: Case) -> None:
    scheme_id, backend, params = case
    sender = SPEC_BY_ID[scheme_id].create(backend, dict(params)).new_sender()
    with pytest.raises(PayloadFormatError):
        sender.handshake(b"\x01")


def test_use_before_handshake_is_an_error() -> None:
    scheme = SPEC_BY_ID["ed25519"].create("cryptography")
    with pytest.raises(RuntimeError):
        scheme.new_sender().seal(b"x")
    with pytest.raises(RuntimeError):
        scheme.new_receiver().open(bytes(2 + 64))


# --------------------------------------------------------------------------- interop


@pytest.mark.parametrize("size", (0, 18, 1024))
@pytest.mark.parametrize("case", BOTH_BACKENDS, ids=_case_id)
def test_cross_backend_interop(session_for: Callable[[Case], Session], case: Case, size: int) -> None:
    scheme_id, _, params = case
    for signer, verifier in (("cryptography", "pycryptodome"), ("pycryptodome", "cryptography")):
        session = session_for((scheme_id, signer, params))
        receiver = _fresh_receiver((scheme_id, verifier, params))
        receiver.handshake(session.public)
        message = os.urandom(size)
        payload = b"".join(session.sender.seal(message))
        assert bytes(receiver.open(payload)) == message
        with pytest.raises(REJECTED):
            receiver.open(flip_bit(payload, -1 if size else 2 + _signature_len(payload) // 2))


_ECDSA_HASH: Mapping[str, hashes.HashAlgorithm] = {
    "P-256": hashes.SHA256(),
    "P-384": hashes.SHA384(),
    "P-521": hashes.SHA512(),
}
_ECDSA_CURVE: Mapping[str, ec.EllipticCurve] = {
    "P-256": ec.SECP256R1(),
    "P-384": ec.SECP384R1(),
    "P-521": ec.SECP521R1(),
}


def _verify_independently(case: Case, public: bytes, signature: bytes, message: bytes) -> None:
    """Check a signature with cryptography's raw API, not through the adapters."""
    scheme_id, _, params = case
    key: Any
    if scheme_id == "ecdsa":
        curve = str(dict(params)["curve"])
        key = ec.EllipticCurvePublicKey.from_encoded_point(_ECDSA_CURVE[curve], public)
        key.verify(signature, message, ec.ECDSA(_ECDSA_HASH[curve]))
    elif scheme_id == "rsa-pss":
        key = serialization.load_der_public_key(public)
        assert isinstance(key, rsa.RSAPublicKey) and key.public_numbers().e == 65537
        key.verify(signature, message, padding.PSS(padding.MGF1(hashes.SHA256()), salt_length=32), hashes.SHA256())
    elif scheme_id == "ed25519":
        ed25519.Ed25519PublicKey.from_public_bytes(public).verify(signature, message)
    elif scheme_id == "ed448":
        ed448.Ed448PublicKey.from_public_bytes(public).verify(signature, message)
    else:
        from cryptography.hazmat.primitives.asymmetric import mldsa

        level = dict(params)["level"]
        getattr(mldsa, f"MLDSA{level}PublicKey").from_public_bytes(public).verify(signature, message)


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_signature_verifies_with_the_declared_algorithm(session_for: Callable[[Case], Session], case: Case) -> None:
    """The digest tied to the curve, PSS salt = 32 and the key encodings are what the label says."""
    session = session_for(case)
    message = b"independent check"
    _, signature, _ = session.sender.seal(message)
    _verify_independently(case, session.public, signature, message)
    with pytest.raises(InvalidSignature):
        _verify_independently(case, session.public, signature, message + b"!")


# --------------------------------------------------------------------------- metadata


EXPECTED_INFO: list[tuple[str, dict[str, ParamValue], str, int, int]] = [
    # (scheme id, params, label, classical bits, pq category)
    ("ecdsa", {"curve": "P-256"}, "ECDSA P-256 / SHA-256", 128, 0),
    ("ecdsa", {"curve": "P-384"}, "ECDSA P-384 / SHA-384", 192, 0),
    ("ecdsa", {"curve": "P-521"}, "ECDSA P-521 / SHA-512", 256, 0),
    ("ed25519", {}, "Ed25519", 128, 0),
    ("ed448", {}, "Ed448", 224, 0),
    ("rsa-pss", {"bits": 2048}, "RSA-PSS 2048 / SHA-256", 112, 0),
    ("rsa-pss", {"bits": 3072}, "RSA-PSS 3072 / SHA-256", 128, 0),
    ("rsa-pss", {"bits": 4096}, "RSA-PSS 4096 / SHA-256", 152, 0),
    ("ml-dsa", {"level": 44}, "ML-DSA-44", 128, 2),
    ("ml-dsa", {"level": 65}, "ML-DSA-65", 192, 3),
    ("ml-dsa", {"level": 87}, "ML-DSA-87", 256, 5),
]


@pytest.mark.parametrize(
    ("scheme_id", "backend", "params", "label", "classical", "category"),
    [
        (scheme_id, backend, params, label, classical, category)
        for scheme_id, params, label, classical, category in EXPECTED_INFO
        for backend in SPEC_BY_ID[scheme_id].backends
    ],
)
def test_scheme_info(
    scheme_id: str, backend: str, params: dict[str, ParamValue], label: str, classical: int, category: int
) -> None:
    info = SPEC_BY_ID[scheme_id].create(backend, params).info  # no key generation here
    assert info.scheme_id == scheme_id
    assert info.family is Family.SIGNATURE
    assert info.backend == backend
    assert dict(info.params) == params
    assert info.label == label
    assert (info.security.classical_bits, info.security.pq_category) == (classical, category)
    assert info.insecure is False
    assert info.authenticated is True
    assert info.max_plaintext is None and info.fixed_message_size is None


def test_specs_declare_ids_params_and_backends() -> None:
    assert [s.scheme_id for s in SPECS] == ["ecdsa", "ed25519", "ed448", "rsa-pss", "ml-dsa"]
    assert all(s.family is Family.SIGNATURE for s in SPECS)
    assert SPEC_BY_ID["ml-dsa"].backends == ("cryptography",)
    for scheme_id in ("ecdsa", "ed25519", "ed448", "rsa-pss"):
        assert SPEC_BY_ID[scheme_id].backends == ("cryptography", "pycryptodome")
    assert SPEC_BY_ID["ecdsa"].resolve_params("cryptography", {}) == {"curve": "P-256"}
    assert SPEC_BY_ID["rsa-pss"].resolve_params("pycryptodome", {}) == {"bits": 3072}
    assert SPEC_BY_ID["ml-dsa"].resolve_params("cryptography", {}) == {"level": 65}
    assert SPEC_BY_ID["ed448"].resolve_params("cryptography", {}) == {}
    with pytest.raises(BadParameter, match="curve"):
        SPEC_BY_ID["ecdsa"].create("cryptography", {"curve": "P-192"})
    with pytest.raises(BadParameter, match="bits"):
        SPEC_BY_ID["rsa-pss"].create("cryptography", {"bits": 1024})
    with pytest.raises(UnknownBackend, match="pycryptodome"):
        SPEC_BY_ID["ml-dsa"].create("pycryptodome")


# --------------------------------------------------------------------------- sizes


FIXED_SIGNATURE_SIZES: dict[str, int] = {
    "ml-dsa-cryptography-44": 2420,
    "ml-dsa-cryptography-65": 3309,
    "ml-dsa-cryptography-87": 4627,
    "ed25519-cryptography": 64,
    "ed25519-pycryptodome": 64,
    "ed448-cryptography": 114,
    "ed448-pycryptodome": 114,
    "rsa-pss-cryptography-2048": 256,
    "rsa-pss-pycryptodome-2048": 256,
}


@pytest.mark.parametrize("case", [c for c in CASES if _case_id(c) in FIXED_SIGNATURE_SIZES], ids=_case_id)
def test_fixed_signature_sizes(session_for: Callable[[Case], Session], case: Case) -> None:
    session = session_for(case)
    expected = FIXED_SIGNATURE_SIZES[_case_id(case)]
    for size in (0, 100):
        payload = b"".join(session.sender.seal(bytes(size)))
        assert _signature_len(payload) == expected
        assert len(payload) == 2 + expected + size
    # For fixed-size signatures the bound is exact.
    assert session.scheme.payload_overhead(100) == 2 + expected


@pytest.mark.parametrize(("curve", "max_der"), [("P-256", 72), ("P-384", 104), ("P-521", 139)])
def test_ecdsa_overhead_bounds_der(curve: str, max_der: int) -> None:
    """Largest DER (r, s): two INTEGERs of bits//8 + 1 bytes plus tags and lengths."""
    scheme = SPEC_BY_ID["ecdsa"].create("cryptography", {"curve": curve})
    assert scheme.payload_overhead(0) == 2 + max_der


@pytest.mark.parametrize(
    ("case", "public_len"),
    [
        (("ecdsa", "pycryptodome", (("curve", "P-256"),)), 65),
        (("ecdsa", "cryptography", (("curve", "P-521"),)), 133),
        (("ed25519", "pycryptodome", ()), 32),
        (("ed448", "cryptography", ()), 57),
        (("ml-dsa", "cryptography", (("level", 44),)), 1312),
        (("ml-dsa", "cryptography", (("level", 87),)), 2592),
    ],
)
def test_verification_key_encoding_sizes(session_for: Callable[[Case], Session], case: Case, public_len: int) -> None:
    public = session_for(case).public
    assert len(public) == public_len
    if case[0] == "ecdsa":
        assert public[0] == 0x04  # uncompressed SEC1


# --- the self-test's known-answer door ------------------------------------------------


@pytest.mark.parametrize("backend", ["cryptography", "pycryptodome"])
def test_known_answer_sender_signs_with_the_given_key_and_new_sender_never_does(backend: str) -> None:
    from Crypto.Signature import eddsa

    from app.core.schemes import registry
    from app.core.schemes.signatures import SignatureScheme

    secret = bytes(range(32))
    key = (
        ed25519.Ed25519PrivateKey.from_private_bytes(secret)
        if backend == "cryptography"
        else eddsa.import_private_key(secret)
    )
    public = ed25519.Ed25519PrivateKey.from_private_bytes(secret).public_key().public_bytes_raw()
    scheme = registry.create("ed25519", backend)
    assert isinstance(scheme, SignatureScheme)
    first, second = scheme.known_answer_sender(key), scheme.known_answer_sender(key)
    assert first.handshake(b"") == second.handshake(b"") == public
    assert first.seal(b"m") == second.seal(b"m")  # Ed25519 is deterministic: same key, same signature
    assert scheme.new_sender().handshake(b"") != public  # a job's sender always makes a fresh key

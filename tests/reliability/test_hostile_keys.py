"""A signer that sends a weak or invalid verification key is refused, by both backends alike.

The class: every encoding of a verification key a peer can send that is not a sound
key of the job's algorithm: the identity, points of small order, non-canonical and
off-curve encodings, wrong lengths, RSA keys with a weak modulus or exponent. Each
must be refused by `Receiver.handshake` with `PayloadFormatError` before any
signature is verified, in every backend; and a session whose signer sends one fails
with the reason. Where a library alone is lenient, the test first proves it: it
forges a signature the bare library verifies, then shows the adapter refuses the key.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from Crypto.Hash import SHA256
from Crypto.PublicKey import ECC, RSA
from Crypto.Signature import DSS, eddsa
from Crypto.Util.asn1 import DerSequence
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed448, ed25519, rsa

from app.core.schemes import registry, sigkeys, signatures
from app.core.schemes.base import Payload, PayloadFormatError, Receiver, Scheme, Sender
from app.core.session.receiver import ReceiverSession
from app.core.session.sender import SenderSession, SessionFailed
from tests.helpers.plans import job_plan

BACKENDS = ("cryptography", "pycryptodome")

# --------------------------------------------------------------------------- Edwards arithmetic
# Plain affine formulas, only to re-derive which encodings are of small order.


def _decode(curve: str, encoded: bytes) -> tuple[int, int] | None:
    """RFC 8032 point decoding (5.1.3 / 5.2.3); None when the encoding is not a point."""
    c = sigkeys.EDWARDS[curve]
    p, bits = c.p, 8 * c.key_bytes
    number = int.from_bytes(encoded, "little")
    sign, y = number >> (bits - 1), number & ((1 << (bits - 1)) - 1)
    if y >= p:
        return None
    x2 = (y * y - 1) * pow(c.d * y * y - c.a, -1, p) % p
    if p % 8 == 5:  # Ed25519
        x = pow(x2, (p + 3) // 8, p)
        if x * x % p != x2:
            x = x * pow(2, (p - 1) // 4, p) % p
    else:  # Ed448, p = 3 mod 4
        x = pow(x2, (p + 1) // 4, p)
    if x * x % p != x2 or (x == 0 and sign):
        return None
    if x % 2 != sign:
        x = p - x
    return x, y


def _add(curve: str, one: tuple[int, int], two: tuple[int, int]) -> tuple[int, int]:
    c = sigkeys.EDWARDS[curve]
    p = c.p
    (x1, y1), (x2, y2) = one, two
    t = c.d * x1 * x2 * y1 * y2 % p
    return ((x1 * y2 + y1 * x2) * pow(1 + t, -1, p) % p, (y1 * y2 - c.a * x1 * x2) * pow(1 - t, -1, p) % p)


def _order_divides(curve: str, point: tuple[int, int], k: int) -> bool:
    result, base = (0, 1), point
    while k:
        if k & 1:
            result = _add(curve, result, base)
        base, k = _add(curve, base, base), k >> 1
    return result == (0, 1)


def _encode(curve: str, y: int, sign: int) -> bytes:
    bits = 8 * sigkeys.EDWARDS[curve].key_bytes
    return (y | sign << (bits - 1)).to_bytes(bits // 8, "little")


COFACTOR = {"Ed25519": 8, "Ed448": 4}
SMALL_ORDER_COUNT = {"Ed25519": 8, "Ed448": 4}


def _small_order_keys(curve: str) -> list[bytes]:
    """Every canonical encoding of a point of small order (8 for Ed25519, 4 for Ed448)."""
    keys = []
    for y in sorted(sigkeys.EDWARDS[curve].small_order_y):
        for sign in (0, 1):
            encoded = _encode(curve, y, sign)
            if _decode(curve, encoded) is not None:
                keys.append(encoded)
    return keys


def _off_curve_key(curve: str) -> bytes:
    """The encoding of the smallest y that has no x on the curve."""
    y = 2
    while _decode(curve, _encode(curve, y, 0)) is not None:
        y += 1
    return _encode(curve, y, 0)


@pytest.mark.parametrize("curve", ["Ed25519", "Ed448"])
def test_the_small_order_list_is_exactly_the_points_of_small_order(curve: str) -> None:
    keys = _small_order_keys(curve)
    assert len(keys) == SMALL_ORDER_COUNT[curve]
    for key in keys:
        point = _decode(curve, key)
        assert point is not None and _order_divides(curve, point, COFACTOR[curve])
    # and a genuine public key is not among them: its order is the large prime.
    genuine = (ed25519.Ed25519PrivateKey if curve == "Ed25519" else ed448.Ed448PrivateKey).generate()
    point = _decode(curve, genuine.public_key().public_bytes_raw())
    assert point is not None and not _order_divides(curve, point, COFACTOR[curve])


# --------------------------------------------------------------------------- the hostile keys


def _eddsa_hostile(curve: str) -> list[tuple[str, bytes]]:
    c = sigkeys.EDWARDS[curve]
    size = c.key_bytes
    keys = [(f"small order #{i}", key) for i, key in enumerate(_small_order_keys(curve))]
    keys += [
        ("non-canonical y = p (0)", _encode(curve, c.p, 0)),
        ("non-canonical y = p + 1 (identity)", _encode(curve, c.p + 1, 0)),
        ("identity with the sign bit set", _encode(curve, 1, 1)),
        ("y = -1 with the sign bit set", _encode(curve, c.p - 1, 1)),
        ("all ones", b"\xff" * size),
        ("not on the curve", _off_curve_key(curve)),
        ("one byte short", bytes(size - 1)),
        ("one byte long", _encode(curve, 1, 0) + b"\x00"),
        ("empty", b""),
    ]
    return keys


_FIELD = {
    "P-256": 2**256 - 2**224 + 2**192 + 2**96 - 1,
    "P-384": 2**384 - 2**128 - 2**96 + 2**32 - 1,
    "P-521": 2**521 - 1,
}


def _ecdsa_hostile(curve: str) -> list[tuple[str, bytes]]:
    p = _FIELD[curve]
    size = (p.bit_length() + 7) // 8
    genuine = ECC.generate(curve=curve).pointQ
    x, y = int(genuine.x), int(genuine.y)

    def point(px: int, py: int) -> bytes:
        return b"\x04" + px.to_bytes(size, "big") + py.to_bytes(size, "big")

    return [
        ("identity 04||00..00", point(0, 0)),
        ("identity as the single byte 00", b"\x00"),
        ("not on the curve", point(x, (y + 1) % p)),
        ("x = p (out of range)", point(p, y)),
        ("y = p (out of range)", point(x, p)),
        ("compressed form", (b"\x02" if y % 2 == 0 else b"\x03") + x.to_bytes(size, "big")),
        ("one byte short", point(x, y)[:-1]),
        ("empty", b""),
    ]


def _rsa_der(n: int, e: int) -> bytes:
    der: bytes = RSA.construct((n, e), consistency_check=False).export_key(format="DER")
    return der


def _odd_multiple_of_3(n: int) -> int:
    """An odd multiple of 3 just below n (same bit length): a modulus with a tiny factor."""
    m = n - n % 3
    return m if m % 2 else m - 3


def _rsa_hostile(bits: int) -> list[tuple[str, bytes]]:
    # OpenSSL's key generation: these cases are built while collecting, in every pytest
    # worker, and pycryptodome's constant-time one took 0.5-1 s a worker at 2048 bits.
    key = rsa.generate_private_key(65537, bits)
    n = key.public_key().public_numbers().n
    return [
        ("e = 1", _rsa_der(n, 1)),
        ("e = 3 (below 2^16)", _rsa_der(n, 3)),
        ("even e", _rsa_der(n, 65536 + 2)),
        ("e = 2^256 + 1", _rsa_der(n, 2**256 + 1)),
        ("even modulus", _rsa_der(n - 1, 65537)),
        ("modulus divisible by 3", _rsa_der(_odd_multiple_of_3(n), 65537)),
        ("512-bit modulus", _rsa_der(n >> 1536 | 1, 65537)),
        (
            "a private key",
            key.private_bytes(
                serialization.Encoding.DER,
                serialization.PrivateFormat.TraditionalOpenSSL,  # PKCS#1 RSAPrivateKey
                serialization.NoEncryption(),
            ),
        ),
        ("truncated DER", _rsa_der(n, 65537)[:-1]),
        ("an EC key", ECC.generate(curve="P-256").public_key().export_key(format="DER")),
        ("empty", b""),
    ]


def _cases() -> Iterator[Any]:
    for curve in ("Ed25519", "Ed448"):
        for label, key in _eddsa_hostile(curve):
            yield pytest.param(curve.lower(), {}, key, id=f"{curve}-{label}")
    for curve in ("P-256", "P-384", "P-521"):
        for label, key in _ecdsa_hostile(curve):
            yield pytest.param("ecdsa", {"curve": curve}, key, id=f"ECDSA {curve}-{label}")
    for label, key in _rsa_hostile(2048):
        yield pytest.param("rsa-pss", {"bits": 2048}, key, id=f"RSA-2048-{label}")


HOSTILE = list(_cases())


@pytest.mark.parametrize(("scheme_id", "params", "key"), HOSTILE)
def test_every_backend_refuses_the_hostile_key_with_the_same_error(
    scheme_id: str, params: dict[str, Any], key: bytes
) -> None:
    for backend in BACKENDS:
        receiver = registry.create(scheme_id, backend, params).new_receiver()
        receiver.setup()
        with pytest.raises(PayloadFormatError, match="verification key") as caught:
            receiver.handshake(key)
        assert "\n" not in str(caught.value)


@pytest.mark.parametrize("curve", ["Ed25519", "Ed448"])
def test_the_shared_rules_give_both_backends_the_same_reason(curve: str) -> None:
    """Where the rule is ours (not a library's parser), the reason reads the same in both."""
    for label, key in _eddsa_hostile(curve):
        reasons = set()
        for backend in BACKENDS:
            receiver = registry.create(curve.lower(), backend).new_receiver()
            try:
                receiver.handshake(key)
            except PayloadFormatError as exc:
                reasons.add(str(exc))
        if label != "not on the curve":  # pycryptodome's own import refuses that one
            assert len(reasons) == 1, (label, reasons)


@pytest.mark.parametrize("level", [44, 65, 87])
@pytest.mark.parametrize("delta", [-1, 1, None])
def test_ml_dsa_refuses_a_key_of_the_wrong_length(level: int, delta: int | None) -> None:
    size = {44: 1312, 65: 1952, 87: 2592}[level]
    key = b"" if delta is None else bytes(size + delta)
    receiver = registry.create("ml-dsa", "cryptography", {"level": level}).new_receiver()
    with pytest.raises(PayloadFormatError, match=f"ML-DSA-{level} verification key"):
        receiver.handshake(key)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("scheme_id", "params"),
    [("ed25519", {}), ("ed448", {}), ("ecdsa", {"curve": "P-521"}), ("rsa-pss", {"bits": 2048})],
)
def test_a_genuine_key_still_verifies(backend: str, scheme_id: str, params: dict[str, Any]) -> None:
    scheme = registry.create(scheme_id, backend, params)
    sender, receiver = scheme.new_sender(), scheme.new_receiver()
    receiver.handshake(sender.handshake(receiver.setup()))
    assert bytes(receiver.open(b"".join(sender.seal(b"genuine")))) == b"genuine"


# --------------------------------------------------------------------------- forgeries


def _eddsa_forgery(curve: str) -> tuple[bytes, bytes]:
    """Identity key A and the signature (R = identity, S = 0): [S]B = R + [k]A for any message."""
    identity = _encode(curve, 1, 0)
    size = sigkeys.EDWARDS[curve].key_bytes
    return identity, identity + bytes(size)


_P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def _ecdsa_identity_forgery(message: bytes) -> tuple[bytes, bytes]:
    """With Q = identity, u1*G + u2*Q = (e/s)*G: s = 1 and r = x(e*G) verify."""
    e = int.from_bytes(SHA256.new(message).digest(), "big") % _P256_ORDER
    r = int(ECC.construct(curve="P-256", d=e).pointQ.x) % _P256_ORDER
    return b"\x04" + bytes(64), DerSequence([r, 1]).encode()


def _lenient_library_verifies(scheme_id: str, backend: str, key: bytes, signature: bytes, message: bytes) -> bool:
    """Whether the bare library (no app checks) imports the key and verifies the signature."""
    try:
        if scheme_id == "ecdsa":
            DSS.new(ECC.import_key(key, curve_name="P-256"), "fips-186-3", encoding="der").verify(
                SHA256.new(message), signature
            )
        elif backend == "pycryptodome":
            eddsa.new(eddsa.import_public_key(key), "rfc8032").verify(message, signature)
        else:
            public_class = ed25519.Ed25519PublicKey if scheme_id == "ed25519" else ed448.Ed448PublicKey
            public_class.from_public_bytes(key).verify(signature, message)
    except Exception:  # noqa: BLE001 - any refusal means "not lenient"
        return False
    return True


MESSAGE = b"transfer 1000 to Mallory"
#: (scheme, backend) pairs whose bare library verifies a forgery under a hostile key.
LENIENT = [
    ("ed25519", "cryptography"),
    ("ed25519", "pycryptodome"),
    ("ed448", "pycryptodome"),
    ("ecdsa", "pycryptodome"),
]


def _forgery(scheme_id: str, message: bytes) -> tuple[bytes, bytes]:
    if scheme_id == "ecdsa":
        return _ecdsa_identity_forgery(message)
    return _eddsa_forgery("Ed25519" if scheme_id == "ed25519" else "Ed448")


@pytest.mark.parametrize(("scheme_id", "backend"), LENIENT)
def test_a_forgery_the_bare_library_verifies_is_refused_at_the_key(scheme_id: str, backend: str) -> None:
    key, signature = _forgery(scheme_id, MESSAGE)
    assert _lenient_library_verifies(scheme_id, backend, key, signature, MESSAGE)  # the attack is real

    params = {"curve": "P-256"} if scheme_id == "ecdsa" else {}
    receiver = registry.create(scheme_id, backend, params).new_receiver()
    with pytest.raises(PayloadFormatError, match="verification key"):
        receiver.handshake(key)


# --------------------------------------------------------------------------- through a session


class _ForgingSender(Sender):
    """A signer that sends a hostile key and signs nothing: every signature is forged."""

    def __init__(self, scheme_id: str) -> None:
        self.scheme_id = scheme_id

    def handshake(self, public: bytes) -> bytes:
        return _forgery(self.scheme_id, b"")[0]

    def seal(self, plaintext: bytes) -> Payload:
        signature = _forgery(self.scheme_id, bytes(plaintext))[1]
        return (len(signature).to_bytes(2, "big"), signature, plaintext)


class _ForgingScheme(Scheme):
    def __init__(self, inner: Scheme) -> None:
        self.inner, self.info = inner, inner.info

    def new_receiver(self) -> Receiver:
        return self.inner.new_receiver()

    def new_sender(self) -> Sender:
        return _ForgingSender(self.info.scheme_id)

    def payload_overhead(self, plaintext_len: int) -> int:
        return self.inner.payload_overhead(plaintext_len)


def _forged_session(monkeypatch: pytest.MonkeyPatch, scheme_id: str, backend: str) -> list[Any]:
    """Run one session (receiver in a thread) with a forging signer; return the sender's events."""
    real_create = registry.create
    monkeypatch.setattr(registry, "create", lambda *a, **k: _ForgingScheme(real_create(*a, **k)))
    token = os.urandom(32)
    left, right = socket.socketpair()
    params = {"curve": "P-256"} if scheme_id == "ecdsa" else {}

    def serve() -> None:
        try:
            ReceiverSession(right, token).serve()
        except Exception:  # noqa: BLE001, S110 - the sender's side is what the test checks
            pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    events: list[Any] = []
    plan = job_plan(
        scheme_id,
        backend,
        params,
        [32],
        samples=3,
        warmup=0,
        keygen_samples=1,
        pause_ms=0,
        tamper=0,
        host="-",
        port=0,
        token=token,
    )
    try:
        SenderSession(left, plan, events.append).run()
    finally:
        left.close()
        thread.join(10)
        right.close()
    assert not thread.is_alive()
    return events


@pytest.mark.parametrize(("scheme_id", "backend"), LENIENT)
def test_a_forging_signer_fails_the_session_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, scheme_id: str, backend: str
) -> None:
    with pytest.raises(
        SessionFailed,
        match=r"receiver rejected the handshake: PayloadFormatError: invalid .*"
        r"verification key: .*(small order|identity)",
    ):
        _forged_session(monkeypatch, scheme_id, backend)


def test_without_the_key_check_the_forged_session_would_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: switch the check off and the same signer's forgeries all verify."""
    monkeypatch.setattr(signatures, "check_eddsa_key", lambda *args, **kwargs: None)
    events = _forged_session(monkeypatch, "ed25519", "pycryptodome")  # no SessionFailed: accepted
    assert events

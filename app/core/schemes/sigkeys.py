"""Checks on a verification key received from the peer, the same for every backend.

A signature receiver imports the signer's public key from the handshake. The two
libraries do not refuse the same keys: pycryptodome imports the ECDSA identity point
(04 || 00..00) and both accept Ed25519/Ed448 keys of small order, with which a
constant signature verifies for *every* message (identity key, R = identity, S = 0).
cryptography takes an Ed25519 key that is not even a point on the curve, and an RSA
key with an even modulus. These functions apply one rule per algorithm before the
library sees the key, so both backends refuse the same keys with the same error
(`PayloadFormatError`, as the key-agreement schemes do for a received point) and the
session fails with the reason instead of verifying a forgery.

They are cheap on purpose (the receiver's key import is timed): byte comparisons, one
Legendre symbol for an Edwards point, one gcd for an RSA modulus.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NoReturn

from app.core.schemes.base import PayloadFormatError


def reject_key(what: str, reason: object = None) -> NoReturn:
    """Raise the one error type a malformed or weak verification key surfaces as."""
    detail = f": {reason}" if reason is not None else ""
    raise PayloadFormatError(f"invalid {what} verification key{detail}") from None


# --------------------------------------------------------------------------- ECDSA


def check_sec1_point(what: str, coordinate_bytes: int, encoded: bytes) -> None:
    """Uncompressed SEC1 only, and not the all-zero encoding of the identity.

    pycryptodome decodes 04 || 00..00 as the point at infinity and verifies with it;
    OpenSSL refuses it. Range and curve-equation checks are left to the libraries,
    which both do them (tested in tests/reliability/test_hostile_keys.py).
    """
    point_bytes = 1 + 2 * coordinate_bytes
    if len(encoded) != point_bytes or encoded[0] != 0x04:
        reject_key(what, f"expected a {point_bytes}-byte uncompressed point, got {len(encoded)} bytes")
    if not any(encoded[1:]):
        reject_key(what, "the point at infinity (identity)")


# --------------------------------------------------------------------------- EdDSA


@dataclass(frozen=True)
class _Edwards:
    """An Edwards curve a*x^2 + y^2 = 1 + d*x^2*y^2 over GF(p) and its small-order y values."""

    p: int
    a: int
    d: int
    key_bytes: int
    #: y coordinates of the points of small order (dividing the cofactor): a key
    #: with one of these verifies a constant signature for any message.
    small_order_y: frozenset[int]


_P25519 = 2**255 - 19
_P448 = 2**448 - 2**224 - 1
#: y of the four points of order 8 on edwards25519 is +-Y8 (libsodium's blocklist;
#: tests/reliability/test_hostile_keys.py re-derives the orders arithmetically).
_Y8_25519 = int.from_bytes(bytes.fromhex("26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05"), "little")

EDWARDS: dict[str, _Edwards] = {
    # RFC 8032 section 5.1: d = -121665/121666; cofactor 8.
    "Ed25519": _Edwards(
        _P25519,
        -1,
        -121665 * pow(121666, -1, _P25519) % _P25519,
        32,
        frozenset({0, 1, _P25519 - 1, _Y8_25519, _P25519 - _Y8_25519}),
    ),
    # RFC 8032 section 5.2: d = -39081; cofactor 4 (orders 1, 2, 4: y = 1, -1, 0).
    "Ed448": _Edwards(_P448, 1, -39081 % _P448, 57, frozenset({0, 1, _P448 - 1})),
}


def check_eddsa_key(curve: str, encoded: bytes, *, on_curve: bool) -> None:
    """RFC 8032 decoding rules plus a small-order check, for Ed25519 and Ed448.

    Refuses: a wrong length; y >= p (a non-canonical encoding, which RFC 8032
    section 5.1.3 says must fail); x = 0 with the sign bit set (the other
    non-canonical form); a point of small order; and, with `on_curve`, a y with no
    x on the curve. That last test is one modular exponentiation (about 0.1 ms for
    Ed25519 and 0.3 ms for Ed448 in CPython), so it is asked for only where the
    library does not decode the point on import (OpenSSL decodes it when verifying;
    pycryptodome's import already refuses such a key).
    """
    params = EDWARDS[curve]
    if len(encoded) != params.key_bytes:
        reject_key(curve, f"expected {params.key_bytes} bytes, got {len(encoded)}")
    bits = 8 * params.key_bytes
    number = int.from_bytes(encoded, "little")
    sign = number >> (bits - 1)
    y = number & ((1 << (bits - 1)) - 1)
    p = params.p
    if y >= p:
        reject_key(curve, "non-canonical encoding (y >= p)")
    # x^2 = (y^2 - 1) / (d*y^2 - a); the denominator is never 0 (d is not a square).
    u = (y * y - 1) % p
    v = (params.d * y * y - params.a) % p
    if u == 0:
        if sign:
            reject_key(curve, "non-canonical encoding (x = 0 with the sign bit set)")
    elif on_curve and pow(u * v % p, (p - 1) // 2, p) != 1:  # Euler's criterion: u/v is not a square
        reject_key(curve, "not a point on the curve")
    if y in params.small_order_y:
        reject_key(curve, "a point of small order (it would verify forged signatures)")


# --------------------------------------------------------------------------- RSA

#: Product of the odd primes below 752: SP 800-89 section 5.3.3 partial public-key
#: validation asks that n have no prime factor below 752.
_SMALL_PRIMES_PRODUCT = math.prod(q for q in range(3, 752, 2) if all(q % f for f in range(3, math.isqrt(q) + 1, 2)))


def check_rsa_numbers(what: str, bits: int, n: int, e: int) -> None:
    """SP 800-89 partial validation of (n, e), as FIPS 186-5 bounds the exponent.

    Refuses a modulus of another size, an even or small-factor modulus (e.g. a
    prime times 2 or 3), and an exponent that is even, 1, or outside (2^16, 2^256).
    e = 1 makes every encoded message its own signature.
    """
    if n.bit_length() != bits:
        reject_key(what, f"modulus has {n.bit_length()} bits")
    if n % 2 == 0:
        reject_key(what, "even modulus")
    if math.gcd(n, _SMALL_PRIMES_PRODUCT) != 1:
        reject_key(what, "modulus has a prime factor below 752")
    if e % 2 == 0 or not 2**16 < e < 2**256:
        reject_key(what, f"public exponent {e} is not an odd number in (2^16, 2^256)")

"""Checks of the elliptic-curve schemes: X25519/X448, Ed25519/Ed448, deterministic ECDSA, ECDH.

Vectors: resources/selftest/rfc7748.json, eddsa.json, ecdsa.json and ecdh.json.
"""

from __future__ import annotations

import warnings
from typing import Any

from app.core.selftest import vectors
from app.core.selftest.framework import (
    CRYPTOGRAPHY,
    KAT,
    PYCRYPTODOME,
    TINYEC,
    SelftestCheck,
    expect,
    expect_accepted,
    expect_equal,
    expect_rejected,
    flip_last_bit,
    registrar,
)
from app.core.selftest.vectors import EcdhVector, EcdsaVector, EddsaVector

CHECKS: list[SelftestCheck] = []
_register = registrar(CHECKS)

# ======================================================================================
# X25519 and X448 (RFC 7748)
# ======================================================================================

_RFC7748_52 = "RFC 7748 §5.2 (X25519 test vectors, single step)"
RFC7748_61 = "RFC 7748 §6.1 (Curve25519 Diffie-Hellman example)"
RFC7748_62 = "RFC 7748 §6.2 (Curve448 Diffie-Hellman example)"

#: The RFC 7748 §5.2 vectors, each run by both backends.
_SCALARMULT_VECTORS = ("1", "2")


@_register("X25519 scalar multiplication", CRYPTOGRAPHY, KAT, _RFC7748_52)
def _check_x25519_scalarmult_cryptography() -> None:
    from cryptography.hazmat.primitives.asymmetric import x25519

    for index in _SCALARMULT_VECTORS:
        vector = vectors.X25519_SCALARMULT[index]
        private = x25519.X25519PrivateKey.from_private_bytes(vector.scalar)
        output = private.exchange(x25519.X25519PublicKey.from_public_bytes(vector.u))
        expect_equal(f"vector {index} output", output, vector.output)


@_register("X25519 scalar multiplication", PYCRYPTODOME, KAT, _RFC7748_52)
def _check_x25519_scalarmult_pycryptodome() -> None:
    from Crypto.Protocol import DH

    for index in _SCALARMULT_VECTORS:
        vector = vectors.X25519_SCALARMULT[index]
        output = DH.key_agreement(
            static_priv=DH.import_x25519_private_key(vector.scalar),
            static_pub=DH.import_x25519_public_key(vector.u),
            kdf=lambda z: z,
        )
        expect_equal(f"vector {index} output", output, vector.output)


def _montgomery_cryptography(private_cls: Any, public_cls: Any, curve: str) -> None:
    vector = vectors.X25519_X448_DH[curve]
    alice = private_cls.from_private_bytes(vector.alice_private)
    bob = private_cls.from_private_bytes(vector.bob_private)
    expect_equal("Alice's public key", alice.public_key().public_bytes_raw(), vector.alice_public)
    expect_equal("Bob's public key", bob.public_key().public_bytes_raw(), vector.bob_public)
    bob_public = public_cls.from_public_bytes(vector.bob_public)
    alice_public = public_cls.from_public_bytes(vector.alice_public)
    expect_equal("shared secret (Alice)", alice.exchange(bob_public), vector.shared)
    expect_equal("shared secret (Bob)", bob.exchange(alice_public), vector.shared)


def _montgomery_pycryptodome(curve: str) -> None:
    from Crypto.Protocol import DH

    vector = vectors.X25519_X448_DH[curve]
    import_private, import_public = (
        (DH.import_x25519_private_key, DH.import_x25519_public_key)
        if curve == "X25519"
        else (DH.import_x448_private_key, DH.import_x448_public_key)
    )
    alice = import_private(vector.alice_private)
    bob = import_private(vector.bob_private)
    expect_equal("Alice's public key", alice.public_key().export_key(format="raw"), vector.alice_public)
    expect_equal("Bob's public key", bob.public_key().export_key(format="raw"), vector.bob_public)
    for label, private, peer in (("Alice", alice, vector.bob_public), ("Bob", bob, vector.alice_public)):
        shared = DH.key_agreement(static_priv=private, static_pub=import_public(peer), kdf=lambda z: z)
        expect_equal(f"shared secret ({label})", shared, vector.shared)


@_register("X25519 key agreement", CRYPTOGRAPHY, KAT, RFC7748_61)
def _check_x25519_agreement_cryptography() -> None:
    from cryptography.hazmat.primitives.asymmetric import x25519

    _montgomery_cryptography(x25519.X25519PrivateKey, x25519.X25519PublicKey, "X25519")


@_register("X25519 key agreement", PYCRYPTODOME, KAT, RFC7748_61)
def _check_x25519_agreement_pycryptodome() -> None:
    _montgomery_pycryptodome("X25519")


@_register("X448 key agreement", CRYPTOGRAPHY, KAT, RFC7748_62)
def _check_x448_agreement_cryptography() -> None:
    from cryptography.hazmat.primitives.asymmetric import x448

    _montgomery_cryptography(x448.X448PrivateKey, x448.X448PublicKey, "X448")


@_register("X448 key agreement", PYCRYPTODOME, KAT, RFC7748_62)
def _check_x448_agreement_pycryptodome() -> None:
    _montgomery_pycryptodome("X448")


# ======================================================================================
# Ed25519 and Ed448 (RFC 8032)
# ======================================================================================

RFC8032_71 = "RFC 8032 §7.1 (Ed25519 TEST 1, TEST 2, TEST 3)"
RFC8032_74 = "RFC 8032 §7.4 (Ed448, first test: blank message)"

#: The RFC 8032 §7.1 vectors the Ed25519 checks run, in order.
ED25519_VECTORS = ("TEST 1", "TEST 2", "TEST 3")


def _eddsa_cryptography(private_cls: Any, vector: EddsaVector, label: str) -> None:
    from cryptography.exceptions import InvalidSignature

    private = private_cls.from_private_bytes(vector.secret)
    public = private.public_key()
    expect_equal(f"{label} public key", public.public_bytes_raw(), vector.public)
    expect_equal(f"{label} signature", private.sign(vector.message), vector.signature)
    expect_accepted(
        f"{label}: the published signature",
        lambda: public.verify(vector.signature, vector.message),
        InvalidSignature,
    )
    expect_rejected(
        f"{label}: a signature with one flipped bit",
        lambda: public.verify(flip_last_bit(vector.signature), vector.message),
        InvalidSignature,
    )


def _eddsa_pycryptodome(curve: str, vector: EddsaVector, label: str) -> None:
    from Crypto.PublicKey import ECC
    from Crypto.Signature import eddsa

    private = ECC.construct(curve=curve, seed=vector.secret)
    public = private.public_key()
    expect_equal(f"{label} public key", public.export_key(format="raw"), vector.public)
    expect_equal(f"{label} signature", eddsa.new(private, "rfc8032").sign(vector.message), vector.signature)
    verifier = eddsa.new(public, "rfc8032")
    expect_accepted(
        f"{label}: the published signature",
        lambda: verifier.verify(vector.message, vector.signature),
        ValueError,
    )
    expect_rejected(
        f"{label}: a signature with one flipped bit",
        lambda: verifier.verify(vector.message, flip_last_bit(vector.signature)),
        ValueError,
    )


@_register("Ed25519 sign/verify", CRYPTOGRAPHY, KAT, RFC8032_71)
def _check_ed25519_cryptography() -> None:
    from cryptography.hazmat.primitives.asymmetric import ed25519

    for name in ED25519_VECTORS:
        _eddsa_cryptography(ed25519.Ed25519PrivateKey, vectors.ED25519[name], name)


@_register("Ed25519 sign/verify", PYCRYPTODOME, KAT, RFC8032_71)
def _check_ed25519_pycryptodome() -> None:
    for name in ED25519_VECTORS:
        _eddsa_pycryptodome("Ed25519", vectors.ED25519[name], name)


@_register("Ed448 sign/verify", CRYPTOGRAPHY, KAT, RFC8032_74)
def _check_ed448_cryptography() -> None:
    from cryptography.hazmat.primitives.asymmetric import ed448

    _eddsa_cryptography(ed448.Ed448PrivateKey, vectors.ED448["blank"], "blank")


@_register("Ed448 sign/verify", PYCRYPTODOME, KAT, RFC8032_74)
def _check_ed448_pycryptodome() -> None:
    _eddsa_pycryptodome("Ed448", vectors.ED448["blank"], "blank")


# ======================================================================================
# Deterministic ECDSA (RFC 6979)
# ======================================================================================

_RFC6979_P256 = 'RFC 6979 §A.2.5 (P-256, SHA-256, message "sample")'
_RFC6979_P384 = 'RFC 6979 §A.2.6 (P-384, SHA-384, message "sample")'


def _ecdsa_cryptography(curve: Any, hash_algorithm: Any, vector: EcdsaVector) -> None:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import (
        decode_dss_signature,
        encode_dss_signature,
    )

    private = ec.derive_private_key(vector.private, curve)
    numbers = private.public_key().public_numbers()
    expect_equal("public key x", numbers.x, vector.public_x)
    expect_equal("public key y", numbers.y, vector.public_y)
    signature = private.sign(vector.message, ec.ECDSA(hash_algorithm, deterministic_signing=True))
    r, s = decode_dss_signature(signature)
    expect_equal("r", r, vector.r)
    expect_equal("s", s, vector.s)
    public = ec.EllipticCurvePublicNumbers(vector.public_x, vector.public_y, curve).public_key()
    published = encode_dss_signature(vector.r, vector.s)
    expect_accepted(
        "the published signature",
        lambda: public.verify(published, vector.message, ec.ECDSA(hash_algorithm)),
        InvalidSignature,
    )
    expect_rejected(
        "the signature over a modified message",
        lambda: public.verify(published, vector.message + b"!", ec.ECDSA(hash_algorithm)),
        InvalidSignature,
    )


def _ecdsa_pycryptodome(curve: str, hash_module: Any, vector: EcdsaVector, size: int) -> None:
    from Crypto.PublicKey import ECC
    from Crypto.Signature import DSS

    private = ECC.construct(curve=curve, d=vector.private)
    expect_equal("public key x", int(private.pointQ.x), vector.public_x)
    expect_equal("public key y", int(private.pointQ.y), vector.public_y)
    signer = DSS.new(private, "deterministic-rfc6979", encoding="binary")
    signature = signer.sign(hash_module.new(vector.message))
    expected = vector.r.to_bytes(size, "big") + vector.s.to_bytes(size, "big")
    expect_equal("r || s", signature, expected)
    verifier = DSS.new(private.public_key(), "fips-186-3", encoding="binary")
    expect_accepted(
        "the published signature",
        lambda: verifier.verify(hash_module.new(vector.message), expected),
        ValueError,
    )
    expect_rejected(
        "the signature over a modified message",
        lambda: verifier.verify(hash_module.new(vector.message + b"!"), expected),
        ValueError,
    )


@_register("ECDSA P-256/SHA-256 deterministic signature", CRYPTOGRAPHY, KAT, _RFC6979_P256)
def _check_ecdsa_p256_cryptography() -> None:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    _ecdsa_cryptography(ec.SECP256R1(), hashes.SHA256(), vectors.RFC6979["P-256"])


@_register("ECDSA P-256/SHA-256 deterministic signature", PYCRYPTODOME, KAT, _RFC6979_P256)
def _check_ecdsa_p256_pycryptodome() -> None:
    from Crypto.Hash import SHA256

    _ecdsa_pycryptodome("P-256", SHA256, vectors.RFC6979["P-256"], 32)


@_register("ECDSA P-384/SHA-384 deterministic signature", CRYPTOGRAPHY, KAT, _RFC6979_P384)
def _check_ecdsa_p384_cryptography() -> None:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    _ecdsa_cryptography(ec.SECP384R1(), hashes.SHA384(), vectors.RFC6979["P-384"])


@_register("ECDSA P-384/SHA-384 deterministic signature", PYCRYPTODOME, KAT, _RFC6979_P384)
def _check_ecdsa_p384_pycryptodome() -> None:
    from Crypto.Hash import SHA384

    _ecdsa_pycryptodome("P-384", SHA384, vectors.RFC6979["P-384"], 48)


# ======================================================================================
# ECDH (RFC 7027 brainpoolP256r1; RFC 5903 P-256 and P-384)
# ======================================================================================

RFC7027_A1 = "RFC 7027 Appendix A.1 (ECDH on brainpoolP256r1)"
RFC5903_81 = "RFC 5903 §8.1 (ECDH-256, P-256)"
RFC5903_82 = "RFC 5903 §8.2 (ECDH-384, P-384)"


def _ecdh_tinyec(curve_name: str, vector: EcdhVector) -> None:
    """Public keys and the shared point with tinyec's pure-Python arithmetic."""
    from tinyec import ec as tinyec_ec
    from tinyec import registry

    curve = registry.get_curve(curve_name)
    for label, private, public in (
        ("A", vector.private_a, vector.public_a),
        ("B", vector.private_b, vector.public_b),
    ):
        point = curve.g * private
        expect_equal(f"public key {label} (x, y)", (point.x, point.y), public)
    with warnings.catch_warnings(record=True):  # tinyec warns (and flags) off-curve points
        peer_a = tinyec_ec.Point(curve, *vector.public_a)
        peer_b = tinyec_ec.Point(curve, *vector.public_b)
    expect(peer_a.on_curve and peer_b.on_curve, "a published public point is not on the curve")
    for label, point in (("dA * QB", peer_b * vector.private_a), ("dB * QA", peer_a * vector.private_b)):
        expect_equal(f"shared point {label} (x, y)", (point.x, point.y), vector.shared)


def _ecdh_cryptography(curve: Any, vector: EcdhVector) -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    size = (curve.key_size + 7) // 8
    expected = vector.shared[0].to_bytes(size, "big")
    for label, private, public, peer in (
        ("A", vector.private_a, vector.public_a, vector.public_b),
        ("B", vector.private_b, vector.public_b, vector.public_a),
    ):
        key = ec.derive_private_key(private, curve)
        numbers = key.public_key().public_numbers()
        expect_equal(f"public key {label} (x, y)", (numbers.x, numbers.y), public)
        peer_key = ec.EllipticCurvePublicNumbers(peer[0], peer[1], curve).public_key()
        expect_equal(f"shared secret ({label})", key.exchange(ec.ECDH(), peer_key), expected)


def _ecdh_pycryptodome(curve: str, vector: EcdhVector, size: int) -> None:
    from Crypto.Protocol import DH
    from Crypto.PublicKey import ECC

    expected = vector.shared[0].to_bytes(size, "big")
    for label, private, public, peer in (
        ("A", vector.private_a, vector.public_a, vector.public_b),
        ("B", vector.private_b, vector.public_b, vector.public_a),
    ):
        key = ECC.construct(curve=curve, d=private)
        expect_equal(f"public key {label} (x, y)", (int(key.pointQ.x), int(key.pointQ.y)), public)
        peer_key = ECC.construct(curve=curve, point_x=peer[0], point_y=peer[1])
        shared = DH.key_agreement(static_priv=key, static_pub=peer_key, kdf=lambda z: z)
        expect_equal(f"shared secret ({label})", shared, expected)


@_register("ECDH brainpoolP256r1", TINYEC, KAT, RFC7027_A1)
def _check_ecdh_brainpool_tinyec() -> None:
    _ecdh_tinyec("brainpoolP256r1", vectors.ECDH["brainpoolP256r1"])


@_register("ECDH brainpoolP256r1", CRYPTOGRAPHY, KAT, RFC7027_A1)
def _check_ecdh_brainpool_cryptography() -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    _ecdh_cryptography(ec.BrainpoolP256R1(), vectors.ECDH["brainpoolP256r1"])


@_register("ECDH P-256 (secp256r1)", TINYEC, KAT, RFC5903_81)
def _check_ecdh_p256_tinyec() -> None:
    _ecdh_tinyec("secp256r1", vectors.ECDH["P-256"])


@_register("ECDH P-256 (secp256r1)", CRYPTOGRAPHY, KAT, RFC5903_81)
def _check_ecdh_p256_cryptography() -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    _ecdh_cryptography(ec.SECP256R1(), vectors.ECDH["P-256"])


@_register("ECDH P-256 (secp256r1)", PYCRYPTODOME, KAT, RFC5903_81)
def _check_ecdh_p256_pycryptodome() -> None:
    _ecdh_pycryptodome("P-256", vectors.ECDH["P-256"], 32)


@_register("ECDH P-384 (secp384r1)", TINYEC, KAT, RFC5903_82)
def _check_ecdh_p384_tinyec() -> None:
    _ecdh_tinyec("secp384r1", vectors.ECDH["P-384"])


@_register("ECDH P-384 (secp384r1)", CRYPTOGRAPHY, KAT, RFC5903_82)
def _check_ecdh_p384_cryptography() -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    _ecdh_cryptography(ec.SECP384R1(), vectors.ECDH["P-384"])


@_register("ECDH P-384 (secp384r1)", PYCRYPTODOME, KAT, RFC5903_82)
def _check_ecdh_p384_pycryptodome() -> None:
    _ecdh_pycryptodome("P-384", vectors.ECDH["P-384"], 48)

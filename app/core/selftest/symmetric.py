"""Checks of the symmetric primitives: AES-GCM, ChaCha20-Poly1305, the hashes of "abc", HKDF.

Vectors: resources/selftest/aead.json, digests.json and hkdf.json.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any

from app.core.selftest import vectors
from app.core.selftest.framework import (
    CROSS_CHECK,
    CRYPTOGRAPHY,
    KAT,
    PYCRYPTODOME,
    SelftestCheck,
    expect_accepted,
    expect_equal,
    expect_rejected,
    flip_last_bit,
    registrar,
)
from app.core.selftest.vectors import AeadVector, HkdfVector

CHECKS: list[SelftestCheck] = []
_register = registrar(CHECKS)


def gcm_source(case: int) -> str:
    return (
        "McGrew & Viega, The Galois/Counter Mode of Operation (GCM), Appendix B "
        f"(NIST GCM spec vectors, basis of SP 800-38D validation), test case {case}"
    )


RFC8439_SOURCE = "RFC 8439 §2.8.2 (AEAD_CHACHA20_POLY1305 test vector)"
FIPS180_SOURCE = 'FIPS 180-4 examples (NIST CSRC example values), message "abc"'
FIPS202_SOURCE = 'FIPS 202 examples (NIST CSRC example values), message "abc"'
RFC7693_SOURCE = 'RFC 7693 Appendix A (BLAKE2b-512 of "abc")'

# ======================================================================================
# AES-GCM (GCM specification test cases; SP 800-38D)
# ======================================================================================


def _aead_cryptography(cipher_cls: Any, vector: AeadVector) -> None:
    """Encrypt, decrypt and tamper-test one AEAD vector with a cryptography AEAD class."""
    from cryptography.exceptions import InvalidTag

    aead = cipher_cls(vector.key)
    aad = vector.aad or None
    sealed = aead.encrypt(vector.nonce, vector.plaintext, aad)
    expect_equal("ciphertext || tag", sealed, vector.ciphertext + vector.tag)
    opened = expect_accepted(
        "the published ciphertext and tag",
        lambda: aead.decrypt(vector.nonce, vector.ciphertext + vector.tag, aad),
        InvalidTag,
    )
    expect_equal("decrypted plaintext", opened, vector.plaintext)
    tampered = vector.ciphertext + flip_last_bit(vector.tag)
    expect_rejected("a tag with one flipped bit", lambda: aead.decrypt(vector.nonce, tampered, aad), InvalidTag)


def _aead_pycryptodome(new_cipher: Callable[[], Any], vector: AeadVector) -> None:
    """Same as :func:`_aead_cryptography` for a pycryptodome cipher factory."""
    cipher = new_cipher()
    cipher.update(vector.aad)
    ciphertext, tag = cipher.encrypt_and_digest(vector.plaintext)
    expect_equal("ciphertext", ciphertext, vector.ciphertext)
    expect_equal("tag", tag, vector.tag)
    cipher = new_cipher()
    cipher.update(vector.aad)
    opened = expect_accepted(
        "the published ciphertext and tag",
        lambda: cipher.decrypt_and_verify(vector.ciphertext, vector.tag),
        ValueError,
    )
    expect_equal("decrypted plaintext", opened, vector.plaintext)

    def open_tampered() -> None:
        bad = new_cipher()
        bad.update(vector.aad)
        bad.decrypt_and_verify(vector.ciphertext, flip_last_bit(vector.tag))

    expect_rejected("a tag with one flipped bit", open_tampered, ValueError)


def _gcm_cryptography(case: int) -> None:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    _aead_cryptography(AESGCM, vectors.GCM[f"test-case-{case}"])


def _gcm_pycryptodome(case: int) -> None:
    from Crypto.Cipher import AES

    vector = vectors.GCM[f"test-case-{case}"]
    _aead_pycryptodome(lambda: AES.new(vector.key, AES.MODE_GCM, nonce=vector.nonce), vector)


@_register("AES-128-GCM, GCM test case 3", CRYPTOGRAPHY, KAT, gcm_source(3))
def _check_gcm3_cryptography() -> None:
    _gcm_cryptography(3)


@_register("AES-128-GCM, GCM test case 3", PYCRYPTODOME, KAT, gcm_source(3))
def _check_gcm3_pycryptodome() -> None:
    _gcm_pycryptodome(3)


@_register("AES-128-GCM with AAD, GCM test case 4", CRYPTOGRAPHY, KAT, gcm_source(4))
def _check_gcm4_cryptography() -> None:
    _gcm_cryptography(4)


@_register("AES-128-GCM with AAD, GCM test case 4", PYCRYPTODOME, KAT, gcm_source(4))
def _check_gcm4_pycryptodome() -> None:
    _gcm_pycryptodome(4)


@_register("AES-192-GCM with AAD, GCM test case 10", CRYPTOGRAPHY, KAT, gcm_source(10))
def _check_gcm10_cryptography() -> None:
    _gcm_cryptography(10)


@_register("AES-192-GCM with AAD, GCM test case 10", PYCRYPTODOME, KAT, gcm_source(10))
def _check_gcm10_pycryptodome() -> None:
    _gcm_pycryptodome(10)


@_register("AES-256-GCM with AAD, GCM test case 16", CRYPTOGRAPHY, KAT, gcm_source(16))
def _check_gcm16_cryptography() -> None:
    _gcm_cryptography(16)


@_register("AES-256-GCM with AAD, GCM test case 16", PYCRYPTODOME, KAT, gcm_source(16))
def _check_gcm16_pycryptodome() -> None:
    _gcm_pycryptodome(16)


# ======================================================================================
# ChaCha20-Poly1305 (RFC 8439 §2.8.2)
# ======================================================================================


@_register("ChaCha20-Poly1305 AEAD", CRYPTOGRAPHY, KAT, RFC8439_SOURCE)
def _check_chacha20poly1305_cryptography() -> None:
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    _aead_cryptography(ChaCha20Poly1305, vectors.CHACHA20_POLY1305["rfc8439-2.8.2"])


@_register("ChaCha20-Poly1305 AEAD", PYCRYPTODOME, KAT, RFC8439_SOURCE)
def _check_chacha20poly1305_pycryptodome() -> None:
    from Crypto.Cipher import ChaCha20_Poly1305

    vector = vectors.CHACHA20_POLY1305["rfc8439-2.8.2"]
    _aead_pycryptodome(lambda: ChaCha20_Poly1305.new(key=vector.key, nonce=vector.nonce), vector)


# ======================================================================================
# Hashes of "abc" (FIPS 180-4, FIPS 202, RFC 7693)
# ======================================================================================


def _digest_cryptography(name: str, algorithm: Any) -> None:
    from cryptography.hazmat.primitives import hashes

    vector = vectors.DIGESTS_OF_ABC[name]
    ctx = hashes.Hash(algorithm)
    ctx.update(vector.message)
    expect_equal("digest", ctx.finalize(), vector.digest)


def _digest_pycryptodome(name: str, module_name: str, **kwargs: Any) -> None:
    vector = vectors.DIGESTS_OF_ABC[name]
    module = importlib.import_module(f"Crypto.Hash.{module_name}")
    expect_equal("digest", module.new(data=vector.message, **kwargs).digest(), vector.digest)


@_register('SHA-256("abc")', CRYPTOGRAPHY, KAT, FIPS180_SOURCE)
def _check_sha256_cryptography() -> None:
    from cryptography.hazmat.primitives import hashes

    _digest_cryptography("SHA-256", hashes.SHA256())


@_register('SHA-256("abc")', PYCRYPTODOME, KAT, FIPS180_SOURCE)
def _check_sha256_pycryptodome() -> None:
    _digest_pycryptodome("SHA-256", "SHA256")


@_register('SHA-384("abc")', CRYPTOGRAPHY, KAT, FIPS180_SOURCE)
def _check_sha384_cryptography() -> None:
    from cryptography.hazmat.primitives import hashes

    _digest_cryptography("SHA-384", hashes.SHA384())


@_register('SHA-384("abc")', PYCRYPTODOME, KAT, FIPS180_SOURCE)
def _check_sha384_pycryptodome() -> None:
    _digest_pycryptodome("SHA-384", "SHA384")


@_register('SHA-512("abc")', CRYPTOGRAPHY, KAT, FIPS180_SOURCE)
def _check_sha512_cryptography() -> None:
    from cryptography.hazmat.primitives import hashes

    _digest_cryptography("SHA-512", hashes.SHA512())


@_register('SHA-512("abc")', PYCRYPTODOME, KAT, FIPS180_SOURCE)
def _check_sha512_pycryptodome() -> None:
    _digest_pycryptodome("SHA-512", "SHA512")


@_register('SHA3-256("abc")', CRYPTOGRAPHY, KAT, FIPS202_SOURCE)
def _check_sha3_256_cryptography() -> None:
    from cryptography.hazmat.primitives import hashes

    _digest_cryptography("SHA3-256", hashes.SHA3_256())


@_register('SHA3-256("abc")', PYCRYPTODOME, KAT, FIPS202_SOURCE)
def _check_sha3_256_pycryptodome() -> None:
    _digest_pycryptodome("SHA3-256", "SHA3_256")


@_register('SHA3-512("abc")', CRYPTOGRAPHY, KAT, FIPS202_SOURCE)
def _check_sha3_512_cryptography() -> None:
    from cryptography.hazmat.primitives import hashes

    _digest_cryptography("SHA3-512", hashes.SHA3_512())


@_register('SHA3-512("abc")', PYCRYPTODOME, KAT, FIPS202_SOURCE)
def _check_sha3_512_pycryptodome() -> None:
    _digest_pycryptodome("SHA3-512", "SHA3_512")


@_register('BLAKE2b-512("abc")', CRYPTOGRAPHY, KAT, RFC7693_SOURCE)
def _check_blake2b_cryptography() -> None:
    from cryptography.hazmat.primitives import hashes

    _digest_cryptography("BLAKE2b-512", hashes.BLAKE2b(64))


@_register('BLAKE2b-512("abc")', PYCRYPTODOME, KAT, RFC7693_SOURCE)
def _check_blake2b_pycryptodome() -> None:
    _digest_pycryptodome("BLAKE2b-512", "BLAKE2b", digest_bits=512)


# ======================================================================================
# HKDF (RFC 5869 Appendix A) and the HKDF-SHA384 cross-check
# ======================================================================================


def _hkdf_cryptography(algorithm: Any, ikm: bytes, salt: bytes, info: bytes, length: int) -> bytes:
    from cryptography.hazmat.primitives.kdf.hkdf import HKDF

    return HKDF(algorithm=algorithm, length=length, salt=salt or None, info=info).derive(ikm)


def _hkdf_pycryptodome(hash_module: Any, ikm: bytes, salt: bytes, info: bytes, length: int) -> bytes:
    from Crypto.Protocol.KDF import HKDF

    okm = HKDF(ikm, length, salt or None, hash_module, context=info)
    if not isinstance(okm, bytes):  # num_keys=1 returns a single key
        raise TypeError(f"HKDF returned {type(okm).__name__}, expected bytes")
    return okm


def _rfc5869_cryptography(vector: HkdfVector) -> None:
    from cryptography.hazmat.primitives import hashes

    okm = _hkdf_cryptography(hashes.SHA256(), vector.ikm, vector.salt, vector.info, len(vector.okm))
    expect_equal("OKM", okm, vector.okm)


def _rfc5869_pycryptodome(vector: HkdfVector) -> None:
    from Crypto.Hash import SHA256

    okm = _hkdf_pycryptodome(SHA256, vector.ikm, vector.salt, vector.info, len(vector.okm))
    expect_equal("OKM", okm, vector.okm)


@_register("HKDF-SHA256, RFC 5869 A.1", CRYPTOGRAPHY, KAT, "RFC 5869 Appendix A.1 (test case 1)")
def _check_hkdf_a1_cryptography() -> None:
    _rfc5869_cryptography(vectors.HKDF_SHA256["A.1"])


@_register("HKDF-SHA256, RFC 5869 A.1", PYCRYPTODOME, KAT, "RFC 5869 Appendix A.1 (test case 1)")
def _check_hkdf_a1_pycryptodome() -> None:
    _rfc5869_pycryptodome(vectors.HKDF_SHA256["A.1"])


@_register("HKDF-SHA256 long inputs, RFC 5869 A.2", CRYPTOGRAPHY, KAT, "RFC 5869 Appendix A.2 (test case 2)")
def _check_hkdf_a2_cryptography() -> None:
    _rfc5869_cryptography(vectors.HKDF_SHA256["A.2"])


@_register("HKDF-SHA256 long inputs, RFC 5869 A.2", PYCRYPTODOME, KAT, "RFC 5869 Appendix A.2 (test case 2)")
def _check_hkdf_a2_pycryptodome() -> None:
    _rfc5869_pycryptodome(vectors.HKDF_SHA256["A.2"])


@_register(
    "HKDF-SHA256 empty salt/info, RFC 5869 A.3",
    CRYPTOGRAPHY,
    KAT,
    "RFC 5869 Appendix A.3 (test case 3)",
)
def _check_hkdf_a3_cryptography() -> None:
    _rfc5869_cryptography(vectors.HKDF_SHA256["A.3"])


@_register(
    "HKDF-SHA256 empty salt/info, RFC 5869 A.3",
    PYCRYPTODOME,
    KAT,
    "RFC 5869 Appendix A.3 (test case 3)",
)
def _check_hkdf_a3_pycryptodome() -> None:
    _rfc5869_pycryptodome(vectors.HKDF_SHA256["A.3"])


@_register(
    "HKDF-SHA384 agrees with cryptography",
    PYCRYPTODOME,
    CROSS_CHECK,
    "cross-check against cryptography on random input (no published HKDF-SHA384 vector: "
    "RFC 5869 has SHA-256 and SHA-1 only)",
)
def _check_hkdf_sha384_cross() -> None:
    from Crypto.Hash import SHA384
    from cryptography.hazmat.primitives import hashes

    for length in (48, 100):
        ikm, salt, info = os.urandom(32), os.urandom(16), os.urandom(12)
        ours = _hkdf_pycryptodome(SHA384, ikm, salt, info, length)
        theirs = _hkdf_cryptography(hashes.SHA384(), ikm, salt, info, length)
        expect_equal(f"{length}-byte OKM (pycryptodome vs cryptography)", ours, theirs)

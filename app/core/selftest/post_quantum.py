"""Checks of the post-quantum schemes: ML-KEM (FIPS 203) and ML-DSA (FIPS 204).

cryptography's encapsulation and signing are randomised (ML-DSA signing is hedged), so
the known answers cover the deterministic parts: KeyGen from a seed (compared through
the SHA3-256 hash of the key) and Decaps of a published ciphertext. The rest is
checked for consistency against the FIPS size tables. Vectors and sizes:
resources/selftest/ml_kem.json and ml_dsa.json.
"""

from __future__ import annotations

from typing import Any

from app.core.selftest import vectors
from app.core.selftest.framework import (
    CONSISTENCY,
    CRYPTOGRAPHY,
    KAT,
    SelftestCheck,
    expect,
    expect_accepted,
    expect_equal,
    expect_rejected,
    flip_first_bit,
    flip_last_bit,
    registrar,
)

CHECKS: list[SelftestCheck] = []
_register = registrar(CHECKS)

CCTV_UNLUCKY = "C2SP CCTV ML-KEM unluckysample vectors ({file}): KeyGen(d, z) via H(ek), Decaps(c)"
MLDSA44_KEYGEN_SOURCE = "NIST ACVP-Server ML-DSA-keyGen-FIPS204 (vsId 42), tcId 1: seed -> pk (via SHA3-256)"


def sha3_256(data: bytes) -> bytes:
    from cryptography.hazmat.primitives import hashes

    ctx = hashes.Hash(hashes.SHA3_256())
    ctx.update(data)
    return ctx.finalize()


def _shake256(data: bytes, length: int) -> bytes:
    from cryptography.hazmat.primitives import hashes

    ctx = hashes.Hash(hashes.SHAKE256(digest_size=length))
    ctx.update(data)
    return ctx.finalize()


def _mlkem_kat(private_cls: Any, name: str) -> None:
    vector = vectors.MLKEM[name]
    key = private_cls.from_seed_bytes(vector.seed)
    ek = key.public_key().public_bytes_raw()
    expect_equal("H(ek) = SHA3-256(ek)", sha3_256(ek), vector.ek_sha3_256)
    expect_equal("Decaps shared secret", key.decapsulate(vector.ciphertext), vector.shared_secret)


def _mlkem_consistency(private_cls: Any, public_cls: Any, name: str) -> None:
    sizes = vectors.MLKEM_SIZES[name]
    seed = bytes(range(64))  # fixed d || z: KeyGen_internal must be deterministic
    key = private_cls.from_seed_bytes(seed)
    ek = key.public_key().public_bytes_raw()
    again = private_cls.from_seed_bytes(seed).public_key().public_bytes_raw()
    expect_equal("ek from the same seed, second time", again, ek)
    expect_equal("ek size (bytes)", len(ek), sizes.encapsulation_key)
    public = public_cls.from_public_bytes(ek)
    shared, ciphertext = public.encapsulate()
    expect_equal("ciphertext size (bytes)", len(ciphertext), sizes.ciphertext)
    expect_equal("shared secret size (bytes)", len(shared), 32)
    expect_equal("Decaps(Encaps) shared secret", key.decapsulate(ciphertext), shared)
    expect(public.encapsulate()[1] != ciphertext, "two encapsulations gave the same ciphertext")
    tampered = flip_first_bit(ciphertext)
    rejected = key.decapsulate(tampered)
    expect(rejected != shared, "a tampered ciphertext gave back the original shared secret")
    # FIPS 203 Algorithm 18: an invalid ciphertext yields K-bar = J(z || c) = SHAKE256(z || c, 32).
    expect_equal("implicit-rejection secret J(z || c)", rejected, _shake256(seed[32:] + tampered, 32))


def _mldsa_consistency(private_cls: Any, public_cls: Any, name: str) -> None:
    from cryptography.exceptions import InvalidSignature

    sizes = vectors.MLDSA_SIZES[name]
    seed = bytes(range(32))  # fixed xi: KeyGen must be deterministic
    key = private_cls.from_seed_bytes(seed)
    pk = key.public_key().public_bytes_raw()
    again = private_cls.from_seed_bytes(seed).public_key().public_bytes_raw()
    expect_equal("pk from the same seed, second time", again, pk)
    expect_equal("pk size (bytes)", len(pk), sizes.public_key)
    public = public_cls.from_public_bytes(pk)
    message = b"CryptoBench self-test message"
    signature = key.sign(message)
    expect_equal("signature size (bytes)", len(signature), sizes.signature)
    expect_accepted("the signature", lambda: public.verify(signature, message), InvalidSignature)
    context = b"cryptobench-selftest"
    with_context = key.sign(message, context=context)
    expect_accepted(
        "the signature with context",
        lambda: public.verify(with_context, message, context=context),
        InvalidSignature,
    )
    expect_rejected(
        "a signature with one flipped bit",
        lambda: public.verify(flip_last_bit(signature), message),
        InvalidSignature,
    )
    expect_rejected(
        "the signature over a modified message",
        lambda: public.verify(signature, message + b"!"),
        InvalidSignature,
    )
    expect_rejected(
        "a signature checked without its context",
        lambda: public.verify(with_context, message),
        InvalidSignature,
    )


@_register("ML-KEM-768 KeyGen + Decaps", CRYPTOGRAPHY, KAT, CCTV_UNLUCKY.format(file="ML-KEM-768.txt"))
def _check_mlkem768_kat() -> None:
    from cryptography.hazmat.primitives.asymmetric import mlkem

    _mlkem_kat(mlkem.MLKEM768PrivateKey, "ML-KEM-768 unlucky")


@_register(
    "ML-KEM-768 implicit rejection (strcmp trap)",
    CRYPTOGRAPHY,
    KAT,
    "Wycheproof testvectors_v1/mlkem_768_test.json tcId 1 (C2SP CCTV strcmp vector; FIPS 203 Algorithm 18)",
)
def _check_mlkem768_strcmp_kat() -> None:
    from cryptography.hazmat.primitives.asymmetric import mlkem

    _mlkem_kat(mlkem.MLKEM768PrivateKey, "ML-KEM-768 strcmp")


@_register("ML-KEM-1024 KeyGen + Decaps", CRYPTOGRAPHY, KAT, CCTV_UNLUCKY.format(file="ML-KEM-1024.txt"))
def _check_mlkem1024_kat() -> None:
    from cryptography.hazmat.primitives.asymmetric import mlkem

    _mlkem_kat(mlkem.MLKEM1024PrivateKey, "ML-KEM-1024 unlucky")


_MLKEM_CONSISTENCY = (
    "consistency (no published vector: Encaps is randomised): FIPS 203 Table 3 sizes, "
    "Decaps(Encaps) round trip, implicit rejection K-bar = J(z || c) (Algorithm 18)"
)


@_register("ML-KEM-768 encapsulation round trip", CRYPTOGRAPHY, CONSISTENCY, _MLKEM_CONSISTENCY)
def _check_mlkem768_consistency() -> None:
    from cryptography.hazmat.primitives.asymmetric import mlkem

    _mlkem_consistency(mlkem.MLKEM768PrivateKey, mlkem.MLKEM768PublicKey, "ML-KEM-768")


@_register("ML-KEM-1024 encapsulation round trip", CRYPTOGRAPHY, CONSISTENCY, _MLKEM_CONSISTENCY)
def _check_mlkem1024_consistency() -> None:
    from cryptography.hazmat.primitives.asymmetric import mlkem

    _mlkem_consistency(mlkem.MLKEM1024PrivateKey, mlkem.MLKEM1024PublicKey, "ML-KEM-1024")


@_register("ML-DSA-44 KeyGen from seed", CRYPTOGRAPHY, KAT, MLDSA44_KEYGEN_SOURCE)
def _check_mldsa44_keygen_kat() -> None:
    from cryptography.hazmat.primitives.asymmetric import mldsa

    vector = vectors.MLDSA_KEYGEN["ML-DSA-44"]
    key = mldsa.MLDSA44PrivateKey.from_seed_bytes(vector.seed)
    pk = key.public_key().public_bytes_raw()
    expect_equal("pk size (bytes)", len(pk), vectors.MLDSA_SIZES["ML-DSA-44"].public_key)
    expect_equal("SHA3-256(pk)", sha3_256(pk), vector.pk_sha3_256)


_MLDSA_CONSISTENCY = (
    "consistency (no published vector: signing is hedged): FIPS 204 Table 2 sizes, "
    "deterministic KeyGen, sign/verify with and without context, tampering rejected"
)


@_register("ML-DSA-44 sign/verify", CRYPTOGRAPHY, CONSISTENCY, _MLDSA_CONSISTENCY)
def _check_mldsa44_consistency() -> None:
    from cryptography.hazmat.primitives.asymmetric import mldsa

    _mldsa_consistency(mldsa.MLDSA44PrivateKey, mldsa.MLDSA44PublicKey, "ML-DSA-44")


@_register("ML-DSA-65 sign/verify", CRYPTOGRAPHY, CONSISTENCY, _MLDSA_CONSISTENCY)
def _check_mldsa65_consistency() -> None:
    from cryptography.hazmat.primitives.asymmetric import mldsa

    _mldsa_consistency(mldsa.MLDSA65PrivateKey, mldsa.MLDSA65PublicKey, "ML-DSA-65")


@_register("ML-DSA-87 sign/verify", CRYPTOGRAPHY, CONSISTENCY, _MLDSA_CONSISTENCY)
def _check_mldsa87_consistency() -> None:
    from cryptography.hazmat.primitives.asymmetric import mldsa

    _mldsa_consistency(mldsa.MLDSA87PrivateKey, mldsa.MLDSA87PublicKey, "ML-DSA-87")

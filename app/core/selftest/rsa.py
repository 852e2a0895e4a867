"""Checks of RSA: the PKCS #1 v2.1 known answers, and OAEP/PSS across both backends at 2048 bits.

OAEP and PSS are randomised, so a known answer exists only where the randomness is
published too (the PKCS #1 v2.1 vectors, resources/selftest/pkcs1.json). At the sizes
the app measures, each backend's output is checked against the other backend instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from app.core.selftest import vectors
from app.core.selftest.framework import (
    CONSISTENCY,
    CRYPTOGRAPHY,
    KAT,
    PYCRYPTODOME,
    SelftestCheck,
    expect,
    expect_accepted,
    expect_equal,
    expect_rejected,
    flip_last_bit,
    registrar,
)

CHECKS: list[SelftestCheck] = []
_register = registrar(CHECKS)

_PKCS1_SOURCE = (
    "PKCS #1 v2.1 test vectors (RSA Laboratories pkcs-1v2-1-vec, {file}), Example 1.1; algorithms as in RFC 8017"
)

# ======================================================================================
# PKCS #1 v2.1 known answers (1024-bit key of Example 1, SHA-1)
# ======================================================================================


def _rsa_private_cryptography(n: int, e: int, d: int) -> Any:
    from cryptography.hazmat.primitives.asymmetric import rsa

    p, q = rsa.rsa_recover_prime_factors(n, e, d)
    return rsa.RSAPrivateNumbers(
        p=p,
        q=q,
        d=d,
        dmp1=rsa.rsa_crt_dmp1(d, p),
        dmq1=rsa.rsa_crt_dmq1(d, q),
        iqmp=rsa.rsa_crt_iqmp(p, q),
        public_numbers=rsa.RSAPublicNumbers(e, n),
    ).private_key()


@_register(
    "RSA-1024 OAEP-SHA1 decryption, PKCS #1 Example 1.1",
    CRYPTOGRAPHY,
    KAT,
    _PKCS1_SOURCE.format(file="oaep-vect.txt"),
)
def _check_rsa_oaep_kat_cryptography() -> None:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    vector = vectors.RSAES_OAEP["example-1.1"]
    key = _rsa_private_cryptography(vector.n, vector.e, vector.d)
    oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA1()), algorithm=hashes.SHA1(), label=None)
    expect_equal("decrypted message", key.decrypt(vector.ciphertext, oaep), vector.message)
    expect_rejected(
        "a ciphertext with one flipped bit",
        lambda: key.decrypt(flip_last_bit(vector.ciphertext), oaep),
        ValueError,
    )


@_register(
    "RSA-1024 OAEP-SHA1 encryption and decryption, PKCS #1 Example 1.1",
    PYCRYPTODOME,
    KAT,
    _PKCS1_SOURCE.format(file="oaep-vect.txt"),
)
def _check_rsa_oaep_kat_pycryptodome() -> None:
    from Crypto.Cipher import PKCS1_OAEP
    from Crypto.Hash import SHA1
    from Crypto.PublicKey import RSA

    vector = vectors.RSAES_OAEP["example-1.1"]
    key = RSA.construct((vector.n, vector.e, vector.d))

    def published_seed(length: int) -> bytes:
        # pycryptodome draws the OAEP seed from randfunc; feed it the published one.
        if length != len(vector.seed):
            raise ValueError(f"asked for a {length}-byte seed, the vector has {len(vector.seed)}")
        return vector.seed

    encrypter = PKCS1_OAEP.new(key.public_key(), hashAlgo=SHA1, randfunc=published_seed)
    expect_equal("ciphertext", encrypter.encrypt(vector.message), vector.ciphertext)
    decrypter = PKCS1_OAEP.new(key, hashAlgo=SHA1)
    expect_equal("decrypted message", decrypter.decrypt(vector.ciphertext), vector.message)
    expect_rejected(
        "a ciphertext with one flipped bit",
        lambda: decrypter.decrypt(flip_last_bit(vector.ciphertext)),
        ValueError,
    )


@_register(
    "RSA-1024 PSS-SHA1 verification, PKCS #1 Example 1.1",
    CRYPTOGRAPHY,
    KAT,
    _PKCS1_SOURCE.format(file="pss-vect.txt"),
)
def _check_rsa_pss_kat_cryptography() -> None:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding, rsa

    vector = vectors.RSASSA_PSS["example-1.1"]
    public = rsa.RSAPublicNumbers(vector.e, vector.n).public_key()
    pss = padding.PSS(mgf=padding.MGF1(hashes.SHA1()), salt_length=vector.salt_length)
    expect_accepted(
        "the published signature",
        lambda: public.verify(vector.signature, vector.message, pss, hashes.SHA1()),
        InvalidSignature,
    )
    expect_rejected(
        "the signature over a modified message",
        lambda: public.verify(vector.signature, vector.message + b"!", pss, hashes.SHA1()),
        InvalidSignature,
    )


@_register(
    "RSA-1024 PSS-SHA1 verification, PKCS #1 Example 1.1",
    PYCRYPTODOME,
    KAT,
    _PKCS1_SOURCE.format(file="pss-vect.txt"),
)
def _check_rsa_pss_kat_pycryptodome() -> None:
    from Crypto.Hash import SHA1
    from Crypto.PublicKey import RSA
    from Crypto.Signature import pss

    vector = vectors.RSASSA_PSS["example-1.1"]
    verifier = pss.new(RSA.construct((vector.n, vector.e)), salt_bytes=vector.salt_length)
    expect_accepted(
        "the published signature",
        lambda: verifier.verify(SHA1.new(vector.message), vector.signature),
        ValueError,
    )
    expect_rejected(
        "the signature over a modified message",
        lambda: verifier.verify(SHA1.new(vector.message + b"!"), vector.signature),
        ValueError,
    )


# ======================================================================================
# RSA-2048 across both backends (no published vector: OAEP and PSS are randomised)
# ======================================================================================


@lru_cache(maxsize=1)
def interop_keys() -> tuple[Any, Any]:
    """One RSA-2048 key pair per self-test run, as (cryptography key, pycryptodome key).

    Generated with cryptography (tens of milliseconds; pycryptodome takes far
    longer) and imported into pycryptodome. :func:`app.core.selftest.run_selftests`
    clears the cache before and after a run.
    """
    from Crypto.PublicKey import RSA
    from cryptography.hazmat.primitives.asymmetric import rsa

    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    numbers = private.private_numbers()
    public = numbers.public_numbers
    return private, RSA.construct((public.n, public.e, numbers.d, numbers.p, numbers.q))


def _rsa_oaep_ops() -> dict[str, tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]]:
    """(encrypt, decrypt) per backend for RSA-2048 OAEP with SHA-256 and MGF1-SHA-256."""
    from Crypto.Cipher import PKCS1_OAEP
    from Crypto.Hash import SHA256
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    crypto_key, pycryptodome_key = interop_keys()
    oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None)
    return {
        CRYPTOGRAPHY: (
            lambda m: crypto_key.public_key().encrypt(m, oaep),
            lambda c: crypto_key.decrypt(c, oaep),
        ),
        PYCRYPTODOME: (
            lambda m: PKCS1_OAEP.new(pycryptodome_key.public_key(), hashAlgo=SHA256).encrypt(m),
            lambda c: PKCS1_OAEP.new(pycryptodome_key, hashAlgo=SHA256).decrypt(c),
        ),
    }


def _rsa_pss_ops() -> dict[str, tuple[Callable[[bytes], bytes], Callable[[bytes, bytes], None]]]:
    """(sign, verify) per backend for RSA-2048 PSS with SHA-256 and a 32-byte salt."""
    from Crypto.Hash import SHA256
    from Crypto.Signature import pss
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    crypto_key, pycryptodome_key = interop_keys()
    scheme = padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32)
    return {
        CRYPTOGRAPHY: (
            lambda m: crypto_key.sign(m, scheme, hashes.SHA256()),
            lambda s, m: crypto_key.public_key().verify(s, m, scheme, hashes.SHA256()),
        ),
        PYCRYPTODOME: (
            lambda m: pss.new(pycryptodome_key, salt_bytes=32).sign(SHA256.new(m)),
            lambda s, m: pss.new(pycryptodome_key.public_key(), salt_bytes=32).verify(SHA256.new(m), s),
        ),
    }


def _other_backend(backend: str) -> str:
    return PYCRYPTODOME if backend == CRYPTOGRAPHY else CRYPTOGRAPHY


def _rsa_oaep_interop(backend: str) -> None:
    ops = _rsa_oaep_ops()
    other = _other_backend(backend)
    encrypt, decrypt = ops[backend]
    other_encrypt, other_decrypt = ops[other]
    message = os.urandom(32)
    ciphertext = encrypt(message)
    expect_equal("ciphertext size (bytes)", len(ciphertext), 256)
    expect_equal("own ciphertext decrypted", decrypt(ciphertext), message)
    expect_equal(f"ciphertext decrypted by {other}", other_decrypt(ciphertext), message)
    expect_equal(f"{other}'s ciphertext decrypted", decrypt(other_encrypt(message)), message)
    expect(encrypt(message) != ciphertext, "two OAEP encryptions of one message are identical")
    expect_rejected("a ciphertext with one flipped bit", lambda: decrypt(flip_last_bit(ciphertext)), ValueError)


def _rsa_pss_interop(backend: str) -> None:
    from cryptography.exceptions import InvalidSignature

    ops = _rsa_pss_ops()
    other = _other_backend(backend)
    sign, verify = ops[backend]
    other_sign, other_verify = ops[other]
    message = os.urandom(32)
    signature = sign(message)
    expect_equal("signature size (bytes)", len(signature), 256)
    expect_accepted("own signature", lambda: verify(signature, message), InvalidSignature, ValueError)
    expect_accepted(
        f"signature checked by {other}",
        lambda: other_verify(signature, message),
        InvalidSignature,
        ValueError,
    )
    expect_accepted(
        f"{other}'s signature",
        lambda: verify(other_sign(message), message),
        InvalidSignature,
        ValueError,
    )
    expect_rejected(
        "a signature with one flipped bit",
        lambda: verify(flip_last_bit(signature), message),
        InvalidSignature,
        ValueError,
    )
    expect_rejected(
        "the signature over a modified message",
        lambda: verify(signature, message + b"!"),
        InvalidSignature,
        ValueError,
    )


_RSA_INTEROP_SOURCE = (
    "consistency (no published vector: {what} is randomised); RSA-2048 key generated once "
    "per run, checked against the other backend"
)


@_register(
    "RSA-2048 OAEP-SHA256 round trip, both backends",
    CRYPTOGRAPHY,
    CONSISTENCY,
    _RSA_INTEROP_SOURCE.format(what="OAEP"),
)
def _check_rsa_oaep_interop_cryptography() -> None:
    _rsa_oaep_interop(CRYPTOGRAPHY)


@_register(
    "RSA-2048 OAEP-SHA256 round trip, both backends",
    PYCRYPTODOME,
    CONSISTENCY,
    _RSA_INTEROP_SOURCE.format(what="OAEP"),
)
def _check_rsa_oaep_interop_pycryptodome() -> None:
    _rsa_oaep_interop(PYCRYPTODOME)


@_register(
    "RSA-2048 PSS-SHA256 sign/verify, both backends",
    CRYPTOGRAPHY,
    CONSISTENCY,
    _RSA_INTEROP_SOURCE.format(what="PSS"),
)
def _check_rsa_pss_interop_cryptography() -> None:
    _rsa_pss_interop(CRYPTOGRAPHY)


@_register(
    "RSA-2048 PSS-SHA256 sign/verify, both backends",
    PYCRYPTODOME,
    CONSISTENCY,
    _RSA_INTEROP_SOURCE.format(what="PSS"),
)
def _check_rsa_pss_interop_pycryptodome() -> None:
    _rsa_pss_interop(PYCRYPTODOME)

"""Tests for the self-test's adapter checks against broken adapters.

An adapter that computes the wrong thing while the libraries are right (an AAD added, a
digest swapped, the KDF info dropped, EdDSA signing the wrong bytes, ...) fails its
"App adapter" checks while every library check passes, and fails only the checks of what
it breaks: the library checks alone would miss it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from app.core import selftest
from app.core.selftest import adapters
from tests.helpers.selftest_runs import failures_of


def _broken_aead_sealer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The OpenSSL AEAD seal authenticates an AAD the receiver never sees."""
    from app.core.schemes import symmetric

    real = symmetric._cryptography_sealer
    monkeypatch.setattr(
        symmetric,
        "_cryptography_sealer",
        lambda encrypt, nonces: real(lambda n, p, _aad: encrypt(n, p, b"aad"), nonces),
    )


def _broken_hash_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """pycryptodome's SHA-384 adapter computes SHA-512 (a swapped digest)."""
    from Crypto.Hash import SHA512

    from app.core.schemes import digests

    monkeypatch.setitem(digests._PycryptodomeBackend._MODULES, "sha384", SHA512)


def _broken_ecdsa_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    """The OpenSSL ECDSA adapter pairs P-256 with SHA-384 instead of SHA-256."""
    from cryptography.hazmat.primitives import hashes

    from app.core.schemes import signatures

    monkeypatch.setitem(signatures._CryptographyEcdsa._HASHES, "SHA-256", hashes.SHA384)


def _derive_key_without_info(monkeypatch: pytest.MonkeyPatch, module: Any) -> None:
    """`module`'s `derive_key` ignores the info string it is given (b"" on both ends)."""
    real = module.derive_key
    monkeypatch.setattr(
        module,
        "derive_key",
        lambda kdf, shared, backend, length=32, info=b"": real(kdf, shared, backend, length, b""),
    )


def _broken_kdf_info(monkeypatch: pytest.MonkeyPatch) -> None:
    """The key agreements derive their session key without the info string."""
    from app.core.schemes import key_agreement

    _derive_key_without_info(monkeypatch, key_agreement)


def _broken_eddsa_signer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pycryptodome EdDSA adapter signs the message with a byte appended."""
    from app.core.schemes import signatures

    real = signatures._PycryptodomeEddsa.signer

    def signer(self: Any, key: Any) -> Any:
        sign, encoded = real(self, key)
        return (lambda message: sign(bytes(message) + b"\0")), encoded

    monkeypatch.setattr(signatures._PycryptodomeEddsa, "signer", signer)


def _broken_oaep_hash(monkeypatch: pytest.MonkeyPatch) -> None:
    """pycryptodome's RSA-OAEP adapter pads with SHA-1 (pycryptodome's default) on both ends:
    every round trip still works."""
    from Crypto.Hash import SHA1

    from app.core.schemes import pke

    monkeypatch.setattr(pke, "PycryptodomeSHA256", SHA1)


def _broken_kem_info(monkeypatch: pytest.MonkeyPatch) -> None:
    """The KEMs derive their key without binding the encapsulation (info = b"") on both ends."""
    from app.core.schemes import hybrid

    _derive_key_without_info(monkeypatch, hybrid)


def _broken_hybrid_combiner(monkeypatch: pytest.MonkeyPatch) -> None:
    """The X25519 + ML-KEM-768 combiner takes the two secrets in the other order on both ends."""
    from app.core.schemes import hybrid

    real = hybrid.derive_key

    def swapped(kdf: str, shared: bytes, backend: str, length: int = 32, info: bytes = b"") -> bytes:
        return real(kdf, shared[32:] + shared[:32] if len(shared) == 64 else shared, backend, length, info)

    monkeypatch.setattr(hybrid, "derive_key", swapped)


def _broken_elgamal_encoding(monkeypatch: pytest.MonkeyPatch) -> None:
    """ElGamal no longer maps a non-residue message into the order-q subgroup: decryption
    still returns it (round trips pass), but the ciphertext leaks its Legendre symbol."""
    from app.core.schemes import pke

    monkeypatch.setattr(pke, "jacobi", lambda a, n: 1)


def _broken_textbook_exponent(monkeypatch: pytest.MonkeyPatch) -> None:
    """Textbook RSA with e = 3: key generation and both ends agree, the figures are another RSA's."""
    from app.core.schemes import pke

    monkeypatch.setattr(pke.TextbookRsa, "E", 3)


# (how the adapter is broken, adapter checks that must fail: others may fail with it)
BROKEN_ADAPTERS: list[tuple[Callable[[pytest.MonkeyPatch], None], set[str]]] = [
    (
        _broken_aead_sealer,
        {
            "App adapter AES-128-GCM, GCM test case 3 [cryptography]",
            "App adapter AES-256-GCM, GCM test case 15 [cryptography]",
            "App adapter ChaCha20-Poly1305 seal/open agrees with the library [cryptography]",
            "App adapter X25519 key agreement + HKDF-SHA256 session key [cryptography]",
        },
    ),
    (
        _broken_hash_module,
        {
            'App adapter SHA-384("abc") [pycryptodome]',
            "App adapter HKDF-SHA384 scheme agrees with the library [pycryptodome]",
        },
    ),
    (_broken_ecdsa_digest, {"App adapter ECDSA P-256 verifies the RFC 6979 signature [cryptography]"}),
    (
        _broken_kdf_info,
        {
            "App adapter X25519 key agreement + HKDF-SHA256 session key [pycryptodome]",
            "App adapter ECDH P-256 key agreement + HKDF-SHA256 session key [tinyec]",
        },
    ),
    (
        _broken_eddsa_signer,
        {
            "App adapter Ed25519 sign/verify, RFC 8032 TEST 1-3 [pycryptodome]",
            "App adapter Ed448 sign/verify, RFC 8032 blank message [pycryptodome]",
        },
    ),
    (
        _broken_oaep_hash,
        {
            "App adapter RSA-KEM-2048 decapsulates Wycheproof OAEP-SHA256 tcId 7 [pycryptodome]",
            "App adapter RSA-2048 OAEP-SHA256 agrees with the library [pycryptodome]",
        },
    ),
    (
        _broken_kem_info,
        {
            "App adapter ECIES secp256k1 decapsulates the published exchange [cryptography]",
            "App adapter ECIES P-256 decapsulates the published exchange [cryptography]",
            "App adapter ECIES P-256 decapsulates the published exchange [pycryptodome]",
            "App adapter ECIES X25519 decapsulates the published exchange [cryptography]",
            "App adapter ECIES X25519 decapsulates the published exchange [pycryptodome]",
            "App adapter X25519 + ML-KEM-768 decapsulates the published halves [cryptography]",
        },
    ),
    (_broken_hybrid_combiner, {"App adapter X25519 + ML-KEM-768 decapsulates the published halves [cryptography]"}),
    (
        _broken_elgamal_encoding,
        {
            "App adapter ElGamal-2048 agrees with pycryptodome's integers [python]",
            "App adapter ElGamal-2048 (x, k: 256 bits) agrees with pycryptodome's integers [python]",
        },
    ),
    (
        _broken_textbook_exponent,
        {
            "App adapter Textbook RSA-2048 (CRT) encrypts and decrypts Wycheproof tcId 22 [python]",
            "App adapter Textbook RSA-2048 (no CRT) encrypts and decrypts Wycheproof tcId 22 [python]",
        },
    ),
]


@pytest.mark.parametrize(("breakage", "must_fail"), BROKEN_ADAPTERS, ids=[b[0].__name__ for b in BROKEN_ADAPTERS])
def test_a_broken_adapter_fails_the_selftest_while_the_libraries_pass(
    monkeypatch: pytest.MonkeyPatch, breakage: Callable[[pytest.MonkeyPatch], None], must_fail: set[str]
) -> None:
    # Only the adapter checks that must fail, through the self-test's own run: the library
    # checks cannot see an adapter (the last test shows it), and which other adapter checks
    # survive a breakage is the next test's. The run of every adapter check took 1.2 s a
    # case, most of it the key pairs of checks that had nothing to do with the breakage.
    chosen = [check for check in adapters.ADAPTER_CHECKS if check.name in must_fail]
    assert {check.name for check in chosen} == must_fail, "a name in BROKEN_ADAPTERS is no check"
    monkeypatch.setattr(selftest, "CHECKS", [])
    monkeypatch.setattr(selftest, "adapter_checks", lambda: chosen)
    breakage(monkeypatch)

    failures = failures_of(selftest.run_selftests())

    assert must_fail <= failures.keys(), sorted(failures)
    assert all(detail for detail in failures.values())
    assert not {name for name in failures if not name.startswith("App adapter ")}


@pytest.mark.parametrize(
    ("breakage", "survivor"),
    [
        (_broken_hybrid_combiner, "App adapter ECIES X25519 decapsulates the published exchange [cryptography]"),
        (
            _broken_elgamal_encoding,
            "App adapter Textbook RSA-2048 (CRT) encrypts and decrypts Wycheproof tcId 22 [python]",
        ),
    ],
    ids=["combiner", "elgamal"],
)
def test_a_broken_adapter_fails_only_the_checks_of_what_it_breaks(
    monkeypatch: pytest.MonkeyPatch, breakage: Callable[[pytest.MonkeyPatch], None], survivor: str
) -> None:
    """The X25519 + ML-KEM-768 combiner's order is not something ECIES shares, nor ElGamal's
    encoding textbook RSA's: the checks see what they are about, not everything at once."""
    breakage(monkeypatch)
    check = next(c for c in adapters.ADAPTER_CHECKS if c.name == survivor)
    assert selftest.run_one(check).passed


def test_the_library_checks_alone_miss_a_broken_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    _broken_ecdsa_digest(monkeypatch)
    assert all(selftest.run_one(check).passed for check in selftest.CHECKS)

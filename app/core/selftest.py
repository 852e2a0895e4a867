"""Known-answer self-tests for every cryptographic backend CryptoBench measures.

A benchmark is only worth reading if the code it times computes the right thing.
``cryptobench selftest`` therefore runs each backend (``cryptography``,
``pycryptodome``, ``tinyec`` and plain-Python integers) against the test vectors
published with the standards: the GCM specification's test cases, RFC 8439,
FIPS 180-4 / FIPS 202 / RFC 7693, RFC 5869, RFC 7748, RFC 8032, RFC 6979,
RFC 7027, RFC 5903, the PKCS #1 v2.1 vectors, and the FIPS 203 / FIPS 204
vectors published by NIST ACVP and C2SP.

Three kinds of checks are reported, and they are never mixed up:

* ``KAT`` -- the output equals a value published by a standard or by an
  authoritative vector collection (cited next to each vector).
* ``cross-check`` -- two independent backends agree on random input; used where
  no published vector exists (HKDF-SHA384).
* ``consistency`` -- properties that must hold but are not a published answer
  (randomised encryption round trips, sizes from the FIPS tables, tampered
  input rejected).

The checks here are Qt-free and use no other ``app`` module: they call the
libraries directly, so they check the libraries and run before anything else is
trusted. :func:`run_selftests` then runs the same vectors through the app's own
scheme adapters (:mod:`app.core.selftest_adapters`, imported only then), so a
broken wrapper fails too. Backends are imported inside the checks, so a missing
or broken backend fails its own checks instead of the whole self-test.
:func:`run_selftests` never raises.

Every check is one small function registered in :data:`CHECKS`; every vector is
a module-level constant, read when the check runs (the tests corrupt one to
prove that a check can fail).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = [
    "CHECKS",
    "SelftestCheck",
    "SelftestResult",
    "run_selftests",
]

# Backend and kind labels, as they appear in SelftestResult.
CRYPTOGRAPHY = "cryptography"
PYCRYPTODOME = "pycryptodome"
TINYEC = "tinyec"
PYTHON = "python"

KAT = "KAT"
CROSS_CHECK = "cross-check"
CONSISTENCY = "consistency"


@dataclass(frozen=True)
class SelftestResult:
    """The outcome of one self-test check.

    Attributes:
        name: Unique, human-readable name, e.g.
            ``"AES-256-GCM with AAD, GCM test case 16 [cryptography]"``.
        backend: ``"cryptography"``, ``"pycryptodome"``, ``"tinyec"`` or ``"python"``.
        kind: ``"KAT"``, ``"cross-check"`` or ``"consistency"``.
        source: Where the expected values come from (document and section).
        passed: Whether the check passed.
        detail: Empty when passed; otherwise what differed (expected vs got,
            shortened) or the exception raised.
    """

    name: str
    backend: str
    kind: str
    source: str
    passed: bool
    detail: str


@dataclass(frozen=True)
class SelftestCheck:
    """A registered check: metadata plus a function that raises on failure."""

    name: str
    backend: str
    kind: str
    source: str
    run: Callable[[], None]


CHECKS: list[SelftestCheck] = []
"""Every check, in the order :func:`run_selftests` runs them."""


def _register(
    title: str, backend: str, kind: str, source: str
) -> Callable[[Callable[[], None]], Callable[[], None]]:
    """Register the decorated function as a check named ``"<title> [<backend>]"``."""

    def decorator(func: Callable[[], None]) -> Callable[[], None]:
        CHECKS.append(
            SelftestCheck(
                name=f"{title} [{backend}]", backend=backend, kind=kind, source=source, run=func
            )
        )
        return func

    return decorator


# --------------------------------------------------------------------------------------
# Running and reporting
# --------------------------------------------------------------------------------------

_MAX_DETAIL = 300


class SelftestMismatch(Exception):
    """A computed value differs from the expected one (the message says how)."""


def run_selftests() -> list[SelftestResult]:
    """Run every registered check and report each one.

    Never raises for a failing check: an exception inside a check becomes
    ``passed=False`` with the exception text as detail. (KeyboardInterrupt and
    SystemExit still propagate, so a user can stop a run.)

    Returns:
        One :class:`SelftestResult` per entry of :data:`CHECKS`, in order, then one
        per adapter check (:func:`adapter_checks`).
    """
    _rsa_interop_keys.cache_clear()
    try:
        return [_run_one(check) for check in CHECKS + adapter_checks()]
    finally:
        # The RSA key pair is generated once per run; do not keep it afterwards.
        _rsa_interop_keys.cache_clear()


def adapter_checks() -> list[SelftestCheck]:
    """The checks through ``app/core/schemes``; one failing check if they cannot load."""
    try:
        from app.core.selftest_adapters import ADAPTER_CHECKS  # the one app import, kept out of the library checks
    except Exception as exc:  # noqa: BLE001 - a broken app module fails a check, not the run
        error = exc

        def failed_import() -> None:
            raise error

        return [SelftestCheck("App adapters load [python]", PYTHON, KAT, "app/core/selftest_adapters.py",
                              failed_import)]
    return list(ADAPTER_CHECKS)


def _run_one(check: SelftestCheck) -> SelftestResult:
    try:
        check.run()
    except SelftestMismatch as exc:
        return _result(check, False, str(exc))
    except Exception as exc:  # noqa: BLE001 - a check must never take the run down
        return _result(check, False, _describe(exc))
    return _result(check, True, "")


def _describe(exc: BaseException) -> str:
    """``"Type: message"`` (or just the type), even if ``str(exc)`` itself fails."""
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - a broken __str__ must not escape either
        text = ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _result(check: SelftestCheck, passed: bool, detail: str) -> SelftestResult:
    if len(detail) > _MAX_DETAIL:
        detail = detail[: _MAX_DETAIL - 1] + "…"
    return SelftestResult(
        name=check.name,
        backend=check.backend,
        kind=check.kind,
        source=check.source,
        passed=passed,
        detail=detail,
    )


def _short(value: Any) -> str:
    """Render a value for a failure message: long hex is cut to head…tail."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        text = raw.hex()
        if len(text) > 32:
            text = f"{text[:16]}…{text[-8:]}"
        return f"{text} ({len(raw)} B)"
    if isinstance(value, int) and not isinstance(value, bool):
        if abs(value) < 2**32:
            return str(value)
        text = format(value, "x")
        if len(text) > 32:
            text = f"{text[:16]}…{text[-8:]}"
        return "0x" + text
    if isinstance(value, tuple):
        return "(" + ", ".join(_short(item) for item in value) + ")"
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _expect_equal(what: str, got: Any, expected: Any) -> None:
    if got != expected:
        raise SelftestMismatch(f"{what}: expected {_short(expected)}, got {_short(got)}")


def _expect(condition: bool, message: str) -> None:
    if not condition:
        raise SelftestMismatch(message)


def _expect_rejected(what: str, func: Callable[[], Any], *errors: type[BaseException]) -> None:
    """``func`` must raise one of ``errors``: tampered input has to be refused."""
    try:
        func()
    except errors:
        return
    raise SelftestMismatch(f"{what} was accepted")


def _expect_accepted(what: str, func: Callable[[], Any], *errors: type[BaseException]) -> Any:
    """``func`` must not raise ``errors``: a published signature or tag has to verify."""
    try:
        return func()
    except errors as exc:
        raise SelftestMismatch(f"{what} was rejected ({_describe(exc)})") from exc


def _flip_last_bit(data: bytes) -> bytes:
    """Return ``data`` with the lowest bit of its last byte inverted."""
    return data[:-1] + bytes([data[-1] ^ 0x01])


def _flip_first_bit(data: bytes) -> bytes:
    """Return ``data`` with the lowest bit of its first byte inverted."""
    return bytes([data[0] ^ 0x01]) + data[1:]


# --------------------------------------------------------------------------------------
# Vector containers
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AeadVector:
    """An AEAD known answer: encrypt(key, nonce, plaintext, aad) = ciphertext || tag."""

    key: bytes
    nonce: bytes
    aad: bytes
    plaintext: bytes
    ciphertext: bytes
    tag: bytes


@dataclass(frozen=True)
class HkdfVector:
    """An HKDF known answer: HKDF(ikm, salt, info, length) = okm."""

    ikm: bytes
    salt: bytes
    info: bytes
    okm: bytes


@dataclass(frozen=True)
class EddsaVector:
    """An EdDSA known answer (RFC 8032): secret key, public key, message, signature."""

    secret: bytes
    public: bytes
    message: bytes
    signature: bytes


@dataclass(frozen=True)
class EcdsaVector:
    """A deterministic ECDSA known answer (RFC 6979): key, public point, message, (r, s)."""

    private: int
    public_x: int
    public_y: int
    message: bytes
    r: int
    s: int


@dataclass(frozen=True)
class EcdhVector:
    """An ECDH known answer: both private keys, both public points, the shared point."""

    private_a: int
    public_a: tuple[int, int]
    private_b: int
    public_b: tuple[int, int]
    shared: tuple[int, int]


@dataclass(frozen=True)
class MlKemVector:
    """An ML-KEM known answer for KeyGen_internal(d, z) and Decaps.

    The 1184/1568-byte encapsulation key is stored as its SHA3-256 hash
    (H(ek) in FIPS 203, which the published expanded dk contains verbatim).
    """

    seed: bytes  # d || z, 64 bytes
    ek_sha3_256: bytes
    ciphertext: bytes
    shared_secret: bytes


# --------------------------------------------------------------------------------------
# Vectors: AES-GCM
# McGrew & Viega, "The Galois/Counter Mode of Operation (GCM)", revised 2005, Appendix B
# ("Test Vectors") -- the vectors NIST published with the GCM specification and that
# SP 800-38D validation builds on. Test cases 3 and 4: AES-128; 10: AES-192; 16: AES-256.
# --------------------------------------------------------------------------------------

_GCM_KEY = bytes.fromhex("feffe9928665731c6d6a8f9467308308")
_GCM_IV = bytes.fromhex("cafebabefacedbaddecaf888")
_GCM_PLAINTEXT = bytes.fromhex(
    "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
    "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255"
)
_GCM_AAD = bytes.fromhex("feedfacedeadbeeffeedfacedeadbeefabaddad2")

# Test case 3: AES-128, 64-byte plaintext, no AAD.
GCM_TEST_CASE_3 = AeadVector(
    key=_GCM_KEY,
    nonce=_GCM_IV,
    aad=b"",
    plaintext=_GCM_PLAINTEXT,
    ciphertext=bytes.fromhex(
        "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
        "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985"
    ),
    tag=bytes.fromhex("4d5c2af327cd64a62cf35abd2ba6fab4"),
)

# Test case 4: AES-128, 60-byte plaintext, 20-byte AAD.
GCM_TEST_CASE_4 = AeadVector(
    key=_GCM_KEY,
    nonce=_GCM_IV,
    aad=_GCM_AAD,
    plaintext=_GCM_PLAINTEXT[:60],
    ciphertext=bytes.fromhex(
        "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
        "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091"
    ),
    tag=bytes.fromhex("5bc94fbc3221a5db94fae95ae7121a47"),
)

# Test case 10: AES-192, 60-byte plaintext, 20-byte AAD.
GCM_TEST_CASE_10 = AeadVector(
    key=bytes.fromhex("feffe9928665731c6d6a8f9467308308feffe9928665731c"),
    nonce=_GCM_IV,
    aad=_GCM_AAD,
    plaintext=_GCM_PLAINTEXT[:60],
    ciphertext=bytes.fromhex(
        "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c"
        "7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710"
    ),
    tag=bytes.fromhex("2519498e80f1478f37ba55bd6d27618c"),
)

# Test case 16: AES-256, 60-byte plaintext, 20-byte AAD.
GCM_TEST_CASE_16 = AeadVector(
    key=bytes.fromhex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308"),
    nonce=_GCM_IV,
    aad=_GCM_AAD,
    plaintext=_GCM_PLAINTEXT[:60],
    ciphertext=bytes.fromhex(
        "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
        "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
    ),
    tag=bytes.fromhex("76fc6ece0f4e1768cddf8853bb2d551b"),
)


def _gcm_source(case: int) -> str:
    return (
        "McGrew & Viega, The Galois/Counter Mode of Operation (GCM), Appendix B "
        f"(NIST GCM spec vectors, basis of SP 800-38D validation), test case {case}"
    )


# --------------------------------------------------------------------------------------
# Vectors: ChaCha20-Poly1305 -- RFC 8439 §2.8.2 ("Example and Test Vector for
# AEAD_CHACHA20_POLY1305"). Nonce = constant 07 00 00 00 || IV 40..47.
# --------------------------------------------------------------------------------------

RFC8439_AEAD = AeadVector(
    key=bytes(range(0x80, 0xA0)),
    nonce=bytes.fromhex("070000004041424344454647"),
    aad=bytes.fromhex("50515253c0c1c2c3c4c5c6c7"),
    plaintext=(
        b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip "
        b"for the future, sunscreen would be it."
    ),
    ciphertext=bytes.fromhex(
        "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6"
        "3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36"
        "92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
        "3ff4def08e4b7a9de576d26586cec64b6116"
    ),
    tag=bytes.fromhex("1ae10b594f09e26a7e902ecbd0600691"),
)
_RFC8439_SOURCE = "RFC 8439 §2.8.2 (AEAD_CHACHA20_POLY1305 test vector)"

# --------------------------------------------------------------------------------------
# Vectors: hashes of the 3-byte message "abc"
# --------------------------------------------------------------------------------------

HASH_MESSAGE = b"abc"

# FIPS 180-4 examples (NIST CSRC "Examples with Intermediate Values": SHA256.pdf,
# SHA384.pdf, SHA512.pdf, one-block message "abc").
SHA256_ABC = bytes.fromhex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
SHA384_ABC = bytes.fromhex(
    "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed"
    "8086072ba1e7cc2358baeca134c825a7"
)
SHA512_ABC = bytes.fromhex(
    "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
    "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"
)
# FIPS 202 (SHA3-256 and SHA3-512 of "abc", as in the NIST CSRC example values).
SHA3_256_ABC = bytes.fromhex("3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532")
SHA3_512_ABC = bytes.fromhex(
    "b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e"
    "10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0"
)
# RFC 7693 Appendix A (BLAKE2b-512 of "abc").
BLAKE2B_512_ABC = bytes.fromhex(
    "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
    "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923"
)
_FIPS180_SOURCE = "FIPS 180-4 examples (NIST CSRC example values), message \"abc\""
_FIPS202_SOURCE = "FIPS 202 examples (NIST CSRC example values), message \"abc\""
_RFC7693_SOURCE = "RFC 7693 Appendix A (BLAKE2b-512 of \"abc\")"

# --------------------------------------------------------------------------------------
# Vectors: HKDF-SHA256 -- RFC 5869 Appendix A.1, A.2, A.3.
# --------------------------------------------------------------------------------------

RFC5869_A1 = HkdfVector(
    ikm=b"\x0b" * 22,
    salt=bytes(range(0x00, 0x0D)),
    info=bytes(range(0xF0, 0xFA)),
    okm=bytes.fromhex(
        "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
        "34007208d5b887185865"
    ),
)
RFC5869_A2 = HkdfVector(
    ikm=bytes(range(0x00, 0x50)),
    salt=bytes(range(0x60, 0xB0)),
    info=bytes(range(0xB0, 0x100)),
    okm=bytes.fromhex(
        "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c"
        "59045a99cac7827271cb41c65e590e09da3275600c2f09b8367793a9aca3db71"
        "cc30c58179ec3e87c14c01d5c1f3434f1d87"
    ),
)
# A.3: zero-length salt and info.
RFC5869_A3 = HkdfVector(
    ikm=b"\x0b" * 22,
    salt=b"",
    info=b"",
    okm=bytes.fromhex(
        "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d"
        "9d201395faa4b61a96c8"
    ),
)

# --------------------------------------------------------------------------------------
# Vectors: X25519 / X448 -- RFC 7748.
# --------------------------------------------------------------------------------------

# §5.2, the two single-step scalar multiplication vectors: (scalar, u, output).
RFC7748_X25519_SCALARMULT = (
    (
        bytes.fromhex("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4"),
        bytes.fromhex("e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c"),
        bytes.fromhex("c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552"),
    ),
    (
        bytes.fromhex("4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d"),
        bytes.fromhex("e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493"),
        bytes.fromhex("95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957"),
    ),
)

# §6.1 (Curve25519 Diffie-Hellman): Alice's and Bob's private and public keys, shared K.
RFC7748_X25519_ALICE_PRIVATE = bytes.fromhex(
    "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"
)
RFC7748_X25519_ALICE_PUBLIC = bytes.fromhex(
    "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"
)
RFC7748_X25519_BOB_PRIVATE = bytes.fromhex(
    "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"
)
RFC7748_X25519_BOB_PUBLIC = bytes.fromhex(
    "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"
)
RFC7748_X25519_SHARED = bytes.fromhex(
    "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"
)

# §6.2 (Curve448 Diffie-Hellman).
RFC7748_X448_ALICE_PRIVATE = bytes.fromhex(
    "9a8f4925d1519f5775cf46b04b5800d4ee9ee8bae8bc5565d498c28dd9c9baf5"
    "74a9419744897391006382a6f127ab1d9ac2d8c0a598726b"
)
RFC7748_X448_ALICE_PUBLIC = bytes.fromhex(
    "9b08f7cc31b7e3e67d22d5aea121074a273bd2b83de09c63faa73d2c22c5d9bb"
    "c836647241d953d40c5b12da88120d53177f80e532c41fa0"
)
RFC7748_X448_BOB_PRIVATE = bytes.fromhex(
    "1c306a7ac2a0e2e0990b294470cba339e6453772b075811d8fad0d1d6927c120"
    "bb5ee8972b0d3e21374c9c921b09d1b0366f10b65173992d"
)
RFC7748_X448_BOB_PUBLIC = bytes.fromhex(
    "3eb7a829b0cd20f5bcfc0b599b6feccf6da4627107bdb0d4f345b43027d8b972"
    "fc3e34fb4232a13ca706dcb57aec3dae07bdc1c67bf33609"
)
RFC7748_X448_SHARED = bytes.fromhex(
    "07fff4181ac6cc95ec1c16a94a0f74d12da232ce40a77552281d282bb60c0b56"
    "fd2464c335543936521c24403085d59a449a5037514a879d"
)

# --------------------------------------------------------------------------------------
# Vectors: Ed25519 / Ed448 -- RFC 8032.
# --------------------------------------------------------------------------------------

# §7.1, TEST 1 (empty message), TEST 2 (one byte), TEST 3 (two bytes).
RFC8032_ED25519 = (
    EddsaVector(
        secret=bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60"),
        public=bytes.fromhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a"),
        message=b"",
        signature=bytes.fromhex(
            "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
            "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"
        ),
    ),
    EddsaVector(
        secret=bytes.fromhex("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb"),
        public=bytes.fromhex("3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c"),
        message=bytes.fromhex("72"),
        signature=bytes.fromhex(
            "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
            "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"
        ),
    ),
    EddsaVector(
        secret=bytes.fromhex("c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7"),
        public=bytes.fromhex("fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025"),
        message=bytes.fromhex("af82"),
        signature=bytes.fromhex(
            "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac"
            "18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"
        ),
    ),
)

# §7.4, first test ("Blank": empty message, no context).
RFC8032_ED448_BLANK = EddsaVector(
    secret=bytes.fromhex(
        "6c82a562cb808d10d632be89c8513ebf6c929f34ddfa8c9f63c9960ef6e348a3"
        "528c8a3fcc2f044e39a3fc5b94492f8f032e7549a20098f95b"
    ),
    public=bytes.fromhex(
        "5fd7449b59b461fd2ce787ec616ad46a1da1342485a70e1f8a0ea75d80e96778"
        "edf124769b46c7061bd6783df1e50f6cd1fa1abeafe8256180"
    ),
    message=b"",
    signature=bytes.fromhex(
        "533a37f6bbe457251f023c0d88f976ae2dfb504a843e34d2074fd823d41a591f"
        "2b233f034f628281f2fd7a22ddd47d7828c59bd0a21bfd3980ff0d2028d4b18a"
        "9df63e006c5d1c2d345b925d8dc00b4104852db99ac5c7cdda8530a113a0f4db"
        "b61149f05a7363268c71d95808ff2e652600"
    ),
)

# --------------------------------------------------------------------------------------
# Vectors: deterministic ECDSA -- RFC 6979 Appendix A.2.5 (P-256) and A.2.6 (P-384),
# message "sample", with SHA-256 and SHA-384 respectively.
# --------------------------------------------------------------------------------------

RFC6979_P256_SHA256 = EcdsaVector(
    private=0xC9AFA9D845BA75166B5C215767B1D6934E50C3DB36E89B127B8A622B120F6721,
    public_x=0x60FED4BA255A9D31C961EB74C6356D68C049B8923B61FA6CE669622E60F29FB6,
    public_y=0x7903FE1008B8BC99A41AE9E95628BC64F2F1B20C2D7E9F5177A3C294D4462299,
    message=b"sample",
    r=0xEFD48B2AACB6A8FD1140DD9CD45E81D69D2C877B56AAF991C34D0EA84EAF3716,
    s=0xF7CB1C942D657C41D436C7A1B6E29F65F3E900DBB9AFF4064DC4AB2F843ACDA8,
)
RFC6979_P384_SHA384 = EcdsaVector(
    private=int(
        "6B9D3DAD2E1B8C1C05B19875B6659F4DE23C3B667BF297BA9AA47740787137D8"
        "96D5724E4C70A825F872C9EA60D2EDF5",
        16,
    ),
    public_x=int(
        "EC3A4E415B4E19A4568618029F427FA5DA9A8BC4AE92E02E06AAE5286B300C64"
        "DEF8F0EA9055866064A254515480BC13",
        16,
    ),
    public_y=int(
        "8015D9B72D7D57244EA8EF9AC0C621896708A59367F9DFB9F54CA84B3F1C9DB1"
        "288B231C3AE0D4FE7344FD2533264720",
        16,
    ),
    message=b"sample",
    r=int(
        "94EDBB92A5ECB8AAD4736E56C691916B3F88140666CE9FA73D64C4EA95AD133C"
        "81A648152E44ACF96E36DD1E80FABE46",
        16,
    ),
    s=int(
        "99EF4AEB15F178CEA1FE40DB2603138F130E740A19624526203B6351D0A3A94F"
        "A329C145786E679E7B82C71A38628AC8",
        16,
    ),
)

# --------------------------------------------------------------------------------------
# Vectors: ECDH
# --------------------------------------------------------------------------------------

# RFC 7027 Appendix A.1 (brainpoolP256r1): dA, Q_A, dB, Q_B, shared point Z.
RFC7027_BRAINPOOLP256R1 = EcdhVector(
    private_a=0x81DB1EE100150FF2EA338D708271BE38300CB54241D79950F77B063039804F1D,
    public_a=(
        0x44106E913F92BC02A1705D9953A8414DB95E1AAA49E81D9E85F929A8E3100BE5,
        0x8AB4846F11CACCB73CE49CBDD120F5A900A69FD32C272223F789EF10EB089BDC,
    ),
    private_b=0x55E40BC41E37E3E2AD25C3C6654511FFA8474A91A0032087593852D3E7D76BD3,
    public_b=(
        0x8D2D688C6CF93E1160AD04CC4429117DC2C41825E1E9FCA0ADDD34E6F1B39F7B,
        0x990C57520812BE512641E47034832106BC7D3E8DD0E4C7F1136D7006547CEC6A,
    ),
    shared=(
        0x89AFC39D41D3B327814B80940B042590F96556EC91E6AE7939BCE31F3A18BF2B,
        0x49C27868F4ECA2179BFD7D59B1E3BF34C1DBDE61AE12931648F43E59632504DE,
    ),
)

# RFC 5903 §8.1 (ECDH-256, i.e. P-256 / secp256r1): i, g^i, r, g^r, g^ir.
RFC5903_P256 = EcdhVector(
    private_a=0xC88F01F510D9AC3F70A292DAA2316DE544E9AAB8AFE84049C62A9C57862D1433,
    public_a=(
        0xDAD0B65394221CF9B051E1FECA5787D098DFE637FC90B9EF945D0C3772581180,
        0x5271A0461CDB8252D61F1C456FA3E59AB1F45B33ACCF5F58389E0577B8990BB3,
    ),
    private_b=0xC6EF9C5D78AE012A011164ACB397CE2088685D8F06BF9BE0B283AB46476BEE53,
    public_b=(
        0xD12DFB5289C8D4F81208B70270398C342296970A0BCCB74C736FC7554494BF63,
        0x56FBF3CA366CC23E8157854C13C58D6AAC23F046ADA30F8353E74F33039872AB,
    ),
    shared=(
        0xD6840F6B42F6EDAFD13116E0E12565202FEF8E9ECE7DCE03812464D04B9442DE,
        0x522BDE0AF0D8585B8DEF9C183B5AE38F50235206A8674ECB5D98EDB20EB153A2,
    ),
)

# RFC 5903 §8.2 (ECDH-384, i.e. P-384 / secp384r1).
RFC5903_P384 = EcdhVector(
    private_a=int(
        "099F3C7034D4A2C699884D73A375A67F7624EF7C6B3C0F160647B67414DCE655"
        "E35B538041E649EE3FAEF896783AB194",
        16,
    ),
    public_a=(
        int(
            "667842D7D180AC2CDE6F74F37551F55755C7645C20EF73E31634FE72B4C55EE6"
            "DE3AC808ACB4BDB4C88732AEE95F41AA",
            16,
        ),
        int(
            "9482ED1FC0EEB9CAFC4984625CCFC23F65032149E0E144ADA024181535A0F38E"
            "EB9FCFF3C2C947DAE69B4C634573A81C",
            16,
        ),
    ),
    private_b=int(
        "41CB0779B4BDB85D47846725FBEC3C9430FAB46CC8DC5060855CC9BDA0AA2942"
        "E0308312916B8ED2960E4BD55A7448FC",
        16,
    ),
    public_b=(
        int(
            "E558DBEF53EECDE3D3FCCFC1AEA08A89A987475D12FD950D83CFA41732BC509D"
            "0D1AC43A0336DEF96FDA41D0774A3571",
            16,
        ),
        int(
            "DCFBEC7AACF3196472169E838430367F66EEBE3C6E70C416DD5F0C68759DD1FF"
            "F83FA40142209DFF5EAAD96DB9E6386C",
            16,
        ),
    ),
    shared=(
        int(
            "11187331C279962D93D604243FD592CB9D0A926F422E47187521287E7156C5C4"
            "D603135569B9E9D09CF5D4A270F59746",
            16,
        ),
        int(
            "A2A9F38EF5CAFBE2347CF7EC24BDD5E624BC93BFA82771F40D1B65D06256A852"
            "C983135D4669F8792F2C1D55718AFBB4",
            16,
        ),
    ),
)

# --------------------------------------------------------------------------------------
# Vectors: RSA. OAEP and PSS are randomised, so a KAT exists only where the randomness
# is published too. Source: RSA Laboratories, PKCS #1 v2.1 test vectors
# (pkcs-1v2-1-vec.zip; the algorithms are unchanged in RFC 8017), 1024-bit key of
# Example 1, SHA-1 and MGF1-SHA-1 as specified by those files.
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RsaOaepVector:
    """An RSAES-OAEP known answer: key (n, e, d), message, OAEP seed, ciphertext."""

    n: int
    e: int
    d: int
    message: bytes
    seed: bytes
    ciphertext: bytes


@dataclass(frozen=True)
class RsaPssVector:
    """An RSASSA-PSS known answer: public key (n, e), message, salt length, signature."""

    n: int
    e: int
    message: bytes
    salt_length: int
    signature: bytes


# oaep-vect.txt, "RSAES-OAEP Encryption Example 1.1" (key of Example 1). d is the private
# exponent given there; p and q are recovered from (n, e, d).
PKCS1_OAEP_EXAMPLE_1_1 = RsaOaepVector(
    n=int.from_bytes(
        bytes.fromhex(
            "a8b3b284af8eb50b387034a860f146c4919f318763cd6c5598c8ae4811a1e0ab"
            "c4c7e0b082d693a5e7fced675cf4668512772c0cbc64a742c6c630f533c8cc72"
            "f62ae833c40bf25842e984bb78bdbf97c0107d55bdb662f5c4e0fab9845cb514"
            "8ef7392dd3aaff93ae1e6b667bb3d4247616d4f5ba10d4cfd226de88d39f16fb"
        ),
        "big",
    ),
    e=0x010001,
    d=int.from_bytes(
        bytes.fromhex(
            "53339cfdb79fc8466a655c7316aca85c55fd8f6dd898fdaf119517ef4f52e8fd"
            "8e258df93fee180fa0e4ab29693cd83b152a553d4ac4d1812b8b9fa5af0e7f55"
            "fe7304df41570926f3311f15c4d65a732c483116ee3d3d2d0af3549ad9bf7cbf"
            "b78ad884f84d5beb04724dc7369b31def37d0cf539e9cfcdd3de653729ead5d1"
        ),
        "big",
    ),
    message=bytes.fromhex(
        "6628194e12073db03ba94cda9ef9532397d50dba79b987004afefe34"
    ),
    seed=bytes.fromhex(
        "18b776ea21069d69776a33e96bad48e1dda0a5ef"
    ),
    ciphertext=bytes.fromhex(
        "354fe67b4a126d5d35fe36c777791a3f7ba13def484e2d3908aff722fad468fb"
        "21696de95d0be911c2d3174f8afcc201035f7b6d8e69402de5451618c21a535f"
        "a9d7bfc5b8dd9fc243f8cf927db31322d6e881eaa91a996170e657a05a266426"
        "d98c88003f8477c1227094a0d9fa1e8c4024309ce1ecccb5210035d47ac72e8a"
    ),
)

# pss-vect.txt, "RSASSA-PSS Signature Example 1.1" (key of Example 1, 20-byte salt).
PKCS1_PSS_EXAMPLE_1_1 = RsaPssVector(
    n=int.from_bytes(
        bytes.fromhex(
            "a56e4a0e701017589a5187dc7ea841d156f2ec0e36ad52a44dfeb1e61f7ad991"
            "d8c51056ffedb162b4c0f283a12a88a394dff526ab7291cbb307ceabfce0b1df"
            "d5cd9508096d5b2b8b6df5d671ef6377c0921cb23c270a70e2598e6ff89d19f1"
            "05acc2d3f0cb35f29280e1386b6f64c4ef22e1e1f20d0ce8cffb2249bd9a2137"
        ),
        "big",
    ),
    e=0x010001,
    message=bytes.fromhex(
        "cdc87da223d786df3b45e0bbbc721326d1ee2af806cc315475cc6f0d9c66e1b6"
        "2371d45ce2392e1ac92844c310102f156a0d8d52c1f4c40ba3aa65095786cb76"
        "9757a6563ba958fed0bcc984e8b517a3d5f515b23b8a41e74aa867693f90dfb0"
        "61a6e86dfaaee64472c00e5f20945729cbebe77f06ce78e08f4098fba41f9d61"
        "93c0317e8b60d4b6084acb42d29e3808a3bc372d85e331170fcbf7cc72d0b71c"
        "296648b3a4d10f416295d0807aa625cab2744fd9ea8fd223c42537029828bd16"
        "be02546f130fd2e33b936d2676e08aed1b73318b750a0167d0"
    ),
    salt_length=20,
    signature=bytes.fromhex(
        "9074308fb598e9701b2294388e52f971faac2b60a5145af185df5287b5ed2887"
        "e57ce7fd44dc8634e407c8e0e4360bc226f3ec227f9d9e54638e8d31f5051215"
        "df6ebb9c2f9579aa77598a38f914b5b9c1bd83c4e2f9f382a0d0aa3542ffee65"
        "984a601bc69eb28deb27dca12c82c2d4c3f66cd500f1ff2b994d8a4e30cbb33c"
    ),
)
_PKCS1_SOURCE = (
    "PKCS #1 v2.1 test vectors (RSA Laboratories pkcs-1v2-1-vec, {file}), Example 1.1; "
    "algorithms as in RFC 8017"
)

# --------------------------------------------------------------------------------------
# Vectors: ML-KEM (FIPS 203). cryptography's encapsulation is randomised, so the KATs
# cover the deterministic parts: KeyGen_internal(d, z) (compared through H(ek) =
# SHA3-256(ek)) and Decaps on a published ciphertext.
# --------------------------------------------------------------------------------------

# C2SP CCTV, ML-KEM/unluckysample/ML-KEM-768.txt ("unlucky" vectors that need an
# unusually large number of SHAKE128 reads in SampleNTT): d, z, m, K, c. The expected
# H(ek) is the 32 bytes that precede z at the end of the published dk.
CCTV_MLKEM768_UNLUCKY = MlKemVector(
    seed=bytes.fromhex(
        "82c4a361586b9715c2375a45fb85c32d04be7fe6e26acd820ec5d4080093afe1"  # d
        "8476013560151d986dc7834dcb57c75f845f8d7ee71558d0955f3f4feb723cf2"  # z
    ),
    ek_sha3_256=bytes.fromhex("451f9b6547b8f6e927fbfe7598658160206040fdb57dd39ba8bf1f3a5ff89b9c"),
    ciphertext=bytes.fromhex(
        "696ef1699d5ac2aa9a012a64c60c6c214dcedec75ff87fb3a5850044202a790b"
        "fdaa6fb517a8c714a6685b1eea8ac01d28e2f1e7350e79b1371b2aab98723f40"
        "ac1adb809751118a53eb56f13cf9fadf698c7a2ae127746bb661f6772d822777"
        "7c22d388e2a0f635f97913191033d3c487a9d2822348be19710e5f47d2b740c0"
        "44f39ddae838699f62a1056dbc43364046d36a972f7110c88e900ca37daec640"
        "39b0c96319cef8ea01d5974c5da29392222b838e7c3d19892aa70f3a232b64f9"
        "4ae72ff2032941a70dd71e2e24c987fe4c2f5027fd435618288f50e8d248fbe0"
        "09d93af8b0dea451414f2cbaceda51b3a7aabff1faed24293e0d5d57da898686"
        "30e1b09a6b27a034bd5da40d622e0b9507e64d81669a1074b5f67728a9fadb60"
        "0bc57d55d9c3a0fe376fdefd32a30b1931315210bd8622ff0b2ad9bf6d007499"
        "42e07a90572d0468d5f5a95aa6c338b2e5e5175dd8f4bd118e8849be829e3fb0"
        "8628101a33b1295b1c7ee3e9158d4beaea203a22c1b97af6ad7fc004f0f9895a"
        "51da0c26a7b46734c418afe98ddbaada3fffcd4642075bd23e044154cfe19a0b"
        "6a05e24e83c55057a50d24f956617534dfcf99f134bbc539b1e7c9c3d00f59de"
        "4351e9ecfbec3f66374ecea6ab72d0fd00e0f91461db0a74fc5ab63b30a2caf4"
        "55fea339878ba665aeeee0b52d427a4e4ccad8526386951f5b1d61778a56dfa2"
        "43d3f6186aa4f8fd953127599bc14da3e8e918aaa5b4182a9bde4b5bb1871a97"
        "2ef526b9f4417373001842f2b3eae1fe0d4693220b843bf265c59a647930946b"
        "dd72aa54a1af18daa3864327d91b80611c30bc1e16a89f71ddc51cf6fce4a179"
        "239d0f21a0bce88c86499ef9ca1219039be087664c365149b3683b94fcb06dc8"
        "58dea2f5bb7edb32fdc09cd91c74bfe29608b48d0db29061099671f6cf8dfbba"
        "2b1db456eca1c8657de5e982f11da9c3173a633ba7ec0066a717bc6eadde242f"
        "3e03cddab1c42def35f9cc2d6fa2f4222bfa096d321dd504d6c8dd6e6d189371"
        "51330be89bf2a218752442f8a50df3075463476db1e0a5275fd7958f7b650a11"
        "a36db809cee7074bc763d035245c3c6da7fcc93425175e0cb3f7407000fb6c0b"
        "7a7450ada28c05c34f883af2cd0965826cec71435d87e8cd192137e3abae4050"
        "d68be1d97fa3af08728daa4ba05aa7f61b8a7f52701d6c969b25fd2fd1a68a5b"
        "2098a348273337782ec52143e1f51e5a512e91f2469da136e8d8f96af7cc6fe2"
        "1f929203bcd12de6826bba19cfe5a69bc2c3d3f503a14cab590591cd134b375f"
        "eaae76c764c95dae6644551c6d5bce2665f9c1dd4c33694100d88fcc4e3282eb"
        "8c1766917956199273f0f80c67dc3e944a449ab2ed9d58554c62ee43bdc2d140"
        "8d784f08c0c71d6171176ca6c912626c45eb1fa1292774885a73bd614ae83379"
        "7a1c84afee1a7e7c105eca8273b304cbc44acab0305aba4ef6ba671739d1f80d"
        "09c7640acea982655b3294ee0371019b134559be391c29d990f82f8a1dd4a715"
    ),
    shared_secret=bytes.fromhex(
        "4f7cc64c040fc4e335a539691f4638caf8b1bf5da6455754afe699e41813801b"
    ),
)

# C2SP CCTV, ML-KEM/unluckysample/ML-KEM-1024.txt (same construction, ML-KEM-1024).
CCTV_MLKEM1024_UNLUCKY = MlKemVector(
    seed=bytes.fromhex(
        "9526e27d918ae2379c067c81c59eca33fcd7045ea098c6ea6ed7d8aaea511cb6"  # d
        "8476013560151d986dc7834dcb57c75f845f8d7ee71558d0955f3f4feb723cf2"  # z
    ),
    ek_sha3_256=bytes.fromhex("0b3db073d1219b2145b830dca13b466e6afa69b00c86e05b01385ed5af0c4876"),
    ciphertext=bytes.fromhex(
        "05ebe8bf5036f51c3c961d9ac47b0b93d821170a22db2360c8004814808a871b"
        "4f4cb04438595b4338be7dee6b927ce07da00ff283c7ead22f8a58e6d3149262"
        "e60431975f8da4e1f1851eb3b9159288cc29139a7fadab774131eb17cd11811c"
        "9764caf5474de6de53ac1f98db295141ec3f3a35cbf3a0d741455daef368f105"
        "df233d9d6abb92e331e6d4f67ce8f8aaab546c4704d158c477c371e0d3acab69"
        "0154df0da67e9e36dbab01aa3f1cf59fa90d9c895b79b268c46db4c02778f994"
        "9186f7a99618535b1ca431b86226ea1b4f0f11e8c7e96396e26367ad9b8621b2"
        "4a31b8597630a1b252a32b955d2bfa30b88818ae0677fea5cadf9a4eb4f8833c"
        "9f2175f872d456d9f4fc1af45e2f2f11e04f53701c36105ac68b8909c191a74b"
        "30221b1b0b24bb250d7318bc30a8ffe12616514dc2782dad229ce8a9fad0ccff"
        "d1257f4543d79d903cc8fd4cf84748bd631a4c22af93134a8d1bc7716d9b2676"
        "844ed501e94aa4925c694009f9d3c9736d8c56284915e23f7801e9f0878d0b3b"
        "1bce31915350050f1d8d40e708452be07f462085e00f11968c338d573bcf7209"
        "b05a1a673a87a220aa3db2d8f1cbabe497bcf0f42e8067ba57af6101d8f2fb62"
        "d82ebaf148c19b58a8c4f2f05301a82c51db01d9c7fd16b3557bdb418cfddb5d"
        "0308e7d77f225388e3cc8cf4f7372b3c58292c4375d177494fee0ddd2ed8bf27"
        "0272c73672f1db76ee6381410eb3d8c78b9bf20f7e4d5f5bca05dcc4bc0d1b4e"
        "de1d03eeb213abf4b81fb06087e2dd3c232421053e6e7109e46d9a96a1eeb2b4"
        "f81d4e0fd976e193bc78100488a5a7bd86fa12c9a4616ae407e9736841b9766d"
        "6b8c7f94e52a0ff22af9163f530d3bfd4ad5b30c94d39d1a887f9000f13a51ee"
        "8df211dc554eb7d2de7789f82a6353285250be2f995e3107121c5cb2ab21d53a"
        "f35e3c243769d63c117d7d9bf3996e66bd70a7db20e348c9492299160a89d87e"
        "8e5f5906c0ad9b9d695ecd006cf8ae6e28237edcd6b1efd5aa282896ff0ab131"
        "0a3351eac19038b91c04b5a956fe87d9639c4c0f8bc0de082483143d920fe005"
        "3926da78bf1c4a9f7213fd2aaa9477174451ec80dfd648384bf7a17934a6029e"
        "7caaa5d39652c8a762b5ff9792b6aeed255d32fcac6101ecf6b1a8fb0404d887"
        "5c764b33437d86fff1883ecd7fd3596791992fb38ee1b4e4c124e40453b462e9"
        "d775d9522dc12a8a87e5ba4a1ead55ed66dde8c483707b99c4cefcd0f5ddaf95"
        "e2d53566e02d3d6173adcd1d00a2f4ef692d7413ab1a11c7a1fa09fa02cab71d"
        "d23ad4eacadf8bea4178553ffd653823448a00ff1663a5ce63b6ab1ec1f504de"
        "226dd9d6fe11a4175b0b6dcec73caa2094efd3fc572d8f404d64d0097588f3c4"
        "aed9ddba08db51d9dfa4e88fdcc60ed13acff53bd614fd3d25f81b3337892829"
        "0716d7ffcdc61ba12ed4a5da993bcf142a94851be2e0dd4193dcf7676b52eb8e"
        "0289cd32c6cb37eaf8e431c3db867eb4637bc3c524c7864a4872c2824f35dc64"
        "8a4a11a34e31d445ad4d4cfa3f8929da780f980e8888cbaf0e81ff39dc0082a9"
        "ff558fff44df62c4cbd43d65a065af4dd3be760f21c4c040b97f6035c4c2067f"
        "65a167d243ed6bb5003150d2e831d5d8df6eced677d227625fb0e2b19634a551"
        "412e8ff92f49fe6f5545882cb58ee0e790df5c5f1bfbdcb688d61b54219b562c"
        "1ad0bc80485d54c6bfadad18413d0bb8f0a18b00ba1efc5a632caef5a338c82d"
        "ca31adc88c67f861863fef441a311198c5c232af7cb3cb400eead5037df36b74"
        "91dad3208f9a639faa4dbb4c270c2d49b22ca99fdbcf82df95374d3ca1bded5f"
        "3ca005cbb3ad19683072afa53ec06c1d52e53901368d1c48e2f0094ad70d8907"
        "367ef2ba5000fcfcd2d8929dce6482790707b5c1f0051f77cc2340ee9261ae23"
        "e6fd7da47f5085b5b210c1241b1ceb539791df6794c4aeea8a3f451b8b8f39ab"
        "7f74b3f5de85aef50b0773d36afd6c43b453d58f24f99931794334303f5ed1c4"
        "2766e31ab6f3cf2827f9c91b697c0d2fccc2290d1b57e4004763ce95a112cadc"
        "2f37b27dea2f9809da6acbe86e8b94244f152d97e74727cefdcdecc94aca22c7"
        "2b7d8595ffc64628b0cf790fdc5f2b907905eab78dc71fe92e73f7258b2fdc20"
        "6afb4ce778fadefd39a394ae3af2810a8f7848bd93ff83bd84d16a3e713129e6"
    ),
    shared_secret=bytes.fromhex(
        "984b648fda1cc7ff5fb01d89387f1827ffd43f0bd6c12b157b8b6101273a01ee"
    ),
)

# Wycheproof testvectors_v1/mlkem_768_test.json, tcId 1 (source "CCTV/strcmp"): a
# ciphertext that must take the implicit-rejection path (K = J(z || c)) even though the
# re-encryption agrees with it up to a zero byte. ek_sha3_256 is SHA3-256 of the
# published "ek" field.
WYCHEPROOF_MLKEM768_STRCMP = MlKemVector(
    seed=bytes.fromhex(
        "cbfc4405d1b2a3a386c94c25e0f2d5f5ee92cb0388ff4d6aa04223086d51c3fd"
        "24752da14c9fc3b8ae0d9e4a8b1016b8d8fc69e229c03ea2ef08a4ae0cffc37f"
    ),
    ek_sha3_256=bytes.fromhex("1369c4700afc1f4462f21bb71a2c07a74a3fa2e8822577588d6140aa692cff71"),
    ciphertext=bytes.fromhex(
        "00e96c44eb5f5380d80b4cb05d608971a28fbe838b912b558bf9676c6c67c969"
        "2ed6ea063fc47b70d5d6004825c269b9cb8e68b5728d67f44844d97686a11154"
        "e3cbd4a6f9e47524d93d851bdce480d7762ded09be53d17cce3ee28dc5a06911"
        "c062b99b218355dd5822108c55e2c67f7ea0b74b6189b33b4589d8ff9d0c867d"
        "13edaaf1c5f724675320beda3e6acc673c048fa04a1b30f899227d5a555e08a4"
        "12a47b7db75eb118a8844a71b186880426f6bb6e77186d18e753cbcce93c9fb7"
        "6c729875b4d473eeca8dab9941969faef04df9ce3178e7341eab416d28bb7aee"
        "12bfb8f4c3df814eff45a0187329079acfc41a8e8dba7b08d111f02e37a1d2b6"
        "9e57eef808fcc6ae23385534a420a93dfb6a95c73e2f1016177c4fe9d3ced769"
        "e277293aaceded6d07efc7890eaa885bd1e73f9e5da2b9cfda0d44cbc9090705"
        "ac2ce3e7bcd7775b593c706e45ddc97d3a65d9b7e73673f9473df5bfec689671"
        "f73e7f6ee77c730a8ebda1f0b2c112a71904d6f28a51d8d479f8323fb485e722"
        "f5c4d5857e95989a9cbaf273efd04fc3cbde98baa9969e095e88accecfbd12ef"
        "2155497a5b15fe91a70d1106b91a568363bfc2d6736cc8138cbc41ddf1e54fd4"
        "0511e27d89e2c26c027b63c156e2bbb998faaed3d72186f0cc626dad39a782dc"
        "da2087fd13a9498e10b41b685646a227ea1166a5632c195983f4aba2b718b407"
        "4030d57126d34c38349892007acbea9e393b967dc3146b270f080a1f0bee90d6"
        "5a095a6352a7718ed1717a8025a2bd38c66d120baf4247676a1fe044a57ce268"
        "c078f8ff46cc26fe4f9c7a03d6467adacb8418d26273662bce1f7bc00b906e00"
        "88e95dc0fb419e2232e85aac77b9e7cd563e604de5e1d3e9693dcd3b19865cf4"
        "250773691e7e0af9c2755cd31f49d1f96708f3ba2f0b98184525abb869e12d5c"
        "ea0ac1740181a875035300b05a54b8d42ee3b4ae92b06e43cd807e2b096c977f"
        "23c61ef8c989c52ed83754076dea1323f639250bef61bdf903bf7961cec89ba6"
        "942d9d0647ac9c8195d93ed8abcedf25754644035719a5a0a1c8c0798912726a"
        "9a8258e4c10ae7485322ed9ba331f6f090c4b492a4fcf53d753cd34f28ec0443"
        "fce0724f43c89a3942169d5099a8f7430f38691ebce2e3fe4f600d82c7ccedf6"
        "0673f8e5d4c1a9f84b8b5b23f5ed63defb6a7205e0a8b105bdc6ff4568fc78cb"
        "4456b02fedb7f4c48f6fd6b69216a3319821039db40e19a31a0b0c9d471d5a7a"
        "73865d26f8be3595525b1ec4a8579efd07ea98e2602e2bffdfd8febc5c7b4c73"
        "6d326b5030ccc6faf9420a9c156a8f4516b9fff675459dfdcd4ef85d7adbdffd"
        "60f4a39628e399cc752c2e99ab2f431dc765e7c9d206bfe32649fbef4ef48b1d"
        "7936fc74766d724350ee2245a8d5f23fbc6c7ed8b57168ce1e864e49d7f8c475"
        "dcda140bd42473825b3c72eb8c54780188813011e1962a503f9b516e13226de6"
        "375b204733b0192183c8f55e870e61cf8947c3191790bc0b657bc43aebc9d86c"
    ),
    shared_secret=bytes.fromhex(
        "76c10bb1d86d96d7eb18e298363e51f7728e113f455df7d15017940ed3541451"
    ),
)

# --------------------------------------------------------------------------------------
# Vectors: ML-DSA (FIPS 204). Signing in cryptography is hedged (randomised), so the KAT
# covers KeyGen from a seed. NIST ACVP-Server, gen-val/json-files/ML-DSA-keyGen-FIPS204
# (prompt.json / expectedResults.json, vsId 42), tcId 1 (ML-DSA-44). The 1312-byte
# expected public key is stored as its SHA3-256 hash.
# --------------------------------------------------------------------------------------

ACVP_MLDSA44_KEYGEN_SEED = bytes.fromhex(
    "4be7a01a99a5e5bcfe3c06785d8e4ec664082227d86704e9e44862623a05c8b3"
)
ACVP_MLDSA44_KEYGEN_PK_SHA3_256 = bytes.fromhex(
    "61a8e825ab592733b78b5c8a1627d134146c6c8035b50ff372f3ea13df274f28"
)

# FIPS 203 Table 3 and FIPS 204 Table 2: sizes in bytes.
MLKEM_SIZES = {"ML-KEM-768": (1184, 1088), "ML-KEM-1024": (1568, 1568)}  # (ek, ct)
MLDSA_SIZES = {"ML-DSA-44": (1312, 2420), "ML-DSA-65": (1952, 3309), "ML-DSA-87": (2592, 4627)}

# --------------------------------------------------------------------------------------
# Vectors: Diffie-Hellman / ElGamal with Python integers. Nothing is published for
# ElGamal; this is the textbook toy group (p = 23, g = 5), small enough to check by hand:
# 5^6 = 8, 5^15 = 19, 19^6 = 8^15 = 2 (mod 23); ElGamal of m = 10 with k = 3 under
# h = 8 gives (5^3, 10 * 8^3) = (10, 14) (mod 23).
# --------------------------------------------------------------------------------------

TOY_DH_GROUP = (23, 5)  # (p, g)
TOY_DH_PRIVATE = (6, 15)  # (a, b)
TOY_DH_PUBLIC = (8, 19)  # (g^a, g^b)
TOY_DH_SHARED = 2
TOY_ELGAMAL = (10, 3, (10, 14))  # (message, ephemeral k, ciphertext (c1, c2))

# --------------------------------------------------------------------------------------
# Vectors: textbook RSA with Python integers (the rsa-textbook scheme, E3). The worked
# example of the RSA paper itself: R. L. Rivest, A. Shamir, L. Adleman, "A Method for
# Obtaining Digital Signatures and Public-Key Cryptosystems", CACM 21(2), 1978, section
# VIII: p = 47, q = 59, n = 2773, e = 17, d = 157, and the first block of "ITS ALL GREEK
# TO ME", M = 920, enciphers to C = 920^17 = 948 (mod 2773).
# --------------------------------------------------------------------------------------

RSA_PAPER_KEY = (47, 59, 17, 157)  # (p, q, e, d)
RSA_PAPER_BLOCK = (920, 948)  # (M, C)


# ======================================================================================
# Checks: AES-GCM (GCM specification test cases; SP 800-38D)
# ======================================================================================


def _aead_cryptography(cipher_cls: Any, vector: AeadVector) -> None:
    """Encrypt, decrypt and tamper-test one AEAD vector with a cryptography AEAD class."""
    from cryptography.exceptions import InvalidTag

    aead = cipher_cls(vector.key)
    aad = vector.aad or None
    sealed = aead.encrypt(vector.nonce, vector.plaintext, aad)
    _expect_equal("ciphertext || tag", sealed, vector.ciphertext + vector.tag)
    opened = _expect_accepted(
        "the published ciphertext and tag",
        lambda: aead.decrypt(vector.nonce, vector.ciphertext + vector.tag, aad),
        InvalidTag,
    )
    _expect_equal("decrypted plaintext", opened, vector.plaintext)
    tampered = vector.ciphertext + _flip_last_bit(vector.tag)
    _expect_rejected(
        "a tag with one flipped bit", lambda: aead.decrypt(vector.nonce, tampered, aad), InvalidTag
    )


def _aead_pycryptodome(new_cipher: Callable[[], Any], vector: AeadVector) -> None:
    """Same as :func:`_aead_cryptography` for a pycryptodome cipher factory."""
    cipher = new_cipher()
    cipher.update(vector.aad)
    ciphertext, tag = cipher.encrypt_and_digest(vector.plaintext)
    _expect_equal("ciphertext", ciphertext, vector.ciphertext)
    _expect_equal("tag", tag, vector.tag)
    cipher = new_cipher()
    cipher.update(vector.aad)
    opened = _expect_accepted(
        "the published ciphertext and tag",
        lambda: cipher.decrypt_and_verify(vector.ciphertext, vector.tag),
        ValueError,
    )
    _expect_equal("decrypted plaintext", opened, vector.plaintext)

    def open_tampered() -> None:
        bad = new_cipher()
        bad.update(vector.aad)
        bad.decrypt_and_verify(vector.ciphertext, _flip_last_bit(vector.tag))

    _expect_rejected("a tag with one flipped bit", open_tampered, ValueError)


def _gcm_cryptography(vector: AeadVector) -> None:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    _aead_cryptography(AESGCM, vector)


def _gcm_pycryptodome(vector: AeadVector) -> None:
    from Crypto.Cipher import AES

    _aead_pycryptodome(lambda: AES.new(vector.key, AES.MODE_GCM, nonce=vector.nonce), vector)


@_register("AES-128-GCM, GCM test case 3", CRYPTOGRAPHY, KAT, _gcm_source(3))
def _check_gcm3_cryptography() -> None:
    _gcm_cryptography(GCM_TEST_CASE_3)


@_register("AES-128-GCM, GCM test case 3", PYCRYPTODOME, KAT, _gcm_source(3))
def _check_gcm3_pycryptodome() -> None:
    _gcm_pycryptodome(GCM_TEST_CASE_3)


@_register("AES-128-GCM with AAD, GCM test case 4", CRYPTOGRAPHY, KAT, _gcm_source(4))
def _check_gcm4_cryptography() -> None:
    _gcm_cryptography(GCM_TEST_CASE_4)


@_register("AES-128-GCM with AAD, GCM test case 4", PYCRYPTODOME, KAT, _gcm_source(4))
def _check_gcm4_pycryptodome() -> None:
    _gcm_pycryptodome(GCM_TEST_CASE_4)


@_register("AES-192-GCM with AAD, GCM test case 10", CRYPTOGRAPHY, KAT, _gcm_source(10))
def _check_gcm10_cryptography() -> None:
    _gcm_cryptography(GCM_TEST_CASE_10)


@_register("AES-192-GCM with AAD, GCM test case 10", PYCRYPTODOME, KAT, _gcm_source(10))
def _check_gcm10_pycryptodome() -> None:
    _gcm_pycryptodome(GCM_TEST_CASE_10)


@_register("AES-256-GCM with AAD, GCM test case 16", CRYPTOGRAPHY, KAT, _gcm_source(16))
def _check_gcm16_cryptography() -> None:
    _gcm_cryptography(GCM_TEST_CASE_16)


@_register("AES-256-GCM with AAD, GCM test case 16", PYCRYPTODOME, KAT, _gcm_source(16))
def _check_gcm16_pycryptodome() -> None:
    _gcm_pycryptodome(GCM_TEST_CASE_16)


# ======================================================================================
# Checks: ChaCha20-Poly1305 (RFC 8439 §2.8.2)
# ======================================================================================


@_register("ChaCha20-Poly1305 AEAD", CRYPTOGRAPHY, KAT, _RFC8439_SOURCE)
def _check_chacha20poly1305_cryptography() -> None:
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    _aead_cryptography(ChaCha20Poly1305, RFC8439_AEAD)


@_register("ChaCha20-Poly1305 AEAD", PYCRYPTODOME, KAT, _RFC8439_SOURCE)
def _check_chacha20poly1305_pycryptodome() -> None:
    from Crypto.Cipher import ChaCha20_Poly1305

    vector = RFC8439_AEAD
    _aead_pycryptodome(lambda: ChaCha20_Poly1305.new(key=vector.key, nonce=vector.nonce), vector)


# ======================================================================================
# Checks: hashes of "abc" (FIPS 180-4, FIPS 202, RFC 7693)
# ======================================================================================


def _digest_cryptography(algorithm: Any) -> bytes:
    from cryptography.hazmat.primitives import hashes

    ctx = hashes.Hash(algorithm)
    ctx.update(HASH_MESSAGE)
    return ctx.finalize()


def _digest_pycryptodome(module_name: str, **kwargs: Any) -> bytes:
    import importlib

    module = importlib.import_module(f"Crypto.Hash.{module_name}")
    return module.new(data=HASH_MESSAGE, **kwargs).digest()


@_register("SHA-256(\"abc\")", CRYPTOGRAPHY, KAT, _FIPS180_SOURCE)
def _check_sha256_cryptography() -> None:
    from cryptography.hazmat.primitives import hashes

    _expect_equal("digest", _digest_cryptography(hashes.SHA256()), SHA256_ABC)


@_register("SHA-256(\"abc\")", PYCRYPTODOME, KAT, _FIPS180_SOURCE)
def _check_sha256_pycryptodome() -> None:
    _expect_equal("digest", _digest_pycryptodome("SHA256"), SHA256_ABC)


@_register("SHA-384(\"abc\")", CRYPTOGRAPHY, KAT, _FIPS180_SOURCE)
def _check_sha384_cryptography() -> None:
    from cryptography.hazmat.primitives import hashes

    _expect_equal("digest", _digest_cryptography(hashes.SHA384()), SHA384_ABC)


@_register("SHA-384(\"abc\")", PYCRYPTODOME, KAT, _FIPS180_SOURCE)
def _check_sha384_pycryptodome() -> None:
    _expect_equal("digest", _digest_pycryptodome("SHA384"), SHA384_ABC)


@_register("SHA-512(\"abc\")", CRYPTOGRAPHY, KAT, _FIPS180_SOURCE)
def _check_sha512_cryptography() -> None:
    from cryptography.hazmat.primitives import hashes

    _expect_equal("digest", _digest_cryptography(hashes.SHA512()), SHA512_ABC)


@_register("SHA-512(\"abc\")", PYCRYPTODOME, KAT, _FIPS180_SOURCE)
def _check_sha512_pycryptodome() -> None:
    _expect_equal("digest", _digest_pycryptodome("SHA512"), SHA512_ABC)


@_register("SHA3-256(\"abc\")", CRYPTOGRAPHY, KAT, _FIPS202_SOURCE)
def _check_sha3_256_cryptography() -> None:
    from cryptography.hazmat.primitives import hashes

    _expect_equal("digest", _digest_cryptography(hashes.SHA3_256()), SHA3_256_ABC)


@_register("SHA3-256(\"abc\")", PYCRYPTODOME, KAT, _FIPS202_SOURCE)
def _check_sha3_256_pycryptodome() -> None:
    _expect_equal("digest", _digest_pycryptodome("SHA3_256"), SHA3_256_ABC)


@_register("SHA3-512(\"abc\")", CRYPTOGRAPHY, KAT, _FIPS202_SOURCE)
def _check_sha3_512_cryptography() -> None:
    from cryptography.hazmat.primitives import hashes

    _expect_equal("digest", _digest_cryptography(hashes.SHA3_512()), SHA3_512_ABC)


@_register("SHA3-512(\"abc\")", PYCRYPTODOME, KAT, _FIPS202_SOURCE)
def _check_sha3_512_pycryptodome() -> None:
    _expect_equal("digest", _digest_pycryptodome("SHA3_512"), SHA3_512_ABC)


@_register("BLAKE2b-512(\"abc\")", CRYPTOGRAPHY, KAT, _RFC7693_SOURCE)
def _check_blake2b_cryptography() -> None:
    from cryptography.hazmat.primitives import hashes

    _expect_equal("digest", _digest_cryptography(hashes.BLAKE2b(64)), BLAKE2B_512_ABC)


@_register("BLAKE2b-512(\"abc\")", PYCRYPTODOME, KAT, _RFC7693_SOURCE)
def _check_blake2b_pycryptodome() -> None:
    _expect_equal("digest", _digest_pycryptodome("BLAKE2b", digest_bits=512), BLAKE2B_512_ABC)


# ======================================================================================
# Checks: HKDF (RFC 5869 Appendix A) and the HKDF-SHA384 cross-check
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
    _expect_equal("OKM", okm, vector.okm)


def _rfc5869_pycryptodome(vector: HkdfVector) -> None:
    from Crypto.Hash import SHA256

    okm = _hkdf_pycryptodome(SHA256, vector.ikm, vector.salt, vector.info, len(vector.okm))
    _expect_equal("OKM", okm, vector.okm)


@_register("HKDF-SHA256, RFC 5869 A.1", CRYPTOGRAPHY, KAT, "RFC 5869 Appendix A.1 (test case 1)")
def _check_hkdf_a1_cryptography() -> None:
    _rfc5869_cryptography(RFC5869_A1)


@_register("HKDF-SHA256, RFC 5869 A.1", PYCRYPTODOME, KAT, "RFC 5869 Appendix A.1 (test case 1)")
def _check_hkdf_a1_pycryptodome() -> None:
    _rfc5869_pycryptodome(RFC5869_A1)


@_register(
    "HKDF-SHA256 long inputs, RFC 5869 A.2", CRYPTOGRAPHY, KAT, "RFC 5869 Appendix A.2 (test case 2)"
)
def _check_hkdf_a2_cryptography() -> None:
    _rfc5869_cryptography(RFC5869_A2)


@_register(
    "HKDF-SHA256 long inputs, RFC 5869 A.2", PYCRYPTODOME, KAT, "RFC 5869 Appendix A.2 (test case 2)"
)
def _check_hkdf_a2_pycryptodome() -> None:
    _rfc5869_pycryptodome(RFC5869_A2)


@_register(
    "HKDF-SHA256 empty salt/info, RFC 5869 A.3",
    CRYPTOGRAPHY,
    KAT,
    "RFC 5869 Appendix A.3 (test case 3)",
)
def _check_hkdf_a3_cryptography() -> None:
    _rfc5869_cryptography(RFC5869_A3)


@_register(
    "HKDF-SHA256 empty salt/info, RFC 5869 A.3",
    PYCRYPTODOME,
    KAT,
    "RFC 5869 Appendix A.3 (test case 3)",
)
def _check_hkdf_a3_pycryptodome() -> None:
    _rfc5869_pycryptodome(RFC5869_A3)


@_register(
    "HKDF-SHA384 agrees with cryptography",
    PYCRYPTODOME,
    CROSS_CHECK,
    "cross-check against cryptography on random input (no published HKDF-SHA384 vector: "
    "RFC 5869 has SHA-256 and SHA-1 only)",
)
def _check_hkdf_sha384_cross() -> None:
    from cryptography.hazmat.primitives import hashes
    from Crypto.Hash import SHA384

    for length in (48, 100):
        ikm, salt, info = os.urandom(32), os.urandom(16), os.urandom(12)
        ours = _hkdf_pycryptodome(SHA384, ikm, salt, info, length)
        theirs = _hkdf_cryptography(hashes.SHA384(), ikm, salt, info, length)
        _expect_equal(f"{length}-byte OKM (pycryptodome vs cryptography)", ours, theirs)


# ======================================================================================
# Checks: X25519 and X448 (RFC 7748)
# ======================================================================================

_RFC7748_52 = "RFC 7748 §5.2 (X25519 test vectors, single step)"
_RFC7748_61 = "RFC 7748 §6.1 (Curve25519 Diffie-Hellman example)"
_RFC7748_62 = "RFC 7748 §6.2 (Curve448 Diffie-Hellman example)"


@_register("X25519 scalar multiplication", CRYPTOGRAPHY, KAT, _RFC7748_52)
def _check_x25519_scalarmult_cryptography() -> None:
    from cryptography.hazmat.primitives.asymmetric import x25519

    for index, (scalar, u, expected) in enumerate(RFC7748_X25519_SCALARMULT, start=1):
        private = x25519.X25519PrivateKey.from_private_bytes(scalar)
        output = private.exchange(x25519.X25519PublicKey.from_public_bytes(u))
        _expect_equal(f"vector {index} output", output, expected)


@_register("X25519 scalar multiplication", PYCRYPTODOME, KAT, _RFC7748_52)
def _check_x25519_scalarmult_pycryptodome() -> None:
    from Crypto.Protocol import DH

    for index, (scalar, u, expected) in enumerate(RFC7748_X25519_SCALARMULT, start=1):
        output = DH.key_agreement(
            static_priv=DH.import_x25519_private_key(scalar),
            static_pub=DH.import_x25519_public_key(u),
            kdf=lambda z: z,
        )
        _expect_equal(f"vector {index} output", output, expected)


@_register("X25519 key agreement", CRYPTOGRAPHY, KAT, _RFC7748_61)
def _check_x25519_agreement_cryptography() -> None:
    from cryptography.hazmat.primitives.asymmetric import x25519

    alice = x25519.X25519PrivateKey.from_private_bytes(RFC7748_X25519_ALICE_PRIVATE)
    bob = x25519.X25519PrivateKey.from_private_bytes(RFC7748_X25519_BOB_PRIVATE)
    _expect_equal("Alice's public key", alice.public_key().public_bytes_raw(), RFC7748_X25519_ALICE_PUBLIC)
    _expect_equal("Bob's public key", bob.public_key().public_bytes_raw(), RFC7748_X25519_BOB_PUBLIC)
    bob_public = x25519.X25519PublicKey.from_public_bytes(RFC7748_X25519_BOB_PUBLIC)
    alice_public = x25519.X25519PublicKey.from_public_bytes(RFC7748_X25519_ALICE_PUBLIC)
    _expect_equal("shared secret (Alice)", alice.exchange(bob_public), RFC7748_X25519_SHARED)
    _expect_equal("shared secret (Bob)", bob.exchange(alice_public), RFC7748_X25519_SHARED)


@_register("X25519 key agreement", PYCRYPTODOME, KAT, _RFC7748_61)
def _check_x25519_agreement_pycryptodome() -> None:
    from Crypto.Protocol import DH

    alice = DH.import_x25519_private_key(RFC7748_X25519_ALICE_PRIVATE)
    bob = DH.import_x25519_private_key(RFC7748_X25519_BOB_PRIVATE)
    _expect_equal(
        "Alice's public key",
        alice.public_key().export_key(format="raw"),
        RFC7748_X25519_ALICE_PUBLIC,
    )
    _expect_equal(
        "Bob's public key", bob.public_key().export_key(format="raw"), RFC7748_X25519_BOB_PUBLIC
    )
    for label, private, peer in (
        ("Alice", alice, RFC7748_X25519_BOB_PUBLIC),
        ("Bob", bob, RFC7748_X25519_ALICE_PUBLIC),
    ):
        shared = DH.key_agreement(
            static_priv=private, static_pub=DH.import_x25519_public_key(peer), kdf=lambda z: z
        )
        _expect_equal(f"shared secret ({label})", shared, RFC7748_X25519_SHARED)


@_register("X448 key agreement", CRYPTOGRAPHY, KAT, _RFC7748_62)
def _check_x448_agreement_cryptography() -> None:
    from cryptography.hazmat.primitives.asymmetric import x448

    alice = x448.X448PrivateKey.from_private_bytes(RFC7748_X448_ALICE_PRIVATE)
    bob = x448.X448PrivateKey.from_private_bytes(RFC7748_X448_BOB_PRIVATE)
    _expect_equal("Alice's public key", alice.public_key().public_bytes_raw(), RFC7748_X448_ALICE_PUBLIC)
    _expect_equal("Bob's public key", bob.public_key().public_bytes_raw(), RFC7748_X448_BOB_PUBLIC)
    bob_public = x448.X448PublicKey.from_public_bytes(RFC7748_X448_BOB_PUBLIC)
    alice_public = x448.X448PublicKey.from_public_bytes(RFC7748_X448_ALICE_PUBLIC)
    _expect_equal("shared secret (Alice)", alice.exchange(bob_public), RFC7748_X448_SHARED)
    _expect_equal("shared secret (Bob)", bob.exchange(alice_public), RFC7748_X448_SHARED)


@_register("X448 key agreement", PYCRYPTODOME, KAT, _RFC7748_62)
def _check_x448_agreement_pycryptodome() -> None:
    from Crypto.Protocol import DH

    alice = DH.import_x448_private_key(RFC7748_X448_ALICE_PRIVATE)
    bob = DH.import_x448_private_key(RFC7748_X448_BOB_PRIVATE)
    _expect_equal(
        "Alice's public key", alice.public_key().export_key(format="raw"), RFC7748_X448_ALICE_PUBLIC
    )
    _expect_equal(
        "Bob's public key", bob.public_key().export_key(format="raw"), RFC7748_X448_BOB_PUBLIC
    )
    for label, private, peer in (
        ("Alice", alice, RFC7748_X448_BOB_PUBLIC),
        ("Bob", bob, RFC7748_X448_ALICE_PUBLIC),
    ):
        shared = DH.key_agreement(
            static_priv=private, static_pub=DH.import_x448_public_key(peer), kdf=lambda z: z
        )
        _expect_equal(f"shared secret ({label})", shared, RFC7748_X448_SHARED)


# ======================================================================================
# Checks: Ed25519 and Ed448 (RFC 8032)
# ======================================================================================

_RFC8032_71 = "RFC 8032 §7.1 (Ed25519 TEST 1, TEST 2, TEST 3)"
_RFC8032_74 = "RFC 8032 §7.4 (Ed448, first test: blank message)"


def _eddsa_cryptography(private_cls: Any, vector: EddsaVector, label: str) -> None:
    from cryptography.exceptions import InvalidSignature

    private = private_cls.from_private_bytes(vector.secret)
    public = private.public_key()
    _expect_equal(f"{label} public key", public.public_bytes_raw(), vector.public)
    _expect_equal(f"{label} signature", private.sign(vector.message), vector.signature)
    _expect_accepted(
        f"{label}: the published signature",
        lambda: public.verify(vector.signature, vector.message),
        InvalidSignature,
    )
    _expect_rejected(
        f"{label}: a signature with one flipped bit",
        lambda: public.verify(_flip_last_bit(vector.signature), vector.message),
        InvalidSignature,
    )


def _eddsa_pycryptodome(curve: str, vector: EddsaVector, label: str) -> None:
    from Crypto.PublicKey import ECC
    from Crypto.Signature import eddsa

    private = ECC.construct(curve=curve, seed=vector.secret)
    public = private.public_key()
    _expect_equal(f"{label} public key", public.export_key(format="raw"), vector.public)
    _expect_equal(
        f"{label} signature", eddsa.new(private, "rfc8032").sign(vector.message), vector.signature
    )
    verifier = eddsa.new(public, "rfc8032")
    _expect_accepted(
        f"{label}: the published signature",
        lambda: verifier.verify(vector.message, vector.signature),
        ValueError,
    )
    _expect_rejected(
        f"{label}: a signature with one flipped bit",
        lambda: verifier.verify(vector.message, _flip_last_bit(vector.signature)),
        ValueError,
    )


@_register("Ed25519 sign/verify", CRYPTOGRAPHY, KAT, _RFC8032_71)
def _check_ed25519_cryptography() -> None:
    from cryptography.hazmat.primitives.asymmetric import ed25519

    for index, vector in enumerate(RFC8032_ED25519, start=1):
        _eddsa_cryptography(ed25519.Ed25519PrivateKey, vector, f"TEST {index}")


@_register("Ed25519 sign/verify", PYCRYPTODOME, KAT, _RFC8032_71)
def _check_ed25519_pycryptodome() -> None:
    for index, vector in enumerate(RFC8032_ED25519, start=1):
        _eddsa_pycryptodome("Ed25519", vector, f"TEST {index}")


@_register("Ed448 sign/verify", CRYPTOGRAPHY, KAT, _RFC8032_74)
def _check_ed448_cryptography() -> None:
    from cryptography.hazmat.primitives.asymmetric import ed448

    _eddsa_cryptography(ed448.Ed448PrivateKey, RFC8032_ED448_BLANK, "blank")


@_register("Ed448 sign/verify", PYCRYPTODOME, KAT, _RFC8032_74)
def _check_ed448_pycryptodome() -> None:
    _eddsa_pycryptodome("Ed448", RFC8032_ED448_BLANK, "blank")


# ======================================================================================
# Checks: deterministic ECDSA (RFC 6979)
# ======================================================================================

_RFC6979_P256 = "RFC 6979 §A.2.5 (P-256, SHA-256, message \"sample\")"
_RFC6979_P384 = "RFC 6979 §A.2.6 (P-384, SHA-384, message \"sample\")"


def _ecdsa_cryptography(curve: Any, hash_algorithm: Any, vector: EcdsaVector) -> None:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import (
        decode_dss_signature,
        encode_dss_signature,
    )

    private = ec.derive_private_key(vector.private, curve)
    numbers = private.public_key().public_numbers()
    _expect_equal("public key x", numbers.x, vector.public_x)
    _expect_equal("public key y", numbers.y, vector.public_y)
    signature = private.sign(vector.message, ec.ECDSA(hash_algorithm, deterministic_signing=True))
    r, s = decode_dss_signature(signature)
    _expect_equal("r", r, vector.r)
    _expect_equal("s", s, vector.s)
    public = ec.EllipticCurvePublicNumbers(vector.public_x, vector.public_y, curve).public_key()
    published = encode_dss_signature(vector.r, vector.s)
    _expect_accepted(
        "the published signature",
        lambda: public.verify(published, vector.message, ec.ECDSA(hash_algorithm)),
        InvalidSignature,
    )
    _expect_rejected(
        "the signature over a modified message",
        lambda: public.verify(published, vector.message + b"!", ec.ECDSA(hash_algorithm)),
        InvalidSignature,
    )


def _ecdsa_pycryptodome(curve: str, hash_module: Any, vector: EcdsaVector, size: int) -> None:
    from Crypto.PublicKey import ECC
    from Crypto.Signature import DSS

    private = ECC.construct(curve=curve, d=vector.private)
    _expect_equal("public key x", int(private.pointQ.x), vector.public_x)
    _expect_equal("public key y", int(private.pointQ.y), vector.public_y)
    signer = DSS.new(private, "deterministic-rfc6979", encoding="binary")
    signature = signer.sign(hash_module.new(vector.message))
    expected = vector.r.to_bytes(size, "big") + vector.s.to_bytes(size, "big")
    _expect_equal("r || s", signature, expected)
    verifier = DSS.new(private.public_key(), "fips-186-3", encoding="binary")
    _expect_accepted(
        "the published signature",
        lambda: verifier.verify(hash_module.new(vector.message), expected),
        ValueError,
    )
    _expect_rejected(
        "the signature over a modified message",
        lambda: verifier.verify(hash_module.new(vector.message + b"!"), expected),
        ValueError,
    )


@_register("ECDSA P-256/SHA-256 deterministic signature", CRYPTOGRAPHY, KAT, _RFC6979_P256)
def _check_ecdsa_p256_cryptography() -> None:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    _ecdsa_cryptography(ec.SECP256R1(), hashes.SHA256(), RFC6979_P256_SHA256)


@_register("ECDSA P-256/SHA-256 deterministic signature", PYCRYPTODOME, KAT, _RFC6979_P256)
def _check_ecdsa_p256_pycryptodome() -> None:
    from Crypto.Hash import SHA256

    _ecdsa_pycryptodome("P-256", SHA256, RFC6979_P256_SHA256, 32)


@_register("ECDSA P-384/SHA-384 deterministic signature", CRYPTOGRAPHY, KAT, _RFC6979_P384)
def _check_ecdsa_p384_cryptography() -> None:
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec

    _ecdsa_cryptography(ec.SECP384R1(), hashes.SHA384(), RFC6979_P384_SHA384)


@_register("ECDSA P-384/SHA-384 deterministic signature", PYCRYPTODOME, KAT, _RFC6979_P384)
def _check_ecdsa_p384_pycryptodome() -> None:
    from Crypto.Hash import SHA384

    _ecdsa_pycryptodome("P-384", SHA384, RFC6979_P384_SHA384, 48)


# ======================================================================================
# Checks: ECDH (RFC 7027 brainpoolP256r1; RFC 5903 P-256 and P-384)
# ======================================================================================

_RFC7027_A1 = "RFC 7027 Appendix A.1 (ECDH on brainpoolP256r1)"
_RFC5903_81 = "RFC 5903 §8.1 (ECDH-256, P-256)"
_RFC5903_82 = "RFC 5903 §8.2 (ECDH-384, P-384)"


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
        _expect_equal(f"public key {label} (x, y)", (point.x, point.y), public)
    with warnings.catch_warnings(record=True):  # tinyec warns (and flags) off-curve points
        peer_a = tinyec_ec.Point(curve, *vector.public_a)
        peer_b = tinyec_ec.Point(curve, *vector.public_b)
    _expect(peer_a.on_curve and peer_b.on_curve, "a published public point is not on the curve")
    for label, point in (("dA * QB", peer_b * vector.private_a), ("dB * QA", peer_a * vector.private_b)):
        _expect_equal(f"shared point {label} (x, y)", (point.x, point.y), vector.shared)


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
        _expect_equal(f"public key {label} (x, y)", (numbers.x, numbers.y), public)
        peer_key = ec.EllipticCurvePublicNumbers(peer[0], peer[1], curve).public_key()
        _expect_equal(f"shared secret ({label})", key.exchange(ec.ECDH(), peer_key), expected)


def _ecdh_pycryptodome(curve: str, vector: EcdhVector, size: int) -> None:
    from Crypto.PublicKey import ECC
    from Crypto.Protocol import DH

    expected = vector.shared[0].to_bytes(size, "big")
    for label, private, public, peer in (
        ("A", vector.private_a, vector.public_a, vector.public_b),
        ("B", vector.private_b, vector.public_b, vector.public_a),
    ):
        key = ECC.construct(curve=curve, d=private)
        _expect_equal(f"public key {label} (x, y)", (int(key.pointQ.x), int(key.pointQ.y)), public)
        peer_key = ECC.construct(curve=curve, point_x=peer[0], point_y=peer[1])
        shared = DH.key_agreement(static_priv=key, static_pub=peer_key, kdf=lambda z: z)
        _expect_equal(f"shared secret ({label})", shared, expected)


@_register("ECDH brainpoolP256r1", TINYEC, KAT, _RFC7027_A1)
def _check_ecdh_brainpool_tinyec() -> None:
    _ecdh_tinyec("brainpoolP256r1", RFC7027_BRAINPOOLP256R1)


@_register("ECDH brainpoolP256r1", CRYPTOGRAPHY, KAT, _RFC7027_A1)
def _check_ecdh_brainpool_cryptography() -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    _ecdh_cryptography(ec.BrainpoolP256R1(), RFC7027_BRAINPOOLP256R1)


@_register("ECDH P-256 (secp256r1)", TINYEC, KAT, _RFC5903_81)
def _check_ecdh_p256_tinyec() -> None:
    _ecdh_tinyec("secp256r1", RFC5903_P256)


@_register("ECDH P-256 (secp256r1)", CRYPTOGRAPHY, KAT, _RFC5903_81)
def _check_ecdh_p256_cryptography() -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    _ecdh_cryptography(ec.SECP256R1(), RFC5903_P256)


@_register("ECDH P-256 (secp256r1)", PYCRYPTODOME, KAT, _RFC5903_81)
def _check_ecdh_p256_pycryptodome() -> None:
    _ecdh_pycryptodome("P-256", RFC5903_P256, 32)


@_register("ECDH P-384 (secp384r1)", TINYEC, KAT, _RFC5903_82)
def _check_ecdh_p384_tinyec() -> None:
    _ecdh_tinyec("secp384r1", RFC5903_P384)


@_register("ECDH P-384 (secp384r1)", CRYPTOGRAPHY, KAT, _RFC5903_82)
def _check_ecdh_p384_cryptography() -> None:
    from cryptography.hazmat.primitives.asymmetric import ec

    _ecdh_cryptography(ec.SECP384R1(), RFC5903_P384)


@_register("ECDH P-384 (secp384r1)", PYCRYPTODOME, KAT, _RFC5903_82)
def _check_ecdh_p384_pycryptodome() -> None:
    _ecdh_pycryptodome("P-384", RFC5903_P384, 48)


# ======================================================================================
# Checks: RSA (PKCS #1 v2.1 vectors; cross-backend consistency at 2048 bits)
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

    vector = PKCS1_OAEP_EXAMPLE_1_1
    key = _rsa_private_cryptography(vector.n, vector.e, vector.d)
    oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA1()), algorithm=hashes.SHA1(), label=None)
    _expect_equal("decrypted message", key.decrypt(vector.ciphertext, oaep), vector.message)
    _expect_rejected(
        "a ciphertext with one flipped bit",
        lambda: key.decrypt(_flip_last_bit(vector.ciphertext), oaep),
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

    vector = PKCS1_OAEP_EXAMPLE_1_1
    key = RSA.construct((vector.n, vector.e, vector.d))

    def published_seed(length: int) -> bytes:
        # pycryptodome draws the OAEP seed from randfunc; feed it the published one.
        if length != len(vector.seed):
            raise ValueError(f"asked for a {length}-byte seed, the vector has {len(vector.seed)}")
        return vector.seed

    encrypter = PKCS1_OAEP.new(key.publickey(), hashAlgo=SHA1, randfunc=published_seed)
    _expect_equal("ciphertext", encrypter.encrypt(vector.message), vector.ciphertext)
    decrypter = PKCS1_OAEP.new(key, hashAlgo=SHA1)
    _expect_equal("decrypted message", decrypter.decrypt(vector.ciphertext), vector.message)
    _expect_rejected(
        "a ciphertext with one flipped bit",
        lambda: decrypter.decrypt(_flip_last_bit(vector.ciphertext)),
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

    vector = PKCS1_PSS_EXAMPLE_1_1
    public = rsa.RSAPublicNumbers(vector.e, vector.n).public_key()
    pss = padding.PSS(mgf=padding.MGF1(hashes.SHA1()), salt_length=vector.salt_length)
    _expect_accepted(
        "the published signature",
        lambda: public.verify(vector.signature, vector.message, pss, hashes.SHA1()),
        InvalidSignature,
    )
    _expect_rejected(
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

    vector = PKCS1_PSS_EXAMPLE_1_1
    verifier = pss.new(RSA.construct((vector.n, vector.e)), salt_bytes=vector.salt_length)
    _expect_accepted(
        "the published signature",
        lambda: verifier.verify(SHA1.new(vector.message), vector.signature),
        ValueError,
    )
    _expect_rejected(
        "the signature over a modified message",
        lambda: verifier.verify(SHA1.new(vector.message + b"!"), vector.signature),
        ValueError,
    )


@lru_cache(maxsize=1)
def _rsa_interop_keys() -> tuple[Any, Any]:
    """One RSA-2048 key pair per self-test run, as (cryptography key, pycryptodome key).

    Generated with cryptography (tens of milliseconds; pycryptodome takes far
    longer) and imported into pycryptodome. :func:`run_selftests` clears the cache
    before and after a run.
    """
    from cryptography.hazmat.primitives.asymmetric import rsa
    from Crypto.PublicKey import RSA

    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    numbers = private.private_numbers()
    public = numbers.public_numbers
    return private, RSA.construct((public.n, public.e, numbers.d, numbers.p, numbers.q))


def _rsa_oaep_ops() -> dict[str, tuple[Callable[[bytes], bytes], Callable[[bytes], bytes]]]:
    """(encrypt, decrypt) per backend for RSA-2048 OAEP with SHA-256 and MGF1-SHA-256."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding
    from Crypto.Cipher import PKCS1_OAEP
    from Crypto.Hash import SHA256

    crypto_key, pycryptodome_key = _rsa_interop_keys()
    oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None)
    return {
        CRYPTOGRAPHY: (
            lambda m: crypto_key.public_key().encrypt(m, oaep),
            lambda c: crypto_key.decrypt(c, oaep),
        ),
        PYCRYPTODOME: (
            lambda m: PKCS1_OAEP.new(pycryptodome_key.publickey(), hashAlgo=SHA256).encrypt(m),
            lambda c: PKCS1_OAEP.new(pycryptodome_key, hashAlgo=SHA256).decrypt(c),
        ),
    }


def _rsa_pss_ops() -> dict[str, tuple[Callable[[bytes], bytes], Callable[[bytes, bytes], None]]]:
    """(sign, verify) per backend for RSA-2048 PSS with SHA-256 and a 32-byte salt."""
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding
    from Crypto.Hash import SHA256
    from Crypto.Signature import pss

    crypto_key, pycryptodome_key = _rsa_interop_keys()
    scheme = padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32)
    return {
        CRYPTOGRAPHY: (
            lambda m: crypto_key.sign(m, scheme, hashes.SHA256()),
            lambda s, m: crypto_key.public_key().verify(s, m, scheme, hashes.SHA256()),
        ),
        PYCRYPTODOME: (
            lambda m: pss.new(pycryptodome_key, salt_bytes=32).sign(SHA256.new(m)),
            lambda s, m: pss.new(pycryptodome_key.publickey(), salt_bytes=32).verify(
                SHA256.new(m), s
            ),
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
    _expect_equal("ciphertext size (bytes)", len(ciphertext), 256)
    _expect_equal("own ciphertext decrypted", decrypt(ciphertext), message)
    _expect_equal(f"ciphertext decrypted by {other}", other_decrypt(ciphertext), message)
    _expect_equal(f"{other}'s ciphertext decrypted", decrypt(other_encrypt(message)), message)
    _expect(encrypt(message) != ciphertext, "two OAEP encryptions of one message are identical")
    _expect_rejected(
        "a ciphertext with one flipped bit", lambda: decrypt(_flip_last_bit(ciphertext)), ValueError
    )


def _rsa_pss_interop(backend: str) -> None:
    from cryptography.exceptions import InvalidSignature

    ops = _rsa_pss_ops()
    other = _other_backend(backend)
    sign, verify = ops[backend]
    other_sign, other_verify = ops[other]
    message = os.urandom(32)
    signature = sign(message)
    _expect_equal("signature size (bytes)", len(signature), 256)
    _expect_accepted("own signature", lambda: verify(signature, message), InvalidSignature, ValueError)
    _expect_accepted(
        f"signature checked by {other}",
        lambda: other_verify(signature, message),
        InvalidSignature,
        ValueError,
    )
    _expect_accepted(
        f"{other}'s signature",
        lambda: verify(other_sign(message), message),
        InvalidSignature,
        ValueError,
    )
    _expect_rejected(
        "a signature with one flipped bit",
        lambda: verify(_flip_last_bit(signature), message),
        InvalidSignature,
        ValueError,
    )
    _expect_rejected(
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


# ======================================================================================
# Checks: ML-KEM (FIPS 203) and ML-DSA (FIPS 204)
# ======================================================================================


def _sha3_256(data: bytes) -> bytes:
    from cryptography.hazmat.primitives import hashes

    ctx = hashes.Hash(hashes.SHA3_256())
    ctx.update(data)
    return ctx.finalize()


def _shake256(data: bytes, length: int) -> bytes:
    from cryptography.hazmat.primitives import hashes

    ctx = hashes.Hash(hashes.SHAKE256(digest_size=length))
    ctx.update(data)
    return ctx.finalize()


def _mlkem_kat(private_cls: Any, vector: MlKemVector) -> None:
    key = private_cls.from_seed_bytes(vector.seed)
    ek = key.public_key().public_bytes_raw()
    _expect_equal("H(ek) = SHA3-256(ek)", _sha3_256(ek), vector.ek_sha3_256)
    _expect_equal("Decaps shared secret", key.decapsulate(vector.ciphertext), vector.shared_secret)


def _mlkem_consistency(private_cls: Any, public_cls: Any, name: str) -> None:
    ek_size, ct_size = MLKEM_SIZES[name]
    seed = bytes(range(64))  # fixed d || z: KeyGen_internal must be deterministic
    key = private_cls.from_seed_bytes(seed)
    ek = key.public_key().public_bytes_raw()
    again = private_cls.from_seed_bytes(seed).public_key().public_bytes_raw()
    _expect_equal("ek from the same seed, second time", again, ek)
    _expect_equal("ek size (bytes)", len(ek), ek_size)
    public = public_cls.from_public_bytes(ek)
    shared, ciphertext = public.encapsulate()
    _expect_equal("ciphertext size (bytes)", len(ciphertext), ct_size)
    _expect_equal("shared secret size (bytes)", len(shared), 32)
    _expect_equal("Decaps(Encaps) shared secret", key.decapsulate(ciphertext), shared)
    _expect(public.encapsulate()[1] != ciphertext, "two encapsulations gave the same ciphertext")
    tampered = _flip_first_bit(ciphertext)
    rejected = key.decapsulate(tampered)
    _expect(rejected != shared, "a tampered ciphertext gave back the original shared secret")
    # FIPS 203 Algorithm 18: an invalid ciphertext yields K-bar = J(z || c) = SHAKE256(z || c, 32).
    _expect_equal("implicit-rejection secret J(z || c)", rejected, _shake256(seed[32:] + tampered, 32))


def _mldsa_consistency(private_cls: Any, public_cls: Any, name: str) -> None:
    from cryptography.exceptions import InvalidSignature

    pk_size, sig_size = MLDSA_SIZES[name]
    seed = bytes(range(32))  # fixed xi: KeyGen must be deterministic
    key = private_cls.from_seed_bytes(seed)
    pk = key.public_key().public_bytes_raw()
    again = private_cls.from_seed_bytes(seed).public_key().public_bytes_raw()
    _expect_equal("pk from the same seed, second time", again, pk)
    _expect_equal("pk size (bytes)", len(pk), pk_size)
    public = public_cls.from_public_bytes(pk)
    message = b"CryptoBench self-test message"
    signature = key.sign(message)
    _expect_equal("signature size (bytes)", len(signature), sig_size)
    _expect_accepted("the signature", lambda: public.verify(signature, message), InvalidSignature)
    context = b"cryptobench-selftest"
    with_context = key.sign(message, context=context)
    _expect_accepted(
        "the signature with context",
        lambda: public.verify(with_context, message, context=context),
        InvalidSignature,
    )
    _expect_rejected(
        "a signature with one flipped bit",
        lambda: public.verify(_flip_last_bit(signature), message),
        InvalidSignature,
    )
    _expect_rejected(
        "the signature over a modified message",
        lambda: public.verify(signature, message + b"!"),
        InvalidSignature,
    )
    _expect_rejected(
        "a signature checked without its context",
        lambda: public.verify(with_context, message),
        InvalidSignature,
    )


_CCTV_UNLUCKY = "C2SP CCTV ML-KEM unluckysample vectors ({file}): KeyGen(d, z) via H(ek), Decaps(c)"


@_register("ML-KEM-768 KeyGen + Decaps", CRYPTOGRAPHY, KAT, _CCTV_UNLUCKY.format(file="ML-KEM-768.txt"))
def _check_mlkem768_kat() -> None:
    from cryptography.hazmat.primitives.asymmetric import mlkem

    _mlkem_kat(mlkem.MLKEM768PrivateKey, CCTV_MLKEM768_UNLUCKY)


@_register(
    "ML-KEM-768 implicit rejection (strcmp trap)",
    CRYPTOGRAPHY,
    KAT,
    "Wycheproof testvectors_v1/mlkem_768_test.json tcId 1 (C2SP CCTV strcmp vector; FIPS 203 "
    "Algorithm 18)",
)
def _check_mlkem768_strcmp_kat() -> None:
    from cryptography.hazmat.primitives.asymmetric import mlkem

    _mlkem_kat(mlkem.MLKEM768PrivateKey, WYCHEPROOF_MLKEM768_STRCMP)


@_register(
    "ML-KEM-1024 KeyGen + Decaps", CRYPTOGRAPHY, KAT, _CCTV_UNLUCKY.format(file="ML-KEM-1024.txt")
)
def _check_mlkem1024_kat() -> None:
    from cryptography.hazmat.primitives.asymmetric import mlkem

    _mlkem_kat(mlkem.MLKEM1024PrivateKey, CCTV_MLKEM1024_UNLUCKY)


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


@_register(
    "ML-DSA-44 KeyGen from seed",
    CRYPTOGRAPHY,
    KAT,
    "NIST ACVP-Server ML-DSA-keyGen-FIPS204 (vsId 42), tcId 1: seed -> pk (via SHA3-256)",
)
def _check_mldsa44_keygen_kat() -> None:
    from cryptography.hazmat.primitives.asymmetric import mldsa

    key = mldsa.MLDSA44PrivateKey.from_seed_bytes(ACVP_MLDSA44_KEYGEN_SEED)
    pk = key.public_key().public_bytes_raw()
    _expect_equal("pk size (bytes)", len(pk), MLDSA_SIZES["ML-DSA-44"][0])
    _expect_equal("SHA3-256(pk)", _sha3_256(pk), ACVP_MLDSA44_KEYGEN_PK_SHA3_256)


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


# ======================================================================================
# Checks: Diffie-Hellman / ElGamal with Python integers
# ======================================================================================


@_register(
    "Diffie-Hellman and ElGamal with pow() in a toy group",
    PYTHON,
    CONSISTENCY,
    "hand-checkable textbook example (p = 23, g = 5); no published ElGamal vector exists",
)
def _check_elgamal_python() -> None:
    p, g = TOY_DH_GROUP
    a, b = TOY_DH_PRIVATE
    public_a, public_b = pow(g, a, p), pow(g, b, p)
    _expect_equal("(g^a, g^b) mod p", (public_a, public_b), TOY_DH_PUBLIC)
    _expect_equal("(g^b)^a mod p", pow(public_b, a, p), TOY_DH_SHARED)
    _expect_equal("(g^a)^b mod p", pow(public_a, b, p), TOY_DH_SHARED)
    message, ephemeral, expected = TOY_ELGAMAL
    ciphertext = (pow(g, ephemeral, p), message * pow(public_a, ephemeral, p) % p)
    _expect_equal("ElGamal ciphertext (c1, c2)", ciphertext, expected)
    c1, c2 = ciphertext
    _expect_equal("ElGamal decryption", c2 * pow(pow(c1, a, p), -1, p) % p, message)
    _expect(
        c2 * pow(pow(c1, b, p), -1, p) % p != message,
        "ElGamal decryption with the wrong private key recovered the message",
    )


# ======================================================================================
# Checks: textbook RSA with Python integers
# ======================================================================================


@_register(
    "Textbook RSA with pow(), with and without CRT, RSA paper example",
    PYTHON,
    KAT,
    "Rivest, Shamir, Adleman, CACM 21(2) 1978, section VIII (n = 47 * 59, e = 17, M = 920)",
)
def _check_rsa_textbook_python() -> None:
    p, q, e, d = RSA_PAPER_KEY
    message, expected = RSA_PAPER_BLOCK
    n = p * q
    _expect_equal("e * d mod (p - 1)(q - 1)", e * d % ((p - 1) * (q - 1)), 1)
    ciphertext = pow(message, e, n)
    _expect_equal("M^e mod n", ciphertext, expected)
    _expect_equal("C^d mod n (decryption without CRT, one of the E3 hypotheses)", pow(ciphertext, d, n), message)
    # The CRT decryption the scheme uses by default (Garner's recombination) must give
    # the same answer as the plain one for every ciphertext of the toy key, and also
    # with e = 65537, the exponent the scheme fixes.
    for exponent in (e, 65537):
        private = pow(exponent, -1, (p - 1) * (q - 1))
        dp, dq, qinv = private % (p - 1), private % (q - 1), pow(q, -1, p)
        for c in range(n):
            m1, m2 = pow(c, dp, p), pow(c, dq, q)
            with_crt = m2 + (qinv * (m1 - m2) % p) * q
            plain = pow(c, private, n)
            if with_crt != plain or pow(plain, exponent, n) != c:
                raise SelftestMismatch(
                    f"e = {exponent}, C = {c}: CRT decryption {with_crt}, plain decryption {plain}"
                )

"""Known-answer checks through the app's own scheme adapters (``app/core/schemes``).

The library checks of :mod:`app.core.selftest` prove the libraries compute the
published answers; they call them directly. The benchmarks time something else: the
adapters that wrap those libraries (which key, nonce layout, digest, KDF info string,
encoding). A wrong adapter would measure the wrong thing while every library check
passes. The checks here therefore drive the same published vectors through the
adapters: the sessions' ``Sender``/``Receiver`` where the scheme's inputs can be fixed
(a pre-shared key, a signer's private key, a message), and otherwise the adapter object
the session uses (``AeadKey``, ``DhGroup.exchange``, ``derive_key``, a KEM's
``decapsulate``).

Fixed inputs enter only through explicit, self-test-only doors that no profile
reaches: ``SignatureScheme.known_answer_sender(key)`` (sign with a published key),
and the public key material a ``Sender.handshake`` is given anyway (an AEAD's
pre-shared key, an HKDF salt). Where a scheme is randomised and no published vector
fits its fixed parameters (AEAD nonces come from a counter with a random prefix,
RSA-PSS salts, ChaCha20-Poly1305 without AAD), the adapter's output is checked
against the library called directly with the scheme's declared parameters, and
reported as a cross-check, never as a KAT.

Names start with "App adapter"; :func:`app.core.selftest.run_selftests` runs these
after the library checks. Vectors are read from ``resources/selftest`` (through
:mod:`app.core.selftest.vectors`) when a check runs, so there is one copy of each.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from app.core.selftest import vectors
from app.core.selftest.curves import (
    ED25519_VECTORS,
    RFC5903_81,
    RFC5903_82,
    RFC7027_A1,
    RFC7748_61,
    RFC7748_62,
    RFC8032_71,
    RFC8032_74,
)
from app.core.selftest.framework import (
    CROSS_CHECK,
    KAT,
    SelftestCheck,
    SelftestMismatch,
    expect,
    expect_equal,
    flip_first_bit,
    flip_last_bit,
)
from app.core.selftest.post_quantum import CCTV_UNLUCKY, MLDSA44_KEYGEN_SOURCE, sha3_256
from app.core.selftest.rsa import interop_keys
from app.core.selftest.symmetric import FIPS180_SOURCE, FIPS202_SOURCE, RFC7693_SOURCE, gcm_source
from app.core.selftest.vectors import EddsaVector

if TYPE_CHECKING:  # the schemes are imported when a check runs, like the libraries
    from app.core.schemes.base import Scheme

__all__ = ["ADAPTER_CHECKS"]

S = TypeVar("S", bound="Scheme")

ADAPTER_CHECKS: list[SelftestCheck] = []
"""Every adapter check, in the order they run."""


def _add(title: str, backend: str, kind: str, source: str, run: Callable[[], None]) -> None:
    ADAPTER_CHECKS.append(SelftestCheck(f"App adapter {title} [{backend}]", backend, kind, source, run))


#: The message of the checks that compare with the library (any message would do).
_MESSAGE = b"abc"


def _via(module: str, source: str) -> str:
    return f"{source}, through app/core/schemes/{module}.py"


def _create(kind: type[S], scheme_id: str, backend: str, params: Mapping[str, Any] | None = None) -> S:
    """``registry.create``, as the scheme class whose parts the check drives."""
    from app.core.schemes import registry

    scheme = registry.create(scheme_id, backend, params)
    if not isinstance(scheme, kind):
        raise SelftestMismatch(f"{scheme_id} [{backend}] is a {type(scheme).__name__}, not a {kind.__name__}")
    return scheme


def _expect_refused(what: str, func: Callable[[], Any]) -> None:
    from app.core.schemes.base import SchemeError

    try:
        func()
    except SchemeError:
        return
    raise SelftestMismatch(f"{what} was accepted")


def _session(scheme: Any, sender: Any = None) -> tuple[Any, Any]:
    """A completed handshake: (sender, receiver)."""
    sender = sender or scheme.new_sender()
    receiver = scheme.new_receiver()
    receiver.handshake(sender.handshake(receiver.setup()))
    return sender, receiver


# ======================================================================================
# AEAD (symmetric.py): published ciphertexts open; sealed output is the library's
# ======================================================================================


def _aead_library(algorithm: str, key: bytes) -> Any:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

    return AESGCM(key) if algorithm == "aes-gcm" else ChaCha20Poly1305(key)


def _aead_session_matches_library(
    scheme_id: str, backend: str, params: dict[str, Any], key: bytes, plaintext: bytes
) -> None:
    """The sender seals with the given pre-shared key exactly as the library does (no AAD,
    nonce || ciphertext || tag); the receiver opens the library's output and refuses a flip."""
    from app.core.schemes import registry

    scheme = registry.create(scheme_id, backend, params)
    sender = scheme.new_sender()
    expect_equal("sender handshake message", sender.handshake(key), b"")
    payload = b"".join(sender.seal(plaintext))
    nonce, rest = payload[:12], payload[12:]
    expect_equal(
        "sealed payload (nonce || library ciphertext || tag)",
        rest,
        _aead_library(scheme_id, key).encrypt(nonce, plaintext, None),
    )
    expect(b"".join(sender.seal(plaintext))[:12] != nonce, "two seals used the same nonce")
    receiver = scheme.new_receiver()
    own_key = receiver.setup()
    genuine = nonce + _aead_library(scheme_id, own_key).encrypt(nonce, plaintext, None)
    expect_equal("receiver open", bytes(receiver.open(genuine)), plaintext)
    _expect_refused("a payload with a flipped tag bit", lambda: receiver.open(flip_last_bit(genuine)))


def _aead_kat(backend: str, case: int) -> Callable[[], None]:
    """A GCM test case without AAD (the app's AEADs use none) opens through ``AeadKey``."""

    def run() -> None:
        from app.core.schemes.symmetric import AeadKey

        vector = vectors.GCM[f"test-case-{case}"]
        expect_equal("test case AAD", vector.aad, b"")
        payload = vector.nonce + vector.ciphertext + vector.tag
        expect_equal(
            "AeadKey.open of the published ciphertext",
            bytes(AeadKey("aes-gcm", backend, vector.key).open(payload)),
            vector.plaintext,
        )
        _aead_session_matches_library(
            "aes-gcm", backend, {"key_bits": len(vector.key) * 8}, vector.key, vector.plaintext
        )

    return run


def _chacha_cross_check(backend: str) -> Callable[[], None]:
    def run() -> None:
        vector = vectors.CHACHA20_POLY1305["rfc8439-2.8.2"]
        _aead_session_matches_library("chacha20-poly1305", backend, {}, vector.key, vector.plaintext)

    return run


for _backend in ("cryptography", "pycryptodome"):
    _add("AES-128-GCM, GCM test case 3", _backend, KAT, _via("symmetric", gcm_source(3)), _aead_kat(_backend, 3))
    _add("AES-256-GCM, GCM test case 15", _backend, KAT, _via("symmetric", gcm_source(15)), _aead_kat(_backend, 15))
    _add(
        "ChaCha20-Poly1305 seal/open agrees with the library",
        _backend,
        CROSS_CHECK,
        _via(
            "symmetric",
            "cross-check against cryptography with the RFC 8439 key and plaintext (no published vector without AAD)",
        ),
        _chacha_cross_check(_backend),
    )


# ======================================================================================
# Hashes and HKDF (digests.py), and the key agreements' KDF (dh.py)
# ======================================================================================


def _hash_kat(scheme_id: str, backend: str, name: str) -> Callable[[], None]:
    def run() -> None:
        from app.core.schemes import registry

        vector = vectors.DIGESTS_OF_ABC[name]
        sender, receiver = _session(registry.create(scheme_id, backend))
        parts = sender.seal(vector.message)
        expect_equal("digest sent by the sender", parts[-1], vector.digest)
        payload = vector.message + vector.digest
        expect_equal("receiver open", bytes(receiver.open(payload)), vector.message)
        _expect_refused("a flipped digest", lambda: receiver.open(flip_last_bit(payload)))

    return run


#: (scheme id, name of the check and of its vector, source)
_HASHES = [
    ("sha256", "SHA-256", FIPS180_SOURCE),
    ("sha384", "SHA-384", FIPS180_SOURCE),
    ("sha512", "SHA-512", FIPS180_SOURCE),
    ("sha3-256", "SHA3-256", FIPS202_SOURCE),
    ("sha3-512", "SHA3-512", FIPS202_SOURCE),
    ("blake2b", "BLAKE2b-512", RFC7693_SOURCE),
]


def _hkdf_cross_check(backend: str, digest: str) -> Callable[[], None]:
    """The HKDF scheme derives HKDF(ikm, the receiver's salt, HKDF_INFO) with the declared hash."""

    def run() -> None:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF

        from app.core.schemes import digests, registry

        inputs = vectors.HKDF_SHA256["A.2"]  # its inputs only: the scheme's salt and info differ
        ikm, salt, length = inputs.ikm[:32], inputs.salt[:32], 42
        scheme = registry.create("hkdf", backend, {"digest": digest, "secret_size": 32, "output_length": length})
        sender = scheme.new_sender()
        sender.handshake(salt)
        algorithm = hashes.SHA256() if digest == "sha256" else hashes.SHA384()
        expected = HKDF(algorithm=algorithm, length=length, salt=salt, info=digests.HKDF_INFO).derive(ikm)
        expect_equal("derived key", sender.seal(ikm)[-1], expected)
        receiver = scheme.new_receiver()
        own_salt = receiver.setup()
        own = HKDF(algorithm=algorithm, length=length, salt=own_salt, info=digests.HKDF_INFO).derive(ikm)
        expect_equal("receiver open", bytes(receiver.open(ikm + own)), ikm)
        _expect_refused("a flipped derived key", lambda: receiver.open(ikm + flip_last_bit(own)))

    return run


def _kdf_kat(backend: str) -> Callable[[], None]:
    def run() -> None:
        from app.core.schemes.dh import derive_key

        vector = vectors.HKDF_SHA256["A.3"]  # no salt, empty info: the key agreements' KDF with info = b""
        got = derive_key("hkdf-sha256", vector.ikm, backend, length=len(vector.okm), info=vector.info)
        expect_equal("derive_key('hkdf-sha256') OKM", got, vector.okm)

    return run


for _backend in ("cryptography", "pycryptodome"):
    for _scheme_id, _label, _source in _HASHES:
        _add(f'{_label}("abc")', _backend, KAT, _via("digests", _source), _hash_kat(_scheme_id, _backend, _label))
    for _digest in ("sha256", "sha384"):
        _add(
            f"HKDF-{_digest.upper()} scheme agrees with the library",
            _backend,
            CROSS_CHECK,
            _via(
                "digests",
                "cross-check against cryptography's HKDF on fixed input, salt and the app's info "
                "(no published vector with the scheme's 32-byte salt and info)",
            ),
            _hkdf_cross_check(_backend, _digest),
        )
    _add(
        "key-agreement KDF, RFC 5869 A.3",
        _backend,
        KAT,
        _via("dh", "RFC 5869 Appendix A.3 (test case 3)"),
        _kdf_kat(_backend),
    )


# ======================================================================================
# Key agreement (key_agreement.py / dh.py): the published exchange, then the session key
# ======================================================================================


def _ka_private(group: str, backend: str, private: Any) -> Any:
    """The library's private key object for a published private key (bytes or integer)."""
    if backend == "tinyec":
        return private
    if group in ("X25519", "X448"):
        if backend == "cryptography":
            from cryptography.hazmat.primitives.asymmetric import x448, x25519

            cls = x25519.X25519PrivateKey if group == "X25519" else x448.X448PrivateKey
            return cls.from_private_bytes(private)
        from Crypto.Protocol import DH

        return (DH.import_x25519_private_key if group == "X25519" else DH.import_x448_private_key)(private)
    if backend == "cryptography":
        from cryptography.hazmat.primitives.asymmetric import ec

        from app.core.schemes.dh import CURVES

        return ec.derive_private_key(private, getattr(ec, str(CURVES[group].cryptography_name))())
    from Crypto.PublicKey import ECC

    return ECC.construct(curve=group, d=private)


def _ka_check(
    scheme_id: str, group: str, backend: str, vector: Callable[[], tuple[Any, bytes, bytes]]
) -> Callable[[], None]:
    """exchange(published private, published peer key) = published secret; the session key
    is HKDF-SHA256(secret, info = KDF_INFO) and AES-256-GCM under it opens."""

    def run() -> None:
        from app.core.schemes.dh import KDF_INFO
        from app.core.schemes.key_agreement import KeyAgreementScheme

        private, peer, shared = vector()
        params = {"curve": group, "kdf": "hkdf-sha256"} if scheme_id == "ecdh" else {"kdf": "hkdf-sha256"}
        scheme = _create(KeyAgreementScheme, scheme_id, backend, params)
        got = scheme.group.exchange(_ka_private(group, backend, private), peer)
        expect_equal("shared secret", got, shared)
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF

        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=KDF_INFO).derive(shared)
        payload = b"".join(scheme.session_key(got).seal(b"session"))
        expect_equal(
            "session message under HKDF-SHA256(secret)",
            _aead_library("aes-gcm", key).decrypt(payload[:12], payload[12:], None),
            b"session",
        )

    return run


def _point(size: int, xy: tuple[int, int]) -> bytes:
    return b"\x04" + xy[0].to_bytes(size, "big") + xy[1].to_bytes(size, "big")


def _ecdh_vector(curve: str, size: int) -> Callable[[], tuple[Any, bytes, bytes]]:
    def vector() -> tuple[Any, bytes, bytes]:
        v = vectors.ECDH[curve]
        return v.private_a, _point(size, v.public_b), v.shared[0].to_bytes(size, "big")

    return vector


def _montgomery_vector(curve: str) -> Callable[[], tuple[Any, bytes, bytes]]:
    def vector() -> tuple[Any, bytes, bytes]:
        v = vectors.X25519_X448_DH[curve]
        return v.alice_private, v.bob_public, v.shared

    return vector


_KA: list[tuple[str, str, tuple[str, ...], str, Callable[[], tuple[Any, bytes, bytes]]]] = [
    ("x25519", "X25519", ("cryptography", "pycryptodome"), RFC7748_61, _montgomery_vector("X25519")),
    ("x448", "X448", ("cryptography", "pycryptodome"), RFC7748_62, _montgomery_vector("X448")),
    ("ecdh", "P-256", ("cryptography", "pycryptodome", "tinyec"), RFC5903_81, _ecdh_vector("P-256", 32)),
    ("ecdh", "P-384", ("cryptography", "pycryptodome", "tinyec"), RFC5903_82, _ecdh_vector("P-384", 48)),
    ("ecdh", "brainpoolP256r1", ("cryptography", "tinyec"), RFC7027_A1, _ecdh_vector("brainpoolP256r1", 32)),
]

for _scheme_id, _group, _backends, _source, _vector in _KA:
    for _backend in _backends:
        _add(
            f"{'ECDH ' if _scheme_id == 'ecdh' else ''}{_group} key agreement + HKDF-SHA256 session key",
            _backend,
            KAT,
            _via("key_agreement", _source + " and the session key from it"),
            _ka_check(_scheme_id, _group, _backend, _vector),
        )


# ======================================================================================
# Signatures (signatures.py): published keys sign and verify through the sessions
# ======================================================================================


def _eddsa_check(curve: str, backend: str, load: Callable[[], list[EddsaVector]]) -> Callable[[], None]:
    def run() -> None:
        from app.core.schemes.signatures import SignatureScheme

        scheme = _create(SignatureScheme, curve.lower(), backend)
        for number, vector in enumerate(load(), 1):
            key: Any
            if backend == "cryptography":
                from cryptography.hazmat.primitives.asymmetric import ed448, ed25519

                cls = ed25519.Ed25519PrivateKey if curve == "Ed25519" else ed448.Ed448PrivateKey
                key = cls.from_private_bytes(vector.secret)
            else:
                from Crypto.Signature import eddsa

                key = eddsa.import_private_key(vector.secret)
            sender, receiver = _session(scheme, scheme.known_answer_sender(key))
            parts = sender.seal(vector.message)
            expect_equal(f"vector {number}: signature", parts[1], vector.signature)
            published = len(vector.signature).to_bytes(2, "big") + vector.signature + vector.message
            expect_equal(f"vector {number}: receiver open", bytes(receiver.open(published)), vector.message)
            flipped = published[:2] + flip_last_bit(vector.signature) + vector.message
            _expect_refused(f"vector {number}: a flipped signature bit", lambda: receiver.open(flipped))  # noqa: B023 - called at once
            receiver = scheme.new_receiver()
            receiver.handshake(vector.public)  # the published public key imports as is

    return run


def _der(r: int, s: int) -> bytes:
    from Crypto.Util.asn1 import DerSequence

    encoded: bytes = DerSequence([r, s]).encode()
    return encoded


def _ecdsa_check(curve: str, backend: str) -> Callable[[], None]:
    """The published RFC 6979 signature verifies through the receiver; the adapter's own
    (randomised) signature verifies in the library with the curve's declared digest."""

    def run() -> None:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec

        from app.core.schemes.signatures import SignatureScheme

        v = vectors.RFC6979[curve]
        size = 32 if curve == "P-256" else 48
        public = _point(size, (v.public_x, v.public_y))
        scheme = _create(SignatureScheme, "ecdsa", backend, {"curve": curve})
        receiver = scheme.new_receiver()
        receiver.handshake(public)
        signature = _der(v.r, v.s)
        payload = len(signature).to_bytes(2, "big") + signature + v.message
        expect_equal("receiver open of the published signature", bytes(receiver.open(payload)), v.message)
        _expect_refused("the published signature over another message", lambda: receiver.open(payload + b"!"))
        key = _ka_private(curve, backend, v.private)
        sender = scheme.known_answer_sender(key)
        expect_equal("verification key sent", sender.handshake(b""), public)
        own = sender.seal(v.message)[1]
        curve_cls, digest = (ec.SECP256R1, hashes.SHA256) if curve == "P-256" else (ec.SECP384R1, hashes.SHA384)
        library_key = ec.EllipticCurvePublicKey.from_encoded_point(curve_cls(), public)
        try:
            library_key.verify(own, v.message, ec.ECDSA(digest()))
        except InvalidSignature:
            raise SelftestMismatch(f"the adapter's signature does not verify with {digest.name}") from None

    return run


def _rsa_pss_cross_check(backend: str) -> Callable[[], None]:
    def run() -> None:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        from app.core.schemes.signatures import SignatureScheme

        library_key, pycryptodome_key = interop_keys()
        scheme = _create(SignatureScheme, "rsa-pss", backend, {"bits": 2048})
        sender, receiver = _session(
            scheme, scheme.known_answer_sender(library_key if backend == "cryptography" else pycryptodome_key)
        )
        pss = padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32)
        message = _MESSAGE
        signature = sender.seal(message)[1]
        try:
            library_key.public_key().verify(signature, message, pss, hashes.SHA256())
        except InvalidSignature:
            raise SelftestMismatch("the adapter's signature does not verify as PSS-SHA256, salt 32") from None
        theirs = library_key.sign(message, pss, hashes.SHA256())
        payload = len(theirs).to_bytes(2, "big") + theirs + message
        expect_equal("receiver open of the library's signature", bytes(receiver.open(payload)), message)
        flipped = payload[:2] + flip_first_bit(theirs) + message
        _expect_refused("a flipped signature bit", lambda: receiver.open(flipped))

    return run


def _mldsa_check() -> None:
    from cryptography.hazmat.primitives.asymmetric import mldsa

    from app.core.schemes.signatures import SignatureScheme

    scheme = _create(SignatureScheme, "ml-dsa", "cryptography", {"level": 44})
    vector = vectors.MLDSA_KEYGEN["ML-DSA-44"]
    key = mldsa.MLDSA44PrivateKey.from_seed_bytes(vector.seed)
    sender, receiver = _session(scheme, scheme.known_answer_sender(key))
    sender2 = scheme.known_answer_sender(key)
    expect_equal("H(pk) = SHA3-256 of the verification key sent", sha3_256(sender2.handshake(b"")), vector.pk_sha3_256)
    payload = b"".join(sender.seal(_MESSAGE))
    expect_equal("receiver open", bytes(receiver.open(payload)), _MESSAGE)
    _expect_refused("a flipped signature bit", lambda: receiver.open(payload[:2] + flip_first_bit(payload[2:])))


for _backend in ("cryptography", "pycryptodome"):
    _add(
        "Ed25519 sign/verify, RFC 8032 TEST 1-3",
        _backend,
        KAT,
        _via("signatures", RFC8032_71),
        _eddsa_check("Ed25519", _backend, lambda: [vectors.ED25519[name] for name in ED25519_VECTORS]),
    )
    _add(
        "Ed448 sign/verify, RFC 8032 blank message",
        _backend,
        KAT,
        _via("signatures", RFC8032_74),
        _eddsa_check("Ed448", _backend, lambda: [vectors.ED448["blank"]]),
    )
    for _curve, _section in (("P-256", "A.2.5"), ("P-384", "A.2.6")):
        _add(
            f"ECDSA {_curve} verifies the RFC 6979 signature",
            _backend,
            KAT,
            _via("signatures", f'RFC 6979 §{_section} ({_curve}, message "sample")'),
            _ecdsa_check(_curve, _backend),
        )
    _add(
        "RSA-2048 PSS-SHA256 agrees with the library",
        _backend,
        CROSS_CHECK,
        _via(
            "signatures",
            "cross-check against cryptography with PSS-SHA256, MGF1-SHA256, 32-byte salt "
            "(no published vector; PSS is randomised)",
        ),
        _rsa_pss_cross_check(_backend),
    )
_add(
    "ML-DSA-44 KeyGen from seed, sign/verify",
    "cryptography",
    KAT,
    _via("signatures", MLDSA44_KEYGEN_SOURCE),
    _mldsa_check,
)


# ======================================================================================
# RSA-OAEP (pke.py): the adapter's ciphertext decrypts in the library, and back
# ======================================================================================


def _rsa_oaep_cross_check(backend: str) -> Callable[[], None]:
    def run() -> None:
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding

        from app.core.schemes.pke import PkeScheme

        library_key, _ = interop_keys()
        oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None)
        cipher = _create(PkeScheme, "rsa-oaep", backend, {"bits": 2048}).cipher
        public = library_key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        block = cipher.encrypt(cipher.load_public(public), _MESSAGE)
        expect_equal(
            "library OAEP-SHA256 decryption of the adapter's ciphertext", library_key.decrypt(block, oaep), _MESSAGE
        )
        if backend == "cryptography":  # pycryptodome's private handle is made inside generate()
            theirs = library_key.public_key().encrypt(_MESSAGE, oaep)
            expect_equal(
                "adapter decryption of the library's ciphertext", bytes(cipher.decrypt(library_key, theirs)), _MESSAGE
            )

    return run


for _backend in ("cryptography", "pycryptodome"):
    _add(
        "RSA-2048 OAEP-SHA256 agrees with the library",
        _backend,
        CROSS_CHECK,
        _via(
            "pke",
            "cross-check against cryptography with OAEP-SHA256, MGF1-SHA256 (no published vector; OAEP is randomised)",
        ),
        _rsa_oaep_cross_check(_backend),
    )


# ======================================================================================
# KEM (hybrid.py): published decapsulation through the adapter
# ======================================================================================


def _mlkem_check(level: int, name: str) -> Callable[[], None]:
    def run() -> None:
        from cryptography.hazmat.primitives.asymmetric import mlkem

        from app.core.schemes.hybrid import HybridScheme

        vector = vectors.MLKEM[name]
        kem = _create(HybridScheme, "ml-kem", "cryptography", {"level": level}).kem
        private = getattr(mlkem, f"MLKEM{level}PrivateKey").from_seed_bytes(vector.seed)
        expect_equal(
            "decapsulate (published ciphertext)", kem.decapsulate(private, vector.ciphertext), vector.shared_secret
        )
        ek = private.public_key().public_bytes_raw()
        expect_equal("H(ek) = SHA3-256(ek)", sha3_256(ek), vector.ek_sha3_256)
        shared, enc = kem.encapsulate(kem.load_public(ek))
        expect_equal("decapsulate(encapsulate)", kem.decapsulate(private, enc), shared)

    return run


_add(
    "ML-KEM-768 KeyGen from seed + Decaps",
    "cryptography",
    KAT,
    _via("hybrid", CCTV_UNLUCKY.format(file="ML-KEM-768.txt")),
    _mlkem_check(768, "ML-KEM-768 unlucky"),
)
_add(
    "ML-KEM-1024 KeyGen from seed + Decaps",
    "cryptography",
    KAT,
    _via("hybrid", CCTV_UNLUCKY.format(file="ML-KEM-1024.txt")),
    _mlkem_check(1024, "ML-KEM-1024 unlucky"),
)

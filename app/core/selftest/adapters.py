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
``known_answer_receiver(private)`` of ``PkeScheme`` and ``HybridScheme`` (decrypt with
a published key), and the public key material a ``Sender.handshake`` is given anyway
(an AEAD's pre-shared key, an HKDF salt, a public key). Where a scheme is randomised
and no published vector fits its fixed parameters (AEAD nonces come from a counter
with a random prefix, RSA-PSS salts, ChaCha20-Poly1305 without AAD), the adapter's
output is checked against the library called directly with the scheme's declared
parameters, or against other independent code on fixed inputs, and reported as a
cross-check, never as a KAT. A check whose receiver meets a published answer stays a
KAT when it also checks the randomised sender that way (the AEAD and KEM checks).

Each check names the registry ids it drives (``schemes``); every registered scheme,
on every backend, must be named by one (tests/core/selftest/test_selftest_adapter_checks.py).
Names start with "App adapter"; :func:`app.core.selftest.run_selftests` runs these
after the library checks. Vectors are read from ``resources/selftest`` (through
:mod:`app.core.selftest.vectors`) when a check runs, so there is one copy of each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.core.selftest import adapters_encryption, adapters_tls, vectors
from app.core.selftest.adapter_parts import (
    MESSAGE,
    adder,
    aead_library,
    create,
    expect_refused,
    library_private_key,
    sec1_point,
    session,
    via,
)
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
from app.core.selftest.post_quantum import MLDSA44_KEYGEN_SOURCE, sha3_256
from app.core.selftest.rsa import interop_keys
from app.core.selftest.symmetric import FIPS180_SOURCE, FIPS202_SOURCE, RFC7693_SOURCE, gcm_source
from app.core.selftest.vectors import EddsaVector

__all__ = ["ADAPTER_CHECKS"]

ADAPTER_CHECKS: list[SelftestCheck] = []
"""Every adapter check, in the order they run."""

_add = adder(ADAPTER_CHECKS)


# ======================================================================================
# AEAD (symmetric.py): published ciphertexts open; sealed output is the library's
# ======================================================================================


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
        aead_library(scheme_id, key).encrypt(nonce, plaintext, None),
    )
    expect(b"".join(sender.seal(plaintext))[:12] != nonce, "two seals used the same nonce")
    receiver = scheme.new_receiver()
    own_key = receiver.setup()
    genuine = nonce + aead_library(scheme_id, own_key).encrypt(nonce, plaintext, None)
    expect_equal("receiver open", bytes(receiver.open(genuine)), plaintext)
    expect_refused("a payload with a flipped tag bit", lambda: receiver.open(flip_last_bit(genuine)))


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
    for _case, _title in ((3, "AES-128-GCM, GCM test case 3"), (15, "AES-256-GCM, GCM test case 15")):
        _add(
            _title, _backend, KAT, via("symmetric", gcm_source(_case)), _aead_kat(_backend, _case), schemes=("aes-gcm",)
        )
    _add(
        "ChaCha20-Poly1305 seal/open agrees with the library",
        _backend,
        CROSS_CHECK,
        via(
            "symmetric",
            "cross-check against cryptography with the RFC 8439 key and plaintext (no published vector without AAD)",
        ),
        _chacha_cross_check(_backend),
        schemes=("chacha20-poly1305",),
    )


# ======================================================================================
# Hashes and HKDF (digests.py), and the key agreements' KDF (dh.py)
# ======================================================================================


def _hash_kat(scheme_id: str, backend: str, name: str) -> Callable[[], None]:
    def run() -> None:
        from app.core.schemes import registry

        vector = vectors.DIGESTS_OF_ABC[name]
        sender, receiver = session(registry.create(scheme_id, backend))
        parts = sender.seal(vector.message)
        expect_equal("digest sent by the sender", parts[-1], vector.digest)
        payload = vector.message + vector.digest
        expect_equal("receiver open", bytes(receiver.open(payload)), vector.message)
        expect_refused("a flipped digest", lambda: receiver.open(flip_last_bit(payload)))

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
        expect_refused("a flipped derived key", lambda: receiver.open(ikm + flip_last_bit(own)))

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
        _add(
            f'{_label}("abc")',
            _backend,
            KAT,
            via("digests", _source),
            _hash_kat(_scheme_id, _backend, _label),
            schemes=(_scheme_id,),
        )
    for _digest in ("sha256", "sha384"):
        _add(
            f"HKDF-{_digest.upper()} scheme agrees with the library",
            _backend,
            CROSS_CHECK,
            via(
                "digests",
                "cross-check against cryptography's HKDF on fixed input, salt and the app's info "
                "(no published vector with the scheme's 32-byte salt and info)",
            ),
            _hkdf_cross_check(_backend, _digest),
            schemes=("hkdf",),
        )
    _add(
        "key-agreement KDF, RFC 5869 A.3",
        _backend,
        KAT,
        via("dh", "RFC 5869 Appendix A.3 (test case 3)"),
        _kdf_kat(_backend),
        schemes=(),  # derive_key itself: the key agreements' checks below drive their sessions
    )


# ======================================================================================
# Key agreement (key_agreement.py / dh.py): the published exchange, then the session key
# ======================================================================================


def _ka_check(
    scheme_id: str, group: str, backend: str, vector: Callable[[], tuple[Any, bytes, bytes]]
) -> Callable[[], None]:
    """exchange(published private, published peer key) = published secret; the session key
    is HKDF-SHA256(secret, info = KDF_INFO) and AES-256-GCM under it opens; and a receiver
    holding the published private key opens a message sealed under that key in both
    exchange patterns, the peer's key as the sender's ephemeral key (in the handshake for
    a session, ahead of the message per message)."""

    def run() -> None:
        from app.core.schemes.dh import KDF_INFO
        from app.core.schemes.key_agreement import KeyAgreementScheme

        private, peer, shared = vector()
        params = {"curve": group, "kdf": "hkdf-sha256"} if scheme_id == "ecdh" else {"kdf": "hkdf-sha256"}
        scheme = create(KeyAgreementScheme, scheme_id, backend, params)
        got = scheme.group.exchange(library_private_key(group, backend, private), peer)
        expect_equal("shared secret", got, shared)
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF

        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=KDF_INFO).derive(shared)
        payload = b"".join(scheme.session_key_of(got).seal(b"session"))
        expect_equal(
            "session message under HKDF-SHA256(secret)",
            aead_library("aes-gcm", key).decrypt(payload[:12], payload[12:], None),
            b"session",
        )
        from app.core.vocab import Exchange

        nonce = bytes(range(12))
        sealed = nonce + aead_library("aes-gcm", key).encrypt(nonce, b"message", None)
        for exchange in Exchange:
            receiver = scheme.with_exchange(exchange).new_receiver()
            receiver.private = library_private_key(group, backend, private)  # type: ignore[attr-defined]
            if exchange is Exchange.SESSION:
                receiver.handshake(peer)
            opened = receiver.open(sealed if exchange is Exchange.SESSION else peer + sealed)
            expect_equal(f"receiver open, the peer's key as the ephemeral one ({exchange})", bytes(opened), b"message")

    return run


def _ecdh_vector(curve: str, size: int) -> Callable[[], tuple[Any, bytes, bytes]]:
    def vector() -> tuple[Any, bytes, bytes]:
        v = vectors.ECDH[curve]
        return v.private_a, sec1_point(size, v.public_b), v.shared[0].to_bytes(size, "big")

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
            via("key_agreement", _source + " and the session key from it"),
            _ka_check(_scheme_id, _group, _backend, _vector),
            schemes=(_scheme_id,),
        )


# ======================================================================================
# Signatures (signatures.py): published keys sign and verify through the sessions
# ======================================================================================


def _eddsa_check(curve: str, backend: str, load: Callable[[], list[EddsaVector]]) -> Callable[[], None]:
    def run() -> None:
        from app.core.schemes.signatures import SignatureScheme

        scheme = create(SignatureScheme, curve.lower(), backend)
        for number, vector in enumerate(load(), 1):
            key: Any
            if backend == "cryptography":
                from cryptography.hazmat.primitives.asymmetric import ed448, ed25519

                cls = ed25519.Ed25519PrivateKey if curve == "Ed25519" else ed448.Ed448PrivateKey
                key = cls.from_private_bytes(vector.secret)
            else:
                from Crypto.Signature import eddsa

                key = eddsa.import_private_key(vector.secret)
            sender, receiver = session(scheme, scheme.known_answer_sender(key))
            parts = sender.seal(vector.message)
            expect_equal(f"vector {number}: signature", parts[1], vector.signature)
            published = len(vector.signature).to_bytes(2, "big") + vector.signature + vector.message
            expect_equal(f"vector {number}: receiver open", bytes(receiver.open(published)), vector.message)
            flipped = published[:2] + flip_last_bit(vector.signature) + vector.message
            expect_refused(f"vector {number}: a flipped signature bit", lambda: receiver.open(flipped))  # noqa: B023 - called at once
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
        public = sec1_point(size, (v.public_x, v.public_y))
        scheme = create(SignatureScheme, "ecdsa", backend, {"curve": curve})
        receiver = scheme.new_receiver()
        receiver.handshake(public)
        signature = _der(v.r, v.s)
        payload = len(signature).to_bytes(2, "big") + signature + v.message
        expect_equal("receiver open of the published signature", bytes(receiver.open(payload)), v.message)
        expect_refused("the published signature over another message", lambda: receiver.open(payload + b"!"))
        key = library_private_key(curve, backend, v.private)
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
        scheme = create(SignatureScheme, "rsa-pss", backend, {"bits": 2048})
        sender, receiver = session(
            scheme, scheme.known_answer_sender(library_key if backend == "cryptography" else pycryptodome_key)
        )
        pss = padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32)
        message = MESSAGE
        signature = sender.seal(message)[1]
        try:
            library_key.public_key().verify(signature, message, pss, hashes.SHA256())
        except InvalidSignature:
            raise SelftestMismatch("the adapter's signature does not verify as PSS-SHA256, salt 32") from None
        theirs = library_key.sign(message, pss, hashes.SHA256())
        payload = len(theirs).to_bytes(2, "big") + theirs + message
        expect_equal("receiver open of the library's signature", bytes(receiver.open(payload)), message)
        flipped = payload[:2] + flip_first_bit(theirs) + message
        expect_refused("a flipped signature bit", lambda: receiver.open(flipped))

    return run


def _mldsa_check() -> None:
    from cryptography.hazmat.primitives.asymmetric import mldsa

    from app.core.schemes.signatures import SignatureScheme

    scheme = create(SignatureScheme, "ml-dsa", "cryptography", {"level": 44})
    vector = vectors.MLDSA_KEYGEN["ML-DSA-44"]
    key = mldsa.MLDSA44PrivateKey.from_seed_bytes(vector.seed)
    sender, receiver = session(scheme, scheme.known_answer_sender(key))
    sender2 = scheme.known_answer_sender(key)
    expect_equal("H(pk) = SHA3-256 of the verification key sent", sha3_256(sender2.handshake(b"")), vector.pk_sha3_256)
    payload = b"".join(sender.seal(MESSAGE))
    expect_equal("receiver open", bytes(receiver.open(payload)), MESSAGE)
    expect_refused("a flipped signature bit", lambda: receiver.open(payload[:2] + flip_first_bit(payload[2:])))


for _backend in ("cryptography", "pycryptodome"):
    _add(
        "Ed25519 sign/verify, RFC 8032 TEST 1-3",
        _backend,
        KAT,
        via("signatures", RFC8032_71),
        _eddsa_check("Ed25519", _backend, lambda: [vectors.ED25519[name] for name in ED25519_VECTORS]),
        schemes=("ed25519",),
    )
    _add(
        "Ed448 sign/verify, RFC 8032 blank message",
        _backend,
        KAT,
        via("signatures", RFC8032_74),
        _eddsa_check("Ed448", _backend, lambda: [vectors.ED448["blank"]]),
        schemes=("ed448",),
    )
    for _curve, _section in (("P-256", "A.2.5"), ("P-384", "A.2.6")):
        _add(
            f"ECDSA {_curve} verifies the RFC 6979 signature",
            _backend,
            KAT,
            via("signatures", f'RFC 6979 §{_section} ({_curve}, message "sample")'),
            _ecdsa_check(_curve, _backend),
            schemes=("ecdsa",),
        )
    _add(
        "RSA-2048 PSS-SHA256 agrees with the library",
        _backend,
        CROSS_CHECK,
        via(
            "signatures",
            "cross-check against cryptography with PSS-SHA256, MGF1-SHA256, 32-byte salt "
            "(no published vector; PSS is randomised)",
        ),
        _rsa_pss_cross_check(_backend),
        schemes=("rsa-pss",),
    )
_add(
    "ML-DSA-44 KeyGen from seed, sign/verify",
    "cryptography",
    KAT,
    via("signatures", MLDSA44_KEYGEN_SOURCE),
    _mldsa_check,
    schemes=("ml-dsa",),
)


# ======================================================================================
# Public-key encryption and KEMs (pke.py, hybrid.py): in adapters_encryption.py, run last
# ======================================================================================

ADAPTER_CHECKS += adapters_encryption.CHECKS
# The tls13 scheme's message reader (tls13.py, tls_messages.py): in adapters_tls.py.
ADAPTER_CHECKS += adapters_tls.CHECKS

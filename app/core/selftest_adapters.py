"""Known-answer checks through the app's own scheme adapters (``app/core/schemes``).

:mod:`app.core.selftest` proves the libraries compute the published answers; it calls
them directly. The benchmarks time something else: the adapters that wrap those
libraries (which key, nonce layout, digest, KDF info string, encoding). A wrong
adapter would measure the wrong thing while every library check passes. The checks
here therefore drive the same published vectors through the adapters: the sessions'
``Sender``/``Receiver`` where the scheme's inputs can be fixed (a pre-shared key, a
signer's private key, a message), and otherwise the adapter object the session uses
(``AeadKey``, ``DhGroup.exchange``, ``derive_key``, a KEM's ``decapsulate``).

Fixed inputs enter only through explicit, self-test-only doors that no profile
reaches: ``SignatureScheme.known_answer_sender(key)`` (sign with a published key),
and the public key material a ``Sender.handshake`` is given anyway (an AEAD's
pre-shared key, an HKDF salt). Where a scheme is randomised and no published vector
fits its fixed parameters (AEAD nonces come from a counter with a random prefix,
RSA-PSS salts, ChaCha20-Poly1305 without AAD), the adapter's output is checked
against the library called directly with the scheme's declared parameters, and
reported as a cross-check, never as a KAT.

Names start with "App adapter"; :func:`app.core.selftest.run_selftests` runs these
after the library checks. Vectors are read from :mod:`app.core.selftest` when a check
runs, so there is one copy of each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.core import selftest as lib
from app.core.selftest import CROSS_CHECK, KAT, SelftestCheck, SelftestMismatch, _expect, _expect_equal

__all__ = ["ADAPTER_CHECKS"]

ADAPTER_CHECKS: list[SelftestCheck] = []
"""Every adapter check, in the order they run."""


def _add(title: str, backend: str, kind: str, source: str, run: Callable[[], None]) -> None:
    ADAPTER_CHECKS.append(SelftestCheck(f"App adapter {title} [{backend}]", backend, kind, source, run))


def _via(module: str, source: str) -> str:
    return f"{source}, through app/core/schemes/{module}.py"


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

# McGrew & Viega GCM Appendix B test case 15: AES-256, the 64-byte plaintext, no AAD
# (test case 16 is the same with AAD; the app's AEADs use none).
GCM_TEST_CASE_15_CT_TAG = bytes.fromhex(
    "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
    "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad"
    "b094dac5d93471bdec1a502270e3cc6c"
)


def _aead_library(algorithm: str, key: bytes) -> Any:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

    return AESGCM(key) if algorithm == "aes-gcm" else ChaCha20Poly1305(key)


def _aead_session_matches_library(scheme_id: str, backend: str, params: dict[str, Any], key: bytes,
                                  plaintext: bytes) -> None:
    """The sender seals with the given pre-shared key exactly as the library does (no AAD,
    nonce || ciphertext || tag); the receiver opens the library's output and refuses a flip."""
    from app.core.schemes import registry

    scheme = registry.create(scheme_id, backend, params)
    sender = scheme.new_sender()
    _expect_equal("sender handshake message", sender.handshake(key), b"")
    payload = b"".join(sender.seal(plaintext))
    nonce, rest = payload[:12], payload[12:]
    _expect_equal("sealed payload (nonce || library ciphertext || tag)", rest,
                  _aead_library(scheme_id, key).encrypt(nonce, plaintext, None))
    _expect(b"".join(sender.seal(plaintext))[:12] != nonce, "two seals used the same nonce")
    receiver = scheme.new_receiver()
    own_key = receiver.setup()
    genuine = nonce + _aead_library(scheme_id, own_key).encrypt(nonce, plaintext, None)
    _expect_equal("receiver open", bytes(receiver.open(genuine)), plaintext)
    _expect_refused("a payload with a flipped tag bit", lambda: receiver.open(lib._flip_last_bit(genuine)))


def _aead_kat(backend: str, key_bits: int, ct_tag: Callable[[], bytes]) -> Callable[[], None]:
    def run() -> None:
        from app.core.schemes.symmetric import AeadKey

        key = (lib._GCM_KEY * 2)[: key_bits // 8]
        payload = lib._GCM_IV + ct_tag()
        _expect_equal("AeadKey.open of the published ciphertext",
                      bytes(AeadKey("aes-gcm", backend, key).open(payload)), lib._GCM_PLAINTEXT)
        _aead_session_matches_library("aes-gcm", backend, {"key_bits": key_bits}, key, lib._GCM_PLAINTEXT)

    return run


def _chacha_cross_check(backend: str) -> Callable[[], None]:
    def run() -> None:
        vector = lib.RFC8439_AEAD
        _aead_session_matches_library("chacha20-poly1305", backend, {}, vector.key, vector.plaintext)

    return run


for _backend in ("cryptography", "pycryptodome"):
    _add("AES-128-GCM, GCM test case 3", _backend, KAT, _via("symmetric", lib._gcm_source(3)),
         _aead_kat(_backend, 128, lambda: lib.GCM_TEST_CASE_3.ciphertext + lib.GCM_TEST_CASE_3.tag))
    _add("AES-256-GCM, GCM test case 15", _backend, KAT, _via("symmetric", lib._gcm_source(15)),
         _aead_kat(_backend, 256, lambda: GCM_TEST_CASE_15_CT_TAG))
    _add("ChaCha20-Poly1305 seal/open agrees with the library", _backend, CROSS_CHECK,
         _via("symmetric", "cross-check against cryptography with the RFC 8439 key and plaintext "
                           "(no published vector without AAD)"),
         _chacha_cross_check(_backend))


# ======================================================================================
# Hashes and HKDF (digests.py), and the key agreements' KDF (dh.py)
# ======================================================================================


def _hash_kat(scheme_id: str, backend: str, constant: str) -> Callable[[], None]:
    def run() -> None:
        from app.core.schemes import registry

        expected = getattr(lib, constant)
        sender, receiver = _session(registry.create(scheme_id, backend))
        parts = sender.seal(lib.HASH_MESSAGE)
        _expect_equal("digest sent by the sender", parts[-1], expected)
        payload = lib.HASH_MESSAGE + expected
        _expect_equal("receiver open", bytes(receiver.open(payload)), lib.HASH_MESSAGE)
        _expect_refused("a flipped digest", lambda: receiver.open(lib._flip_last_bit(payload)))

    return run


_HASHES = [("sha256", "SHA-256", "SHA256_ABC", lib._FIPS180_SOURCE),
           ("sha384", "SHA-384", "SHA384_ABC", lib._FIPS180_SOURCE),
           ("sha512", "SHA-512", "SHA512_ABC", lib._FIPS180_SOURCE),
           ("sha3-256", "SHA3-256", "SHA3_256_ABC", lib._FIPS202_SOURCE),
           ("sha3-512", "SHA3-512", "SHA3_512_ABC", lib._FIPS202_SOURCE),
           ("blake2b", "BLAKE2b-512", "BLAKE2B_512_ABC", lib._RFC7693_SOURCE)]


def _hkdf_cross_check(backend: str, digest: str) -> Callable[[], None]:
    """The HKDF scheme derives HKDF(ikm, the receiver's salt, HKDF_INFO) with the declared hash."""

    def run() -> None:
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF

        from app.core.schemes import digests, registry

        ikm, salt, length = lib.RFC5869_A2.ikm[:32], lib.RFC5869_A2.salt[:32], 42
        scheme = registry.create("hkdf", backend, {"digest": digest, "secret_size": 32, "output_length": length})
        sender = scheme.new_sender()
        sender.handshake(salt)
        algorithm = hashes.SHA256() if digest == "sha256" else hashes.SHA384()
        expected = HKDF(algorithm=algorithm, length=length, salt=salt, info=digests.HKDF_INFO).derive(ikm)
        _expect_equal("derived key", sender.seal(ikm)[-1], expected)
        receiver = scheme.new_receiver()
        own_salt = receiver.setup()
        own = HKDF(algorithm=algorithm, length=length, salt=own_salt, info=digests.HKDF_INFO).derive(ikm)
        _expect_equal("receiver open", bytes(receiver.open(ikm + own)), ikm)
        _expect_refused("a flipped derived key", lambda: receiver.open(ikm + lib._flip_last_bit(own)))

    return run


def _kdf_kat(backend: str) -> Callable[[], None]:
    def run() -> None:
        from app.core.schemes.dh import derive_key

        vector = lib.RFC5869_A3  # no salt, empty info: the key agreements' KDF with info = b""
        got = derive_key("hkdf-sha256", vector.ikm, backend, length=len(vector.okm), info=vector.info)
        _expect_equal("derive_key('hkdf-sha256') OKM", got, vector.okm)

    return run


for _backend in ("cryptography", "pycryptodome"):
    for _scheme_id, _label, _constant, _source in _HASHES:
        _add(f'{_label}("abc")', _backend, KAT, _via("digests", _source), _hash_kat(_scheme_id, _backend, _constant))
    for _digest in ("sha256", "sha384"):
        _add(f"HKDF-{_digest.upper()} scheme agrees with the library", _backend, CROSS_CHECK,
             _via("digests", "cross-check against cryptography's HKDF on fixed input, salt and the app's info "
                             "(no published vector with the scheme's 32-byte salt and info)"),
             _hkdf_cross_check(_backend, _digest))
    _add("key-agreement KDF, RFC 5869 A.3", _backend, KAT, _via("dh", "RFC 5869 Appendix A.3 (test case 3)"),
         _kdf_kat(_backend))


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


def _ka_check(scheme_id: str, group: str, backend: str, vector: Callable[[], tuple[Any, bytes, bytes]]
              ) -> Callable[[], None]:
    """exchange(published private, published peer key) = published secret; the session key
    is HKDF-SHA256(secret, info = KDF_INFO) and AES-256-GCM under it opens."""

    def run() -> None:
        from app.core.schemes import registry
        from app.core.schemes.dh import KDF_INFO

        private, peer, shared = vector()
        params = {"curve": group, "kdf": "hkdf-sha256"} if scheme_id == "ecdh" else {"kdf": "hkdf-sha256"}
        scheme = registry.create(scheme_id, backend, params)
        got = scheme.group.exchange(_ka_private(group, backend, private), peer)
        _expect_equal("shared secret", got, shared)
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.kdf.hkdf import HKDF

        key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=KDF_INFO).derive(shared)
        payload = b"".join(scheme.session_key(got).seal(b"session"))
        _expect_equal("session message under HKDF-SHA256(secret)",
                      _aead_library("aes-gcm", key).decrypt(payload[:12], payload[12:], None), b"session")

    return run


def _point(size: int, xy: tuple[int, int]) -> bytes:
    return b"\x04" + xy[0].to_bytes(size, "big") + xy[1].to_bytes(size, "big")


def _ecdh_vector(constant: str, size: int) -> Callable[[], tuple[Any, bytes, bytes]]:
    def vector() -> tuple[Any, bytes, bytes]:
        v = getattr(lib, constant)
        return v.private_a, _point(size, v.public_b), v.shared[0].to_bytes(size, "big")

    return vector


_KA: list[tuple[str, str, tuple[str, ...], str, Callable[[], tuple[Any, bytes, bytes]]]] = [
    ("x25519", "X25519", ("cryptography", "pycryptodome"), "RFC 7748 §6.1 (Curve25519 Diffie-Hellman example)",
     lambda: (lib.RFC7748_X25519_ALICE_PRIVATE, lib.RFC7748_X25519_BOB_PUBLIC, lib.RFC7748_X25519_SHARED)),
    ("x448", "X448", ("cryptography", "pycryptodome"), "RFC 7748 §6.2 (Curve448 Diffie-Hellman example)",
     lambda: (lib.RFC7748_X448_ALICE_PRIVATE, lib.RFC7748_X448_BOB_PUBLIC, lib.RFC7748_X448_SHARED)),
    ("ecdh", "P-256", ("cryptography", "pycryptodome", "tinyec"), "RFC 5903 §8.1 (ECDH-256, P-256)",
     _ecdh_vector("RFC5903_P256", 32)),
    ("ecdh", "P-384", ("cryptography", "pycryptodome", "tinyec"), "RFC 5903 §8.2 (ECDH-384, P-384)",
     _ecdh_vector("RFC5903_P384", 48)),
    ("ecdh", "brainpoolP256r1", ("cryptography", "tinyec"), "RFC 7027 Appendix A.1 (ECDH on brainpoolP256r1)",
     _ecdh_vector("RFC7027_BRAINPOOLP256R1", 32)),
]

for _scheme_id, _group, _backends, _source, _vector in _KA:
    for _backend in _backends:
        _add(f"{'ECDH ' if _scheme_id == 'ecdh' else ''}{_group} key agreement + HKDF-SHA256 session key",
             _backend, KAT,
             _via("key_agreement", _source + " and the session key from it"),
             _ka_check(_scheme_id, _group, _backend, _vector))


# ======================================================================================
# Signatures (signatures.py): published keys sign and verify through the sessions
# ======================================================================================


def _eddsa_check(curve: str, backend: str, vectors: Callable[[], list[Any]]) -> Callable[[], None]:
    def run() -> None:
        from app.core.schemes import registry

        scheme = registry.create(curve.lower(), backend)
        for number, vector in enumerate(vectors(), 1):
            if backend == "cryptography":
                from cryptography.hazmat.primitives.asymmetric import ed448, ed25519

                cls = ed25519.Ed25519PrivateKey if curve == "Ed25519" else ed448.Ed448PrivateKey
                key = cls.from_private_bytes(vector.secret)
            else:
                from Crypto.Signature import eddsa

                key = eddsa.import_private_key(vector.secret)
            sender, receiver = _session(scheme, scheme.known_answer_sender(key))
            parts = sender.seal(vector.message)
            _expect_equal(f"vector {number}: signature", parts[1], vector.signature)
            published = len(vector.signature).to_bytes(2, "big") + vector.signature + vector.message
            _expect_equal(f"vector {number}: receiver open", bytes(receiver.open(published)), vector.message)
            flipped = published[:2] + lib._flip_last_bit(vector.signature) + vector.message
            _expect_refused(f"vector {number}: a flipped signature bit", lambda: receiver.open(flipped))
            receiver = scheme.new_receiver()
            receiver.handshake(vector.public)  # the published public key imports as is

    return run


def _der(r: int, s: int) -> bytes:
    from Crypto.Util.asn1 import DerSequence

    encoded: bytes = DerSequence([r, s]).encode()
    return encoded


def _ecdsa_check(curve: str, backend: str, constant: str) -> Callable[[], None]:
    """The published RFC 6979 signature verifies through the receiver; the adapter's own
    (randomised) signature verifies in the library with the curve's declared digest."""

    def run() -> None:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import ec

        from app.core.schemes import registry

        v = getattr(lib, constant)
        size = 32 if curve == "P-256" else 48
        public = _point(size, (v.public_x, v.public_y))
        scheme = registry.create("ecdsa", backend, {"curve": curve})
        receiver = scheme.new_receiver()
        receiver.handshake(public)
        signature = _der(v.r, v.s)
        payload = len(signature).to_bytes(2, "big") + signature + v.message
        _expect_equal("receiver open of the published signature", bytes(receiver.open(payload)), v.message)
        _expect_refused("the published signature over another message", lambda: receiver.open(payload + b"!"))
        key = _ka_private(curve, backend, v.private)
        sender = scheme.known_answer_sender(key)
        _expect_equal("verification key sent", sender.handshake(b""), public)
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

        from app.core.schemes import registry

        library_key, pycryptodome_key = lib._rsa_interop_keys()
        scheme = registry.create("rsa-pss", backend, {"bits": 2048})
        sender, receiver = _session(scheme, scheme.known_answer_sender(
            library_key if backend == "cryptography" else pycryptodome_key))
        pss = padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=32)
        message = lib.HASH_MESSAGE
        signature = sender.seal(message)[1]
        try:
            library_key.public_key().verify(signature, message, pss, hashes.SHA256())
        except InvalidSignature:
            raise SelftestMismatch("the adapter's signature does not verify as PSS-SHA256, salt 32") from None
        theirs = library_key.sign(message, pss, hashes.SHA256())
        payload = len(theirs).to_bytes(2, "big") + theirs + message
        _expect_equal("receiver open of the library's signature", bytes(receiver.open(payload)), message)
        flipped = payload[:2] + lib._flip_first_bit(theirs) + message
        _expect_refused("a flipped signature bit", lambda: receiver.open(flipped))

    return run


def _mldsa_check() -> None:
    from cryptography.hazmat.primitives.asymmetric import mldsa

    from app.core.schemes import registry

    scheme = registry.create("ml-dsa", "cryptography", {"level": 44})
    key = mldsa.MLDSA44PrivateKey.from_seed_bytes(lib.ACVP_MLDSA44_KEYGEN_SEED)
    sender, receiver = _session(scheme, scheme.known_answer_sender(key))
    sender2 = scheme.known_answer_sender(key)
    _expect_equal("H(pk) = SHA3-256 of the verification key sent",
                  lib._sha3_256(sender2.handshake(b"")), lib.ACVP_MLDSA44_KEYGEN_PK_SHA3_256)
    payload = b"".join(sender.seal(lib.HASH_MESSAGE))
    _expect_equal("receiver open", bytes(receiver.open(payload)), lib.HASH_MESSAGE)
    _expect_refused("a flipped signature bit", lambda: receiver.open(payload[:2] + lib._flip_first_bit(payload[2:])))


for _backend in ("cryptography", "pycryptodome"):
    _add("Ed25519 sign/verify, RFC 8032 TEST 1-3", _backend, KAT,
         _via("signatures", "RFC 8032 §7.1 (Ed25519 TEST 1, TEST 2, TEST 3)"),
         _eddsa_check("Ed25519", _backend, lambda: list(lib.RFC8032_ED25519)))
    _add("Ed448 sign/verify, RFC 8032 blank message", _backend, KAT,
         _via("signatures", "RFC 8032 §7.4 (Ed448, first test: blank message)"),
         _eddsa_check("Ed448", _backend, lambda: [lib.RFC8032_ED448_BLANK]))
    for _curve, _constant, _section in (("P-256", "RFC6979_P256_SHA256", "A.2.5"),
                                        ("P-384", "RFC6979_P384_SHA384", "A.2.6")):
        _add(f"ECDSA {_curve} verifies the RFC 6979 signature", _backend, KAT,
             _via("signatures", f"RFC 6979 §{_section} ({_curve}, message \"sample\")"),
             _ecdsa_check(_curve, _backend, _constant))
    _add("RSA-2048 PSS-SHA256 agrees with the library", _backend, CROSS_CHECK,
         _via("signatures", "cross-check against cryptography with PSS-SHA256, MGF1-SHA256, 32-byte salt "
                            "(no published vector; PSS is randomised)"),
         _rsa_pss_cross_check(_backend))
_add("ML-DSA-44 KeyGen from seed, sign/verify", "cryptography", KAT,
     _via("signatures", "NIST ACVP-Server ML-DSA-keyGen-FIPS204 (vsId 42), tcId 1: seed -> pk (via SHA3-256)"),
     _mldsa_check)


# ======================================================================================
# RSA-OAEP (pke.py): the adapter's ciphertext decrypts in the library, and back
# ======================================================================================


def _rsa_oaep_cross_check(backend: str) -> Callable[[], None]:
    def run() -> None:
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding

        from app.core.schemes import registry

        library_key, _ = lib._rsa_interop_keys()
        oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None)
        cipher = registry.create("rsa-oaep", backend, {"bits": 2048}).cipher
        public = library_key.public_key().public_bytes(serialization.Encoding.DER,
                                                       serialization.PublicFormat.SubjectPublicKeyInfo)
        block = cipher.encrypt(cipher.load_public(public), lib.HASH_MESSAGE)
        _expect_equal("library OAEP-SHA256 decryption of the adapter's ciphertext",
                      library_key.decrypt(block, oaep), lib.HASH_MESSAGE)
        if backend == "cryptography":  # pycryptodome's private handle is made inside generate()
            theirs = library_key.public_key().encrypt(lib.HASH_MESSAGE, oaep)
            _expect_equal("adapter decryption of the library's ciphertext",
                          bytes(cipher.decrypt(library_key, theirs)), lib.HASH_MESSAGE)

    return run


for _backend in ("cryptography", "pycryptodome"):
    _add("RSA-2048 OAEP-SHA256 agrees with the library", _backend, CROSS_CHECK,
         _via("pke", "cross-check against cryptography with OAEP-SHA256, MGF1-SHA256 "
                     "(no published vector; OAEP is randomised)"),
         _rsa_oaep_cross_check(_backend))


# ======================================================================================
# KEM (hybrid.py): published decapsulation through the adapter
# ======================================================================================


def _mlkem_check(level: int, constant: str) -> Callable[[], None]:
    def run() -> None:
        from cryptography.hazmat.primitives.asymmetric import mlkem

        from app.core.schemes import registry

        vector = getattr(lib, constant)
        kem = registry.create("ml-kem", "cryptography", {"level": level}).kem
        private = getattr(mlkem, f"MLKEM{level}PrivateKey").from_seed_bytes(vector.seed)
        _expect_equal("decapsulate (published ciphertext)", kem.decapsulate(private, vector.ciphertext),
                      vector.shared_secret)
        ek = private.public_key().public_bytes_raw()
        _expect_equal("H(ek) = SHA3-256(ek)", lib._sha3_256(ek), vector.ek_sha3_256)
        shared, enc = kem.encapsulate(kem.load_public(ek))
        _expect_equal("decapsulate(encapsulate)", kem.decapsulate(private, enc), shared)

    return run


_add("ML-KEM-768 KeyGen from seed + Decaps", "cryptography", KAT, _via("hybrid", lib._CCTV_UNLUCKY.format(file="ML-KEM-768.txt")),
     _mlkem_check(768, "CCTV_MLKEM768_UNLUCKY"))
_add("ML-KEM-1024 KeyGen from seed + Decaps", "cryptography", KAT, _via("hybrid", lib._CCTV_UNLUCKY.format(file="ML-KEM-1024.txt")),
     _mlkem_check(1024, "CCTV_MLKEM1024_UNLUCKY"))

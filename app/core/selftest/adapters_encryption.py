"""Checks through the adapters of public-key encryption and KEMs (app/core/schemes/pke.py, hybrid.py).

Part of the checks through the scheme adapters (:mod:`.adapters`, whose ``ADAPTER_CHECKS``
ends with these): the same rules hold, the schemes and libraries are imported only when
a check runs.

The receivers generate their key pair in ``setup``; a published private key enters
through ``known_answer_receiver`` (``PkeScheme``, ``HybridScheme``), built with the
cipher's own ``private_key`` where the adapter makes the handle (RSA). A KEM's sender
draws fresh randomness for every message, so its output is checked the other way: the
key is recomputed from the encapsulation it sent with code other than the adapter's
(the other library, or the standard library's HMAC for the KDF) and the message must
open under it. Where no published vector fits a construction (this ECIES's KDF, this
hybrid's combiner, ElGamal in the scheme's groups) the source says so.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from functools import partial
from typing import Any

from app.core.selftest import vectors
from app.core.selftest.adapter_parts import (
    MESSAGE,
    adder,
    aead_library,
    create,
    expect_refused,
    library_private_key,
    sec1_point,
    via,
)
from app.core.selftest.curves import RFC5903_81, RFC7748_61
from app.core.selftest.framework import (
    CROSS_CHECK,
    KAT,
    SelftestCheck,
    SelftestMismatch,
    expect,
    expect_equal,
    flip_last_bit,
)
from app.core.selftest.post_quantum import CCTV_UNLUCKY, sha3_256
from app.core.selftest.rsa import interop_keys

__all__ = ["CHECKS"]

CHECKS: list[SelftestCheck] = []
"""The checks through pke.py and hybrid.py, in the order they run."""

_add = adder(CHECKS)


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
        cipher = create(PkeScheme, "rsa-oaep", backend, {"bits": 2048}).cipher
        public = library_key.public_key().public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
        block = cipher.encrypt(cipher.load_public(public), MESSAGE)
        expect_equal(
            "library OAEP-SHA256 decryption of the adapter's ciphertext", library_key.decrypt(block, oaep), MESSAGE
        )
        if backend == "cryptography":  # pycryptodome's private handle is made inside generate()
            theirs = library_key.public_key().encrypt(MESSAGE, oaep)
            expect_equal(
                "adapter decryption of the library's ciphertext", bytes(cipher.decrypt(library_key, theirs)), MESSAGE
            )

    return run


for _backend in ("cryptography", "pycryptodome"):
    _add(
        "RSA-2048 OAEP-SHA256 agrees with the library",
        _backend,
        CROSS_CHECK,
        via(
            "pke",
            "cross-check against cryptography with OAEP-SHA256, MGF1-SHA256 (no published vector; OAEP is randomised)",
        ),
        _rsa_oaep_cross_check(_backend),
        schemes=("rsa-oaep",),
    )


# ======================================================================================
# KEM (hybrid.py): published decapsulation through the adapter
# ======================================================================================


def _mlkem_check(level: int, name: str) -> Callable[[], None]:
    def run() -> None:
        from cryptography.hazmat.primitives.asymmetric import mlkem

        from app.core.schemes.hybrid import HybridScheme

        vector = vectors.MLKEM[name]
        kem = create(HybridScheme, "ml-kem", "cryptography", {"level": level}).kem
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
    via("hybrid", CCTV_UNLUCKY.format(file="ML-KEM-768.txt")),
    _mlkem_check(768, "ML-KEM-768 unlucky"),
    schemes=("ml-kem",),
)
_add(
    "ML-KEM-1024 KeyGen from seed + Decaps",
    "cryptography",
    KAT,
    via("hybrid", CCTV_UNLUCKY.format(file="ML-KEM-1024.txt")),
    _mlkem_check(1024, "ML-KEM-1024 unlucky"),
    schemes=("ml-kem",),
)


# ======================================================================================
# Textbook RSA (pke.py): a published ciphertext both ways, with the published key
# ======================================================================================

WYCHEPROOF_PKCS1_22 = (
    "Project Wycheproof rsa_pkcs1_2048_test.json tcId 22: the published key, and RSAEP of "
    "00 01 FF..FF 00 'Test' (RFC 8017 §5.1)"
)


def _textbook_rsa_check(crt: bool) -> Callable[[], None]:
    """The sender's RSAEP of 0x01 || block is the published ciphertext; the receiver's RSADP
    (with or without CRT) of it gives the block back; the CRT values are the published ones."""

    def run() -> None:
        from app.core.schemes.pke import PkeScheme, TextbookRsa

        vector = vectors.RSAES_PKCS1_V15["wycheproof-2048 tcId 22"]
        scheme = create(PkeScheme, "rsa-textbook", "python", {"bits": 2048, "crt": crt})
        cipher = scheme.cipher
        if not isinstance(cipher, TextbookRsa):
            raise SelftestMismatch(f"rsa-textbook's cipher is a {type(cipher).__name__}")
        expect_equal("public exponent", cipher.E, vector.e)
        key = cipher.private_key(vector.p, vector.q, vector.d)
        expect_equal(
            "private key (n, dP, dQ, qInv)",
            (key.n, key.dp, key.dq, key.qinv),
            (vector.n, vector.dp, vector.dq, vector.qinv),
        )
        size = len(vector.ciphertext)
        # RSADP of the ciphertext is 00 01 FF..FF 00 || message (k bytes); the scheme's 0x01
        # block marker is that 01, so the block is what follows it.
        block = b"\xff" * (size - 3 - len(vector.message)) + b"\x00" + vector.message
        sender = scheme.new_sender()
        expect_equal("sender handshake message", sender.handshake(vector.n.to_bytes(size, "big")), b"")
        expect_equal("ciphertext: RSAEP(0x01 || block)", b"".join(sender.seal(block)), vector.ciphertext)
        receiver = scheme.known_answer_receiver(key)
        expect_equal("receiver open: RSADP of the published ciphertext", bytes(receiver.open(vector.ciphertext)), block)

    return run


for _crt in (True, False):
    _add(
        f"Textbook RSA-2048 ({'CRT' if _crt else 'no CRT'}) encrypts and decrypts Wycheproof tcId 22",
        "python",
        KAT,
        via("pke", WYCHEPROOF_PKCS1_22),
        _textbook_rsa_check(_crt),
        schemes=("rsa-textbook",),
    )


# ======================================================================================
# ElGamal (pke.py): against pycryptodome's modular integers, fixed key and randomness
# ======================================================================================


def _fixed_exponent(label: bytes, exponent_bits: int, q: int) -> int:
    """A fixed private key or randomness, drawn as the scheme draws them: uniform-looking in
    [1, q - 1], or exactly `exponent_bits` long (short exponents)."""
    value = int.from_bytes(hashlib.shake_256(b"CryptoBench self-test ElGamal " + label).digest(256), "big")
    if exponent_bits:
        return value % (1 << (exponent_bits - 1)) | (1 << (exponent_bits - 1))
    return value % (q - 1) + 1


def _elgamal_check(exponent_bits: int) -> Callable[[], None]:
    """With x, k and messages fixed, and every exponentiation of the expected values done by
    pycryptodome's integers (its own modular arithmetic, not the scheme's pow): the receiver
    decrypts (g^k, m h^k), and the sender's ciphertext decrypts to the message's
    representative in the order-q subgroup (m or p - m: one message of each kind), with c1
    in that subgroup."""

    def run() -> None:
        from Crypto.Math.Numbers import Integer

        from app.core.schemes.pke import ElGamal, PkeScheme

        scheme = create(PkeScheme, "elgamal", "python", {"bits": 2048, "exponent_bits": exponent_bits})
        cipher = scheme.cipher
        if not isinstance(cipher, ElGamal):
            raise SelftestMismatch(f"elgamal's cipher is a {type(cipher).__name__}")
        p, g = cipher.group.p, cipher.group.g
        q, size = (p - 1) // 2, (p.bit_length() + 7) // 8

        def power(base: int, exponent: int) -> int:
            result = Integer(base)
            result.inplace_pow(exponent, p)
            return int(result)

        expect_equal("g^q mod p (g generates the order-q subgroup)", power(g, q), 1)
        x, k = _fixed_exponent(b"x", exponent_bits, q), _fixed_exponent(b"k", exponent_bits, q)
        h = power(g, x)
        sender = scheme.new_sender()
        expect_equal("sender handshake message", sender.handshake(h.to_bytes(size, "big")), b"")
        receiver = scheme.known_answer_receiver(x)
        kinds: dict[bool, bytes] = {}
        for i in range(256):  # the first message of each kind: a quadratic residue and a non-residue
            block = b"ElGamal self-test " + bytes([i])
            kinds.setdefault(power(int.from_bytes(b"\x01" + block, "big"), q) == 1, block)
            if len(kinds) == 2:
                break
        expect(len(kinds) == 2, "no message of each kind (residue, non-residue) among 256")
        for residue, block in sorted(kinds.items()):
            m = int.from_bytes(b"\x01" + block, "big")
            expected = m if residue else p - m
            what = "a residue" if residue else "a non-residue"
            c1, c2 = power(g, k), expected * power(h, k) % p
            payload = c1.to_bytes(size, "big") + c2.to_bytes(size, "big")
            expect_equal(f"receiver open of (g^k, m h^k), m {what}", bytes(receiver.open(payload)), block)
            (sealed,) = sender.seal(block)
            c1, c2 = int.from_bytes(sealed[:size], "big"), int.from_bytes(sealed[size:], "big")
            expect_equal(f"sender's c1^q mod p, m {what}", power(c1, q), 1)
            recovered = c2 * int(Integer(power(c1, x)).inverse(p)) % p
            expect_equal(f"sender's ciphertext decrypted, m {what}", recovered, expected)

    return run


for _exponent_bits, _title in ((0, "ElGamal-2048"), (256, "ElGamal-2048 (x, k: 256 bits)")):
    _add(
        f"{_title} agrees with pycryptodome's integers",
        "python",
        CROSS_CHECK,
        via(
            "pke",
            "cross-check against pycryptodome's modular integers in RFC 7919 ffdhe2048 with fixed x, k and "
            "messages (no published ElGamal vector in the scheme's groups)",
        ),
        _elgamal_check(_exponent_bits),
        schemes=("elgamal",),
    )


# ======================================================================================
# KEMs (hybrid.py): published decapsulations, and the sender's key recomputed
# ======================================================================================


def hkdf_sha256(ikm: bytes, info: bytes, length: int = 32, salt: bytes = b"") -> bytes:
    """RFC 5869 HKDF-SHA256 with the standard library's HMAC (no salt: HashLen zero bytes):
    a KDF that is neither backend's, to recompute the keys the KEM adapters derive."""
    prk = hmac.new(salt or bytes(32), ikm, hashlib.sha256).digest()
    okm, block = b"", b""
    for counter in range(1, -(-length // 32) + 1):
        block = hmac.new(prk, block + info + bytes([counter]), hashlib.sha256).digest()
        okm += block
    return okm[:length]


#: The AES-GCM nonce of the payloads the checks seal for a receiver.
_NONCE = bytes(range(12))


def _receiver_opens(scheme: Any, private: Any, enc: bytes, key: bytes) -> None:
    """The receiver holding `private` opens AES-256-GCM under `key` in both exchange patterns:
    enc || nonce || sealed per message; after a handshake of `enc`, nonce || sealed per session."""
    from app.core.vocab import Exchange

    sealed = _NONCE + aead_library("aes-gcm", key).encrypt(_NONCE, MESSAGE, None)
    for exchange in Exchange:
        receiver = scheme.with_exchange(exchange).known_answer_receiver(private)
        if exchange is Exchange.SESSION:
            receiver.handshake(enc)
        payload = sealed if exchange is Exchange.SESSION else enc + sealed
        expect_equal(
            f"receiver open of a message sealed under that key ({exchange})", bytes(receiver.open(payload)), MESSAGE
        )
        expect_refused(f"a payload with a flipped tag bit ({exchange})", partial(receiver.open, flip_last_bit(payload)))


def _sender_agrees(scheme: Any, public: bytes, key_of: Callable[[bytes], bytes]) -> None:
    """The sender's message opens under the key `key_of` recomputes from its encapsulation,
    in both exchange patterns: sent in the handshake (session) or ahead of each message."""
    from cryptography.exceptions import InvalidTag

    from app.core.vocab import Exchange

    split = scheme.kem.enc_len
    for exchange in Exchange:
        sender = scheme.with_exchange(exchange).new_sender()
        message = sender.handshake(public)
        payload = b"".join(sender.seal(MESSAGE))
        if exchange is Exchange.SESSION:
            expect_equal("session handshake message: one encapsulation", len(message), split)
            enc, nonce, sealed = message, payload[:12], payload[12:]
        else:
            expect_equal("per-message handshake message", message, b"")
            enc, nonce, sealed = payload[:split], payload[split : split + 12], payload[split + 12 :]
        key = key_of(enc)
        try:
            opened = aead_library("aes-gcm", key).decrypt(nonce, sealed, None)
        except InvalidTag:
            raise SelftestMismatch(
                f"the sender's message ({exchange}) does not open under the key recomputed from its encapsulation"
            ) from None
        expect_equal(f"sender's message ({exchange})", opened, MESSAGE)


# --- RSA-KEM ---------------------------------------------------------------------------

WYCHEPROOF_OAEP_7 = "Project Wycheproof rsa_oaep_2048_sha256_mgf1sha256_test.json tcId 7 (a 32-byte message)"


def _oaep_decrypt_elsewhere(backend: str, vector: Any, enc: bytes) -> bytes:
    """OAEP-SHA256 decryption of `enc` with the published key, by the library the adapter does not use."""
    try:
        if backend == "cryptography":
            from Crypto.Cipher import PKCS1_OAEP
            from Crypto.Hash import SHA256
            from Crypto.PublicKey import RSA

            key = RSA.construct((vector.n, vector.e, vector.d, vector.p, vector.q))
            unwrapped: bytes = PKCS1_OAEP.new(key, hashAlgo=SHA256).decrypt(enc)
            return unwrapped
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding, rsa

        public = rsa.RSAPublicNumbers(vector.e, vector.n)
        numbers = rsa.RSAPrivateNumbers(vector.p, vector.q, vector.d, vector.dp, vector.dq, vector.qinv, public)
        oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None)
        return numbers.private_key().decrypt(enc, oaep)
    except ValueError as exc:
        raise SelftestMismatch(f"the sender's encapsulation does not decrypt as OAEP-SHA256 ({exc})") from None


def _rsa_kem_check(backend: str) -> Callable[[], None]:
    def run() -> None:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        from app.core.schemes.hybrid import HybridScheme, RsaKem

        vector = vectors.RSAES_OAEP_SHA256["wycheproof-2048 tcId 7"]
        scheme = create(HybridScheme, "rsa-kem", backend, {"bits": 2048})
        kem = scheme.kem
        if not isinstance(kem, RsaKem):
            raise SelftestMismatch(f"rsa-kem's KEM is a {type(kem).__name__}")
        private = kem.cipher.private_key(vector.n, vector.e, vector.d, vector.p, vector.q)
        expect_equal(
            "decapsulate (published ciphertext): the unwrapped key",
            kem.decapsulate(private, vector.ciphertext),
            vector.message,
        )
        _receiver_opens(scheme, private, vector.ciphertext, vector.message)
        public = rsa.RSAPublicNumbers(vector.e, vector.n).public_key()
        encoded = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
        _sender_agrees(scheme, encoded, lambda enc: _oaep_decrypt_elsewhere(backend, vector, enc))

    return run


for _backend, _other in (("cryptography", "pycryptodome"), ("pycryptodome", "cryptography")):
    _add(
        "RSA-KEM-2048 decapsulates Wycheproof OAEP-SHA256 tcId 7",
        _backend,
        KAT,
        via(
            "hybrid",
            f"{WYCHEPROOF_OAEP_7}; the sender's key unwrapped by {_other} (no ISO 18033-2 vector fits: "
            "this RSA-KEM wraps the AES key with OAEP)",
        ),
        _rsa_kem_check(_backend),
        schemes=("rsa-kem",),
    )


# --- ECIES -----------------------------------------------------------------------------

#: (receiver's private key, its public key, the peer's public key, their shared secret)
EciesVector = tuple[Any, bytes, bytes, bytes]


def _ecies_p256() -> EciesVector:
    v = vectors.ECDH["P-256"]
    return v.private_a, sec1_point(32, v.public_a), sec1_point(32, v.public_b), v.shared[0].to_bytes(32, "big")


def _ecies_x25519() -> EciesVector:
    v = vectors.X25519_X448_DH["X25519"]
    return v.alice_private, v.alice_public, v.bob_public, v.shared


def _ecies_secp256k1() -> EciesVector:
    from cryptography.hazmat.primitives import serialization

    v = vectors.ECDH_WYCHEPROOF["secp256k1 tcId 1"]
    peer = v.public[-65:]  # the uncompressed point ending the SubjectPublicKeyInfo
    expect(len(v.public) == 88 and peer[0] == 0x04, "the published public key is not an uncompressed secp256k1 point")
    own = library_private_key("secp256k1", "cryptography", v.private).public_key()
    public = own.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return v.private, public, peer, v.shared


def _library_exchange(curve: str, private: Any, peer: bytes) -> bytes:
    """The shared secret by cryptography called directly (x only, for a Weierstrass curve)."""
    key = library_private_key(curve, "cryptography", private)
    if curve == "X25519":
        from cryptography.hazmat.primitives.asymmetric import x25519

        shared: bytes = key.exchange(x25519.X25519PublicKey.from_public_bytes(peer))
        return shared
    from cryptography.hazmat.primitives.asymmetric import ec

    peer_key = ec.EllipticCurvePublicKey.from_encoded_point(key.curve, peer)
    shared = key.exchange(ec.ECDH(), peer_key)
    return shared


def _ecies_check(curve: str, backend: str, vector: Callable[[], EciesVector]) -> Callable[[], None]:
    """Decapsulating the published peer key with the published private key gives
    HKDF-SHA256(shared secret, no salt, info = that peer key); the receiver opens under it;
    the sender's message opens under the key recomputed from its ephemeral key."""

    def run() -> None:
        from app.core.schemes.hybrid import HybridScheme

        private, public, peer, shared = vector()
        scheme = create(HybridScheme, "ecies", backend, {"curve": curve})
        key = library_private_key(curve, backend, private)
        expected = hkdf_sha256(shared, info=peer)
        expect_equal(
            "decapsulate (published exchange): HKDF-SHA256(secret, info = ephemeral key)",
            scheme.kem.decapsulate(key, peer),
            expected,
        )
        _receiver_opens(scheme, key, peer, expected)
        _sender_agrees(scheme, public, lambda enc: hkdf_sha256(_library_exchange(curve, private, enc), info=enc))

    return run


_ECIES_KDF = "the key HKDF-SHA256(secret, info = ephemeral key) recomputed with hmac (no published vector: SEC 1's ECIES derives with the X9.63 KDF)"
_ECIES: list[tuple[str, tuple[str, ...], str, Callable[[], EciesVector]]] = [
    ("secp256k1", ("cryptography",), "Project Wycheproof ecdh_secp256k1_test.json tcId 1", _ecies_secp256k1),
    ("P-256", ("cryptography", "pycryptodome"), RFC5903_81, _ecies_p256),
    ("X25519", ("cryptography", "pycryptodome"), RFC7748_61, _ecies_x25519),
]

for _curve, _backends, _source, _vector in _ECIES:
    for _backend in _backends:
        _add(
            f"ECIES {_curve} decapsulates the published exchange",
            _backend,
            KAT,
            via("hybrid", f"{_source}; {_ECIES_KDF}"),
            _ecies_check(_curve, _backend, _vector),
            schemes=("ecies",),
        )


# --- X25519 + ML-KEM-768 ---------------------------------------------------------------


def _x25519_mlkem768_check() -> None:
    """Both halves from published vectors (ML-KEM-768 Decaps, X25519 exchange), the combiner
    HKDF-SHA256(ss_ML-KEM || ss_X25519, info = ML-KEM ciphertext || X25519 key) recomputed."""
    from cryptography.hazmat.primitives.asymmetric import mlkem, x25519

    from app.core.schemes.hybrid import HybridScheme

    kem_vector, dh_vector = vectors.MLKEM["ML-KEM-768 unlucky"], vectors.X25519_X448_DH["X25519"]
    scheme = create(HybridScheme, "x25519-ml-kem-768", "cryptography")
    mlkem_key = mlkem.MLKEM768PrivateKey.from_seed_bytes(kem_vector.seed)
    x25519_key = x25519.X25519PrivateKey.from_private_bytes(dh_vector.alice_private)
    private = (mlkem_key, x25519_key)
    enc = kem_vector.ciphertext + dh_vector.bob_public
    expected = hkdf_sha256(kem_vector.shared_secret + dh_vector.shared, info=enc)
    expect_equal(
        "decapsulate (published ciphertext and exchange): the combined key",
        scheme.kem.decapsulate(private, enc),
        expected,
    )
    _receiver_opens(scheme, private, enc, expected)
    ek = mlkem_key.public_key().public_bytes_raw()
    expect_equal("H(ek) = SHA3-256(ek)", sha3_256(ek), kem_vector.ek_sha3_256)
    split = len(kem_vector.ciphertext)

    def key_of(sent: bytes) -> bytes:
        ss_mlkem = mlkem_key.decapsulate(sent[:split])
        ss_x25519 = x25519_key.exchange(x25519.X25519PublicKey.from_public_bytes(sent[split:]))
        return hkdf_sha256(ss_mlkem + ss_x25519, info=sent)

    _sender_agrees(scheme, ek + dh_vector.alice_public, key_of)


_add(
    "X25519 + ML-KEM-768 decapsulates the published halves",
    "cryptography",
    KAT,
    via(
        "hybrid",
        CCTV_UNLUCKY.format(file="ML-KEM-768.txt")
        + f" and {RFC7748_61}; the combiner HKDF-SHA256(ss_ML-KEM || ss_X25519, info = ciphertext || "
        "ephemeral key) recomputed with hmac (no published vector: TLS's X25519MLKEM768 concatenates "
        "the secrets, X-Wing hashes them with SHA3-256)",
    ),
    _x25519_mlkem768_check,
    schemes=("x25519-ml-kem-768",),
)

"""AEAD ciphers (AES-GCM, ChaCha20-Poly1305) in both backends, and the AEAD schemes.

`AeadKey` is the one place that seals and opens with a symmetric key; the key
agreement and hybrid families reuse it once they have derived a key, so every
family's "encrypt" means the same bytes on the wire: nonce || ciphertext || tag.
"""

from __future__ import annotations

import itertools
import os
import secrets
from collections.abc import Callable, Mapping
from typing import Any

from Crypto.Cipher import AES, ChaCha20_Poly1305
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM, ChaCha20Poly1305

from app.core.schemes.base import (
    AuthenticationError,
    Buffer,
    ParamSpec,
    Payload,
    PayloadFormatError,
    Receiver,
    Scheme,
    SchemeInfo,
    SchemeSpec,
    Security,
    Sender,
    TamperSpot,
)
from app.core.vocab import Family, ParamValue

NONCE_LEN = 12
TAG_LEN = 16
AEAD_OVERHEAD = NONCE_LEN + TAG_LEN


def symmetric_security(key_bits: int) -> Security:
    """Key-search strength; NIST PQ categories 1/3/5 are defined as AES-128/192/256."""
    category = {128: 1, 192: 3, 256: 5}.get(key_bits, 0)
    return Security(classical_bits=key_bits, pq_category=category)


class NonceSequence:
    """Unique 96-bit nonces for one key: a random 32-bit prefix and a 64-bit counter.

    A counter never repeats under one key (random 96-bit nonces only make a
    repeat unlikely), and it is cheaper than asking the OS for randomness on every
    message, so the timed seal measures the cipher rather than `os.urandom`. The
    random prefix keeps two senders that happen to share a key apart. This is the
    construction of RFC 5116 section 3.2 / TLS 1.3's per-record nonce. 2^64
    messages under one key would take centuries at a nanosecond each, so the
    counter is not checked for wrap-around on the hot path.
    """

    __slots__ = ("prefix", "counter")

    def __init__(self) -> None:
        self.prefix = secrets.randbits(32) << 64
        self.counter = itertools.count()

    def next(self) -> bytes:
        return (self.prefix | next(self.counter)).to_bytes(NONCE_LEN, "big")


class AeadKey:
    """One AEAD key in one backend. seal -> (nonce, ciphertext[, tag]) parts."""

    # The public seal/open are bound to one backend's functions in __init__ so the
    # timed call does not branch on the backend each time.
    seal: Callable[[Buffer], Payload]
    open: Callable[[Buffer], bytes]
    #: pycryptodome: a fresh cipher object for one nonce (its objects are single-use).
    _new: Callable[[bytes], Any]

    def __init__(self, algorithm: str, backend: str, key: bytes) -> None:
        self.algorithm = algorithm
        self.backend = backend
        self._nonces = NonceSequence()
        if backend == "cryptography":
            cipher = AESGCM(key) if algorithm == "aes-gcm" else ChaCha20Poly1305(key)
            self._decrypt = cipher.decrypt
            self.seal = _cryptography_sealer(cipher.encrypt, self._nonces)
            self.open = self._open_cryptography
        elif backend == "pycryptodome":
            if algorithm == "aes-gcm":
                self._new = lambda nonce: AES.new(key, AES.MODE_GCM, nonce=nonce, mac_len=TAG_LEN)
            else:
                self._new = lambda nonce: ChaCha20_Poly1305.new(key=key, nonce=nonce)
            self.seal = self._seal_pycryptodome
            self.open = self._open_pycryptodome
        else:
            raise ValueError(f"unknown AEAD backend {backend!r}")

    def _open_cryptography(self, payload: Buffer) -> bytes:
        if len(payload) < AEAD_OVERHEAD:
            raise PayloadFormatError(f"AEAD payload of {len(payload)} bytes is shorter than nonce + tag")
        view = memoryview(payload)
        try:
            return self._decrypt(view[:NONCE_LEN], view[NONCE_LEN:], None)
        except InvalidTag:
            raise AuthenticationError("authentication tag does not match") from None

    def _seal_pycryptodome(self, plaintext: Buffer) -> Payload:
        nonce = self._nonces.next()
        ciphertext, tag = self._new(nonce).encrypt_and_digest(plaintext)
        return (nonce, ciphertext, tag)

    def _open_pycryptodome(self, payload: Buffer) -> bytes:
        if len(payload) < AEAD_OVERHEAD:
            raise PayloadFormatError(f"AEAD payload of {len(payload)} bytes is shorter than nonce + tag")
        view = memoryview(payload)
        try:
            opened: bytes = self._new(bytes(view[:NONCE_LEN])).decrypt_and_verify(
                view[NONCE_LEN:-TAG_LEN], view[-TAG_LEN:]
            )
        except ValueError:
            raise AuthenticationError("MAC check failed") from None
        return opened


def _cryptography_sealer(
    encrypt: Callable[[bytes, Buffer, None], bytes], nonces: NonceSequence
) -> Callable[[Buffer], Payload]:
    """The hot path of every OpenSSL AEAD seal, as a closure: no attribute lookups
    or method dispatch beyond what the cipher call itself needs."""
    prefix, counter = nonces.prefix, nonces.counter

    def seal(plaintext: Buffer) -> Payload:
        nonce = (prefix | next(counter)).to_bytes(NONCE_LEN, "big")
        return (nonce, encrypt(nonce, plaintext, None))

    return seal


def aead_tamper_spots(payload_len: int, prefix: int = 0) -> list[TamperSpot]:
    """Bit flips an AEAD must reject: nonce, ciphertext (if any) and tag."""
    spots = [TamperSpot("nonce", prefix), TamperSpot("tag", -1)]
    if payload_len - prefix > AEAD_OVERHEAD:
        spots.insert(1, TamperSpot("ciphertext", prefix + NONCE_LEN))
    return spots


class AeadPayloadScheme(Scheme):
    """A scheme whose payload is exactly one AEAD message: nonce || ciphertext || tag.

    Shared by the pre-shared-key AEADs and the key agreements, which differ only in
    how both ends come to hold the key.
    """

    def tamper_spots(self, payload_len: int, plaintext_len: int) -> list[TamperSpot]:
        return aead_tamper_spots(payload_len)

    def payload_overhead(self, plaintext_len: int) -> int:
        return AEAD_OVERHEAD


class _PresharedSender(Sender):
    def __init__(self, scheme: AeadScheme) -> None:
        self._scheme = scheme
        self._key: AeadKey | None = None

    def handshake(self, public: bytes) -> bytes:
        # The benchmark's pre-shared key travels in the setup frame: it stands for a
        # key delivered out of band, and protects only random benchmark messages.
        if len(public) != self._scheme.key_bytes:
            raise PayloadFormatError(f"pre-shared key must be {self._scheme.key_bytes} bytes, got {len(public)}")
        self._key = AeadKey(self._scheme.algorithm, self._scheme.info.backend, public)
        # Rebinding replaces the refusing placeholder with the key's own seal: no
        # per-call check that the handshake ran. mypy sees an unbound method type here.
        self.seal = self._key.seal  # type: ignore[method-assign, assignment]
        return b""

    def seal(self, plaintext: Buffer) -> Payload:
        raise RuntimeError("handshake() must run before seal()")


class _PresharedReceiver(Receiver):
    def __init__(self, scheme: AeadScheme) -> None:
        self._scheme = scheme

    def setup(self) -> bytes:
        key = os.urandom(self._scheme.key_bytes)
        self._key = AeadKey(self._scheme.algorithm, self._scheme.info.backend, key)
        self.open = self._key.open  # type: ignore[method-assign, assignment]  # as in _PresharedSender
        return key

    def open(self, payload: Buffer) -> Buffer:
        raise RuntimeError("setup() must run before open()")


class AeadScheme(AeadPayloadScheme):
    """AES-GCM or ChaCha20-Poly1305 with a pre-shared key."""

    def __init__(self, algorithm: str, backend: str, key_bits: int) -> None:
        self.algorithm = algorithm
        self.key_bytes = key_bits // 8
        name = f"AES-{key_bits}-GCM" if algorithm == "aes-gcm" else "ChaCha20-Poly1305"
        params: dict[str, ParamValue] = {"key_bits": key_bits} if algorithm == "aes-gcm" else {}
        self.info = SchemeInfo(
            scheme_id=algorithm,
            family=Family.AEAD,
            backend=backend,
            params=params,
            label=name,
            security=symmetric_security(key_bits),
            insecure=False,
            authenticated=True,
            notes=("96-bit nonces: random 32-bit prefix + 64-bit counter, never reused under one key",),
        )

    def new_sender(self) -> Sender:
        return _PresharedSender(self)

    def new_receiver(self) -> Receiver:
        return _PresharedReceiver(self)


def _aes_gcm(backend: str, params: Mapping[str, ParamValue]) -> Scheme:
    return AeadScheme("aes-gcm", backend, int(params["key_bits"]))


def _chacha(backend: str, params: Mapping[str, ParamValue]) -> Scheme:
    return AeadScheme("chacha20-poly1305", backend, 256)


BACKENDS = ("cryptography", "pycryptodome")

SPECS: list[SchemeSpec] = [
    SchemeSpec(
        scheme_id="aes-gcm",
        name="AES-GCM",
        family=Family.AEAD,
        backends=BACKENDS,
        params=(ParamSpec("key_bits", 256, (128, 192, 256), help="AES key size in bits"),),
        factory=_aes_gcm,
        description="AES in Galois/Counter Mode (NIST SP 800-38D), 96-bit nonce, 128-bit tag.",
    ),
    SchemeSpec(
        scheme_id="chacha20-poly1305",
        name="ChaCha20-Poly1305",
        family=Family.AEAD,
        backends=BACKENDS,
        params=(),
        factory=_chacha,
        description="ChaCha20 stream cipher with Poly1305 authenticator (RFC 8439).",
    ),
]

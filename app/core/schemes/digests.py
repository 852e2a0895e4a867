"""Hash functions (SHA-2, SHA-3, BLAKE2b) and HKDF, in both backends.

Both families share one shape: the sender computes `f(input)` and sends
`input || f(input)`; the receiver recomputes `f` over the input and compares in
constant time. For a hash `f` is the digest; for HKDF it is the derivation of
`output_length` bytes from the input keying material under a salt the receiver
published in `setup`. `seal` returns the input and the output as two parts, so the
input is never copied.

Everything a library does differently lives in one adapter per backend
(`_CryptographyBackend`, `_PycryptodomeBackend`); the session classes are written once.
"""

from __future__ import annotations

import abc
import hmac
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from Crypto.Hash import SHA3_256, SHA3_512, SHA256, SHA384, SHA512, BLAKE2b
from Crypto.Protocol.KDF import HKDF as PycryptodomeHKDF
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF as CryptographyHKDF

from app.core.schemes.base import (
    AuthenticationError,
    Buffer,
    MessageTooLongError,
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

DigestFn = Callable[[Buffer], bytes]

#: HKDF's `info`: binds every derived key to this application (RFC 5869 section 3.2).
HKDF_INFO = b"cryptobench hkdf"
#: The receiver's random salt; RFC 5869 recommends a salt as long as the hash output.
HKDF_SALT_BYTES = 32
#: RFC 5869: L <= 255 * HashLen.
HKDF_MAX_BLOCKS = 255

_BACKENDS = ("cryptography", "pycryptodome")


# --------------------------------------------------------------------------- metadata


@dataclass(frozen=True)
class _Hash:
    """One hash function and the collision resistance the report shows for it."""

    scheme_id: str
    label: str
    digest_size: int
    collision_bits: int
    pq_category: int


_HASHES: Mapping[str, _Hash] = {
    h.scheme_id: h
    for h in (
        # NIST PQ categories 2 and 4 are defined as SHA-256 / SHA-384 collision search.
        _Hash("sha256", "SHA-256", 32, 128, 2),
        _Hash("sha384", "SHA-384", 48, 192, 4),
        _Hash("sha512", "SHA-512", 64, 256, 5),
        _Hash("sha3-256", "SHA3-256", 32, 128, 2),
        _Hash("sha3-512", "SHA3-512", 64, 256, 5),
        _Hash("blake2b", "BLAKE2b-512", 64, 256, 5),
    )
}

#: HKDF digests and the strength cap of their HMAC key (the PRK).
_HKDF_DIGESTS: Mapping[str, tuple[str, int]] = {
    # param value: (hash id in _HASHES, classical bits cap)
    "sha256": ("sha256", 256),
    "sha384": ("sha384", 384),
}


# --------------------------------------------------------------------------- adapters


class _Backend(abc.ABC):
    """One library computing one hash function: plain digests and HKDF with it."""

    @abc.abstractmethod
    def digest(self, data: Buffer) -> bytes:
        """The hash of `data` (a memoryview slice must work: the receiver passes one)."""

    @abc.abstractmethod
    def hkdf(self, salt: bytes, info: bytes, length: int) -> DigestFn:
        """A function deriving `length` bytes from input keying material (RFC 5869)."""


class _CryptographyBackend(_Backend):
    _ALGORITHMS: Mapping[str, Callable[[], hashes.HashAlgorithm]] = {
        "sha256": hashes.SHA256,
        "sha384": hashes.SHA384,
        "sha512": hashes.SHA512,
        "sha3-256": hashes.SHA3_256,
        "sha3-512": hashes.SHA3_512,
        "blake2b": lambda: hashes.BLAKE2b(64),
    }

    def __init__(self, hash_id: str) -> None:
        self._algorithm = self._ALGORITHMS[hash_id]()

    def digest(self, data: Buffer) -> bytes:
        context = hashes.Hash(self._algorithm)
        context.update(data)
        return context.finalize()

    def hkdf(self, salt: bytes, info: bytes, length: int) -> DigestFn:
        algorithm = self._algorithm

        def derive(ikm: Buffer) -> bytes:
            # An HKDF object derives once; a new one per derivation is the real cost.
            return CryptographyHKDF(algorithm=algorithm, length=length, salt=salt, info=info).derive(ikm)

        return derive


class _PycryptodomeBackend(_Backend):
    _MODULES: Mapping[str, Any] = {
        "sha256": SHA256,
        "sha384": SHA384,
        "sha512": SHA512,
        "sha3-256": SHA3_256,
        "sha3-512": SHA3_512,
        "blake2b": BLAKE2b,
    }

    def __init__(self, hash_id: str) -> None:
        self._module = self._MODULES[hash_id]
        if hash_id == "blake2b":
            # BLAKE2b.new takes keyword arguments only and needs the digest size.
            self._new: Callable[[Buffer], Any] = lambda data: BLAKE2b.new(data=data, digest_bytes=64)
        else:
            self._new = self._module.new

    def digest(self, data: Buffer) -> bytes:
        result: bytes = self._new(data).digest()
        return result

    def hkdf(self, salt: bytes, info: bytes, length: int) -> DigestFn:
        module = self._module

        def derive(ikm: Buffer) -> bytes:
            okm: bytes = PycryptodomeHKDF(ikm, length, salt, module, context=info)
            return okm

        return derive


def _backend(backend: str, hash_id: str) -> _Backend:
    return _CryptographyBackend(hash_id) if backend == "cryptography" else _PycryptodomeBackend(hash_id)


# --------------------------------------------------------------------------- session


def _not_ready(_: Buffer) -> NoReturn:
    raise RuntimeError("the handshake must complete before sealing or opening")


def _expect_empty(message: bytes, what: str) -> None:
    if message:
        raise PayloadFormatError(f"{what} expects an empty message, got {len(message)} bytes")


class _RecomputeSender(Sender):
    """Sends input || f(input); `f` is bound once the session is set up."""

    def __init__(self, compute: DigestFn = _not_ready) -> None:
        self._compute = compute

    def handshake(self, public: bytes) -> bytes:
        _expect_empty(public, "a hash sender")
        return b""

    def seal(self, plaintext: bytes) -> Payload:
        return (plaintext, self._compute(plaintext))


class _RecomputeReceiver(Receiver):
    """Recomputes f over the input part and compares it with the received output.

    `input_size` None means any input length (a hash); otherwise the payload must be
    exactly input_size + output_size bytes (HKDF's fixed secret).
    """

    def __init__(self, output_size: int, input_size: int | None, compute: DigestFn = _not_ready) -> None:
        self._output_size = output_size
        self._input_size = input_size
        self._compute = compute

    def setup(self) -> bytes:
        return b""

    def open(self, payload: Buffer) -> Buffer:
        view = memoryview(payload)
        split = len(view) - self._output_size
        if split < 0 or (self._input_size is not None and split != self._input_size):
            raise PayloadFormatError(
                f"payload of {len(view)} bytes does not hold input + {self._output_size}-byte output"
            )
        data = view[:split]
        if not hmac.compare_digest(self._compute(data), view[split:]):
            raise AuthenticationError("recomputed value does not match")
        return data


class _HkdfSender(_RecomputeSender):
    """Takes the receiver's salt in the handshake; seals exactly `secret_size` bytes."""

    def __init__(self, backend: _Backend, secret_size: int, output_length: int) -> None:
        super().__init__()
        self._backend = backend
        self._secret_size = secret_size
        self._output_length = output_length

    def handshake(self, public: bytes) -> bytes:
        if len(public) != HKDF_SALT_BYTES:
            raise PayloadFormatError(f"HKDF salt must be {HKDF_SALT_BYTES} bytes, got {len(public)}")
        self._compute = self._backend.hkdf(bytes(public), HKDF_INFO, self._output_length)
        return b""

    def seal(self, plaintext: bytes) -> Payload:
        if len(plaintext) != self._secret_size:
            raise MessageTooLongError(
                f"HKDF input keying material must be {self._secret_size} bytes, got {len(plaintext)}"
            )
        return (plaintext, self._compute(plaintext))


class _HkdfReceiver(_RecomputeReceiver):
    """Publishes a fresh random salt; recomputes the derivation under it."""

    def __init__(self, backend: _Backend, secret_size: int, output_length: int) -> None:
        super().__init__(output_length, secret_size)
        self._backend = backend

    def setup(self) -> bytes:
        salt = os.urandom(HKDF_SALT_BYTES)
        self._compute = self._backend.hkdf(salt, HKDF_INFO, self._output_size)
        return salt


# --------------------------------------------------------------------------- schemes


def _pq_category(bits: int) -> int:
    """Grover halves a key search: NIST categories 1/3/5 are AES-128/192/256."""
    for threshold, category in ((256, 5), (192, 3), (128, 1)):
        if bits >= threshold:
            return category
    return 0


class HashScheme(Scheme):
    """A plain digest appended to the message; the receiver recomputes it."""

    def __init__(self, hash_id: str, backend: str) -> None:
        self._hash = _HASHES[hash_id]
        self._backend = _backend(backend, hash_id)
        self.info = SchemeInfo(
            scheme_id=hash_id,
            family=Family.HASH,
            backend=backend,
            params={},
            label=self._hash.label,
            security=Security(classical_bits=self._hash.collision_bits, pq_category=self._hash.pq_category),
            insecure=False,
            authenticated=True,
            notes=(
                "security = collision resistance",
                "an unkeyed digest detects accidental change only: an active attacker "
                "replaces message and digest together (use an HMAC or a signature)",
            ),
        )

    def new_sender(self) -> Sender:
        return _RecomputeSender(self._backend.digest)

    def new_receiver(self) -> Receiver:
        return _RecomputeReceiver(self._hash.digest_size, None, self._backend.digest)

    def tamper_spots(self, payload_len: int, plaintext_len: int) -> list[TamperSpot]:
        spots = [TamperSpot("digest", plaintext_len), TamperSpot("digest end", -1)]
        if plaintext_len:
            spots.append(TamperSpot("message", plaintext_len // 2))
        return spots

    def payload_overhead(self, plaintext_len: int) -> int:
        return self._hash.digest_size


def _hkdf_security(digest: str, secret_size: int, output_length: int) -> Security:
    """Strength of the derived key: no more than the secret, the output or the PRK."""
    bits = min(8 * secret_size, 8 * output_length, _HKDF_DIGESTS[digest][1])
    return Security(classical_bits=bits, pq_category=_pq_category(bits))


class HkdfScheme(Scheme):
    """HKDF extract-and-expand over a fixed-size secret (the message is the IKM)."""

    def __init__(self, backend: str, digest: str, secret_size: int, output_length: int) -> None:
        self._secret_size = secret_size
        self._output_length = output_length
        self._backend = _backend(backend, _HKDF_DIGESTS[digest][0])
        security = _hkdf_security(digest, secret_size, output_length)
        self.info = SchemeInfo(
            scheme_id="hkdf",
            family=Family.KDF,
            backend=backend,
            params={"digest": digest, "secret_size": secret_size, "output_length": output_length},
            label=f"HKDF-{_HASHES[digest].label.replace('-', '')} (secret {secret_size} B -> {output_length} B)",
            security=security,
            insecure=security.classical_bits < 112,
            authenticated=True,
            max_plaintext=secret_size,
            fixed_message_size=secret_size,
            notes=(
                f"salt: {HKDF_SALT_BYTES} random bytes published by the receiver; info: {HKDF_INFO.decode()!r}",
                "strength = min(secret, output, PRK) bits",
                "the secret travels in the payload only so the receiver can check the "
                "derivation; in a real protocol it never leaves its owner",
            ),
        )

    def new_sender(self) -> Sender:
        return _HkdfSender(self._backend, self._secret_size, self._output_length)

    def new_receiver(self) -> Receiver:
        return _HkdfReceiver(self._backend, self._secret_size, self._output_length)

    def tamper_spots(self, payload_len: int, plaintext_len: int) -> list[TamperSpot]:
        return [
            TamperSpot("derived key", self._secret_size),
            TamperSpot("derived key end", -1),
            TamperSpot("input secret", self._secret_size // 2),
        ]

    def payload_overhead(self, plaintext_len: int) -> int:
        return self._output_length


# --------------------------------------------------------------------------- registry


def _hash_factory(hash_id: str) -> Callable[[str, Mapping[str, ParamValue]], Scheme]:
    def factory(backend: str, params: Mapping[str, ParamValue]) -> Scheme:
        return HashScheme(hash_id, backend)

    return factory


def _hkdf(backend: str, params: Mapping[str, ParamValue]) -> Scheme:
    return HkdfScheme(backend, str(params["digest"]), int(params["secret_size"]), int(params["output_length"]))


def _hkdf_constraint(backend: str, params: Mapping[str, ParamValue]) -> str | None:
    """RFC 5869 caps the output at 255 hash blocks; the cap depends on the digest."""
    digest = str(params["digest"])
    hash_len = _HASHES[_HKDF_DIGESTS[digest][0]].digest_size
    limit = HKDF_MAX_BLOCKS * hash_len
    output_length = int(params["output_length"])
    if output_length > limit:
        return (
            f"parameter 'output_length' of hkdf must be at most {limit} for {digest} "
            f"(255 x {hash_len}-byte blocks), got {output_length}"
        )
    return None


_HASH_DESCRIPTIONS: Mapping[str, str] = {
    "sha256": "SHA-256 (FIPS 180-4).",
    "sha384": "SHA-384 (FIPS 180-4), SHA-512 truncated to 384 bits.",
    "sha512": "SHA-512 (FIPS 180-4).",
    "sha3-256": "SHA3-256 (FIPS 202), Keccak sponge.",
    "sha3-512": "SHA3-512 (FIPS 202), Keccak sponge.",
    "blake2b": "BLAKE2b with a 512-bit digest (RFC 7693).",
}

SPECS: list[SchemeSpec] = [
    *(
        SchemeSpec(
            scheme_id=h.scheme_id,
            name=h.label,
            family=Family.HASH,
            backends=_BACKENDS,
            params=(),
            factory=_hash_factory(h.scheme_id),
            description=_HASH_DESCRIPTIONS[h.scheme_id],
        )
        for h in _HASHES.values()
    ),
    SchemeSpec(
        scheme_id="hkdf",
        name="HKDF",
        family=Family.KDF,
        backends=_BACKENDS,
        params=(
            ParamSpec("digest", "sha256", tuple(_HKDF_DIGESTS), help="hash function of HMAC"),
            ParamSpec("secret_size", 32, minimum=1, maximum=1024, help="input keying material in bytes"),
            ParamSpec(
                "output_length",
                32,
                minimum=1,
                maximum=HKDF_MAX_BLOCKS * max(_HASHES[h].digest_size for h, _ in _HKDF_DIGESTS.values()),
                help="derived key material in bytes (at most 255 x hash length)",
            ),
        ),
        factory=_hkdf,
        description="HMAC-based extract-and-expand key derivation (RFC 5869) with a random 32-byte salt.",
        constraint=_hkdf_constraint,
    ),
]

"""Key establishment, named: the two patterns every key-establishing family offers.

A key agreement (ECDH, X25519) and a KEM hybrid (RSA-KEM, ECIES, ML-KEM,
X25519 + ML-KEM-768) both give the sender and the receiver one AES-256 key from the
receiver's published key; they differ only in how. Each is a `Kem` here (a key
agreement's "encapsulation" is its ephemeral public key), and each job says how often it
establishes a key (`vocab.Exchange`, the job's `exchange`):

- **session**: the sender's handshake establishes one key (an ephemeral key pair and the
  agreement, or an encapsulation, and the KDF) and sends its encapsulation; the
  receiver's handshake recovers the key; every message is then AES-256-GCM under it, as
  TLS does. Payload: nonce || ciphertext || tag.
- **per-message**: the handshake only loads the receiver's key; every message gets a
  fresh key (KEM-DEM, ECIES-style public-key encryption). Payload: encapsulation ||
  nonce || ciphertext || tag.

So a job's "handshake" and "compute" mean the same work in every family of one pattern,
and a comparison can put like with like (docs/profiles.md, "exchange").
"""

from __future__ import annotations

import abc
import copy
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from app.core.schemes.base import (
    Buffer,
    ExtraOperation,
    Payload,
    PayloadFormatError,
    Receiver,
    Scheme,
    SchemeInfo,
    Sender,
    TamperSpot,
)
from app.core.schemes.symmetric import AEAD_OVERHEAD, AeadKey, aead_tamper_spots
from app.core.vocab import DEFAULT_EXCHANGE, Exchange, Family

KEY_LEN = 32


class Kem(abc.ABC):
    """A key encapsulation mechanism producing 32-byte AES-256 keys."""

    enc_len: int

    @abc.abstractmethod
    def generate(self) -> tuple[Any, bytes]:
        """Return (private key, encoded public key)."""

    @abc.abstractmethod
    def load_public(self, public: bytes) -> Any:
        """Check the receiver's encoded public key once; return what `encapsulate` takes."""

    @abc.abstractmethod
    def encapsulate(self, public: Any) -> tuple[bytes, bytes]:
        """Return (key, encapsulation)."""

    @abc.abstractmethod
    def decapsulate(self, private: Any, enc: Buffer) -> bytes:
        """Return the key; raise AuthenticationError / PayloadFormatError on a bad encapsulation."""

    def establish(self, public: bytes) -> tuple[Any, bytes, bytes]:
        """A session's one key from the receiver's encoded key: (loaded key, key, encapsulation).

        A KEM whose encapsulation validates the peer's key anyway overrides this to skip
        `load_public`'s own check, which the handshake would otherwise pay twice."""
        loaded = self.load_public(public)
        key, enc = self.encapsulate(loaded)
        return loaded, key, enc


# --- session: one key per session ------------------------------------------------------------


class _SessionSender(Sender):
    def __init__(self, scheme: KeyEstablishingScheme) -> None:
        self._scheme = scheme
        self.public: Any = None

    def handshake(self, public: bytes) -> bytes:
        self.public, key, enc = self._scheme.kem.establish(public)
        # Rebound to the session key's seal: no per-call check that the handshake ran
        # (mypy sees an unbound method type on the left).
        self.seal = self._scheme.session_key(key).seal  # type: ignore[method-assign, assignment]
        return enc

    def seal(self, plaintext: Buffer) -> Payload:
        raise RuntimeError("handshake() must run before seal()")


class _KeyPairReceiver(Receiver):
    """A receiver holding the key pair its `setup` made (both exchange patterns)."""

    def __init__(self, scheme: KeyEstablishingScheme) -> None:
        self._scheme = scheme
        self.private: Any = None

    def setup(self) -> bytes:
        self.private, public = self._scheme.kem.generate()
        return public


class _SessionReceiver(_KeyPairReceiver):
    def handshake(self, message: bytes) -> None:
        key = self._scheme.kem.decapsulate(self.private, message)
        self.open = self._scheme.session_key(key).open  # type: ignore[method-assign, assignment]  # as above

    def open(self, payload: Buffer) -> Buffer:
        raise RuntimeError("handshake() must run before open()")


# --- per-message: a fresh key in every message ----------------------------------------------


class _PerMessageSender(Sender):
    def __init__(self, scheme: KeyEstablishingScheme) -> None:
        self._scheme = scheme
        self.public: Any = None

    def handshake(self, public: bytes) -> bytes:
        self.public = self._scheme.kem.load_public(public)
        return b""

    def seal(self, plaintext: Buffer) -> Payload:
        key, enc = self._scheme.kem.encapsulate(self.public)
        return (enc, *self._scheme.session_key(key).seal(plaintext))


class _PerMessageReceiver(_KeyPairReceiver):
    def open(self, payload: Buffer) -> Buffer:
        kem = self._scheme.kem
        if len(payload) < kem.enc_len + AEAD_OVERHEAD:
            raise PayloadFormatError(f"payload of {len(payload)} bytes is too short for its encapsulated key")
        view = memoryview(payload)
        key = kem.decapsulate(self.private, view[: kem.enc_len])
        return self._scheme.session_key(key).open(view[kem.enc_len :])


class KeyEstablishingScheme(Scheme):
    """A key establishment (`kem`) then AES-256-GCM, in the job's exchange pattern.

    Subclasses set `kem`, `aead_backend` and `info` (without `exchange`, which `_use`
    fills), and say per pattern what their notes add (`pattern_notes`).
    """

    kem: Kem
    aead_backend: str
    exchange: Exchange
    #: The scheme's info as its factory made it, before the pattern's own notes.
    _base_info: SchemeInfo
    #: What a tamper check calls a per-message payload's first part.
    enc_name = "encapsulated key"
    #: Notes a job's results carry, per pattern, after the scheme's own.
    pattern_notes: Mapping[Exchange, tuple[str, ...]] = {
        Exchange.SESSION: ("one key establishment per session (the handshake), then AES-256-GCM per message",),
        Exchange.PER_MESSAGE: ("a fresh key establishment and AES-256 key in every message",),
    }

    def _use(self, exchange: Exchange) -> None:
        """Set the pattern: what `new_sender`/`new_receiver` build, and the info that says it."""
        self.exchange = exchange
        base = self._base_info
        self.info = replace(base, exchange=exchange, notes=base.notes + self.pattern_notes[exchange])

    def with_exchange(self, exchange: Exchange) -> Scheme:
        other = copy.copy(self)
        other._use(Exchange(exchange))
        return other

    def session_key(self, key: bytes) -> AeadKey:
        return AeadKey("aes-gcm", self.aead_backend, key)

    def new_sender(self) -> Sender:
        return _SessionSender(self) if self.exchange is Exchange.SESSION else _PerMessageSender(self)

    def new_receiver(self) -> Receiver:
        return _SessionReceiver(self) if self.exchange is Exchange.SESSION else _PerMessageReceiver(self)

    def session_pair(self) -> tuple[Sender, Receiver]:
        """A sender and receiver that establish one key per session, whatever this job's
        pattern: what an operations job times as "exchange" and "exchange_receiver"."""
        return _SessionSender(self), _SessionReceiver(self)

    def tamper_spots(self, payload_len: int, plaintext_len: int) -> list[TamperSpot]:
        if self.exchange is Exchange.SESSION:
            return aead_tamper_spots(payload_len)
        enc = self.kem.enc_len
        return [TamperSpot(self.enc_name, enc // 2), *aead_tamper_spots(payload_len, prefix=enc)]

    def payload_overhead(self, plaintext_len: int) -> int:
        return AEAD_OVERHEAD + (0 if self.exchange is Exchange.SESSION else self.kem.enc_len)

    def extra_operations(self, sender: Sender, receiver: Receiver) -> list[ExtraOperation]:
        """A KEM's encapsulation and decapsulation alone (a hybrid's; a key agreement's
        are its "exchange"), in either pattern."""
        if self.info.family is not Family.HYBRID:
            return []
        kem = self.kem
        public = sender.public  # type: ignore[attr-defined]
        private = receiver.private  # type: ignore[attr-defined]

        def check_encapsulation(_: Any, result: tuple[bytes, bytes]) -> str | None:
            key, enc = result
            return None if kem.decapsulate(private, enc) == key else "decapsulated key differs"

        def make_encapsulation() -> tuple[bytes, bytes]:
            return kem.encapsulate(public)

        def check_decapsulation(made: tuple[bytes, bytes], key: bytes) -> str | None:
            return None if key == made[0] else "decapsulated key differs"

        return [
            ExtraOperation("encapsulate", lambda: None, lambda _: kem.encapsulate(public), check_encapsulation),
            ExtraOperation(
                "decapsulate", make_encapsulation, lambda made: kem.decapsulate(private, made[1]), check_decapsulation
            ),
        ]


def start(scheme: KeyEstablishingScheme, info: SchemeInfo) -> None:
    """Give a new key-establishing scheme its info and the default pattern (a factory's
    last step; `SchemeSpec.create` then applies the job's own)."""
    scheme._base_info = info
    scheme._use(DEFAULT_EXCHANGE)

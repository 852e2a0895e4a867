"""The one interface every scheme implements, and the metadata it declares.

Every scheme is a sender/receiver pair so that the same code runs as an operation
micro-benchmark (both ends in one child process) and over a real connection (each end
in its own process). The life of a session:

    receiver.setup()            -> public material   (timed: keygen)
    sender.handshake(public)    -> handshake message (timed: exchange / sender handshake)
    receiver.handshake(message)                      (timed: receiver handshake)
    sender.seal(plaintext)      -> payload parts     (timed: encrypt / sign / hash / derive)
    receiver.open(payload)      -> plaintext         (timed: decrypt / verify / recompute)

`seal` returns the payload as a tuple of byte strings (scatter/gather): the wire layer
sends them with one `sendmsg` and the operation benchmark joins them outside the timed
region, so a 10 MiB message is never copied just to glue a nonce or a digest to it.
`open` receives the joined payload (bytes or a memoryview into a receive buffer) and
raises `AuthenticationError` or `PayloadFormatError` on anything it must reject.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeAlias

from app.core.errors import BadParameter, CryptoBenchError, UnknownBackend
from app.core.vocab import Exchange, Family, ParamValue

Buffer: TypeAlias = bytes | bytearray | memoryview
Payload: TypeAlias = tuple[bytes, ...]


#: Name of the timed metric for `seal` and `open` in operations mode, per family.
#: `open` of a hash or KDF is a recomputation used for validation only: timing it
#: again would report the same operation twice under two names.
SEAL_METRIC: Mapping[Family, str] = {
    Family.AEAD: "encrypt",
    Family.KEY_AGREEMENT: "encrypt",
    Family.PUBLIC_KEY_ENCRYPTION: "encrypt",
    Family.HYBRID: "encrypt",
    Family.SIGNATURE: "sign",
    Family.HASH: "hash",
    Family.KDF: "derive",
    # A tls13 job's record layer in operations mode (its handshakes are metrics of their own).
    Family.TLS: "encrypt",
}
OPEN_METRIC: Mapping[Family, str | None] = {
    Family.AEAD: "decrypt",
    Family.KEY_AGREEMENT: "decrypt",
    Family.PUBLIC_KEY_ENCRYPTION: "decrypt",
    Family.HYBRID: "decrypt",
    Family.SIGNATURE: "verify",
    Family.HASH: None,
    Family.KDF: None,
    Family.TLS: "decrypt",
}


#: Families whose long-term key pair belongs to the sender (the signer): their
#: "keygen" is timed in `Sender.handshake`, which generates the key pair and returns
#: the verification key as the handshake message. Everywhere else the receiver owns
#: the long-term keys and "keygen" is `Receiver.setup`.
KEYGEN_ON_SENDER: frozenset[Family] = frozenset({Family.SIGNATURE})
#: Families with no key generation worth timing (a hash has none; a KDF's salt is
#: a random string, not a key pair).
NO_KEYGEN: frozenset[Family] = frozenset({Family.HASH, Family.KDF})


class SchemeError(CryptoBenchError):
    """Base of every error a scheme raises on purpose."""


class AuthenticationError(SchemeError):
    """A payload failed its integrity check (tag, signature, digest, padding)."""


class PayloadFormatError(SchemeError):
    """A payload or handshake message is malformed (length, encoding, invalid point)."""


class MessageTooLongError(SchemeError):
    """The plaintext does not fit one block of a public-key scheme (and chunking is off)."""


@dataclass(frozen=True)
class ParamSpec:
    """One parameter of a scheme: its allowed values and default.

    `choices` empty means any integer in [minimum, maximum].
    """

    name: str
    default: ParamValue
    choices: tuple[ParamValue, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    help: str = ""

    def check(self, value: Any) -> str | None:
        """Return why `value` is not allowed, or None when it is."""
        if self.choices:
            if value not in self.choices or type(value) is not type(self.choices[0]):
                shown = ", ".join(repr(c) for c in self.choices)
                return f"must be one of {shown}"
            return None
        if isinstance(self.default, bool):
            return None if isinstance(value, bool) else "must be true or false"
        if isinstance(self.default, int):
            if not isinstance(value, int) or isinstance(value, bool):
                return "must be an integer"
            if self.minimum is not None and value < self.minimum:
                return f"must be at least {self.minimum}"
            if self.maximum is not None and value > self.maximum:
                return f"must be at most {self.maximum}"
        return None


@dataclass(frozen=True)
class Security:
    """Security level of one parameter set.

    classical_bits: NIST SP 800-57 Part 1 comparable strength (approximate for sizes
        the table does not list; the integer-factoring estimate of SP 800-56B App. D).
    pq_category: NIST post-quantum category 1-5 (FIPS 203/204 and the call for
        proposals), or 0 when a quantum computer breaks it (Shor: RSA, DH, ECC).
    """

    classical_bits: int
    pq_category: int


@dataclass(frozen=True)
class SchemeInfo:
    """What one concrete scheme instance is: the metadata every result carries."""

    scheme_id: str
    family: Family
    backend: str
    params: Mapping[str, ParamValue]
    label: str
    security: Security
    insecure: bool
    authenticated: bool
    max_plaintext: int | None = None  # per seal; None = unlimited
    #: Set when the scheme's input has one size fixed by its parameters (a KDF's
    #: secret_size): jobs then use it instead of message sizes.
    fixed_message_size: int | None = None
    notes: tuple[str, ...] = ()
    #: A key-establishing scheme's pattern (app.core.schemes.establishment); None elsewhere.
    exchange: Exchange | None = None


class Sender(abc.ABC):
    """The client side of a session: consumes public material, seals messages."""

    @abc.abstractmethod
    def handshake(self, public: bytes) -> bytes:
        """Consume the receiver's published material; return the handshake message."""

    @abc.abstractmethod
    def seal(self, plaintext: bytes) -> Payload:
        """Protect one message; the parts joined form the payload."""


class Receiver(abc.ABC):
    """The server side of a session: owns the long-term keys, opens payloads."""

    @abc.abstractmethod
    def setup(self) -> bytes:
        """Generate long-term keys; return the public material to publish."""

    def handshake(self, message: bytes) -> None:
        """Finish the session from the sender's handshake message (default: nothing)."""
        if message:
            raise PayloadFormatError("this scheme expects an empty handshake message")

    @abc.abstractmethod
    def open(self, payload: Buffer) -> Buffer:
        """Check and unprotect one payload; return the plaintext.

        Raises:
            AuthenticationError: integrity check failed.
            PayloadFormatError: the payload is malformed.
        """


@dataclass(frozen=True)
class TamperSpot:
    """A place in a payload whose bit flip the receiver must reject."""

    label: str  # "tag", "ciphertext", "signature", "encapsulated key", ...
    offset: int  # byte offset into the joined payload; negative counts from the end


class Scheme(abc.ABC):
    """A concrete scheme: one algorithm, one backend, one parameter set."""

    info: SchemeInfo

    @abc.abstractmethod
    def new_receiver(self) -> Receiver: ...

    @abc.abstractmethod
    def new_sender(self) -> Sender: ...

    def tamper_spots(self, payload_len: int, plaintext_len: int) -> list[TamperSpot]:
        """Where to flip a bit to test rejection. Default: first, middle and last byte."""
        return [
            TamperSpot("first byte", 0),
            TamperSpot("middle byte", payload_len // 2),
            TamperSpot("last byte", -1),
        ]

    def payload_overhead(self, plaintext_len: int) -> int:
        """Upper bound of payload bytes beyond the plaintext (sizes the wire frame)."""
        return 1024

    def extra_operations(self, sender: Sender, receiver: Receiver) -> list[ExtraOperation]:
        """Operations timed on their own in operations mode besides seal/open.

        Called after a completed handshake; e.g. a KEM's encapsulate/decapsulate.
        """
        return []

    def with_exchange(self, exchange: Exchange) -> Scheme:
        """This scheme establishing its keys in `exchange`'s pattern: a key-establishing
        scheme's own (app.core.schemes.establishment); any other has no key to establish."""
        raise BadParameter(
            f"exchange applies to key agreement and hybrid (KEM) schemes only; {self.info.scheme_id} establishes no key"
        )


@dataclass(frozen=True)
class ExtraOperation:
    """An operation timed on its own in operations mode (e.g. KEM encapsulate).

    make_inputs() returns one input per call; run(input) is timed; check(input,
    output) validates outside the timed region and returns an error text or None.
    """

    metric: str
    make_input: Callable[[], Any]
    run: Callable[[Any], Any]
    check: Callable[[Any, Any], str | None]


@dataclass
class SchemeSpec:
    """A registry entry: an algorithm with its backends and parameter space."""

    scheme_id: str
    name: str
    family: Family
    backends: tuple[str, ...]
    params: tuple[ParamSpec, ...]
    factory: Callable[[str, Mapping[str, ParamValue]], Scheme]
    description: str = ""
    #: Optional extra validation across parameters and backend; returns an error text.
    constraint: Callable[[str, Mapping[str, ParamValue]], str | None] | None = None

    def param(self, name: str) -> ParamSpec:
        for spec in self.params:
            if spec.name == name:
                return spec
        raise KeyError(name)

    def resolve_params(self, backend: str, given: Mapping[str, Any]) -> dict[str, ParamValue]:
        """Fill defaults and validate; UnknownBackend, or BadParameter naming the parameter."""
        if backend not in self.backends:
            raise UnknownBackend(
                f"backend {backend!r} is not available for {self.scheme_id} (available: {', '.join(self.backends)})"
            )
        known = {p.name for p in self.params}
        for name in given:
            if name not in known:
                allowed = ", ".join(sorted(known)) or "none"
                raise BadParameter(f"unknown parameter {name!r} for {self.scheme_id} (allowed: {allowed})")
        resolved: dict[str, ParamValue] = {}
        for spec in self.params:
            value = given.get(spec.name, spec.default)
            problem = spec.check(value)
            if problem:
                raise BadParameter(f"parameter {spec.name!r} of {self.scheme_id} {problem}, got {value!r}")
            resolved[spec.name] = value
        if self.constraint is not None:
            problem = self.constraint(backend, resolved)
            if problem:
                raise BadParameter(problem)
        return resolved

    def create(self, backend: str, params: Mapping[str, Any] | None = None, exchange: Exchange | None = None) -> Scheme:
        """Build a concrete scheme (validating backend and parameters first); a
        key-establishing one in `exchange`'s pattern (None: the default, session)."""
        scheme = self.factory(backend, self.resolve_params(backend, params or {}))
        return scheme if exchange is None else scheme.with_exchange(exchange)


def flip_bit(payload: Buffer, offset: int) -> bytes:
    """A copy of `payload` with the lowest bit of byte `offset` flipped."""
    data = bytearray(payload)
    data[offset] ^= 0x01
    return bytes(data)
